package tfhe

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strings"

	"github.com/goldfhe/goldfhe/smallntt"
)

// ParamsLiteral is a parameter set to be checked by NewParams. Its fields are
// public so that a set can be written as a literal; the library only ever
// uses the validated, immutable Params.
//
// Warning: the named sets (TFHELib128, TFHErsDefault, CuFHE80) come from the
// sources cited in their documentation together with their security
// estimates and failure probabilities. Changing any figure changes both;
// do not hand-tune a set without redoing the security and noise analysis.
type ParamsLiteral struct {
	// Name identifies the set in errors, benchmarks and String.
	Name string

	// LWEDimension is n, the dimension of the TLWE key and ciphertexts.
	LWEDimension int
	// PolyDegree is N: TRLWE polynomials live in T[X]/(X^N+1). It must be a
	// size smallntt supports (smallntt.Sizes: powers of two 256..4096).
	PolyDegree int
	// GLWEDimension is k, the number of key polynomials of the TRLWE key.
	GLWEDimension int

	// BKLevels is l, the number of gadget levels of the bootstrapping key.
	BKLevels int
	// BKBaseLog is log2 Bg, the bits per gadget level.
	BKBaseLog int

	// KSLevels is t, the number of digits of key switching.
	KSLevels int
	// KSBaseLog is the bits per key-switching digit ("basebit"), at most 8,
	// with t·basebit ≤ 31: key switching picks each input word's digit
	// signs by its lowest bit, which no digit may read (KeySwitchTo).
	KSBaseLog int

	// LWEStdDev is the standard deviation (a fraction of the torus) of the
	// noise of TLWE encryptions and of the key-switching key.
	LWEStdDev float64
	// BKStdDev is the standard deviation of the noise of the TRLWE rows of
	// the bootstrapping key.
	BKStdDev float64

	// SecurityBits is the security level in bits that the set's source claims
	// or that a cited estimate gives. It is informational, checked only to
	// be in [0, 2^31) (it is serialized as 32 bits).
	SecurityBits int
	// Note is a short human-readable remark shown by String (for example a
	// warning that the set is for comparison only). Name and Note are at
	// most 1024 bytes each, as serialized keys carry them.
	Note string
}

// Params is a validated, immutable parameter set. The zero Params is not
// valid: only NewParams (and MustNewParams for package-level defaults) make
// Params, and functions taking Params reject the zero value with an error.
type Params struct {
	lit ParamsLiteral

	logN      int
	bkBase    uint32 // Bg
	ksBase    uint32
	bkOffset  uint32 // Σ_{i=1..l} (Bg/2)·2^{32−iβ} + 2^{32−lβ−1} (DESIGN.md §2)
	ksOffset  uint32 // the same rule for key switching
	exactBits float64
}

// maxLWEDimension and maxGLWEDimension bound sets to sizes this library can
// hold in memory; no published boolean set comes close.
const (
	maxLWEDimension  = 1 << 13
	maxGLWEDimension = 8
	maxKSBaseLog     = 8
)

// NewParams checks lit and returns the immutable Params. It rejects sets that
// break the exactness bound of DESIGN.md §3 — the NTT external product must
// be exact — and polynomial degrees smallntt does not support, and the name
// of a built-in set (ParamSets, in any case) on another literal (other
// figures, or only another note): a set derived from one by Literal needs a
// name of its own, so that keys, errors and benchmark tables never show it
// as the built-in set.
func NewParams(lit ParamsLiteral) (Params, error) {
	fail := func(format string, a ...any) (Params, error) {
		return Params{}, fmt.Errorf("tfhe: parameter set %q: %s", lit.Name, fmt.Sprintf(format, a...))
	}
	n, N, k := lit.LWEDimension, lit.PolyDegree, lit.GLWEDimension
	switch {
	case n < 1 || n > maxLWEDimension:
		return fail("LWE dimension n=%d out of [1, %d]", n, maxLWEDimension)
	case N <= 0 || N&(N-1) != 0:
		return fail("polynomial degree N=%d is not a power of two", N)
	case !slices.Contains(smallntt.Sizes, N):
		return fail("polynomial degree N=%d is not supported (smallntt sizes: %v)", N, smallntt.Sizes)
	case k < 1 || k > maxGLWEDimension:
		return fail("GLWE dimension k=%d out of [1, %d]", k, maxGLWEDimension)
	// Each factor bounded before the product, which a large one would wrap
	// (an int of 32 bits wraps at 2^31).
	case lit.BKLevels < 1 || lit.BKBaseLog < 1 || lit.BKLevels > 32 || lit.BKBaseLog > 32 || lit.BKLevels*lit.BKBaseLog > 32:
		return fail("bootstrapping gadget l=%d, log2 Bg=%d: need l ≥ 1, log2 Bg ≥ 1 and l·log2 Bg ≤ 32",
			lit.BKLevels, lit.BKBaseLog)
	case lit.KSLevels < 1 || lit.KSBaseLog < 1 || lit.KSBaseLog > maxKSBaseLog || lit.KSLevels > 31 || lit.KSLevels*lit.KSBaseLog > 31:
		// Key switching picks each input word's digit signs by its bit 0
		// (keySwitch), which balances them only if no digit reads it.
		return fail("key switching t=%d, basebit=%d: need t ≥ 1, 1 ≤ basebit ≤ %d and t·basebit ≤ 31",
			lit.KSLevels, lit.KSBaseLog, maxKSBaseLog)
	case !validStdDev(lit.LWEStdDev):
		return fail("LWE noise standard deviation %v must be in [2^-32, 1/2) (below, a Torus32 rounds it to 0)", lit.LWEStdDev)
	case !validStdDev(lit.BKStdDev):
		return fail("bootstrapping-key noise standard deviation %v must be in [2^-32, 1/2) (below, a Torus32 rounds it to 0)", lit.BKStdDev)
	case n == k*N:
		// A TLWE sample under the extracted key (dimension k·N) could not
		// be told from one under the TLWE key (SecretKey.PhaseTLWE picks
		// the key by dimension).
		return fail("LWE dimension n=%d equals k·N: samples under the TLWE and the extracted key would have one dimension", n)
	case len(lit.Name) > maxStringLen || len(lit.Note) > maxStringLen:
		return fail("name or note longer than %d bytes", maxStringLen)
	case lit.SecurityBits < 0 || lit.SecurityBits > math.MaxInt32:
		return fail("SecurityBits %d out of [0, 2^31)", lit.SecurityBits)
	}
	bound := ExactnessBound(k, lit.BKLevels, N, lit.BKBaseLog)
	if bound.Cmp(halfP) >= 0 {
		return fail("(k+1)·l·N·(Bg/2)·2^31 = 2^%.2f is not below p/2: the NTT external product would not be exact (DESIGN.md §3)",
			log2Big(bound))
	}
	for _, q := range builtinSets {
		if strings.EqualFold(q.lit.Name, lit.Name) && q.lit != lit { // as ParamSetByName reads names
			return fail("the name is the built-in set's, whose literal differs (%v): give a derived set a name of its own", q)
		}
	}
	p := Params{lit: lit}
	for p.logN = 0; 1<<p.logN < N; p.logN++ {
	}
	p.bkBase = 1 << lit.BKBaseLog // 0 when log2 Bg = 32 (l = 1); only Bg/2 and Bg−1 are used
	p.ksBase = 1 << lit.KSBaseLog
	p.bkOffset = gadgetOffset(lit.BKLevels, lit.BKBaseLog)
	p.ksOffset = gadgetOffset(lit.KSLevels, lit.KSBaseLog)
	p.exactBits = log2Big(bound)
	if err := checkKeySize(p, 1); err != nil {
		return Params{}, err
	}
	return p, nil
}

// MustNewParams is NewParams for package-level defaults: it panics on error.
func MustNewParams(lit ParamsLiteral) Params {
	p, err := NewParams(lit)
	if err != nil {
		panic(err)
	}
	return p
}

// validStdDev reports whether s is a usable noise standard deviation: in
// [2^−32, 1/2). Below 2^−32, a Torus32's step, the noise rounds to 0 and a
// sample is noiseless: no security whatever a set declares.
func validStdDev(s float64) bool { return s >= 0x1p-32 && s < 0.5 }

// halfP is (p−1)/2: ToInt64Centered inverts FromInt64 exactly on [−halfP, halfP].
var halfP = new(big.Int).SetUint64((smallntt.P - 1) / 2)

// ExactnessBound returns (k+1)·l·N·(Bg/2)·2^31 (Bg = 2^bgBits), the largest
// absolute value a coefficient of Σ_rows digit·row can take when digits are
// in [−Bg/2, Bg/2) and row coefficients are Torus32 read as int32 in
// [−2^31, 2^31) (DESIGN.md §3). The NTT external product is exact when it is
// at most (p−1)/2, which NewParams requires. The product is exact for any
// sizes. k, l and n are those of a parameter set (k ≥ 0, l ≥ 1, n ≥ 1) and
// bgBits is in [1, 32]: other values are programming errors and panic
// (a bgBits of 2^40 asked for a 2^40-bit number, and a negative one
// wrapped to a shift of about 2^64 bits; either ended the program out of
// memory).
func ExactnessBound(k, l, n, bgBits int) *big.Int {
	if k < 0 || l < 1 || n < 1 || bgBits < 1 || bgBits > 32 {
		panic(fmt.Sprintf("tfhe: ExactnessBound(%d, %d, %d, %d): need k ≥ 0, l ≥ 1, N ≥ 1 and 1 ≤ bgBits ≤ 32", k, l, n, bgBits))
	}
	// (k+1)·l·n in big.Int: as ints the product could wrap.
	b := new(big.Int).Mul(big.NewInt(int64(k)+1), big.NewInt(int64(l)))
	b.Mul(b, big.NewInt(int64(n)))
	return b.Lsh(b, uint(bgBits-1+31))
}

func log2Big(x *big.Int) float64 {
	f, _ := new(big.Float).SetInt(x).Float64()
	return math.Log2(f)
}

// gadgetOffset returns Σ_{i=1..l} (B/2)·2^{32−iβ} + 2^{32−lβ−1} mod 2^32
// (B = 2^β): adding it turns the unsigned base-B digits of a Torus32 into
// the signed digits of DESIGN.md §2, rounded at the last level. When lβ = 32
// nothing is dropped and there is no rounding term.
func gadgetOffset(l, beta int) uint32 {
	var off uint64
	for i := 1; i <= l; i++ {
		off += uint64(1) << (beta - 1) << (32 - i*beta)
	}
	if l*beta < 32 {
		off += 1 << (32 - l*beta - 1)
	}
	return uint32(off)
}

var errZeroParams = errors.New("tfhe: zero Params (use NewParams or a named set such as TFHELib128)")

func (p Params) check() error {
	if p.lit.PolyDegree == 0 {
		return errZeroParams
	}
	return nil
}

// IsZero reports whether p is the zero Params (not made by NewParams).
func (p Params) IsZero() bool { return p.lit.PolyDegree == 0 }

// Literal returns a copy of the literal p was made from, for example to
// derive a custom set (see the warning on ParamsLiteral; NewParams wants
// such a set renamed).
func (p Params) Literal() ParamsLiteral { return p.lit }

// Name returns the set's name.
func (p Params) Name() string { return p.lit.Name }

// LWEDimension returns n.
func (p Params) LWEDimension() int { return p.lit.LWEDimension }

// PolyDegree returns N.
func (p Params) PolyDegree() int { return p.lit.PolyDegree }

// LogPolyDegree returns log2 N.
func (p Params) LogPolyDegree() int { return p.logN }

// GLWEDimension returns k.
func (p Params) GLWEDimension() int { return p.lit.GLWEDimension }

// ExtractedLWEDimension returns k·N, the dimension of the TLWE samples that
// sample extraction produces (before key switching).
func (p Params) ExtractedLWEDimension() int { return p.lit.GLWEDimension * p.lit.PolyDegree }

// BKLevels returns l.
func (p Params) BKLevels() int { return p.lit.BKLevels }

// BKBaseLog returns log2 Bg.
func (p Params) BKBaseLog() int { return p.lit.BKBaseLog }

// KSLevels returns t.
func (p Params) KSLevels() int { return p.lit.KSLevels }

// KSBaseLog returns the key-switching basebit.
func (p Params) KSBaseLog() int { return p.lit.KSBaseLog }

// LWEStdDev returns the TLWE and key-switching-key noise standard deviation.
func (p Params) LWEStdDev() float64 { return p.lit.LWEStdDev }

// BKStdDev returns the bootstrapping-key noise standard deviation.
func (p Params) BKStdDev() float64 { return p.lit.BKStdDev }

// SecurityBits returns the informational security level of the set.
func (p Params) SecurityBits() int { return p.lit.SecurityBits }

// Note returns the set's remark, empty if none.
func (p Params) Note() string { return p.lit.Note }

// ExactnessLog2 returns log2 of ExactnessBound for p: below 63 − ε for every
// valid set (p/2 ≈ 2^63).
func (p Params) ExactnessLog2() float64 { return p.exactBits }

// String describes the set in one line, including its note.
func (p Params) String() string {
	if p.IsZero() {
		return "tfhe.Params{}"
	}
	l := p.lit
	// A custom set's SecurityBits is whatever its author wrote: nothing
	// here checks it against the lattice estimates.
	sec := fmt.Sprintf("~%d-bit", l.SecurityBits)
	if !slices.ContainsFunc(ParamSets(), p.Equal) {
		sec = fmt.Sprintf("custom set, declared %d-bit, unverified", l.SecurityBits)
	}
	s := fmt.Sprintf("%s(n=%d, N=%d, k=%d, l=%d, Bg=2^%d, KS %d×%d, σ_lwe=%.3g, σ_bk=%.3g, %s)",
		l.Name, l.LWEDimension, l.PolyDegree, l.GLWEDimension, l.BKLevels, l.BKBaseLog,
		l.KSLevels, l.KSBaseLog, l.LWEStdDev, l.BKStdDev, sec)
	if l.Note != "" {
		s += " [" + l.Note + "]"
	}
	return s
}

// builtinSets is ParamSets once package initialization has made them (nil
// while it does: NewParams, which makes them, must not depend on them).
var builtinSets []Params

func init() { builtinSets = ParamSets() }

// DistinctNames returns how a message that names two parameter sets (a
// mismatch) should name p and q: by name, or in full where two different
// sets share one (their literals, where even String, which rounds the noise
// to three digits, would print them alike).
func DistinctNames(p, q Params) (string, string) {
	if p.Name() != q.Name() || p.Equal(q) {
		return p.Name(), q.Name()
	}
	if a, b := p.String(), q.String(); a != b {
		return a, b
	}
	return fmt.Sprintf("%+v", p.lit), fmt.Sprintf("%+v", q.lit)
}

// Equal reports whether p and q are the same set.
func (p Params) Equal(q Params) bool { return p.lit == q.lit }
