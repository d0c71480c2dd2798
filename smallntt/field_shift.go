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

// Lazy multiplications by a fixed power of two, for the butterfly kernels.
// Each takes any a and returns a value in [0, 2^64) congruent to a·2^s, for s
// in the stated range; callers fold the sign of s ≥ 96 elsewhere.

// shlLo handles 0 ≤ s ≤ 32: a·2^s = hi·2^64 + lo with hi < 2^32, and
// hi·2^64 ≡ hi·ε = hi·2^32 − hi < 2^64.
func shlLo(a uint64, s uint) uint64 {
	lo := a << (s & 63)
	hi := a >> 1 >> ((63 - s) & 63) // a >> (64 − s), 0 for s = 0
	r, c := bits.Add64(lo, hi<<32-hi, 0)
	return r + epsilon&-c // lo + hi·ε < 2^65 − 2^33: one fix suffices
}

// shlMid handles 32 < s < 64 by the 128-bit rule.
func shlMid(a uint64, s uint) uint64 {
	return reduce128Lazy(a>>((64-s)&63), a<<(s&63))
}

// shlHi handles 64 ≤ s < 96. With r = 96 − s ∈ (0, 32], a = q·2^r + m:
// a·2^s = −a·2^−r ≡ −q + m·2^(96−r), and m·2^(96−r) = (m·2^(32−r))·2^64
// ≡ ε·(m<<(32−r)) with m<<(32−r) < 2^32.
func shlHi(a uint64, s uint) uint64 {
	r := (96 - s) & 63
	q := a >> r
	h := (a << (64 - r) >> (64 - r)) << ((32 - r) & 63) // m·2^(32−r), m = a mod 2^r
	e := h<<32 - h
	d, br := bits.Sub64(e, q, 0)
	return d - epsilon&-br // on borrow d ≥ 2^64 − q > ε since q < 2^63
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
