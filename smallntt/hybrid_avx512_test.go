//go:build amd64 && !purego

package smallntt

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// The AVX-512 kernels give the same bits as the Go kernels and as the AVX2
// kernels on whole transforms, for every factorisation, canonical and
// non-canonical inputs, negacyclic and cyclic, forward and inverse.
func TestAVX512AgainstGeneric(t *testing.T) {
	if !haveAVX512 {
		t.Skip("no AVX-512 kernels on this machine or build (purego, not amd64, or no AVX-512)")
	}
	rng := rand.New(rand.NewPCG(43, 44))
	for _, n := range Sizes {
		_, vecs := testVectors(n, rng, 2)
		for i, f := range factorisations(n) {
			if testing.Short() && n > 1024 && i%3 != 0 {
				continue
			}
			fast, err := NewPlan(n, Hybrid, f...)
			require.NoError(t, err)
			plans := []*Plan{genericPlan(t, n, f), avx2Plan(t, n, f)}
			a, b := make([]uint64, n), make([]uint64, n)
			for _, slow := range plans {
				for _, x := range vecs {
					equalTransforms(t, fast, slow, x, a, b)
				}
			}
		}
	}
}

// congruentAt reports whether got[i] ≡ want[i] (mod P) for every i, and,
// if canonical, got[i] = want[i] < P.
func congruentAt(t *testing.T, what string, got, want []uint64, canonical bool) {
	t.Helper()
	for i := range want {
		if Reduce(got[i]) != Reduce(want[i]) || canonical && got[i] != want[i] {
			t.Errorf("%s: position %d = %#x, want %#x (canonical %v)", what, i, got[i], want[i], canonical)
			return
		}
	}
}

// TestAVX512KernelsAgainstGo compares every AVX-512 kernel with the Go
// kernel of the same network on one call: outputs the Go kernel leaves lazy
// (forward column kernels, the inverse last stage) must be congruent mod P,
// canonical outputs (inverse column kernels, the forward last stage) equal.
// Inputs any uint64, tables T canonical or not.
func TestAVX512KernelsAgainstGo(t *testing.T) {
	if !haveAVX512 {
		t.Skip("no AVX-512 kernels on this machine or build (purego, not amd64, or no AVX-512)")
	}
	rng := rand.New(rand.NewPCG(73, 74))
	for _, f := range avx512Sizes {
		for _, tc := range []int{8, 16} {
			n := f * tc
			ins := kernelInputs(n, rng)
			tabs := kernelInputs(n, rng)
			cols := []struct {
				name      string
				asm       asmCol
				ref       colKernel
				canonical bool
			}{
				{"ColFwdTw", zmmColFwdTw[f], colFwdTw[f], false},
				{"ColFwdCyc", zmmColFwdCyc[f], colFwdCyc[f], false},
				{"ColInvTw", zmmColInvTw[f], colInvTw[f], true},
				{"ColInvCyc", zmmColInvCyc[f], colInvCyc[f], true},
			}
			for _, k := range cols {
				for i, x := range ins {
					T := tabs[(i+len(tabs)/2)%len(tabs)]
					if i%3 == 0 {
						T = tabs[len(tabs)-1] // random
					}
					a, b := append([]uint64(nil), x...), append([]uint64(nil), x...)
					k.asm(&a[0], &T[0], tc)
					k.ref(b, T, tc)
					congruentAt(t, fmt.Sprintf("%s f=%d t=%d input %d", k.name, f, tc, i), a, b, k.canonical)
				}
			}
			for _, inv := range []bool{false, true} {
				for i, x := range ins {
					a, b := append([]uint64(nil), x...), append([]uint64(nil), x...)
					if inv {
						zmmLastInv[f](&a[0], n)
						hyLastInverse(b, f)
					} else {
						zmmLastFwd[f](&a[0], n)
						hyLastForward(b, f)
					}
					congruentAt(t, fmt.Sprintf("last inverse=%v f=%d n=%d input %d", inv, f, n, i), a, b, !inv)
					if !inv {
						c := append([]uint64(nil), x...)
						zmmLastFwdPF[f](&c[0], n, &x[0], 8*(i%9))
						equalAt(t, fmt.Sprintf("last prefetching f=%d n=%d input %d", f, n, i), c, a)
					}
				}
			}
			// The digit kernel against the AVX2 one, whose outputs the
			// AVX2 tests tie to the Go kernels.
			w := make([]uint32, n)
			for i := range w {
				w[i] = rng.Uint32()
			}
			if f == 8 {
				w[0], w[1] = 0, ^uint32(0)
			}
			T := tabs[len(tabs)-1]
			for _, beta := range []int{1, 7, 10, 14} {
				shift, mask, half := uint64(32-beta), uint64(1)<<beta-1, uint64(1)<<(beta-1)
				a, b := make([]uint64, n), make([]uint64, n)
				pf := tabs[0] // prefetched, never changed
				zmmDigits[f](&a[0], &T[0], tc, &w[0], shift, mask, half, &pf[0], 64*(beta%2))
				map[int]func(blk, T *uint64, t int, w *uint32, shift, mask, half uint64){
					8: hyColFwdTwDigitsAVX2_8, 16: hyColFwdTwDigitsAVX2_16, 32: hyColFwdTwDigitsAVX2_32,
				}[f](&b[0], &T[0], tc, &w[0], shift, mask, half)
				congruentAt(t, fmt.Sprintf("digits f=%d t=%d β=%d", f, tc, beta), a, b, false)
			}
		}
	}
}

// prefetchArgs covers pf from its start, at most one line per slot, and
// returns the rest.
func TestPrefetchArgs(t *testing.T) {
	idle := new(uint64)
	pf := make([]uint64, 1000)
	for _, c := range []struct{ n, slots, stride, rest int }{
		{0, 10, 0, 0}, {1000, 0, 0, 1000}, {1000, 10, 64, 920}, {1000, 125, 64, 0},
		{1000, 200, 40, 0}, {1000, 2000, 0, 0}, {16, 4, 32, 0}, {17, 4, 32, 1},
	} {
		p, stride, rest := prefetchArgs(pf[:c.n], c.slots, idle)
		if stride != c.stride || len(rest) != c.rest || (c.n == 0 || c.slots == 0) != (p == idle) {
			t.Errorf("n=%d slots=%d: stride %d, %d left, idle %v; want %d, %d", c.n, c.slots, stride, len(rest), p == idle, c.stride, c.rest)
		}
	}
}
