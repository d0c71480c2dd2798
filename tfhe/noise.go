package tfhe

import (
	"fmt"
	"math"
)

// NoiseEstimate is this library's average-case noise model of gate
// bootstrapping for a parameter set, after CGGI20 (Thm. 4.3 for the
// external product and blind rotation, Thm. 4.1 / Alg. 2 for key switching,
// Alg. 3 line 1 for modulus switching), with digit and rounding errors taken
// uniform rather than at their worst. Variances are in torus units squared.
type NoiseEstimate struct {
	// BlindRotationVar is the variance of the blind-rotation (and sample
	// extraction) output: n·(k+1)·l·N·E[d²]·σ_bk² + (n/2)·(1 + kN/2)·δ²/12,
	// with E[d²] = (Bg²+2)/12 for digits uniform in [−Bg/2, Bg/2) and
	// δ = Bg^{−l} the decomposition's rounding step. The rounding error
	// enters a CMux's output multiplied by the message of its TRGSW, the
	// key bit s_i (CGGI20's external product: the (1+kN)·ε² term carries
	// |μ_A|²), so on average in half of the n steps; the key noise enters
	// in every step.
	BlindRotationVar float64
	// KeySwitchVar is the variance key switching adds: kN·t·(1 − 1/base)·σ_lwe²
	// (one fresh table sample per nonzero digit) + (kN/2)·δ_ks²/12 with
	// δ_ks = base^{−t}. Its mean is zero for every cloud key (key switching
	// balances its digits' signs: KeySwitchTo), so the errors of outputs of
	// different inputs are uncorrelated and a sum of them is Gaussian, as
	// the failure figures below take it. (Blind rotation's digits, of mean
	// −1/2, leave a mean shared by a key's outputs of at most 3/(Bg²+2) of
	// BlindRotationVar, 2·10^−4 for TFHELib128, which the model neglects.)
	KeySwitchVar float64
	// ModSwitchVar is the variance that rounding a TLWE sample's mask
	// coefficients to multiples of 1/(2N) at the start of a bootstrap adds
	// to its phase: (n/2)/(12·(2N)²) (a rounding error per key bit 1). The
	// body's rounding is no noise: it moves the decision boundaries, which
	// the failure figures' margins take (Log2GateFailure).
	ModSwitchVar float64
	// BootstrapStdDev is the standard deviation of the error of a Bootstrap
	// output: √(BlindRotationVar + KeySwitchVar).
	BootstrapStdDev float64
	// MuxStdDev is the standard deviation of the error of a MUX output
	// (gates' MUX: two blind rotations summed, then one key switching):
	// √(2·BlindRotationVar + KeySwitchVar), at most √2·BootstrapStdDev.
	MuxStdDev float64
	// GateStdDev is the standard deviation of the rounded phase error that
	// decides a NAND-style gate, (0, 1/8) − c1 − c2 with c1, c2 bootstrap
	// outputs: √(2·(BlindRotationVar + KeySwitchVar) + ModSwitchVar).
	GateStdDev float64
	// Log2GateFailure is log2 of the probability that this error crosses
	// the gate's nearer decision boundary, for the input whose margin is
	// the smallest: 1/8 − 1/(4N), one tail, log2(erfc((1/8 − 1/(4N))/(√2·
	// GateStdDev))/2). The phases ±1/8 and ±3/8 each lie 1/8 from one
	// boundary and 3/8 from the other, and the boundaries of the rounded
	// phase are at −1/(4N) and 1/2 − 1/(4N), not 0 and 1/2: modulus
	// switching rounds to the nearest multiple of 1/(2N), and the test
	// vector gives +μ from 0 up to N − 1.
	Log2GateFailure float64

	shift float64 // decisionShift(N)
}

// decisionShift is the offset of the bootstrap's decision boundaries from
// 0 and 1/2 (NoiseEstimate.Log2GateFailure): 1/(4N).
func decisionShift(N float64) float64 { return 1 / (4 * N) }

// log2Tail returns log2 of the probability that a normal error of standard
// deviation sd exceeds margin, one tail: log2(erfc(margin/(√2·sd))/2).
func log2Tail(margin, sd float64) float64 { return log2Erfc(margin/(math.Sqrt2*sd)) - 1 }

// NoiseEstimate returns the noise model of p (see the type). A test checks
// BootstrapStdDev against measured bootstrap outputs. It panics for the
// zero Params, as NoiseEstimateGrouped does.
func (p Params) NoiseEstimate() NoiseEstimate { return p.NoiseEstimateGrouped(1) }

// NoiseEstimateGrouped is NoiseEstimate for a bootstrapping key with
// grouping g (WithGrouping; grouped.go): per full group of g bits, 2^g − 1
// terms each carrying its key noise through X^{e_u} − 1 (two monomials), so
// (2^g − 1)·2·(k+1)·l·N·E[d²]·σ_bk², and the decomposition rounding of ACC
// through the one X^{e_u} − 1 of the term whose message is 1, which exists
// unless the group's key bits are all 0 (probability 2^{−g}), so
// (1 − 2^{−g})·2·(1 + kN/2)·δ²/12; a last group of r < g bits likewise
// with 2^r − 1 terms and 1 − 2^{−r}. g = 1 is the plain CMux of NoiseEstimate;
// g ≤ 0 counts as 1 (no grouping). A g above MaxGrouping, which no key
// has, or a zero Params panics: the figures would mean nothing.
func (p Params) NoiseEstimateGrouped(g int) NoiseEstimate {
	if g > MaxGrouping || p.IsZero() {
		panic(fmt.Sprintf("tfhe: NoiseEstimateGrouped(%d) of %v: grouping above %d or a zero Params", g, p, MaxGrouping))
	}
	n, N, k := float64(p.LWEDimension()), float64(p.PolyDegree()), float64(p.GLWEDimension())
	l, beta := float64(p.BKLevels()), p.BKBaseLog()
	t, basebit := float64(p.KSLevels()), p.KSBaseLog()
	bg := math.Ldexp(1, beta)
	digit2 := (bg*bg + 2) / 12
	delta := math.Ldexp(1, -p.BKLevels()*beta)
	var e NoiseEstimate
	keyVar := (k + 1) * l * N * digit2 * p.BKStdDev() * p.BKStdDev()
	roundVar := (1 + k*N/2) * delta * delta / 12
	if g <= 1 {
		e.BlindRotationVar = n*keyVar + n/2*roundVar
	} else {
		groupVar := func(r int) float64 {
			return float64(int(1)<<r-1)*2*keyVar + (1-math.Ldexp(1, -r))*2*roundVar
		}
		full := float64(p.LWEDimension() / g)
		e.BlindRotationVar = full * groupVar(g)
		if r := p.LWEDimension() % g; r > 0 {
			e.BlindRotationVar += groupVar(r)
		}
	}
	base := math.Ldexp(1, basebit)
	deltaKS := math.Ldexp(1, -p.KSLevels()*basebit)
	e.KeySwitchVar = k*N*t*(1-1/base)*p.LWEStdDev()*p.LWEStdDev() + k*N/2*deltaKS*deltaKS/12
	e.ModSwitchVar = n / 2 / (12 * 4 * N * N)
	out := e.BlindRotationVar + e.KeySwitchVar
	e.BootstrapStdDev = math.Sqrt(out)
	e.MuxStdDev = math.Sqrt(2*e.BlindRotationVar + e.KeySwitchVar)
	e.GateStdDev = math.Sqrt(2*out + e.ModSwitchVar)
	e.shift = decisionShift(N)
	e.Log2GateFailure = log2Tail(1.0/8-e.shift, e.GateStdDev)
	return e
}

// Log2GateFailureMux is Log2GateFailure for a gate of which mux of the
// two inputs (0, 1 or 2; clamped) are MUX outputs, whose error is larger
// (MuxStdDev), and the rest bootstrap outputs. A MUX's own two bootstraps
// each read the selector and one of the data inputs, so they count as
// such gates too. Log2GateFailureMux(0) is Log2GateFailure.
func (e NoiseEstimate) Log2GateFailureMux(mux int) float64 {
	mux = min(max(mux, 0), 2)
	// A MUX output's variance is a bootstrap output's plus one more
	// blind rotation's; written so that mux = 0 is GateStdDev to the bit.
	out := e.BlindRotationVar + e.KeySwitchVar
	sd := math.Sqrt(2*out + float64(mux)*e.BlindRotationVar + e.ModSwitchVar)
	return log2Tail(1.0/8-e.shift, sd)
}

// Log2MajorityFailure is Log2GateFailureMux for a majority gate (gates'
// MAJ), which bootstraps the sum of its three inputs, of which mux (0 to 3;
// clamped) are MUX outputs and the rest bootstrap outputs. The sum's
// phases ±1/8 and ±3/8 lie 1/8 from the nearer decision boundary, as a
// two-input gate's do; the third term adds its variance, so a majority
// gate fails more often than a two-input gate of the same inputs:
// TFHELib128 about 2^−305 against 2^−420 with a plain key, 2^−131 against
// 2^−188 grouped by 3.
func (e NoiseEstimate) Log2MajorityFailure(mux int) float64 {
	mux = min(max(mux, 0), 3)
	out := e.BlindRotationVar + e.KeySwitchVar
	sd := math.Sqrt(3*out + float64(mux)*e.BlindRotationVar + e.ModSwitchVar)
	return log2Tail(1.0/8-e.shift, sd)
}

// log2Erfc returns log2 erfc(x) for x ≥ 0, through the asymptotic series
// where erfc underflows.
func log2Erfc(x float64) float64 {
	if x < 20 {
		return math.Log2(math.Erfc(x))
	}
	return log2ErfcAsymptotic(x)
}

// log2ErfcAsymptotic is log2 erfc(x) from erfc(x) ≈ e^{−x²}/(x√π)·(1 −
// 1/(2x²) + 3/(4x⁴)), relative error below 1e−7 for x ≥ 20.
func log2ErfcAsymptotic(x float64) float64 {
	x2 := x * x
	ln := -x2 - math.Log(x*math.Sqrt(math.Pi)) + math.Log1p(-1/(2*x2)+3/(4*x2*x2))
	return ln / math.Ln2
}

// Log2XORSumFailure is log2 of the probability that a bootstrap decides
// wrongly on a sum of terms bootstrap outputs used as bits of phase m/2
// ("linear XOR", gates.XORLinear): each output c_i enters as 2·c_i + 1/4,
// so the sum's error has variance 4·terms·BootstrapStdDev², to which the
// modulus switching adds ModSwitchVar, against margins of 1/4 − 1/(4N) on
// one side and 1/4 + 1/(4N) on the other (phases ±1/4, the boundaries of
// Log2GateFailure): log2 of the two tails' sum, about log2 erfc(1/(4·√2·σ)).
// With terms = 2 this is the noise of a bootstrapped
// XOR gate, 2·(c_1 + c_2) + 1/4, whose margin is also 1/4. A MUX output's
// error variance is at most twice a bootstrap output's (MuxStdDev), so it
// counts as two terms (gates.XORLinear counts it so).
func (e NoiseEstimate) Log2XORSumFailure(terms int) float64 {
	sd := math.Sqrt(4*float64(terms)*e.BootstrapStdDev*e.BootstrapStdDev + e.ModSwitchVar)
	near, far := log2Tail(1.0/4-e.shift, sd), log2Tail(1.0/4+e.shift, sd)
	return near + math.Log2(1+math.Exp2(far-near))
}
