package gates

import (
	"fmt"
	"slices"
)

// Format is the netlist format a Circuit was read from.
type Format uint8

const (
	// BristolFashion is the format of the KU Leuven / SCALE-MAMBA circuits:
	// any number of input and output values, EQ, EQW and MAND gates.
	BristolFashion Format = iota + 1
	// BristolOld is the original format of Tillich and Smart: exactly two
	// inputs and one output.
	BristolOld
)

func (f Format) String() string {
	switch f {
	case BristolFashion:
		return "Bristol Fashion"
	case BristolOld:
		return "old Bristol format"
	}
	return fmt.Sprintf("Format(%d)", uint8(f))
}

// Limits on the circuits NewCircuit and Parse accept. They bound what a
// header alone can ask for. Parsing, NewCircuit and planning
// (Evaluator.PlanCircuit) take memory in the gates only (a circuit must
// write every wire that is not an input, and the input wires take no
// table), so that an untrusted circuit can be planned to learn its cost;
// an evaluation takes a pointer a wire and set of inputs, input wires
// included, besides the samples the caller gives and gets, and Eval a
// byte a wire.
const (
	MaxWires = 1 << 24
	MaxGates = 1 << 24
)

// Gate is one gate of a Circuit: Out = Op(In[0], In[1], In[2]). Entries of In
// past Op.Arity() are not read; in the gates a Circuit returns they are −1.
type Gate struct {
	Op   Op
	In   [3]int // wires read
	Out  int    // wire written
	Line int    // line of the netlist the gate comes from (1-based); 0 if none
}

// Level is one step of a circuit's schedule. All inputs of the Bootstrapped
// gates are ready when the level starts, so they can be sent to the engine as
// one batch. The Free gates (NOT, COPY, constants) are evaluated after the
// batch, in order; each reads only wires written by earlier levels, by this
// level's batch or by earlier Free gates of this level.
type Level struct {
	Bootstrapped []Gate
	Free         []Gate
}

// Circuit is a validated boolean circuit: wires 0 … NumWires()−1; the input
// values occupy the first wires in order (value 1 first), the output values
// the last wires in order. Every gate reads only wires that are inputs or
// were written by an earlier gate, no wire is written twice, and every wire
// that is not an input is written.
//
// A Circuit is immutable and safe for concurrent use. Its methods that return
// slices return fresh copies. Use it through its *Circuit (from Parse,
// ParseFile, NewCircuit or circuits.Load); it must not be copied (it
// holds a lock around its cache of evaluation plans; go vet reports
// copies). A nil *Circuit is an error to Eval, WriteTo and the Evaluator's
// methods and prints as <nil circuit>; its accessors (NumWires, Inputs,
// Depth, …) panic, as a nil pointer's would.
type Circuit struct {
	format  Format
	nwires  int
	inputs  []int
	outputs []int
	gates   []Gate // in netlist order

	sched      []Gate  // gates in level order; levels slice into it
	levels     []Level // levels[0] has no bootstrapped gates
	bootstraps int
	// noise is what decides the failure figure of the bootstraps with
	// every XOR bootstrapped.
	noise gateNoise

	plans planCache // linear plans by MaxXORTerms and batch tiers, built on first use
}

// CircuitError reports an invalid netlist or circuit. Line is the 1-based line
// of the netlist the problem is on, or 0 when it is not tied to a line (a
// circuit built by NewCircuit).
type CircuitError struct {
	Line int
	Msg  string
}

func (e *CircuitError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("gates: circuit line %d: %s", e.Line, e.Msg)
	}
	return "gates: circuit: " + e.Msg
}

// headerLines are the netlist lines of the header fields, for error messages.
type headerLines struct{ counts, inputs, outputs int }

// NewCircuit validates a circuit given as a wire count, the bit widths of its
// input and output values, and its gates in an order where every gate comes
// after the gates that write its inputs, each wire that is not an input
// written by one gate. It computes the level schedule.
// format is recorded for WriteTo; BristolOld needs exactly two inputs and one
// output. A Builder makes the gates of a program's own circuit and numbers
// their wires.
func NewCircuit(format Format, nwires int, inputs, outputs []int, gates []Gate) (*Circuit, error) {
	return build(format, nwires, inputs, outputs, gates, headerLines{})
}

func build(format Format, nwires int, inputs, outputs []int, gates []Gate, hl headerLines) (*Circuit, error) {
	errf := func(line int, format string, args ...any) error {
		return &CircuitError{Line: line, Msg: fmt.Sprintf(format, args...)}
	}
	switch format {
	case BristolFashion:
	case BristolOld:
		if len(inputs) != 2 || len(outputs) != 1 {
			return nil, errf(hl.inputs, "the old Bristol format has 2 inputs and 1 output, not %d and %d", len(inputs), len(outputs))
		}
	default:
		return nil, errf(0, "unknown format %v", format)
	}
	if nwires < 0 || nwires > MaxWires {
		return nil, errf(hl.counts, "wire count %d is outside [0, %d]", nwires, MaxWires)
	}
	if len(gates) > MaxGates {
		return nil, errf(hl.counts, "%d gates exceed the limit of %d", len(gates), MaxGates)
	}
	if format == BristolFashion {
		// Parse refuses a value of width 0 in a Bristol Fashion header,
		// so WriteTo could not write one that reads back.
		if i := slices.Index(inputs, 0); i >= 0 {
			return nil, errf(hl.inputs, "input %d has width 0", i+1)
		}
		if i := slices.Index(outputs, 0); i >= 0 {
			return nil, errf(hl.outputs, "output %d has width 0", i+1)
		}
	}
	nin, err := sumWidths(inputs, nwires, "input")
	if err != nil {
		return nil, errf(hl.inputs, "%v", err)
	}
	nout, err := sumWidths(outputs, nwires, "output")
	if err != nil {
		return nil, errf(hl.outputs, "%v", err)
	}

	if nwires > nin+len(gates) {
		// Every wire is an input or written by one gate. A header that
		// declares more would have planning and evaluation allocate for
		// wires no gate uses (tens of bytes a wire, per set of inputs), and
		// the table below of the wires past the inputs (wireFacts) would
		// be as large before that is known: refuse it first, on a table of
		// the gates' outputs.
		return nil, unwrittenWires(gates, nin, nwires, nout, outputs, errf, hl)
	}

	c := &Circuit{
		format:  format,
		nwires:  nwires,
		inputs:  slices.Clone(inputs),
		outputs: slices.Clone(outputs),
		gates:   make([]Gate, len(gates)),
	}
	wf := newWireFacts(nin, nwires)
	where := func(gi int, g *Gate) string {
		if g.Line > 0 {
			return g.Op.String() + " gate"
		}
		return fmt.Sprintf("gate %d (%v)", gi, g.Op)
	}
	maxDepth := int32(0)
	sched := make([]Gate, len(gates))
	// seen maps a bootstrapped gate of the schedule, by what the engine
	// bootstraps for it (engineInput), to the wire it writes: a later gate
	// of the same input would compute the same sample bit for bit, so it
	// is a copy of that wire instead, and a gate reading both reads one
	// sample. A later gate of the negated input is the wire's NOT (NAND(a,
	// b) after AND(a, b)): one bootstrap fewer, and one blind rotation
	// less of that sum to keep apart (Evaluator.batch).
	seen := map[engineInput]int{}
	for gi := range gates {
		g := gates[gi]
		if !g.Op.Valid() {
			return nil, errf(g.Line, "gate %d has an invalid op %v", gi, g.Op)
		}
		ar := g.Op.Arity()
		for k := range 3 {
			if k >= ar {
				g.In[k] = -1
				continue
			}
			w := g.In[k]
			if w < 0 || w >= nwires {
				return nil, errf(g.Line, "%s reads wire %d, outside [0, %d)", where(gi, &g), w, nwires)
			}
			if wf.get(w).depth < 0 {
				return nil, errf(g.Line, "%s reads wire %d before it is written", where(gi, &g), w)
			}
		}
		if g.Out < 0 || g.Out >= nwires {
			return nil, errf(g.Line, "%s writes wire %d, outside [0, %d)", where(gi, &g), g.Out, nwires)
		}
		if g.Out < nin {
			return nil, errf(g.Line, "%s writes wire %d, which is a circuit input", where(gi, &g), g.Out)
		}
		if wf.get(g.Out).depth >= 0 {
			first := slices.IndexFunc(c.gates[:gi], func(h Gate) bool { return h.Out == g.Out })
			if l := c.gates[first].Line; l > 0 {
				return nil, errf(g.Line, "%s writes wire %d, already written on line %d", where(gi, &g), g.Out, l)
			}
			return nil, errf(g.Line, "%s writes wire %d, already written by gate %d", where(gi, &g), g.Out, first)
		}
		sg := scheduledGate(g, wf)
		if !sg.Op.Free() {
			var id [3]int32
			var ng [3]bool
			for k := range sg.Op.Arity() {
				in := wf.get(sg.In[k])
				id[k], ng[k] = in.rep, in.neg
			}
			key := engineInputOf(sg.Op, id, ng)
			nk, hasNeg := key.negated()
			if w, ok := seen[key]; ok {
				sg = Gate{Op: OpCopy, In: [3]int{w, -1, -1}, Out: g.Out, Line: g.Line}
			} else if w, ok := seen[nk]; ok && hasNeg {
				sg = Gate{Op: OpNOT, In: [3]int{w, -1, -1}, Out: g.Out, Line: g.Line}
			} else {
				seen[key] = g.Out
			}
		}
		out := wireFact{rep: int32(g.Out)}
		for k := range sg.Op.Arity() {
			out.depth = max(out.depth, wf.get(sg.In[k]).depth)
		}
		if !sg.Op.Free() {
			out.depth++
			c.bootstraps += sg.Op.Bootstraps()
		}
		switch sg.Op {
		case OpZero, OpOne:
			out.rep, out.neg = -1, sg.Op == OpOne
		case OpNOT, OpCopy:
			in := wf.get(sg.In[0])
			out.rep, out.neg, out.mux = in.rep, in.neg != (sg.Op == OpNOT), in.mux
		default:
			c.noise.add(sg.Op, func(k int) bool { return wf.get(sg.In[k]).mux })
			out.mux = sg.Op == OpMUX
		}
		wf.set(g.Out, out)
		maxDepth = max(maxDepth, out.depth)
		c.gates[gi] = g
		sched[gi] = sg
	}
	for j := range nout {
		w := nwires - nout + j
		if wf.get(w).depth < 0 {
			v, bit := locate(outputs, j)
			return nil, errf(hl.outputs, "output wire %d (output %d, bit %d) is never written", w, v+1, bit)
		}
	}
	c.schedule(sched, wf, int(maxDepth))
	return c, nil
}

// wireFact is what build knows of a wire; of one not yet written, only
// that (depth −1).
type wireFact struct {
	depth int32 // bootstrap depth once the wire is written, −1 before
	// rep is the wire whose sample this wire is, complemented when neg
	// (through copies and NOTs), or −1 for a constant, whose value neg
	// is: the schedule's gates (sched) read a sample twice nowhere, and
	// no constant (reduceRepeats).
	rep int32
	neg bool
	mux bool // a MUX output, or a NOT or copy of one
}

// wireFacts holds build's wireFact of every wire. It stores those of the
// wires past the inputs only, which build has checked are at most one a
// gate: its memory (12 bytes a gate) is in the netlist's lines, not in the
// input bits its header declares, which a file of 30 bytes can make 2^24.
// An input wire w is written, of depth 0, its own sample and no MUX output.
type wireFacts struct {
	nin   int
	facts []wireFact // facts[i] is wire nin+i's
}

func newWireFacts(nin, nwires int) wireFacts {
	wf := wireFacts{nin: nin, facts: make([]wireFact, nwires-nin)}
	for i := range wf.facts {
		wf.facts[i].depth = -1
	}
	return wf
}

func (wf wireFacts) get(w int) wireFact {
	if w < wf.nin {
		return wireFact{rep: int32(w)}
	}
	return wf.facts[w-wf.nin]
}

// set records the fact of wire w, which is not an input.
func (wf wireFacts) set(w int, f wireFact) { wf.facts[w-wf.nin] = f }

// scheduledGate returns the gate the schedule runs for g: g itself, or, when
// g's bootstrap would read a sample twice or a constant (wireFact.rep and
// neg), the gate of its distinct samples (reduceRepeats), reading the
// wires that hold them.
func scheduledGate(g Gate, wf wireFacts) Gate {
	if g.Op.Free() {
		return g
	}
	var key [3]int32
	var constant, ng [3]bool
	for k := range g.Op.Arity() {
		in := wf.get(g.In[k])
		key[k], constant[k], ng[k] = in.rep, in.rep < 0, in.neg
	}
	r, ok := reduceRepeats(g.Op, key, constant, ng)
	if !ok {
		return g
	}
	sg := Gate{Op: r.op, In: [3]int{-1, -1, -1}, Out: g.Out, Line: g.Line}
	for k := range r.op.Arity() {
		sg.In[k] = int(key[r.src[k]])
	}
	return sg
}

// muxReads is how many MUX outputs the noisiest bootstrap of a gate op
// reads, input k being one when isMux(k): a MUX's two bootstraps read
// (selector, b) and (selector, c), a MAJ's its three inputs, every other
// gate's its two.
func muxReads(op Op, isMux func(k int) bool) int {
	n := func(k int) int {
		if isMux(k) {
			return 1
		}
		return 0
	}
	switch op {
	case OpMUX:
		return n(0) + max(n(1), n(2))
	case OpMAJ:
		return n(0) + n(1) + n(2)
	}
	return n(0) + n(1)
}

// gateNoise is what decides the failure figure of a plan's gate
// bootstraps: a MUX output is noisier than a gate's, and a MAJ sums three
// inputs where the other gates sum two.
type gateNoise struct {
	mux    int  // the most MUX outputs one bootstrap of a two-input gate or a MUX half reads (0 to 2)
	maj    bool // some bootstrap is a MAJ's
	majMux int  // the most MUX outputs one MAJ reads (0 to 3)
}

// add takes in the bootstrap of gate op (not free), input k being a MUX
// output when isMux(k).
func (g *gateNoise) add(op Op, isMux func(k int) bool) {
	n := muxReads(op, isMux)
	if op == OpMAJ {
		g.maj, g.majMux = true, max(g.majMux, n)
		return
	}
	g.mux = max(g.mux, n)
}

// unwrittenWires is build's error for a circuit of more wires than its
// inputs and gates can write: the first output wire no gate writes, if
// any (the more telling error for a truncated netlist), else the count.
// It takes memory in the gates, not in the wires the header declares.
func unwrittenWires(gates []Gate, nin, nwires, nout int, outputs []int,
	errf func(int, string, ...any) error, hl headerLines) error {
	outs := make([]int, 0, len(gates))
	for i := range gates {
		if w := gates[i].Out; w >= nin && w < nwires {
			outs = append(outs, w)
		}
	}
	slices.Sort(outs)
	outs = slices.Compact(outs)
	for j := range nout {
		w := nwires - nout + j
		if _, ok := slices.BinarySearch(outs, w); !ok && w >= nin {
			v, bit := locate(outputs, j)
			return errf(hl.outputs, "output wire %d (output %d, bit %d) is never written", w, v+1, bit)
		}
	}
	first := nin // the first wire past the inputs that no gate writes
	for _, w := range outs {
		if w != first {
			break
		}
		first++
	}
	return errf(hl.counts, "%d wires for %d input bits and %d gates: %d are never written (wire %d first)",
		nwires, nin, len(gates), nwires-nin-len(outs), first)
}

func sumWidths(widths []int, nwires int, what string) (int, error) {
	total := 0
	for i, n := range widths {
		if n < 0 || n > nwires {
			return 0, fmt.Errorf("%s %d has width %d, outside [0, %d]", what, i+1, n, nwires)
		}
		total += n
		if total > nwires {
			return 0, fmt.Errorf("the %ss have %d bits or more, more than the %d wires", what, total, nwires)
		}
	}
	return total, nil
}

// locate returns the value and bit that flat bit j of widths falls in.
func locate(widths []int, j int) (value, bit int) {
	for i, n := range widths {
		if j < n {
			return i, j
		}
		j -= n
	}
	return len(widths), j
}

// schedule groups the gates into levels by bootstrap depth: a bootstrapped
// gate's level is one more than the deepest of its inputs, a free gate's level
// that of its input (0 for constants). Within a level the netlist order is
// kept, which keeps chains of free gates in order.
func (c *Circuit) schedule(gates []Gate, wf wireFacts, maxDepth int) {
	nb := make([]int, maxDepth+1) // bootstrapped gates per level
	nf := make([]int, maxDepth+1) // free gates per level
	for _, g := range gates {
		if d := wf.get(g.Out).depth; g.Op.Free() {
			nf[d]++
		} else {
			nb[d]++
		}
	}
	c.sched = make([]Gate, len(c.gates))
	c.levels = make([]Level, maxDepth+1)
	pb := make([]int, maxDepth+1) // next slot of each level's bootstrapped part
	pf := make([]int, maxDepth+1) // next slot of each level's free part
	off := 0
	for l := range c.levels {
		c.levels[l] = Level{
			Bootstrapped: c.sched[off : off+nb[l] : off+nb[l]],
			Free:         c.sched[off+nb[l] : off+nb[l]+nf[l] : off+nb[l]+nf[l]],
		}
		pb[l], pf[l] = off, off+nb[l]
		off += nb[l] + nf[l]
	}
	for _, g := range gates {
		l := wf.get(g.Out).depth
		if g.Op.Free() {
			c.sched[pf[l]] = g
			pf[l]++
		} else {
			c.sched[pb[l]] = g
			pb[l]++
		}
	}
}

// Format returns the netlist format the circuit was read from (or given to
// NewCircuit).
func (c *Circuit) Format() Format { return c.format }

// NumWires returns the number of wires.
func (c *Circuit) NumWires() int { return c.nwires }

// NumGates returns the number of gates. A Bristol MAND gate of n ANDs counts
// as n gates.
func (c *Circuit) NumGates() int { return len(c.gates) }

// Inputs returns the bit width of each input value, in wire order.
func (c *Circuit) Inputs() []int { return slices.Clone(c.inputs) }

// Outputs returns the bit width of each output value, in wire order.
func (c *Circuit) Outputs() []int { return slices.Clone(c.outputs) }

// Gates returns the gates in netlist order.
func (c *Circuit) Gates() []Gate { return slices.Clone(c.gates) }

// Count returns the number of gates of kind op among the netlist's gates
// (Gates, NumGates), as they were given: a gate that NewCircuit evaluates
// as a copy of an identical earlier gate, or as the gate of its distinct
// inputs (Bootstraps), counts as its own op, and MAND as its ANDs.
func (c *Circuit) Count(op Op) int {
	n := 0
	for _, g := range c.gates {
		if g.Op == op {
			n++
		}
	}
	return n
}

// Levels returns the schedule with every XOR gate bootstrapped
// (XORBootstrapped; XORLinear plans its own: Evaluator.PlanCircuit):
// Levels()[0] holds no bootstrapped gates, only
// the free gates that depend on inputs and constants alone; level l ≥ 1 holds
// the gates whose bootstrap depth is l. Evaluating the levels in order,
// each level's Bootstrapped gates (in any order, e.g. as one batch) and then
// its Free gates in order, evaluates the circuit.
func (c *Circuit) Levels() []Level {
	sched := slices.Clone(c.sched)
	levels := make([]Level, len(c.levels))
	off := 0
	for l, lv := range c.levels {
		nb, nf := len(lv.Bootstrapped), len(lv.Free)
		levels[l] = Level{
			Bootstrapped: sched[off : off+nb : off+nb],
			Free:         sched[off+nb : off+nb+nf : off+nb+nf],
		}
		off += nb + nf
	}
	return levels
}

// Depth returns the bootstrap depth with every XOR gate bootstrapped
// (XORBootstrapped): the number of levels with bootstrapped gates,
// len(Levels())−1. EvalCircuit's default, XORLinear, bootstraps no XOR
// but refreshes some sums, and usually takes fewer levels (AES-128 with
// sums of 9 terms: 171, not 291): Evaluator.PlanCircuit gives them,
// CircuitPlan.Levels−1.
func (c *Circuit) Depth() int { return len(c.levels) - 1 }

// Bootstraps returns the number of gate bootstraps one encrypted evaluation
// costs with every XOR gate bootstrapped (XORBootstrapped). EvalCircuit's
// default, XORLinear, bootstraps no XOR but refreshes some sums, and
// usually costs fewer (AES-128 with sums of 9 terms: 19,531, not 34,576):
// Evaluator.PlanCircuit gives them, CircuitPlan.Bootstraps. A gate that reads one sample twice (a wire with itself, its copy or
// its complement) costs none or fewer: Levels holds the gate of its distinct
// samples (XOR(w, w) as the constant 0, AND(w, w) as a copy of w), whose
// bootstrap, if any, adds no sample to itself; a gate identical to an
// earlier one (its op on the same samples) is a copy of that one's output,
// which it would equal bit for bit.
func (c *Circuit) Bootstraps() int { return c.bootstraps }

// String returns a one-line summary; its bootstraps and levels are
// Bootstraps and Depth, with every XOR gate bootstrapped.
func (c *Circuit) String() string {
	if c == nil {
		return "<nil circuit>"
	}
	plural := func(n int, noun string) string {
		if n == 1 {
			return "1 " + noun
		}
		return fmt.Sprintf("%d %ss", n, noun)
	}
	return fmt.Sprintf("%v circuit: inputs %v, outputs %v, %s, %s, %s in %s", c.format, c.inputs, c.outputs,
		plural(c.nwires, "wire"), plural(len(c.gates), "gate"), plural(c.bootstraps, "bootstrap"), plural(c.Depth(), "level"))
}
