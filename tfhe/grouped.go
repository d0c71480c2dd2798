package tfhe

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"sync"

	"github.com/goldfhe/goldfhe/smallntt"
	"github.com/goldfhe/goldfhe/torus"
)

// Grouped blind rotation ("bootstrapping-key unrolling": Zhou et al.,
// "Faster bootstrapping with multiple addends", IEEE Access 2018; Bourse, Minelli, Minihold, Paillier, "Fast homomorphic evaluation
// of deep discretized neural networks", CRYPTO 2018; TFHE-rs's
// multi-bit bootstrapping with grouping factors 2 and 3). With grouping g the key
// bits are taken g at a time: for the bits s_0, …, s_{r−1} of a group
// (r = g, or fewer for the last group) and their rotation amounts ā_j,
//
//	X^{Σ ā_j·s_j} = 1 + Σ_{u = 1 … 2^r−1} [s = u]·(X^{e_u} − 1),
//	e_u = Σ_{j: bit j of u} ā_j mod 2N,
//
// where [s = u] is 1 when the bits equal the pattern u (bit j of u ↔ s_j),
// so one step is ACC += Σ_u (X^{e_u} − 1)·(BK_u ⊡ ACC) with BK_u =
// TRGSW([s = u]): one decomposition and (k+1)·l forward transforms of ACC,
// k+1 inverse transforms, per group instead of per bit. In the NTT domain
// X^{e} is the vector ψ^{e·(2·Order()[j]+1)}, a table lookup, so the
// monomial factors cost one pointwise product per term.
//
// The price: 2^g − 1 TRGSWs per g bits (1.5× the key for g = 2, 7/3× for
// g = 3) and a larger blind-rotation noise, since each term's key noise is multiplied
// by the two monomials of X^{e_u} − 1 (NoiseEstimateGrouped). The
// decomposition's rounding error meets only the X^{e_u} − 1 of the term
// whose message is 1, once per group unless its bits are all 0, as the
// plain CMux's meets its key bit, once per bit equal to 1; so that part
// stays about the plain key's: per key bit, (1 + kN/2)·δ²/12 times 1/2
// (plain), 3/4 (g = 2) and 7/12 (g = 3).

// MaxGrouping is the largest grouping factor GenerateCloudKey accepts.
const MaxGrouping = 3

// CloudKeyOption changes how GenerateCloudKey builds a cloud key.
type CloudKeyOption func(*cloudKeyConfig)

type cloudKeyConfig struct {
	grouping int
}

// WithGrouping makes the bootstrapping key grouped with factor g (1 ≤ g ≤
// MaxGrouping; 1, the default, is the plain CGGI key of one TRGSW per key
// bit). With g = 2 every pair of key bits has three TRGSWs, the key is 1.5×
// larger, and blind rotation does half the transforms: about 1.5× the
// GPU's throughput at large batches, 2.5× for one gate (BENCHMARKS.md). With g = 3 every triple has seven TRGSWs, the
// key is 7/3× larger (TFHELib128: 1470 TRGSWs, 72 MB in coefficient
// form, 145 MB in the NTT domain on the GPU), and blind rotation takes
// ⌈n/3⌉ steps (210 for TFHELib128), each seven multiply-accumulates of
// one decomposition. The noise grows with the terms per group
// (NoiseEstimateGrouped; log2 of the gate failure probability for g = 1,
// 2, 3: TFHELib128 −420, −250, −188; TFHErsDefault −343, −333, −326;
// CuFHE80 −371, −171, −119): keep g = 1 for parameter sets without a wide
// margin. GenerateCloudKey refuses a g whose grouped products could exceed
// the NTT's exactness bound (checkGrouping; DESIGN.md §3).
func WithGrouping(g int) CloudKeyOption { return func(c *cloudKeyConfig) { c.grouping = g } }

// bkSamples is the number of TRGSWs of a bootstrapping key with grouping g
// for dimension n: 2^g − 1 per full group of g bits, 2^r − 1 for a last
// group of r < g bits.
func bkSamples(n, g int) int {
	if g <= 1 {
		return n
	}
	full, r := n/g, n%g
	return full*(1<<g-1) + (1<<r - 1)
}

// groupedExactnessBound is the bound on the coefficients of a grouped step's
// product Σ_u (X^{e_u} − 1)·(BK_u ⊡ ACC): 2·(2^g − 1) times ExactnessBound.
func groupedExactnessBound(p Params, g int) *big.Int {
	b := ExactnessBound(p.GLWEDimension(), p.BKLevels(), p.PolyDegree(), p.BKBaseLog())
	return b.Mul(b, big.NewInt(int64(2*(1<<g-1))))
}

// checkGrouping reports whether g is a grouping factor p's keys can use.
func checkGrouping(p Params, g int) error {
	if g < 1 || g > MaxGrouping {
		return fmt.Errorf("tfhe: grouping factor %d is not supported (want 1 … %d)", g, MaxGrouping)
	}
	if g > 1 && groupedExactnessBound(p, g).Cmp(halfP) >= 0 {
		return fmt.Errorf("tfhe: %s with grouping %d: the grouped product bound 2^%.2f is not below p/2 (DESIGN.md §3)",
			p.Name(), g, log2Big(groupedExactnessBound(p, g)))
	}
	return checkKeySize(p, g)
}

// cloudKeyWords returns the Torus32 words of p's cloud key with grouping
// g: the bootstrapping key's and the key-switching table's, in int64.
func cloudKeyWords(p Params, g int) int64 {
	k, l, N := int64(p.GLWEDimension()), int64(p.BKLevels()), int64(p.PolyDegree())
	bk := int64(bkSamples(p.LWEDimension(), g)) * (k + 1) * l * (k + 1) * N
	ks := int64(p.ExtractedLWEDimension()) * int64(p.KSLevels()) * int64(1<<p.KSBaseLog()/2) * int64(p.LWEDimension()+1)
	return bk + ks
}

// checkKeySize reports whether p's cloud key with grouping g can be held
// and indexed by an int here: every size of it is computed in int, which
// on a 32-bit platform would wrap for a key past 2^31 bytes. (On a 64-bit
// platform no valid set comes near; its largest keys are a few TB.)
func checkKeySize(p Params, g int) error {
	if w := cloudKeyWords(p, g); w > math.MaxInt/8 {
		return fmt.Errorf("tfhe: %s with grouping %d: a cloud key of %d words (%.3g GB) does not fit this platform's %d-bit int",
			p.Name(), g, w, float64(4*w)/1e9, strconv.IntSize)
	}
	return nil
}

// groupTerm is one TRGSW of a grouped bootstrapping key: term u (the bit
// pattern whose indicator it encrypts) of the group of r key bits starting
// at bit first.
type groupTerm struct{ first, r, u int }

// groupTerms lists a key's TRGSWs in GenerateCloudKey's order: groups of
// g bits (a last one of n mod g), 2^r − 1 terms each. A plain key (g ≤ 1)
// has one term a bit: u = 1, whose groupMessage is the bit.
func groupTerms(n, g int) []groupTerm {
	g = max(g, 1)
	terms := make([]groupTerm, 0, bkSamples(n, g))
	for first := 0; first < n; first += g {
		r := min(g, n-first)
		for u := 1; u < 1<<r; u++ {
			terms = append(terms, groupTerm{first, r, u})
		}
	}
	return terms
}

// groupMessage is the message of term u of a group whose key bits are s:
// 1 when bit j of u equals s_j for every j, else 0. It does not branch on
// the key bits (key generation's time says nothing of them).
func groupMessage(s []int32, u int) int32 {
	eq := int32(1)
	for j, b := range s {
		eq &= 1 ^ (int32(u>>j&1) ^ b)
	}
	return eq
}

// monomialTables holds, for one N, ψ^i (i < 2N) and the odd exponents
// 2·Order()[j]+1 of the NTT-domain positions: NTT(X^e)[j] =
// psiPow[e·odd[j] mod 2N].
type monomialTables struct {
	psiPow []uint64
	odd    []uint32
}

var monomialCache sync.Map // N → *monomialTables

// monomials returns the tables for plan's N and NTT-domain order (every
// plan of one N has the same order, smallntt.Plan.Order).
func monomials(plan *smallntt.Plan) *monomialTables {
	n := plan.N()
	if t, ok := monomialCache.Load(n); ok {
		return t.(*monomialTables)
	}
	t := &monomialTables{psiPow: make([]uint64, 2*n), odd: make([]uint32, n)}
	psi, x := smallntt.Psi(n), uint64(1)
	for i := range t.psiPow {
		t.psiPow[i] = x
		x = smallntt.Mul(x, psi)
	}
	for j, o := range plan.Order() {
		t.odd[j] = uint32(2*o + 1)
	}
	v, _ := monomialCache.LoadOrStore(n, t)
	return v.(*monomialTables)
}

// groupBuffers are the extra scratch buffers of grouped blind rotation.
type groupBuffers struct {
	terms []uint64    // (2^g − 1) × N: Σ_rows digit·BK_u row, one column
	mono  []uint64    // (2^g − 1) × N: NTT(X^{e_u}) − 1
	keys  []*NTTTRGSW // the TRGSWs of the terms kept
}

func newGroupBuffers(g, n int) groupBuffers {
	t := 1<<g - 1
	return groupBuffers{terms: make([]uint64, t*n), mono: make([]uint64, t*n), keys: make([]*NTTTRGSW, t)}
}

// blindRotateGrouped is blindRotate for a key with grouping g > 1.
func (e *Evaluator) blindRotateGrouped(acc *TRLWE, ct *TLWE) {
	logTwoN := uint(e.params.logN + 1)
	g, n := e.bk.Grouping(), e.params.LWEDimension()
	var abar [MaxGrouping]int
	base := 0
	for first := 0; first < n; first += g {
		r := min(g, n-first)
		nonzero := false
		for j := range r {
			abar[j] = torus.ModSwitchPow2(ct.Value[first+j], logTwoN)
			nonzero = nonzero || abar[j] != 0
		}
		if nonzero {
			e.groupStep(acc, base, abar[:r], e.nextKey(base+1<<r-1, 1<<g-1))
		}
		base += 1<<r - 1
	}
}

// groupStep sets ACC += Σ_u (X^{e_u} − 1)·(BK_{base+u−1} ⊡ ACC) for the
// rotation amounts abar of one group (see the top of this file). Terms with
// e_u = 0 vanish and are skipped. The forward transforms prefetch next,
// the keys of the following group (as cmuxRotate).
func (e *Evaluator) groupStep(acc *TRLWE, base int, abar []int, next []uint64) {
	n := len(e.buf.diff)
	mask := 2*n - 1
	gb, mt := &e.buf.group, e.mono
	terms := 0
	for u := 1; u < 1<<len(abar); u++ {
		eu := 0
		for j, a := range abar {
			eu += (u >> j & 1) * a
		}
		if eu &= mask; eu == 0 {
			continue
		}
		m := gb.mono[terms*n : (terms+1)*n]
		for j, o := range mt.odd[:n] {
			m[j] = mt.psiPow[(eu*int(o))&mask] - 1 // ψ^i ≠ 0: canonical
		}
		gb.keys[terms] = &e.bk.d.trgsw[base+u-1]
		terms++
	}
	off := e.params.bkOffset
	for col, p := range acc.Value {
		diff := e.buf.diff
		for j, x := range p[:n] {
			diff[j] = uint32(x) + off
		}
		e.decomposeColumnPrefetch(col, part(next, col, len(acc.Value)))
	}
	rows, cols := len(e.buf.dec), len(e.buf.acc)
	for col, a := range e.buf.acc {
		for t, c := range gb.keys[:terms] {
			smallntt.MulSum(gb.terms[t*n:(t+1)*n], e.buf.decAll, n+decPad, c.data[col*n:], cols*n, rows)
		}
		smallntt.MulSum(a, gb.terms, n, gb.mono, n, terms)
		e.plan.Inverse(smallntt.Poly(a), a)
		toTorus(acc.Value[col], a, true)
	}
}
