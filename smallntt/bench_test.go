package smallntt

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// BenchmarkSmallNTT reproduces the paper's Table 1 on the CPU: one n-point
// cyclic transform per operation (Small.Apply, natural order in and out).
func BenchmarkSmallNTT(b *testing.B) {
	for _, n := range SmallSizes {
		for _, v := range []Variant{Matrix, MatrixNoMerge, Butterfly} {
			s, err := NewSmall(n, SmallCyclic, v)
			if err != nil {
				b.Fatal(err)
			}
			x := randomVec(n, 1)
			b.Run(fmt.Sprintf("n=%d/%v", n, v), func(b *testing.B) {
				for b.Loop() {
					s.Apply(x, x)
				}
			})
		}
	}
}

// paperFactors are the paper's Table 2 factorisations (N = 1024) and their
// analogues for N = 512 and 2048.
var paperFactors = map[int][][]int{
	512:  {{8, 8, 8}, {4, 8, 16}, {16, 32}, {32, 16}},
	1024: {{4, 4, 4, 4, 4}, {8, 8, 16}, {16, 16, 4}, {32, 32}},
	2048: {{4, 4, 4, 4, 8}, {8, 16, 16}, {16, 16, 8}, {32, 64}},
}

type benchPlan struct {
	name string
	p    *Plan
}

// benchPlans returns, for size n: each paper factorisation in the Matrix,
// MatrixNoMerge and Hybrid variants, the butterfly, DefaultPlan ("default",
// under its own name too if it is not already listed) and the default
// factorisation with the Go kernels only ("hybrid-noasm").
func benchPlans(b *testing.B, n int, variants []Variant) []benchPlan {
	var out []benchPlan
	seen := map[string]bool{}
	add := func(name string, p *Plan) {
		if !seen[name] {
			seen[name] = true
			out = append(out, benchPlan{name, p})
		}
	}
	for _, f := range paperFactors[n] {
		for _, v := range variants {
			p, err := NewPlan(n, v, f...)
			if err != nil {
				b.Fatal(err)
			}
			add(p.String(), p)
		}
	}
	bf, _ := NewPlan(n, Butterfly)
	add(bf.String(), bf)
	def, err := DefaultPlan(n)
	require.NoError(b, err)
	add(def.String(), def)
	add(fmt.Sprintf("N=%d/default", n), def)
	if haveAVX2 {
		// The Go kernels alone, for the AVX2 default factorisation and for
		// the one DefaultPlan picks without AVX2.
		useAVX2 = false
		for _, f := range [][]int{def.Factors(), DefaultFactors(n)} {
			p, err := NewPlan(n, Hybrid, f...)
			if err != nil {
				b.Fatal(err)
			}
			add(p.String()+"-noasm", p)
		}
		useAVX2 = haveAVX2
	}
	return out
}

// BenchmarkNTT reproduces the paper's Table 2 on the CPU: one negacyclic
// forward N-point transform per operation.
func BenchmarkNTT(b *testing.B) {
	for _, n := range []int{512, 1024, 2048} {
		for _, bp := range benchPlans(b, n, []Variant{Matrix, MatrixNoMerge, Hybrid}) {
			x := randomVec(n, 2)
			y := make(NTTPoly, n)
			b.Run(bp.name, func(b *testing.B) {
				for b.Loop() {
					bp.p.Forward(y, x)
				}
			})
		}
	}
}

// BenchmarkNTTInverse times the inverse of the butterfly and Hybrid plans.
func BenchmarkNTTInverse(b *testing.B) {
	for _, n := range []int{512, 1024, 2048} {
		for _, bp := range benchPlans(b, n, []Variant{Hybrid}) {
			x := randomVec(n, 2)
			y := make(Poly, n)
			b.Run(bp.name, func(b *testing.B) {
				for b.Loop() {
					bp.p.Inverse(y, x)
				}
			})
		}
	}
}

// BenchmarkMulAdd times the pointwise multiply-accumulate of the NTT domain.
func BenchmarkMulAdd(b *testing.B) {
	p, _ := DefaultPlan(1024)
	acc, x, y := randomVec(1024, 3), randomVec(1024, 4), randomVec(1024, 5)
	b.Run("N=1024", func(b *testing.B) {
		for b.Loop() {
			p.MulAdd(acc, x, y)
		}
	})
}

func randomVec(n int, seed uint64) []uint64 {
	rng := rand.New(rand.NewPCG(seed, 99))
	x := make([]uint64, n)
	for i := range x {
		x[i] = rng.Uint64N(P)
	}
	return x
}
