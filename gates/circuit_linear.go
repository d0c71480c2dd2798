package gates

import (
	"fmt"
	"slices"
	"sync"

	"golang.org/x/sync/singleflight"
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
// an input first (the one after whose refresh the sum is ready soonest).
// A tree of XORs whose inner wires are read only by the tree and whose
// leaves are single samples is summed as a whole instead, its earliest
// terms refreshed together first, so that its shape does not decide its
// refreshes (circuit_xortree.go).
// A MUX output counts as two terms: its error variance (two blind
// rotations before one key switching) is up to twice a gate output's.
// With |S| ≤ 2 the refresh's noise is exactly the bootstrapped XOR gate's;
// more terms trade margin for fewer bootstraps.
// Outputs that are sums are refreshed at the end, so every output is a
// sample of phase ±1/8 like any gate's.
//
// This is the "free XOR" of garbled circuits brought to TFHE gates; AES-128
// needs 34,576 bootstraps in 291 levels with every XOR bootstrapped, and
// 19,531 in 171 levels this way with 9 terms (BENCHMARKS.md).

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

// engineInput is what the engine bootstraps for gate o (engineInputOf).
func (o *linOp) engineInput() engineInput {
	var id [3]int32
	var neg [3]bool
	for k := range o.op.Arity() {
		id[k], neg[k] = o.in[k].id, o.in[k].neg
	}
	return engineInputOf(o.op, id, neg)
}

// linLevel is one engine batch of a linear plan; after it, the samples
// release are read no more.
type linLevel struct {
	ops     []linOp
	release []int32
	free    int // gates folded into the level without a bootstrap
}

// linearPlan is the schedule of a circuit under XORLinear with at most
// terms terms per sum. Samples 0 … inputs−1 are the circuit's input bits;
// the others are written by the plan's operations, each once. Its memory is
// in the gates: it has no entry per input bit (a level releases only the
// samples the plan writes) nor per output bit that is an input.
type linearPlan struct {
	terms   int
	inputs  int
	samples int
	levels  []linLevel // levels[0] holds no operation
	// Output bit j (of nout) is sample firstOutput + j, an input, below
	// nout − len(outputs), and outputs[j − (nout − len(outputs))] from
	// there: the output wires that are not inputs.
	nout, firstOutput int
	outputs           []cleanRef

	bootstraps int // gate bootstraps (a MUX counts 2) and refreshes
	refreshes  int
	maxBatch   int
	noise      gateNoise // what decides the gates' failure figure (Circuit.noise)
	largestSum int       // the largest weight of a refreshed sum (a MUX output 2); 0 if none
	majorities int       // full adders' carries evaluated as MAJ gates (fuseMajorities)
}

// numOutputs returns the number of output bits.
func (p *linearPlan) numOutputs() int { return p.nout }

// output returns the sample of output bit j (negated where neg).
func (p *linearPlan) output(j int) cleanRef {
	if k := j - (p.nout - len(p.outputs)); k >= 0 {
		return p.outputs[k]
	}
	return cleanRef{id: int32(p.firstOutput + j)}
}

// planKey names a cached plan: the sum bound and the engine's batch tiers.
type planKey struct {
	terms      int
	tiers      string
	majorities bool
}

// linearPlan returns c's plan for sums of at most terms terms (≥ 2),
// building it on first use. With tiers (bootstrap.BatchTiers: ascending
// batch sizes at which the engine's time per call steps up) the levels are
// filled tier by tier (fillTiers); without, every operation runs at the
// first level its inputs allow. Full adders' carries are planned as MAJ
// gates (fuseMajorities) where that takes fewer bootstraps
// (linearPlanWith).
func (c *Circuit) linearPlan(terms int, tiers []int) (*linearPlan, error) {
	return c.linearPlanWith(terms, tiers, true)
}

// linearPlanWith is linearPlan, with carries planned as MAJ gates only
// where majorities.
func (c *Circuit) linearPlanWith(terms int, tiers []int, majorities bool) (*linearPlan, error) {
	if err := checkXORTerms(terms); err != nil {
		return nil, err
	}
	for i, t := range tiers {
		if t < 1 || i > 0 && t <= tiers[i-1] {
			return nil, fmt.Errorf("gates: batch tiers %v are not ascending positive sizes", tiers)
		}
	}
	key := planKey{terms, fmt.Sprint(tiers), majorities}
	if !majorities {
		return c.plans.getOrBuild(key, func() *linearPlan { return buildPlan(c, terms, tiers, true, false) }), nil
	}
	return c.plans.getOrBuild(key, func() *linearPlan { return buildLinearPlan(c, terms, tiers) }), nil
}

// checkXORTerms checks a sum bound (MaxXORTerms once its default is
// applied).
func checkXORTerms(terms int) error {
	if terms < 2 {
		return fmt.Errorf("gates: MaxXORTerms %d: a linear XOR needs at least 2 terms", terms)
	}
	return nil
}

// maxCachedPlans bounds a circuit's cached plans. Each EvalCircuits set
// count can need its own tiers (instanceTiers), and a plan of AES-128 holds
// about 2.1 MB of heap; building one takes about 30 ms on one goroutine,
// little next to an evaluation. SHA-256's took 170-190 ms; where full
// adders' carries fuse buildLinearPlan plans twice (with the carries as
// MAJ gates and as the netlist has them), and SHA-256's takes about twice
// that and allocates 112 MB where one plan allocated 60 MB.
const maxCachedPlans = 8

// planCache holds a circuit's most recently used linear plans. Its
// methods are safe for concurrent use.
type planCache struct {
	mu      sync.Mutex
	entries []planEntry // least recently used first
	// building lets one caller build a missing plan while the others
	// that miss the same key wait for it: goroutines that each evaluate
	// a circuit start together (examples/circuit -concurrent), and a
	// SHA-256 plan takes a third of a second and its heap to build
	// (maxCachedPlans).
	building singleflight.Group
}

type planEntry struct {
	key  planKey
	plan *linearPlan
}

// get returns the plan of key, or nil.
func (pc *planCache) get(key planKey) *linearPlan {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	for i, e := range pc.entries {
		if e.key == key {
			pc.entries = append(slices.Delete(pc.entries, i, i+1), e)
			return e.plan
		}
	}
	return nil
}

// getOrBuild returns the plan of key, built by build if it is not cached;
// callers that miss the same key at once wait for one build.
func (pc *planCache) getOrBuild(key planKey, build func() *linearPlan) *linearPlan {
	if p := pc.get(key); p != nil {
		return p
	}
	p, _, _ := pc.building.Do(fmt.Sprint(key.terms, "/", key.tiers, "/", key.majorities), func() (any, error) {
		if p := pc.get(key); p != nil {
			return p, nil // built between the miss and Do
		}
		p := build()
		pc.put(key, p)
		return p, nil
	})
	return p.(*linearPlan)
}

// put caches p under key, which is not cached (getOrBuild's single
// flight).
func (pc *planCache) put(key planKey, p *linearPlan) {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if len(pc.entries) == maxCachedPlans {
		pc.entries = slices.Delete(pc.entries, 0, 1)
	}
	pc.entries = append(pc.entries, planEntry{key, p})
}

// linWire is a wire's value while a plan is built: the sorted sample ids
// of its sum and its constant.
type linWire struct {
	terms []int32
	neg   bool
}

// linWires holds the linWire of every wire while a plan is built. It
// stores those of the wires past the inputs only, which build has checked
// are at most one a gate; an input wire is its own sample, whose one-term
// sum is made when the wire is first read. Its memory is thus in the gates,
// not in the input bits a header declares, which a file of 30 bytes can
// make 2^24 (a table of them all took 512 MB, and their sums more).
// An input wire is never set: a sum of one term, no MUX output, is never
// refreshed.
type linWires struct {
	nin    int
	past   []linWire         // past[i] is wire nin+i's
	inputs map[int32][]int32 // the sums of the input wires read
}

func (lw *linWires) get(w int) linWire {
	// One comparison for both ends: w − nin wraps for an input.
	if i := uint(w - lw.nin); i < uint(len(lw.past)) {
		return lw.past[i]
	}
	return lw.input(w)
}

func (lw *linWires) input(w int) linWire {
	if w < 0 || w >= lw.nin {
		panic(fmt.Sprintf("gates: linear plan: wire %d of %d", w, lw.nin+len(lw.past)))
	}
	t, ok := lw.inputs[int32(w)]
	if !ok {
		t = []int32{int32(w)}
		lw.inputs[int32(w)] = t
	}
	return linWire{terms: t}
}

// set sets the value of wire w, which is not an input.
func (lw *linWires) set(w int, x linWire) { lw.past[w-lw.nin] = x }

// buildLinearPlan builds c's linear plan. Where it evaluates full adders'
// carries as MAJ gates (fuseMajorities) it also plans the netlist's gates
// as they are and keeps that plan where it takes fewer bootstraps, or as
// many in fewer levels (about 1% of the plans of TestFuseMajoritiesRandom's
// circuits; none of the shipped ones). A carry fused can cost more than
// the gates it replaces: a refresh that its AND shared with another
// reader can be lost, and a and c both sums (written by XOR) can cancel in
// a ⊕ c, which the AND read as one sample where the MAJ refreshes both
// (4 bootstraps for 2). The choice is for all the carries at once: one
// that costs more stays fused where the others save more.
func buildLinearPlan(c *Circuit, maxTerms int, tiers []int) *linearPlan {
	p := buildPlan(c, maxTerms, tiers, true, true)
	if p.majorities == 0 {
		return p
	}
	if old := buildPlan(c, maxTerms, tiers, true, false); old.bootstraps < p.bootstraps ||
		old.bootstraps == p.bootstraps && len(old.levels) < len(p.levels) {
		return old
	}
	return p
}

// buildPlan builds the linear plan, summing XOR trees whole (xorTrees) or
// gate by gate as the planner did before it did (for tests), and with full
// adders' carries as MAJ gates (majorities, fuseMajorities) or as the
// netlist has them (for tests).
func buildPlan(c *Circuit, maxTerms int, tiers []int, xorTrees, majorities bool) *linearPlan {
	nin := c.numInputBits()
	p := &linearPlan{terms: maxTerms, inputs: nin}
	gates := c.gates
	if majorities {
		gates, p.majorities = fuseMajorities(c)
	}
	// Samples 0 … nin−1 are the input bits, of level 0 and no MUX
	// outputs. Of those the plan writes, id ≥ nin, written[id − nin] is
	// the level that writes it and fromMux[id − nin] whether it is a MUX
	// output, which counts as two terms of a sum (weight) and is noisier
	// as a gate's input (p.noise). No table here is indexed by input bit,
	// so that planning takes memory in the gates (linWires).
	written := make([]int32, 0, len(c.gates))
	fromMux := make([]bool, 0, len(c.gates))
	// In level and isMux, one comparison for both ends: id − nin wraps for
	// an input.
	level := func(id int32) int32 {
		if i := uint(int(id) - nin); i < uint(len(written)) {
			return written[i]
		}
		return 0
	}
	isMux := func(id int32) bool {
		i := uint(int(id) - nin)
		return i < uint(len(fromMux)) && fromMux[i]
	}
	anyMux := false // some sample is a MUX output
	wires := linWires{nin: nin, past: make([]linWire, c.nwires-nin), inputs: map[int32][]int32{}}
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
			lv = max(lv, level(id))
		}
		return lv
	}
	newSample := func(lv int32) int32 {
		written = append(written, lv)
		fromMux = append(fromMux, false)
		return int32(nin + len(written) - 1)
	}
	weight := func(terms []int32) int {
		w := len(terms)
		if !anyMux {
			return w
		}
		for _, id := range terms {
			if isMux(id) {
				w++
			}
		}
		return w
	}
	refreshed := map[string]int32{}       // sum → the sample of its refresh (of the sum without complement)
	gateSample := map[engineInput]int32{} // a gate's engine input → the sample it writes
	// refresh makes wire w one bootstrap output: a sum of two or more
	// terms, or, for a sum's limit (lone), a lone MUX output, which counts
	// as two terms there.
	// reuse makes wire w the refresh of its sum if one was made, through w
	// or another wire that held the same sum (a copy of w made before it).
	reuse := func(w int) bool {
		x := wires.get(w)
		id, ok := refreshed[sumKey(x.terms)]
		if ok {
			wires.set(w, linWire{terms: []int32{id}, neg: x.neg})
		}
		return ok
	}
	refresh := func(w, line int, lone bool) {
		x := wires.get(w)
		if len(x.terms) < 2 && (!lone || weight(x.terms) < 2) || reuse(w) {
			return
		}
		key := sumKey(x.terms)
		lv := ready(x.terms) + 1
		id := newSample(lv)
		add(lv, linOp{sum: x.terms, out: id, line: line})
		refreshed[key] = id
		p.refreshes++
		wires.set(w, linWire{terms: []int32{id}, neg: x.neg})
	}
	ref := func(w, line int) cleanRef {
		refresh(w, line, false)
		x := wires.get(w)
		if len(x.terms) == 0 {
			return cleanRef{id: -1, neg: x.neg}
		}
		return cleanRef{id: x.terms[0], neg: x.neg}
	}
	var freeTerms [][]int32 // per free gate, its sum's samples: to count them again after fillTiers
	foldFree := func(x linWire) {
		freeTerms = append(freeTerms, x.terms)
		lv := ready(x.terms)
		for int(lv) >= len(free) {
			ops = append(ops, nil)
			free = append(free, 0)
		}
		free[lv]++
	}
	setFree := func(w int, x linWire) {
		wires.set(w, x)
		foldFree(x)
	}
	var inner []bool
	if xorTrees {
		inner = innerXORWires(c, gates, nin)
	}
	isInner := func(w int) bool { return xorTrees && w >= nin && inner[w-nin] }
	trees := map[int]*xorTree{} // by the inner wire of the root
	// sumTree makes wire w the sum of tree t's leaves (xorTreePlanner).
	sumTree := func(w int, t *xorTree, line int) {
		ls := t.leaves
		for i := range ls {
			ls[i].level, ls[i].weight, ls[i].seq = ready(ls[i].terms), weight(ls[i].terms), i
		}
		sum := xorAll(ls)
		if weight(sum) > maxTerms {
			seq := len(ls)
			ls = groupTerms(ls, maxTerms, func(group []treeItem) treeItem {
				if len(group) == 1 && group[0].wire >= 0 {
					refresh(group[0].wire, line, true)
					it := group[0]
					it.terms = wires.get(it.wire).terms
					it.level, it.weight = ready(it.terms), weight(it.terms)
					return it
				}
				s := xorAll(group)
				it := treeItem{wire: -1, terms: s, seq: seq}
				seq++
				if weight(s) >= 2 {
					key := sumKey(s)
					id, ok := refreshed[key]
					if !ok {
						id = newSample(ready(s) + 1)
						add(written[int(id)-nin], linOp{sum: s, out: id, line: line})
						refreshed[key] = id
						p.refreshes++
					}
					it.terms = []int32{id}
				}
				it.level, it.weight = ready(it.terms), weight(it.terms)
				return it
			})
			sum = xorAll(ls)
		}
		x := linWire{terms: sum, neg: t.neg}
		wires.set(w, x)
		for range t.gates {
			foldFree(x)
		}
	}
	for _, g := range gates {
		switch g.Op {
		case OpXOR, OpXNOR:
			if isInner(g.In[0]) || isInner(g.In[1]) || isInner(g.Out) {
				// A gate of an XOR tree: its leaves are gathered up to the
				// root, which sums them (sumTree).
				var t *xorTree
				for _, w := range g.In[:2] {
					if isInner(w) {
						u := trees[w]
						delete(trees, w)
						if t == nil {
							t = u
						} else {
							t = t.merge(u)
						}
					}
				}
				if t == nil {
					t = &xorTree{}
				}
				for _, w := range g.In[:2] {
					if !isInner(w) {
						x := wires.get(w)
						t.leaves = append(t.leaves, treeItem{wire: w, terms: x.terms})
						t.neg = t.neg != x.neg
					}
				}
				t.neg = t.neg != (g.Op == OpXNOR)
				t.gates++
				if isInner(g.Out) {
					trees[g.Out] = t
				} else {
					sumTree(g.Out, t, g.Line)
				}
				continue
			}
			x, y := wires.get(g.In[0]), wires.get(g.In[1])
			sum := symDiff(x.terms, y.terms)
			if weight(sum) > maxTerms {
				// Refresh first the input after whose refresh the sum is
				// ready soonest (a refresh is a level later than its terms),
				// the larger one when that is a tie: in the step-cost model
				// of fillTiers this takes AES-128 from 185 levels to 172
				// for 1.4% more bootstraps, about 3.5% less time (mul64
				// 3%, SHA-256 0.7%).
				a, b := g.In[0], g.In[1]
				ra, rb := ready(x.terms), ready(y.terms)
				if ta, tb := max(ra+1, rb), max(rb+1, ra); tb < ta || tb == ta && weight(y.terms) > weight(x.terms) {
					a, b = b, a
				}
				refresh(a, g.Line, true)
				x, y = wires.get(g.In[0]), wires.get(g.In[1])
				if sum = symDiff(x.terms, y.terms); weight(sum) > maxTerms {
					refresh(b, g.Line, true)
					x, y = wires.get(g.In[0]), wires.get(g.In[1])
					sum = symDiff(x.terms, y.terms)
				}
			}
			// A refresh keeps a wire's complement: x.neg and y.neg are
			// the gate's inputs'.
			setFree(g.Out, linWire{terms: sum, neg: x.neg != y.neg != (g.Op == OpXNOR)})
		case OpNOT:
			x := wires.get(g.In[0])
			setFree(g.Out, linWire{terms: x.terms, neg: !x.neg})
		case OpCopy:
			setFree(g.Out, wires.get(g.In[0]))
		case OpZero, OpOne:
			setFree(g.Out, linWire{neg: g.Op == OpOne})
		default:
			// A sum read twice (a wire and its copy, two XOR gates of one
			// sum) or a constant: the gate of its distinct sums, found on
			// the wires before any refresh, so that one whose result is
			// free (a constant, a sum or its complement) refreshes nothing.
			// Each distinct sum is read as itself, not complemented; the
			// empty sum is the constant 0.
			var key [3]string
			var constant, ng [3]bool
			for k := range g.Op.Arity() {
				// A sum refreshed already reads as that refresh's sample,
				// whichever wire made it: the key of the wire that did.
				if len(wires.get(g.In[k]).terms) >= 2 {
					reuse(g.In[k])
				}
				x := wires.get(g.In[k])
				key[k], constant[k], ng[k] = sumKey(x.terms), len(x.terms) == 0, x.neg
			}
			op, in, pos := g.Op, g.In, [3]bool{} // pos[k]: read input k as its sum, not complemented
			if r, ok := reduceRepeats(g.Op, key, constant, ng); ok {
				sum := func(j int) []int32 { return wires.get(g.In[r.src[j]]).terms }
				switch r.op {
				case OpZero, OpOne:
					setFree(g.Out, linWire{neg: r.op == OpOne})
					continue
				case OpCopy, OpNOT:
					setFree(g.Out, linWire{terms: sum(0), neg: r.op == OpNOT})
					continue
				case OpXOR, OpXNOR:
					// A MUX whose data inputs are one sum and its
					// complement; if the sum would pass the limit it stays
					// a MUX, whose halves read no sample twice.
					if x := (linWire{terms: symDiff(sum(0), sum(1)), neg: r.op == OpXNOR}); weight(x.terms) <= maxTerms {
						setFree(g.Out, x)
						continue
					}
				default:
					op, in, pos = r.op, [3]int{g.In[r.src[0]], g.In[r.src[1]], -1}, [3]bool{true, true}
				}
			}
			o := linOp{op: op, line: g.Line}
			for k := range op.Arity() {
				o.in[k] = ref(in[k], g.Line)
				if pos[k] {
					o.in[k].neg = false
				}
			}
			// A gate before of the same engine input computed the same
			// sample (engineInputOf): this one is a copy of it, or its
			// complement for the negated input.
			gk := o.engineInput()
			if id, ok := gateSample[gk]; ok {
				setFree(g.Out, linWire{terms: []int32{id}})
				continue
			}
			if nk, ok := gk.negated(); ok {
				if id, ok := gateSample[nk]; ok {
					setFree(g.Out, linWire{terms: []int32{id}, neg: true})
					continue
				}
			}
			lv := int32(0)
			for k := range o.op.Arity() {
				if id := o.in[k].id; id >= 0 {
					lv = max(lv, level(id))
				}
			}
			lv++
			o.out = newSample(lv)
			gateSample[gk] = o.out
			add(lv, o)
			p.bootstraps += o.op.Bootstraps()
			p.noise.add(o.op, func(k int) bool { return o.in[k].id >= 0 && isMux(o.in[k].id) })
			fromMux[int(o.out)-nin] = o.op == OpMUX
			anyMux = anyMux || o.op == OpMUX
			wires.set(g.Out, linWire{terms: []int32{o.out}})
		}
	}
	// The output wires that are inputs are their own samples, consecutive
	// (linearPlan.output): they take no memory.
	p.nout = c.numOutputBits()
	p.firstOutput = c.nwires - p.nout
	for w := max(p.firstOutput, nin); w < c.nwires; w++ {
		p.outputs = append(p.outputs, ref(w, 0))
	}
	p.bootstraps += p.refreshes
	p.samples = nin + len(written)
	if len(tiers) > 0 {
		ops = fillTiers(ops, nin, p.samples, tiers)
		// The free gates fold at the level that writes the last of their
		// samples, which fillTiers may have moved.
		for lv, l := range ops {
			for i := range l {
				written[int(l[i].out)-nin] = int32(lv)
			}
		}
		free = make([]int, len(ops))
		for _, t := range freeTerms {
			free[ready(t)]++
		}
	}

	// Release each sample the plan writes after the level of its last
	// read; outputs never. The input samples are the caller's: releasing
	// them would free nothing.
	last := make([]int32, len(written)) // last[id − nin]
	for lv, l := range ops {
		for i := range l {
			last[int(l[i].out)-nin] = int32(lv)
		}
	}
	read := func(id int32, lv int) {
		if int(id) >= nin {
			last[int(id)-nin] = max(last[int(id)-nin], int32(lv))
		}
	}
	for lv, l := range ops {
		for i := range l {
			o := &l[i]
			for _, id := range o.sum {
				read(id, lv)
			}
			for k := range o.op.Arity() {
				read(o.in[k].id, lv)
			}
		}
	}
	for _, r := range p.outputs {
		if int(r.id) >= nin {
			last[int(r.id)-nin] = -1
		}
	}
	for _, l := range ops {
		for i := range l {
			if l[i].refresh() {
				p.largestSum = max(p.largestSum, weight(l[i].sum))
			}
		}
	}
	p.levels = make([]linLevel, len(ops))
	for lv := range ops {
		p.levels[lv] = linLevel{ops: slices.Clip(ops[lv]), free: free[lv]}
		p.maxBatch = max(p.maxBatch, len(ops[lv]))
	}
	for i, lv := range last {
		if lv >= 0 {
			p.levels[lv].release = append(p.levels[lv].release, int32(nin+i))
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

// fillTiers reschedules the operations of ops (by level, each reading only
// samples written at earlier levels or circuit inputs, which are the
// samples below inputs, every sample id below samples) so that each level
// fills the batch tier it must use anyway, and returns them by their new
// levels. The depth does not change: every operation still runs between
// its earliest level (ASAP) and its latest (ALAP, the least of its
// readers' levels less one, the depth for the last). Level by level, the
// operations whose latest level it is must run; their count picks the
// smallest tier that holds them (or a multiple of the last tier), and
// ready operations with the earliest latest levels fill the rest of it,
// since an engine whose time steps up by tiers (a GPU filling its SMs:
// bootstrap.BatchTiers) runs them there at no cost and each one taken is
// one fewer for a later level. On an H200 with TFHELib128 grouped by 2
// this took AES-128 from 1.23 to 1.05 s, mul64 from 0.92 to 0.78 s and
// SHA-256 from 13.6 to 10.6 s (BENCHMARKS.md). Its memory is in the
// operations: it has no table of the input samples.
func fillTiers(ops [][]linOp, inputs, samples int, tiers []int) [][]linOp {
	type node struct {
		op      *linOp
		alap    int32
		waiting int32 // inputs not yet written
	}
	var nodes []node
	for lv := range ops {
		for i := range ops[lv] {
			nodes = append(nodes, node{op: &ops[lv][i]})
		}
	}
	depth := int32(len(ops) - 1)
	// Of the samples the operations write (id ≥ inputs), no input bit:
	// writer[id − inputs] is the node that writes sample id, readers[id −
	// inputs] the nodes that read it.
	writer := make([]int32, samples-inputs)
	for i := range nodes {
		writer[int(nodes[i].op.out)-inputs] = int32(i)
	}
	reads := func(o *linOp, f func(id int32)) {
		if o.refresh() {
			for _, id := range o.sum {
				f(id)
			}
			return
		}
		for k := range o.op.Arity() {
			if id := o.in[k].id; id >= 0 {
				f(id)
			}
		}
	}
	readers := make([][]int32, samples-inputs)
	for i := range nodes {
		reads(nodes[i].op, func(id int32) {
			if int(id) >= inputs {
				nodes[i].waiting++
				readers[int(id)-inputs] = append(readers[int(id)-inputs], int32(i))
			}
		})
	}
	// nodes are in ASAP order, a topological order: latest levels backwards.
	for i := len(nodes) - 1; i >= 0; i-- {
		nodes[i].alap = depth
		for _, r := range readers[int(nodes[i].op.out)-inputs] {
			nodes[i].alap = min(nodes[i].alap, nodes[r].alap-1)
		}
	}
	// ready[a]: nodes whose inputs are written, by latest level a.
	ready := make([][]int32, depth+1)
	for i := range nodes {
		if nodes[i].waiting == 0 {
			ready[nodes[i].alap] = append(ready[nodes[i].alap], int32(i))
		}
	}
	tierFor := func(n int) int {
		for _, t := range tiers {
			if n <= t {
				return t
			}
		}
		last := tiers[len(tiers)-1]
		return (n + last - 1) / last * last
	}
	out := make([][]linOp, depth+1)
	var done []int32
	for lv := int32(1); lv <= depth; lv++ {
		// Nodes whose latest level is lv have their inputs written before
		// lv (theirs are at most lv − 1 and were forced by then).
		room := tierFor(len(ready[lv])) - len(ready[lv])
		done = append(done[:0], ready[lv]...)
		ready[lv] = nil
		for a := lv + 1; a <= depth && room > 0; a++ {
			take := min(room, len(ready[a]))
			done = append(done, ready[a][:take]...)
			ready[a] = ready[a][take:]
			room -= take
		}
		for _, i := range done {
			out[lv] = append(out[lv], *nodes[i].op)
		}
		// Readers of what this level wrote become ready at the next.
		for _, i := range done {
			for _, r := range readers[int(nodes[i].op.out)-inputs] {
				if nodes[r].waiting--; nodes[r].waiting == 0 {
					ready[nodes[r].alap] = append(ready[nodes[r].alap], r)
				}
			}
		}
	}
	return out
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
	bits := make([]bool, p.numOutputs())
	for j := range bits {
		bits[j] = get(p.output(j))
	}
	return splitOutputs(bits, c.outputs)
}
