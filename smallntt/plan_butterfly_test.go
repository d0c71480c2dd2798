package smallntt

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestButterflyAgainstNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{256, 512} {
		p, err := NewPlan(n, Butterfly)
		require.NoError(t, err)
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
