package gates

import (
	"fmt"
	"slices"
)

// Linear XOR (XORLinear): XOR and XNOR gates are not bootstrapped. A
// bootstrapped sample c of bit m (phase ±1/8) gives 2·c + 1/4, of phase m/2
// plus twice c's error, and sums of such samples add their bits modulo 2
// exactly: the phase of Σ_{i∈S} (2·c_i + 1/4) + k/2 is (⊕_{i∈S} m_i ⊕ k)/2
// plus the sum of the errors. A term that appears twice cancels (2·(2·c + 1/4)
// has phase m plus error: an integer, the bit is gone), and subtracting the
// same sample twice is exact, so a wire is the symmetric difference S of the
// bootstrapped samples it depends on, plus a constant k.
//
// Only XOR survives this encoding: an AND (or any other non-linear gate)
// needs its inputs as single bootstrapped samples of phase ±1/8, so a sum of
// two or more terms that an AND reads is first "refreshed": bootstrapped
// from Σ 2·c_i + |S|/4 + k/2 − 1/4, whose phase is 1/4 for the bit 1 and
// −1/4 for 0 (the bootstrapped XOR gate's own input, 2·(c_1 + c_2) + 1/4,
// for |S| = 2). A refreshed wire is one sample again for every later reader.
//
// The sum's error grows with |S| (variance 4·|S|·σ² for bootstrap outputs
// of error σ; tfhe.NoiseEstimate.Log2XORSumFailure), so sums are kept to
// at most MaxXORTerms terms: an XOR whose result would have more refreshes
// its larger input first. With |S| ≤ 2 the refresh's noise is exactly the
// bootstrapped XOR gate's; more terms trade margin for fewer bootstraps.
// Outputs that are sums are refreshed at the end, so every output is a
// sample of phase ±1/8 like any gate's.
//
// This is the "free XOR" of garbled circuits brought to TFHE gates; AES-128
// needs 34,576 bootstraps with every XOR bootstrapped and about 19,000 this
// way (BENCHMARKS.md).

// cleanRef is a bootstrapped (or input) sample, possibly negated: id −1 is
// the trivial sample of false (true when negated).
type cleanRef struct {
	id  int32
	neg bool
}

// linOp is one bootstrap of a linear plan: a gate (op valid) whose inputs
// are in[:op.Arity()], or a refresh (op == opInvalid) of the sum of the
// samples sum (a wire that is the complement of the sum reads the refresh
// negated). It writes sample out.
type linOp struct {
	op   Op
	in   [3]cleanRef
	sum  []int32
	out  int32
	line int // the netlist line of the gate, or of the gate that made the refresh necessary
}

func (o *linOp) refresh() bool { return o.op == opInvalid }

// linLevel is one engine batch of a linear plan; after it, the samples
// release are read no more.
type linLevel struct {
	ops     []linOp
	release []int32
	free    int // gates folded into the level without a bootstrap
}

// linearPlan is the schedule of a circuit under XORLinear with at most
// terms terms per sum. Samples 0 … inputs−1 are the circuit's input bits;
// the others are written by the plan's operations, each once.
type linearPlan struct {
	terms      int
	inputs     int
	samples    int
	levels     []linLevel // levels[0] holds no operation
	outputs    []cleanRef // one per output bit
	bootstraps int        // gate bootstraps (a MUX counts 2) and refreshes
	refreshes  int
	maxBatch   int
}

// linearPlan returns c's plan for sums of at most terms terms (≥ 2),
// building it on first use.
func (c *Circuit) linearPlan(terms int) (*linearPlan, error) {
	if terms < 2 {
		return nil, fmt.Errorf("gates: MaxXORTerms %d: a linear XOR needs at least 2 terms", terms)
	}
	if p, ok := c.plans.Load(terms); ok {
		return p.(*linearPlan), nil
	}
	p, _ := c.plans.LoadOrStore(terms, buildLinearPlan(c, terms))
	return p.(*linearPlan), nil
}

// linWire is a wire's value while a plan is built: the sorted sample ids
// of its sum and its constant.
type linWire struct {
	terms []int32
	neg   bool
}

func buildLinearPlan(c *Circuit, maxTerms int) *linearPlan {
	p := &linearPlan{terms: maxTerms}
	for _, w := range c.inputs {
		p.inputs += w
	}
	level := make([]int32, p.inputs, p.inputs+len(c.gates)) // per sample: the level that writes it
	wires := make([]linWire, c.nwires)
	for i := range p.inputs {
		wires[i] = linWire{terms: []int32{int32(i)}}
	}
	ops := [][]linOp{nil} // per level; level 0 holds the inputs
	free := []int{0}      // per level
	add := func(lv int32, o linOp) {
		for int(lv) >= len(ops) {
			ops = append(ops, nil)
			free = append(free, 0)
		}
		ops[lv] = append(ops[lv], o)
	}
	ready := func(terms []int32) int32 {
		lv := int32(0)
		for _, id := range terms {
			lv = max(lv, level[id])
		}
		return lv
	}
	newSample := func(lv int32) int32 {
		level = append(level, lv)
		return int32(len(level) - 1)
	}
	refreshed := map[string]int32{} // sum → the sample of its refresh (of the sum without complement)
	refresh := func(w, line int) {
		x := wires[w]
		if len(x.terms) < 2 {
			return
		}
		key := sumKey(x.terms)
		if id, ok := refreshed[key]; ok {
			wires[w] = linWire{terms: []int32{id}, neg: x.neg}
			return
		}
		lv := ready(x.terms) + 1
		id := newSample(lv)
		add(lv, linOp{sum: x.terms, out: id, line: line})
		refreshed[key] = id
		p.refreshes++
		wires[w] = linWire{terms: []int32{id}, neg: x.neg}
	}
	ref := func(w, line int) cleanRef {
		refresh(w, line)
		x := wires[w]
		if len(x.terms) == 0 {
			return cleanRef{id: -1, neg: x.neg}
		}
		return cleanRef{id: x.terms[0], neg: x.neg}
	}
	foldFree := func(x linWire) {
		lv := ready(x.terms)
		for int(lv) >= len(free) {
			ops = append(ops, nil)
			free = append(free, 0)
		}
		free[lv]++
	}
	for _, g := range c.gates {
		switch g.Op {
		case OpXOR, OpXNOR:
			sum := symDiff(wires[g.In[0]].terms, wires[g.In[1]].terms)
			if len(sum) > maxTerms {
				a, b := g.In[0], g.In[1]
				if len(wires[a].terms) < len(wires[b].terms) {
					a, b = b, a
				}
				refresh(a, g.Line)
				if sum = symDiff(wires[g.In[0]].terms, wires[g.In[1]].terms); len(sum) > maxTerms {
					refresh(b, g.Line)
					sum = symDiff(wires[g.In[0]].terms, wires[g.In[1]].terms)
				}
			}
			x := linWire{terms: sum, neg: wires[g.In[0]].neg != wires[g.In[1]].neg != (g.Op == OpXNOR)}
			wires[g.Out] = x
			foldFree(x)
		case OpNOT:
			wires[g.Out] = linWire{terms: wires[g.In[0]].terms, neg: !wires[g.In[0]].neg}
			foldFree(wires[g.Out])
		case OpCopy:
			wires[g.Out] = wires[g.In[0]]
			foldFree(wires[g.Out])
		case OpZero, OpOne:
			wires[g.Out] = linWire{neg: g.Op == OpOne}
			foldFree(wires[g.Out])
		default:
			o := linOp{op: g.Op, line: g.Line}
			lv := int32(0)
			for k := range g.Op.Arity() {
				o.in[k] = ref(g.In[k], g.Line)
				if id := o.in[k].id; id >= 0 {
					lv = max(lv, level[id])
				}
			}
			lv++
			o.out = newSample(lv)
			add(lv, o)
			p.bootstraps += g.Op.Bootstraps()
			wires[g.Out] = linWire{terms: []int32{o.out}}
		}
	}
	nout := c.numOutputBits()
	for w := c.nwires - nout; w < c.nwires; w++ {
		p.outputs = append(p.outputs, ref(w, 0))
	}
	p.bootstraps += p.refreshes
	p.samples = len(level)

	// Release each sample after the level of its last read; outputs never.
	last := make([]int32, len(level))
	copy(last, level)
	for lv, l := range ops {
		for i := range l {
			o := &l[i]
			for _, id := range o.sum {
				last[id] = max(last[id], int32(lv))
			}
			for k := range o.op.Arity() {
				if id := o.in[k].id; id >= 0 {
					last[id] = max(last[id], int32(lv))
				}
			}
		}
	}
	for _, r := range p.outputs {
		if r.id >= 0 {
			last[r.id] = -1
		}
	}
	p.levels = make([]linLevel, len(ops))
	for lv := range ops {
		p.levels[lv] = linLevel{ops: slices.Clip(ops[lv]), free: free[lv]}
		p.maxBatch = max(p.maxBatch, len(ops[lv]))
	}
	for id, lv := range last {
		if lv >= 0 {
			p.levels[lv].release = append(p.levels[lv].release, int32(id))
		}
	}
	return p
}

// sumKey is a map key for the sorted sample ids of a sum.
func sumKey(terms []int32) string {
	b := make([]byte, 4*len(terms))
	for i, id := range terms {
		b[4*i], b[4*i+1], b[4*i+2], b[4*i+3] = byte(id), byte(id>>8), byte(id>>16), byte(id>>24)
	}
	return string(b)
}

// symDiff returns the sorted symmetric difference of the sorted a and b.
func symDiff(a, b []int32) []int32 {
	out := make([]int32, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] < b[j]:
			out = append(out, a[i])
			i++
		case a[i] > b[j]:
			out = append(out, b[j])
			j++
		default:
			i++
			j++
		}
	}
	out = append(out, a[i:]...)
	return append(out, b[j:]...)
}

// evalPlain runs the plan on plaintext bits, as the encrypted evaluation
// runs it on samples (sums as XOR, refreshes as copies), for checking the
// plan against Circuit.Eval.
func (p *linearPlan) evalPlain(c *Circuit, inputs [][]bool) [][]bool {
	v := make([]bool, p.samples)
	i := 0
	for _, in := range inputs {
		i += copy(v[i:], in)
	}
	get := func(r cleanRef) bool {
		if r.id < 0 {
			return r.neg
		}
		return v[r.id] != r.neg
	}
	for _, l := range p.levels {
		for _, o := range l.ops {
			if o.refresh() {
				x := false
				for _, id := range o.sum {
					x = x != v[id]
				}
				v[o.out] = x
				continue
			}
			v[o.out] = o.op.Eval(get(o.in[0]), get(o.in[1]), get(o.in[2]))
		}
	}
	bits := make([]bool, len(p.outputs))
	for j, r := range p.outputs {
		bits[j] = get(r)
	}
	return splitOutputs(bits, c.outputs)
}
