package gates

import "fmt"

// Op is a boolean gate. The same type names the gates of the encrypted
// evaluator (Evaluator.Gate) and the gates of a parsed Circuit.
//
// Free gates (OpNOT, OpCopy, OpZero, OpOne) cost no bootstrap: they are a
// negation, a copy or a noiseless constant. OpMUX costs two bootstraps and one
// key switch. Every other gate costs one bootstrap.
type Op uint8

const (
	opInvalid Op = iota

	OpZero // constant false (Bristol EQ with literal 0)
	OpOne  // constant true (Bristol EQ with literal 1)
	OpCopy // a copy of input a (Bristol EQW)
	OpNOT  // ¬a (Bristol INV, also accepted as NOT)

	OpAND   // a ∧ b
	OpNAND  // ¬(a ∧ b)
	OpOR    // a ∨ b
	OpNOR   // ¬(a ∨ b)
	OpXOR   // a ⊕ b
	OpXNOR  // ¬(a ⊕ b)
	OpANDNY // ¬a ∧ b
	OpANDYN // a ∧ ¬b
	OpORNY  // ¬a ∨ b
	OpORYN  // a ∨ ¬b

	OpMUX // a ? b : c

	opCount
)

var opNames = [opCount]string{
	opInvalid: "invalid",
	OpZero:    "ZERO",
	OpOne:     "ONE",
	OpCopy:    "COPY",
	OpNOT:     "NOT",
	OpAND:     "AND",
	OpNAND:    "NAND",
	OpOR:      "OR",
	OpNOR:     "NOR",
	OpXOR:     "XOR",
	OpXNOR:    "XNOR",
	OpANDNY:   "ANDNY",
	OpANDYN:   "ANDYN",
	OpORNY:    "ORNY",
	OpORYN:    "ORYN",
	OpMUX:     "MUX",
}

// String returns the gate's name, e.g. "NAND".
func (op Op) String() string {
	if op < opCount {
		return opNames[op]
	}
	return fmt.Sprintf("Op(%d)", uint8(op))
}

// Valid reports whether op is one of the Op constants.
func (op Op) Valid() bool { return op > opInvalid && op < opCount }

// Arity is the number of inputs op reads: 0 for the constants, 1 for NOT and
// COPY, 3 for MUX, 2 otherwise.
func (op Op) Arity() int {
	switch op {
	case OpZero, OpOne:
		return 0
	case OpCopy, OpNOT:
		return 1
	case OpMUX:
		return 3
	case opInvalid:
		return 0
	}
	if op >= opCount {
		return 0
	}
	return 2
}

// Bootstraps is the number of gate bootstraps one evaluation of op costs
// under encryption: 0 for the free gates, 2 for MUX, 1 otherwise.
func (op Op) Bootstraps() int {
	switch {
	case !op.Valid():
		return 0
	case op.Free():
		return 0
	case op == OpMUX:
		return 2
	}
	return 1
}

// Free reports whether op costs no bootstrap (NOT, COPY and the constants).
func (op Op) Free() bool { return op >= OpZero && op <= OpNOT }

// Eval is op's truth table: the plaintext result on inputs a, b, c. Inputs
// past op's arity are ignored. It panics on an invalid op.
func (op Op) Eval(a, b, c bool) bool {
	switch op {
	case OpZero:
		return false
	case OpOne:
		return true
	case OpCopy:
		return a
	case OpNOT:
		return !a
	case OpAND:
		return a && b
	case OpNAND:
		return !(a && b)
	case OpOR:
		return a || b
	case OpNOR:
		return !(a || b)
	case OpXOR:
		return a != b
	case OpXNOR:
		return a == b
	case OpANDNY:
		return !a && b
	case OpANDYN:
		return a && !b
	case OpORNY:
		return !a || b
	case OpORYN:
		return a || !b
	case OpMUX:
		if a {
			return b
		}
		return c
	}
	panic(fmt.Sprintf("gates: Eval of invalid %v", op))
}
