package gates

import "fmt"

// Op is a boolean gate. The same type names the gates of the encrypted
// evaluator (Evaluator.Gate) and the gates of a parsed Circuit.
//
// Free gates (OpNOT, OpCopy, OpZero, OpOne) cost no bootstrap: they are a
// negation, a copy or a noiseless constant. OpMUX costs two bootstraps and one
// key switch. Every other gate costs one bootstrap, OpMAJ's three inputs
// included.
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
	OpMAJ // the majority of a, b and c: (a ∧ b) ∨ (a ∧ c) ∨ (b ∧ c)

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
	OpMAJ:     "MAJ",
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
// COPY, 3 for MUX and MAJ, 2 otherwise.
func (op Op) Arity() int {
	switch op {
	case OpZero, OpOne:
		return 0
	case OpCopy, OpNOT:
		return 1
	case OpMUX, OpMAJ:
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
	case OpMAJ:
		return a && b || a && c || b && c
	}
	panic(fmt.Sprintf("gates: Eval of invalid %v", op))
}

// A gate whose bootstrap would read one sample twice (the same sample, or
// its complement, through copies and NOTs) is evaluated as the gate of its
// distinct samples instead. With the same sign, the bootstrap's input would
// hold the sample added to itself: twice its error, four times the
// variance, where every failure estimate assumes independent inputs
// (TFHELib128 grouped by 3: about 2^−101 for a gate instead of 2^−188).
// With opposite signs the sample cancels and the result is a constant. The
// gate of fewer samples is also cheaper: AND(w, w) is a copy of w, XOR(w,
// w) the constant 0, MUX(s, s, c) is OR(s, c), MAJ(a, a, c) a copy of a
// and MAJ(a, ¬a, c) a copy of c. A constant input is folded in the same
// way: AND(w, 1) is a copy of w, MAJ(a, b, 0) is AND(a, b).

// reducedGate is a gate over distinct samples: op reads the samples of the
// original gate's inputs src[0] and src[1] (as its inputs A and B, those
// past its arity unused), each not complemented.
type reducedGate struct {
	op  Op
	src [2]int
}

// reduceRepeats returns the gate that op computes when its input k is the
// sample key[k], complemented when neg[k], or, when constant[k], the
// constant neg[k]; inputs of one key are one sample. It reports whether any
// sample repeats among op's inputs or any input is a constant (if neither,
// op stands as it is). The result is the cheapest gate with that truth
// table over the distinct samples: a constant, a copy or NOT of one
// sample, or a two-input gate, reading them through the first input of
// each.
func reduceRepeats[K comparable](op Op, key [3]K, constant, neg [3]bool) (reducedGate, bool) {
	ar := op.Arity()
	var first [3]int // the first input of each distinct sample, in order
	var idx [3]int   // input k's sample: number idx[k], −1 for a constant
	d, constants := 0, false
	for k := range ar {
		if constant[k] {
			idx[k], constants = -1, true
			continue
		}
		j := 0
		for j < d && key[first[j]] != key[k] {
			j++
		}
		if j == d {
			first[d] = k
			d++
		}
		idx[k] = j
	}
	if d == ar && !constants {
		return reducedGate{}, false
	}
	// op's truth table over the d ≤ 2 distinct samples.
	var want [4]bool
	for v := range 1 << d {
		var in [3]bool
		for k := range ar {
			in[k] = neg[k]
			if idx[k] >= 0 {
				in[k] = (v>>idx[k])&1 == 1 != neg[k]
			}
		}
		want[v] = op.Eval(in[0], in[1], in[2])
	}
	for _, r := range reductions {
		fits := true
		for k := range r.op.Arity() {
			fits = fits && r.src[k] < d
		}
		if !fits {
			continue
		}
		match := true
		for v := range 1 << d {
			match = match && r.op.Eval((v>>r.src[0])&1 == 1, (v>>r.src[1])&1 == 1, false) == want[v]
		}
		if match {
			return reducedGate{op: r.op, src: [2]int{first[r.src[0]], first[r.src[1]]}}, true
		}
	}
	panic(fmt.Sprintf("gates: no gate of %d samples for %v", d, op)) // the list holds every function of two
}

// reductions lists every boolean function of up to two samples as a gate
// over samples numbered 0 and 1, cheapest first: constants, copies and
// NOTs (free), then one bootstrap.
var reductions = []reducedGate{
	{OpZero, [2]int{}}, {OpOne, [2]int{}},
	{OpCopy, [2]int{0, 0}}, {OpNOT, [2]int{0, 0}}, {OpCopy, [2]int{1, 0}}, {OpNOT, [2]int{1, 0}},
	{OpAND, [2]int{0, 1}}, {OpNAND, [2]int{0, 1}}, {OpOR, [2]int{0, 1}}, {OpNOR, [2]int{0, 1}},
	{OpXOR, [2]int{0, 1}}, {OpXNOR, [2]int{0, 1}}, {OpANDNY, [2]int{0, 1}}, {OpANDYN, [2]int{0, 1}},
	{OpORNY, [2]int{0, 1}}, {OpORYN, [2]int{0, 1}},
}
