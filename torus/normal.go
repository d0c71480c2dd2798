package torus

import "math"

// Normal values in time independent of the value.
//
// The noise of a fresh ciphertext is secret: b − ⟨a, s⟩ − m = e, so an
// attacker who learns e for n ciphertexts of one key solves for the key by
// linear algebra. A sampler whose running time depends on the value it
// draws leaks part of each e to anyone who can time encryption or key
// generation: math/rand's ziggurat takes a slow path for values in its tail
// layers, and the portable Go math.Log and math.Sincos branch on their
// argument.
//
// normalPair is the Box–Muller transform [BM58] evaluated by a fixed
// sequence of integer operations, floating-point additions and
// multiplications: no branch, no table lookup, no conversion between
// 64-bit integers and floats (a runtime call with branches on 32-bit
// targets), and no division or square-root instruction (whose latency
// depends on the operands on some processors). The logarithm is fdlibm's
// log(1+f) = 2·atanh(f/(2+f)) split with the reciprocal by Newton's
// iteration; the square root is x·x^(−1/2) by Newton's iteration from a
// bit-level first guess; sine and cosine are their Taylor series on a
// quarter turn, the quarter chosen by two bits of the input with masks;
// gaussianTorus scales and rounds by adding 1.5·2^52.
// tfhe's TestConstantTimeCode reads the compiled code of these functions
// (for amd64, 386 and arm64) for conditional or indirect jumps, calls
// outside them, and division or square-root instructions. This holds on targets with
// floating-point hardware; GOARM=5 and the softfloat builds emulate it with
// code that branches on the values.
//
// Every floating-point product is rounded on its own (float64 conversions
// forbid fused multiply-adds; the test checks arm64's code for them), so
// the values are the same on every architecture.
//
// What it costs: a value takes about twice the ziggurat's time (some 130
// floating-point additions and multiplications a pair, against a table lookup
// and a comparison for most ziggurat values), and key generation, which
// draws N values for each of a bootstrapping key's (k+1)·l·n TRLWE
// samples, became about 1.4 times slower with it (TFHELib128's cloud key;
// BENCHMARKS.md, session 38). That is the price of the constant time, and
// it stays. AddGaussian takes its pairs straight from normalPair, which
// saves the spare value's bookkeeping (some 15% a value) and nothing of
// the arithmetic; a faster pair with the same bits would take running
// several pairs side by side in vector registers (assembly), not done.
//
// [BM58] G. E. P. Box, M. E. Muller, "A note on the generation of random
// normal deviates", Ann. Math. Statist. 29 (1958) 610–611.

// normalPair returns two independent standard normal values made from the
// uniform 64-bit words x and y: r·cos θ and r·sin θ with r = √(−2 ln u),
// u ∈ (0, 1) from x's top 52 bits and θ uniform in [0, 2π) from y's top
// 53. Their magnitude is at most √(106 ln 2) ≈ 8.57 (to a few ulp), so the
// distribution is cut at 8.57 standard deviations (a tail of probability
// about 10^−17). It is not inlined so that TestConstantTimeCode can read
// its code.
//
//go:noinline
func normalPair(x, y uint64) (float64, float64) {
	const one = 0x3ff << 52 // the bits of 1.0
	// u = (2k+1)·2^−53 for k < 2^52: exact (1 + k·2^−52 − 1 is, and so is
	// adding 2^−53), never 0 or 1, symmetric about 1/2.
	u := math.Float64frombits(one|x>>12) - 1 + 0x1p-53
	w := -2 * lnUnit(u) // in [2^−52, 106 ln 2]
	r := sqrtPos(w)

	// θ = (q + t)·π/2: q the quarter (two bits), t ∈ [0, 1) in steps of
	// 2^−51 (exact, as u's k·2^−52).
	q := y >> 62
	t := math.Float64frombits(one|(y>>11&(1<<51-1))<<1) - 1
	c, s := cosSinQuarter(float64(t * (math.Pi / 2)))

	// Rotate (c, s) by q quarter turns: quarters 1 and 3 swap the pair,
	// quarters 1 and 2 negate the cosine, 2 and 3 the sine.
	cb, sb := math.Float64bits(c), math.Float64bits(s)
	swap := -(q & 1)
	cosB := cb&^swap | sb&swap
	sinB := sb&^swap | cb&swap
	cosB ^= ((q ^ q>>1) & 1) << 63
	sinB ^= (q >> 1) << 63
	return float64(r * math.Float64frombits(cosB)), float64(r * math.Float64frombits(sinB))
}

// ln2Hi + ln2Lo = ln 2 (fdlibm's split: ln2Hi has 32 significant bits, so
// e·ln2Hi is exact for |e| < 2^21).
const (
	ln2Hi = 6.93147180369123816490e-01 // 0x3fe62e42fee00000
	ln2Lo = 1.90821492927058770002e-10 // 0x3dea39ef35793c76
)

// logR[j−1] = 2/(2j+1): 2·atanh(s) = 2s + s·R(s²) with
// R(z) = Σ_{j≥1} logR[j−1]·z^j (fdlibm's log1p split).
var logR = [...]float64{
	2.0 / 3, 2.0 / 5, 2.0 / 7, 2.0 / 9, 2.0 / 11, 2.0 / 13,
	2.0 / 15, 2.0 / 17, 2.0 / 19, 2.0 / 21, 2.0 / 23, 2.0 / 25,
}

// lnUnit returns ln u for a normal float64 u in (0, 1) (u < 1 is what keeps
// the exponent's arithmetic in range; normalPair's u are ≥ 2^−53).
//
// u = 2^e·(1+f) with 1+f folded into [√2/2, √2), and, as in fdlibm's log,
// ln(1+f) = 2·atanh(s) = f − f²/2 + s·(f²/2 + R(s²)) with s = f/(2+f) ∈
// [−0.1716, 0.1716]: f is exact, so the rounding of s only touches the
// smaller terms. R's 12 terms leave s^26 < 10^−19.
func lnUnit(u float64) float64 {
	b := math.Float64bits(u)
	e := int64(b>>52) - 1023
	mb := b&(1<<52-1) | 1023<<52 // 1+f ∈ [1, 2)
	// 1+f ≥ √2: halve it (exponent field − 1) and count it in e.
	over := (math.Float64bits(math.Sqrt2) - 1 - mb) >> 63
	mb -= over << 52
	e += int64(over)
	f := math.Float64frombits(mb) - 1 // exact: both within a factor 2
	s := float64(f * recipNear2(2+f))
	z := float64(s * s)
	// Estrin's scheme (a shorter chain of dependent operations than
	// Horner's rule; z ≤ 0.03, so its terms fall fast either way), written
	// out: a loop would be a conditional jump.
	c := &logR
	z2 := float64(z * z)
	z4 := float64(z2 * z2)
	z8 := float64(z4 * z4)
	p01 := float64(c[1]*z) + c[0]
	p23 := float64(c[3]*z) + c[2]
	p45 := float64(c[5]*z) + c[4]
	p67 := float64(c[7]*z) + c[6]
	p89 := float64(c[9]*z) + c[8]
	pab := float64(c[11]*z) + c[10]
	q0 := float64(p23*z2) + p01
	q1 := float64(p67*z2) + p45
	q2 := float64(pab*z2) + p89
	r := float64(float64(float64(float64(q2*z8)+float64(q1*z4))+q0) * z)
	hfsq := float64(0.5 * float64(f*f))
	fe := float64(int32(e)) // int32: one instruction on 32-bit targets too
	return float64(fe*ln2Hi) - ((hfsq - (float64(s*(hfsq+r)) + float64(fe*ln2Lo))) - f)
}

// recipNear2 returns 1/d for d ∈ [2 − 0.293, 2 + 0.415) by Newton's
// iteration y ← y·(2 − d·y) from y₀ = 2/(a+b), the middle of the range's
// reciprocals: the relative error 0.172 squares each step, to below 2^−53
// after five.
func recipNear2(d float64) float64 {
	const y0 = 2 / ((2 - 0.2929) + (2 + 0.4143))
	y := float64(y0)
	y = float64(y * (2 - float64(d*y)))
	y = float64(y * (2 - float64(d*y)))
	y = float64(y * (2 - float64(d*y)))
	y = float64(y * (2 - float64(d*y)))
	return float64(y * (2 - float64(d*y)))
}

// sqrtPos returns √w for a normal float64 w > 0: x^(−1/2) by Newton's
// iteration y ← y·(3 − w·y²)/2 from the classic bit-level guess (relative
// error under 0.035, then 1.8·10^−3, 4.6·10^−6, 3.2·10^−11), then w·y
// corrected once by half its residual against w, which squares the error
// again.
func sqrtPos(w float64) float64 {
	y := math.Float64frombits(0x5fe6eb50c7b537a9 - math.Float64bits(w)>>1)
	hw := float64(0.5 * w)
	y = float64(y * (1.5 - float64(hw*float64(y*y))))
	y = float64(y * (1.5 - float64(hw*float64(y*y))))
	y = float64(y * (1.5 - float64(hw*float64(y*y))))
	r := float64(w * y)
	return r + float64(float64(0.5*y)*(w-float64(r*r)))
}

// cosTaylor[j] = (−1)^j/(2j)!, sinTaylor[j] = (−1)^j/(2j+1)!. Twelve terms
// of each on [0, π/2) leave (π/2)^24/24! < 10^−19.
var (
	cosTaylor = [...]float64{
		1, -1.0 / 2, 1.0 / 24, -1.0 / 720, 1.0 / 40320, -1.0 / 3628800,
		1.0 / 479001600, -1.0 / 87178291200, 1.0 / 20922789888000,
		-1.0 / 6402373705728000, 1.0 / 2432902008176640000,
		-1.0 / 1124000727777607680000,
	}
	sinTaylor = [...]float64{
		1, -1.0 / 6, 1.0 / 120, -1.0 / 5040, 1.0 / 362880,
		-1.0 / 39916800, 1.0 / 6227020800, -1.0 / 1307674368000,
		1.0 / 355687428096000, -1.0 / 121645100408832000,
		1.0 / 51090942171709440000, -1.0 / 25852016738884976640000,
	}
)

// cosSinQuarter returns cos a and sin a for a ∈ [0, π/2).
func cosSinQuarter(a float64) (float64, float64) {
	z := float64(a * a)
	ct, st := &cosTaylor, &sinTaylor
	c := float64(ct[11]*z) + ct[10]
	s := float64(st[11]*z) + st[10]
	c = float64(c*z) + ct[9]
	s = float64(s*z) + st[9]
	c = float64(c*z) + ct[8]
	s = float64(s*z) + st[8]
	c = float64(c*z) + ct[7]
	s = float64(s*z) + st[7]
	c = float64(c*z) + ct[6]
	s = float64(s*z) + st[6]
	c = float64(c*z) + ct[5]
	s = float64(s*z) + st[5]
	c = float64(c*z) + ct[4]
	s = float64(s*z) + st[4]
	c = float64(c*z) + ct[3]
	s = float64(s*z) + st[3]
	c = float64(c*z) + ct[2]
	s = float64(s*z) + st[2]
	c = float64(c*z) + ct[1]
	s = float64(s*z) + st[1]
	c = float64(c*z) + ct[0]
	s = float64(s*z) + st[0]
	return c, float64(a * s)
}

// maxRoundSigma bounds the |σ| whose Gaussian values round in constant
// time: |z·σ|·2^32 ≤ 8.6·2^12·2^32 < 2^51, where gaussianTorus is exact. It
// is more than 4096 turns of the torus; no parameter set comes near.
const maxRoundSigma = 1 << 12

// gaussianTorus returns z·σ rounded to the nearest Torus32 (ties to even)
// for |z·σ| < 2^19, without a branch or a float–integer conversion: y plus
// 1.5·2^52 lies in (2^52, 2^53), where the float64 step is 1, so the sum is
// 1.5·2^52 + round(y) and its low 32 bits are round(y) mod 2^32. It is not
// inlined so that TestConstantTimeCode can read its code.
//
//go:noinline
func gaussianTorus(z, sigma float64) Torus32 {
	y := float64(float64(z*sigma) * 0x1p32)
	return Torus32(math.Float64bits(y + 0x1.8p52))
}
