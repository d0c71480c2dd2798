package tfhe

import (
	"fmt"

	"github.com/goldfhe/goldfhe/torus"
)

// cmuxRotate sets acc += C ⊡ (X^a·acc − acc) for 0 < a < 2N: one step of
// blind rotation (CGGI20 Alg. 3 line 4, DESIGN.md §2). The rotation, the
// subtraction and the gadget offset are one pass per column (rotDiff), the
// decomposition happens inside the forward transforms (decomposeColumn);
// the products take 8 transforms for TFHELib128. The forward transforms
// prefetch next, the key of the following step (see nextKey).
func (e *Evaluator) cmuxRotate(acc *TRLWE, c *NTTTRGSW, a int, next []uint64) {
	n := len(e.buf.diff)
	off := e.params.bkOffset
	cols := len(acc.Value)
	for col, p := range acc.Value {
		p = p[:n]
		diff := e.buf.diff
		if a < n {
			// (X^a·p)[j] = −p[j−a+N] for j < a, p[j−a] for j ≥ a.
			rotDiff(diff[:a], p[n-a:], p, true, off)
			rotDiff(diff[a:], p[:n-a], p[a:], false, off)
		} else {
			b := a - n // X^a = −X^b
			rotDiff(diff[:b], p[n-b:], p, false, off)
			rotDiff(diff[b:], p[:n-b], p[b:], true, off)
		}
		e.decomposeColumnPrefetch(col, part(next, col, cols))
	}
	e.productTo(acc, c, true)
}

// nextKey returns the bootstrapping-key data of samples first … first+count−1
// (as far as the key goes): what the next blind-rotation step will most
// likely read, for the forward transforms of this step to prefetch. Blind
// rotation visits the samples in order, and skips one only when its
// rotation amount is 0.
func (e *Evaluator) nextKey(first, count int) []uint64 {
	d := e.bk.d.data
	per := len(e.bk.d.trgsw[0].data)
	lo, hi := min(first*per, len(d)), min((first+count)*per, len(d))
	return d[lo:hi:hi]
}

// part returns the i-th of parts consecutive, nearly equal pieces of x.
func part(x []uint64, i, parts int) []uint64 {
	return x[i*len(x)/parts : (i+1)*len(x)/parts]
}

// initAccumulator sets acc = (0, …, 0, X^{−b}·v) with v = mu·(1 + X + … +
// X^{N−1}), the gate-bootstrapping test vector (CGGI20 Alg. 3 line 2).
func initAccumulator(acc *TRLWE, b int, mu torus.Torus32) {
	k, n := acc.K(), acc.N()
	for j := 0; j < k; j++ {
		clear(acc.Value[j])
	}
	// Coefficient j of X^{−b}·v is v[j+b] when j+b < N, −v[j+b−N] when
	// N ≤ j+b < 2N, and v[j+b−2N] beyond; b ∈ [0, 2N).
	out := acc.Value[k]
	for j := range out {
		idx := j + b
		switch {
		case idx < n, idx >= 2*n:
			out[j] = mu
		default:
			out[j] = -mu
		}
	}
}

// BlindRotateTo sets acc to X^{−φ̄}·testVector encrypted under the TRLWE key,
// where φ̄ = b̄ − Σ ā_i·s_i mod 2N is the phase of ct rounded to 1/(2N)
// (CGGI20 Alg. 3 lines 1–5): modulus switching, then one CMux per TLWE key
// bit, skipped when ā_i = 0. ct must have dimension n and the evaluator a
// cloud key; it panics otherwise. testVector may be one of acc's own
// polynomials.
func (e *Evaluator) BlindRotateTo(acc *TRLWE, ct *TLWE, testVector torus.Poly) {
	e.checkBootstrap("BlindRotateTo", ct)
	checkTRLWE("BlindRotateTo", e.buf.rot, acc)
	if len(testVector) != e.params.PolyDegree() {
		panic(fmt.Sprintf("tfhe: BlindRotateTo: test vector of %d coefficients, want N=%d", len(testVector), e.params.PolyDegree()))
	}
	logTwoN := uint(e.params.logN + 1)
	b := torus.ModSwitchPow2(ct.B(), logTwoN)
	// The test vector is read through a copy, which clearing acc's mask
	// and rotating into its body leave as it was when it is one of them.
	tv := e.buf.rot.B()
	copy(tv, testVector)
	for _, p := range acc.Value[:acc.K()] {
		clear(p)
	}
	torus.MulXaTo(acc.B(), tv, -b)
	e.blindRotate(acc, ct)
}

func (e *Evaluator) blindRotate(acc *TRLWE, ct *TLWE) {
	if e.bk.Grouping() > 1 {
		e.blindRotateGrouped(acc, ct)
		return
	}
	logTwoN := uint(e.params.logN + 1)
	for i, ai := range ct.Value[:e.params.LWEDimension()] {
		if a := torus.ModSwitchPow2(ai, logTwoN); a != 0 {
			e.cmuxRotate(acc, &e.bk.d.trgsw[i], a, e.nextKey(i+1, 1))
		}
	}
}

func (e *Evaluator) checkBootstrap(op string, ct *TLWE) {
	if e.bk == nil {
		panic(fmt.Sprintf("tfhe: %s: evaluator has no cloud key", op))
	}
	if ct == nil || ct.Dim() != e.params.LWEDimension() {
		panic(fmt.Sprintf("tfhe: %s: input must have dimension n=%d", op, e.params.LWEDimension()))
	}
}

// BootstrapNoKeySwitchTo sets dst (dimension k·N, under the extracted key)
// to a fresh encryption of +mu if the phase of src lies in (0, 1/2) and of
// −mu if it lies in (1/2, 1): gate bootstrapping without key switching
// (CGGI20 Alg. 3 lines 1–6). src has dimension n. It panics on wrong
// dimensions (package bootstrap checks user input).
func (e *Evaluator) BootstrapNoKeySwitchTo(dst, src *TLWE, mu torus.Torus32) {
	e.checkBootstrap("BootstrapNoKeySwitchTo", src)
	if dst == nil || dst.Dim() != e.params.ExtractedLWEDimension() {
		panic(fmt.Sprintf("tfhe: BootstrapNoKeySwitchTo: output must have dimension k·N=%d", e.params.ExtractedLWEDimension()))
	}
	acc := e.buf.rot
	initAccumulator(acc, torus.ModSwitchPow2(src.B(), uint(e.params.logN+1)), mu)
	e.blindRotate(acc, src)
	SampleExtractTo(dst, acc, 0)
}

// BootstrapTo is BootstrapNoKeySwitchTo followed by KeySwitchTo: dst has
// dimension n and is under the TLWE key. dst may be src.
func (e *Evaluator) BootstrapTo(dst, src *TLWE, mu torus.Torus32) {
	e.BootstrapNoKeySwitchTo(e.buf.ext, src, mu)
	e.KeySwitchTo(dst, e.buf.ext)
}
