package gates_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/goldfhe/goldfhe/bootstrap"
	"github.com/goldfhe/goldfhe/gates"
	"github.com/goldfhe/goldfhe/gates/circuits"
	"github.com/goldfhe/goldfhe/tfhe"
	"github.com/stretchr/testify/require"
)

// TestAddUintOracle checks the adder's logic on every pair of values of 1
// to 4 bits and on 64-bit values whose carries run the whole width, with
// the oracle engine (the CPU engine runs it in TestAdder8CPU), and what it
// asks of the engine: w calls of at most two bootstraps, 2w in all.
func TestAddUintOracle(t *testing.T) {
	f := fixtures(tfhe.TFHELib128)
	o := newOracle(f)
	ev, _ := gates.NewEvaluator(o)
	add := func(x, y uint64, w int) {
		t.Helper()
		o.log()
		sum, err := ev.AddUint(f.encryptUint(t, x, w), f.encryptUint(t, y, w))
		require.NoError(t, err)
		require.Len(t, sum, w+1)
		bits := f.decrypt(t, sum...)
		got, carry := gates.BitsUint64(bits[:w]), bits[w]
		mask := uint64(1)<<w - 1 // w = 64: all ones
		if wantSum, wantCarry := (x+y)&mask, x > mask-y; got != wantSum || carry != wantCarry {
			t.Fatalf("%d-bit %d + %d = %d carry %v, want %d carry %v", w, x, y, got, carry, wantSum, wantCarry)
		}
		calls := o.log()
		bootstraps := 0
		for _, c := range calls {
			kind, n, _ := strings.Cut(c, ":")
			k, err := strconv.Atoi(n)
			require.NoError(t, err)
			if kind != "B" || k > 2 {
				t.Fatalf("%d-bit add: engine call %s, want bootstraps of at most 2 samples", w, c)
			}
			bootstraps += k
		}
		if len(calls) != w || bootstraps != 2*w {
			t.Fatalf("%d-bit add: %d engine calls of %d bootstraps, want %d of %d: %v", w, len(calls), bootstraps, w, 2*w, calls)
		}
	}
	for _, w := range []int{1, 8, 64} { // the ripple at every width on an engine without tiers
		named, err := ev.AddUintCircuit(w)
		require.NoError(t, err)
		ripple, err := gates.AdderCircuit(w)
		require.NoError(t, err)
		if !slices.Equal(named.Gates(), ripple.Gates()) {
			t.Errorf("%d bits: AddUintCircuit is not AdderCircuit on the CPU-like oracle", w)
		}
	}
	for w := 1; w <= 4; w++ {
		for x := range uint64(1) << w {
			for y := range uint64(1) << w {
				add(x, y, w)
			}
		}
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for _, pr := range [][2]uint64{{1<<64 - 1, 1}, {1<<64 - 1, 1<<64 - 1}, {1 << 63, 1 << 63}, {0, 0}, {rng.Uint64(), rng.Uint64()}} {
		add(pr[0], pr[1], 64)
	}
}

// TestAdderCircuit: AdderCircuit(w) adds in plaintext (every pair up to 5
// bits, random and edge pairs at 64), costs 2w bootstraps in w levels
// under XORLinear with the MAJ's failure figure as its worst, and refuses
// a width below 1.
func TestAdderCircuit(t *testing.T) {
	ev, _ := gates.NewEvaluator(newOracle(fixtures(tfhe.TFHELib128)))
	est := tfhe.TFHELib128.NoiseEstimateGrouped(tfhe.MaxGrouping) // the oracle says no grouping: the noisiest
	rng := rand.New(rand.NewPCG(5, 6))
	for _, w := range []int{1, 2, 3, 4, 5, 8, 33, 64} {
		c, err := gates.AdderCircuit(w)
		require.NoError(t, err)
		checkAdderEval(t, c, w, adderPairs(rng, w, 5), "ripple")
		plan, err := ev.PlanCircuit(c, gates.CircuitOptions{})
		require.NoError(t, err)
		wantFail := est.Log2MajorityFailure(0)
		if w == 1 { // no MAJ: an AND and a refresh of two terms
			wantFail = max(est.Log2GateFailure, est.Log2XORSumFailure(2))
		}
		if plan.Bootstraps != 2*w || plan.Levels-1 != w || plan.Log2Failure != wantFail {
			t.Errorf("%d bits: %d bootstraps in %d levels, failure 2^%.1f; want %d in %d, 2^%.1f", w, plan.Bootstraps, plan.Levels-1, plan.Log2Failure, 2*w, w, wantFail)
		}
	}
	// The doc's comparison: the same adder of AND, OR and bootstrapped XOR.
	for _, w := range []int{1, 8, 64} {
		plan, err := ev.PlanCircuit(andOrAdder(t, w), gates.CircuitOptions{XOR: gates.XORBootstrapped})
		require.NoError(t, err)
		if plan.Bootstraps != 5*w-3 || plan.Levels-1 != 2*w-1 {
			t.Errorf("%d bits of AND and OR: %d bootstraps in %d levels, want %d in %d", w, plan.Bootstraps, plan.Levels-1, 5*w-3, 2*w-1)
		}
	}
	for _, w := range []int{0, -1} {
		_, err := gates.AdderCircuit(w)
		var ce *gates.CircuitError
		if !errors.As(err, &ce) {
			t.Errorf("AdderCircuit(%d): %v, want a *CircuitError", w, err)
		}
	}
}

// TestAddUintRepeats: a bit of b that is a's bit of the same position
// again (the sample itself, a copy, a NOT made apart) or a Constant is
// read as such, as Batch reads a gate's inputs, so that no bootstrap reads
// a sample twice: a + a would bootstrap 2·a_i + carry (twice a_i's error)
// and refresh 4·a_0 + 1/4. What folds costs nothing (a + a and a + ¬a no
// bootstrap at all); each bit of b of its own costs its two bootstraps,
// and a constant bit two where the carry it meets is a sample. Random
// mixes of such bits at 8 bits, every sum right.
func TestAddUintRepeats(t *testing.T) {
	f := fixtures(tfhe.TFHELib128)
	rec := &recorder{oracle: newOracle(f)}
	ev, err := gates.NewEvaluator(rec)
	require.NoError(t, err)
	const w = 8
	n := tfhe.TFHELib128.LWEDimension()
	rng := rand.New(rand.NewPCG(11, 12))
	const (
		fresh = iota
		same
		negated
		constFalse
		constTrue
	)
	for round := range 120 {
		x := rng.Uint64() & (1<<w - 1)
		a := f.encryptUint(t, x, w)
		b := make([]*tfhe.TLWE, w)
		var y uint64
		want := 0                          // bootstraps
		carrySample, carry := false, false // the carry into bit i: a sample, or the constant carry
		for i := range w {
			xi := x>>i&1 == 1
			kind := rng.IntN(5)
			switch round {
			case 0:
				kind = same // a + a
			case 1:
				kind = negated // a + ¬a
			}
			var yi bool
			switch kind {
			case fresh:
				yi = rng.IntN(2) == 1
				b[i] = f.encrypt(yi)[0]
				want += 2
				carrySample = true
			case same:
				yi, b[i] = xi, a[i]
				if rng.IntN(2) == 0 {
					b[i] = a[i].Copy()
				}
				carrySample = true // the carry out is a_i
			case negated:
				yi, b[i] = !xi, tfhe.NewTLWE(n)
				tfhe.NegTLWETo(b[i], a[i]) // the carry out is the carry in
			default:
				yi = kind == constTrue
				b[i], err = ev.Constant(yi)
				require.NoError(t, err)
				switch {
				case carrySample: // MAJ(a_i, k, c) is AND or OR of a_i and c; a_i ⊕ c ⊕ k refreshed
					want += 2
				case carry != yi:
					carrySample = true // MAJ(a_i, ¬k, k) is a_i
				}
			}
			if yi {
				y |= 1 << i
			}
		}
		rec.take()
		sum, err := ev.AddUint(a, b)
		require.NoError(t, err)
		bits := f.decrypt(t, sum...)
		if got, c := gates.BitsUint64(bits[:w]), bits[w]; got != (x+y)&(1<<w-1) || c != (x+y >= 1<<w) {
			t.Fatalf("round %d: %d + %d = %d carry %v", round, x, y, got, c)
		}
		if got := len(rec.take()); got != want {
			t.Fatalf("round %d: %d + %d took %d bootstraps, want %d", round, x, y, got, want)
		}
	}
}

func TestAddUintErrors(t *testing.T) {
	var zero gates.Evaluator
	if _, err := zero.AddUint(nil, nil); !errors.Is(err, gates.ErrNoEvaluator) {
		t.Errorf("zero Evaluator: err = %v, want ErrNoEvaluator", err)
	}
	if _, err := zero.AddUintCircuit(8); !errors.Is(err, gates.ErrNoEvaluator) {
		t.Errorf("zero Evaluator: AddUintCircuit err = %v, want ErrNoEvaluator", err)
	}
	f := fixtures(tfhe.TFHELib128)
	ev, _ := gates.NewEvaluator(newOracle(f))
	a := f.encrypt(true, false)
	for _, c := range []struct{ a, b []*tfhe.TLWE }{{nil, nil}, {a, a[:1]}, {a[:1], a}} {
		if _, err := ev.AddUint(c.a, c.b); err == nil {
			t.Errorf("AddUint(%d bits, %d bits): no error", len(c.a), len(c.b))
		}
	}
	// A missing or foreign bit is named by operand and position.
	other := fixtures(toyParams)
	for _, c := range []struct {
		a, b []*tfhe.TLWE
		want string
	}{
		{[]*tfhe.TLWE{a[0], nil}, a, "AddUint: bit 1 of a is nil"},
		{a, []*tfhe.TLWE{a[0], other.encrypt(true)[0]}, "AddUint: bit 1 of b has dimension"},
	} {
		if _, err := ev.AddUint(c.a, c.b); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("AddUint: %v, want %q", err, c.want)
		}
	}
}

// andOrAdder is the ripple-carry adder AddUint evaluated before MAJ: sum
// bit p ⊕ carry with p = a ⊕ b, carry (a ∧ b) ∨ (p ∧ carry). Evaluated
// with XORBootstrapped it takes AddUint's old engine calls, 5w − 3
// bootstraps in 2w − 1 calls.
func andOrAdder(t testing.TB, w int) *gates.Circuit {
	bld := gates.NewBuilder(w, w)
	x, y := bld.Input(0), bld.Input(1)
	sum := make([]int, w+1)
	carry := -1
	for i := range w {
		p, g := bld.Gate(gates.OpXOR, x[i], y[i]), bld.Gate(gates.OpAND, x[i], y[i])
		if i == 0 {
			sum[0], carry = p, g
			continue
		}
		sum[i] = bld.Gate(gates.OpXOR, p, carry)
		carry = bld.Gate(gates.OpOR, g, bld.Gate(gates.OpAND, p, carry))
	}
	sum[w] = carry
	c, err := bld.Build(sum)
	require.NoError(t, err)
	return c
}

// BenchmarkAdder times one addition of two w-bit values, the adders
// evaluated as circuits: adder=ripple, AdderCircuit (MAJ carries, linear
// XOR); adder=select, the carry-select adder of blocks of ⌈√w⌉ bits;
// adder=andor, andOrAdder with every XOR bootstrapped (AddUint before
// MAJ); on TFHELib128 grouped by 3, on the CPU engine at 8 and 32 bits
// and, where a GPU is found, on the GPU engine at 8, 16, 32 and 64 bits.
// Compare the adders as ratios within one run.
//
//	go test -run '^$' -bench Adder -benchtime 5x ./gates
func BenchmarkAdder(b *testing.B) {
	f := fixtures(tfhe.TFHELib128)
	ck, err := tfhe.GenerateCloudKeyFromSeed(f.sk, seed("bench-adder-ck"), tfhe.WithGrouping(3))
	require.NoError(b, err)
	engines := []struct {
		name string
		bits []int
		make func() (bootstrap.Engine, error)
	}{
		{"cpu", []int{8, 32}, func() (bootstrap.Engine, error) { return bootstrap.NewCPU(ck, bootstrap.CPUOptions{}) }},
		{"gpu", []int{8, 16, 32, 64}, func() (bootstrap.Engine, error) { return bootstrap.NewGPU(ck, bootstrap.GPUOptions{}) }},
	}
	for _, e := range engines {
		b.Run("engine="+e.name, func(b *testing.B) {
			eng, err := e.make()
			if errors.Is(err, bootstrap.ErrNoGPU) {
				b.Skipf("no GPU: %v", err)
			}
			require.NoError(b, err)
			defer eng.Close()
			ev, err := gates.NewEvaluator(eng)
			require.NoError(b, err)
			for _, w := range e.bits {
				x, y := f.encryptUint(b, 1<<w-1, w), f.encryptUint(b, 1, w) // every carry set
				ripple, err := gates.AdderCircuit(w)
				require.NoError(b, err)
				sel, err := gates.CarrySelectAdder(w, int(math.Ceil(math.Sqrt(float64(w)))))
				require.NoError(b, err)
				for _, a := range []struct {
					name string
					c    *gates.Circuit
					xor  gates.XORMode
				}{{"ripple", ripple, gates.XORLinear}, {"select", sel, gates.XORLinear}, {"andor", andOrAdder(b, w), gates.XORBootstrapped}} {
					b.Run(fmt.Sprintf("adder=%s/bits=%d", a.name, w), func(b *testing.B) {
						opts := gates.CircuitOptions{XOR: a.xor}
						for b.Loop() {
							if _, err := ev.EvalCircuitWith(context.Background(), a.c, [][]*tfhe.TLWE{x, y}, opts); err != nil {
								b.Fatal(err)
							}
						}
					})
				}
			}
		})
	}
}

// noisyParams is CuFHE80's shape with a noisier bootstrapping key: with a
// plain key a MAJ fails with about 2^−58, past DefaultXORFailureLog2,
// where a two-input gate is at 2^−85 and a sum of two terms at 2^−86 (the
// default bound).
var noisyParams = tfhe.MustNewParams(tfhe.ParamsLiteral{
	Name: "noisy", LWEDimension: 500, PolyDegree: 1024, GLWEDimension: 1,
	BKLevels: 2, BKBaseLog: 10, KSLevels: 8, KSBaseLog: 2,
	LWEStdDev: 0x1p-15, BKStdDev: 0x1.4p-26, Note: "insecure, tests only",
})

// TestMajoritiesNoiseGuard: full adders' carries are planned as MAJ
// gates where a MAJ's failure stays within 2^DefaultXORFailureLog2 or
// within that of the sums the bound allows; elsewhere the netlist's
// gates are planned, so the estimate is not pushed past both.
func TestMajoritiesNoiseGuard(t *testing.T) {
	adder, err := circuits.Load("adder64")
	require.NoError(t, err)
	e := noisyParams.NoiseEstimate()
	require.Greater(t, e.Log2MajorityFailure(0), float64(gates.DefaultXORFailureLog2))
	for _, tc := range []struct {
		p     tfhe.Params
		terms int // 0: the default
		fused bool
	}{
		{tfhe.TFHELib128, 0, true},
		{tfhe.CuFHE80, 0, true}, // grouped by 3 (the noisiest): 2^−82 for a MAJ
		{noisyParams, 0, false}, // a plain key, below
		{noisyParams, 3, false}, // a MAJ (2^−58.3) a little noisier than a sum of 3 (2^−58.5)
		{noisyParams, 4, true},
	} {
		var eng bootstrap.Engine = newOracle(fixtures(tc.p)) // grouping unknown: the noisiest
		if tc.p.Name() == noisyParams.Name() {
			eng = groupedOracle{newOracle(fixtures(tc.p)), 1}
		}
		ev, err := gates.NewEvaluator(eng)
		require.NoError(t, err)
		plan, err := ev.PlanCircuit(adder, gates.CircuitOptions{MaxXORTerms: tc.terms})
		require.NoError(t, err)
		if fused := plan.Majorities > 0; fused != tc.fused {
			t.Errorf("%s, %d terms: %d carries as MAJ (failure 2^%.1f), want fused %v", tc.p.Name(), plan.MaxXORTerms, plan.Majorities, plan.Log2Failure, tc.fused)
		}
		if !tc.fused && plan.Log2Failure > max(float64(gates.DefaultXORFailureLog2), e.Log2XORSumFailure(plan.MaxXORTerms)) {
			t.Errorf("%s, %d terms: failure 2^%.1f", tc.p.Name(), plan.MaxXORTerms, plan.Log2Failure)
		}
	}
}

// TestAddUintCarrySelect: on an engine with batch tiers AddUint makes the
// carry-select adder of blocks of ⌈√w⌉ bits from 8 bits on and the ripple
// below: right sums at every width from 1 to 20 and at 32 and 64 (all
// carries set, and random), in the engine calls and bootstraps of that
// adder's plan (64 bits: 16 calls); and a + a, a + ¬a make no bootstrap.
func TestAddUintCarrySelect(t *testing.T) {
	f := fixtures(tfhe.TFHELib128)
	o := newOracle(f)
	ev, err := gates.NewEvaluator(tieredOracle{o, []int{16, 60, 66, 132, 264}}) // an H100's, grouped by 3
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(13, 14))
	widths := []int{32, 64}
	for w := 1; w <= 20; w++ {
		widths = append(widths, w)
	}
	for _, w := range widths {
		c, err := gates.AdderCircuit(w)
		if w >= 8 {
			k := int(math.Ceil(math.Sqrt(float64(w))))
			c, err = gates.CarrySelectAdder(w, k)
		}
		require.NoError(t, err)
		// AddUintCircuit names the same adder, gate for gate.
		named, err := ev.AddUintCircuit(w)
		require.NoError(t, err)
		if !slices.Equal(named.Gates(), c.Gates()) {
			t.Errorf("%d bits: AddUintCircuit is not the adder AddUint makes", w)
		}
		plan, err := ev.PlanCircuit(c, gates.CircuitOptions{})
		require.NoError(t, err)
		if w == 64 && plan.Levels-1 != 16 {
			t.Errorf("64 bits: %d levels, want 16", plan.Levels-1)
		}
		mask := uint64(1)<<w - 1
		for _, pr := range [][2]uint64{{mask, 1}, {rng.Uint64() & mask, rng.Uint64() & mask}} {
			o.log()
			sum, err := ev.AddUint(f.encryptUint(t, pr[0], w), f.encryptUint(t, pr[1], w))
			require.NoError(t, err)
			bits := f.decrypt(t, sum...)
			if got, carry := gates.BitsUint64(bits[:w]), bits[w]; got != (pr[0]+pr[1])&mask || carry != (pr[0] > mask-pr[1]) {
				t.Fatalf("%d bits: %d + %d = %d carry %v", w, pr[0], pr[1], got, carry)
			}
			calls, bootstraps := o.log(), 0
			for _, call := range calls {
				_, n, _ := strings.Cut(call, ":")
				k, err := strconv.Atoi(n)
				require.NoError(t, err)
				bootstraps += k
			}
			if len(calls) != plan.Levels-1 || bootstraps != plan.Bootstraps {
				t.Fatalf("%d bits: %d engine calls of %d bootstraps, want the plan's %d of %d", w, len(calls), bootstraps, plan.Levels-1, plan.Bootstraps)
			}
		}
	}
	const w = 16
	x := rng.Uint64() & (1<<w - 1)
	a := f.encryptUint(t, x, w)
	neg := make([]*tfhe.TLWE, w)
	for i := range a {
		neg[i] = tfhe.NewTLWE(a[i].Dim())
		tfhe.NegTLWETo(neg[i], a[i])
	}
	for _, tc := range []struct {
		name string
		b    []*tfhe.TLWE
		want uint64
	}{{"a + a", a, 2 * x}, {"a + ¬a", neg, 1<<w - 1}} {
		o.log()
		sum, err := ev.AddUint(a, tc.b)
		require.NoError(t, err)
		if got := gates.BitsUint64(f.decrypt(t, sum...)); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
		if calls := o.log(); len(calls) != 0 {
			t.Errorf("%s: engine calls %v, want none", tc.name, calls)
		}
	}
}

// TestCarrySelectAdder: the carry-select adder adds in plaintext for every
// block size (every pair of values up to 6 bits; edge and random pairs at
// 17, 33 and 64), in at most k + ⌈w/k⌉ levels of at most 4w bootstraps
// under XORLinear.
func TestCarrySelectAdder(t *testing.T) {
	ev, _ := gates.NewEvaluator(newOracle(fixtures(tfhe.TFHELib128)))
	rng := rand.New(rand.NewPCG(15, 16))
	for _, w := range []int{2, 3, 4, 5, 6, 17, 33, 64} {
		for k := 1; k < w; k++ {
			c, err := gates.CarrySelectAdder(w, k)
			require.NoError(t, err)
			checkAdderEval(t, c, w, adderPairs(rng, w, 6), fmt.Sprintf("blocks of %d", k))
			plan, err := ev.PlanCircuit(c, gates.CircuitOptions{})
			require.NoError(t, err)
			if maxLevels := k + (w+k-1)/k; plan.Levels-1 > maxLevels || plan.Bootstraps > 4*w {
				t.Errorf("%d bits, blocks of %d: %d levels, %d bootstraps; want at most %d and %d", w, k, plan.Levels-1, plan.Bootstraps, maxLevels, 4*w)
			}
		}
	}
}

// tieredRecorder is the recorder (blind-rotation inputs kept) reporting
// batch tiers, so that AddUint takes the carry-select adder on it.
type tieredRecorder struct {
	*recorder
	tiers []int
}

func (r tieredRecorder) BatchTiers() []int { return r.tiers }

// TestAddUintCarrySelectRepeats: with batch tiers, operands whose bits
// repeat (the same sample, a copy, a NOT made apart) or are constants (in
// a and in b) add right, no blind rotation repeats an input (so no MAJ of
// the selection reads c0 and c1 of one sample), and AddUint never makes
// more engine calls than the ripple-carry adder would (an engine without
// tiers evaluating the same operands), nor as many with more bootstraps.
// a + 16 of 8 bits ripples: 3 calls, where the carry-select adder
// takes 5 (each selection of a constant carry in an AND or OR of c0, c1).
func TestAddUintCarrySelectRepeats(t *testing.T) {
	f := fixtures(tfhe.TFHELib128)
	rec := &recorder{oracle: newOracle(f)}
	ev, err := gates.NewEvaluator(tieredRecorder{rec, []int{16, 60, 66, 132, 264}})
	require.NoError(t, err)
	ripple := newOracle(f)
	evR, err := gates.NewEvaluator(ripple)
	require.NoError(t, err)
	n := tfhe.TFHELib128.LWEDimension()
	rng := rand.New(rand.NewPCG(17, 18))
	count := func(calls []string) (bootstraps int) {
		for _, call := range calls {
			_, k, _ := strings.Cut(call, ":")
			v, err := strconv.Atoi(k)
			require.NoError(t, err)
			bootstraps += v
		}
		return bootstraps
	}
	add := func(what string, a, b []*tfhe.TLWE, x, y uint64) (calls int) {
		t.Helper()
		w := len(a)
		rec.take()
		rec.oracle.log()
		sum, err := ev.AddUint(a, b)
		require.NoError(t, err)
		mask := uint64(1)<<w - 1
		bits := f.decrypt(t, sum...)
		if got, c := gates.BitsUint64(bits[:w]), bits[w]; got != (x+y)&mask || c != (x > mask-y) {
			t.Fatalf("%s: %d + %d = %d carry %v", what, x, y, got, c)
		}
		checkDistinctRotations(t, what, rec.take(), true)
		sel := rec.oracle.log()
		ripple.log()
		_, err = evR.AddUint(a, b)
		require.NoError(t, err)
		rip := ripple.log()
		if len(sel) > len(rip) || len(sel) == len(rip) && count(sel) > count(rip) {
			t.Errorf("%s: %d engine calls of %d bootstraps, the ripple's %d of %d", what, len(sel), count(sel), len(rip), count(rip))
		}
		return len(sel)
	}
	for round := range 200 {
		w := 8 + rng.IntN(13)
		if round%20 == 0 {
			w = 32 << (round / 20 % 2) // 32 and 64
		}
		a, b := make([]*tfhe.TLWE, w), make([]*tfhe.TLWE, w)
		var x, y uint64
		for i := range w {
			xi := rng.IntN(2) == 1
			if rng.IntN(6) == 0 {
				a[i], err = ev.Constant(xi)
				require.NoError(t, err)
			} else {
				a[i] = f.encrypt(xi)[0]
			}
			var yi bool
			switch rng.IntN(5) {
			case 0, 1:
				yi = rng.IntN(2) == 1
				b[i] = f.encrypt(yi)[0]
			case 2:
				yi, b[i] = xi, a[i]
				if rng.IntN(2) == 0 {
					b[i] = a[i].Copy()
				}
			case 3:
				yi, b[i] = !xi, tfhe.NewTLWE(n)
				tfhe.NegTLWETo(b[i], a[i])
			default:
				yi = rng.IntN(2) == 1
				b[i], err = ev.Constant(yi)
				require.NoError(t, err)
			}
			if xi {
				x |= 1 << i
			}
			if yi {
				y |= 1 << i
			}
		}
		add(fmt.Sprintf("round %d (%d bits)", round, w), a, b, x, y)
	}
	const w = 8
	x := rng.Uint64() & (1<<w - 1)
	k := make([]*tfhe.TLWE, w)
	for i := range k {
		k[i], err = ev.Constant(i == 4)
		require.NoError(t, err)
	}
	if calls := add("a + 16", f.encryptUint(t, x, w), k, x, 16); calls != 3 {
		t.Errorf("a + 16 of 8 bits: %d engine calls, want the ripple's 3", calls)
	}
}

// TestCarrySelectAdderNoise: each bootstrap of the carry-select adder
// fails as often as the ripple-carry adder's noisiest (a MAJ of three
// gate outputs, sums of at most three terms, no MUX output read), at every
// grouping of the shipped sets' noise.
func TestCarrySelectAdderNoise(t *testing.T) {
	for _, p := range []tfhe.Params{tfhe.TFHELib128, tfhe.CuFHE80} {
		f := fixtures(p)
		for g := 1; g <= 3; g++ {
			ev, err := gates.NewEvaluator(groupedOracle{newOracle(f), g})
			require.NoError(t, err)
			for _, w := range []int{8, 17, 64} {
				r, err := gates.AdderCircuit(w)
				require.NoError(t, err)
				s, err := gates.CarrySelectAdder(w, int(math.Ceil(math.Sqrt(float64(w)))))
				require.NoError(t, err)
				pr, err := ev.PlanCircuit(r, gates.CircuitOptions{})
				require.NoError(t, err)
				ps, err := ev.PlanCircuit(s, gates.CircuitOptions{})
				require.NoError(t, err)
				if ps.Log2Failure != pr.Log2Failure || ps.LargestSum != pr.LargestSum {
					t.Errorf("%s grouped by %d, %d bits: carry-select 2^%.1f (sums of %d), ripple 2^%.1f (%d)",
						p.Name(), g, w, ps.Log2Failure, ps.LargestSum, pr.Log2Failure, pr.LargestSum)
				}
			}
		}
	}
}

// adderPairs returns the operand pairs an adder of w bits is checked on:
// every pair up to exhaustive bits, else all carries set (x + 1 with x
// all ones, and x + x), x + 1 with x all ones but bit 0, and a random pair.
func adderPairs(rng *rand.Rand, w, exhaustive int) [][2]uint64 {
	mask := uint64(1)<<w - 1
	if w > exhaustive {
		return [][2]uint64{{mask, 1}, {mask, mask}, {mask ^ 1, 1}, {rng.Uint64() & mask, rng.Uint64() & mask}}
	}
	var pairs [][2]uint64
	for x := range mask + 1 {
		for y := range mask + 1 {
			pairs = append(pairs, [2]uint64{x, y})
		}
	}
	return pairs
}

// checkAdderEval checks in plaintext that c, an adder of two w-bit values
// (what), gives each pair's w+1-bit sum.
func checkAdderEval(t *testing.T, c *gates.Circuit, w int, pairs [][2]uint64, what string) {
	t.Helper()
	mask := uint64(1)<<w - 1
	for _, pr := range pairs {
		out, err := c.Eval(gates.Uint64Bits(pr[0], w), gates.Uint64Bits(pr[1], w))
		require.NoError(t, err)
		if got := gates.BitsUint64(out[0][:w]); got != (pr[0]+pr[1])&mask || out[0][w] != (pr[0] > mask-pr[1]) {
			t.Fatalf("%d bits, %s: %d + %d = %d carry %v", w, what, pr[0], pr[1], got, out[0][w])
		}
	}
}
