package smallntt

import (
	"math/rand/v2"
	"testing"
)

func naiveNegacyclicNTT(x []uint64) []uint64 {
	n := len(x)
	psi := Psi(n)
	out := make([]uint64, n)
	for k := 0; k < n; k++ {
		w := Pow(psi, uint64(2*k+1))
		var s, pw uint64 = 0, 1
		for i := 0; i < n; i++ {
			s = Add(s, Mul(x[i], pw))
			pw = Mul(pw, w)
		}
		out[k] = s
	}
	return out
}

func TestButterflyAgainstNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{256, 512} {
		p, err := NewPlan(n, Butterfly)
		if err != nil {
			t.Fatal(err)
		}
		x := make(Poly, n)
		for i := range x {
			x[i] = rng.Uint64N(P)
		}
		want := naiveNegacyclicNTT(x)
		got := make(NTTPoly, n)
		p.Forward(got, x)
		for j, k := range p.Order() {
			if got[j] != want[k] {
				t.Fatalf("N=%d: position %d (k=%d) = %d, want %d", n, j, k, got[j], want[k])
			}
		}
		back := make(Poly, n)
		p.Inverse(back, got)
		for i := range x {
			if back[i] != x[i] {
				t.Fatalf("N=%d: inverse∘forward differs at %d", n, i)
			}
		}
	}
}
