package smallntt

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// kernelInputs returns inputs of length n for one kernel call: extremes
// (0, 1, ε, P−1, P, P+1, 2^63, 2^64−ε, 2^64−1), each alone and mixed with
// random words, and random words of any size.
func kernelInputs(n int, rng *rand.Rand) [][]uint64 {
	ext := []uint64{0, 1, epsilon, P - 1, P, P + 1, 1 << 63, 1<<63 - 1, ^uint64(0) - epsilon + 1, ^uint64(0), ^uint64(0) - 1}
	var vs [][]uint64
	for _, x := range ext {
		v := make([]uint64, n)
		for i := range v {
			v[i] = x
		}
		vs = append(vs, v)
	}
	for r := 0; r < 6; r++ {
		v := make([]uint64, n)
		for i := range v {
			if r%2 == 0 {
				v[i] = ext[rng.IntN(len(ext))]
			} else {
				v[i] = rng.Uint64()
			}
		}
		vs = append(vs, v)
	}
	return vs
}

// TestAVX2KernelsAgainstGo compares every AVX2 kernel with the Go kernel of
// the same network on one call, bit for bit: outputs that are only lazy
// (any uint64 ≡ the value) must be the same words too, since each vector
// lane computes what the scalar helpers compute, with the same ranges.
// Inputs any uint64, tables T canonical or not.
func TestAVX2KernelsAgainstGo(t *testing.T) {
	if !haveAVX2 {
		t.Skip("no AVX2 kernels on this machine or build (purego, not amd64, or no AVX2)")
	}
	useAVX512 = false // accelCol and accelLast: the AVX2 kernels alone
	defer func() { useAVX512 = haveAVX512 }()
	rng := rand.New(rand.NewPCG(71, 72))
	for _, f := range avx2Sizes {
		for _, tc := range []int{4, 8} {
			n := f * tc
			ins := kernelInputs(n, rng)
			tabs := kernelInputs(n, rng)
			cols := []struct {
				name     string
				asm, ref colKernel
			}{
				{"ColFwdTw", accelCol(f, true, false), colFwdTw[f]},
				{"ColFwdCyc", accelCol(f, false, false), colFwdCyc[f]},
				{"ColInvTw", accelCol(f, true, true), colInvTw[f]},
				{"ColInvCyc", accelCol(f, false, true), colInvCyc[f]},
			}
			for _, k := range cols {
				for i, x := range ins {
					T := tabs[(i+len(tabs)/2)%len(tabs)]
					if i%3 == 0 {
						T = tabs[len(tabs)-1] // random
					}
					a, b := append([]uint64(nil), x...), append([]uint64(nil), x...)
					k.asm(a, T, tc)
					k.ref(b, T, tc)
					equalAt(t, fmt.Sprintf("%s f=%d t=%d input %d", k.name, f, tc, i), a, b)
				}
			}
			for _, inv := range []bool{false, true} {
				for i, x := range ins {
					a, b := append([]uint64(nil), x...), append([]uint64(nil), x...)
					accelLast(f, inv)(a)
					if inv {
						hyLastInverse(b, f)
					} else {
						hyLastForward(b, f)
					}
					equalAt(t, fmt.Sprintf("last inverse=%v f=%d n=%d input %d", inv, f, n, i), a, b)
				}
			}
		}
	}
}
