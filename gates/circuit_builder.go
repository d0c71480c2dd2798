package gates

import "fmt"

// Builder makes a Circuit gate by gate, for a program that computes its
// own circuit: it numbers the wires, puts the input values on the first
// wires and the output values on the last, as NewCircuit requires, and
// pads each Gate's unused inputs (ExampleBuilder builds a 2-bit adder).
//
// A wire is an int: Input returns those of an input value, Gate the one a
// gate writes. Gate only reads wires that exist already, so the gates come
// in an order where each follows those it reads, the order NewCircuit
// needs. Build takes each output value as a list of any wires (inputs, a
// wire twice, a constant of a ZERO or ONE gate) and copies them, in order,
// onto the last wires with one free COPY gate a bit (Bristol Fashion's
// rule); the circuit is in Bristol Fashion.
//
// Errors: the first mistake (an invalid op, a wrong number of inputs, a
// wire not yet written, a bad width or value index) is kept, later calls
// do nothing, and Build returns it, as bufio.Writer does; Gate then
// returns −1. The errors are *CircuitError (Line 0) and name the gate by
// its index among the gates made, which is its index in Circuit.Gates,
// and its op: "gates: circuit: gate 7 (AND) reads wire 40 before it is
// written".
//
// The builder adds the gates it is given and no others but the output
// copies: it does not merge, simplify or drop gates, and a gate that no
// output reads is evaluated all the same. NewCircuit, which Build calls,
// evaluates a gate identical to an earlier one as a copy of its output and
// a gate that reads one wire twice as the gate of its distinct inputs
// (Circuit.Bootstraps), but NumGates and Count count every gate made.
//
// Under XORLinear (Evaluator.EvalCircuit's default) an XOR costs no
// bootstrap; a sum is refreshed (bootstrapped) where an AND-like gate or
// an output reads it and where it would pass MaxXORTerms terms. The
// planner takes a tree of XORs whose inner wires nothing else reads and
// whose leaves are inputs or gate outputs as one sum, whatever its shape:
// XOR n such wires as one balanced tree, or any tree, and it takes the
// fewest refreshes, ⌈(n−1)/(m−1)⌉ with the output's for m =
// Evaluator.DefaultMaxXORTerms, in about log_m(n) levels. A tree whose
// inner sums are also read elsewhere, or that XORs sums other gates read,
// is planned gate by gate, and there its shape still decides its
// refreshes. Evaluator.PlanCircuit reports what a circuit costs.
//
// A Builder is not safe for concurrent use. The Circuit that Build returns
// shares no memory with it: it is immutable and safe for concurrent use,
// as every Circuit is, and the Builder may go on to add gates and build
// again.
type Builder struct {
	inputs []int  // widths of the input values
	base   []int  // the first wire of each input value
	nin    int    // input bits: wires 0 … nin−1
	gates  []Gate // gate i writes wire nin+i
	err    error  // the first error, returned by Build
}

// NewBuilder returns a Builder of a circuit whose input values have the
// given bit widths, each at least 1; value i's wires are Input(i).
func NewBuilder(inputWidths ...int) *Builder {
	b := &Builder{}
	total := 0
	base := make([]int, len(inputWidths))
	for i, n := range inputWidths {
		base[i] = total
		if n < 1 {
			b.fail("input %d has width %d; a value has at least 1 bit", i+1, n)
			return b
		}
		if n > MaxWires-total { // not total+n: a width near MaxInt would wrap
			b.fail("the inputs have more than %d bits (MaxWires)", MaxWires)
			return b
		}
		total += n
	}
	b.inputs, b.base, b.nin = append([]int(nil), inputWidths...), base, total
	return b
}

// fail records the first error.
func (b *Builder) fail(format string, args ...any) {
	if b.err == nil {
		b.err = &CircuitError{Msg: fmt.Sprintf(format, args...)}
	}
}

// Input returns the wires of input value i (from 0, in NewBuilder's
// order), least significant bit first as Eval and the encoding helpers
// read them: bit j of the value is Input(i)[j]. The slice is the caller's.
// An i out of range is an error for Build, and Input returns nil.
func (b *Builder) Input(i int) []int {
	if i < 0 || i >= len(b.inputs) {
		b.fail("Input(%d): the circuit has %d input values", i, len(b.inputs))
		return nil
	}
	w := make([]int, b.inputs[i])
	for j := range w {
		w[j] = b.base[i] + j
	}
	return w
}

// Gate adds the gate op reading the wires in, exactly op.Arity() of them
// (none for OpZero and OpOne, a, b and c for OpMUX's a ? b : c), and
// returns the wire it writes. Each wire read must be an input's or one a
// gate already made writes; it may be read twice, by one gate or many.
// After an error (this gate's or an earlier one's) it adds nothing and
// returns −1.
func (b *Builder) Gate(op Op, in ...int) int {
	if b.err != nil {
		return -1
	}
	gi, out := len(b.gates), b.nin+len(b.gates)
	switch {
	case !op.Valid():
		b.fail("gate %d has an invalid op, Op(%d)", gi, uint8(op))
		return -1
	case len(in) != op.Arity():
		b.fail("gate %d (%v) has %d inputs; %v takes %d", gi, op, len(in), op, op.Arity())
		return -1
	case out >= MaxWires:
		b.fail("gate %d (%v) would write wire %d, past the limit of %d wires (MaxWires)", gi, op, out, MaxWires)
		return -1
	}
	g := Gate{Op: op, In: [3]int{-1, -1, -1}, Out: out}
	for k, w := range in {
		if w < 0 {
			b.fail("gate %d (%v) reads wire %d, outside [0, %d)", gi, op, w, out)
			return -1
		}
		if w >= out {
			b.fail("gate %d (%v) reads wire %d before it is written", gi, op, w)
			return -1
		}
		g.In[k] = w
	}
	b.gates = append(b.gates, g)
	return out
}

// Build returns the circuit of the gates made so far whose output values
// are the given lists of wires, in order, each of at least one wire: a
// COPY gate a bit carries it to the last wires (Circuit.Eval returns
// outputs[i] as its value i). It returns the first error of the Builder's
// calls, or of an output, or NewCircuit's. Build may be called again, with
// other outputs or after more gates.
func (b *Builder) Build(outputs ...[]int) (*Circuit, error) {
	if b.err != nil {
		return nil, b.err
	}
	widths := make([]int, len(outputs))
	nwires := b.nin + len(b.gates) // the wires written so far
	for i, o := range outputs {
		if len(o) == 0 {
			return nil, &CircuitError{Msg: fmt.Sprintf("output %d has no wires", i+1)}
		}
		for j, w := range o {
			if w < 0 || w >= nwires {
				return nil, &CircuitError{Msg: fmt.Sprintf("output %d, bit %d is wire %d, outside the %d wires written", i+1, j, w, nwires)}
			}
		}
		widths[i] = len(o)
	}
	// The copies go after b.gates in its own array, which NewCircuit
	// copies, and are cut off again: a Builder of millions of gates
	// is not copied twice, and the next Gate or Build overwrites them.
	n := len(b.gates)
	defer func() { b.gates = b.gates[:n] }()
	for _, o := range outputs {
		for _, w := range o {
			b.gates = append(b.gates, Gate{Op: OpCopy, In: [3]int{w, -1, -1}, Out: b.nin + len(b.gates)})
		}
	}
	return NewCircuit(BristolFashion, b.nin+len(b.gates), b.inputs, widths, b.gates)
}
