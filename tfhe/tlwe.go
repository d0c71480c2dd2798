package tfhe

import (
	"fmt"

	"github.com/goldfhe/goldfhe/torus"
)

// TLWE is a TLWE sample (a, b) ∈ T^n × T with b = ⟨a, s⟩ + e + μ (CGGI20
// Def. 2.1). Value holds a_0 … a_{n−1} followed by b, so len(Value) = n+1;
// the layout is the one serialized and copied to the GPU.
//
// Functions named …To write into their first argument and allocate nothing;
// their destination may be the same *TLWE as an input. Dimension mismatches
// between arguments are programming errors and panic (the engines of package
// bootstrap check user input and return errors instead).
type TLWE struct {
	Value []torus.Torus32
}

// NewTLWE returns the zero TLWE sample of dimension n.
func NewTLWE(n int) *TLWE { return &TLWE{Value: make([]torus.Torus32, n+1)} }

// NewTrivialTLWE returns the noiseless sample (0, mu) of dimension n, whose
// phase under every key is mu.
func NewTrivialTLWE(n int, mu torus.Torus32) *TLWE {
	c := NewTLWE(n)
	c.Value[n] = mu
	return c
}

// Dim returns n; it is −1 for a sample without a body (nil Value).
func (c *TLWE) Dim() int { return len(c.Value) - 1 }

// A returns the mask a (aliasing Value).
func (c *TLWE) A() []torus.Torus32 { return c.Value[:len(c.Value)-1] }

// B returns the body b.
func (c *TLWE) B() torus.Torus32 { return c.Value[len(c.Value)-1] }

// SetB sets the body b.
func (c *TLWE) SetB(b torus.Torus32) { c.Value[len(c.Value)-1] = b }

// Copy returns a deep copy of c.
func (c *TLWE) Copy() *TLWE {
	return &TLWE{Value: append([]torus.Torus32(nil), c.Value...)}
}

// CopyFrom sets c to src (same dimension).
func (c *TLWE) CopyFrom(src *TLWE) {
	checkDims("CopyFrom", c, src)
	copy(c.Value, src.Value)
}

// SetTrivial sets c to the noiseless sample (0, mu).
func (c *TLWE) SetTrivial(mu torus.Torus32) {
	clear(c.Value)
	c.SetB(mu)
}

func checkDims(op string, cs ...*TLWE) {
	for _, x := range cs[1:] {
		if len(x.Value) != len(cs[0].Value) {
			panic(fmt.Sprintf("tfhe: %s: TLWE dimensions differ (%d vs %d)", op, x.Dim(), cs[0].Dim()))
		}
	}
}

// AddTLWETo sets dst = a + b.
func AddTLWETo(dst, a, b *TLWE) {
	checkDims("AddTLWETo", dst, a, b)
	d, x, y := dst.Value, a.Value[:len(dst.Value)], b.Value[:len(dst.Value)]
	for i := range d {
		d[i] = x[i] + y[i]
	}
}

// SubTLWETo sets dst = a − b.
func SubTLWETo(dst, a, b *TLWE) {
	checkDims("SubTLWETo", dst, a, b)
	d, x, y := dst.Value, a.Value[:len(dst.Value)], b.Value[:len(dst.Value)]
	for i := range d {
		d[i] = x[i] - y[i]
	}
}

// NegTLWETo sets dst = −a (the free NOT gate of DESIGN.md §2).
func NegTLWETo(dst, a *TLWE) {
	checkDims("NegTLWETo", dst, a)
	d, x := dst.Value, a.Value[:len(dst.Value)]
	for i := range d {
		d[i] = -x[i]
	}
}

// MulAddTLWETo sets dst = dst + m·a for an integer m (for example m = 2 in
// the XOR gate).
func MulAddTLWETo(dst *TLWE, m int32, a *TLWE) {
	checkDims("MulAddTLWETo", dst, a)
	d, x := dst.Value, a.Value[:len(dst.Value)]
	mm := torus.Torus32(m)
	for i := range d {
		d[i] += mm * x[i]
	}
}

// AddConstTLWETo sets dst = a + (0, mu): the phase moves by mu.
func AddConstTLWETo(dst, a *TLWE, mu torus.Torus32) {
	checkDims("AddConstTLWETo", dst, a)
	copy(dst.Value, a.Value)
	dst.SetB(dst.B() + mu)
}
