package smallntt

import "fmt"

// ForwardDigits sets dst[i], for every i < len(dst), to Forward of the
// polynomial of the i-th signed base-2^beta digits of w, most significant
// first:
//
//	d_i[j] = ((w[j] >> (32 − (i+1)·beta)) mod 2^beta) − 2^(beta−1)
//
// that is, the gadget decomposition of DESIGN.md §2 once the caller has added
// the gadget offset to w. The digits are never written out: a Hybrid plan
// reads them from w inside its first stage, where, being small, they go
// through the first butterfly level in plain signed arithmetic (beta ≤ 14;
// colKernelDigits in hybrid_avx2_gen_test.go on amd64 with AVX2 for a
// first stage of 8 to 32 rows, genDigitKernel's Go kernels otherwise).
// Other plans and beta write them into dst[i] and call Forward. The
// results are the same bits either way (TestForwardDigits). len(w) and every len(dst[i]) must be N, 1 ≤ beta
// and len(dst)·beta ≤ 32; dst canonical. It allocates nothing.
func (p *Plan) ForwardDigits(dst []NTTPoly, w []uint32, beta int) {
	p.ForwardDigitsPrefetch(dst, w, beta, nil)
}

// ForwardDigitsPrefetch is ForwardDigits that also asks the CPU to bring pf
// into its L2 cache while it computes (on amd64 with AVX-512, from inside
// the transforms' kernels: one 64-byte line every few butterflies, up to
// N/4 lines per transform of a two-stage plan, N/8 in each stage, see
// prefetchArgs; nothing elsewhere): a hint for memory the
// caller reads next, such as the rows of a bootstrapping key that the next
// multiply-accumulate (MulSum) streams. The values written are
// ForwardDigits' whatever pf is; pf is only read, by prefetch instructions,
// which cannot fault.
func (p *Plan) ForwardDigitsPrefetch(dst []NTTPoly, w []uint32, beta int, pf []uint64) {
	if beta < 1 || beta > 32 || len(dst) > 32/beta || len(w) != p.n {
		panic(fmt.Sprintf("smallntt: %v: ForwardDigits of %d digits of %d bits from %d words", p, len(dst), beta, len(w)))
	}
	mask := uint32(1)<<beta - 1
	half := int64(1) << (beta - 1)
	var k digitKernel
	if p.variant == Hybrid && beta <= 14 {
		k = p.stages[0].hy.fwdDigits
	}
	for i, d := range dst {
		if len(d) != p.n {
			panic(fmt.Sprintf("smallntt: %v: ForwardDigits into a row of length %d", p, len(d)))
		}
		shift := uint(32 - (i+1)*beta)
		if k != nil {
			pf = p.forwardDigitsHybrid(d, w, k, uint64(shift), uint64(mask), uint64(half), pf)
			continue
		}
		for j, v := range w {
			x := int64((v>>shift)&mask) - half
			d[j] = uint64(x) + P&uint64(x>>63)
		}
		p.forward(d, d, false)
	}
}

// digitKernel is a first-stage column kernel reading digits from w
// (accelDigits, or colFwdDigits in Go). It prefetches the start of pf or
// nothing, and returns the rest.
type digitKernel func(blk, T []uint64, t int, w []uint32, shift, mask, half uint64, pf []uint64) []uint64

// forwardDigitsHybrid is forwardHybrid with the first stage's input the
// digits of w; it prefetches the start of pf and returns the rest.
func (p *Plan) forwardDigitsHybrid(a []uint64, w []uint32, k digitKernel, shift, mask, half uint64, pf []uint64) []uint64 {
	a = a[:p.n]
	st := &p.stages[0]
	for b := 0; b < len(a); b += st.size {
		pf = k(a[b:b+st.size], st.tw, st.t, w[b:b+st.size], shift, mask, half, pf)
	}
	last := len(p.stages) - 1
	for si := 1; si < last; si++ {
		st := &p.stages[si]
		for b := 0; b < len(a); b += st.size {
			st.hy.fwd(a[b:b+st.size], st.tw, st.t)
		}
	}
	if h := p.stages[last].hy; h.lastFwdPF != nil && len(a)%(8*p.stages[last].f) == 0 {
		return h.lastFwdPF(a, pf)
	}
	p.stages[last].hy.lastFwd(a)
	return pf
}
