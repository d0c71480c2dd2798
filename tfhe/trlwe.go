package tfhe

import (
	"fmt"

	"github.com/goldfhe/goldfhe/torus"
)

// TRLWE is a TRLWE sample (a_0, …, a_{k−1}, b) of T_N[X]^{k+1} with
// b = Σ_j a_j·s_j + e + μ (CGGI20 Def. 3.1). Value holds the k+1
// polynomials, Value[k] being b.
//
// As for TLWE, functions named …To write into their first argument, may
// take the same *TRLWE as destination and input, and panic on shape
// mismatches.
type TRLWE struct {
	Value []torus.Poly
}

// NewTRLWE returns the zero TRLWE sample with k mask polynomials of degree
// bound n.
func NewTRLWE(k, n int) *TRLWE {
	backing := make([]torus.Torus32, (k+1)*n)
	c := &TRLWE{Value: make([]torus.Poly, k+1)}
	for j := range c.Value {
		c.Value[j] = backing[j*n : (j+1)*n : (j+1)*n]
	}
	return c
}

// K returns the number of mask polynomials k.
func (c *TRLWE) K() int { return len(c.Value) - 1 }

// N returns the polynomial degree bound N.
func (c *TRLWE) N() int {
	if len(c.Value) == 0 {
		return 0
	}
	return len(c.Value[0])
}

// B returns the body polynomial b (aliasing Value[k]).
func (c *TRLWE) B() torus.Poly { return c.Value[len(c.Value)-1] }

// Copy returns a deep copy of c.
func (c *TRLWE) Copy() *TRLWE {
	d := NewTRLWE(c.K(), c.N())
	d.CopyFrom(c)
	return d
}

// CopyFrom sets c to src (same shape).
func (c *TRLWE) CopyFrom(src *TRLWE) {
	checkTRLWE("CopyFrom", c, src)
	for j := range c.Value {
		copy(c.Value[j], src.Value[j])
	}
}

// SetTrivial sets c to the noiseless sample (0, …, 0, mu). mu has N
// coefficients; another length, or a malformed c, panics, as shape
// mismatches do (a shorter mu left c's other body coefficients as they
// were, a longer one was cut).
func (c *TRLWE) SetTrivial(mu torus.Poly) {
	if len(c.Value) == 0 || !c.wellFormed(c.K(), c.N()) || len(mu) != c.N() {
		panic(fmt.Sprintf("tfhe: SetTrivial: message of %d coefficients for a TRLWE of N=%d, or a malformed TRLWE", len(mu), c.N()))
	}
	for j := range c.Value[:c.K()] {
		clear(c.Value[j])
	}
	copy(c.B(), mu)
}

// wellFormed reports whether c has k+1 polynomials of length n each.
func (c *TRLWE) wellFormed(k, n int) bool {
	if c == nil || len(c.Value) != k+1 {
		return false
	}
	for _, p := range c.Value {
		if len(p) != n {
			return false
		}
	}
	return true
}

func checkTRLWE(op string, cs ...*TRLWE) {
	k, n := cs[0].K(), cs[0].N()
	for _, c := range cs {
		if !c.wellFormed(k, n) {
			panic(fmt.Sprintf("tfhe: %s: TRLWE shapes differ or are malformed (want k=%d, N=%d)", op, k, n))
		}
	}
}

// AddTRLWETo sets dst = a + b.
func AddTRLWETo(dst, a, b *TRLWE) {
	checkTRLWE("AddTRLWETo", dst, a, b)
	for j := range dst.Value {
		torus.AddTo(dst.Value[j], a.Value[j], b.Value[j])
	}
}

// SubTRLWETo sets dst = a − b.
func SubTRLWETo(dst, a, b *TRLWE) {
	checkTRLWE("SubTRLWETo", dst, a, b)
	for j := range dst.Value {
		torus.SubTo(dst.Value[j], a.Value[j], b.Value[j])
	}
}

// MulXaTRLWETo sets dst = X^a·src (every polynomial rotated; the phase is
// rotated likewise). dst must not be src, nor share a polynomial with it:
// it panics (torus.MulXaTo).
func MulXaTRLWETo(dst, src *TRLWE, a int) {
	checkTRLWE("MulXaTRLWETo", dst, src)
	if dst == src {
		panic("tfhe: MulXaTRLWETo: dst is src")
	}
	for j := range dst.Value {
		torus.MulXaTo(dst.Value[j], src.Value[j], a)
	}
}

// SampleExtractTo sets dst (dimension k·N) to the TLWE sample of coefficient
// idx of the phase of src, under the extracted key s'_{j·N+i} = s_j[i]
// (CGGI20 Def. 4.1, "SampleExtract"). idx must be in [0, N).
func SampleExtractTo(dst *TLWE, src *TRLWE, idx int) {
	k, n := src.K(), src.N()
	if len(dst.Value) != k*n+1 || idx < 0 || idx >= n {
		panic(fmt.Sprintf("tfhe: SampleExtractTo: dimension %d (want %d) or index %d out of [0, %d)", dst.Dim(), k*n, idx, n))
	}
	for j := 0; j < k; j++ {
		a := src.Value[j][:n]
		out := dst.Value[j*n : (j+1)*n]
		// Coefficient idx of a·s: Σ_{i ≤ idx} a[idx−i]·s[i] − Σ_{i > idx} a[N+idx−i]·s[i].
		for i := 0; i <= idx; i++ {
			out[i] = a[idx-i]
		}
		for i := idx + 1; i < n; i++ {
			out[i] = -a[n+idx-i]
		}
	}
	dst.Value[k*n] = src.B()[idx]
}
