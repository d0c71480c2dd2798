package smallntt

// Every plan method of every variant and size from several goroutines on
// one shared Plan (and every Small), against one goroutine's bits: Plan and
// Small are documented as safe for concurrent use. make test runs these
// under -race, with and without -tags purego. (From a review of the
// concurrency claims: TestConcurrentUse covers one plan's Forward and
// Inverse only.)

import (
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

func concurrentPlans(t *testing.T) []*Plan {
	var ps []*Plan
	for _, n := range Sizes {
		for _, v := range []Variant{Butterfly, Matrix, MatrixNoMerge, Hybrid} {
			var f []int
			if v != Butterfly {
				f = DefaultFactors(n)
			}
			p, err := NewPlan(n, v, f...)
			require.NoError(t, err)
			ps = append(ps, p)
		}
	}
	return ps
}

// concurrentRun calls every method of p on inputs drawn from seed and
// returns every result.
func concurrentRun(p *Plan, seed uint64) [][]uint64 {
	n := p.N()
	rng := rand.New(rand.NewPCG(seed, 1))
	x := make([]uint64, n)
	for i := range x {
		x[i] = rng.Uint64()
	}
	var res [][]uint64
	a := make(NTTPoly, n)
	p.Forward(a, Poly(x))
	res = append(res, slices.Clone(a))
	b := make(Poly, n)
	p.Inverse(b, a)
	res = append(res, slices.Clone(b))
	c := slices.Clone(x)
	p.ForwardCyclic(c, c)
	res = append(res, slices.Clone(c))
	p.InverseCyclic(c, c)
	res = append(res, slices.Clone(c))
	m := make(NTTPoly, n)
	p.MulTo(m, a, a)
	p.MulAdd(m, a, m)
	res = append(res, slices.Clone(m))
	w := make([]uint32, n)
	for i := range w {
		w[i] = rng.Uint32()
	}
	rows := make([]NTTPoly, 4)
	for i := range rows {
		rows[i] = make(NTTPoly, n)
	}
	pf := make([]uint64, 4*n)
	p.ForwardDigitsPrefetch(rows, w, 8, pf)
	for _, r := range rows {
		res = append(res, slices.Clone(r))
	}
	p.ForwardDigits(rows[:3], w, 10)
	for _, r := range rows[:3] {
		res = append(res, slices.Clone(r))
	}
	flat := make([]uint64, 0, 4*n)
	for _, r := range rows {
		flat = append(flat, r...)
	}
	dst := make([]uint64, n)
	MulSum(dst, flat, n, pf, n, 4)
	res = append(res, dst)
	ia, ib := make([]int64, n), make([]int64, n)
	for i := range ia {
		ia[i], ib[i] = int64(rng.IntN(2001)-1000), int64(rng.IntN(3))-1
	}
	out, err := p.MulInt64(ia, ib)
	if err != nil {
		panic(err) // the inputs are in MulInt64's range
	}
	o := make([]uint64, n)
	for i := range out {
		o[i] = uint64(out[i])
	}
	res = append(res, o)
	return res
}

func TestConcurrentUseEveryMethod(t *testing.T) {
	ps := concurrentPlans(t)
	want := make([][][]uint64, len(ps))
	for i, p := range ps {
		want[i] = concurrentRun(p, uint64(i))
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for r := range 3 {
				for k := range ps {
					i := (k + g + r) % len(ps)
					got := concurrentRun(ps[i], uint64(i))
					for j := range got {
						if !slices.Equal(got[j], want[i][j]) {
							t.Errorf("%v result %d differs under concurrency", ps[i], j)
							return
						}
					}
				}
			}
		})
	}
	wg.Wait()
}

func TestConcurrentUseSmall(t *testing.T) {
	var ss []*Small
	for _, n := range SmallSizes {
		for _, v := range []Variant{Matrix, MatrixNoMerge, Butterfly} {
			for k := SmallCyclic; k <= SmallTwistedInverse; k++ {
				s, err := NewSmall(n, k, v)
				require.NoError(t, err)
				ss = append(ss, s)
			}
		}
	}
	run := func(s *Small, seed uint64) []uint64 {
		rng := rand.New(rand.NewPCG(seed, 2))
		x := make([]uint64, s.N())
		for i := range x {
			x[i] = rng.Uint64()
		}
		s.Apply(x, x)
		return x
	}
	want := make([][]uint64, len(ss))
	for i, s := range ss {
		want[i] = run(s, uint64(i))
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for r := range 20 {
				for k := range ss {
					i := (k + g + r) % len(ss)
					if !slices.Equal(run(ss[i], uint64(i)), want[i]) {
						t.Errorf("small %d differs", i)
						return
					}
				}
			}
		})
	}
	wg.Wait()
}
