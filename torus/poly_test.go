package torus

import (
	mrand "math/rand/v2"
	"slices"
	"testing"
)

func randPoly(r *mrand.Rand, n int) Poly {
	p := NewPoly(n)
	for i := range p {
		p[i] = Torus32(r.Uint32())
	}
	return p
}

func randInts(r *mrand.Rand, n int, bound int32) []int32 {
	a := make([]int32, n)
	for i := range a {
		a[i] = r.Int32N(2*bound+1) - bound
	}
	return a
}

// refMul is an independent formulation of the negacyclic product: the exponent
// i+j is reduced mod 2N and X^N = −1 is applied at the end.
func refMul(a []int32, b Poly) Poly {
	n := len(b)
	full := make([]Torus32, 2*n)
	for i := range a {
		for j := range b {
			full[i+j] += Torus32(a[i]) * b[j]
		}
	}
	out := NewPoly(n)
	for i := range out {
		out[i] = full[i] - full[i+n]
	}
	return out
}

func equal(a, b Poly) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return len(a) == len(b)
}

func TestMulNaive(t *testing.T) {
	r := mrand.New(mrand.NewPCG(5, 6))
	for _, n := range []int{1, 2, 4, 16, 64, 256} {
		for range 5 {
			a := randInts(r, n, 1<<20)
			b := randPoly(r, n)
			got := NewPoly(n)
			MulNaiveTo(got, a, b)
			if want := refMul(a, b); !equal(got, want) {
				t.Fatalf("N=%d: MulNaiveTo differs from the reference", n)
			}
			// Extreme values: int32 min/max times torus max.
			for i := range a {
				a[i] = [...]int32{-1 << 31, 1<<31 - 1, 0, -1}[i%4]
				b[i] = [...]Torus32{1<<32 - 1, 1 << 31, 1, 0}[(i/4)%4]
			}
			MulNaiveTo(got, a, b)
			if want := refMul(a, b); !equal(got, want) {
				t.Fatalf("N=%d: MulNaiveTo differs from the reference on extremes", n)
			}
		}
	}
}

func TestMulXa(t *testing.T) {
	r := mrand.New(mrand.NewPCG(7, 8))
	for _, n := range []int{1, 2, 8, 64, 1024} {
		p := randPoly(r, n)
		got, got2, want := NewPoly(n), NewPoly(n), NewPoly(n)
		for _, a := range []int{0, 1, n - 1, n, n + 1, 2*n - 1, 2 * n, -1, -n, -2*n - 3, 5*n + 2, r.IntN(4 * n)} {
			// Oracle: the naive product with the monomial ±X^{a mod N}.
			mono := make([]int32, n)
			am := ((a % (2 * n)) + 2*n) % (2 * n)
			if am < n {
				mono[am] = 1
			} else {
				mono[am-n] = -1
			}
			MulNaiveTo(want, mono, p)
			MulXaTo(got, p, a)
			if !equal(got, want) {
				t.Fatalf("N=%d: MulXaTo(%d) wrong", n, a)
			}
			SubTo(want, want, p)
			MulXaMinusOneTo(got2, p, a)
			if !equal(got2, want) {
				t.Fatalf("N=%d: MulXaMinusOneTo(%d) wrong", n, a)
			}
		}
	}
}

func TestAddSubNeg(t *testing.T) {
	r := mrand.New(mrand.NewPCG(9, 10))
	n := 33
	a, b := randPoly(r, n), randPoly(r, n)
	s, d, ng := NewPoly(n), NewPoly(n), NewPoly(n)
	AddTo(s, a, b)
	SubTo(d, s, b)
	if !equal(d, a) {
		t.Fatal("(a+b)−b ≠ a")
	}
	NegTo(ng, a)
	AddTo(ng, ng, a)
	if !equal(ng, NewPoly(n)) {
		t.Fatal("−a+a ≠ 0")
	}
	// Aliasing: dst = a.
	c := append(Poly(nil), a...)
	AddTo(c, c, c)
	for i := range c {
		if c[i] != 2*a[i] {
			t.Fatal("AddTo with dst = a = b wrong")
		}
	}
	defer func() {
		if recover() == nil {
			t.Fatal("length mismatch did not panic")
		}
	}()
	AddTo(s, a, b[:n-1])
}

func BenchmarkMulNaive(b *testing.B) {
	r := mrand.New(mrand.NewPCG(1, 1))
	n := 1024
	a, p, dst := randInts(r, n, 64), randPoly(r, n), NewPoly(n)
	for b.Loop() {
		MulNaiveTo(dst, a, p)
	}
}

// TestNoAliasPanics checks that the functions whose dst must not alias
// their torus input panic when it does, rather than return a wrong result
// (MulXaTo(p, p, 1) gave (−4, −4, 2, 3) for p = (1, 2, 3, 4), and
// MulNaiveTo(b, a, b) zero), and that distinct slices still work.
func TestNoAliasPanics(t *testing.T) {
	p := Poly{1, 2, 3, 4}
	a := []int32{0, 1, 0, 0}
	for name, f := range map[string]func(){
		"MulXaTo":         func() { MulXaTo(p, p, 1) },
		"MulXaMinusOneTo": func() { MulXaMinusOneTo(p, p, 1) },
		"MulNaiveTo":      func() { MulNaiveTo(p, a, p) },
		"MulAddNaive":     func() { MulAddNaive(p, a, p) },
	} {
		func() {
			defer func() {
				r := recover()
				if s, ok := r.(string); !ok || s != "torus: "+name+": dst is the input polynomial it must not alias" {
					t.Errorf("%s with dst the input: recovered %v, want its aliasing panic (p = %v)", name, r, p)
				}
			}()
			f()
		}()
		p = Poly{1, 2, 3, 4}
	}
	d := NewPoly(4)
	MulXaTo(d, p, 1)
	if want := (Poly{1<<32 - 4, 1, 2, 3}); !slices.Equal(d, want) {
		t.Errorf("MulXaTo(d, p, 1) = %v, want %v", d, want)
	}
	MulNaiveTo(d, a, p)
	if want := (Poly{1<<32 - 4, 1, 2, 3}); !slices.Equal(d, want) {
		t.Errorf("MulNaiveTo(d, X, p) = %v, want %v", d, want)
	}
	// Empty polynomials alias nothing.
	MulXaTo(Poly{}, Poly{}, 3)
}
