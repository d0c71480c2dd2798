package gates_test

import (
	"context"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/goldfhe/goldfhe/gates"
	"github.com/goldfhe/goldfhe/tfhe"
	"github.com/goldfhe/goldfhe/torus"
	"github.com/stretchr/testify/require"
)

// TestMuxNoise measures the error of MUX outputs on the CPU engine (toy
// set) against tfhe.NoiseEstimate.MuxStdDev, the model by which a MUX
// output counts as two terms of a linear XOR and a gate reading one is
// counted as noisier. (The toy set's key switching dominates its noise, so
// there a MUX output is only slightly noisier than a gate's; in
// TFHELib128's model the blind rotation dominates.)
func TestMuxNoise(t *testing.T) {
	testMuxNoise(t, toyParams, 0.7, 1.3)
}

// rotationParams is the toy set with a finer bootstrapping gadget, a
// noisier bootstrapping key and finer key switching, so that blind
// rotation makes almost all of a gate output's error: there a MUX
// output's σ is about 1.4 times a gate's, and a model that counted one
// blind rotation in it, or three, would be off by a factor of 1.4 or more.
var rotationParams = tfhe.MustNewParams(tfhe.ParamsLiteral{
	Name: "toy-br", LWEDimension: 40, PolyDegree: 256, GLWEDimension: 2,
	BKLevels: 3, BKBaseLog: 7, KSLevels: 8, KSBaseLog: 2,
	LWEStdDev: 0x1p-20, BKStdDev: 0x1p-25, Note: "insecure, tests only",
})

// TestMuxNoiseRotationDominated is TestMuxNoise where the MUX model's two
// blind rotations show.
func TestMuxNoiseRotationDominated(t *testing.T) {
	e := rotationParams.NoiseEstimate()
	if two, one := math.Sqrt(2*e.BlindRotationVar+e.KeySwitchVar), math.Sqrt(e.BlindRotationVar+e.KeySwitchVar); two < 1.35*one {
		t.Fatalf("toy-br: two blind rotations and a key switching, σ %.3g, are not 1.35 times one, %.3g: the test could not tell them apart", two, one)
	}
	testMuxNoise(t, rotationParams, 0.8, 1.25)
}

func testMuxNoise(t *testing.T, p tfhe.Params, lo, hi float64) {
	f := fixtures(p)
	ev := f.cpuEvaluator(t)
	e := p.NoiseEstimate()
	const count = 192
	sel, a, b, cs, ca, cb := muxOperands(f, count)
	calls := make([]gates.Call, 2*count)
	for i := range count {
		calls[i] = gates.Call{Op: gates.OpMUX, A: cs[i], B: ca[i], C: cb[i], Out: tfhe.NewTLWE(p.LWEDimension())}
		calls[count+i] = gates.Call{Op: gates.OpAND, A: ca[i], B: cb[i], Out: tfhe.NewTLWE(p.LWEDimension())}
	}
	require.NoError(t, ev.Batch(calls))
	mu := torus.Encode(1, 8)
	sd := func(calls []gates.Call, want func(i int) bool) float64 {
		var sum2 float64
		for i, c := range calls {
			w := -mu
			if want(i) {
				w = mu
			}
			err := (f.sk.PhaseTLWE(c.Out) - w).Float64()
			sum2 += err * err
		}
		return math.Sqrt(sum2 / float64(len(calls)))
	}
	mux := sd(calls[:count], func(i int) bool { return gates.OpMUX.Eval(sel[i], a[i], b[i]) })
	gate := sd(calls[count:], func(i int) bool { return a[i] && b[i] })
	msg := fmt.Sprintf("%s: MUX σ %.3g (model %.3g, ratio %.2f), gate σ %.3g (model %.3g, ratio %.2f)", p.Name(),
		mux, e.MuxStdDev, mux/e.MuxStdDev, gate, e.BootstrapStdDev, gate/e.BootstrapStdDev)
	t.Log(msg)
	if mux > hi*e.MuxStdDev || mux < lo*e.MuxStdDev {
		t.Error(msg)
	}
	if gate > hi*e.BootstrapStdDev || gate < lo*e.BootstrapStdDev {
		t.Error(msg)
	}
}

// TestCircuitPlanMuxFailure: a circuit whose gates read MUX outputs
// reports the noisier gate's failure estimate, under both XOR modes, and
// evaluates correctly when a lone MUX output is refreshed for a sum's
// limit (a refresh of one term).
func TestCircuitPlanMuxFailure(t *testing.T) {
	g := func(op gates.Op, out int, in ...int) gates.Gate {
		x := gates.Gate{Op: op, Out: out}
		copy(x.In[:], in)
		return x
	}
	c, err := gates.NewCircuit(gates.BristolFashion, 13, []int{6}, []int{2}, []gates.Gate{
		g(gates.OpMUX, 6, 0, 1, 2), g(gates.OpMUX, 7, 3, 4, 5), g(gates.OpXOR, 8, 6, 7), g(gates.OpNOT, 9, 6), g(gates.OpCopy, 10, 7),
		g(gates.OpAND, 11, 8, 0), g(gates.OpAND, 12, 9, 10),
	})
	require.NoError(t, err)
	f := fixtures(toyParams)
	ev := f.cpuEvaluator(t)
	e := toyParams.NoiseEstimate()
	for _, tc := range []struct {
		opts gates.CircuitOptions
		want float64
	}{
		{gates.CircuitOptions{XOR: gates.XORBootstrapped}, e.Log2GateFailureMux(2)},
		{gates.CircuitOptions{MaxXORTerms: 2}, max(e.Log2XORSumFailure(2), e.Log2GateFailureMux(0))},
		{gates.CircuitOptions{MaxXORTerms: 4}, max(e.Log2XORSumFailure(4), e.Log2GateFailureMux(2))},
	} {
		plan, err := ev.PlanCircuit(c, tc.opts)
		require.NoError(t, err)
		if plan.Log2Failure != tc.want || plan.Log2Failure <= e.Log2GateFailure && tc.opts.MaxXORTerms != 2 {
			t.Errorf("%+v: Log2Failure 2^%.1f, want 2^%.1f (a plain gate 2^%.1f)", tc.opts, plan.Log2Failure, tc.want, e.Log2GateFailure)
		}
		for x := range 64 {
			in := gates.Uint64Bits(uint64(x), 6)
			want, _ := c.Eval(in)
			out, err := ev.EvalCircuitWith(context.Background(), c, [][]*tfhe.TLWE{f.encrypt(in...)}, tc.opts)
			require.NoError(t, err)
			if got := f.decrypt(t, out[0]...); !slices.Equal(got, want[0]) {
				t.Errorf("%+v, input %06b: %v, want %v", tc.opts, x, got, want[0])
			}
		}
	}
}

// TestCircuitPlanMajFailure: a MAJ's bootstrap sums three inputs, each a
// MUX output or not (a MUX output, or a NOT of one, through a NOT too), so
// a plan with MAJ gates reports Log2MajorityFailure of the most MUX
// outputs one MAJ reads (up to 3, past Log2GateFailureMux's 2), a MAJ's
// output counting as a gate's, not a MUX's; under both XOR modes, and the
// circuits evaluate right.
func TestCircuitPlanMajFailure(t *testing.T) {
	g := func(op gates.Op, out int, in ...int) gates.Gate {
		x := gates.Gate{Op: op, Out: out}
		copy(x.In[:], in)
		return x
	}
	f := fixtures(toyParams)
	ev := f.cpuEvaluator(t)
	e := toyParams.NoiseEstimate()
	for _, tc := range []struct {
		name                 string
		nwires               int
		gates                []gates.Gate
		bootstrapped, linear float64 // Log2Failure with every XOR bootstrapped, and with sums of 2 terms
	}{
		{"a MAJ of three MUX outputs, one through a NOT", 12, []gates.Gate{
			g(gates.OpMUX, 6, 0, 1, 2), g(gates.OpMUX, 7, 3, 4, 5), g(gates.OpMUX, 8, 1, 3, 5), g(gates.OpNOT, 9, 6),
			g(gates.OpMAJ, 10, 9, 7, 8), g(gates.OpAND, 11, 10, 0),
		}, e.Log2MajorityFailure(3), e.Log2MajorityFailure(3)},
		{"MAJ gates of MAJ outputs", 12, []gates.Gate{
			g(gates.OpMAJ, 6, 0, 1, 2), g(gates.OpMAJ, 7, 3, 4, 5), g(gates.OpMAJ, 8, 0, 3, 5),
			g(gates.OpMAJ, 9, 6, 7, 8), g(gates.OpAND, 10, 6, 7), g(gates.OpXOR, 11, 9, 10),
		}, e.Log2MajorityFailure(0), max(e.Log2MajorityFailure(0), e.Log2XORSumFailure(2))},
		{"a MAJ of a sum and two MUX outputs", 10, []gates.Gate{
			g(gates.OpMUX, 6, 0, 1, 2), g(gates.OpMUX, 7, 3, 4, 5), g(gates.OpXOR, 8, 0, 3),
			g(gates.OpMAJ, 9, 8, 6, 7),
		}, e.Log2MajorityFailure(2), max(e.Log2MajorityFailure(2), e.Log2XORSumFailure(2))},
	} {
		c, err := gates.NewCircuit(gates.BristolFashion, tc.nwires, []int{6}, []int{1}, tc.gates)
		require.NoErrorf(t, err, "%s", tc.name)
		for _, m := range []struct {
			opts gates.CircuitOptions
			want float64
		}{{gates.CircuitOptions{XOR: gates.XORBootstrapped}, tc.bootstrapped}, {gates.CircuitOptions{MaxXORTerms: 2}, tc.linear}} {
			plan, err := ev.PlanCircuit(c, m.opts)
			require.NoError(t, err)
			if plan.Log2Failure != m.want {
				t.Errorf("%s, %+v: Log2Failure 2^%.2f, want 2^%.2f", tc.name, m.opts, plan.Log2Failure, m.want)
			}
			for x := range 64 {
				in := gates.Uint64Bits(uint64(x), 6)
				want, _ := c.Eval(in)
				out, err := ev.EvalCircuitWith(context.Background(), c, [][]*tfhe.TLWE{f.encrypt(in...)}, m.opts)
				require.NoError(t, err)
				if got := f.decrypt(t, out[0]...); !slices.Equal(got, want[0]) {
					t.Errorf("%s, %+v, input %06b: %v, want %v", tc.name, m.opts, x, got, want[0])
				}
			}
		}
	}
}

// muxOperands returns count selector and data bits, every combination of
// the three in turn, and their encryptions.
func muxOperands(f *fixture, count int) (sel, a, b []bool, cs, ca, cb []*tfhe.TLWE) {
	sel, a, b = make([]bool, count), make([]bool, count), make([]bool, count)
	for i := range count {
		sel[i], a[i], b[i] = i%2 == 0, i%3 == 0, i%5 < 2
	}
	return sel, a, b, f.encrypt(sel...), f.encrypt(a...), f.encrypt(b...)
}
