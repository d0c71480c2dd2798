package gates_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/goldfhe/goldfhe/bootstrap"
	"github.com/goldfhe/goldfhe/gates"
	"github.com/goldfhe/goldfhe/kernels"
	"github.com/goldfhe/goldfhe/tfhe"
	"github.com/goldfhe/goldfhe/torus"
	"github.com/stretchr/testify/require"
)

// requireGPU skips the test, naming why, when no CUDA device is there
// (before any key generation).
func requireGPU(t testing.TB) {
	t.Helper()
	n, err := kernels.DeviceCount()
	if err != nil {
		t.Skipf("no GPU: %v", err)
	}
	if n == 0 {
		t.Skip("no GPU: the driver reports no CUDA device")
	}
}

// gpuGateCases returns the (set, key grouping) pairs and batch sizes
// TestGatesGPUMatchCPU runs: in -short mode TFHELib128 plain and grouped
// by 3 (the benchmark's key) up to 1,000 gates; otherwise every named set
// grouped by 1, 2 and 3 and the toy set (plain only: the GPU engine takes
// grouped keys for the named shapes alone) up to 10,000 gates.
func gpuGateCases() (sets []tfhe.Params, groupings func(tfhe.Params) []int, batches []int) {
	if testing.Short() {
		return []tfhe.Params{tfhe.TFHELib128}, func(tfhe.Params) []int { return []int{3, 1} }, []int{1, 7, 132, 1000}
	}
	return append(tfhe.ParamSets(), toyParams), func(p tfhe.Params) []int {
		if p.Name() == toyParams.Name() {
			return []int{1}
		}
		return []int{1, 2, 3}
	}, []int{1, 7, 132, 1000, 10_000}
}

// TestGatesGPUMatchCPU: every gate, through Evaluator.Batch on the GPU
// engine, gives the CPU engine's output bit for bit: each kind alone in a
// batch of one, then batches of 7, 132, 1,000 and 10,000 calls of every
// kind in turn (the two-input gates in
// one Bootstrap call, MUX in BootstrapNoKeySwitch and KeySwitch calls of
// their own, the free gates on the host), and every output decrypts to the
// gate's value. The CPU engine checks the GPU engine's calls on the samples
// Batch gave it: every sample of a call of up to 132, and 66 of a larger
// one (the first, the last 16, and 49 at random). The inputs are
// fresh encryptions for the first batch size and, after it, outputs of the
// previous batch mixed with fresh ones, so that bootstrapped samples are
// inputs too. Then AddUint (64 bits, 8 under -short) adds a value with all
// carries set and a random pair, its every engine call checked as the
// batches' are. On a machine without a GPU it skips, saying why.
func TestGatesGPUMatchCPU(t *testing.T) {
	requireGPU(t)
	sets, groupings, batches := gpuGateCases()
	for _, p := range sets {
		for _, g := range groupings(p) {
			t.Run(fmt.Sprintf("%s/grouping=%d", p.Name(), g), func(t *testing.T) {
				testGatesMatchCPU(t, p, g, batches, func(ck *tfhe.CloudKey) (bootstrap.Engine, error) {
					e, err := bootstrap.NewGPU(ck, bootstrap.GPUOptions{})
					if errors.Is(err, bootstrap.ErrNoGPU) {
						t.Skipf("no GPU: %v", err)
					}
					return e, err
				})
			})
		}
	}
}

// testGatesMatchCPU runs TestGatesGPUMatchCPU's check for one set and key
// grouping on the engine that newEngine builds.
func testGatesMatchCPU(t *testing.T, p tfhe.Params, grouping int, batches []int, newEngine func(*tfhe.CloudKey) (bootstrap.Engine, error)) {
	f := fixtures(p)
	ck, err := tfhe.GenerateCloudKeyFromSeed(f.sk, seed(fmt.Sprintf("%s/gpu-ck/%d", p.Name(), grouping)), tfhe.WithGrouping(grouping))
	require.NoError(t, err)
	g, err := newEngine(ck)
	require.NoError(t, err)
	defer g.Close()
	c, err := bootstrap.NewCPU(ck, bootstrap.CPUOptions{})
	require.NoError(t, err)
	defer c.Close()
	rec := &engineRecorder{Engine: g}
	evG, err := gates.NewEvaluator(rec)
	require.NoError(t, err)
	t.Logf("%s against %s", g.Name(), c.Name())

	rng := rand.New(rand.NewPCG(uint64(p.LWEDimension()), uint64(grouping)))
	n := p.LWEDimension()
	// pool holds samples and their plaintexts to draw inputs from: fresh
	// encryptions, then each batch's outputs as well.
	var pool []*tfhe.TLWE
	var bits []bool
	fresh := func(count int) {
		b := make([]bool, count)
		for i := range b {
			b[i] = rng.IntN(2) == 1
		}
		pool = append(pool, f.encrypt(b...)...)
		bits = append(bits, b...)
	}
	type round struct {
		count int
		ops   []gates.Op // nil: every kind in turn from a random start
	}
	var rounds []round
	for _, count := range batches {
		if count == 1 {
			for _, op := range allOps {
				rounds = append(rounds, round{1, []gates.Op{op}})
			}
			continue
		}
		rounds = append(rounds, round{count, nil})
	}
	for _, r := range rounds {
		count, ops := r.count, r.ops
		if ops == nil {
			start := rng.IntN(len(allOps))
			ops = append(slices.Clone(allOps[start:]), allOps[:start]...)
		}
		fresh(3 * count)
		calls := make([]gates.Call, count)
		want := make([]bool, count)
		for i := range calls {
			op := ops[i%len(ops)]
			var in [3]*tfhe.TLWE
			var v [3]bool
			for k := range op.Arity() {
				j := rng.IntN(len(pool))
				in[k], v[k] = pool[j], bits[j]
			}
			calls[i] = gates.Call{Op: op, Out: tfhe.NewTLWE(n), A: in[0], B: in[1], C: in[2]}
			want[i] = op.Eval(v[0], v[1], v[2])
		}
		require.NoErrorf(t, evG.Batch(calls), "batch %d: %s", count, g.Name())
		for i, call := range calls {
			if got := f.decrypt(t, call.Out)[0]; got != want[i] {
				t.Fatalf("batch %d, call %d (%v): output decrypts to %v, want %v", count, i, call.Op, got, want[i])
			}
		}
		// The engine calls are compared, not the gates: which blind
		// rotations a batch negates (distinct inputs) depends on the whole
		// batch, so a CPU batch of some of its calls could differ from it
		// and still be right.
		checked, _ := checkRecorded(t, rng, rec, c, g.Name(), fmt.Sprintf("batch %d", count))
		if count > 1 {
			t.Logf("batch %d: GPU = CPU on %d engine samples, decryption right on all %d gates", count, checked, count)
		}
		for i, call := range calls {
			pool = append(pool, call.Out)
			bits = append(bits, want[i])
		}
	}
	if slices.Contains(batches, 1) {
		t.Logf("batch 1: GPU = CPU for each of the %d kinds of gate alone", len(allOps))
	}

	// AddUint: a circuit of MAJ gates and refreshes of three-term sums,
	// one engine call a level; every call checked against the CPU engine.
	w := 64
	if testing.Short() {
		w = 8
	}
	mask := uint64(1)<<w - 1
	for _, pr := range [][2]uint64{{mask, 1}, {rng.Uint64() & mask, rng.Uint64() & mask}} {
		sum, err := evG.AddUint(f.encryptUint(t, pr[0], w), f.encryptUint(t, pr[1], w))
		require.NoErrorf(t, err, "%d-bit AddUint on %s", w, g.Name())
		bits := f.decrypt(t, sum...)
		if got, carry := gates.BitsUint64(bits[:w]), bits[w]; got != (pr[0]+pr[1])&mask || carry != (pr[0] > mask-pr[1]) {
			t.Fatalf("%d-bit AddUint(%d, %d) on the GPU: %d carry %v", w, pr[0], pr[1], got, carry)
		}
		checked, calls := checkRecorded(t, rng, rec, c, g.Name(), fmt.Sprintf("%d-bit AddUint", w))
		adder, err := evG.AddUintCircuit(w)
		require.NoError(t, err)
		plan, err := evG.PlanCircuit(adder, gates.CircuitOptions{})
		require.NoError(t, err)
		if checked != plan.Bootstraps || calls != plan.Levels-1 {
			t.Fatalf("%d-bit AddUint: %d bootstraps in %d engine calls, its plan %d in %d", w, checked, calls, plan.Bootstraps, plan.Levels-1)
		}
		t.Logf("%d-bit AddUint(%d, %d): right, GPU = CPU on its %d bootstraps in %d engine calls", w, pr[0], pr[1], checked, calls)
	}
}

// checkRecorded runs the engine calls rec holds since its last take on the
// CPU engine c, every sample of a call of up to 132 and 66 of a larger
// (gateSampleIndices), fails the test at the first output that differs
// from the GPU engine's (named gpu) and returns how many samples it
// compared, in how many engine calls.
func checkRecorded(t *testing.T, rng *rand.Rand, rec *engineRecorder, c bootstrap.Engine, gpu, what string) (samples, calls int) {
	t.Helper()
	checked := 0
	recorded := rec.take()
	for _, r := range recorded {
		idx := gateSampleIndices(rng, len(r.in))
		out := make([]*tfhe.TLWE, len(idx))
		in := make([]*tfhe.TLWE, len(idx))
		for j, i := range idx {
			in[j], out[j] = r.in[i], tfhe.NewTLWE(r.out[i].Dim())
		}
		var err error
		switch r.kind {
		case "Bootstrap":
			err = c.Bootstrap(out, in, r.mu)
		case "BootstrapNoKeySwitch":
			err = c.BootstrapNoKeySwitch(out, in, r.mu)
		case "KeySwitch":
			err = c.KeySwitch(out, in)
		}
		require.NoErrorf(t, err, "%s: CPU %s", what, r.kind)
		for j, i := range idx {
			if !slices.Equal(out[j].Value, r.out[i].Value) {
				t.Fatalf("%s, %s of %d samples, sample %d: %s's output differs from the CPU engine's", what, r.kind, len(r.in), i, gpu)
			}
		}
		checked += len(idx)
	}
	return checked, len(recorded)
}

// engineRecorder is an engine that keeps a copy of every sample its
// engine (Engine) takes and gives, call by call, since the last take.
type engineRecorder struct {
	bootstrap.Engine
	calls []engineCall
}

type engineCall struct {
	kind    string
	mu      torus.Torus32
	in, out []*tfhe.TLWE
}

func copies(xs []*tfhe.TLWE) []*tfhe.TLWE {
	c := make([]*tfhe.TLWE, len(xs))
	for i, x := range xs {
		c[i] = x.Copy()
	}
	return c
}

func (r *engineRecorder) record(kind string, mu torus.Torus32, out, in []*tfhe.TLWE, run func() error) error {
	if len(in) == 0 {
		return run()
	}
	c := engineCall{kind: kind, mu: mu, in: copies(in)} // before: Bootstrap may work in place
	if err := run(); err != nil {
		return err
	}
	c.out = copies(out)
	r.calls = append(r.calls, c)
	return nil
}

func (r *engineRecorder) Bootstrap(out, in []*tfhe.TLWE, mu torus.Torus32) error {
	return r.record("Bootstrap", mu, out, in, func() error { return r.Engine.Bootstrap(out, in, mu) })
}

func (r *engineRecorder) BootstrapNoKeySwitch(out, in []*tfhe.TLWE, mu torus.Torus32) error {
	return r.record("BootstrapNoKeySwitch", mu, out, in, func() error { return r.Engine.BootstrapNoKeySwitch(out, in, mu) })
}

func (r *engineRecorder) KeySwitch(out, in []*tfhe.TLWE) error {
	return r.record("KeySwitch", 0, out, in, func() error { return r.Engine.KeySwitch(out, in) })
}

// BatchTiers and Grouping are the engine's, so that the evaluator plans
// for it as for the engine itself (AddUint's carry-select adder on a GPU).
func (r *engineRecorder) BatchTiers() []int { return bootstrap.BatchTiers(r.Engine) }
func (r *engineRecorder) Grouping() int     { return bootstrap.KeyGrouping(r.Engine) }

func (r *engineRecorder) take() []engineCall {
	c := r.calls
	r.calls = nil
	return c
}

// gateSampleIndices returns every index below count when count ≤ 132, else
// 66: the first, the last 16 (where the GPU engine's tail passes run) and
// 49 at random.
func gateSampleIndices(rng *rand.Rand, count int) []int {
	if count <= 132 {
		idx := make([]int, count)
		for i := range idx {
			idx[i] = i
		}
		return idx
	}
	idx := []int{0}
	for i := count - 16; i < count; i++ {
		idx = append(idx, i)
	}
	for range 49 {
		idx = append(idx, rng.IntN(count))
	}
	return idx
}
