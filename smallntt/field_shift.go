package smallntt

import "math/bits"

// Multiplication by powers of two. 2 has order 192 modulo P (2^96 ≡ −1), so
// 2^s for any s is 2^(s mod 192), and 2^s for 96 ≤ s < 192 is −2^(s−96).

// MulPow2 returns a·2^s mod P with shifts only (DESIGN.md §3): s is reduced
// mod 192, s ≥ 96 negates and uses s − 96; the product a·2^s then fits in 160
// bits, split into three 64-bit limbs and reduced once by Reduce192. a any,
// s any; output canonical.
func MulPow2(a uint64, s uint) uint64 {
	s %= 192
	neg := s >= 96
	if neg {
		s -= 96
	}
	w, y, z := shiftLimbs(a, s)
	r := Reduce192(w, y, z)
	if neg {
		r = Neg(r)
	}
	return r
}

// shiftLimbs returns a·2^s as three 64-bit limbs (w, y, z), value
// w·2^128 + y·2^64 + z, for s < 128 (w < 2^32 when s < 96).
func shiftLimbs(a uint64, s uint) (w, y, z uint64) {
	if s < 64 {
		return 0, a >> (64 - s), a << s // Go: a >> 64 = 0 for s = 0
	}
	return a >> (128 - s), a << (s - 64), 0
}

// Multiplications by a fixed power of two for the butterfly kernels. Each
// takes any a and returns a value congruent to a·2^s, for s in the stated
// range: shlLo and shlMid in [0, 2^64), shlHi canonical. Callers fold the
// sign of s ≥ 96 elsewhere; the C forms are canonical.

// shlLo handles 0 ≤ s ≤ 32: a·2^s = hi·2^64 + lo with hi < 2^32, and
// hi·2^64 ≡ hi·ε = hi·2^32 − hi < 2^64.
func shlLo(a uint64, s uint) uint64 {
	lo := a << (s & 63)
	hi := a >> 1 >> ((63 - s) & 63) // a >> (64 − s), 0 for s = 0
	r, c := bits.Add64(lo, hi<<32-hi, 0)
	return r + uint64(uint32(-c)) // lo + hi·ε < 2^65 − 2^33: one fix suffices
}

// shlMid handles 32 < s < 64 by the 128-bit rule.
func shlMid(a uint64, s uint) uint64 {
	return reduce128Lazy(a>>((64-s)&63), a<<(s&63))
}

// shlHi handles 64 ≤ s < 96 and returns a canonical value. With r = 96 − s
// ∈ (0, 32] and a = q·2^r + m: a·2^s = −a·2^−r ≡ −q + m·2^(96−r), and
// m·2^(96−r) = (m·2^(32−r))·2^64 ≡ ε·h with h = m<<(32−r) < 2^32. So the
// result is e − q with e = ε·h < P and q < 2^63: without borrow it is ≤ e,
// with borrow e − q + P < P.
func shlHi(a uint64, s uint) uint64 {
	r := (96 - s) & 63
	q := a >> r
	h := (a << (64 - r) >> (64 - r)) << ((32 - r) & 63)
	e := h<<32 - h
	d, br := bits.Sub64(e, q, 0)
	return d - uint64(uint32(-br))
}

func shlLoC(a uint64, s uint) uint64 { return Reduce(shlLo(a, s)) }

// shlMidC is Reduce(shlMid(a, s)), written out so that it inlines.
func shlMidC(a uint64, s uint) uint64 {
	hi := a >> ((64 - s) & 63)
	t, br := bits.Sub64(a<<(s&63), hi>>32, 0)
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

// shlLazy returns a value in [0, 2^64) ≡ a·2^s for 0 ≤ s < 96, a any.
func shlLazy(a uint64, s uint) uint64 {
	switch {
	case s <= 32:
		return shlLo(a, s)
	case s < 64:
		return shlMid(a, s)
	default:
		return shlHi(a, s)
	}
}
