package tfhe

import (
	"fmt"

	"github.com/goldfhe/goldfhe/smallntt"
	"github.com/goldfhe/goldfhe/torus"
)

// TRGSW is a TRGSW sample Z + m·H of an integer m (CGGI20 Def. 3.6): (k+1)·l
// TRLWE rows, Z's rows encrypting zero. Row c·l + i (c = 0..k, i = 0..l−1)
// carries m/Bg^{i+1} on its polynomial c, so that the external product
// Σ_{c,i} d_{c,i}·Row[c·l+i] with the digits d_{c,i} of column c of a TRLWE
// sample gives that sample times m (DESIGN.md §2).
type TRGSW struct {
	Rows []TRLWE
}

// NewTRGSW returns the zero TRGSW sample for TRLWE dimension k, degree bound
// n and l gadget levels, backed by one allocation.
func NewTRGSW(k, l, n int) *TRGSW {
	rows := (k + 1) * l
	backing := make([]torus.Torus32, rows*(k+1)*n)
	polys := make([]torus.Poly, rows*(k+1))
	c := &TRGSW{Rows: make([]TRLWE, rows)}
	for r := range c.Rows {
		for j := 0; j <= k; j++ {
			o := (r*(k+1) + j) * n
			polys[r*(k+1)+j] = backing[o : o+n : o+n]
		}
		c.Rows[r].Value = polys[r*(k+1) : (r+1)*(k+1) : (r+1)*(k+1)]
	}
	return c
}

func (c *TRGSW) wellFormed(k, l, n int) bool {
	if c == nil || len(c.Rows) != (k+1)*l {
		return false
	}
	for r := range c.Rows {
		if !c.Rows[r].wellFormed(k, n) {
			return false
		}
	}
	return true
}

// NTTTRGSW is a TRGSW sample with every polynomial in the NTT domain of one
// smallntt.Plan (and only usable with that plan, or one with the same
// Order): the form the external product consumes. Polynomial (r, c) — row r,
// column c — is Poly(r, c).
type NTTTRGSW struct {
	plan    *smallntt.Plan
	k, l, n int
	data    []uint64 // ((r·(k+1) + c)·N + j)
}

// NewNTTTRGSW transforms c with plan. Row coefficients are Torus32 read as
// signed int32, so that the products of DESIGN.md §3 stay exact.
func NewNTTTRGSW(plan *smallntt.Plan, c *TRGSW) (*NTTTRGSW, error) {
	if plan == nil || c == nil || len(c.Rows) == 0 {
		return nil, fmt.Errorf("tfhe: NewNTTTRGSW: nil plan or empty TRGSW")
	}
	k, n := c.Rows[0].K(), plan.N()
	if k < 1 || len(c.Rows)%(k+1) != 0 || !c.wellFormed(k, len(c.Rows)/(k+1), n) {
		return nil, fmt.Errorf("tfhe: NewNTTTRGSW: TRGSW is malformed or its degree is not the plan's N=%d", n)
	}
	d := &NTTTRGSW{plan: plan, k: k, l: len(c.Rows) / (k + 1), n: n}
	d.data = make([]uint64, len(c.Rows)*(k+1)*n)
	d.fill(c)
	return d, nil
}

func (d *NTTTRGSW) fill(c *TRGSW) {
	for r := range c.Rows {
		for j, p := range c.Rows[r].Value {
			dst := d.Poly(r, j)
			for i, x := range p {
				dst[i] = smallntt.FromInt64(int64(int32(x)))
			}
			d.plan.Forward(dst, smallntt.Poly(dst))
		}
	}
}

// Plan returns the plan whose NTT domain d is in.
func (d *NTTTRGSW) Plan() *smallntt.Plan { return d.plan }

// Poly returns polynomial c of row r (aliasing d's storage).
func (d *NTTTRGSW) Poly(r, c int) smallntt.NTTPoly {
	o := (r*(d.k+1) + c) * d.n
	return smallntt.NTTPoly(d.data[o : o+d.n : o+d.n])
}
