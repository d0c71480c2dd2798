package smallntt

import (
	"fmt"
	"math/bits"
)

// Small-point transforms, n ∈ {4, 8, 16, 32, 64}.
//
// Every root of unity of order dividing 128 used here is a power of
// ψ_128 = Psi(64), the square root of 8 = 2^3 of order 128 that every Plan's ψ
// reaches (Psi(N)^{N/64} = Psi(64) for all N). Its even powers are powers of
// two, ψ_128^{2j} = 2^{3j}, and its odd powers are sums of two of them:
// ψ_128 = 2^73 − 2^25 ≡ 2^73 + 2^121, so ψ_128^{2j+1} = 2^{3j+73} + 2^{3j+121}.
// Hence ω_n = ψ_128^{128/n} = 2^{192/n} and ψ_{2n} = ψ_128^{64/n} = 2^{96/n}
// for n ≤ 32, and even the twisted 64-point transform needs no multiplier.

// SmallKind selects one of the four small-point transforms; E(k, m) is the
// exponent of ψ_128 in its matrix entry for output k and input m (mod 128).
type SmallKind int

const (
	// SmallCyclic: Y_k = Σ_m x_m·ω_n^{m·k}; E = (128/n)·m·k.
	SmallCyclic SmallKind = iota + 1
	// SmallTwisted: Y_k = Σ_m x_m·ψ_{2n}^{m·(2k+1)}; E = (64/n)·m·(2k+1).
	// It is the cyclic transform of x_m·ψ_{2n}^m (the negacyclic first stage).
	SmallTwisted
	// SmallCyclicInverse: x_k = Σ_m Y_m·ω_n^{−k·m}; E = −(128/n)·k·m.
	// Unscaled: n times the inverse of SmallCyclic.
	SmallCyclicInverse
	// SmallTwistedInverse: x_k = Σ_m Y_m·ψ_{2n}^{−k·(2m+1)}; E = −(64/n)·k·(2m+1).
	// Unscaled: n times the inverse of SmallTwisted.
	SmallTwistedInverse
)

func (k SmallKind) String() string {
	switch k {
	case SmallCyclic:
		return "cyclic"
	case SmallTwisted:
		return "twisted"
	case SmallCyclicInverse:
		return "cyclic-inverse"
	case SmallTwistedInverse:
		return "twisted-inverse"
	}
	return fmt.Sprintf("SmallKind(%d)", int(k))
}

// psi128 is Psi(64) = 2^73 − 2^25 mod P, the primitive 128-th root of unity
// all small transforms are written in (re-derived in small_test.go).
const psi128 uint64 = 0x0000_01FF_FDFF_FE00

// smallExp returns E(k, m) of kind for size n (see SmallKind), in [0, 128).
func smallExp(kind SmallKind, n, k, m int) int {
	var e int
	switch kind {
	case SmallCyclic:
		e = (128 / n) * (m * k % n)
	case SmallTwisted:
		e = (64 / n) * (m * (2*k + 1) % (2 * n))
	case SmallCyclicInverse:
		e = -(128 / n) * (m * k % n)
	case SmallTwistedInverse:
		e = -(64 / n) * (k * (2*m + 1) % (2 * n))
	default:
		panic("smallntt: bad SmallKind")
	}
	return ((e % 128) + 128) % 128
}

// psiShifts writes ψ_128^e (e any integer) as a sum of one or two powers of
// two 2^s, s ∈ [0, 192), and returns them (the second is −1 when unused).
func psiShifts(e int) (s0, s1 int) {
	e = ((e % 128) + 128) % 128
	if e%2 == 0 {
		return 3 * e / 2, -1
	}
	b := 3 * (e - 1) / 2
	return (b + 73) % 192, (b + 121) % 192
}

func validSmall(n int) bool { return n >= 4 && n <= 64 && n&(n-1) == 0 }

// Small is a precomputed small-point transform of one size, kind and variant:
// Matrix (shift-based, merged), MatrixNoMerge (shift-based, every output
// from all n inputs) or Butterfly (the paper's baseline for its Table 1: a
// plain radix-2 network with general multiplications by a twiddle table).
// It is immutable and safe for concurrent use; Apply allocates nothing.
type Small struct {
	n       int
	log     int
	kind    SmallKind
	variant Variant
	m       *matrixKernel // Matrix, MatrixNoMerge
	b       *smallButterfly
}

// NewSmall builds an n-point transform; n must be 4, 8, 16, 32 or 64 and v
// one of Matrix, MatrixNoMerge, Butterfly.
func NewSmall(n int, kind SmallKind, v Variant) (*Small, error) {
	if !validSmall(n) {
		return nil, fmt.Errorf("smallntt: small transform size %d not in {4, 8, 16, 32, 64}", n)
	}
	if kind < SmallCyclic || kind > SmallTwistedInverse {
		return nil, fmt.Errorf("smallntt: unknown small transform kind %d", int(kind))
	}
	s := &Small{n: n, log: bits.TrailingZeros(uint(n)), kind: kind, variant: v}
	switch v {
	case Matrix, MatrixNoMerge:
		s.m = newMatrixKernel(n, kind, v == Matrix)
	case Butterfly:
		s.b = newSmallButterfly(n, kind)
	default:
		return nil, fmt.Errorf("smallntt: variant %v has no small transform", v)
	}
	return s, nil
}

// N returns the transform size n.
func (s *Small) N() int { return s.n }

// Kind returns which transform s computes.
func (s *Small) Kind() SmallKind { return s.kind }

// Apply computes the transform of src into dst in natural order: dst[k] is
// output k of the formula of s.Kind(). Both must have length n; they may be
// the same slice. src any; dst canonical.
func (s *Small) Apply(dst, src []uint64) {
	if len(dst) != s.n || len(src) != s.n {
		panic(fmt.Sprintf("smallntt: %d-point transform on buffers of length %d and %d", s.n, len(dst), len(src)))
	}
	if s.m != nil {
		s.m.apply(dst, src)
	} else {
		s.b.apply(dst, src)
	}
}
