package smallntt

import (
	"errors"
	"fmt"
	"math/bits"
	"strings"
	"sync"
)

// Variant selects how a Plan computes its transform. All variants of one
// size give bit-identical results in the same layout (see Plan).
type Variant int

const (
	// Matrix is the decomposed N-point NTT built from shift-based small-point
	// matrix NTTs with merging preprocessing (Li et al. 2024, §2.2 and eq. 9).
	Matrix Variant = iota + 1
	// MatrixNoMerge is Matrix without the merging preprocessing (the paper's
	// "no merging" column of Table 1).
	MatrixNoMerge
	// Butterfly is the radix-2 baseline: Cooley–Tukey forward with a merged,
	// bit-reversed ψ table, Gentleman–Sande inverse, one general modular
	// multiplication per butterfly.
	Butterfly
	// Hybrid is the decomposed NTT of Matrix (same stages, twiddle tables and
	// layout) with each small transform computed as a radix-2 butterfly
	// network whose twiddles are powers of two (shifts, never a multiplier),
	// vectorised across the columns of a stage, with lazy reduction. It is
	// the fastest on a CPU; see DefaultPlan and plan_hybrid.go.
	Hybrid
)

func (v Variant) String() string {
	switch v {
	case Matrix:
		return "matrix"
	case MatrixNoMerge:
		return "nomerge"
	case Butterfly:
		return "butterfly"
	case Hybrid:
		return "hybrid"
	}
	return fmt.Sprintf("Variant(%d)", int(v))
}

// Poly is a polynomial of Z_p[X]/(X^N+1) in coefficient form. Transforms
// accept any uint64 coefficients (read mod P) and produce canonical ones.
type Poly []uint64

// NTTPoly is a polynomial in the negacyclic NTT domain: position j holds its
// value at ψ^{2·Order()[j]+1}. All plans of one size N share that layout, so
// values from different plans of the same N may be mixed.
type NTTPoly []uint64

// Plan is a precomputed N-point NTT over Z_p, negacyclic (Forward, Inverse:
// products mod X^N+1) and cyclic (ForwardCyclic, InverseCyclic: mod X^N−1).
// A Plan is immutable after NewPlan and safe for concurrent use by any
// number of goroutines; Forward, Inverse, ForwardCyclic, InverseCyclic,
// MulAdd and MulTo allocate nothing and need no scratch.
//
// # NTT-domain layout (every variant, every factorisation)
//
// With L = log2 N, brv_b(j) the reversal of the b low bits of j, ψ = Psi(N)
// and ω = ψ², every plan of size N writes
//
//	Forward:       dst[j] = Σ_{i<N} src[i]·ψ^{i·(2·brv_L(j)+1)}
//	ForwardCyclic: dst[j] = Σ_{i<N} src[i]·ω^{i·brv_L(j)}
//
// so Order()[j] = brv_L(j) and plans of one size are interchangeable in the
// NTT domain. Inverse and InverseCyclic are the exact inverses (scaled by
// N^{−1}). All outputs are canonical.
//
// # Stage structure of the decomposed variants (Matrix, MatrixNoMerge, Hybrid)
//
// This is eq. (9) of Li et al. 2024 applied recursively, written so that it
// can be reproduced bit for bit. Factors f_1, …, f_r (each 4, 8, 16, 32 or
// 64, product N) in stage order; N_1 = N, N_{s+1} = N_s/f_s, t_s = N_{s+1}
// (so t_r = 1), l_s = log2 f_s, brv = brv_{l_s}. Forward copies src to dst
// and runs stages s = 1, …, r in place. Stage s cuts the array into N/N_s
// blocks of N_s consecutive positions; in the block starting at B, position
// B + t_s·i + c is row i < f_s, column c < t_s. For every block and column
// one f_s-point small transform reads the column in natural row order and
// writes its output k, times a twiddle, to row brv(k):
//
//	x_i = a[B + t_s·i + c]                     for i < f_s (all read first)
//	a[B + t_s·brv(k) + c] = T_s[t_s·brv(k) + c] · Σ_{i<f_s} x_i·R_s(i, k)
//
// The twiddle table T_s has N_s entries, indexed by the position inside the
// block (the same table for every block of the stage):
//
//	stage 1, Forward:       R_1(i, k) = ψ_{2f}^{i·(2k+1)}   T_1[t·r + c] = ψ^{c·(2·brv(r)+1)}
//	stage 1, ForwardCyclic: R_1(i, k) = ω_f^{i·k}           T_1[t·r + c] = ω^{c·brv(r)}
//	stage s ≥ 2, both:      R_s(i, k) = ω_f^{i·k}           T_s[t·r + c] = ω_{N_s}^{c·brv(r)}
//
// with f = f_s, t = t_s, r < f, c < t, ψ_{2f} = ψ^{N/f}, ω_f = ψ^{2N/f} and
// ω_{N_s} = ψ^{2N/N_s}. By the choice of ψ (see Psi), ψ_{2f} = 2^{96/f} for
// f ≤ 32, ψ_128 = 2^73 − 2^25 and ω_f = 2^{192/f}: every R_s is a power of
// two (or, for ψ_128^{odd}, a sum of two), applied by shifts. T_r = 1 (t_r = 1)
// is not applied; only the T_s with s < r are general multiplications.
// Inverse (and InverseCyclic) run stages s = r, …, 1, each the exact reverse
// of the forward stage:
//
//	y_k = a[B + t_s·brv(k) + c] · T'_s[t_s·brv(k) + c]   for k < f_s
//	a[B + t_s·i + c] = Σ_{k<f_s} y_k·R_s(i, k)^{−1}
//
// with T'_s = T_s^{−1} for s ≥ 2 and T'_1 = N^{−1}·T_1^{−1}: the whole
// scaling by N^{−1} lives in the stage-1 table, there is no scaling pass.
// Composing the stages gives the layout above: with i = t_1·i_2 + i_1 and
// k = f_1·k_1 + k_2, stage 1 leaves ψ^{i_1·(2k_2+1)}·Σ_{i_2} x_i·ψ_{2f}^{i_2·(2k_2+1)}
// at position t_1·brv_{l_1}(k_2) + i_1, the later stages apply the cyclic
// t_1-point transform (eq. 9, recursively) to that row, which puts X_k at
// t_1·brv_{l_1}(k_2) + brv_{L−l_1}(k_1) = brv_L(k).
//
// The stage-1 twisted transform for f_1 = 64 uses ψ_128 = 2^73 − 2^25: its
// odd powers are sums of two powers of two (two shifted terms in Matrix, one
// general multiplication per butterfly in Hybrid's last level).
// StageTables exports T_s and T'_s for other implementations.
//
// Butterfly computes the same layout with log2 N radix-2 levels over the
// whole array (see plan_butterfly.go); Hybrid computes each stage above with
// butterflies (see plan_hybrid.go).
type Plan struct {
	n       int
	logN    int
	variant Variant
	factors []int
	psi     uint64
	nInv    uint64
	order   []int

	// Butterfly: tables by level m and group g at index m+g (see plan_butterfly.go).
	bfNeg, bfNegInv, bfCyc, bfCycInv []uint64

	// Decomposed variants.
	stages []stage
}

// stage holds one stage of the decomposition (see the Plan doc).
type stage struct {
	f, logf int
	size    int // N_s, the block length
	t       int // N_s/f_s: the row length (number of columns)
	// Twiddles by position inside a block; nil when t == 1.
	tw, twInv       []uint64 // T_s and T'_s (stage 1: negacyclic)
	twCyc, twCycInv []uint64 // stage 1 only: the ForwardCyclic tables
	// Matrix kernels: R_s forward and inverse; stage 1 also its cyclic pair.
	kFwd, kInv, kCycFwd, kCycInv *Small
	// Hybrid shift tables (see plan_hybrid.go).
	hy *hybridStage
}

// Sizes lists the supported transform sizes N.
var Sizes = []int{256, 512, 1024, 2048, 4096}

// SmallSizes lists the supported small-transform sizes (factors).
var SmallSizes = []int{4, 8, 16, 32, 64}

// NewPlan builds a plan for N-point transforms. N must be one of Sizes.
// factors is the factorisation of N into small-point sizes {4, 8, 16, 32, 64}
// for the decomposed variants (Matrix, MatrixNoMerge, Hybrid), in stage order;
// it must be empty for Butterfly.
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
	case Matrix, MatrixNoMerge, Hybrid:
		if len(factors) == 0 {
			return nil, fmt.Errorf("smallntt: variant %v needs a factorisation of N=%d into {4, 8, 16, 32, 64}", v, n)
		}
		prod := 1
		for _, f := range factors {
			if !validSmall(f) {
				return nil, fmt.Errorf("smallntt: factor %d of N=%d not in {4, 8, 16, 32, 64}", f, n)
			}
			prod *= f
			if prod > n {
				break
			}
		}
		if prod != n {
			return nil, fmt.Errorf("smallntt: factors %v do not multiply to N=%d", factors, n)
		}
		p.factors = append([]int(nil), factors...)
	default:
		return nil, fmt.Errorf("smallntt: unknown variant %d", int(v))
	}
	p.psi = Psi(n)
	p.nInv = Inv(uint64(n))
	p.order = make([]int, n)
	for j := range p.order {
		p.order[j] = brv(j, p.logN)
	}
	if v == Butterfly {
		p.initButterfly()
	} else {
		p.initStages()
	}
	return p, nil
}

func brv(i, logN int) int {
	if logN == 0 {
		return 0
	}
	return int(bits.Reverse(uint(i)) >> (bits.UintSize - logN))
}

// N returns the transform size.
func (p *Plan) N() int { return p.n }

// Variant returns how the plan computes.
func (p *Plan) Variant() Variant { return p.variant }

// Factors returns a copy of the plan's factorisation (nil for Butterfly).
func (p *Plan) Factors() []int { return append([]int(nil), p.factors...) }

// Psi returns the plan's ψ, Psi(N).
func (p *Plan) Psi() uint64 { return p.psi }

// String names the plan as benchmarks do, e.g. "N=1024/8x8x16/matrix".
func (p *Plan) String() string {
	if p.variant == Butterfly {
		return fmt.Sprintf("N=%d/butterfly", p.n)
	}
	return fmt.Sprintf("N=%d/%s/%v", p.n, FactorString(p.factors), p.variant)
}

// FactorString writes a factorisation as benchmarks name it, e.g. "8x8x16".
func FactorString(factors []int) string {
	f := make([]string, len(factors))
	for i, x := range factors {
		f[i] = fmt.Sprint(x)
	}
	return strings.Join(f, "x")
}

// Order returns the NTT-domain order: position j of an NTTPoly holds the
// value at ψ^{2·Order()[j]+1}; Order()[j] is the bit reversal of j over
// log2 N bits for every plan. The returned slice must not be modified.
func (p *Plan) Order() []int { return p.order }

// Forward computes the negacyclic NTT of src into dst: position j gets
// Σ_i src[i]·ψ^{i(2·Order()[j]+1)}. dst and src must have length N and may
// be the same slice; src any (read mod P); dst canonical.
func (p *Plan) Forward(dst NTTPoly, src Poly) {
	p.check(len(dst), len(src))
	p.forward(dst, src, false)
}

// Inverse computes the inverse of Forward, including the scaling by N^{−1}.
// dst and src must have length N and may be the same slice; src any; dst
// canonical.
func (p *Plan) Inverse(dst Poly, src NTTPoly) {
	p.check(len(dst), len(src))
	p.inverse(dst, src, false)
}

// ForwardCyclic computes the cyclic NTT (products mod X^N − 1): position j
// gets Σ_i src[i]·ω^{i·Order()[j]}, ω = ψ². Lengths, aliasing and ranges as
// for Forward.
func (p *Plan) ForwardCyclic(dst, src []uint64) {
	p.check(len(dst), len(src))
	p.forward(dst, src, true)
}

// InverseCyclic is the inverse of ForwardCyclic, scaled by N^{−1}.
func (p *Plan) InverseCyclic(dst, src []uint64) {
	p.check(len(dst), len(src))
	p.inverse(dst, src, true)
}

func (p *Plan) forward(dst, src []uint64, cyclic bool) {
	switch p.variant {
	case Butterfly:
		p.forwardButterfly(dst, src, cyclic)
	case Hybrid:
		p.forwardHybrid(dst, src, cyclic)
	default:
		p.forwardMatrix(dst, src, cyclic)
	}
}

func (p *Plan) inverse(dst, src []uint64, cyclic bool) {
	switch p.variant {
	case Butterfly:
		p.inverseButterfly(dst, src, cyclic)
	case Hybrid:
		p.inverseHybrid(dst, src, cyclic)
	default:
		p.inverseMatrix(dst, src, cyclic)
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
// The choice is a tower: Psi(2N)² = Psi(N), so Psi(N)^{N/64} = Psi(64) =
// 2^73 − 2^25 for all N ≥ 64. N must be a power of two with 32 ≤ N ≤ 2^31;
// it panics otherwise.
func Psi(n int) uint64 {
	if n < 32 || n&(n-1) != 0 || int64(n) > 1<<31 {
		panic(fmt.Sprintf("smallntt: Psi(%d): N must be a power of two in [32, 2^31]", n))
	}
	// r is some primitive 2N-th root (7 generates Z_p^*). r^{N/32} has order 64,
	// so it is 8^j for an odd j; ψ = r^{j^{−1} mod 64} then has ψ^{N/32} = 8.
	// r_{2N}² = r_N, and j does not depend on N, so the ψ form a tower.
	// 2N in uint64: as an int it wraps for N = 2^30 where int has 32 bits.
	r := Exp(7, (P-1)/(2*uint64(n)))
	c := Exp(r, uint64(n/32))
	j := 1
	for ; Exp(8, uint64(j)) != c; j += 2 {
	}
	m := 1
	for (m*j)%64 != 1 {
		m += 2
	}
	return Exp(r, uint64(m))
}

// DefaultPlan returns the fastest plan measured on a CPU for size N: the
// Hybrid variant with the factorisation below that was fastest in
// TestTiming on the reference machine of BENCHMARKS.md ("## CPU NTT"), one
// table for the AVX2 kernels and one for the Go kernels (other CPUs,
// -tags purego). Plans are immutable, so the same *Plan is returned to every
// caller.
func DefaultPlan(n int) (*Plan, error) {
	for i, s := range Sizes {
		if s == n {
			return defaultPlans[i]()
		}
	}
	return nil, fmt.Errorf("smallntt: unsupported size N=%d (want one of %v)", n, Sizes)
}

// DefaultFactors returns the factorisation DefaultPlan uses for size N on
// this machine and build (nil for an unsupported size).
func DefaultFactors(n int) []int {
	f := defaultFactorsGo[n]
	if useAVX2 {
		f = defaultFactorsAVX2[n]
	}
	return append([]int(nil), f...)
}

var (
	// defaultFactorsAVX2: 2 stages up to 1024 (one stage-twiddle pass), the
	// kernels' sweet spot of 16–32 rows beyond.
	defaultFactorsAVX2 = map[int][]int{
		256:  {16, 16},
		512:  {32, 16},
		1024: {32, 32},
		2048: {16, 8, 16},
		4096: {16, 8, 32},
	}
	// defaultFactorsGo: small kernels that fit the registers win without SIMD.
	defaultFactorsGo = map[int][]int{
		256:  {4, 8, 8},
		512:  {8, 8, 8},
		1024: {8, 8, 16},
		2048: {4, 8, 8, 8},
		4096: {4, 8, 8, 16},
	}
)

var defaultPlans = func() (f [5]func() (*Plan, error)) {
	for i, n := range Sizes {
		f[i] = sync.OnceValues(func() (*Plan, error) { return NewPlan(n, Hybrid, DefaultFactors(n)...) })
	}
	return
}()

// Accelerated reports whether the plan runs SIMD kernels (AVX2 on amd64)
// for some of its stages. Results are the same bits either way.
func (p *Plan) Accelerated() bool {
	for _, st := range p.stages {
		if st.hy != nil && st.hy.accel {
			return true
		}
	}
	return false
}
