package tfhe

import (
	mrand "math/rand/v2"
	"testing"

	"github.com/goldfhe/goldfhe/smallntt"
	"github.com/goldfhe/goldfhe/torus"
)

// TestVecKernels checks toTorus and rotDiff (AVX2 where there is one)
// against the Go loops they replace, on lengths with and without a tail,
// random values and the edges: residues 0, 1, (P−1)/2, (P+1)/2, P−1; words
// 0, 1, 2^31, 2^32−1.
func TestVecKernels(t *testing.T) {
	r := mrand.New(mrand.NewPCG(91, 92))
	edges := []uint64{0, 1, smallntt.P / 2, smallntt.P/2 + 1, smallntt.P/2 - 1, smallntt.P - 1, 1 << 32, 1<<32 - 1}
	words := []torus.Torus32{0, 1, 1 << 31, 1<<32 - 1, 1<<31 - 1}
	for _, n := range []int{1, 7, 8, 9, 64, 1021, 1024} {
		for trial := range 3 {
			a := make([]uint64, n)
			x, y := make([]torus.Torus32, n), make([]torus.Torus32, n)
			for j := range a {
				if trial == 0 {
					a[j], x[j], y[j] = r.Uint64N(smallntt.P), torus.Torus32(r.Uint32()), torus.Torus32(r.Uint32())
				} else {
					a[j] = edges[r.IntN(len(edges))]
					x[j], y[j] = words[r.IntN(len(words))], words[r.IntN(len(words))]
				}
			}
			for _, add := range []bool{false, true} {
				got, want := make([]torus.Torus32, n), make([]torus.Torus32, n)
				for j := range got {
					got[j] = torus.Torus32(r.Uint32())
					want[j] = got[j]
					c := torus.Torus32(smallntt.ToInt64Centered(a[j]))
					if add {
						want[j] += c
					} else {
						want[j] = c
					}
				}
				toTorus(got, a, add)
				for j := range got {
					if got[j] != want[j] {
						t.Fatalf("toTorus n=%d add=%v: position %d (a=%#x): %#x, want %#x", n, add, j, a[j], got[j], want[j])
					}
				}
			}
			for _, neg := range []bool{false, true} {
				off := r.Uint32()
				got := make([]uint32, n)
				rotDiff(got, x, y, neg, off)
				for j := range got {
					want := uint32(x[j]-y[j]) + off
					if neg {
						want = uint32(-x[j]-y[j]) + off
					}
					if got[j] != want {
						t.Fatalf("rotDiff n=%d neg=%v: position %d: %#x, want %#x", n, neg, j, got[j], want)
					}
				}
			}
		}
	}
}
