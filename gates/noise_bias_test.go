package gates_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/goldfhe/goldfhe/bootstrap"
	"github.com/goldfhe/goldfhe/gates"
	"github.com/goldfhe/goldfhe/tfhe"
	"github.com/goldfhe/goldfhe/torus"
)

// ksBiasParams is an insecure set whose output error is almost all key
// switching with one-bit digits, where the error mean that a cloud key's
// key switching gives all its outputs is largest: half of its variance
// (digits in [−1, 1): the row is only ever added). It is the toy set with
// one-bit key-switching digits and σ_lwe = 2^−12.
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

// TestGateOutputsUnbiased: the engine's Bootstrap outputs under one cloud
// key share an error mean (key switching's), and the evaluator's outputs,
// whose signs it randomises (flipSign), do not: the mean error of its AND
// outputs and, apart, of its MUX outputs (their key switching runs alone)
// is within four standard errors of 0, and sums of T of them of one kind
// (as a linear XOR adds them) have about T times one output's mean square
// error, as the noise model counts, where the engine's have about T² times
// the shared part (2.06 times T here). Without either negation, the means
// of that kind were 10 standard errors off and its sums 2.0–2.2 times T.
func TestGateOutputsUnbiased(t *testing.T) {
	p := ksBiasParams
	sk, err := tfhe.GenerateSecretKeyFromSeed(p, seed("bias/sk"))
	if err != nil {
		t.Fatal(err)
	}
	ck, err := tfhe.GenerateCloudKeyFromSeed(sk, seed("bias/ck4"))
	if err != nil {
		t.Fatal(err)
	}
	enc, err := tfhe.NewEncryptorFromSeed(sk, seed("bias/enc"))
	if err != nil {
		t.Fatal(err)
	}
	eng, err := bootstrap.NewCPU(ck, bootstrap.CPUOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	ev, err := gates.NewEvaluator(eng)
	if err != nil {
		t.Fatal(err)
	}
	const m, terms = 1024, 8
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
		if err != nil {
			t.Fatal(err)
		}
		calls[i] = gates.Call{Op: op, Out: tfhe.NewTLWE(p.LWEDimension()), A: cts[0], B: cts[1], C: cts[2]}
		want[i] = op.Eval(a, b, c)
		// AND's input: a + b − 1/8.
		in[i] = tfhe.NewTLWE(p.LWEDimension())
		tfhe.AddTLWETo(in[i], cts[0], cts[1])
		in[i].SetB(in[i].B() - torus.Encode(1, 8))
	}
	if err := ev.Batch(calls); err != nil {
		t.Fatal(err)
	}
	outs := make([]*tfhe.TLWE, m)
	for i := range outs {
		outs[i] = calls[i].Out
	}
	direct := make([]*tfhe.TLWE, m)
	for i := range direct {
		direct[i] = tfhe.NewTLWE(p.LWEDimension())
	}
	if err := eng.Bootstrap(direct, in, torus.Encode(1, 8)); err != nil {
		t.Fatal(err)
	}
	wantAND := make([]bool, m)
	for i := range calls {
		wantAND[i] = sk.DecryptBool(calls[i].A) && sk.DecryptBool(calls[i].B)
	}
	eg, ee := outputErrors(t, sk, outs, want), outputErrors(t, sk, direct, wantAND)
	me, se := meanSE(ee)
	t.Logf("mean output error: engine %.2e (%.1f standard errors)", me, me/se)
	if math.Abs(me) < 6*se {
		t.Fatalf("the engine's outputs show no error mean under this key (%.1f standard errors): the test checks nothing; pick another cloud key seed", me/se)
	}
	for k, kind := range []string{"AND", "MUX"} {
		var part []float64
		for i := k; i < m; i += 2 {
			part = append(part, eg[i])
		}
		mg, sg := meanSE(part)
		t.Logf("mean output error: the evaluator's %s %.2e (%.1f standard errors)", kind, mg, mg/sg)
		if math.Abs(mg) > 4*sg {
			t.Errorf("the evaluator's %s outputs have error mean %.2e, %.1f standard errors from 0", kind, mg, mg/sg)
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
	t.Logf("mean square error of sums of %d doubled outputs over %d times one output's: the engine's %.2f", terms, 4*terms, ratio(ee))
	for k, kind := range []string{"AND", "MUX"} {
		var part []float64
		for i := k; i < m; i += 2 {
			part = append(part, eg[i])
		}
		r := ratio(part)
		t.Logf("the same for the evaluator's %s outputs: %.2f", kind, r)
		if r > 1.5 {
			t.Errorf("the evaluator's %s outputs summed by %d: %.2f times the independent figure, want about 1", kind, terms, r)
		}
	}
}
