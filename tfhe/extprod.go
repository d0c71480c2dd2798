package tfhe

import (
	"errors"
	"fmt"

	"github.com/goldfhe/goldfhe/smallntt"
	"github.com/goldfhe/goldfhe/torus"
)

// Evaluator computes external products, CMuxes, blind rotations, key
// switches and gate bootstraps with one NTT plan and a cloud key (DESIGN.md
// §2). Its methods allocate nothing.
//
// An Evaluator is not safe for concurrent use: it owns scratch buffers.
// ShallowCopy returns another one sharing the (immutable) keys, with its own
// buffers, for each goroutine. Only NewEvaluator makes a usable one: a zero
// Evaluator has no buffers, and its methods but Params, Plan and CloudKey
// panic.
type Evaluator struct {
	params Params
	plan   *smallntt.Plan
	ck     *CloudKey
	bk     *NTTBootstrappingKey // nil when built without a cloud key
	ksk    *KeySwitchingKey
	mono   *monomialTables // for a grouped key (grouped.go), else nil

	buf evaluatorBuffers
}

// evaluatorBuffers are the scratch buffers of one Evaluator, built once.
type evaluatorBuffers struct {
	// diff holds one column of the external product's input (for blind
	// rotation X^a·ACC − ACC) plus the gadget offset, as uint32.
	diff []uint32
	// dec holds the (k+1)·l digit polynomials, row c·l+i for digit i of
	// column c, transformed in place; decAll is all of them, row r at
	// r·(N+decPad) (smallntt.MulSum reads them at that stride).
	dec    []smallntt.NTTPoly
	decAll []uint64
	// acc holds the k+1 output columns in the NTT domain, inverted in place.
	acc []smallntt.NTTPoly
	// rot is the blind-rotation accumulator ACC.
	rot *TRLWE
	// ext is the extracted sample (dimension k·N) before key switching.
	ext *TLWE
	// ksRows is the list of key-switching rows to add or subtract
	// (ksRowList), when key switching runs in assembly.
	ksRows []int64
	// group is grouped blind rotation's scratch (empty for a plain key).
	group groupBuffers
}

// NewEvaluator returns an Evaluator for ck using plan for every polynomial
// product. It transforms ck's bootstrapping key with plan (see
// BootstrappingKey.NTT for caching). ck may be nil for an Evaluator that only
// computes external products with explicit TRGSW samples (params then gives
// the shapes).
func NewEvaluator(params Params, plan *smallntt.Plan, ck *CloudKey) (*Evaluator, error) {
	if err := params.check(); err != nil {
		return nil, err
	}
	if plan == nil {
		return nil, errors.New("tfhe: NewEvaluator: nil plan")
	}
	if plan.N() != params.PolyDegree() {
		return nil, fmt.Errorf("tfhe: NewEvaluator: plan %v has N=%d, the parameters N=%d", plan, plan.N(), params.PolyDegree())
	}
	e := &Evaluator{params: params, plan: plan}
	if ck != nil {
		if err := ck.Validate(); err != nil {
			return nil, err
		}
		if !ck.params.Equal(params) {
			c, p := DistinctNames(ck.params, params)
			return nil, fmt.Errorf("tfhe: NewEvaluator: cloud key is for %s, not %s", c, p)
		}
		bk, err := ck.bk.NTT(plan)
		if err != nil {
			return nil, err
		}
		e.ck, e.bk, e.ksk = ck, bk, ck.ksk
		if bk.Grouping() > 1 {
			e.mono = monomials(plan)
		}
	}
	e.buf = e.newBuffers()
	return e, nil
}

// decPad is the gap, in elements, between digit rows in
// evaluatorBuffers.decAll. Rows N·8 bytes apart (a multiple of 4 KiB) would
// all map to the same L1 cache sets, where the multiply-accumulate reads
// them side by side with the key's rows, which are 2·N·8 apart: measured,
// 8 elements (one cache line) make smallntt.MulSum 1.15× faster.
const decPad = 8

// newBuffers returns scratch buffers for e's parameters and key.
func (e *Evaluator) newBuffers() evaluatorBuffers {
	b := newEvaluatorBuffers(e.params)
	if e.bk != nil && e.bk.Grouping() > 1 {
		b.group = newGroupBuffers(e.bk.Grouping(), e.params.PolyDegree())
	}
	return b
}

func newEvaluatorBuffers(p Params) evaluatorBuffers {
	k, l, n := p.GLWEDimension(), p.BKLevels(), p.PolyDegree()
	rows := (k + 1) * l
	stride := n + decPad
	backing := make([]uint64, rows*stride+(k+1)*n)
	b := evaluatorBuffers{
		diff:   make([]uint32, n),
		dec:    make([]smallntt.NTTPoly, rows),
		decAll: backing[:(rows-1)*stride+n],
		acc:    make([]smallntt.NTTPoly, k+1),
		rot:    NewTRLWE(k, n),
		ext:    NewTLWE(k * n),
	}
	if useKSAsm {
		b.ksRows = make([]int64, k*n*p.KSLevels())
	}
	for r := range b.dec {
		b.dec[r] = backing[r*stride : r*stride+n : r*stride+n]
	}
	for c := range b.acc {
		o := rows*stride + c*n
		b.acc[c] = backing[o : o+n : o+n]
	}
	return b
}

// ShallowCopy returns an Evaluator sharing e's parameters, plan and keys,
// with its own scratch buffers.
func (e *Evaluator) ShallowCopy() *Evaluator {
	c := *e
	c.buf = e.newBuffers()
	return &c
}

// Params returns the evaluator's parameter set.
func (e *Evaluator) Params() Params { return e.params }

// Plan returns the evaluator's NTT plan.
func (e *Evaluator) Plan() *smallntt.Plan { return e.plan }

// CloudKey returns the evaluator's cloud key (nil if built without one).
func (e *Evaluator) CloudKey() *CloudKey { return e.ck }

// decomposeColumn sets dec rows c·l … c·l+l−1 to the NTT forms of the l
// signed digit polynomials (DESIGN.md §2) of e.buf.diff, which already
// includes the gadget offset: smallntt's ForwardDigits, which on the
// default plan never writes the digits out.
func (e *Evaluator) decomposeColumn(c int) {
	e.decomposeColumnPrefetch(c, nil)
}

// decomposeColumnPrefetch is decomposeColumn that also prefetches pf
// (smallntt's ForwardDigitsPrefetch: a hint, the results are the same).
func (e *Evaluator) decomposeColumnPrefetch(c int, pf []uint64) {
	l := e.params.BKLevels()
	e.plan.ForwardDigitsPrefetch(e.buf.dec[c*l:(c+1)*l], e.buf.diff, e.params.BKBaseLog(), pf)
}

// productTo computes Σ_r dec_r·C_{r,c} for every column c from the
// transformed digits (decomposeColumn) — (k+1)²·l pointwise products, k+1
// inverse transforms — and
// stores (accumulate = false) or adds (accumulate = true) the result, mapped
// back to Torus32, into dst. Exact by the bound NewParams checks.
func (e *Evaluator) productTo(dst *TRLWE, c *NTTTRGSW, accumulate bool) {
	plan := e.plan
	n, rows := len(e.buf.diff), len(e.buf.dec)
	for col, a := range e.buf.acc {
		// Row r of column col of c is at (r·(k+1) + col)·N (NTTTRGSW).
		smallntt.MulSum(a, e.buf.decAll, n+decPad, c.data[col*n:], len(e.buf.acc)*n, rows)
		plan.Inverse(smallntt.Poly(a), a)
		toTorus(dst.Value[col], a, accumulate)
	}
}

func (e *Evaluator) checkTRGSW(op string, c *NTTTRGSW) {
	p := e.params
	if c == nil || c.k != p.GLWEDimension() || c.l != p.BKLevels() || c.n != p.PolyDegree() {
		panic(fmt.Sprintf("tfhe: %s: TRGSW sample does not match %s", op, p.Name()))
	}
	if c.plan != e.plan && !sameOrder(c.plan, e.plan) {
		panic(fmt.Sprintf("tfhe: %s: TRGSW sample transformed with %v, evaluator uses %v (different NTT orders)", op, c.plan, e.plan))
	}
}

func sameOrder(a, b *smallntt.Plan) bool {
	oa, ob := a.Order(), b.Order()
	if len(oa) != len(ob) {
		return false
	}
	for i := range oa {
		if oa[i] != ob[i] {
			return false
		}
	}
	return true
}

// ExternalProductTo sets dst = c ⊡ src = Σ_rows dec(src)_row·c_row (CGGI20
// Thm. 3.14), through the NTT: digits → Forward (ForwardDigits) → MulSum →
// one Inverse per output column. dst may be src. Shapes must match the
// evaluator's parameters (it panics otherwise).
func (e *Evaluator) ExternalProductTo(dst *TRLWE, c *NTTTRGSW, src *TRLWE) {
	e.checkTRGSW("ExternalProductTo", c)
	checkTRLWE("ExternalProductTo", e.buf.rot, dst, src)
	off := e.params.bkOffset
	for col, p := range src.Value {
		diff := e.buf.diff[:len(p)]
		for j, x := range p {
			diff[j] = uint32(x) + off
		}
		e.decomposeColumn(col)
	}
	e.productTo(dst, c, false)
}

// CMuxTo sets dst = c ⊡ (d1 − d0) + d0: an encryption of d1 if c encrypts 1,
// of d0 if c encrypts 0 (CGGI20 Def. 3.15). dst may be d0 or d1.
func (e *Evaluator) CMuxTo(dst *TRLWE, c *NTTTRGSW, d0, d1 *TRLWE) {
	e.checkTRGSW("CMuxTo", c)
	checkTRLWE("CMuxTo", e.buf.rot, dst, d0, d1)
	off := e.params.bkOffset
	for col := range d0.Value {
		p0, p1 := d0.Value[col], d1.Value[col][:len(d0.Value[col])]
		diff := e.buf.diff[:len(p0)]
		for j := range diff {
			diff[j] = uint32(p1[j]-p0[j]) + off
		}
		e.decomposeColumn(col)
	}
	if dst != d0 {
		dst.CopyFrom(d0)
	}
	e.productTo(dst, c, true)
}

// ExternalProductNaiveTo sets dst = c ⊡ src with schoolbook negacyclic
// products (torus.MulAddNaive) and Params.BKGadget's Decompose: the oracle
// ExternalProductTo is checked against, bit for bit. It allocates; dst may
// be src.
func ExternalProductNaiveTo(p Params, dst *TRLWE, c *TRGSW, src *TRLWE) {
	k, l, n := p.GLWEDimension(), p.BKLevels(), p.PolyDegree()
	if !c.wellFormed(k, l, n) || !src.wellFormed(k, n) || !dst.wellFormed(k, n) {
		panic("tfhe: ExternalProductNaiveTo: shapes do not match the parameters")
	}
	g := p.BKGadget()
	digits := make([][]int32, (k+1)*l)
	for r := range digits {
		digits[r] = make([]int32, n)
	}
	d := make([]int32, l)
	for col, poly := range src.Value {
		for j, x := range poly {
			g.Decompose(d, x)
			for i := 0; i < l; i++ {
				digits[col*l+i][j] = d[i]
			}
		}
	}
	out := NewTRLWE(k, n)
	for r := range digits {
		for col := 0; col <= k; col++ {
			torus.MulAddNaive(out.Value[col], digits[r], c.Rows[r].Value[col])
		}
	}
	dst.CopyFrom(out)
}
