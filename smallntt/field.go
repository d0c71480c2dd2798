package smallntt

import "math/bits"

// P is the Goldilocks prime 2^64 − 2^32 + 1.
const P uint64 = 0xFFFF_FFFF_0000_0001

// epsilon is 2^32 − 1 ≡ 2^64 (mod P): a carry out of bit 64 is worth epsilon.
const epsilon uint64 = 0xFFFF_FFFF

// Field elements are uint64. Unless a function says otherwise, inputs must be
// canonical (in [0, P)) and outputs are canonical.

// Add returns a + b mod P. a, b ∈ [0, P).
func Add(a, b uint64) uint64 {
	s, c := bits.Add64(a, b, 0)
	// a + b − 2^64 ≡ s + ε; cannot overflow because a + b < 2P.
	s += epsilon & -c
	if s >= P {
		s -= P
	}
	return s
}

// Sub returns a − b mod P. a, b ∈ [0, P).
func Sub(a, b uint64) uint64 {
	d, br := bits.Sub64(a, b, 0)
	// On borrow d = a − b + 2^64 and the answer is a − b + P = d − ε;
	// d ≥ 2^64 − P + 1 > ε, so the subtraction cannot wrap.
	d -= epsilon & -br
	return d
}

// Neg returns −a mod P. a ∈ [0, P).
func Neg(a uint64) uint64 {
	if a == 0 {
		return 0
	}
	return P - a
}

// Reduce128 returns (hi·2^64 + lo) mod P for any hi, lo (DESIGN.md §3):
// with hi = hh·2^32 + hl, x ≡ lo − hh + ε·hl.
func Reduce128(hi, lo uint64) uint64 {
	hh := hi >> 32
	hl := hi & epsilon
	t, br := bits.Sub64(lo, hh, 0)
	t -= epsilon & -br // same argument as in Sub
	u := hl<<32 - hl   // hl·ε < 2^64
	r, c := bits.Add64(t, u, 0)
	r += epsilon & -c // t + u − 2^64 + ε < 2^64
	if r >= P {
		r -= P
	}
	return r
}

// Mul returns a·b mod P. a, b may be any uint64 (they need not be canonical).
func Mul(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	return Reduce128(hi, lo)
}

// Pow returns a^e mod P.
func Pow(a, e uint64) uint64 {
	r := uint64(1)
	for ; e > 0; e >>= 1 {
		if e&1 == 1 {
			r = Mul(r, a)
		}
		a = Mul(a, a)
	}
	return r
}

// Inv returns a^{−1} mod P, and 0 for a = 0.
func Inv(a uint64) uint64 { return Pow(a, P-2) }

// FromInt64 maps a signed integer with |x| < P to its residue in [0, P).
func FromInt64(x int64) uint64 {
	if x >= 0 {
		return uint64(x) // x < 2^63 < P
	}
	return P - uint64(-x)
}

// ToInt64Centered maps a residue v ∈ [0, P) to the representative in
// (−P/2, P/2) as a signed integer. It inverts FromInt64 for |x| < P/2, which
// is what makes the exact negacyclic product of DESIGN.md §3 work.
func ToInt64Centered(v uint64) int64 {
	if v > P/2 {
		return -int64(P - v)
	}
	return int64(v)
}
