package gates_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/goldfhe/goldfhe/gates"
	"github.com/goldfhe/goldfhe/tfhe"
	"github.com/goldfhe/goldfhe/torus"
	"github.com/stretchr/testify/require"
)

// recorder is the oracle engine that also keeps a copy of every sample it
// blind-rotates (Bootstrap and BootstrapNoKeySwitch), since the last take.
type recorder struct {
	*oracle
	mu  sync.Mutex
	ins [][]torus.Torus32
}

func (r *recorder) keep(in []*tfhe.TLWE) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, x := range in {
		r.ins = append(r.ins, slices.Clone(x.Value))
	}
}

func (r *recorder) Bootstrap(out, in []*tfhe.TLWE, mu torus.Torus32) error {
	r.keep(in)
	return r.oracle.Bootstrap(out, in, mu)
}

func (r *recorder) BootstrapNoKeySwitch(out, in []*tfhe.TLWE, mu torus.Torus32) error {
	r.keep(in)
	return r.oracle.BootstrapNoKeySwitch(out, in, mu)
}

func (r *recorder) take() [][]torus.Torus32 {
	r.mu.Lock()
	defer r.mu.Unlock()
	ins := r.ins
	r.ins = nil
	return ins
}

// checkDistinctRotations fails t unless the blind rotations of ins have
// distinct inputs wherever two forms allow it: an input and its negation
// are two forms of one input, so a class of at most two sites must use
// both, and a larger one must use both forms at least. (A MUX takes other
// halves where it can, so a larger class is rarer; strict asks that no
// input repeat at all.)
func checkDistinctRotations(t *testing.T, what string, ins [][]torus.Torus32, strict ...bool) {
	t.Helper()
	key := func(v []torus.Torus32) string { return fmt.Sprint(v) }
	neg := func(v []torus.Torus32) []torus.Torus32 {
		w := make([]torus.Torus32, len(v))
		for i := range v {
			w[i] = -v[i]
		}
		return w
	}
	exact := map[string]int{}
	for _, v := range ins {
		exact[key(v)]++
	}
	for _, v := range ins {
		pos, ng := exact[key(v)], exact[key(neg(v))]
		if slices.Equal(v, neg(v)) {
			continue
		}
		if sites := pos + ng; sites <= 2 && pos > 1 || sites > 2 && ng == 0 || len(strict) > 0 && strict[0] && pos > 1 {
			t.Errorf("%s: an input blind-rotated %d times and its negation %d times", what, pos, ng)
			return
		}
	}
}

// TestBlindRotationsDistinct: gates of one batch that bootstrap one input
// (AND(s, b) and MUX(s, b, c)'s first half; MUX(s, b, c) and MUX(s, b, d);
// a gate given twice) blind-rotate it and its negation, so that their
// outputs' errors are unrelated, and every output is still right. Through
// Batch, both XOR modes of a circuit, and random batches.
func TestBlindRotationsDistinct(t *testing.T) {
	f := fixtures(toyParams)
	rec := &recorder{oracle: newOracle(f)}
	ev, err := gates.NewEvaluator(rec)
	require.NoError(t, err)
	n := toyParams.LWEDimension()
	out := func() *tfhe.TLWE { return tfhe.NewTLWE(n) }

	// s, b, c, d, e = 1, 0, 1, 1, 0 and their complements.
	in := f.encrypt(true, false, true, true, false)
	s, b, c, d, e := in[0], in[1], in[2], in[3], in[4]
	nb := tfhe.NewTLWE(n)
	tfhe.NegTLWETo(nb, b) // ¬b made apart: ANDYN(s, b)'s sum, as MUX(s, ¬b, c)'s half
	calls := []gates.Call{
		{Op: gates.OpAND, A: s, B: b, Out: out()},
		{Op: gates.OpMUX, A: s, B: b, C: c, Out: out()},
		{Op: gates.OpMUX, A: s, B: d, C: e, Out: out()},
		{Op: gates.OpANDNY, A: s, B: e, Out: out()}, // the second half of the MUX above
		{Op: gates.OpOR, A: c, B: d, Out: out()},
		{Op: gates.OpOR, A: c, B: d, Out: out()},
		{Op: gates.OpXOR, A: d, B: e, Out: out()},
		{Op: gates.OpANDYN, A: s, B: b, Out: out()},
		{Op: gates.OpMUX, A: s, B: nb, C: c, Out: out()},
		{Op: gates.OpMUX, A: s, B: b, C: d, Out: out()}, // a third site of s + b − 1/8: both forms used
	}
	want := []bool{false, false, true, false, true, true, true, true, true, false}
	require.NoError(t, ev.Batch(calls))
	checkDistinctRotations(t, "Batch", rec.take())
	for i, cl := range calls {
		if got := f.decrypt(t, cl.Out)[0]; got != want[i] {
			t.Errorf("Batch call %d (%v): %v, want %v", i, cl.Op, got, want[i])
		}
	}
	// Three MUX gates and an AND of one selector and data sample: the
	// AND and the first MUX take s + b − 1/8 as it is and negated, the
	// other two MUX gates the halves of MUX(s, ¬b, ¬·), s − b − 1/8 as it
	// is and negated: no blind rotation shares an input.
	for _, sv := range []bool{true, false} {
		sel := f.encrypt(sv)[0]
		four := []gates.Call{
			{Op: gates.OpAND, A: sel, B: b, Out: out()},
			{Op: gates.OpMUX, A: sel, B: b, C: c, Out: out()},
			{Op: gates.OpMUX, A: sel, B: b, C: d, Out: out()},
			{Op: gates.OpMUX, A: sel, B: b, C: e, Out: out()},
		}
		require.NoError(t, ev.Batch(four))
		checkDistinctRotations(t, "AND and three MUX of one selector and data", rec.take(), true)
		// b, c, d, e = 0, 1, 1, 0
		want := []bool{false, false, false, false}
		if !sv {
			want = []bool{false, true, true, false}
		}
		for i := range four {
			if got := f.decrypt(t, four[i].Out)[0]; got != want[i] {
				t.Errorf("s = %v: AND and three MUX, call %d (%v): %v, want %v", sv, i, four[i].Op, got, want[i])
			}
		}
	}
	// The inputs are as given: the negated sites were the batch's copies.
	if got := f.decrypt(t, in...); !slices.Equal(got, []bool{true, false, true, true, false}) {
		t.Errorf("inputs changed: %v", got)
	}

	// A circuit of such gates, in both XOR modes: reading AND(s, b) and
	// MUX(s, b, c) together is where shared errors would add up.
	g := func(op gates.Op, o int, in ...int) gates.Gate {
		x := gates.Gate{Op: op, Out: o}
		copy(x.In[:], in)
		return x
	}
	circ, err := gates.NewCircuit(gates.BristolFashion, 11, []int{4}, []int{2}, []gates.Gate{
		g(gates.OpAND, 4, 0, 1), g(gates.OpMUX, 5, 0, 1, 2), g(gates.OpMUX, 6, 0, 1, 3),
		g(gates.OpXOR, 7, 4, 5), g(gates.OpXOR, 8, 5, 6),
		g(gates.OpXOR, 9, 7, 3), g(gates.OpAND, 10, 8, 2),
	})
	require.NoError(t, err)
	// evalCircuit evaluates circ on bits and checks its blind rotations
	// and its outputs.
	evalCircuit := func(what string, circ *gates.Circuit, bits []bool, opts gates.CircuitOptions) {
		t.Helper()
		want, _ := circ.Eval(bits)
		got, err := ev.EvalCircuitWith(context.Background(), circ, [][]*tfhe.TLWE{f.encrypt(bits...)}, opts)
		require.NoError(t, err)
		checkDistinctRotations(t, fmt.Sprintf("%s %+v", what, opts), rec.take())
		if g := f.decrypt(t, got[0]...); !slices.Equal(g, want[0]) {
			t.Errorf("%s %+v: %v, want %v", what, opts, g, want[0])
		}
	}
	for _, opts := range []gates.CircuitOptions{{XOR: gates.XORBootstrapped}, {MaxXORTerms: 2}, {}} {
		for x := range 16 {
			evalCircuit(fmt.Sprintf("circuit, input %04b", x), circ, gates.Uint64Bits(uint64(x), 4), opts)
		}
	}

	// Random circuits over few inputs, in both XOR modes: gates of one sum
	// must meet in one level for their batch to tell them apart.
	rng := rand.New(rand.NewPCG(7, 11))
	ops := []gates.Op{gates.OpAND, gates.OpNAND, gates.OpOR, gates.OpNOR, gates.OpXOR, gates.OpXNOR,
		gates.OpANDNY, gates.OpANDYN, gates.OpORNY, gates.OpORYN, gates.OpMUX, gates.OpMUX, gates.OpMAJ, gates.OpNOT}
	for round := range 30 {
		nin, ngates := 2+rng.IntN(3), 4+rng.IntN(30)
		gs := make([]gates.Gate, 0, ngates)
		for w := nin; w < nin+ngates; w++ {
			gt := gates.Gate{Op: ops[rng.IntN(len(ops))], Out: w}
			for k := range gt.Op.Arity() {
				gt.In[k] = rng.IntN(w)
			}
			gs = append(gs, gt)
		}
		circ, err := gates.NewCircuit(gates.BristolFashion, nin+ngates, []int{nin}, []int{min(ngates, 3)}, gs)
		require.NoError(t, err)
		bits := make([]bool, nin)
		for i := range bits {
			bits[i] = rng.IntN(2) == 1
		}
		for _, opts := range []gates.CircuitOptions{{XOR: gates.XORBootstrapped}, {MaxXORTerms: 3}} {
			evalCircuit(fmt.Sprintf("random circuit %d", round), circ, bits, opts)
		}
	}

	// Random batches over few samples, so that inputs repeat often.
	for round := range 20 {
		bits := []bool{rng.IntN(2) == 1, rng.IntN(2) == 1, rng.IntN(2) == 1}
		samples := f.encrypt(bits...)
		negs := make([]*tfhe.TLWE, len(samples))
		for i, x := range samples {
			negs[i] = tfhe.NewTLWE(n)
			tfhe.NegTLWETo(negs[i], x)
		}
		pick := func() (*tfhe.TLWE, bool) {
			i := rng.IntN(len(samples))
			if rng.IntN(4) == 0 {
				return negs[i], !bits[i]
			}
			return samples[i], bits[i]
		}
		calls := make([]gates.Call, 1+rng.IntN(12))
		want := make([]bool, len(calls))
		for i := range calls {
			op := ops[rng.IntN(len(ops))]
			var in [3]*tfhe.TLWE
			var v [3]bool
			for k := range op.Arity() {
				in[k], v[k] = pick()
			}
			calls[i] = gates.Call{Op: op, A: in[0], B: in[1], C: in[2], Out: out()}
			want[i] = op.Eval(v[0], v[1], v[2])
		}
		require.NoError(t, ev.Batch(calls))
		checkDistinctRotations(t, fmt.Sprintf("random batch %d", round), rec.take())
		for i, cl := range calls {
			if got := f.decrypt(t, cl.Out)[0]; got != want[i] {
				t.Errorf("random batch %d, call %d (%v): %v, want %v", round, i, cl.Op, got, want[i])
			}
		}
	}
}

// toyNoisyBK is toyParams with a noisier bootstrapping key, so that the
// blind rotation is most of a bootstrap's error, as in TFHELib128 with a
// grouped key.
var toyNoisyBK = tfhe.MustNewParams(tfhe.ParamsLiteral{
	Name: "toy-noisy-bk", LWEDimension: 40, PolyDegree: 256, GLWEDimension: 2,
	BKLevels: 3, BKBaseLog: 6, KSLevels: 6, KSBaseLog: 2,
	LWEStdDev: 0x1p-20, BKStdDev: 0x1p-22, Note: "insecure, tests only",
})

// TestSharedRotationErrors measures, on the CPU engine (toyNoisyBK, where
// the blind rotation is most of the error), the correlation of the errors of AND(s, b) and MUX(s, b, c) evaluated in one
// batch. One blind rotation of s + b − 1/8 for both would make it about
// BR/√((BR+KS)(2BR+KS)) (tfhe.NoiseEstimate's variances); distinct
// rotations leave it near 0.
func TestSharedRotationErrors(t *testing.T) {
	p := toyNoisyBK
	f := fixtures(p)
	ev := f.cpuEvaluator(t)
	e := p.NoiseEstimate()
	shared := e.BlindRotationVar / math.Sqrt((e.BlindRotationVar+e.KeySwitchVar)*(2*e.BlindRotationVar+e.KeySwitchVar))
	const count = 256
	sel, a, b, cs, ca, cb := muxOperands(f, count)
	calls := make([]gates.Call, 2*count)
	for i := range count {
		calls[2*i] = gates.Call{Op: gates.OpAND, A: cs[i], B: ca[i], Out: tfhe.NewTLWE(p.LWEDimension())}
		calls[2*i+1] = gates.Call{Op: gates.OpMUX, A: cs[i], B: ca[i], C: cb[i], Out: tfhe.NewTLWE(p.LWEDimension())}
	}
	require.NoError(t, ev.Batch(calls))
	mu := torus.Encode(1, 8)
	errOf := func(c *tfhe.TLWE, bit bool) float64 {
		w := -mu
		if bit {
			w = mu
		}
		return (f.sk.PhaseTLWE(c) - w).Float64()
	}
	var sxy, sxx, syy float64
	for i := range count {
		x := errOf(calls[2*i].Out, sel[i] && a[i])
		y := errOf(calls[2*i+1].Out, gates.OpMUX.Eval(sel[i], a[i], b[i]))
		sxy, sxx, syy = sxy+x*y, sxx+x*x, syy+y*y
	}
	corr := sxy / math.Sqrt(sxx*syy)
	msg := fmt.Sprintf("correlation %.3f of %d pairs (one shared blind rotation: about %.3f)", corr, count, shared)
	t.Log(msg)
	// The sample correlation of independent errors has a standard
	// deviation of about 1/√count = 0.0625: allow 4 of them.
	if math.Abs(corr) > 4/math.Sqrt(count) {
		t.Error(msg)
	}
}
