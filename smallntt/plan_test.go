package smallntt

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// allPlans returns every plan of size n: the butterfly and each decomposed
// variant with every factorisation (under -short, Matrix and MatrixNoMerge
// only with a spread of factorisations).
func allPlans(t testing.TB, n int, short bool) []*Plan {
	var plans []*Plan
	p, err := NewPlan(n, Butterfly)
	require.NoError(t, err)
	plans = append(plans, p)
	fs := factorisations(n)
	for _, v := range []Variant{Hybrid, Matrix, MatrixNoMerge} {
		for i, f := range fs {
			if short && v != Hybrid && i%5 != 0 && i != len(fs)-1 {
				continue
			}
			p, err := NewPlan(n, v, f...)
			require.NoError(t, err)
			plans = append(plans, p)
			if v == Hybrid && haveAVX2 {
				plans = append(plans, genericPlan(t, n, f))
			}
		}
	}
	return plans
}

// genericPlan builds a Hybrid plan with the Go kernels only.
func genericPlan(t testing.TB, n int, f []int) *Plan {
	useAVX2 = false
	defer func() { useAVX2 = haveAVX2 }()
	p, err := NewPlan(n, Hybrid, f...)
	require.NoError(t, err)
	return p
}

// avx2Plan builds a Hybrid plan with the AVX2 kernels but not the AVX-512
// ones.
func avx2Plan(t testing.TB, n int, f []int) *Plan {
	useAVX512 = false
	defer func() { useAVX512 = haveAVX512 }()
	p, err := NewPlan(n, Hybrid, f...)
	require.NoError(t, err)
	return p
}

// The AVX2 kernels and the Go kernels give the same bits, on every
// factorisation, for canonical and non-canonical inputs.
func TestAVX2AgainstGeneric(t *testing.T) {
	if !haveAVX2 {
		t.Skip("no AVX2 kernels on this machine or build (purego, not amd64, or no AVX2)")
	}
	rng := rand.New(rand.NewPCG(41, 42))
	for _, n := range Sizes {
		_, vecs := testVectors(n, rng, 2)
		for i, f := range factorisations(n) {
			if testing.Short() && n > 1024 && i%3 != 0 {
				continue
			}
			fast := avx2Plan(t, n, f)
			slow := genericPlan(t, n, f)
			if fast.stages[0].hy.accel != (f[0] <= 32) {
				t.Fatalf("%v: accel = %v", fast, fast.stages[0].hy.accel)
			}
			a, b := make([]uint64, n), make([]uint64, n)
			for _, x := range vecs {
				equalTransforms(t, fast, slow, x, a, b)
			}
		}
	}
}

func TestFactorisationCount(t *testing.T) {
	// Compositions of log2 N into parts 2..6: 12, 18, 29, 45, 71.
	want := map[int]int{256: 12, 512: 18, 1024: 29, 2048: 45, 4096: 71}
	for n, c := range want {
		if got := len(factorisations(n)); got != c {
			t.Errorf("N=%d: %d factorisations, want %d", n, got, c)
		}
	}
}

// Every plan equals the naive O(N²) transform, read through Order(), on
// random inputs and extremes, negacyclic and cyclic, and inverts exactly.
func TestPlansAgainstNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, n := range Sizes {
		random := 3
		if testing.Short() && n >= 2048 {
			random = 1
		}
		names, vecs := testVectors(n, rng, random)
		for _, cyclic := range []bool{false, true} {
			wants := make([][]uint64, len(vecs))
			for i, x := range vecs {
				wants[i] = naiveNTT(x, cyclic)
			}
			for _, p := range allPlans(t, n, testing.Short()) {
				got := make([]uint64, n)
				back := make([]uint64, n)
				for i, x := range vecs {
					what := fmt.Sprintf("%v cyclic=%v %s", p, cyclic, names[i])
					fw, inv := p.Forward, p.Inverse
					if cyclic {
						fw = func(d NTTPoly, s Poly) { p.ForwardCyclic(d, s) }
						inv = func(d Poly, s NTTPoly) { p.InverseCyclic(d, s) }
					}
					fw(got, x)
					ok := true
					for j, k := range p.Order() {
						if got[j] != wants[i][k] {
							t.Errorf("%s: position %d (k=%d) = %d, want %d", what, j, k, got[j], wants[i][k])
							ok = false
							break
						}
					}
					if !ok {
						continue
					}
					inv(back, got)
					for j := range x {
						if back[j] != Reduce(x[j]) {
							t.Errorf("%s: inverse∘forward differs at %d", what, j)
							break
						}
					}
					// In place, both directions.
					copy(back, x)
					fw(back, back)
					equalAt(t, what+" in place", back, got)
					inv(back, back)
					for j := range x {
						if back[j] != Reduce(x[j]) {
							t.Errorf("%s: in-place inverse differs at %d", what, j)
							break
						}
					}
				}
			}
		}
	}
}

// The inverse of arbitrary (non-canonical) NTT-domain data is read mod P.
func TestInverseOfAnyInput(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	for _, p := range allPlans(t, 256, true) {
		y := make([]uint64, 256)
		for i := range y {
			y[i] = rng.Uint64()
		}
		yr := make([]uint64, 256)
		for i := range y {
			yr[i] = Reduce(y[i])
		}
		a, b := make([]uint64, 256), make([]uint64, 256)
		p.Inverse(a, y)
		p.Inverse(b, yr)
		equalAt(t, p.String(), a, b)
		for _, v := range a {
			if v >= P {
				t.Fatalf("%v: non-canonical output", p)
			}
		}
	}
}

func TestNewPlanErrors(t *testing.T) {
	bad := []struct {
		n       int
		v       Variant
		factors []int
	}{
		{128, Butterfly, nil},
		{1000, Butterfly, nil},
		{8192, Butterfly, nil},
		{0, Matrix, []int{4}},
		{1024, Butterfly, []int{32, 32}},
		{1024, Matrix, nil},
		{1024, Hybrid, nil},
		{1024, Matrix, []int{32, 16}},
		{1024, Matrix, []int{32, 32, 4}},
		{1024, Matrix, []int{2, 512}},
		{1024, MatrixNoMerge, []int{128, 8}},
		{1024, Matrix, []int{1, 32, 32}},
		{1024, Matrix, []int{-4, -256}},
		{1024, Matrix, []int{12, 12}},
		{1024, Variant(0), []int{32, 32}},
		{1024, Variant(99), nil},
	}
	for _, b := range bad {
		if p, err := NewPlan(b.n, b.v, b.factors...); err == nil {
			t.Errorf("NewPlan(%d, %v, %v) = %v, want an error", b.n, b.v, b.factors, p)
		}
	}
}

func TestWrongLengthPanics(t *testing.T) {
	p, _ := NewPlan(256, Matrix, 16, 16)
	defer func() {
		if recover() == nil {
			t.Error("no panic on a short buffer")
		}
	}()
	p.Forward(make(NTTPoly, 256), make(Poly, 255))
}

func TestPlanString(t *testing.T) {
	p, _ := NewPlan(1024, Matrix, 8, 8, 16)
	if s := p.String(); s != "N=1024/8x8x16/matrix" {
		t.Errorf("String() = %q", s)
	}
	q, _ := NewPlan(1024, Butterfly)
	if s := q.String(); s != "N=1024/butterfly" {
		t.Errorf("String() = %q", s)
	}
	f := p.Factors()
	f[0] = 99
	if p.Factors()[0] != 8 {
		t.Error("Factors() exposes internal state")
	}
}

// Hot paths allocate nothing (STYLE §5).
func TestNoAllocations(t *testing.T) {
	for _, p := range allPlans(t, 1024, true) {
		a := make(NTTPoly, 1024)
		b := make(NTTPoly, 1024)
		x := make(Poly, 1024)
		for name, f := range map[string]func(){
			"Forward":       func() { p.Forward(a, x) },
			"Inverse":       func() { p.Inverse(x, a) },
			"ForwardCyclic": func() { p.ForwardCyclic(a, x) },
			"InverseCyclic": func() { p.InverseCyclic(x, a) },
			"MulAdd":        func() { p.MulAdd(a, a, b) },
			"MulTo":         func() { p.MulTo(a, a, b) },
		} {
			if n := testing.AllocsPerRun(5, f); n != 0 {
				t.Errorf("%v %s: %v allocations", p, name, n)
			}
		}
	}
}

// One plan used by many goroutines at once gives the same answers; make
// test runs it under -race too, to check that nothing is written.
func TestConcurrentUse(t *testing.T) {
	p, err := DefaultPlan(1024)
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(15, 16))
	x := make(Poly, 1024)
	for i := range x {
		x[i] = rng.Uint64N(P)
	}
	want := make(NTTPoly, 1024)
	p.Forward(want, x)
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got := make(NTTPoly, 1024)
			back := make(Poly, 1024)
			for r := 0; r < 50; r++ {
				p.Forward(got, x)
				p.Inverse(back, got)
				for j := range got {
					if got[j] != want[j] || back[j] != x[j] {
						errs <- fmt.Sprintf("goroutine result differs at %d", j)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

func TestMulAddMulTo(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	p, _ := NewPlan(256, Butterfly)
	acc, a, b := make(NTTPoly, 256), make(NTTPoly, 256), make(NTTPoly, 256)
	for i := range a {
		acc[i], a[i], b[i] = rng.Uint64(), rng.Uint64(), rng.Uint64()
	}
	acc[0], a[0], b[0] = ^uint64(0), ^uint64(0), ^uint64(0)
	want := make([]uint64, 256)
	for i := range want {
		want[i] = Add(Reduce(acc[i]), Mul(a[i], b[i]))
	}
	p.MulAdd(acc, a, b)
	equalAt(t, "MulAdd", acc, want)
	for i := range want {
		want[i] = Mul(a[i], acc[i])
	}
	p.MulTo(a, a, acc) // aliasing dst = a
	equalAt(t, "MulTo", a, want)
}
