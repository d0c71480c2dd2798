package gates

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goldfhe/goldfhe/tfhe"
	"github.com/goldfhe/goldfhe/torus"
	"github.com/stretchr/testify/require"
)

// checkLinearPlan checks c's linear plan for sums of at most terms terms
// (levels filled to tiers when tiers is not nil): its structure
// (checkPlanShape), the same depth, bootstraps and free gates as without
// tiers, and its plaintext evaluation against Circuit.Eval on rounds
// random inputs (and all-zero and all-one inputs).
func checkLinearPlan(t *testing.T, c *Circuit, terms int, tiers []int, rounds int, rng *rand.Rand) {
	t.Helper()
	p, err := c.linearPlan(terms, tiers)
	require.NoError(t, err)
	if tiers != nil {
		asap, _ := c.linearPlan(terms, nil)
		if len(p.levels) != len(asap.levels) || p.bootstraps != asap.bootstraps || p.samples != asap.samples {
			t.Fatalf("terms %d, tiers %v: %d levels, %d bootstraps; without tiers %d and %d", terms, tiers,
				len(p.levels), p.bootstraps, len(asap.levels), asap.bootstraps)
		}
		// The free gates are counted again after fillTiers: all of them,
		// each at a level that exists.
		free := func(p *linearPlan) (n int) {
			for _, l := range p.levels {
				n += l.free
			}
			return n
		}
		if free(p) != free(asap) {
			t.Fatalf("terms %d, tiers %v: %d free gates; without tiers %d", terms, tiers, free(p), free(asap))
		}
	}
	checkPlanShape(t, c, p)
	for round := range rounds + 2 {
		in := make([][]bool, len(c.inputs))
		for i, w := range c.inputs {
			in[i] = make([]bool, w)
			for j := range in[i] {
				switch round {
				case 0:
				case 1:
					in[i][j] = true
				default:
					in[i][j] = rng.IntN(2) == 1
				}
			}
		}
		want, err := c.Eval(in...)
		require.NoError(t, err)
		if got := p.evalPlain(c, in); !slices.EqualFunc(got, want, slices.Equal) {
			t.Fatalf("terms %d: the linear plan computes %v, Eval %v on %v", terms, got, want, in)
		}
	}
}

// checkPlanShape checks the structure of c's linear plan p: every sample
// past the inputs written once, read only after the level that writes it
// and never after its release, no input released, sums of 2 … terms
// distinct samples, no gate bootstrapped twice, counts. Its tables are of
// the samples the plan writes, so that it checks a plan of millions of
// input bits in the plan's memory.
func checkPlanShape(t *testing.T, c *Circuit, p *linearPlan) {
	t.Helper()
	terms := p.terms
	if p.inputs != c.numInputBits() || p.numOutputs() != c.numOutputBits() || p.samples < p.inputs {
		t.Fatalf("terms %d: %d inputs, %d outputs, %d samples; the circuit has %d input and %d output bits",
			terms, p.inputs, p.numOutputs(), p.samples, c.numInputBits(), c.numOutputBits())
	}
	// Of sample p.inputs + i: the level that writes it, and that releases it.
	written := make([]int, p.samples-p.inputs)
	released := make([]int, p.samples-p.inputs)
	for i := range written {
		written[i], released[i] = -1, -1
	}
	for lv, l := range p.levels {
		for _, id := range l.release {
			if int(id) < p.inputs || int(id) >= p.samples {
				t.Fatalf("terms %d: level %d releases sample %d, an input or out of range", terms, lv, id)
			}
			if r := &released[int(id)-p.inputs]; *r >= 0 {
				t.Fatalf("terms %d: sample %d released at levels %d and %d", terms, id, *r, lv)
			} else {
				*r = lv
			}
		}
	}
	read := func(lv int, id int32) {
		if id < 0 {
			return
		}
		if int(id) >= p.samples {
			t.Fatalf("terms %d: level %d reads sample %d of %d", terms, lv, id, p.samples)
		}
		if int(id) < p.inputs {
			return // written at level 0, never released
		}
		if w := written[int(id)-p.inputs]; w < 0 || w >= lv {
			t.Fatalf("terms %d: level %d reads sample %d written at level %d", terms, lv, id, w)
		}
		if r := released[int(id)-p.inputs]; r >= 0 && r < lv {
			t.Fatalf("terms %d: level %d reads sample %d released after level %d", terms, lv, id, r)
		}
	}
	bs, refreshes := 0, 0
	gateOut := map[engineInput]int32{}
	if len(p.levels) > 0 && len(p.levels[0].ops) > 0 {
		t.Fatalf("terms %d: level 0 bootstraps", terms)
	}
	// A MUX output counts as two terms of a sum (its error variance is up
	// to twice a gate output's), and may be refreshed alone for that.
	fromMux := map[int32]bool{}
	for _, l := range p.levels {
		for _, o := range l.ops {
			if !o.refresh() && o.op == OpMUX {
				fromMux[o.out] = true
			}
		}
	}
	for lv, l := range p.levels {
		for _, o := range l.ops {
			if o.refresh() {
				refreshes++
				bs++
				weight := len(o.sum)
				for _, id := range o.sum {
					if fromMux[id] {
						weight++
					}
				}
				if weight < 2 || weight > terms || !slices.IsSorted(o.sum) || len(slices.Compact(slices.Clone(o.sum))) != len(o.sum) {
					t.Fatalf("terms %d: refresh of %v (weight %d)", terms, o.sum, weight)
				}
				for _, id := range o.sum {
					read(lv, id)
				}
			} else {
				if !o.op.Valid() || o.op.Free() || o.op == OpXOR || o.op == OpXNOR {
					t.Fatalf("terms %d: level %d bootstraps a %v gate", terms, lv, o.op)
				}
				bs += o.op.Bootstraps()
				key := o.engineInput()
				if id, ok := gateOut[key]; ok {
					t.Fatalf("terms %d: level %d: %v computes sample %d again", terms, lv, o.op, id)
				}
				if nk, ok := key.negated(); ok {
					if id, ok := gateOut[nk]; ok {
						t.Fatalf("terms %d: level %d: %v bootstraps the negation of sample %d's input", terms, lv, o.op, id)
					}
				}
				gateOut[key] = o.out
				for k := range o.op.Arity() {
					read(lv, o.in[k].id)
					for j := range k {
						// A MUX's data inputs are in different bootstraps
						// (its halves): one sum and its complement there is
						// a MUX whose XNOR would pass the limit.
						if id := o.in[k].id; id >= 0 && id == o.in[j].id && !(o.op == OpMUX && j == 1) {
							t.Fatalf("terms %d: level %d: %v reads sample %d twice", terms, lv, o.op, id)
						}
					}
				}
			}
			if int(o.out) < p.inputs || int(o.out) >= p.samples || written[int(o.out)-p.inputs] >= 0 {
				t.Fatalf("terms %d: sample %d written twice, an input or out of range", terms, o.out)
			}
			written[int(o.out)-p.inputs] = lv
		}
	}
	for i, w := range written {
		if w < 0 {
			t.Fatalf("terms %d: sample %d never written", terms, p.inputs+i)
		}
	}
	for j := range p.numOutputs() {
		r := p.output(j)
		if int(r.id) >= p.samples {
			t.Fatalf("terms %d: output bit %d is sample %d of %d", terms, j, r.id, p.samples)
		}
		if int(r.id) >= p.inputs && released[int(r.id)-p.inputs] >= 0 {
			t.Fatalf("terms %d: output sample %d released", terms, r.id)
		}
	}
	if bs != p.bootstraps || refreshes != p.refreshes {
		t.Fatalf("terms %d: %d bootstraps and %d refreshes counted, plan says %d and %d", terms, bs, refreshes, p.bootstraps, p.refreshes)
	}
	if p.bootstraps-p.refreshes > c.bootstraps {
		t.Fatalf("terms %d: %d gate bootstraps, more than the circuit's %d", terms, p.bootstraps-p.refreshes, c.bootstraps)
	}
}

// TestLinearPlanShipped checks the linear plans of the shipped circuits.
func TestLinearPlanShipped(t *testing.T) {
	files, err := filepath.Glob("circuits/*.txt")
	if err != nil || len(files) < 10 {
		t.Fatalf("shipped circuits: %v %v", files, err)
	}
	files = append(files, "circuits/int_gt64_size.bristol")
	rng := rand.New(rand.NewPCG(3, 4))
	for _, name := range files {
		c, err := ParseFile(name)
		require.NoError(t, err)
		for _, terms := range []int{2, 3, 9, 16} {
			if testing.Short() && terms != 9 && c.NumGates() > 10000 {
				continue
			}
			checkLinearPlan(t, c, terms, nil, 3, rng)
			checkLinearPlan(t, c, terms, []int{16, 66, 132, 264}, 1, rng)
		}
	}
}

// tierCost is a plan's time in units of a full tier's call under the
// step model fillTiers assumes: each level costs its tier's index + 1.
func tierCost(p *linearPlan, tiers []int) int {
	cost := 0
	for _, l := range p.levels {
		n := len(l.ops)
		if n == 0 {
			continue
		}
		i := 0
		for i < len(tiers) && n > tiers[i] {
			i++
		}
		if i == len(tiers) {
			i = len(tiers) - 1 + (n+tiers[len(tiers)-1]-1)/tiers[len(tiers)-1]
		}
		cost += i + 1
	}
	return cost
}

// TestFillTiers: levels filled to the tiers of a GPU cost less under the
// step model than the earliest-level schedule, at the same depth, for the
// shipped circuits with many levels; without tiers the plan is the
// earliest-level one.
func TestFillTiers(t *testing.T) {
	tiers := []int{16, 66, 132, 264}
	for _, name := range []string{"circuits/aes_128.txt", "circuits/mult64.txt", "circuits/adder64.txt"} {
		c, err := ParseFile(name)
		require.NoError(t, err)
		asap, _ := c.linearPlan(9, nil)
		filled, _ := c.linearPlan(9, tiers)
		a, f := tierCost(asap, tiers), tierCost(filled, tiers)
		t.Logf("%s: step cost %d → %d over %d levels", name, a, f, len(filled.levels))
		if f > a || (name != "circuits/adder64.txt" && f >= a) {
			t.Errorf("%s: filling the tiers costs %d, the earliest-level schedule %d", name, f, a)
		}
	}
	c, _ := ParseFile("circuits/adder64.txt")
	for _, bad := range [][]int{{0}, {16, 16}, {66, 16}, {-1, 5}} {
		if _, err := c.linearPlan(9, bad); err == nil {
			t.Errorf("tiers %v accepted", bad)
		}
	}
}

// randomOps are randomCircuit's gates, XOR the most common; MAJ, added
// after TestPlanDigests pinned random circuits of these, is left to
// randomCircuitOf's callers.
var randomOps = []Op{OpXOR, OpXOR, OpXOR, OpXNOR, OpAND, OpNAND, OpOR, OpNOR, OpANDNY, OpANDYN, OpORNY, OpORYN,
	OpMUX, OpNOT, OpCopy, OpZero, OpOne}

// randomCircuit returns a random valid circuit of every gate kind but MAJ
// (randomCircuitOf of randomOps).
func randomCircuit(rng *rand.Rand, nin, ngates int) *Circuit {
	return randomCircuitOf(rng, nin, ngates, randomOps)
}

// randomCircuitOf returns a random valid circuit of the gates ops, with
// gates that read a wire twice, constants, and outputs that are inputs,
// constants or copies.
func randomCircuitOf(rng *rand.Rand, nin, ngates int, ops []Op) *Circuit {
	gs := make([]Gate, 0, ngates)
	w := nin
	for range ngates {
		g := Gate{Op: ops[rng.IntN(len(ops))], Out: w}
		for k := range g.Op.Arity() {
			g.In[k] = rng.IntN(w)
			if k > 0 && rng.IntN(8) == 0 {
				g.In[k] = g.In[0]
			}
		}
		gs = append(gs, g)
		w++
	}
	// Outputs: the last nout wires, copies of random earlier wires.
	nout := 1 + rng.IntN(6)
	for range nout {
		gs = append(gs, Gate{Op: OpCopy, In: [3]int{rng.IntN(w)}, Out: len(gs) + nin})
	}
	c, err := NewCircuit(BristolFashion, nin+len(gs), []int{nin}, []int{nout}, gs)
	if err != nil {
		panic(err)
	}
	return c
}

// TestLinearPlanRandom checks the linear plans of random circuits of every
// gate kind.
func TestLinearPlanRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	n := 300
	if testing.Short() {
		n = 60
	}
	ops := append(slices.Clone(randomOps), OpMAJ, OpMAJ)
	for range n {
		c := randomCircuitOf(rng, 1+rng.IntN(6), 1+rng.IntN(80), ops)
		checkSchedule(t, c)
		for terms := 2; terms <= 5; terms++ {
			checkLinearPlan(t, c, terms, nil, 4, rng)
			checkLinearPlan(t, c, terms, []int{1 + rng.IntN(3), 4 + rng.IntN(4)}, 2, rng)
		}
	}
}

func TestLinearPlanErrors(t *testing.T) {
	c := randomCircuit(rand.New(rand.NewPCG(1, 1)), 3, 10)
	for _, terms := range []int{-1, 0, 1} {
		if _, err := c.linearPlan(terms, nil); err == nil {
			t.Errorf("MaxXORTerms %d accepted", terms)
		}
	}
	// The plan is built once per term count and shared.
	p1, _ := c.linearPlan(4, nil)
	p2, _ := c.linearPlan(4, nil)
	p3, _ := c.linearPlan(4, []int{2, 5})
	if p1 != p2 || p3 == p1 {
		t.Error("the plan is rebuilt, or shared between tiers")
	}
}

func TestSymDiff(t *testing.T) {
	for _, tc := range []struct{ a, b, want []int32 }{
		{nil, nil, []int32{}},
		{[]int32{1, 3}, nil, []int32{1, 3}},
		{[]int32{1, 3, 5}, []int32{3, 4}, []int32{1, 4, 5}},
		{[]int32{2}, []int32{2}, []int32{}},
		{[]int32{0, 9}, []int32{1, 2, 9, 10}, []int32{0, 1, 2, 10}},
	} {
		if got := symDiff(tc.a, tc.b); !slices.Equal(got, tc.want) {
			t.Errorf("symDiff(%v, %v) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

// TestRefreshInput checks the pairwise sum against Σ 2·c_i + (|S| − 1)/4
// word by word, for 2 to 10 terms.
func TestRefreshInput(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	samples := make([]*tfhe.TLWE, 12)
	for i := range samples {
		samples[i] = tfhe.NewTLWE(9)
		for j := range samples[i].Value {
			samples[i].Value[j] = torus.Torus32(rng.Uint32())
		}
	}
	for n := 2; n <= 10; n++ {
		sum := make([]int32, n)
		for i := range sum {
			sum[i] = int32(rng.IntN(len(samples)))
		}
		got := tfhe.NewTLWE(9)
		for j := range got.Value {
			got.Value[j] = 0xdead // overwritten
		}
		refreshInput(got, samples, sum)
		for j := range got.Value {
			var want torus.Torus32
			for _, id := range sum {
				want += 2 * samples[id].Value[j]
			}
			if j == len(got.Value)-1 {
				want += torus.Encode(1, 4) * torus.Torus32(n-1)
			}
			if got.Value[j] != want {
				t.Fatalf("%d terms, word %d: %#x, want %#x", n, j, got.Value[j], want)
			}
		}
	}
}

func TestInstanceTiers(t *testing.T) {
	for _, tc := range []struct {
		tiers []int
		m     int
		want  []int
	}{
		{[]int{8, 66, 132, 396}, 1, []int{8, 66, 132, 396}},
		{[]int{8, 66, 132, 396}, 3, []int{2, 22, 44, 132}},
		{[]int{8, 66, 132, 396}, 100, []int{1, 3}},
		{[]int{8, 66, 132, 396}, 1000, nil},
		{[]int{2, 3, 5}, 2, []int{1, 2}},
		{nil, 4, nil},
	} {
		if got := instanceTiers(tc.tiers, tc.m); !slices.Equal(got, tc.want) {
			t.Errorf("instanceTiers(%v, %d) = %v, want %v", tc.tiers, tc.m, got, tc.want)
		}
	}
}

// tiersOnly is an engine that only reports batch tiers: for plans, which
// never bootstrap.
type tiersOnly struct{ tiers []int }

func (tiersOnly) Name() string        { return "tiers only" }
func (tiersOnly) Params() tfhe.Params { return tfhe.TFHELib128 }
func (tiersOnly) Bootstrap(_, _ []*tfhe.TLWE, _ torus.Torus32) error {
	panic("tiersOnly bootstraps nothing")
}
func (tiersOnly) BootstrapNoKeySwitch(_, _ []*tfhe.TLWE, _ torus.Torus32) error {
	panic("tiersOnly bootstraps nothing")
}
func (tiersOnly) KeySwitch(_, _ []*tfhe.TLWE) error { panic("tiersOnly switches nothing") }
func (tiersOnly) Close() error                      { return nil }
func (e tiersOnly) BatchTiers() []int               { return e.tiers }

// TestPlanCircuitsTiers: the plan for m sets is the circuit's linear plan
// for the engine's tiers divided among the sets (instanceTiers), not the
// one for the engine's own tiers; the plans of many set counts are cached
// up to maxCachedPlans.
func TestPlanCircuitsTiers(t *testing.T) {
	c, err := ParseFile(filepath.Join("circuits", "aes_128.txt"))
	require.NoError(t, err)
	tiers := []int{16, 66, 132, 264}
	ev, err := NewEvaluator(tiersOnly{tiers})
	require.NoError(t, err)
	w := ev.DefaultMaxXORTerms()
	for _, m := range []int{1, 3, 8, 40, 300} {
		got, err := ev.linearPlan(c, CircuitOptions{}, m)
		require.NoError(t, err)
		want, _ := c.linearPlan(w, instanceTiers(tiers, m))
		if got != want {
			t.Errorf("%d sets: not the plan of tiers %v", m, instanceTiers(tiers, m))
		}
		if raw, _ := c.linearPlan(w, tiers); m > 1 && got == raw {
			t.Errorf("%d sets: the plan of the engine's own tiers", m)
		}
		cp, err := ev.PlanCircuits(c, m, CircuitOptions{})
		require.NoError(t, err)
		if cp.Instances != m || cp.Levels != len(want.levels) || cp.MaxBatch != m*want.maxBatch || cp.Bootstraps != m*want.bootstraps {
			t.Errorf("%d sets: plan %+v, the linear plan's %d levels, %d a level at most, %d bootstraps", m, cp, len(want.levels), want.maxBatch, want.bootstraps)
		}
	}
	for m := 1; m <= 300; m++ {
		if _, err := ev.PlanCircuits(c, m, CircuitOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	c.plans.mu.Lock()
	cached := len(c.plans.entries)
	c.plans.mu.Unlock()
	if cached > maxCachedPlans {
		t.Errorf("%d plans cached, at most %d wanted", cached, maxCachedPlans)
	}
}

// TestPlanCacheBuildsOnce: goroutines that miss the same plan at once wait
// for one build and share its plan; other keys build on their own.
func TestPlanCacheBuildsOnce(t *testing.T) {
	var pc planCache
	const callers = 16
	var builds atomic.Int32
	release := make(chan struct{})
	build := func() *linearPlan {
		builds.Add(1)
		<-release
		return &linearPlan{terms: 2}
	}
	key := planKey{2, "[1 4]", true}
	got := make([]*linearPlan, callers)
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() { got[i] = pc.getOrBuild(key, build) })
	}
	// Every caller is in the single flight (one building, the others
	// waiting for it) before the build may end.
	deadline := time.Now().Add(time.Minute)
	for stacksWith("singleflight.(*Group).Do") < callers {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d callers reached the plan's build after a minute", stacksWith("singleflight.(*Group).Do"), callers)
		}
		time.Sleep(time.Millisecond)
	}
	close(release)
	wg.Wait()
	if n := builds.Load(); n != 1 {
		t.Errorf("%d builds for %d callers of one key, want 1", n, callers)
	}
	for i, p := range got {
		if p == nil || p != got[0] {
			t.Fatalf("caller %d got plan %p, caller 0 %p", i, p, got[0])
		}
	}
	if p := pc.getOrBuild(key, build); p != got[0] || builds.Load() != 1 {
		t.Errorf("a later call got %p after %d builds, want the cached %p", p, builds.Load(), got[0])
	}
	other := pc.getOrBuild(planKey{3, "[1 4]", true}, build)
	if other == got[0] || builds.Load() != 2 {
		t.Errorf("another key: plan %p after %d builds, want its own after 2", other, builds.Load())
	}
	if unfused := pc.getOrBuild(planKey{2, "[1 4]", false}, build); unfused == got[0] || builds.Load() != 3 {
		t.Errorf("the key without fused carries: plan %p after %d builds, want its own after 3", unfused, builds.Load())
	}
}

// stacksWith counts the goroutines whose stacks hold frame.
func stacksWith(frame string) int {
	buf := make([]byte, 1<<20)
	n := 0
	for _, g := range strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
		if strings.Contains(g, frame) {
			n++
		}
	}
	return n
}

// TestLinearPlanMuxWeight: a MUX output (two blind rotations before one key
// switching) has up to twice a gate output's error variance, so it counts
// as two terms of a sum, is refreshed alone where a sum's limit needs it,
// and a gate that reads MUX outputs is counted as noisier (noise.mux), in the
// linear plan and in the circuit's own count for XORBootstrapped.
func TestLinearPlanMuxWeight(t *testing.T) {
	g := func(op Op, out int, in ...int) Gate {
		x := Gate{Op: op, Out: out}
		copy(x.In[:], in)
		return x
	}
	// Inputs 0–5: m1 = MUX(0, 1, 2), m2 = MUX(3, 4, 5), x = m1 XOR m2,
	// y = x AND 0, z = NOT m1 AND m2 (through a copy); outputs y, z.
	c, err := NewCircuit(BristolFashion, 13, []int{6}, []int{2}, []Gate{
		g(OpMUX, 6, 0, 1, 2), g(OpMUX, 7, 3, 4, 5), g(OpXOR, 8, 6, 7), g(OpNOT, 9, 6), g(OpCopy, 10, 7),
		g(OpAND, 11, 8, 0), g(OpAND, 12, 9, 10),
	})
	require.NoError(t, err)
	if c.noise != (gateNoise{mux: 2}) {
		t.Errorf("XORBootstrapped: noise %+v, want 2 MUX inputs and no MAJ (z reads two MUX outputs)", c.noise)
	}
	rng := rand.New(rand.NewPCG(17, 19))
	for _, tc := range []struct {
		terms, singles, refreshes, muxIn int
	}{
		// m1 ⊕ m2 weighs 4. With 2 terms both are refreshed alone first
		// (x is then a sum of two, refreshed for the AND), and z reads
		// their refreshes; with 3 only m1 (the first of a tie), after which
		// the sum weighs 3, and z reads m2; with 4 the sum is refreshed as
		// it is, and z reads both MUX outputs.
		{2, 2, 3, 0}, {3, 1, 2, 1}, {4, 0, 1, 2},
	} {
		checkLinearPlan(t, c, tc.terms, nil, 8, rng)
		p, err := c.linearPlan(tc.terms, nil)
		require.NoError(t, err)
		singles := 0
		for _, l := range p.levels {
			for _, o := range l.ops {
				if o.refresh() && len(o.sum) == 1 {
					singles++
				}
			}
		}
		if singles != tc.singles || p.refreshes != tc.refreshes {
			t.Errorf("terms %d: %d lone refreshes of %d, want %d of %d", tc.terms, singles, p.refreshes, tc.singles, tc.refreshes)
		}
		if p.noise != (gateNoise{mux: tc.muxIn}) {
			t.Errorf("terms %d: noise %+v, want %d MUX inputs and no MAJ", tc.terms, p.noise, tc.muxIn)
		}
	}
}

// planDigest appends to b what c's schedules are: the levels of
// Circuit.Levels with the bootstrap count and the wires releaseSchedule
// frees (those past the inputs: freeing an input sample, the caller's,
// frees nothing), and, for each sum bound and tier list, the linear plan
// (every operation, level, free count, release of a sample the plan
// writes, output and count); then the outputs of Eval and of each plan's
// evalPlain on rounds inputs (all zero, all one, then random from rng).
func planDigest(b []byte, c *Circuit, terms []int, tiers [][]int, rounds int, rng *rand.Rand) []byte {
	put := func(v ...int) {
		for _, x := range v {
			b = binary.AppendVarint(b, int64(x))
		}
	}
	nin := c.numInputBits()
	put(c.Depth(), c.Bootstraps(), c.noise.mux, c.NumWires(), nin)
	if c.noise.maj { // after the digests of circuits without MAJ were pinned
		put(c.noise.majMux)
	}
	gate := func(g Gate) { put(int(g.Op), g.In[0], g.In[1], g.In[2], g.Out, g.Line) }
	for _, lv := range c.Levels() {
		put(len(lv.Bootstrapped), len(lv.Free))
		for _, g := range lv.Bootstrapped {
			gate(g)
		}
		for _, g := range lv.Free {
			gate(g)
		}
	}
	for _, r := range c.releaseSchedule() {
		r = slices.DeleteFunc(slices.Sorted(slices.Values(r)), func(w int) bool { return w < nin })
		put(len(r))
		put(r...)
	}
	var plans []*linearPlan
	for _, w := range terms {
		for _, ts := range tiers {
			p := buildLinearPlan(c, w, ts)
			plans = append(plans, p)
			put(p.terms, p.inputs, p.samples, p.bootstraps, p.refreshes, p.maxBatch, p.noise.mux, p.largestSum, len(p.levels))
			if p.noise.maj {
				put(p.noise.majMux)
			}
			for _, l := range p.levels {
				put(l.free, len(l.ops))
				for _, o := range l.ops {
					put(int(o.op), int(o.out), o.line, len(o.sum))
					for _, id := range o.sum {
						put(int(id))
					}
					for _, r := range o.in {
						put(int(r.id), boolInt(r.neg))
					}
				}
				rel := slices.DeleteFunc(slices.Sorted(slices.Values(l.release)), func(id int32) bool { return int(id) < p.inputs })
				put(len(rel))
				for _, id := range rel {
					put(int(id))
				}
			}
			put(p.numOutputs())
			for j := range p.numOutputs() {
				r := p.output(j)
				put(int(r.id), boolInt(r.neg))
			}
		}
	}
	for round := range rounds {
		in := make([][]bool, len(c.inputs))
		for i, w := range c.inputs {
			in[i] = make([]bool, w)
			for j := range in[i] {
				in[i][j] = round == 1 || round > 1 && rng.IntN(2) == 1
			}
		}
		out, err := c.Eval(in...)
		if err != nil {
			panic(err)
		}
		for _, p := range append([]*linearPlan{nil}, plans...) {
			if p != nil {
				out = p.evalPlain(c, in)
			}
			for _, v := range out {
				for _, x := range v {
					put(boolInt(x))
				}
			}
		}
	}
	return b
}

func boolInt(x bool) int {
	if x {
		return 1
	}
	return 0
}

// TestPlanDigest pins the schedules, linear plans and plaintext outputs
// (planDigest) of every shipped circuit, of random circuits and of wide
// ones, so that a change to how they are built (their tables, say) changes
// none of them. A change of what the plans are changes them on purpose:
// the linear plans of adder64, sub64, mult64, mult2_64 and sha256 changed
// when full adders' carries became MAJ gates (fuseMajorities), each
// checked against Eval by checkLinearPlan (TestLinearPlanShipped).
func TestPlanDigest(t *testing.T) {
	want := map[string]string{
		"AES-non-expanded.txt":  "f84dbb6833222bb66d4179b86df146c334dc7e22ee7941385b0d879e4c71f676",
		"FP-lt.txt":             "39e2e5443a119064fd258978de6cf8076b56c1a815f262a1e0934c6e8b2d2f36",
		"adder64.txt":           "b10eb6174f6a4d0c2417d09bd76cfa06c1d4a023cc00f661a3ffd90618e924b4",
		"adder_32bit.txt":       "92d1f05230990b4a26e821380e1186567cf29fbde04b9a42686d51db9146e0b7",
		"aes_128.txt":           "4f3e4049a5fc8de80b72b941b24e9b9473fbfd547fa17f79f28efaf9f7b7b882",
		"mult2_64.txt":          "d67c42e85b11f4194b23dfbe2bbc24b950eac6e74225b207ddfbc5639d5fbcd2",
		"mult64.txt":            "68610ddf969910f37c54ab665e8d3ee43700614f050dcf2f4d534cfdc9b36d7e",
		"neg64.txt":             "9982bae6506405e6fe3554f2d657255fd5d685202dd234d52dd72f83b63a4b44",
		"sha256.txt":            "ed6f3fd111a03b4c005a2289763fdfee1889ff0d5c399890bbef06b339fe2215",
		"sub64.txt":             "02522a3ddac43903741e702a65431ab5eadcd77d97ba333ed26962318f279446",
		"zero_equal.txt":        "acc9a11ce230d26692a7251778b3e7b44abdd123a019e21f04420bca1720cfc4",
		"int_gt64_size.bristol": "f90f0b2c1267dee4ba935246c58026a98fbc658c51fb0b6fe2ba583d7800bee2",
		"random":                "68f1b1d0ca9532e41f0f454f049d73dafd66d46aa51a3d04a0b1d74eeb604525",
		"wide":                  "c423acab556c76624a5b92ba89b41faa6852ce978aa241411635121d47a0efe4",
	}
	terms := []int{2, 9}
	tiers := [][]int{nil, {16, 66, 132, 264}, {3, 10}}
	check := func(name string, cs []*Circuit, rng *rand.Rand) {
		t.Helper()
		var b []byte
		for _, c := range cs {
			b = planDigest(b, c, terms, tiers, 4, rng)
		}
		sum := sha256.Sum256(b)
		if got := hex.EncodeToString(sum[:]); got != want[name] {
			t.Errorf("%s: digest %s, want %s", name, got, want[name])
		}
	}
	files, err := filepath.Glob("circuits/*.txt")
	if err != nil || len(files) < 10 {
		t.Fatalf("shipped circuits: %v %v", files, err)
	}
	for _, name := range append(files, "circuits/int_gt64_size.bristol") {
		c, err := ParseFile(name)
		require.NoError(t, err)
		check(filepath.Base(name), []*Circuit{c}, rand.New(rand.NewPCG(7, 8)))
	}
	rng := rand.New(rand.NewPCG(9, 10))
	var random []*Circuit
	for range 40 {
		random = append(random, randomCircuit(rng, 1+rng.IntN(8), 1+rng.IntN(200)))
	}
	check("random", random, rng)
	var wide []*Circuit
	for _, src := range wideCircuits {
		c, err := Parse(strings.NewReader(src))
		require.NoError(t, err)
		wide = append(wide, c)
	}
	check("wide", wide, rng)
}

// wideCircuits have many input bits for few gates, outputs that are inputs
// among them.
var wideCircuits = []string{
	"0 4096\n1 4096\n1 1\n",
	"0 4096\n1 4096\n1 4096\n",
	"3 4096\n1 4093\n1 2\n\n2 1 5 4000 4093 XOR\n2 1 4093 7 4094 AND\n2 1 4094 3 4095 XOR\n",
	"4 4096\n2 2000 2092\n2 3000 1\n\n2 1 5 4000 4092 XOR\n2 1 4092 7 4093 AND\n1 1 4093 4094 INV\n3 1 4094 1 4092 4095 MUX\n",
	"5 4096\n1 4091\n1 4096\n\n2 1 5 4000 4091 XOR\n2 1 4091 4001 4092 XOR\n2 1 4092 17 4093 XOR\n2 1 4093 4092 4094 AND\n1 1 4093 4095 EQW\n",
}

// BenchmarkLinearPlan builds the linear plans of AES-128 and SHA-256 (sums
// of 9 terms) without tiers and with a GPU's, uncached.
func BenchmarkLinearPlan(b *testing.B) {
	for _, name := range []string{"aes_128", "sha256"} {
		c, err := ParseFile(filepath.Join("circuits", name+".txt"))
		if err != nil {
			b.Fatal(err)
		}
		for _, tiers := range [][]int{nil, {16, 66, 132, 264}} {
			ts := "none"
			if tiers != nil {
				ts = fmt.Sprint(tiers[0], ",", tiers[1], ",", tiers[2], ",", tiers[3])
			}
			b.Run(fmt.Sprintf("circuit=%s/tiers=%s", name, ts), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					buildLinearPlan(c, 9, tiers)
				}
			})
		}
		b.Run(fmt.Sprintf("circuit=%s/releaseSchedule", name), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				c.releaseSchedule()
			}
		})
	}
}

// hostileWide are valid netlists of a few bytes that declare 2^24 input
// bits: no gate and one output (planned, this file of 30 bytes took
// 1.15 GB, releaseSchedule 836 MB); every wire an output, an input;
// a few XOR and AND gates; a MUX and a NOT; outputs over inputs and gates;
// a sum to refresh; the old format.
var hostileWide = []string{
	"0 16777216\n1 16777216\n1 1\n",
	"0 16777216\n1 16777216\n1 16777216\n",
	"3 16777216\n1 16777213\n1 2\n\n2 1 5 16777200 16777213 XOR\n2 1 16777213 7 16777214 AND\n2 1 16777214 3 16777215 XOR\n",
	"3 16777216\n2 8388608 8388605\n1 3\n\n3 1 0 16777212 9 16777213 MUX\n1 1 16777213 16777214 INV\n2 1 16777214 16777213 16777215 OR\n",
	"2 16777216\n1 16777214\n1 16777216\n\n2 1 0 16777213 16777214 AND\n2 1 16777214 1 16777215 XOR\n",
	"4 16777216\n1 16777212\n1 1000000\n\n2 1 1 2 16777212 XOR\n2 1 16777212 3 16777213 XOR\n2 1 16777213 4 16777214 XOR\n2 1 16777214 5 16777215 AND\n",
	"1 16777216\n8388607 8388608 1\n\n2 1 0 16777214 16777215 AND\n",
}

// planStep is one thing done with a circuit before any ciphertext is
// given: a plan, a schedule's bookkeeping.
type planStep struct {
	name string
	run  func()
}

// planSteps returns what is done with c before ciphertexts are given: its
// linear plans for terms without and with tiers (kept in *plans, for
// checkPlanShape), PlanCircuit and PlanCircuits on ev in both XOR modes,
// and releaseSchedule.
func planSteps(ev *Evaluator, c *Circuit, terms int, tiers []int, plans *[]*linearPlan) []planStep {
	return []planStep{
		{"linear plan", func() { *plans = append(*plans, buildLinearPlan(c, terms, nil)) }},
		{fmt.Sprintf("linear plan, tiers %v", tiers), func() { *plans = append(*plans, buildLinearPlan(c, terms, tiers)) }},
		{"PlanCircuit", func() { ev.PlanCircuit(c, CircuitOptions{}) }},
		{"PlanCircuits of 5 sets", func() { ev.PlanCircuits(c, 5, CircuitOptions{MaxXORTerms: terms}) }},
		{"PlanCircuit, XORBootstrapped", func() { ev.PlanCircuit(c, CircuitOptions{XOR: XORBootstrapped}) }},
		{"releaseSchedule", func() { c.releaseSchedule() }},
	}
}

// TestPlanHostileMemory: what is done with a circuit before ciphertexts
// are given (planSteps) takes memory in its gates, not in the input bits
// its header declares nor in its output bits that are inputs, so that a
// server can plan an untrusted circuit to check its cost: 2^24 input bits
// in a file of 30 bytes took 1.15 GB for a linear plan (1.6 GB with tiers)
// and 836 MB for releaseSchedule. The plans are valid (checkPlanShape).
func TestPlanHostileMemory(t *testing.T) {
	const limit = 1 << 20
	ev, err := NewEvaluator(tiersOnly{[]int{16, 66, 132, 264}})
	require.NoError(t, err)
	ev.DefaultMaxXORTerms() // its noise figures, computed once
	for _, src := range hostileWide {
		c, err := Parse(strings.NewReader(src))
		require.NoErrorf(t, err, "%q", src)
		var plans []*linearPlan
		for _, s := range planSteps(ev, c, 2, []int{1, 8}, &plans) {
			if got := allocated(s.run); got > limit {
				t.Errorf("%q: %s allocated %d bytes", src, s.name, got)
			}
		}
		for _, p := range plans {
			checkPlanShape(t, c, p)
		}
	}
	// The plans of a circuit whose every wire is an output, most of them
	// inputs, give those inputs as they are.
	c, _ := Parse(strings.NewReader(hostileWide[4]))
	p := buildLinearPlan(c, 2, nil)
	for _, j := range []int{0, 1, 16777213} {
		if r := p.output(j); r != (cleanRef{id: int32(j)}) {
			t.Errorf("output bit %d is %+v, want input sample %d", j, r, j)
		}
	}
	if r := p.output(16777215); int(r.id) < p.inputs {
		t.Errorf("the last output bit is %+v, want a sample the plan writes", r)
	}
}

// nopEngine is tiersOnly that bootstraps without writing anything: for
// evaluations whose outputs are not read.
type nopEngine struct{ tiersOnly }

func (nopEngine) Bootstrap(_, _ []*tfhe.TLWE, _ torus.Torus32) error { return nil }
func (nopEngine) BootstrapNoKeySwitch(_, _ []*tfhe.TLWE, _ torus.Torus32) error {
	return nil
}
func (nopEngine) KeySwitch(_, _ []*tfhe.TLWE) error { return nil }

// TestEvalWideMemory: an evaluation takes, beyond the plan, one pointer a
// set and input bit (the caller gives a sample each) and memory in the
// gates and outputs, not tables of the input bits: XORLinear kept the
// level of every input sample and released each, XORBootstrapped
// flagged every input wire as not its own and released each.
func TestEvalWideMemory(t *testing.T) {
	const nin, sets = 1 << 18, 2
	ev, err := NewEvaluator(nopEngine{tiersOnly{[]int{16, 66, 132, 264}}})
	require.NoError(t, err)
	ev.DefaultMaxXORTerms()
	rng := rand.New(rand.NewPCG(1, 2))
	sample := func() *tfhe.TLWE {
		x := tfhe.NewTLWE(ev.n)
		for i := range x.Value {
			x.Value[i] = torus.Torus32(rng.Uint32())
		}
		return x
	}
	// Gates read inputs 0 … 7: samples of their own; the others share one.
	shared := sample()
	inputs := make([][][]*tfhe.TLWE, sets)
	for k := range inputs {
		in := make([]*tfhe.TLWE, nin-1)
		for i := range in {
			in[i] = shared
			if i < 8 {
				in[i] = sample()
			}
		}
		inputs[k] = [][]*tfhe.TLWE{in, {sample()}}
	}
	for _, src := range []string{
		fmt.Sprintf("0 %d\n2 %d 1\n1 1\n", nin, nin-1),
		fmt.Sprintf("4 %d\n2 %d 1\n1 3\n\n2 1 0 1 %d XOR\n2 1 %d 2 %d XOR\n2 1 %d 3 %d AND\n1 1 %d %d INV\n",
			nin+4, nin-1, nin, nin, nin+1, nin+1, nin+2, nin+2, nin+3),
	} {
		c, err := Parse(strings.NewReader(src))
		require.NoError(t, err)
		// One pointer a set and input bit, and 256 KiB: the outputs take
		// a sample (2.5 KiB) a set and bit, the rest a few KiB.
		limit := uint64(8*sets*nin + 1<<18)
		for _, opts := range []CircuitOptions{{}, {XOR: XORBootstrapped}} {
			// The plan first: its memory is TestPlanHostileMemory's.
			if _, err := ev.PlanCircuits(c, sets, opts); err != nil {
				t.Fatal(err)
			}
			var out [][][]*tfhe.TLWE
			got := allocated(func() { out, err = ev.EvalCircuits(context.Background(), c, inputs, opts) })
			require.NoError(t, err)
			if len(out) != sets || len(out[0]) != 1 || len(out[0][0]) != c.numOutputBits() {
				t.Fatalf("%v: outputs %v", opts.XOR, out)
			}
			if got > limit {
				t.Errorf("%v, %d input bits: the evaluation of %v allocated %d bytes (limit %d)", opts.XOR, nin, c, got, limit)
			}
		}
	}
}

// FuzzPlan checks that what is done with whatever Parse accepts before
// ciphertexts are given (planSteps) takes memory in the netlist's length,
// not in the wires its header declares, and gives linear plans of a valid
// structure (checkPlanShape), for circuits of millions of input bits too,
// which FuzzParse does not plan. FuzzParse checks the plans of the others
// against Eval.
func FuzzPlan(f *testing.F) {
	for _, s := range seedCorpus(f) {
		f.Add(s)
	}
	for _, s := range slices.Concat(hostileWide, wideCircuits) {
		f.Add([]byte(s))
	}
	ev, err := NewEvaluator(tiersOnly{[]int{16, 66, 132, 264}})
	if err != nil {
		f.Fatal(err)
	}
	ev.DefaultMaxXORTerms()
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(bytes.NewReader(data))
		if err != nil {
			return
		}
		// The plans of the largest published circuits take about 25 bytes
		// a byte of netlist (SHA-256: 90 MB with tiers); a table of the
		// declared wires would take 4 to 32 bytes a wire.
		limit := uint64(1<<20 + 1024*len(data))
		var plans []*linearPlan
		for _, s := range planSteps(ev, c, 2+len(data)%3, []int{1 + len(data)%4, 8}, &plans) {
			if got := allocated(s.run); got > limit {
				t.Fatalf("%s of %v, %d bytes of netlist: %d bytes allocated (limit %d)", s.name, c, len(data), got, limit)
			}
		}
		for _, p := range plans {
			checkPlanShape(t, c, p)
		}
	})
}
