package torus

import (
	"fmt"
	"math"
	"math/bits"
)

// Torus32 is an element of the discretised torus: the value t/2^32 ∈ [0, 1).
// Go's wrapping uint32 arithmetic is torus arithmetic: a+b, a−b, −a and n·a
// (for an integer n) need no helper.
type Torus32 uint32

// Signed returns t as the centered integer in [−2^31, 2^31), i.e. 2^32 times
// the representative of t in [−1/2, 1/2).
func (t Torus32) Signed() int32 { return int32(t) }

// Float64 returns the representative of t in [−1/2, 1/2). It is exact.
func (t Torus32) Float64() float64 { return float64(int32(t)) / (1 << 32) }

// FromFloat64 returns the torus element nearest to x mod 1, a tie (x·2^32
// halfway between two integers) going to the larger integer, so that
// −1.5·2^−32 gives −1·2^−32. Every finite x is accepted; NaN and ±Inf map
// to 0. Its time depends on x (math.Mod and math.Floor branch on the
// exponent): Sampler.Gaussian rounds its noise otherwise.
func FromFloat64(x float64) Torus32 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0
	}
	// Every step exact: math.Mod's result, its scaling by 2^32 (|y| < 2^32)
	// and y − ⌊y⌋. (x − ⌊x⌋ at scale 1 lost the bits of a small negative
	// x below 2^−53, which could turn a value just below a tie into one.)
	y := math.Mod(x, 1) * (1 << 32)
	fl := math.Floor(y)
	if y-fl >= 0.5 {
		fl++
	}
	return Torus32(uint32(int64(fl))) // fl ∈ [−2^32, 2^32]: mod 2^32
}

// Encode returns mu/msgSpace on the torus, rounded to the nearest Torus32:
// Encode(1, 8) = 1/8 = 2^29, Encode(−1, 8) = −1/8. mu may be any integer;
// msgSpace must be positive (it panics otherwise: it is a constant of the
// caller's encoding, not data).
//
// Its time does not depend on mu, which may be a secret message: no
// branch, division or table lookup on mu. For a power of two up to 2^32
// (TFHE's encodings) it is a shift; for any other message space,
// multiplications by a reciprocal of msgSpace with masked corrections
// (encodeMod; tfhe's TestConstantTimeCode reads its code). Its time
// depends on msgSpace, which must be public: it branches on it, and
// divides by it once to make the reciprocal.
func Encode(mu int64, msgSpace int64) Torus32 {
	if msgSpace <= 0 {
		panic(fmt.Sprintf("torus: Encode: message space %d must be positive", msgSpace))
	}
	if msgSpace&(msgSpace-1) == 0 && msgSpace <= 1<<32 {
		// mu·2^32/2^k is exactly mu·2^(32−k), and mod 2^32 only its low
		// bits count.
		return Torus32(uint64(mu) << (32 - bits.TrailingZeros64(uint64(msgSpace))))
	}
	// msgSpace ≥ 3 here: 2^64 mod msgSpace by the divisor itself.
	dv := newDivisor(uint64(msgSpace))
	_, c := dv.divRem(1, 0)
	return encodeMod(mu, &dv, c)
}

// encodeMod is Encode for a message space y = dv.y ≥ 2, c = 2^64 mod y,
// without a branch, a division or a table on mu. It computes what Encode
// did with mu % y and bits.Div64 (DIV instructions, whose latency depends
// on their operands on many x86 processors), the same bits for every mu
// (TestEncodeMatchesDivision):
//   - m = mu mod y ∈ [0, y): uint64(mu) is mu + 2^64 for a negative mu,
//     so m is uint64(mu) mod y, less c if mu < 0, plus y if that went
//     below zero;
//   - round(m·2^32/y) with ties up: the numerator has up to 95 bits and
//     its high word m >> 32 is below y, so q = ⌊m·2^32/y⌋ fits, and q
//     grows by one if its remainder r ≥ y − r. q = 2^32 wraps to 0.
func encodeMod(mu int64, dv *divisor, c uint64) Torus32 {
	y := dv.y
	_, m := dv.divRem(0, uint64(mu))
	neg := uint64(mu >> 63) // all ones if mu < 0
	m, b := bits.Sub64(m, c&neg, 0)
	m += y & -b
	q, r := dv.divRem(m>>32, m<<32)
	_, b = bits.Sub64(r, y-r, 0) // 0 iff r ≥ y − r
	return Torus32(q + 1 - b)
}

// Decode returns the message mu ∈ [0, msgSpace) whose encoding is nearest to t
// (the inverse of Encode up to an error of less than 1/(2·msgSpace)).
// msgSpace must be in [1, 2^31]; it panics otherwise (a constant of the
// caller's encoding, as for Encode). It is constant-time in t, a
// decrypted phase, as ModSwitch is; not in msgSpace.
func Decode(t Torus32, msgSpace int64) int64 {
	if msgSpace <= 0 || msgSpace > 1<<31 {
		panic(fmt.Sprintf("torus: Decode: message space %d out of [1, 2^31]", msgSpace))
	}
	return int64(ModSwitch(t, uint64(msgSpace)))
}

// ModSwitch returns round(t·m) mod m, i.e. the element of Z_m nearest to
// t·m, with ties rounded up (as the TFHE library's modSwitchFromTorus32).
// For m = 2N it is the ā = round(2N·a) of gate bootstrapping (CGGI20 Alg. 3,
// line 1). m must be in [1, 2^32]; it panics otherwise.
//
// Its time does not depend on t (Decode's t is a decrypted phase): no
// branch or division on t (modSwitchRound; tfhe's TestConstantTimeCode
// reads it). It branches on m, which must be public.
func ModSwitch(t Torus32, m uint64) uint64 {
	if m == 0 || m > 1<<32 {
		panic(fmt.Sprintf("torus: ModSwitch: modulus %d out of [1, 2^32]", m))
	}
	// t·m + 2^31 < 2^64 for m ≤ 2^32 − 1; m = 2^32 is the identity.
	if m == 1<<32 {
		return uint64(t)
	}
	return modSwitchRound(t, m)
}

// modSwitchRound is ModSwitch for m in [1, 2^32 − 1], without a branch or
// a division: v = ⌊(t·m + 2^31)/2^32⌋ is at most m (t·m + 2^31 ≤
// 2^32·m + 2^31 − m, and the floor of m + (2^31 − m)/2^32 is m or m − 1),
// so v mod m is v with m taken to 0, by the borrow of v − m. (It was
// v % m, a DIV whose latency depends on its operands on many x86
// processors.)
func modSwitchRound(t Torus32, m uint64) uint64 {
	v := (uint64(t)*m + 1<<31) >> 32
	_, below := bits.Sub64(v, m, 0) // 1 iff v < m, i.e. v ≠ m
	return v & -below
}

// ModSwitchPow2 is ModSwitch for m = 2^logM, 1 ≤ logM ≤ 31, without a
// division: the form the bootstrapping hot path uses. It checks nothing:
// another logM gives a meaningless result (0 for logM = 32, where ModSwitch
// would return t), not a panic.
func ModSwitchPow2(t Torus32, logM uint) int {
	return int((uint64(t)>>(31-logM) + 1) >> 1 & (1<<logM - 1))
}
