package smallntt

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkSmallNTT reproduces the paper's Table 1 on the CPU: one n-point
// cyclic transform per operation.
func BenchmarkSmallNTT(b *testing.B) {
	for _, n := range []int{4, 8, 16, 32, 64} {
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

// benchFactors are the paper's Table 2 factorisations (N = 1024) and their
// analogues for the other sizes; the fastest Hybrid plan is added.
var benchFactors = map[int][][]int{
	256:  {{4, 4, 4, 4}, {16, 16}, {4, 64}},
	512:  {{8, 8, 8}, {8, 4, 16}, {16, 32}, {32, 16}},
	1024: {{4, 4, 4, 4, 4}, {8, 8, 16}, {16, 16, 4}, {32, 32}},
	2048: {{4, 4, 4, 4, 8}, {8, 16, 16}, {16, 16, 8}, {32, 64}, {64, 32}},
	4096: {{4, 4, 4, 4, 4, 4}, {16, 16, 16}, {64, 64}},
}

// BenchmarkNTT reproduces the paper's Table 2 on the CPU: one negacyclic
// forward N-point transform per operation, and BenchmarkNTTInverse the inverse.
func BenchmarkNTT(b *testing.B)        { benchNTT(b, false) }
func BenchmarkNTTInverse(b *testing.B) { benchNTT(b, true) }

func benchNTT(b *testing.B, inverse bool) {
	for _, n := range []int{512, 1024, 2048} {
		var plans []*Plan
		for _, f := range benchFactors[n] {
			for _, v := range []Variant{Matrix, MatrixNoMerge, Hybrid} {
				p, err := NewPlan(n, v, f...)
				if err != nil {
					b.Fatal(err)
				}
				plans = append(plans, p)
			}
		}
		bf, _ := NewPlan(n, Butterfly)
		def, _ := DefaultPlan(n)
		plans = append(plans, bf)
		if !containsPlan(plans, def) {
			plans = append(plans, def)
		}
		for _, p := range plans {
			x := randomVec(n, 2)
			y := make([]uint64, n)
			b.Run(p.String(), func(b *testing.B) {
				for b.Loop() {
					if inverse {
						p.Inverse(x, y)
					} else {
						p.Forward(y, x)
					}
				}
			})
		}
	}
}

func containsPlan(ps []*Plan, q *Plan) bool {
	for _, p := range ps {
		if p.String() == q.String() {
			return true
		}
	}
	return false
}

func randomVec(n int, seed uint64) []uint64 {
	rng := rand.New(rand.NewPCG(seed, 99))
	x := make([]uint64, n)
	for i := range x {
		x[i] = rng.Uint64N(P)
	}
	return x
}
