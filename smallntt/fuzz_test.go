package smallntt

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzNegacyclic reads two polynomials of N = 256 coefficients and a plan
// selector from the fuzzer's bytes, and checks: Forward against the
// butterfly, Inverse∘Forward = identity, and (on small-coefficient
// projections) MulInt64 against the naive product.
func FuzzNegacyclic(f *testing.F) {
	f.Add([]byte{0}, uint8(0))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, uint8(7))
	f.Add([]byte("the goldilocks prime is 2^64 - 2^32 + 1"), uint8(42))
	const n = 256
	bf, err := NewPlan(n, Butterfly)
	if err != nil {
		f.Fatal(err)
	}
	fs := factorisations(n)
	var plans []*Plan
	for _, v := range []Variant{Hybrid, Matrix, MatrixNoMerge} {
		for _, fac := range fs {
			p, err := NewPlan(n, v, fac...)
			if err != nil {
				f.Fatal(err)
			}
			plans = append(plans, p)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, sel uint8) {
		p := plans[int(sel)%len(plans)]
		x := make(Poly, n)
		for i := range x {
			var w [8]byte
			copy(w[:], data[min(len(data), 8*i):min(len(data), 8*i+8)])
			x[i] = binary.LittleEndian.Uint64(w[:])
		}
		want := make(NTTPoly, n)
		got := make(NTTPoly, n)
		bf.Forward(want, x)
		p.Forward(got, x)
		for j := range want {
			if got[j] != want[j] {
				t.Fatalf("%v: Forward differs at %d", p, j)
			}
		}
		back := make(Poly, n)
		p.Inverse(back, got)
		for i := range back {
			if back[i] != Reduce(x[i]) {
				t.Fatalf("%v: Inverse∘Forward differs at %d", p, i)
			}
		}
		// Product of the low 20 bits (signed) with a rotation of itself.
		a := make([]int64, n)
		b := make([]int64, n)
		for i := range a {
			a[i] = int64(x[i]<<44) >> 44
			b[i] = int64(x[(i+int(sel))%n]<<40) >> 40
		}
		prod, err := p.MulInt64(a, b)
		require.NoError(t, err)
		for i, w := range naiveNegacyclicInt(a, b) {
			if w.Int64() != prod[i] {
				t.Fatalf("%v: product differs at %d", p, i)
			}
		}
	})
}
