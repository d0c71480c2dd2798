package gates_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/goldfhe/goldfhe/bootstrap"
	"github.com/goldfhe/goldfhe/gates"
	"github.com/goldfhe/goldfhe/gates/circuits"
	"github.com/goldfhe/goldfhe/tfhe"
	"github.com/goldfhe/goldfhe/torus"
	"github.com/stretchr/testify/require"
)

// randomSets returns m sets of random plaintext inputs for c and their
// encryptions; sets 1 and 2 (when there are three or more) share the
// samples of their first input, as callers reusing a ciphertext would.
func randomSets(f *fixture, c *gates.Circuit, m int, rng *rand.Rand) ([][][]*tfhe.TLWE, [][][]bool) {
	cts := make([][][]*tfhe.TLWE, m)
	plain := make([][][]bool, m)
	for k := range m {
		for i, w := range c.Inputs() {
			if k == 2 && i == 0 {
				plain[k] = append(plain[k], plain[1][0])
				cts[k] = append(cts[k], cts[1][0])
				continue
			}
			bits := make([]bool, w)
			for j := range bits {
				bits[j] = rng.IntN(2) == 1
			}
			plain[k] = append(plain[k], bits)
			cts[k] = append(cts[k], f.encrypt(bits...))
		}
	}
	return cts, plain
}

// TestEvalCircuitsOracle evaluates shipped circuits on several sets of
// inputs at once with the oracle engine, in both XOR modes and with tiers
// of several sizes: every set's outputs are its plaintext outputs, each
// level is one engine call holding every set's bootstraps, and the plan
// and the progress reports count every set.
func TestEvalCircuitsOracle(t *testing.T) {
	f := fixtures(tfhe.TFHELib128)
	names := []string{"adder64", "int_gt64_size", "FP-lt", "zero_equal"}
	if !testing.Short() {
		names = append(names, "aes_128")
	}
	rng := rand.New(rand.NewPCG(21, 22))
	for _, cfg := range []struct {
		mode  gates.XORMode
		tiers []int
	}{{gates.XORBootstrapped, nil}, {gates.XORLinear, nil}, {gates.XORLinear, []int{3, 10, 40}}, {gates.XORLinear, []int{8, 132, 396}}} {
		for _, name := range names {
			for _, m := range []int{1, 3, 8} {
				o := newOracle(f)
				var eng bootstrap.Engine = o
				if cfg.tiers != nil {
					eng = tieredOracle{o, cfg.tiers}
				}
				ev, _ := gates.NewEvaluator(eng)
				c, err := circuits.Load(name)
				require.NoError(t, err)
				tag := fmt.Sprintf("%v tiers %v %s, %d sets", cfg.mode, cfg.tiers, name, m)
				cts, plain := randomSets(f, c, m, rng)
				var stats []gates.LevelStats
				out, err := ev.EvalCircuits(context.Background(), c, cts, gates.CircuitOptions{XOR: cfg.mode,
					Progress: func(s gates.LevelStats) { stats = append(stats, s) }})
				require.NoErrorf(t, err, "%s", tag)
				if len(out) != m {
					t.Fatalf("%s: %d results", tag, len(out))
				}
				for k := range m {
					want, _ := c.Eval(plain[k]...)
					if len(out[k]) != len(want) {
						t.Fatalf("%s: set %d has %d outputs, want %d", tag, k+1, len(out[k]), len(want))
					}
					for i := range want {
						if got := f.decrypt(t, out[k][i]...); !slices.Equal(got, want[i]) {
							t.Errorf("%s: set %d output %d = %v, want %v", tag, k+1, i+1, got, want[i])
						}
					}
				}
				plan, err := ev.PlanCircuits(c, m, gates.CircuitOptions{XOR: cfg.mode})
				require.NoError(t, err)
				one, _ := ev.PlanCircuits(c, 1, gates.CircuitOptions{XOR: cfg.mode})
				if plan.Instances != m || plan.Bootstraps != m*one.Bootstraps || plan.Refreshes != m*one.Refreshes {
					t.Errorf("%s: plan %+v, one set's %+v", tag, plan, one)
				}
				if cfg.tiers == nil && (plan.Levels != one.Levels || plan.MaxBatch != m*one.MaxBatch) {
					t.Errorf("%s: plan %+v without tiers, one set's %+v", tag, plan, one)
				}
				var wantCalls []string
				bs, refreshes := 0, 0
				for l, s := range stats {
					if n := s.Gates + s.Refreshes; n > 0 {
						wantCalls = append(wantCalls, fmt.Sprintf("B:%d", n))
						if n%m != 0 {
							t.Errorf("%s: level %d holds %d bootstraps, not a multiple of the sets", tag, l, n)
						}
					}
					if s.Level != l || s.Levels != plan.Levels || s.Gates+s.Refreshes > plan.MaxBatch {
						t.Errorf("%s: level %d stats %+v, plan %+v", tag, l, s, plan)
					}
					bs += s.Bootstraps
					refreshes += s.Refreshes
				}
				if got := o.log(); !slices.Equal(got, wantCalls) {
					t.Errorf("%s: engine calls %v, want %v (one per level)", tag, got, wantCalls)
				}
				if len(stats) != plan.Levels || bs != plan.Bootstraps || refreshes != plan.Refreshes {
					t.Errorf("%s: %d progress reports, %d bootstraps, %d refreshes; plan %+v", tag, len(stats), bs, refreshes, plan)
				}
				for k := range m {
					for i := range cts[k] {
						if got := f.decrypt(t, cts[k][i]...); !slices.Equal(got, plain[k][i]) {
							t.Errorf("%s: set %d input %d changed", tag, k+1, i+1)
						}
					}
				}
			}
		}
	}
}

// TestEvalCircuitsMatchesOne checks, on the CPU engine (deterministic),
// that each set's outputs of EvalCircuits are bit for bit those of
// EvalCircuitWith on that set alone, in both XOR modes, with sums of
// several terms refreshed on the way and outputs that are inputs, and
// with sets that share samples: some inputs, or all.
func TestEvalCircuitsMatchesOne(t *testing.T) {
	f := fixtures(toyParams)
	ev := f.cpuEvaluator(t)
	c := xorTreeCircuit(t)
	rng := rand.New(rand.NewPCG(23, 24))
	for _, opts := range []gates.CircuitOptions{{}, {MaxXORTerms: 3}, {XOR: gates.XORBootstrapped}} {
		cts, plain := randomSets(f, c, 4, rng)
		// Set 4 is set 1 again: its bootstraps are set 1's, which the
		// evaluation keeps apart from one another within a set only.
		cts[3], plain[3] = cts[0], plain[0]
		all, err := ev.EvalCircuits(context.Background(), c, cts, opts)
		require.NoError(t, err)
		for k := range cts {
			one, err := ev.EvalCircuitWith(context.Background(), c, cts[k], opts)
			require.NoError(t, err)
			want, _ := c.Eval(plain[k]...)
			for i := range one {
				for j := range one[i] {
					if !slices.Equal(all[k][i][j].Value, one[i][j].Value) {
						t.Errorf("%+v: set %d output %d bit %d differs from EvalCircuitWith's", opts, k+1, i+1, j)
					}
				}
				if got := f.decrypt(t, all[k][i]...); !slices.Equal(got, want[i]) {
					t.Errorf("%+v: set %d output %d = %v, want %v", opts, k+1, i+1, got, want[i])
				}
			}
		}
		// No two sets share an output sample, nor an output and an input.
		seen := map[*tfhe.TLWE]bool{}
		for k := range cts {
			for _, v := range cts[k] {
				for _, x := range v {
					seen[x] = true
				}
			}
		}
		for k := range all {
			for _, v := range all[k] {
				for _, x := range v {
					if seen[x] {
						t.Fatalf("%+v: set %d: an output sample is shared", opts, k+1)
					}
					seen[x] = true
				}
			}
		}
	}
}

func TestEvalCircuitsErrors(t *testing.T) {
	f := fixtures(tfhe.TFHELib128)
	o := newOracle(f)
	ev, _ := gates.NewEvaluator(o)
	c, err := circuits.Load("adder64")
	require.NoError(t, err)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(25, 26))
	cts, _ := randomSets(f, c, 3, rng)

	out, err := ev.EvalCircuits(ctx, c, nil, gates.CircuitOptions{})
	if err != nil || out == nil || len(out) != 0 || len(o.log()) != 0 {
		t.Errorf("no sets: %v, %v, engine calls made", out, err)
	}
	if _, err := ev.EvalCircuits(ctx, nil, cts, gates.CircuitOptions{}); err == nil {
		t.Error("nil circuit accepted")
	}
	bad := slices.Clone(cts)
	bad[1] = bad[1][:1]
	if _, err := ev.EvalCircuits(ctx, c, bad, gates.CircuitOptions{}); err == nil || !strings.Contains(err.Error(), "set 2: the circuit takes 2 input values, got 1") {
		t.Errorf("a set short of a value: %v", err)
	}
	bad = slices.Clone(cts)
	bad[2] = [][]*tfhe.TLWE{cts[2][0], slices.Clone(cts[2][1])}
	bad[2][1][5] = nil
	if _, err := ev.EvalCircuits(ctx, c, bad, gates.CircuitOptions{}); err == nil || !strings.Contains(err.Error(), "set 3: input 2 bit 5 is nil") {
		t.Errorf("a nil sample: %v", err)
	}
	if len(o.log()) != 0 {
		t.Error("the engine ran on bad inputs")
	}
	for _, opts := range []gates.CircuitOptions{{XOR: 9}, {MaxXORTerms: 1}} {
		if _, err := ev.EvalCircuits(ctx, c, cts, opts); err == nil {
			t.Errorf("options %+v accepted", opts)
		}
		if _, err := ev.EvalCircuits(ctx, c, nil, opts); err == nil {
			t.Errorf("options %+v accepted with no sets", opts)
		}
	}
	if _, err := ev.PlanCircuits(c, 0, gates.CircuitOptions{}); err == nil {
		t.Error("PlanCircuits accepted 0 sets")
	}
	for _, mode := range []gates.XORMode{gates.XORLinear, gates.XORBootstrapped} {
		if p, err := ev.PlanCircuits(c, math.MaxInt/1000, gates.CircuitOptions{XOR: mode}); err == nil {
			t.Errorf("%v: PlanCircuits of MaxInt/1000 sets: %+v, want an error, not overflowed counts", mode, p)
		}
		// 2^30 sets; 2^19 on a 32-bit platform, whose int holds this
		// circuit's counts for at most about 1.2 million.
		sets := min(1<<30, math.MaxInt>>12)
		if p, err := ev.PlanCircuits(c, sets, gates.CircuitOptions{XOR: mode}); err != nil || p.Bootstraps <= 0 || p.MaxBatch <= 0 {
			t.Errorf("%v: PlanCircuits of %d sets: %+v, %v", mode, sets, p, err)
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := ev.EvalCircuits(cctx, c, cts, gates.CircuitOptions{}); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled context: %v", err)
	}
	if _, err := ev.EvalCircuits(cctx, c, nil, gates.CircuitOptions{}); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled context, no sets: %v", err)
	}
	var none *gates.Evaluator
	if _, err := none.EvalCircuits(ctx, c, cts, gates.CircuitOptions{}); !errors.Is(err, gates.ErrNoEvaluator) {
		t.Errorf("nil evaluator: %v", err)
	}
	o.Close()
	for _, mode := range []gates.XORMode{gates.XORLinear, gates.XORBootstrapped} {
		_, err := ev.EvalCircuits(ctx, c, cts, gates.CircuitOptions{XOR: mode})
		if !errors.Is(err, bootstrap.ErrClosed) || strings.Count(err.Error(), "gates:") != 1 {
			t.Errorf("%v, closed engine: %v (want bootstrap.ErrClosed, prefixed once)", mode, err)
		}
	}
	// A circuit of free gates alone fails too.
	free, err := gates.NewCircuit(gates.BristolFashion, 3, []int{1}, []int{2}, []gates.Gate{
		{Op: gates.OpNOT, In: [3]int{0}, Out: 1}, {Op: gates.OpCopy, In: [3]int{0}, Out: 2}})
	require.NoError(t, err)
	for _, mode := range []gates.XORMode{gates.XORLinear, gates.XORBootstrapped} {
		_, err := ev.EvalCircuitWith(ctx, free, [][]*tfhe.TLWE{cts[0][0][:1]}, gates.CircuitOptions{XOR: mode})
		if !errors.Is(err, bootstrap.ErrClosed) {
			t.Errorf("%v, free gates, closed engine: %v (want bootstrap.ErrClosed)", mode, err)
		}
	}
}

// panicky is an engine whose Bootstrap panics.
type panicky struct{ *oracle }

type enginePanicValue struct{}

func (panicky) Bootstrap(out, in []*tfhe.TLWE, mu torus.Torus32) error { panic(enginePanicValue{}) }

// TestEvalCircuitsEnginePanic: an engine that panics while a level runs
// (on a goroutine of the evaluation's own) panics in the caller's
// goroutine, where it can be recovered, with the engine's value.
func TestEvalCircuitsEnginePanic(t *testing.T) {
	f := fixtures(tfhe.TFHELib128)
	ev, err := gates.NewEvaluator(panicky{newOracle(f)})
	require.NoError(t, err)
	c, err := circuits.Load("adder64")
	require.NoError(t, err)
	cts, _ := randomSets(f, c, 2, rand.New(rand.NewPCG(25, 26)))
	for _, mode := range []gates.XORMode{gates.XORLinear, gates.XORBootstrapped} {
		func() {
			defer func() {
				if p := recover(); p != (enginePanicValue{}) {
					t.Errorf("%v: recovered %v, want the engine's panic", mode, p)
				}
			}()
			_, err := ev.EvalCircuits(context.Background(), c, cts, gates.CircuitOptions{XOR: mode})
			t.Errorf("%v: EvalCircuits returned (%v) past a panicking engine", mode, err)
		}()
	}
}
