package gates_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/goldfhe/goldfhe/bootstrap"
	"github.com/goldfhe/goldfhe/gates"
	"github.com/goldfhe/goldfhe/tfhe"
	"github.com/goldfhe/goldfhe/torus"
	"github.com/stretchr/testify/require"
)

// ksBiasParams is an insecure set whose output error is almost all key
// switching with one-bit digits, where an error mean shared by a cloud
// key's outputs would be largest: half of key switching's variance, were
// the digits always in [−1, 1) (the row only ever added; tfhe keySwitch
// balances them). It is the toy set with one-bit key-switching digits and
// σ_lwe = 2^−12.
var ksBiasParams = func() tfhe.Params {
	lit := toyParams.Literal()
	lit.Name, lit.KSLevels, lit.KSBaseLog, lit.LWEStdDev = "toy-ks1", 12, 1, 0x1p-12
	return tfhe.MustNewParams(lit)
}()

// outputErrors returns each output's phase error against ±1/8 as a real.
func outputErrors(t *testing.T, sk *tfhe.SecretKey, outs []*tfhe.TLWE, want []bool) []float64 {
	t.Helper()
	errs := make([]float64, len(outs))
	for i, c := range outs {
		errs[i] = (sk.PhaseTLWE(c) - tfhe.EncodeBool(want[i])).Float64()
	}
	return errs
}

func meanSE(xs []float64) (mean, se float64) {
	var s, s2 float64
	for _, x := range xs {
		s += x
		s2 += x * x
	}
	n := float64(len(xs))
	mean = s / n
	return mean, math.Sqrt((s2/n - mean*mean) / n)
}

// TestGateOutputsUnbiased: under one cloud key, the engine's Bootstrap
// outputs and the evaluator's AND and, apart, MUX outputs (their key
// switching runs alone) have error means within four standard errors of 0,
// and sums of T of them of one kind (as a linear XOR adds them) have about
// T times one output's mean square error, as the noise model counts. The
// control: the engine's KeySwitch of samples whose mask words are all even
// (decomposed with one-sided digits, tfhe keySwitch) shows this key's
// would-be shared mean at least six standard errors from 0, so the checks
// can see one; before key switching balanced its digits, the engine's
// Bootstrap outputs here were 12 standard errors off and their sums 2.06
// times the independent figure (with half as many calls and math/rand's
// normal sampler). With 1,024 outputs of a kind, 128 sums, the ratio's
// sampling spread is about ±0.13 (over 12 cloud keys: 0.77–1.19); half
// as many outputs, ±0.18, once reached 1.64 by chance.
func TestGateOutputsUnbiased(t *testing.T) {
	p := ksBiasParams
	sk, err := tfhe.GenerateSecretKeyFromSeed(p, seed("bias/sk"))
	require.NoError(t, err)
	ck, err := tfhe.GenerateCloudKeyFromSeed(sk, seed("bias/ck4"))
	require.NoError(t, err)
	enc, err := tfhe.NewEncryptorFromSeed(sk, seed("bias/enc"))
	require.NoError(t, err)
	eng, err := bootstrap.NewCPU(ck, bootstrap.CPUOptions{})
	require.NoError(t, err)
	defer eng.Close()
	ev, err := gates.NewEvaluator(eng)
	require.NoError(t, err)
	const m, terms = 2048, 8
	rng := rand.New(rand.NewPCG(7, 8))
	calls := make([]gates.Call, m)
	want := make([]bool, m)
	in := make([]*tfhe.TLWE, m) // the same AND inputs for the engine alone
	for i := range calls {
		a, b := rng.IntN(2) == 1, rng.IntN(2) == 1
		op := gates.OpAND
		if i%2 == 1 {
			op = gates.OpMUX // its key switching runs apart
		}
		c := rng.IntN(2) == 1
		cts, err := gates.EncryptBits(enc, []bool{a, b, c})
		require.NoError(t, err)
		calls[i] = gates.Call{Op: op, Out: tfhe.NewTLWE(p.LWEDimension()), A: cts[0], B: cts[1], C: cts[2]}
		want[i] = op.Eval(a, b, c)
		// AND's input: a + b − 1/8.
		in[i] = tfhe.NewTLWE(p.LWEDimension())
		tfhe.AddTLWETo(in[i], cts[0], cts[1])
		in[i].SetB(in[i].B() - torus.Encode(1, 8))
	}
	require.NoError(t, ev.Batch(calls))
	outs := make([]*tfhe.TLWE, m)
	for i := range outs {
		outs[i] = calls[i].Out
	}
	direct := make([]*tfhe.TLWE, m)
	for i := range direct {
		direct[i] = tfhe.NewTLWE(p.LWEDimension())
	}
	require.NoError(t, eng.Bootstrap(direct, in, torus.Encode(1, 8)))
	wantAND := make([]bool, m)
	for i := range calls {
		wantAND[i] = sk.DecryptBool(calls[i].A) && sk.DecryptBool(calls[i].B)
	}
	eg, ee := outputErrors(t, sk, outs, want), outputErrors(t, sk, direct, wantAND)
	// The control: one-sided digits (even mask words, b corrected to keep
	// the phase) through the engine's key switching.
	kn := p.ExtractedLWEDimension()
	ext, ks := make([]*tfhe.TLWE, m), make([]*tfhe.TLWE, m)
	wantKS := make([]bool, m)
	for i := range ext {
		wantKS[i] = rng.IntN(2) == 1
		ext[i] = tfhe.NewTLWE(kn)
		enc.EncryptExtractedTLWETo(ext[i], tfhe.EncodeBool(wantKS[i]), 0x1p-32)
		for c, a := range ext[i].A() {
			ext[i].Value[c] = a &^ 1
			ext[i].Value[kn] -= torus.Torus32(a&1) * torus.Torus32(sk.ExtractedLWEKey()[c])
		}
		ks[i] = tfhe.NewTLWE(p.LWEDimension())
	}
	require.NoError(t, eng.KeySwitch(ks, ext))
	mc, sc := meanSE(outputErrors(t, sk, ks, wantKS))
	t.Logf("mean error of one-sided key switching (the control): %.2e (%.1f standard errors)", mc, mc/sc)
	if math.Abs(mc) < 6*sc {
		t.Fatalf("one-sided key switching shows no error mean under this key (%.1f standard errors): the test could not see one; pick another cloud key seed", mc/sc)
	}
	kinds := []struct {
		name string
		errs []float64
	}{{"engine's Bootstrap", ee}, {"evaluator's AND", nil}, {"evaluator's MUX", nil}}
	for i := range eg {
		kinds[1+i%2].errs = append(kinds[1+i%2].errs, eg[i])
	}
	for _, k := range kinds {
		mg, sg := meanSE(k.errs)
		t.Logf("mean output error: the %s %.2e (%.1f standard errors)", k.name, mg, mg/sg)
		if math.Abs(mg) > 4*sg {
			t.Errorf("the %s outputs have error mean %.2e, %.1f standard errors from 0", k.name, mg, mg/sg)
		}
	}
	// Sums of terms outputs of one kind, each doubled as in a linear XOR.
	ratio := func(errs []float64) float64 {
		var one, sum float64
		for _, e := range errs {
			one += e * e
		}
		one /= float64(len(errs))
		for k := 0; k+terms <= len(errs); k += terms {
			var s float64
			for _, e := range errs[k : k+terms] {
				s += 2 * e
			}
			sum += s * s
		}
		sum /= float64(len(errs) / terms)
		return sum / (4 * terms * one)
	}
	for _, k := range kinds {
		r := ratio(k.errs)
		t.Logf("mean square error of sums of %d doubled outputs over %d times one output's: the %s %.2f", terms, 4*terms, k.name, r)
		if r > 1.5 {
			t.Errorf("the %s outputs summed by %d: %.2f times the independent figure, want about 1", k.name, terms, r)
		}
	}
}
