package torus

import "math/bits"

// divisor is a public divisor y ≥ 1 made ready for division in time that
// does not depend on the dividend: the 2-by-1 division by an invariant
// integer with a precomputed reciprocal of Möller and Granlund [MG11]
// (their Algorithm 4), in the form of math/big's divWW, with its two
// corrections taken by masks instead of branches.
//
// [MG11] N. Möller, T. Granlund, "Improved division by invariant integers",
// IEEE Trans. Computers 60(2) (2011) 165–175.
type divisor struct {
	y uint64 // the divisor
	d uint64 // y << s: normalized, its top bit set
	v uint64 // ⌊(2^128 − 1)/d⌋ − 2^64, the reciprocal
	s uint   // leading zeros of y
}

// newDivisor prepares y ≥ 1 (y = 0 panics: division by zero). Its time
// depends on y (it divides by it once), which must be public.
func newDivisor(y uint64) divisor {
	s := uint(bits.LeadingZeros64(y))
	d := y << s
	// (2^128 − 1)/d − 2^64 = ((2^64 − 1 − d)·2^64 + 2^64 − 1)/d, whose high
	// word ^d is below d: the quotient fits.
	v, _ := bits.Div64(^d, ^uint64(0), d)
	return divisor{y: y, d: d, v: v, s: s}
}

// divRem returns q = ⌊(x1·2^64 + x0)/y⌋ and r = (x1·2^64 + x0) mod y for
// x1 < y (the quotient fits in 64 bits; another x1 gives a meaningless
// result, not a panic). It has no branch, no division and no table on x1
// and x0: shifts by s, products, additions and masks (tfhe's
// TestConstantTimeCode reads its code).
func (dv *divisor) divRem(x1, x0 uint64) (q, r uint64) {
	s, d := dv.s, dv.d
	// Normalize: x1 < y gives x1 << s | x0 >> (64 − s) < d. (Go's shift
	// by 64 gives 0, which s = 0 needs.)
	x1 = x1<<s | x0>>(64-s)
	x0 <<= s
	// The estimate ⌊(v·x1 + x1·2^64 + x0)/2^64⌋ is low by at most 2
	// (math/big's divWW proves it): the remainder x − q·d is below
	// 2^64 + d, so its high word c is 0 or 1, and one step fixes it.
	t1, t0 := bits.Mul64(dv.v, x1)
	_, c := bits.Add64(t0, x0, 0)
	q, _ = bits.Add64(t1, x1, c)
	p1, p0 := bits.Mul64(d, q)
	r, b := bits.Sub64(x0, p0, 0)
	c, _ = bits.Sub64(x1, p1, b)
	q += c
	r -= d & -c
	// Now r < 2^64; once more if r ≥ d.
	_, b = bits.Sub64(r, d, 0)
	q += 1 - b
	r -= d &^ -b
	return q, r >> s
}
