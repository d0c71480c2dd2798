package gates

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sync"
	"time"

	"github.com/goldfhe/goldfhe/bootstrap"
	"github.com/goldfhe/goldfhe/tfhe"
	"github.com/goldfhe/goldfhe/torus"
)

// LevelStats reports one finished level of an encrypted circuit evaluation.
type LevelStats struct {
	Level      int           // index of the level, from 0
	Levels     int           // levels of the evaluation, level 0 (free gates, no engine call) included: CircuitPlan.Levels
	Gates      int           // bootstrapped gates of the level
	Refreshes  int           // sums refreshed in the level (XORLinear); with Gates one engine batch
	Free       int           // gates evaluated without a bootstrap
	Bootstraps int           // bootstraps of the level: Refreshes, plus Gates with a MUX counting 2
	Elapsed    time.Duration // wall time of the level
}

// XORMode says how an encrypted circuit evaluation computes XOR and XNOR
// gates.
type XORMode uint8

const (
	// XORLinear, the default, adds XOR inputs without bootstrapping and
	// bootstraps ("refreshes") a sum only where a non-linear gate or an
	// output needs a single sample, or where it would hold more than
	// MaxXORTerms samples (circuit_linear.go). AES-128 takes 19,531
	// bootstraps in 171 levels this way (9 terms), against 34,576 in 291.
	XORLinear XORMode = iota
	// XORBootstrapped bootstraps every XOR and XNOR like every other
	// two-input gate (CGGI20 §5.1), in the levels of Circuit.Levels.
	XORBootstrapped
)

func (m XORMode) String() string {
	switch m {
	case XORLinear:
		return "linear"
	case XORBootstrapped:
		return "bootstrapped"
	}
	return fmt.Sprintf("XORMode(%d)", int(m))
}

// DefaultXORFailureLog2 bounds log2 of the failure probability of one
// refresh under XORLinear when CircuitOptions.MaxXORTerms is 0: 2^−64, the
// bound TFHE-rs states for its boolean DEFAULT_PARAMETERS. A sum of two
// terms is as noisy as a bootstrapped XOR gate, so the default never goes
// below 2 terms whatever the parameter set.
const DefaultXORFailureLog2 = -64

// maxDefaultXORTerms caps the default MaxXORTerms: beyond, the bootstraps
// saved are few (AES-128: 18,820 at 12 terms, 18,356 at 16).
const maxDefaultXORTerms = 16

// CircuitOptions configures EvalCircuitWith and PlanCircuit. The zero value
// is the default: XORLinear with DefaultMaxXORTerms.
type CircuitOptions struct {
	XOR XORMode
	// MaxXORTerms is the most bootstrapped samples a sum may hold under
	// XORLinear (at least 2); 0 means Evaluator.DefaultMaxXORTerms.
	MaxXORTerms int
	// Progress, if not nil, is called after each level.
	Progress func(LevelStats)
}

// CircuitPlan describes how EvalCircuitWith (one set of inputs) or
// EvalCircuits (Instances sets) evaluates a circuit. Counts cover every
// instance.
type CircuitPlan struct {
	XOR         XORMode
	MaxXORTerms int // XORLinear: the most terms of a sum; 0 otherwise
	Instances   int // sets of inputs evaluated together (1 for EvalCircuitWith)
	// Levels counts level 0, the free gates on the inputs, which makes no
	// engine call, and then one engine batch a level: with every XOR
	// bootstrapped it is Circuit.Depth() + 1, as LevelStats.Levels is.
	// The bootstrapped levels (engine batches), the figure to print as
	// the evaluation's depth, are Levels−1.
	Levels     int
	Bootstraps int // bootstraps in all (a MUX counts 2), refreshes included
	Refreshes  int // XORLinear: sums bootstrapped
	MaxBatch   int // the most bootstrapped gates and refreshes of a level
	// Majorities is, under XORLinear, the full adders' carries the plan
	// evaluates as a MAJ where the netlist has an AND reading two XOR sums
	// and an XOR after it (((a ⊕ c) ∧ (b ⊕ c)) ⊕ c, the garbled-circuit
	// form: adder64 62, mult64 1,891, SHA-256 16,176), counted over every
	// instance; each is one MAJ bootstrap unless the plan reduces it as
	// any gate (a constant c makes it an AND, a MAJ of the same inputs
	// before it a copy). None where a MAJ would fail more often than both
	// 2^DefaultXORFailureLog2 and the sums MaxXORTerms allows (no shipped
	// set at any grouping). XORBootstrapped evaluates the netlist as it is.
	Majorities int
	// LargestSum is, under XORLinear, the most terms of a sum the plan
	// bootstraps (a MUX output counting two), at most MaxXORTerms; 0 where
	// it bootstraps none.
	LargestSum int
	// Log2Failure is log2 of the estimated failure probability of the
	// noisiest bootstrap: a refresh of LargestSum terms under XORLinear,
	// a gate (tfhe.NoiseEstimate), a gate that reads MUX outputs, which
	// are noisier (tfhe.NoiseEstimate.Log2GateFailureMux), or a MAJ, which
	// sums three inputs (Log2MajorityFailure), whichever is worst.
	// It is a figure per bootstrap, not per evaluation: Log2EvalFailure
	// bounds the evaluation's.
	Log2Failure float64
}

// Log2EvalFailure returns log2 of a bound on the probability that any
// bootstrap of the evaluation fails, the union bound over its Bootstraps
// (every instance's; a MUX's two counted apart): log2(Bootstraps) +
// Log2Failure, at most 0. AES-128 (19,531 bootstraps) grouped by 2, at
// 2^−66.2 per bootstrap, is about 2^−51.9 per block. A failed bootstrap
// need not give a wrong output bit, so this is an upper bound; −Inf for a
// plan without bootstraps.
func (p CircuitPlan) Log2EvalFailure() float64 {
	if p.Bootstraps <= 0 {
		return math.Inf(-1)
	}
	return min(0, math.Log2(float64(p.Bootstraps))+p.Log2Failure)
}

// DefaultMaxXORTerms returns the MaxXORTerms that CircuitOptions' zero value
// means for this evaluator: the most terms (2 … 16) whose refresh fails with
// probability at most 2^DefaultXORFailureLog2 under the engine's parameter
// set and key grouping (tfhe.NoiseEstimate.Log2XORSumFailure). An engine
// that does not report its grouping (bootstrap.KeyGrouping) is taken to
// use the noisiest, tfhe.MaxGrouping.
func (ev *Evaluator) DefaultMaxXORTerms() int {
	if ev.ok() != nil {
		return 0
	}
	return ev.figures().defaultTerms
}

// noiseFigures are an evaluator's noise figures, computed once: the
// engine's set and grouping never change, so every plan would otherwise
// repeat the same figures.
type noiseFigures struct {
	est          tfhe.NoiseEstimate
	xor          [maxDefaultXORTerms + 1]float64 // Log2XORSumFailure(w) for 2 ≤ w ≤ maxDefaultXORTerms
	mux          [3]float64                      // Log2GateFailureMux(0, 1, 2)
	maj          [4]float64                      // Log2MajorityFailure(0 … 3)
	defaultTerms int
}

func (ev *Evaluator) computeFigures() *noiseFigures {
	g := bootstrap.KeyGrouping(ev.eng)
	if g == 0 {
		g = tfhe.MaxGrouping
	}
	f := &noiseFigures{est: ev.params.NoiseEstimateGrouped(g), defaultTerms: 2}
	for w := 2; w <= maxDefaultXORTerms; w++ {
		f.xor[w] = f.est.Log2XORSumFailure(w)
	}
	for k := range f.mux {
		f.mux[k] = f.est.Log2GateFailureMux(k)
	}
	for k := range f.maj {
		f.maj[k] = f.est.Log2MajorityFailure(k)
	}
	for f.defaultTerms < maxDefaultXORTerms && f.xor[f.defaultTerms+1] <= DefaultXORFailureLog2 {
		f.defaultTerms++
	}
	return f
}

// xorFailure is Log2XORSumFailure(w), from the cache where it holds it.
func (f *noiseFigures) xorFailure(w int) float64 {
	if w >= 2 && w <= maxDefaultXORTerms {
		return f.xor[w]
	}
	return f.est.Log2XORSumFailure(w)
}

// muxFailure is Log2GateFailureMux(k), k clamped to [0, 2] as it clamps.
func (f *noiseFigures) muxFailure(k int) float64 { return f.mux[min(max(k, 0), 2)] }

// gateFailure is the failure figure of the noisiest gate bootstrap that g
// describes: a two-input gate's or a MUX half's, or a MAJ's.
func (f *noiseFigures) gateFailure(g gateNoise) float64 {
	fail := f.muxFailure(g.mux)
	if g.maj {
		fail = max(fail, f.maj[min(max(g.majMux, 0), 3)])
	}
	return fail
}

// PlanCircuit returns how EvalCircuitWith would evaluate c with opts. It
// takes memory in c's gates, not in its wires: a circuit of few gates
// and millions of input bits, which a file of 30 bytes can declare, is
// planned in a few kilobytes, so that a server can plan a circuit it is
// given to check its cost before it runs it.
func (ev *Evaluator) PlanCircuit(c *Circuit, opts CircuitOptions) (CircuitPlan, error) {
	return ev.planCircuits("PlanCircuit", c, 1, opts)
}

// PlanCircuits returns how EvalCircuits would evaluate c on instances sets
// of inputs with opts.
func (ev *Evaluator) PlanCircuits(c *Circuit, instances int, opts CircuitOptions) (CircuitPlan, error) {
	return ev.planCircuits("PlanCircuits", c, instances, opts)
}

func (ev *Evaluator) planCircuits(name string, c *Circuit, instances int, opts CircuitOptions) (CircuitPlan, error) {
	if err := ev.ok(); err != nil {
		return CircuitPlan{}, err
	}
	if c == nil {
		return CircuitPlan{}, fmt.Errorf("gates: %s: nil circuit", name)
	}
	if instances < 1 {
		return CircuitPlan{}, fmt.Errorf("gates: %s: %d sets of inputs (at least 1)", name, instances)
	}
	// A set's counts (bootstraps, a MUX's two included, refreshes, a
	// level's batch) are each below 2 (gates + wires) + 1, so the plan's
	// products of them cannot overflow below this.
	if per := 2*(len(c.gates)+c.nwires) + 1; instances > math.MaxInt/per {
		return CircuitPlan{}, fmt.Errorf("gates: %s: %d sets of inputs overflow the plan's counts (at most %d for this circuit)", name, instances, math.MaxInt/per)
	}
	switch opts.XOR {
	case XORBootstrapped:
		cp := CircuitPlan{XOR: XORBootstrapped, Instances: instances, Levels: len(c.levels),
			Bootstraps: instances * c.bootstraps, Log2Failure: ev.figures().gateFailure(c.noise)}
		for _, lv := range c.levels {
			cp.MaxBatch = max(cp.MaxBatch, instances*len(lv.Bootstrapped))
		}
		return cp, nil
	case XORLinear:
		p, err := ev.linearPlan(c, opts, instances)
		if err != nil {
			return CircuitPlan{}, err
		}
		// The sums the plan bootstraps, not the bound on them: a circuit
		// whose sums stay short fails no more often for a larger bound.
		failure := ev.figures().gateFailure(p.noise)
		if p.largestSum >= 2 {
			failure = max(failure, ev.figures().xorFailure(p.largestSum))
		}
		return CircuitPlan{XOR: XORLinear, MaxXORTerms: p.terms, Instances: instances, Levels: len(p.levels),
			Bootstraps: instances * p.bootstraps, Refreshes: instances * p.refreshes, MaxBatch: instances * p.maxBatch,
			Majorities: instances * p.majorities,
			LargestSum: p.largestSum, Log2Failure: failure}, nil
	}
	return CircuitPlan{}, fmt.Errorf("gates: %s: unknown %v", name, opts.XOR)
}

// linearPlan returns c's linear plan for instances sets of inputs
// evaluated together: a level of k operations is an engine batch of
// instances·k, so the engine's tiers are divided among the instances.
//
// Full adders' carries are planned as MAJ gates only where a MAJ's failure
// figure (Log2MajorityFailure(0): fuseMajorities leaves carries of MUX
// outputs alone) is within 2^DefaultXORFailureLog2 or within that of the
// sums the bound allows, so that fusing cannot take a plan's estimate past
// both: every shipped set at every grouping fuses at its default bound
// (the noisiest, CuFHE80 grouped by 3: 2^−82 for a MAJ).
func (ev *Evaluator) linearPlan(c *Circuit, opts CircuitOptions, instances int) (*linearPlan, error) {
	w := opts.MaxXORTerms
	if w == 0 {
		w = ev.DefaultMaxXORTerms()
	}
	f := ev.figures()
	fuse := f.maj[0] <= DefaultXORFailureLog2 || w >= 2 && f.maj[0] <= f.xorFailure(w)
	return c.linearPlanWith(w, instanceTiers(bootstrap.BatchTiers(ev.eng), instances), fuse)
}

// instanceTiers returns the batch tiers of one instance of m evaluated
// together: each tier t holds ⌊t/m⌋ operations of every instance. Tiers
// below m vanish; with none left, every operation runs as early as it can,
// which is what batches beyond the engine's last tier do anyway.
func instanceTiers(tiers []int, m int) []int {
	if m <= 1 {
		return tiers
	}
	var out []int
	for _, t := range tiers {
		if v := t / m; v >= 1 && (len(out) == 0 || v > out[len(out)-1]) {
			out = append(out, v)
		}
	}
	return out
}

// EvalCircuit is EvalCircuitWith with the default options (XORLinear) and
// progress.
func (ev *Evaluator) EvalCircuit(ctx context.Context, c *Circuit, inputs [][]*tfhe.TLWE, progress func(LevelStats)) ([][]*tfhe.TLWE, error) {
	return ev.EvalCircuitWith(ctx, c, inputs, CircuitOptions{Progress: progress})
}

// EvalCircuitWith evaluates c on encrypted inputs, one slice of samples per
// input value (bit j of value i in inputs[i][j], in the circuit's wire order;
// see EncryptBits and the encoding helpers). Each level's bootstraps go to
// the engine as one batch; free gates (and, under XORLinear, XOR gates)
// cost none. opts.Progress, if not nil, is called after each level; ctx is
// checked between levels. PlanCircuit says what it will do.
//
// Samples that no later level reads are recycled, so memory follows the
// circuit's width rather than its size, but for 16 to 32 bytes a bootstrap
// in a circuit with MUX gates (the fingerprints that keep its blind
// rotations apart across levels, Batch). The inputs are not modified; the
// outputs are new samples of phase ±1/8: gate outputs, or, for an output
// wire that is an input, a constant or a copy (Circuit.Bootstraps), copies
// of those.
//
// A circuit's levels are often narrower than the batch a GPU needs to run
// at full speed (AES-128's average 114 bootstraps a level, against some
// 16,000 gates at a GPU's best rate); EvalCircuits evaluates many sets of
// inputs in the same levels.
func (ev *Evaluator) EvalCircuitWith(ctx context.Context, c *Circuit, inputs [][]*tfhe.TLWE, opts CircuitOptions) ([][]*tfhe.TLWE, error) {
	out, err := ev.evalCircuits(ctx, "EvalCircuit", c, [][][]*tfhe.TLWE{inputs}, opts)
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

// EvalCircuits evaluates c on several independent sets of encrypted inputs
// at once: inputs[k] is the k-th set, shaped as EvalCircuitWith's inputs,
// and the k-th result is what EvalCircuitWith would return for it, bit for
// bit on a deterministic engine. Each level's bootstraps of every set go
// to the engine as one batch, so m sets take about the levels of one and
// m times its bootstraps: on a GPU, whose time per call hardly grows until
// its SMs are full, many sets cost little more than one (examples/circuit's
// -instances; BENCHMARKS.md). Progress reports sum the sets; PlanCircuits
// says what it will do. Sets may share samples (the same input in several
// sets); none is modified. No sets give no outputs, and an error only for
// a nil evaluator or circuit, invalid options or a done ctx.
func (ev *Evaluator) EvalCircuits(ctx context.Context, c *Circuit, inputs [][][]*tfhe.TLWE, opts CircuitOptions) ([][][]*tfhe.TLWE, error) {
	return ev.evalCircuits(ctx, "EvalCircuits", c, inputs, opts)
}

func (ev *Evaluator) evalCircuits(ctx context.Context, name string, c *Circuit, inputs [][][]*tfhe.TLWE, opts CircuitOptions) ([][][]*tfhe.TLWE, error) {
	if err := ev.ok(); err != nil {
		return nil, err
	}
	if c == nil {
		return nil, fmt.Errorf("gates: %s: nil circuit", name)
	}
	for k, in := range inputs {
		// Name the set only where there can be several; EvalCircuitWith's
		// count and width errors keep their words ("gates: the circuit
		// takes …").
		prefix, sprefix := "gates: ", "gates: "+name+": "
		if name == "EvalCircuits" {
			sprefix += fmt.Sprintf("set %d: ", k+1)
			prefix = sprefix
		}
		if err := checkValues(prefix, c.inputs, len(in), func(i int) int { return len(in[i]) }); err != nil {
			return nil, err
		}
		for i, v := range in {
			for j, x := range v {
				if err := checkSample(x, ev.n); err != nil {
					return nil, fmt.Errorf("%sinput %d bit %d %v", sprefix, i+1, j, err)
				}
			}
		}
	}
	if len(inputs) == 0 {
		// The options' errors, with no sets too (as linearPlan and the
		// switch below give them).
		if opts.XOR != XORLinear && opts.XOR != XORBootstrapped {
			return nil, fmt.Errorf("gates: %s: unknown %v", name, opts.XOR)
		}
		if opts.XOR == XORLinear && opts.MaxXORTerms != 0 {
			if err := checkXORTerms(opts.MaxXORTerms); err != nil {
				return nil, err
			}
		}
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("gates: %s: %w", name, err)
		}
		return [][][]*tfhe.TLWE{}, nil
	}
	// A circuit of free gates alone makes no engine call: ask the engine's
	// state (closed, failed) as every gate does (Evaluator.batch).
	if err := ev.eng.Bootstrap(nil, nil, mu8); err != nil {
		return nil, fmt.Errorf("gates: %s: %w", name, err)
	}
	switch opts.XOR {
	case XORBootstrapped:
		return ev.evalBootstrapped(ctx, name, c, inputs, opts.Progress)
	case XORLinear:
		p, err := ev.linearPlan(c, opts, len(inputs))
		if err != nil {
			return nil, err
		}
		return ev.evalLinear(ctx, name, c, p, inputs, opts.Progress)
	}
	return nil, fmt.Errorf("gates: %s: unknown %v", name, opts.XOR)
}

// samplePool recycles samples of dimension n.
type samplePool struct {
	n    int
	free []*tfhe.TLWE
}

func (p *samplePool) get() *tfhe.TLWE {
	if k := len(p.free); k > 0 {
		x := p.free[k-1]
		p.free = p.free[:k-1]
		return x
	}
	return tfhe.NewTLWE(p.n)
}

func (p *samplePool) put(x *tfhe.TLWE) { p.free = append(p.free, x) }

// levelBatch is one level's engine batch being formed: its gate calls,
// its refreshes (bootstrapped in place) with their sums, and the negated
// inputs materialised for its gates.
type levelBatch struct {
	calls  []Call         // MUX gates
	extra  []*tfhe.TLWE   // refreshes
	sums   [][]int32      // the sum of each of extra
	srcs   [][]*tfhe.TLWE // the samples of the instance of each of extra
	direct []*tfhe.TLWE   // two-input and MAJ gates, their linear combinations formed
	all    []*tfhe.TLWE   // extra then direct, the in-place bootstraps
	// The set (setSalt) of each of calls, extra and direct, and all of
	// them in batch's order (calls, then all).
	callSalt, extraSalt, directSalt, salt []uint64
	negs                                  []*tfhe.TLWE
	bs                                    int // bootstraps
	ready                                 int // extra[:ready] have their inputs summed
	gates                                 int // gates (MUX included)
}

func (b *levelBatch) reset() {
	b.calls, b.extra, b.sums, b.srcs, b.direct, b.negs = b.calls[:0], b.extra[:0], b.sums[:0], b.srcs[:0], b.direct[:0], b.negs[:0]
	b.callSalt, b.extraSalt, b.directSalt = b.callSalt[:0], b.extraSalt[:0], b.directSalt[:0]
	b.bs, b.ready, b.gates = 0, 0, 0
}

// evalLinear runs a linear plan (XORLinear) on every set of inputs, each
// level's operations of all sets in one engine batch. While the engine
// runs a level, the host prepares the operations of the next level that
// read no sample of the running one (with levels filled to the engine's
// tiers, most of them): their refresh sums and negated inputs. On an H200
// the host's part of an AES-128 evaluation was about 50 ms of 1.03 s with
// the GPU idle, level after level.
func (ev *Evaluator) evalLinear(ctx context.Context, name string, c *Circuit, p *linearPlan, inputs [][][]*tfhe.TLWE, progress func(LevelStats)) ([][][]*tfhe.TLWE, error) {
	m, ps := len(inputs), p.samples
	// Set k's samples are all[k*ps : (k+1)*ps], numbered as the plan's.
	all := make([]*tfhe.TLWE, m*ps)
	sets := make([][]*tfhe.TLWE, m)
	for k, in := range inputs {
		sets[k] = all[k*ps : (k+1)*ps : (k+1)*ps]
		i := 0
		for _, v := range in {
			i += copy(sets[k][i:], v)
		}
	}
	// written[id − p.inputs] is the level writing sample id, which is not
	// an input (level 0).
	written := make([]int32, ps-p.inputs)
	for lv, l := range p.levels {
		for k := range l.ops {
			written[int(l.ops[k].out)-p.inputs] = int32(lv)
		}
	}
	writtenBefore := func(id int32, lv int32) bool { return int(id) < p.inputs || written[int(id)-p.inputs] < lv }
	pool := samplePool{n: ev.n}
	seen := rotationsFor(c)
	falseSample := tfhe.NewTLWE(ev.n)
	falseSample.SetTrivial(nmu8)
	// add appends o of every set to b, taking the output samples from the
	// pool; a gate's negated inputs are materialised into samples of b.negs.
	add := func(b *levelBatch, o *linOp) {
		for k, samples := range sets {
			out := pool.get()
			samples[o.out] = out
			salt := setSalt(k)
			if o.refresh() {
				b.extra = append(b.extra, out)
				b.extraSalt = append(b.extraSalt, salt)
				b.sums = append(b.sums, o.sum)
				b.srcs = append(b.srcs, samples)
				b.bs++
				continue
			}
			b.gates++
			b.bs += o.op.Bootstraps()
			in := func(r cleanRef) *tfhe.TLWE {
				if r.id < 0 {
					return falseSample
				}
				return samples[r.id]
			}
			if o.op != OpMUX {
				// The gate's bootstrap input, formed here and bootstrapped in
				// place like a refresh (Batch's linear combination; a negated
				// input negates its coefficient).
				var x [3]*tfhe.TLWE
				var neg [3]bool
				for k := range o.op.Arity() {
					x[k], neg[k] = in(o.in[k]), o.in[k].neg
				}
				gateInput(out, o.op, x, neg)
				b.direct = append(b.direct, out)
				b.directSalt = append(b.directSalt, salt)
				continue
			}
			call := Call{Op: o.op, Out: out}
			for k := range o.op.Arity() {
				x := in(o.in[k])
				if o.in[k].neg {
					y := pool.get()
					tfhe.NegTLWETo(y, x)
					b.negs = append(b.negs, y)
					x = y
				}
				call.in(k, x)
			}
			b.calls = append(b.calls, call)
			b.callSalt = append(b.callSalt, salt)
		}
	}
	// early reports whether o reads only samples written before level lv − 1.
	early := func(o *linOp, lv int32) bool {
		ok := true
		if o.refresh() {
			for _, id := range o.sum {
				ok = ok && writtenBefore(id, lv-1)
			}
			return ok
		}
		for k := range o.op.Arity() {
			if id := o.in[k].id; id >= 0 {
				ok = ok && writtenBefore(id, lv-1)
			}
		}
		return ok
	}
	// finish sums the refresh inputs of b not yet summed.
	finish := func(b *levelBatch) {
		refreshInputs(b.extra[b.ready:], b.srcs[b.ready:], b.sums[b.ready:])
		b.ready = len(b.extra)
	}
	var cur, next levelBatch
	var late []int // indices of next level's operations that wait for this one
	last := time.Now()
	for l := range p.levels {
		lv := &p.levels[l]
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("gates: %s stopped before level %d of %d: %w", name, l, len(p.levels), err)
		}
		// The operations of level l not prepared during level l − 1.
		if l == 0 {
			for k := range lv.ops {
				add(&cur, &lv.ops[k])
			}
		} else {
			for _, k := range late {
				add(&cur, &lv.ops[k])
			}
		}
		finish(&cur)
		var errc chan error
		if len(lv.ops) > 0 {
			errc = make(chan error, 1)
			cur.all = append(append(cur.all[:0], cur.extra...), cur.direct...)
			cur.salt = append(append(append(cur.salt[:0], cur.callSalt...), cur.extraSalt...), cur.directSalt...)
			go func(b *levelBatch) {
				// An engine that panics (a third-party Engine, say) must
				// panic in the caller's goroutine, where it can be
				// recovered, not end the program from this one.
				defer func() {
					if p := recover(); p != nil {
						errc <- enginePanic{p}
					}
				}()
				errc <- ev.batch(b.calls, b.all, seen, b.salt)
			}(&cur)
		}
		// Meanwhile, what of level l + 1 reads only earlier levels.
		next.reset()
		late = late[:0]
		if l+1 < len(p.levels) {
			nl := &p.levels[l+1]
			for k := range nl.ops {
				if early(&nl.ops[k], int32(l+1)) {
					add(&next, &nl.ops[k])
				} else {
					late = append(late, k)
				}
			}
			finish(&next)
		}
		if errc != nil {
			err := <-errc
			if p, ok := err.(enginePanic); ok {
				panic(p.value)
			}
			if err != nil {
				return nil, fmt.Errorf("gates: %s level %d: %w", name, l, err)
			}
		}
		for _, y := range cur.negs {
			pool.put(y)
		}
		for _, samples := range sets {
			for _, id := range lv.release { // samples the plan wrote
				pool.put(samples[id])
				samples[id] = nil
			}
		}
		if progress != nil {
			now := time.Now()
			progress(LevelStats{Level: l, Levels: len(p.levels), Gates: cur.gates, Refreshes: len(cur.extra),
				Free: m * lv.free, Bootstraps: cur.bs, Elapsed: now.Sub(last)})
			last = now
		}
		cur, next = next, cur
	}
	outs := make([][][]*tfhe.TLWE, m)
	for k, samples := range sets {
		o := make([]*tfhe.TLWE, p.numOutputs())
		for j := range o {
			r := p.output(j)
			x := falseSample
			if r.id >= 0 {
				x = samples[r.id]
			}
			o[j] = tfhe.NewTLWE(ev.n)
			if r.neg {
				tfhe.NegTLWETo(o[j], x)
			} else {
				o[j].CopyFrom(x)
			}
		}
		outs[k] = splitOutputs(o, c.outputs)
	}
	return outs, nil
}

// refreshInputs sets dst[i] to the input of the refresh of sums[i] over the
// samples srcs[i], on several goroutines when there are many: an AES-128
// level has up to 300 sums of up to 9 samples (the default grouped by 2).
func refreshInputs(dst []*tfhe.TLWE, srcs [][]*tfhe.TLWE, sums [][]int32) {
	const perWorker = 8
	workers := min(runtime.GOMAXPROCS(0), len(dst)/perWorker)
	if workers <= 1 {
		for i, d := range dst {
			refreshInput(d, srcs[i], sums[i])
		}
		return
	}
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := w*len(dst)/workers, (w+1)*len(dst)/workers
		wg.Go(func() {
			for i := lo; i < hi; i++ {
				refreshInput(dst[i], srcs[i], sums[i])
			}
		})
	}
	wg.Wait()
}

// refreshInput sets dst to the input of a refresh: Σ_{i∈sum} 2·c_i plus
// (|sum| − 1)/4 on the body, of phase 1/4 when the sum's bit is 1 and −1/4
// when it is 0 (circuit_linear.go).
//
// The terms are added two at a time, so that dst is read and written once
// per pair: an AES-128 evaluation sums about 12,900 refreshes of up to 9
// samples of 631 words on the host. A refresh of one term is of a lone MUX
// output that a sum's limit turns into a gate output.
func refreshInput(dst *tfhe.TLWE, samples []*tfhe.TLWE, sum []int32) {
	d := dst.Value
	if len(sum) == 1 {
		a := samples[sum[0]].Value[:len(d)]
		for j := range d {
			d[j] = 2 * a[j]
		}
		return
	}
	a, b := samples[sum[0]].Value[:len(d)], samples[sum[1]].Value[:len(d)]
	for j := range d {
		d[j] = 2 * (a[j] + b[j])
	}
	k := 2
	for ; k+1 < len(sum); k += 2 {
		a, b = samples[sum[k]].Value[:len(d)], samples[sum[k+1]].Value[:len(d)]
		for j := range d {
			d[j] += 2 * (a[j] + b[j])
		}
	}
	if k < len(sum) {
		a = samples[sum[k]].Value[:len(d)]
		for j := range d {
			d[j] += 2 * a[j]
		}
	}
	d[len(d)-1] += mu4 * torus.Torus32(len(sum)-1)
}

// evalBootstrapped runs Circuit.Levels (XORBootstrapped) on every set of
// inputs, each level's gates of all sets in one engine batch.
func (ev *Evaluator) evalBootstrapped(ctx context.Context, name string, c *Circuit, inputs [][][]*tfhe.TLWE, progress func(LevelStats)) ([][][]*tfhe.TLWE, error) {
	m, nw, nin := len(inputs), c.nwires, c.numInputBits()
	// Set k's wires are wires[k*nw : (k+1)*nw]. Those past the inputs hold
	// samples allocated here, which are recycled once released.
	wires := make([]*tfhe.TLWE, m*nw)
	for k, in := range inputs {
		w := k * nw
		for _, v := range in {
			w += copy(wires[w:], v)
		}
	}
	release := c.releaseSchedule()

	pool := samplePool{n: ev.n}
	seen := rotationsFor(c)
	var calls []Call
	var salts []uint64 // each call's set (setSalt)
	alloc := func(w int) *tfhe.TLWE {
		x := pool.get()
		wires[w] = x
		return x
	}
	for l, lv := range c.levels {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("gates: %s stopped before level %d of %d: %w", name, l, len(c.levels), err)
		}
		start := time.Now()
		calls, salts = calls[:0], salts[:0]
		bs := 0
		for base := 0; base < len(wires); base += nw {
			salt := setSalt(base / nw)
			get := func(w int) *tfhe.TLWE {
				if w < 0 {
					return nil
				}
				return wires[base+w]
			}
			for _, g := range lv.Bootstrapped {
				calls = append(calls, Call{Op: g.Op, A: get(g.In[0]), B: get(g.In[1]), C: get(g.In[2]), Out: alloc(base + g.Out)})
				salts = append(salts, salt)
				bs += g.Op.Bootstraps()
			}
		}
		// Valid by construction (inputs checked, outputs fresh): batch
		// without Batch's checks and its map of outputs.
		if err := ev.batch(calls, nil, seen, salts); err != nil {
			return nil, fmt.Errorf("gates: %s level %d: %w", name, l, err)
		}
		for base := 0; base < len(wires); base += nw {
			for _, g := range lv.Free {
				switch d := alloc(base + g.Out); g.Op {
				case OpZero, OpOne:
					d.SetTrivial(tfhe.EncodeBool(g.Op == OpOne))
				case OpCopy:
					d.CopyFrom(wires[base+g.In[0]])
				case OpNOT:
					tfhe.NegTLWETo(d, wires[base+g.In[0]])
				}
			}
			for _, w := range release[l] { // wires past the inputs
				pool.put(wires[base+w])
				wires[base+w] = nil
			}
		}
		if progress != nil {
			progress(LevelStats{Level: l, Levels: len(c.levels), Gates: m * len(lv.Bootstrapped),
				Free: m * len(lv.Free), Bootstraps: bs, Elapsed: time.Since(start)})
		}
	}

	// Output wires are never released; those that are input wires are
	// copied, so that no caller memory is handed back.
	outs := make([][][]*tfhe.TLWE, m)
	for k := range m {
		set := wires[k*nw : (k+1)*nw]
		for w := nw - c.numOutputBits(); w < nin; w++ {
			set[w] = set[w].Copy()
		}
		outs[k] = splitOutputs(set, c.outputs)
	}
	return outs, nil
}

// rotationsFor returns the set that keeps the blind rotations of an
// evaluation of c apart across its levels (Evaluator.batch), or nil where
// each level's batch keeping its own apart suffices: where c has no MUX.
// Across levels only a MUX's half can bootstrap what another gate does
// (MUX(s, b, c) a level after AND(s, b)): the schedule makes every other
// bootstrap's input differ from the others' and their negations (copies,
// NOTs), and gates of inputs equal apart from that (copies given for two
// input wires) meet in one level. A table of every bootstrap of an
// evaluation cost about 0.9% of AES-128's time with 32 sets on an H100
// (session 41 run F).
func rotationsFor(c *Circuit) *rotationSet {
	if c.Count(OpMUX) == 0 {
		return nil
	}
	return new(rotationSet)
}

func (c *Circuit) numInputBits() int {
	n := 0
	for _, w := range c.inputs {
		n += w
	}
	return n
}

func (c *Circuit) numOutputBits() int {
	n := 0
	for _, w := range c.outputs {
		n += w
	}
	return n
}

// releaseSchedule returns, for each level, the wires past the inputs whose
// sample is no longer needed once the level is done: wires read for the
// last time in that level (or never read, released when written). Output
// wires are never released, nor input wires, which hold the caller's
// samples: its memory is in the gates, not in the input bits a header
// declares (a table of those took 836 MB for 2^24).
func (c *Circuit) releaseSchedule() [][]int {
	nin := c.numInputBits()
	// last[w − nin]: the level of wire w's last read, or of its write.
	last := make([]int32, c.nwires-nin)
	read := func(w, l int) {
		// One comparison for both ends: w − nin wraps for an input.
		if i := uint(w - nin); i < uint(len(last)) {
			last[i] = max(last[i], int32(l))
		}
	}
	for l, lv := range c.levels {
		for _, part := range [2][]Gate{lv.Bootstrapped, lv.Free} {
			for _, g := range part {
				last[g.Out-nin] = max(last[g.Out-nin], int32(l)) // not an input
				for k := range g.Op.Arity() {
					read(g.In[k], l)
				}
			}
		}
	}
	for w := max(c.nwires-c.numOutputBits(), nin); w < c.nwires; w++ {
		last[w-nin] = math.MaxInt32
	}
	release := make([][]int, len(c.levels))
	for i, l := range last {
		if l != math.MaxInt32 {
			release[l] = append(release[l], nin+i)
		}
	}
	return release
}

// enginePanic carries a panic of the engine from the goroutine that ran a
// level to the caller's.
type enginePanic struct{ value any }

func (p enginePanic) Error() string { return fmt.Sprint("gates: engine panic: ", p.value) }
