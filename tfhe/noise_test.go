package tfhe

import (
	"fmt"
	"math"
	"math/bits"
	"testing"

	"github.com/goldfhe/goldfhe/torus"
	"github.com/stretchr/testify/require"
)

func TestLog2Erfc(t *testing.T) {
	for _, x := range []float64{0.5, 3, 10, 19.99} {
		if got, want := log2Erfc(x), math.Log2(math.Erfc(x)); math.Abs(got-want) > 1e-9*math.Abs(want)+1e-12 {
			t.Errorf("log2Erfc(%v) = %v, want %v", x, got, want)
		}
	}
	// The asymptotic series where math.Erfc is still representable.
	for _, x := range []float64{20, 22, 25} {
		if a, b := math.Log2(math.Erfc(x)), log2ErfcAsymptotic(x); math.Abs(a-b) > 1e-6 {
			t.Errorf("asymptotic log2Erfc(%v) = %v, want %v", x, b, a)
		}
	}
}

// TestNoiseEstimateDocumented pins the estimates quoted in params_list.go.
func TestNoiseEstimateDocumented(t *testing.T) {
	for _, p := range ParamSets() {
		e := p.NoiseEstimate()
		t.Logf("%s: σ_BR=%.3g σ_KS=%.3g σ_MS=%.3g σ_out=%.3g σ_gate=%.3g log2 p_fail=%.1f",
			p.Name(), math.Sqrt(e.BlindRotationVar), math.Sqrt(e.KeySwitchVar), math.Sqrt(e.ModSwitchVar),
			e.BootstrapStdDev, e.GateStdDev, e.Log2GateFailure)
		documented := map[string]float64{"TFHELib128": -420, "TFHErsDefault": -343, "CuFHE80": -371}[p.Name()]
		if math.Abs(e.Log2GateFailure-documented) > 1 {
			t.Errorf("%s: estimated gate failure 2^%.1f, params_list.go says 2^%v", p.Name(), e.Log2GateFailure, documented)
		}
	}
}

// TestMeasuredBootstrapNoise bootstraps many samples and checks that the
// measured output error matches the NoiseEstimate model: its standard
// deviation within [0.5, 1.3]× BootstrapStdDev. The model is average-case,
// so a measurement far above it means a bug (or a wrong model).
func TestMeasuredBootstrapNoise(t *testing.T) {
	for _, p := range heavySets(t) {
		t.Run(p.Name(), func(t *testing.T) {
			count := 64
			if p.Name() != toyParams.Name() {
				if testing.Short() {
					t.Skip("-short: named sets are measured in the full run")
				}
				count = 24
			}
			kp := testKeys(p)
			e := newEvaluator(t, p, true)
			enc := newEncryptor(t, kp.sk, 8)
			mu := torus.Encode(1, 8)
			out := NewTLWE(p.LWEDimension())
			var sum2 float64
			for i := range count {
				in := enc.EncryptBool(i%2 == 0)
				e.BootstrapTo(out, in, mu)
				want := mu
				if i%2 != 0 {
					want = -mu
				}
				err := (kp.sk.PhaseTLWE(out) - want).Float64()
				sum2 += err * err
			}
			sd := math.Sqrt(sum2 / float64(count))
			est := p.NoiseEstimate().BootstrapStdDev
			msg := fmt.Sprintf("measured σ=%.3g over %d bootstraps, estimate %.3g (ratio %.2f)", sd, count, est, sd/est)
			t.Log(msg)
			if sd > 1.3*est || sd < 0.5*est {
				t.Error(msg)
			}
			// The keys and encryptor are seeded: the measurement is the
			// same on every run, and params_list.go quotes it.
			if doc, ok := map[string]float64{"TFHELib128": 3.5e-3, "TFHErsDefault": 7.6e-4}[p.Name()]; ok && math.Abs(sd/doc-1) > 0.01 {
				t.Errorf("measured σ=%.3g, params_list.go says %.2g", sd, doc)
			}
		})
	}
}

// shift is the offset of p's decision boundaries from 0 and 1/2, 1/(4N)
// (TestDecisionBoundaries).
func shift(p Params) float64 { return 1 / (4 * float64(p.PolyDegree())) }

// log2TwoTails is log2 of the probability that a normal error of variance v
// leaves (−(m+s), m−s) or, as the same sum, (−(m−s), m+s): a phase ±m with
// both boundaries at distance m ∓ s. Computed in float64 where the tails are
// representable, else through log2Erfc.
func log2TwoTails(m, s, v float64) float64 {
	a, b := (m-s)/math.Sqrt(2*v), (m+s)/math.Sqrt(2*v)
	if a < 25 {
		return math.Log2(math.Erfc(a)/2 + math.Erfc(b)/2)
	}
	near, far := log2Erfc(a)-1, log2Erfc(b)-1
	return near + math.Log2(1+math.Exp2(far-near))
}

// TestDecisionBoundaries checks where the bootstrap's decision boundaries
// lie, which the failure figures' margins take: a noiseless input of phase
// −1/(4N) (or 1/2 − 1/(4N) − 2^−32) gives +μ, one 2^−32 further out −μ.
func TestDecisionBoundaries(t *testing.T) {
	p := toyParams
	kp := testKeys(p)
	e := newEvaluator(t, p, true)
	quarterStep := torus.Torus32(1) << (30 - bits.TrailingZeros(uint(p.PolyDegree()))) // 1/(4N)
	half := torus.Torus32(1) << 31
	mu := torus.Encode(1, 8)
	for _, tc := range []struct {
		phase torus.Torus32
		want  torus.Torus32
	}{
		{-quarterStep, mu}, {-quarterStep - 1, -mu},
		{half - quarterStep - 1, mu}, {half - quarterStep, -mu},
	} {
		out := NewTLWE(p.LWEDimension())
		e.BootstrapTo(out, NewTrivialTLWE(p.LWEDimension(), tc.phase), mu)
		if d := (kp.sk.PhaseTLWE(out) - tc.want).Signed(); d > 1<<26 || d < -1<<26 {
			t.Errorf("phase %#x (%.9f): output phase %v, want about %v", uint32(tc.phase), tc.phase.Float64(), kp.sk.PhaseTLWE(out), tc.want)
		}
	}
}

// TestLog2XORSumFailure checks the linear-XOR model against a direct
// computation and its expected shape: failure grows with the number of terms,
// and two terms are no worse than the gate model with its 1/8 margin for
// two bootstrap outputs plus the doubling of the XOR gate. The formula's
// ingredients are measured elsewhere, not here: a bootstrap output's error
// against BootstrapStdDev (TestMeasuredBootstrapNoise) and sums of T
// outputs at T times one output's mean square error, uncorrelated and
// unbiased (gates' TestGateOutputsUnbiased).
func TestLog2XORSumFailure(t *testing.T) {
	for _, p := range ParamSets() {
		for g := 1; g <= MaxGrouping; g++ {
			e := p.NoiseEstimateGrouped(g)
			prev := math.Inf(-1)
			for terms := 1; terms <= 32; terms++ {
				got := e.Log2XORSumFailure(terms)
				v := 4*float64(terms)*(e.BlindRotationVar+e.KeySwitchVar) + e.ModSwitchVar
				want := log2TwoTails(0.25, shift(p), v)
				if math.Abs(got-want) > 1e-9*math.Abs(want) {
					t.Errorf("%s g=%d terms=%d: 2^%v, want 2^%v", p.Name(), g, terms, got, want)
				}
				if got <= prev {
					t.Errorf("%s g=%d: failure does not grow from %d to %d terms (2^%v, 2^%v)", p.Name(), g, terms-1, terms, prev, got)
				}
				prev = got
			}
			// A bootstrapped XOR gate, 2·(c1 + c2) + 1/4 against a margin
			// of 1/4, is the two-term sum.
			xorGate := log2TwoTails(0.25, shift(p), 8*(e.BlindRotationVar+e.KeySwitchVar)+e.ModSwitchVar)
			if got := e.Log2XORSumFailure(2); math.Abs(got-xorGate) > 1e-9*math.Abs(xorGate) {
				t.Errorf("%s g=%d: two terms 2^%v, XOR gate 2^%v", p.Name(), g, got, xorGate)
			}
		}
	}
	if got := TFHELib128.NoiseEstimate().Log2XORSumFailure(8); got > -130 || got < -140 {
		t.Errorf("TFHELib128, 8 terms: 2^%.1f, want about 2^-137", got)
	}
}

// TestLog2GateFailureMux: a MUX output's error lies between a bootstrap
// output's and √2 times it, and a gate reading k MUX outputs fails more
// often as k grows, from Log2GateFailure at k = 0.
func TestLog2GateFailureMux(t *testing.T) {
	for _, p := range ParamSets() {
		for g := 1; g <= MaxGrouping; g++ {
			e := p.NoiseEstimateGrouped(g)
			if want := math.Sqrt(2*e.BlindRotationVar + e.KeySwitchVar); e.MuxStdDev != want {
				t.Errorf("%s g=%d: MuxStdDev %v, want %v", p.Name(), g, e.MuxStdDev, want)
			}
			if e.MuxStdDev <= e.BootstrapStdDev || e.MuxStdDev > math.Sqrt2*e.BootstrapStdDev {
				t.Errorf("%s g=%d: MuxStdDev %v outside (σ, √2·σ] of σ = %v", p.Name(), g, e.MuxStdDev, e.BootstrapStdDev)
			}
			if got := e.Log2GateFailureMux(0); got != e.Log2GateFailure {
				t.Errorf("%s g=%d: no MUX input 2^%v, Log2GateFailure 2^%v", p.Name(), g, got, e.Log2GateFailure)
			}
			for k := 1; k <= 2; k++ {
				v := float64(2-k)*(e.BlindRotationVar+e.KeySwitchVar) + float64(k)*(2*e.BlindRotationVar+e.KeySwitchVar) + e.ModSwitchVar
				want := log2Erfc((0.125-shift(p))/math.Sqrt(2*v)) - 1
				got := e.Log2GateFailureMux(k)
				if math.Abs(got-want) > 1e-9*math.Abs(want) || got <= e.Log2GateFailureMux(k-1) {
					t.Errorf("%s g=%d: %d MUX inputs 2^%v, want 2^%v, above 2^%v", p.Name(), g, k, got, want, e.Log2GateFailureMux(k-1))
				}
			}
			if e.Log2GateFailureMux(5) != e.Log2GateFailureMux(2) || e.Log2GateFailureMux(-1) != e.Log2GateFailure {
				t.Errorf("%s g=%d: counts outside [0, 2] not clamped", p.Name(), g)
			}
		}
	}
}

// TestLog2MajorityFailure: a majority gate sums three inputs with a
// two-input gate's margin: with bootstrap outputs for inputs it fails more
// often than a two-input gate, and more often again for each MUX output
// among its inputs.
func TestLog2MajorityFailure(t *testing.T) {
	for _, p := range ParamSets() {
		for g := 1; g <= MaxGrouping; g++ {
			e := p.NoiseEstimateGrouped(g)
			out := e.BlindRotationVar + e.KeySwitchVar
			for k := 0; k <= 3; k++ {
				v := 3*out + float64(k)*e.BlindRotationVar + e.ModSwitchVar
				want := log2Erfc((0.125-shift(p))/math.Sqrt(2*v)) - 1
				got := e.Log2MajorityFailure(k)
				if math.Abs(got-want) > 1e-9*math.Abs(want) {
					t.Errorf("%s g=%d: %d MUX inputs 2^%v, want 2^%v", p.Name(), g, k, got, want)
				}
				if k > 0 && got <= e.Log2MajorityFailure(k-1) {
					t.Errorf("%s g=%d: %d MUX inputs 2^%v, not above %d's 2^%v", p.Name(), g, k, got, k-1, e.Log2MajorityFailure(k-1))
				}
			}
			if got := e.Log2MajorityFailure(0); got <= e.Log2GateFailure {
				t.Errorf("%s g=%d: majority 2^%v, not above a gate's 2^%v", p.Name(), g, got, e.Log2GateFailure)
			}
			if e.Log2MajorityFailure(7) != e.Log2MajorityFailure(3) || e.Log2MajorityFailure(-1) != e.Log2MajorityFailure(0) {
				t.Errorf("%s g=%d: counts outside [0, 3] not clamped", p.Name(), g)
			}
		}
	}
	if got := TFHELib128.NoiseEstimateGrouped(3).Log2MajorityFailure(0); got > -125 || got < -135 {
		t.Errorf("TFHELib128 grouped by 3: 2^%.1f, want about 2^-131", got)
	}
}

// TestKeySwitchUnbiased: key switching's error has mean zero for every
// cloud key. For each key, β is the mean its outputs would share were the
// digits always in [−base/2, base/2) (the table row of magnitude base/2,
// only ever added, with probability 1/base; computed from the rows'
// errors). KeySwitchTo of inputs whose mask words are all even (so
// decomposed without negation: ksSign) has error mean β, to four standard
// errors; of random inputs, mean 0 — for the key of the largest |β| among
// a few, which must lie at least eight standard errors from 0 for the test
// to see anything. One- and two-bit digits.
func TestKeySwitchUnbiased(t *testing.T) {
	if raceEnabled && testing.Short() {
		t.Skip("-race -short: no concurrency here; the plain pass runs it")
	}
	for _, basebit := range []int{1, 2} {
		lit := toyParams.Literal()
		lit.Name, lit.KSBaseLog, lit.KSLevels, lit.LWEStdDev = fmt.Sprintf("toy-ks%d", basebit), basebit, 12/basebit, 0x1p-12
		p := MustNewParams(lit)
		sk, err := GenerateSecretKeyFromSeed(p, torus.DeriveSeed([torus.SeedSize]byte{}, "tfhe-test/ks-mean/sk", uint64(basebit)))
		require.NoError(t, err)
		half := 1 << basebit / 2
		var beta float64
		var key *CloudKey
		for k := range 4 {
			ck, err := GenerateCloudKeyFromSeed(sk, torus.DeriveSeed([torus.SeedSize]byte{}, "tfhe-test/ks-mean/ck", uint64(k)))
			require.NoError(t, err)
			var b float64
			for i := range p.ExtractedLWEDimension() {
				for j := 1; j <= p.KSLevels(); j++ {
					mu := torus.Torus32(half) * torus.Torus32(sk.ext[i]) << (32 - j*basebit)
					b += (sk.PhaseTLWE(ck.KeySwitchingKey().Sample(i, j, half)) - mu).Float64() / float64(2*half)
				}
			}
			if key == nil || math.Abs(b) > math.Abs(beta) {
				beta, key = b, ck
			}
		}
		e, err := NewEvaluator(p, butterfly(t, p.PolyDegree()), key)
		require.NoError(t, err)
		enc, err := NewEncryptorFromSeed(sk, torus.DeriveSeed([torus.SeedSize]byte{}, "tfhe-test/ks-mean/enc", uint64(basebit)))
		require.NoError(t, err)
		// Inputs of phase mu with noise 2^-32; the error after key
		// switching against mu.
		const samples = 2000
		in, out := NewTLWE(p.ExtractedLWEDimension()), NewTLWE(p.LWEDimension())
		for _, even := range []bool{true, false} {
			errs := make([]float64, samples)
			for i := range errs {
				mu := torus.Torus32(uint32(i) << 29)
				enc.EncryptExtractedTLWETo(in, mu, 0x1p-32)
				if even {
					// Bit 0 of each a_i cleared, b corrected: the same phase.
					for c, a := range in.A() {
						in.Value[c] = a &^ 1
						in.Value[len(in.Value)-1] -= torus.Torus32(a&1) * torus.Torus32(sk.ext[c])
					}
				}
				e.KeySwitchTo(out, in)
				errs[i] = (sk.PhaseTLWE(out) - mu).Float64()
			}
			var mean, sq float64
			for _, x := range errs {
				mean += x / samples
				sq += x * x / samples
			}
			se := math.Sqrt((sq - mean*mean) / samples)
			if even {
				t.Logf("basebit %d: β = %.3g (%.1f standard errors) from the rows; even inputs' outputs %.3g ± %.2g", basebit, beta, beta/se, mean, se)
				if math.Abs(beta) < 8*se {
					t.Fatalf("basebit %d: β = %.3g is within 8 standard errors (%.2g) of 0: the test could not see it; pick other key seeds", basebit, beta, se)
				}
				if math.Abs(mean-beta) > 4*se {
					t.Errorf("basebit %d: even inputs' outputs have error mean %.3g, the rows give %.3g (standard error %.2g)", basebit, mean, beta, se)
				}
				continue
			}
			t.Logf("basebit %d: random inputs' outputs %.3g ± %.2g", basebit, mean, se)
			if math.Abs(mean) > 4*se {
				t.Errorf("basebit %d: KeySwitchTo's outputs have error mean %.3g, %.1f standard errors from 0", basebit, mean, mean/se)
			}
		}
	}
}

// toyBKParams is the toy set with a finer gadget (Bg = 2^7, l = 3) and a
// noisier bootstrapping key (σ_bk = 2^−25), so that its blind-rotation
// error is almost all key noise (toyParams': almost all decomposition
// rounding).
var toyBKParams = MustNewParams(ParamsLiteral{
	Name: "toy-bk", LWEDimension: 40, PolyDegree: 256, GLWEDimension: 2,
	BKLevels: 3, BKBaseLog: 7, KSLevels: 6, KSBaseLog: 2,
	LWEStdDev: 0x1p-20, BKStdDev: 0x1p-25, Note: "insecure, tests only",
})

// TestMeasuredNoiseComponents measures each term of the noise model apart,
// on enough bootstraps to see a factor of 1.25: the blind rotation's
// error (BootstrapNoKeySwitchTo, under the extracted key), what key
// switching adds to it, and the modulus switching's rounding error, against
// BlindRotationVar, KeySwitchVar and ModSwitchVar, for groupings 1 to 3.
// TestMeasuredBootstrapNoise cannot: its toy set's output error is 99% key
// switching rounding, and the named sets' few bootstraps allow a factor of
// 1.7 in variance (grouped: 2.25). toyParams' blind rotation is mostly
// decomposition rounding, which only steps of key bit 1 (grouped: groups
// not all 0) add; toyBKParams' mostly key noise, which every step adds,
// 2·(2^g − 1) times per group when grouped. The band also holds the
// seeded keys' Hamming weights (n = 40: the rounding terms scale with it).
func TestMeasuredNoiseComponents(t *testing.T) {
	if raceEnabled && testing.Short() {
		t.Skip("-race -short: no concurrency here; the plain pass runs it")
	}
	const count = 1000
	for _, p := range []Params{toyParams, toyBKParams} {
		for g := 1; g <= MaxGrouping; g++ {
			t.Run(fmt.Sprintf("%s/g=%d", p.Name(), g), func(t *testing.T) {
				kp := keyCache(p, g)
				e, err := NewEvaluator(p, butterfly(t, p.PolyDegree()), kp.ck)
				require.NoError(t, err)
				enc := newEncryptor(t, kp.sk, 31)
				mu := torus.Encode(1, 8)
				logTwoN := uint(p.LogPolyDegree() + 1)
				twoN := 1 << logTwoN
				ext, out := NewTLWE(p.ExtractedLWEDimension()), NewTLWE(p.LWEDimension())
				var br, ks, ms float64
				for i := range count {
					x, y := i&1 == 1, i&2 == 2
					c := NewTrivialTLWE(p.LWEDimension(), mu)
					SubTLWETo(c, c, enc.EncryptBool(x))
					SubTLWETo(c, c, enc.EncryptBool(y))
					// The phase with the mask rounded, b − Σ ā_j·s_j/(2N),
					// against the phase: the body's rounding moves the
					// decision boundaries instead (TestDecisionBoundaries).
					r := 0
					for j, a := range c.A() {
						r -= torus.ModSwitchPow2(a, logTwoN) * int(kp.sk.LWEKey()[j])
					}
					d := c.B().Float64() + float64(r)/float64(twoN) - kp.sk.PhaseTLWE(c).Float64()
					d -= math.Round(d)
					ms += d * d / count
					e.BootstrapNoKeySwitchTo(ext, c, mu)
					want := mu
					if x && y {
						want = -mu
					}
					d = (kp.sk.PhaseTLWE(ext) - want).Float64()
					br += d * d / count
					e.KeySwitchTo(out, ext)
					d = (kp.sk.PhaseTLWE(out) - kp.sk.PhaseTLWE(ext)).Float64()
					ks += d * d / count
				}
				est := p.NoiseEstimateGrouped(g)
				for _, c := range []struct {
					name            string
					measured, model float64
				}{{"blind rotation", br, est.BlindRotationVar}, {"key switching", ks, est.KeySwitchVar}, {"modulus switching", ms, est.ModSwitchVar}} {
					r := c.measured / c.model
					t.Logf("%s: measured variance %.3g over %d bootstraps, model %.3g (ratio %.2f)", c.name, c.measured, count, c.model, r)
					if r < 0.8 || r > 1.25 {
						t.Errorf("%s: measured variance %.3g, model %.3g: ratio %.2f outside [0.8, 1.25]", c.name, c.measured, c.model, r)
					}
				}
			})
		}
	}
}

// TestTFHErsFailureReproduced pins the account params_list.go gives of
// TFHE-rs's p-fail 2^−64.344 for TFHErsDefault: this model with TFHE-rs's
// key switching (digit times sample: E[d²] = (B²+2)/12 per level), the
// XOR's 2-norm 2√2 and a margin of 1/16; with the margin of 1/8, and with
// the table's key switching, the figures the comment quotes.
func TestTFHErsFailureReproduced(t *testing.T) {
	p := TFHErsDefault
	e := p.NoiseEstimate()
	kn, tl := float64(p.ExtractedLWEDimension()), float64(p.KSLevels())
	base := math.Ldexp(1, p.KSBaseLog())
	rounding := kn / 2 * math.Ldexp(1, -2*p.KSLevels()*p.KSBaseLog()) / 12
	rsKS := kn*tl*(base*base+2)/12*p.LWEStdDev()*p.LWEStdDev() + rounding
	// TFHE-rs counts the body's rounding as noise too, (1 + n/2)/(12·(2N)²).
	n2 := 2 * float64(p.PolyDegree())
	rsMS := e.ModSwitchVar + 1/(12*n2*n2)
	fail := func(ks, margin float64) float64 {
		sd := math.Sqrt(8*(e.BlindRotationVar+ks) + rsMS)
		return log2Erfc(margin / (math.Sqrt2 * sd))
	}
	for _, c := range []struct {
		name      string
		got, want float64
		tolerance float64
	}{
		{"TFHE-rs key switching, margin 1/16", fail(rsKS, 1.0/16), -64.344, 0.1},
		{"TFHE-rs key switching, margin 1/8", fail(rsKS, 1.0/8), -248, 1},
		{"table key switching, margin 1/16", fail(e.KeySwitchVar, 1.0/16), -81, 1},
	} {
		t.Logf("%s: 2^%.2f", c.name, c.got)
		if math.Abs(c.got-c.want) > c.tolerance {
			t.Errorf("%s: 2^%.2f, params_list.go says 2^%v", c.name, c.got, c.want)
		}
	}
}
