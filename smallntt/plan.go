package smallntt

import (
	"errors"
	"fmt"
	"math/bits"
	"strings"
)

// Variant selects how a Plan computes its transform.
type Variant int

const (
	// Matrix is the decomposed N-point NTT built from shift-based small-point
	// matrix NTTs with merging preprocessing (Li et al. 2024, §2.2 and eq. 9).
	Matrix Variant = iota + 1
	// MatrixNoMerge is Matrix without the merging preprocessing (the paper's
	// "no merging" column of Table 1).
	MatrixNoMerge
	// Butterfly is the radix-2 baseline: Cooley–Tukey forward with a merged,
	// bit-reversed ψ table, Gentleman–Sande inverse.
	Butterfly
)

func (v Variant) String() string {
	switch v {
	case Matrix:
		return "matrix"
	case MatrixNoMerge:
		return "nomerge"
	case Butterfly:
		return "butterfly"
	}
	return fmt.Sprintf("Variant(%d)", int(v))
}

// Poly is a polynomial of Z_p[X]/(X^N+1) in coefficient form, coefficients
// canonical (in [0, P)).
type Poly []uint64

// NTTPoly is a polynomial in the NTT domain of one Plan: position j holds its
// value at ψ^{2·Order()[j]+1}. Values from different plans must not be mixed.
type NTTPoly []uint64

// Plan is a precomputed negacyclic (and cyclic) NTT of one size, variant and
// factorisation. A Plan is immutable after NewPlan and safe for concurrent use
// by any number of goroutines; its transforms allocate nothing.
type Plan struct {
	n       int
	logN    int
	variant Variant
	factors []int
	nInv    uint64

	psiRev    []uint64 // ψ^{brv(i)}, for the Cooley–Tukey forward
	psiInvRev []uint64 // ψ^{−brv(i)}, for the Gentleman–Sande inverse
	order     []int
}

// Sizes lists the supported transform sizes N.
var Sizes = []int{256, 512, 1024, 2048, 4096}

// NewPlan builds a plan for N-point transforms. factors is the factorisation
// of N into small-point sizes {4, 8, 16, 32, 64} for the Matrix variants, in
// stage order; it must be empty for Butterfly.
func NewPlan(n int, v Variant, factors ...int) (*Plan, error) {
	if n < 256 || n > 4096 || n&(n-1) != 0 {
		return nil, fmt.Errorf("smallntt: unsupported size N=%d (want a power of two in [256, 4096])", n)
	}
	p := &Plan{n: n, logN: bits.TrailingZeros(uint(n)), variant: v}
	switch v {
	case Butterfly:
		if len(factors) != 0 {
			return nil, errors.New("smallntt: the butterfly variant takes no factorisation")
		}
	case Matrix, MatrixNoMerge:
		return nil, fmt.Errorf("smallntt: variant %v not implemented yet", v)
	default:
		return nil, fmt.Errorf("smallntt: unknown variant %d", int(v))
	}
	p.nInv = Inv(uint64(n))
	psi := Psi(n)
	psiInv := Inv(psi)
	p.psiRev = make([]uint64, n)
	p.psiInvRev = make([]uint64, n)
	p.order = make([]int, n)
	pw, pwInv := uint64(1), uint64(1)
	for i := 0; i < n; i++ {
		r := brv(i, p.logN)
		p.psiRev[r] = pw
		p.psiInvRev[r] = pwInv
		p.order[i] = r
		pw = Mul(pw, psi)
		pwInv = Mul(pwInv, psiInv)
	}
	return p, nil
}

func brv(i, logN int) int { return int(bits.Reverse(uint(i)) >> (bits.UintSize - logN)) }

// N returns the transform size.
func (p *Plan) N() int { return p.n }

// Variant returns how the plan computes.
func (p *Plan) Variant() Variant { return p.variant }

// Factors returns a copy of the plan's factorisation (nil for Butterfly).
func (p *Plan) Factors() []int { return append([]int(nil), p.factors...) }

// String names the plan as benchmarks do, e.g. "N=1024/8x8x16/matrix".
func (p *Plan) String() string {
	if p.variant == Butterfly {
		return fmt.Sprintf("N=%d/butterfly", p.n)
	}
	f := make([]string, len(p.factors))
	for i, x := range p.factors {
		f[i] = fmt.Sprint(x)
	}
	return fmt.Sprintf("N=%d/%s/%v", p.n, strings.Join(f, "x"), p.variant)
}

// Order returns the NTT-domain order: position j of an NTTPoly holds the
// value at ψ^{2·Order()[j]+1}. The returned slice must not be modified.
func (p *Plan) Order() []int { return p.order }

// Forward computes the negacyclic NTT of src into dst: value k is
// Σ_i src[i]·ψ^{i(2k+1)}, stored at the position Order() gives. dst and src
// must have length N and may be the same slice; src must be canonical.
func (p *Plan) Forward(dst NTTPoly, src Poly) {
	p.check(len(dst), len(src))
	a := dst[:p.n]
	copy(a, src)
	n := p.n
	t := n
	for m := 1; m < n; m <<= 1 {
		t >>= 1
		for i := 0; i < m; i++ {
			j1 := 2 * i * t
			s := p.psiRev[m+i]
			x, y := a[j1:j1+t], a[j1+t:j1+2*t]
			for j := range x {
				u, v := x[j], Mul(y[j], s)
				x[j], y[j] = Add(u, v), Sub(u, v)
			}
		}
	}
}

// Inverse computes the inverse of Forward, including the scaling by N^{−1}.
// dst and src must have length N and may be the same slice.
func (p *Plan) Inverse(dst Poly, src NTTPoly) {
	p.check(len(dst), len(src))
	a := dst[:p.n]
	copy(a, src)
	n := p.n
	t := 1
	for m := n; m > 1; m >>= 1 {
		h := m >> 1
		j1 := 0
		for i := 0; i < h; i++ {
			s := p.psiInvRev[h+i]
			x, y := a[j1:j1+t], a[j1+t:j1+2*t]
			for j := range x {
				u, v := x[j], y[j]
				x[j], y[j] = Add(u, v), Mul(Sub(u, v), s)
			}
			j1 += 2 * t
		}
		t <<= 1
	}
	for j := range a {
		a[j] = Mul(a[j], p.nInv)
	}
}

// MulAdd sets acc[j] += a[j]·b[j] for every j. All three must come from this
// plan (or one with the same Order) and have length N; acc may alias a or b.
func (p *Plan) MulAdd(acc, a, b NTTPoly) {
	p.check(len(acc), len(a))
	p.check(len(acc), len(b))
	a, b = a[:len(acc)], b[:len(acc)]
	for j := range acc {
		acc[j] = Add(acc[j], Mul(a[j], b[j]))
	}
}

// MulTo sets dst[j] = a[j]·b[j]. dst may alias a or b.
func (p *Plan) MulTo(dst, a, b NTTPoly) {
	p.check(len(dst), len(a))
	p.check(len(dst), len(b))
	a, b = a[:len(dst)], b[:len(dst)]
	for j := range dst {
		dst[j] = Mul(a[j], b[j])
	}
}

func (p *Plan) check(a, b int) {
	if a != p.n || b != p.n {
		panic(fmt.Sprintf("smallntt: %v: buffer lengths %d and %d, want %d", p, a, b, p.n))
	}
}

// Psi returns the primitive 2N-th root of unity ψ used by all N-point plans.
// It is the one with ψ^{N/32} = 8 = 2^3, which makes ψ^{2N/m} = 2^{192/m} for
// every m dividing 64: every root of order dividing 64 met inside a
// decomposition is then the power of two of DESIGN.md §4, and ω_N = ψ².
// N must be a power of two with 32 ≤ N ≤ 2^31.
func Psi(n int) uint64 {
	if n < 32 || n&(n-1) != 0 || n > 1<<31 {
		panic(fmt.Sprintf("smallntt: Psi(%d): N must be a power of two in [32, 2^31]", n))
	}
	// r is some primitive 2N-th root (7 generates Z_p^*). r^{N/32} has order 64,
	// so it is 8^j for an odd j; ψ = r^{j^{−1} mod 64} then has ψ^{N/32} = 8.
	r := Pow(7, (P-1)/uint64(2*n))
	c := Pow(r, uint64(n/32))
	j := 1
	for ; Pow(8, uint64(j)) != c; j += 2 {
	}
	m := 1
	for (m*j)%64 != 1 {
		m += 2
	}
	return Pow(r, uint64(m))
}
