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
	l, beta := e.params.BKLevels(), uint(e.params.BKBaseLog())
	mask := uint32(uint64(1)<<beta - 1)
	half := int64(1) << (beta - 1)
	diff := e.buf.diff
	n := len(diff)
	dec := e.buf.dec[c*l : (c+1)*l]
	// Digit i of w is ((w >> (32−(i+1)β)) & mask) − Bg/2, mapped to the
	// field without a branch (fromSigned). l = 2 and 3 (every named set)
	// write all levels in one pass.
	switch l {
	case 2:
		d0, d1 := dec[0][:n], dec[1][:n]
		s0, s1 := 32-beta, 32-2*beta
		for j, w := range diff {
			x0 := int64((w>>s0)&mask) - half
			x1 := int64((w>>s1)&mask) - half
			d0[j] = uint64(x0) + smallntt.P&uint64(x0>>63)
			d1[j] = uint64(x1) + smallntt.P&uint64(x1>>63)
		}
	case 3:
		d0, d1, d2 := dec[0][:n], dec[1][:n], dec[2][:n]
		s0, s1, s2 := 32-beta, 32-2*beta, 32-3*beta
		for j, w := range diff {
			x0 := int64((w>>s0)&mask) - half
			x1 := int64((w>>s1)&mask) - half
			x2 := int64((w>>s2)&mask) - half
			d0[j] = uint64(x0) + smallntt.P&uint64(x0>>63)
			d1[j] = uint64(x1) + smallntt.P&uint64(x1>>63)
			d2[j] = uint64(x2) + smallntt.P&uint64(x2>>63)
		}
	default:
		for i := range dec {
			shift := 32 - uint(i+1)*beta
			d := dec[i][:n]
			for j, w := range diff {
				x := int64((w>>shift)&mask) - half
				d[j] = uint64(x) + smallntt.P&uint64(x>>63)
			}
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
// reduction per product (smallntt's MulTo/MulAdd), up to four 128-bit
// products are summed in three limbs (lo, hi, top) and reduced once: with
// 2^128 ≡ −2^32 (mod p, DESIGN.md §3), lo + 2^64·hi + 2^128·top ≡
// Reduce128(hi, lo) − top·2^32, and top < 4 keeps top·2^32 < p. Rows go in
// chunks of four because more live slices than that make the Go compiler
// spill registers in the inner loop (measured: 6 rows in one loop are 2.7×
// slower per product than 4). Inputs must be canonical; outputs are.
func mulAccRows(acc []uint64, x, y [][]uint64) {
	n := len(acc)
	for r := 0; r < len(x); r += 4 {
		add := r > 0
		switch len(x) - r {
		case 1:
			mulAcc1(acc, x[r][:n], y[r][:n], add)
		case 2:
			mulAcc2(acc, x[r][:n], x[r+1][:n], y[r][:n], y[r+1][:n], add)
		case 3:
			mulAcc3(acc, x[r][:n], x[r+1][:n], x[r+2][:n], y[r][:n], y[r+1][:n], y[r+2][:n], add)
		default:
			mulAcc4(acc, x[r][:n], x[r+1][:n], x[r+2][:n], x[r+3][:n], y[r][:n], y[r+1][:n], y[r+2][:n], y[r+3][:n], add)
		}
	}
}

// reduce192 returns lo + 2^64·hi + 2^128·top mod p for top < 2^32.
func reduce192(lo, hi, top uint64) uint64 {
	return smallntt.Sub(smallntt.Reduce128(hi, lo), top<<32)
}

// mulAcc1 sets (or, if add, adds to) acc[j] the product x0[j]·y0[j].
func mulAcc1(acc, x0, y0 []uint64, add bool) {
	x0, y0 = x0[:len(acc)], y0[:len(acc)]
	for j := range acc {
		h, l := bits.Mul64(x0[j], y0[j])
		v := smallntt.Reduce128(h, l)
		if add {
			v = smallntt.Add(acc[j], v)
		}
		acc[j] = v
	}
}

// mulAcc2 is mulAcc1 for the sum of two products.
func mulAcc2(acc, x0, x1, y0, y1 []uint64, add bool) {
	n := len(acc)
	x0, x1, y0, y1 = x0[:n], x1[:n], y0[:n], y1[:n]
	for j := range acc {
		h0, l0 := bits.Mul64(x0[j], y0[j])
		h1, l1 := bits.Mul64(x1[j], y1[j])
		lo, c := bits.Add64(l0, l1, 0)
		hi, top := bits.Add64(h0, h1, c)
		v := reduce192(lo, hi, top)
		if add {
			v = smallntt.Add(acc[j], v)
		}
		acc[j] = v
	}
}

// mulAcc3 is mulAcc1 for the sum of three products.
func mulAcc3(acc, x0, x1, x2, y0, y1, y2 []uint64, add bool) {
	n := len(acc)
	x0, x1, x2, y0, y1, y2 = x0[:n], x1[:n], x2[:n], y0[:n], y1[:n], y2[:n]
	for j := range acc {
		h0, l0 := bits.Mul64(x0[j], y0[j])
		h1, l1 := bits.Mul64(x1[j], y1[j])
		h2, l2 := bits.Mul64(x2[j], y2[j])
		lo, c := bits.Add64(l0, l1, 0)
		hi, top := bits.Add64(h0, h1, c)
		lo, c = bits.Add64(lo, l2, 0)
		hi, c = bits.Add64(hi, h2, c)
		top += c
		v := reduce192(lo, hi, top)
		if add {
			v = smallntt.Add(acc[j], v)
		}
		acc[j] = v
	}
}

// mulAcc4 is mulAcc1 for the sum of four products.
func mulAcc4(acc, x0, x1, x2, x3, y0, y1, y2, y3 []uint64, add bool) {
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
		v := reduce192(lo, hi, top)
		if add {
			v = smallntt.Add(acc[j], v)
		}
		acc[j] = v
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
