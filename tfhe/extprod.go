package tfhe

import (
	"errors"
	"fmt"
	"math/bits"

	"github.com/goldfhe/goldfhe/smallntt"
	"github.com/goldfhe/goldfhe/torus"
)

// Evaluator computes external products, CMuxes, blind rotations, key
// switches and gate bootstraps with one NTT plan and a cloud key (DESIGN.md
// §2). Its methods allocate nothing.
//
// An Evaluator is not safe for concurrent use: it owns scratch buffers.
// ShallowCopy returns another one sharing the (immutable) keys, with its own
// buffers, for each goroutine.
type Evaluator struct {
	params Params
	plan   *smallntt.Plan
	ck     *CloudKey
	bk     *NTTBootstrappingKey // nil when built without a cloud key
	ksk    *KeySwitchingKey

	buf evaluatorBuffers
}

// evaluatorBuffers are the scratch buffers of one Evaluator, built once.
type evaluatorBuffers struct {
	// diff holds one column of the external product's input (for blind
	// rotation X^a·ACC − ACC) plus the gadget offset, as uint32.
	diff []uint32
	// dec holds the (k+1)·l digit polynomials, row c·l+i for digit i of
	// column c; they are transformed in place.
	dec []smallntt.NTTPoly
	// acc holds the k+1 output columns in the NTT domain, inverted in place.
	acc []smallntt.NTTPoly
	// decRows and keyRows hold, for one output column, the row views the
	// fused multiply-accumulate reads (no allocation per product).
	decRows, keyRows [][]uint64
	// rot is the blind-rotation accumulator ACC.
	rot *TRLWE
	// ext is the extracted sample (dimension k·N) before key switching.
	ext *TLWE
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
			return nil, fmt.Errorf("tfhe: NewEvaluator: cloud key is for %s, not %s", ck.params.Name(), params.Name())
		}
		bk, err := ck.bk.NTT(plan)
		if err != nil {
			return nil, err
		}
		e.ck, e.bk, e.ksk = ck, bk, ck.ksk
	}
	e.buf = newEvaluatorBuffers(params)
	return e, nil
}

func newEvaluatorBuffers(p Params) evaluatorBuffers {
	k, l, n := p.GLWEDimension(), p.BKLevels(), p.PolyDegree()
	rows := (k + 1) * l
	backing := make([]uint64, (rows+k+1)*n)
	b := evaluatorBuffers{
		diff:    make([]uint32, n),
		dec:     make([]smallntt.NTTPoly, rows),
		acc:     make([]smallntt.NTTPoly, k+1),
		rot:     NewTRLWE(k, n),
		decRows: make([][]uint64, rows),
		keyRows: make([][]uint64, rows),
		ext:     NewTLWE(k * n),
	}
	for r := range b.dec {
		b.dec[r] = backing[r*n : (r+1)*n : (r+1)*n]
	}
	for c := range b.acc {
		o := (rows + c) * n
		b.acc[c] = backing[o : o+n : o+n]
	}
	return b
}

// ShallowCopy returns an Evaluator sharing e's parameters, plan and keys,
// with its own scratch buffers.
func (e *Evaluator) ShallowCopy() *Evaluator {
	c := *e
	c.buf = newEvaluatorBuffers(e.params)
	return &c
}

// Params returns the evaluator's parameter set.
func (e *Evaluator) Params() Params { return e.params }

// Plan returns the evaluator's NTT plan.
func (e *Evaluator) Plan() *smallntt.Plan { return e.plan }

// CloudKey returns the evaluator's cloud key (nil if built without one).
func (e *Evaluator) CloudKey() *CloudKey { return e.ck }

// decomposeColumn writes the l signed digits (DESIGN.md §2) of e.buf.diff —
// which already includes the gadget offset — into dec rows c·l … c·l+l−1 as
// field elements.
func (e *Evaluator) decomposeColumn(c int) {
	l, beta := e.params.BKLevels(), e.params.BKBaseLog()
	mask := uint32(uint64(1)<<beta - 1)
	half := int64(1) << (beta - 1)
	diff := e.buf.diff
	for i := 0; i < l; i++ {
		shift := uint(32 - (i+1)*beta)
		d := e.buf.dec[c*l+i][:len(diff)]
		for j, w := range diff {
			x := int64((w>>shift)&mask) - half
			d[j] = uint64(x) + smallntt.P&uint64(x>>63)
		}
	}
}

// productTo computes Σ_r dec_r·C_{r,c} for every column c — (k+1)·l forward
// transforms, (k+1)²·l pointwise products, k+1 inverse transforms — and
// stores (accumulate = false) or adds (accumulate = true) the result, mapped
// back to Torus32, into dst. Exact by the bound NewParams checks.
func (e *Evaluator) productTo(dst *TRLWE, c *NTTTRGSW, accumulate bool) {
	plan := e.plan
	for _, d := range e.buf.dec {
		plan.Forward(d, smallntt.Poly(d))
	}
	for col, a := range e.buf.acc {
		for r := range e.buf.dec {
			e.buf.decRows[r] = e.buf.dec[r]
			e.buf.keyRows[r] = c.Poly(r, col)
		}
		mulAccRows(a, e.buf.decRows, e.buf.keyRows)
		plan.Inverse(smallntt.Poly(a), a)
		out := dst.Value[col][:len(a)]
		if accumulate {
			for j, v := range a {
				out[j] += torus.Torus32(smallntt.ToInt64Centered(v))
			}
		} else {
			for j, v := range a {
				out[j] = torus.Torus32(smallntt.ToInt64Centered(v))
			}
		}
	}
}

// mulAccRows sets acc[j] = Σ_r x[r][j]·y[r][j] mod p: the pointwise part of
// the external product, the same in every NTT order. Instead of one modular
// reduction per product (smallntt's MulTo/MulAdd), the 128-bit products are
// summed in three limbs (lo, hi, top) and reduced once per output: with
// 2^128 ≡ −2^32 (mod p, DESIGN.md §3), lo + 2^64·hi + 2^128·top ≡
// Reduce128(hi, lo) − top·2^32. Inputs must be canonical; fewer than 2^32
// rows (top < rows, so top·2^32 < p). Outputs are canonical.
func mulAccRows(acc []uint64, x, y [][]uint64) {
	n := len(acc)
	for r := range x {
		x[r], y[r] = x[r][:n], y[r][:n] // lets the compiler drop bounds checks below
	}
	switch len(x) {
	case 4:
		mulAcc4(acc, x[0], x[1], x[2], x[3], y[0], y[1], y[2], y[3])
		return
	case 6:
		mulAcc6(acc, x, y)
		return
	}
	for j := range acc {
		var lo, hi, top uint64
		for r := range x {
			h, l := bits.Mul64(x[r][j], y[r][j])
			var c uint64
			lo, c = bits.Add64(lo, l, 0)
			hi, c = bits.Add64(hi, h, c)
			top += c
		}
		acc[j] = smallntt.Sub(smallntt.Reduce128(hi, lo), top<<32)
	}
}

// mulAcc4 is mulAccRows for 4 rows ((k+1)·l = 4: TFHErs-like k=1, l=2 and
// CuFHE80).
func mulAcc4(acc, x0, x1, x2, x3, y0, y1, y2, y3 []uint64) {
	n := len(acc)
	x0, x1, x2, x3 = x0[:n], x1[:n], x2[:n], x3[:n]
	y0, y1, y2, y3 = y0[:n], y1[:n], y2[:n], y3[:n]
	for j := range acc {
		h0, l0 := bits.Mul64(x0[j], y0[j])
		h1, l1 := bits.Mul64(x1[j], y1[j])
		h2, l2 := bits.Mul64(x2[j], y2[j])
		h3, l3 := bits.Mul64(x3[j], y3[j])
		lo, c := bits.Add64(l0, l1, 0)
		hi, top := bits.Add64(h0, h1, c)
		lo, c = bits.Add64(lo, l2, 0)
		hi, c = bits.Add64(hi, h2, c)
		top += c
		lo, c = bits.Add64(lo, l3, 0)
		hi, c = bits.Add64(hi, h3, c)
		top += c
		acc[j] = smallntt.Sub(smallntt.Reduce128(hi, lo), top<<32)
	}
}

// mulAcc6 is mulAccRows for 6 rows (TFHELib128: k = 1, l = 3).
func mulAcc6(acc []uint64, x, y [][]uint64) {
	n := len(acc)
	x0, x1, x2, x3, x4, x5 := x[0][:n], x[1][:n], x[2][:n], x[3][:n], x[4][:n], x[5][:n]
	y0, y1, y2, y3, y4, y5 := y[0][:n], y[1][:n], y[2][:n], y[3][:n], y[4][:n], y[5][:n]
	for j := range acc {
		h0, l0 := bits.Mul64(x0[j], y0[j])
		h1, l1 := bits.Mul64(x1[j], y1[j])
		h2, l2 := bits.Mul64(x2[j], y2[j])
		lo, c := bits.Add64(l0, l1, 0)
		hi, top := bits.Add64(h0, h1, c)
		lo, c = bits.Add64(lo, l2, 0)
		hi, c = bits.Add64(hi, h2, c)
		top += c
		h3, l3 := bits.Mul64(x3[j], y3[j])
		h4, l4 := bits.Mul64(x4[j], y4[j])
		h5, l5 := bits.Mul64(x5[j], y5[j])
		lo, c = bits.Add64(lo, l3, 0)
		hi, c = bits.Add64(hi, h3, c)
		top += c
		lo, c = bits.Add64(lo, l4, 0)
		hi, c = bits.Add64(hi, h4, c)
		top += c
		lo, c = bits.Add64(lo, l5, 0)
		hi, c = bits.Add64(hi, h5, c)
		top += c
		acc[j] = smallntt.Sub(smallntt.Reduce128(hi, lo), top<<32)
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
// Thm. 3.14), through the NTT: digits → FromInt64 → Forward → MulAdd →
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
