package smallntt

import "math/bits"

// P is the Goldilocks prime 2^64 − 2^32 + 1.
const P uint64 = 0xFFFF_FFFF_0000_0001

// epsilon is 2^32 − 1 ≡ 2^64 (mod P): a carry out of bit 64 is worth epsilon.
const epsilon uint64 = 0xFFFF_FFFF

// Field elements are uint64. Ranges, as every function below states them:
// "canonical" means in [0, P); "any" means any uint64, read modulo P.
// Every exported function returns a canonical value. The tests in
// field_test.go check each stated range at its edges against math/big.

// Add returns a + b mod P. a, b canonical; output canonical.
func Add(a, b uint64) uint64 {
	s, c := bits.Add64(a, b, 0)
	// a + b − 2^64 ≡ s + ε; cannot overflow because a + b < 2P.
	s += epsilon & -c
	if reduceByMask {
		return Reduce(s)
	}
	if s >= P {
		s -= P
	}
	return s
}

// Sub returns a − b mod P. a any, b canonical; output canonical when a is
// canonical (for a ≥ P the output is in [0, 2^64) and ≡ a − b).
func Sub(a, b uint64) uint64 {
	d, br := bits.Sub64(a, b, 0)
	// On borrow d = a − b + 2^64 and the answer is a − b + P = d − ε;
	// d ≥ 2^64 − P + 1 > ε, so the subtraction cannot wrap.
	d -= epsilon & -br
	return d
}

// Neg returns −a mod P. a canonical; output canonical.
//
// No field operation branches on its values: the transform of the secret
// key, its products with the masks in encryption and their inverse
// transforms are made of them (DESIGN.md §2). A conditional subtraction
// (Reduce's, and the last step of Add, Mul and shlMidC) compiles to a
// conditional move on amd64 and arm64 and is a mask on 386
// (field_reduce*.go); Neg, FromInt64, ToInt64Centered and the carry
// corrections use masks; Reduce192 takes no case (tfhe.TestConstantTimeCode
// reads their compiled code). Exp, Inv and Pow loop over the exponent's
// bits and MulPow2 branches on the shift: public wherever the module uses
// them.
func Neg(a uint64) uint64 { return Reduce(P - a) }

// Reduce128 returns (hi·2^64 + lo) mod P for any hi, lo (DESIGN.md §3):
// with hi = hh·2^32 + hl, x ≡ lo − hh + ε·hl. Output canonical.
func Reduce128(hi, lo uint64) uint64 {
	return Reduce(reduce128Lazy(hi, lo))
}

// reduce128Lazy is Reduce128 without the final conditional subtraction:
// hi, lo any; output in [0, 2^64), ≡ hi·2^64 + lo. (uint64(uint32(−c)) is
// ε·c for a carry c ∈ {0, 1}: SBB and a zero-extending MOV, no constant.)
func reduce128Lazy(hi, lo uint64) uint64 {
	hh := hi >> 32
	hl := uint64(uint32(hi))
	t, br := bits.Sub64(lo, hh, 0)
	t -= uint64(uint32(-br)) // on borrow t ≥ 2^64 − 2^32 + 1 > ε: no wrap
	u := hl<<32 - hl         // hl·ε ≤ (2^32−1)^2 < 2^64
	r, c := bits.Add64(t, u, 0)
	return r + uint64(uint32(-c)) // t + u − 2^64 + ε ≤ 2^64 − 2^32 − 1: no wrap
}

// Reduce192 returns (w·2^128 + y·2^64 + z) mod P for any w, y, z; output
// canonical. Since 2^128 ≡ −2^32 (DESIGN.md §3: x ≡ 2^32·(y − w) + (z − y)),
// x ≡ (y·2^64 + z) − w·2^32: the first part by the 128-bit rule, and
// w·2^32 = (w>>32)·2^64 + (w<<32 mod 2^64) by it too, whatever w. (It used
// to take w < 2^32, the usual case for a sum of a few shifted terms, as a
// case of its own, w·2^32 = w<<32 < P: a branch on w, derived from the
// values transformed, on every architecture. Both forms give the same
// canonical result.) The matrix small transforms call it once per output.
func Reduce192(w, y, z uint64) uint64 {
	return Reduce(subLazy(reduce128Lazy(y, z), reduce128Lazy(w>>32, w<<32)))
}

// Mul returns a·b mod P. a, b any; output canonical. (Reduce128 written
// out in one expression so that the compiler inlines it.)
func Mul(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	t, br := bits.Sub64(lo, hi>>32, 0)
	r, c := bits.Add64(t-uint64(uint32(-br)), uint64(uint32(hi))<<32-uint64(uint32(hi)), 0)
	r += uint64(uint32(-c))
	if reduceByMask {
		return Reduce(r)
	}
	if r >= P {
		r -= P
	}
	return r
}

// mulLazy returns a value ≡ a·b in [0, 2^64). a, b any.
func mulLazy(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	return reduce128Lazy(hi, lo)
}

// Exp returns a^e mod P (0^0 = 1). a any; output canonical.
func Exp(a, e uint64) uint64 {
	r := uint64(1)
	a = Reduce(a)
	for ; e > 0; e >>= 1 {
		if e&1 == 1 {
			r = Mul(r, a)
		}
		a = Mul(a, a)
	}
	return r
}

// Pow is Exp, kept under its first name.
func Pow(a, e uint64) uint64 { return Exp(a, e) }

// Inv returns a^{−1} mod P, and 0 for a ≡ 0. a any; output canonical.
func Inv(a uint64) uint64 { return Exp(a, P-2) }

// FromInt64 maps any signed integer to its residue in [0, P); every int64 has
// |x| ≤ 2^63 < P, so this is exact for all inputs.
func FromInt64(x int64) uint64 {
	// x ≥ 0: x < 2^63 < P. x < 0: P + x = P − |x| (mod 2^64).
	return uint64(x) + P&uint64(x>>63)
}

// ToInt64Centered maps a residue v to the representative in [−(P−1)/2,
// (P−1)/2] as a signed integer. v any (reduced first). It inverts FromInt64
// for |x| ≤ (P−1)/2, which is what makes the exact negacyclic product of
// DESIGN.md §3 work.
func ToInt64Centered(v uint64) int64 {
	v = Reduce(v)
	over := (P/2 - v) >> 63 // v > P/2
	return int64(v - P&-over)
}

// addLazy returns a value ≡ a + b in [0, 2^64). a, b any.
func addLazy(a, b uint64) uint64 {
	s, c := bits.Add64(a, b, 0)
	s, c = bits.Add64(s, uint64(uint32(-c)), 0) // a second carry leaves s < ε
	return s + uint64(uint32(-c))
}

// subLazy returns a value ≡ a − b in [0, 2^64). a, b any.
func subLazy(a, b uint64) uint64 {
	d, br := bits.Sub64(a, b, 0)
	d, br = bits.Sub64(d, uint64(uint32(-br)), 0) // a second borrow leaves d > 2^64 − ε
	return d - uint64(uint32(-br))
}

// addT returns a value ≡ x + t in [0, 2^64) for x any and t ≤ P: then
// x + t ≤ 2^65 − 2^32, so one carry correction suffices.
func addT(x, t uint64) uint64 {
	s, c := bits.Add64(x, t, 0)
	return s + uint64(uint32(-c))
}

// subT returns a value ≡ x − t in [0, 2^64) for x any and t ≤ P: on borrow
// x − t + 2^64 ≥ 2^64 − P = ε, so one correction suffices.
func subT(x, t uint64) uint64 {
	d, br := bits.Sub64(x, t, 0)
	return d - uint64(uint32(-br))
}
