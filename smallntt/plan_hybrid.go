package smallntt

// The Hybrid variant: the stages, twiddle tables and layout of the Plan doc,
// each small transform computed by a radix-2 butterfly network instead of a
// matrix product, and the columns of a stage processed together.
//
// Stage s (f = f_s, t = t_s) runs, for every block and column c < t, an
// unrolled f-point Cooley–Tukey network on x_i = blk[c + t·i] (generated:
// hybrid_kernels.go). Level m = 1, 2, …, f/2, group g < m pairs x_j and
// x_{j+h} (h = f/2m, 2g·h ≤ j < 2g·h + h) as (x, y) → (x + c·y, x − c·y) with
//
//	stage 1, Forward:        c = ψ_128^{(32/m)·(2·brv_m(g)+1)}
//	stage 1 (ForwardCyclic)
//	and every stage s ≥ 2:   c = ψ_128^{(64/m)·brv_m(g)}
//
// Splitting X^{2h} − r into X^h ∓ √r at every level leaves output k in x_{brv(k)},
// which is written, times T_s, to blk[c + t·brv(k)]: the Plan layout. The
// twiddles c are powers of two, applied as constant shifts (shlLoC, shlMidC,
// shlHi) with the sign of 2^96 ≡ −1 folded into the butterfly; the one
// exception is the last level (m = 32) of a twisted 64-point first stage,
// whose twiddles are odd powers of ψ_128 (sums of two powers of two), applied
// with one general multiplication. The last stage (t_r = 1) runs the same
// cyclic network on f_r consecutive positions and makes the result canonical.
//
// The inverse runs the Gentleman–Sande reverse, stages r, …, 1: the last
// stage's network on consecutive positions, then for each earlier stage every
// input multiplied by T'_s as it is read, levels m = f/2, …, 1 with (x, y) →
// (x + y, (x − y)·c^{−1}), natural order written back, canonical.
//
// Ranges: inputs any; every intermediate value is any uint64 ≡ the exact
// value mod P, except that the multiplied operand of a forward butterfly is
// made canonical so that x ± c·y needs one correction (addT, subT); outputs
// canonical.
//
// On amd64 with AVX2 (hybrid_amd64.go) stages of size f ≤ 32 run the same
// networks in generated assembly (hybrid_amd64.s): four columns per vector
// for the column kernels, four blocks per vector (4×4 transposes in and out)
// for the last stage, every lane computing what the scalar helper computes,
// with the same ranges. Stages of size 64 keep the Go kernels. With
// AVX-512 (hybrid_avx512_gen_test.go) stages of size 8 to 32 with a multiple
// of 8 columns (blocks) run eight lanes per vector instead, with mask
// registers for the carries; their lazy intermediate words may differ from
// the scalar helpers' (same residues), their canonical outputs do not.

// avx512PrefetchSlots is the number of prefetches per loop iteration of an
// AVX-512 kernel of size f that prefetches (hybrid_avx512_gen_test.go).
func avx512PrefetchSlots(f int) int { return f }

// colKernel runs one stage's network on every column of a block (see
// hybrid_kernels.go).
type colKernel func(blk, T []uint64, t int)

var (
	colFwdTw  = map[int]colKernel{4: hyColFwdTw4, 8: hyColFwdTw8, 16: hyColFwdTw16, 32: hyColFwdTw32, 64: hyColFwdTw64}
	colFwdCyc = map[int]colKernel{4: hyColFwdCyc4, 8: hyColFwdCyc8, 16: hyColFwdCyc16, 32: hyColFwdCyc32, 64: hyColFwdCyc64}
	colInvTw  = map[int]colKernel{4: hyColInvTw4, 8: hyColInvTw8, 16: hyColInvTw16, 32: hyColInvTw32, 64: hyColInvTw64}
	colInvCyc = map[int]colKernel{4: hyColInvCyc4, 8: hyColInvCyc8, 16: hyColInvCyc16, 32: hyColInvCyc32, 64: hyColInvCyc64}
	// colFwdDigits are ForwardDigits' first-stage kernels in Go.
	colFwdDigits = map[int]digitKernel{4: hyColFwdDigits4, 8: hyColFwdDigits8, 16: hyColFwdDigits16, 32: hyColFwdDigits32, 64: hyColFwdDigits64}
)

// hybridStage holds a stage's kernels: fwd/inv for Forward/Inverse (twisted
// at stage 1), fwdCyc/invCyc for the cyclic transforms (stage 1 only), and
// for the last stage lastFwd/lastInv. Where the CPU has them (AVX2 on
// amd64) the accelerated kernels replace the Go ones; both give the same
// bits.
type hybridStage struct {
	fwd, inv, fwdCyc, invCyc colKernel
	fwdDigits                digitKernel // first stage (ForwardDigits, beta ≤ 14)
	lastFwd, lastInv         func(a []uint64)
	lastFwdPF                func(a, pf []uint64) []uint64 // lastFwd that prefetches, AVX-512 only
	accel                    bool
}

func newHybridStage(st *stage, first, last bool) *hybridStage {
	h := &hybridStage{}
	pick := func(generic colKernel, twisted, inverse bool) colKernel {
		if k := accelCol(st.f, twisted, inverse); k != nil {
			h.accel = true
			return k
		}
		return generic
	}
	if last {
		f := st.f
		h.lastFwd = func(a []uint64) { hyLastForward(a, f) }
		h.lastInv = func(a []uint64) { hyLastInverse(a, f) }
		if k := accelLast(f, false); k != nil {
			h.lastFwd, h.accel = k, true
		}
		if k := accelLast(f, true); k != nil {
			h.lastInv, h.accel = k, true
		}
		h.lastFwdPF = accelLastPrefetch(f)
		return h
	}
	h.fwd, h.inv = pick(colFwdCyc[st.f], false, false), pick(colInvCyc[st.f], false, true)
	if first {
		h.fwdDigits = accelDigits(st.f)
		if h.fwdDigits == nil {
			h.fwdDigits = colFwdDigits[st.f]
		}
		h.fwdCyc, h.invCyc = h.fwd, h.inv
		h.fwd, h.inv = pick(colFwdTw[st.f], true, false), pick(colInvTw[st.f], true, true)
	}
	return h
}

func (p *Plan) forwardHybrid(a, src []uint64, cyclic bool) {
	a = a[:p.n]
	copy(a, src)
	last := len(p.stages) - 1
	for si := 0; si < last; si++ {
		st := &p.stages[si]
		k, T := st.hy.fwd, st.tw
		if si == 0 && cyclic {
			k, T = st.hy.fwdCyc, st.twCyc
		}
		for b := 0; b < len(a); b += st.size {
			k(a[b:b+st.size], T, st.t)
		}
	}
	p.stages[last].hy.lastFwd(a)
}

func (p *Plan) inverseHybrid(a, src []uint64, cyclic bool) {
	a = a[:p.n]
	copy(a, src)
	last := len(p.stages) - 1
	p.stages[last].hy.lastInv(a)
	for si := last - 1; si >= 0; si-- {
		st := &p.stages[si]
		k, T := st.hy.inv, st.twInv
		if si == 0 && cyclic {
			k, T = st.hy.invCyc, st.twCycInv
		}
		for b := 0; b < len(a); b += st.size {
			k(a[b:b+st.size], T, st.t)
		}
	}
}

// hyLastForward runs the forward kernel of the last stage (size f) on every
// block of f consecutive positions.
func hyLastForward(a []uint64, f int) {
	switch f {
	case 4:
		for b := 0; b+4 <= len(a); b += 4 {
			hyFwd4((*[4]uint64)(a[b : b+4]))
		}
	case 8:
		for b := 0; b+8 <= len(a); b += 8 {
			hyFwd8((*[8]uint64)(a[b : b+8]))
		}
	case 16:
		for b := 0; b+16 <= len(a); b += 16 {
			hyFwd16((*[16]uint64)(a[b : b+16]))
		}
	case 32:
		for b := 0; b+32 <= len(a); b += 32 {
			hyFwd32((*[32]uint64)(a[b : b+32]))
		}
	case 64:
		for b := 0; b+64 <= len(a); b += 64 {
			hyFwd64((*[64]uint64)(a[b : b+64]))
		}
	}
}

// hyLastInverse runs the inverse kernel of the last stage on every block.
func hyLastInverse(a []uint64, f int) {
	switch f {
	case 4:
		for b := 0; b+4 <= len(a); b += 4 {
			hyInv4((*[4]uint64)(a[b : b+4]))
		}
	case 8:
		for b := 0; b+8 <= len(a); b += 8 {
			hyInv8((*[8]uint64)(a[b : b+8]))
		}
	case 16:
		for b := 0; b+16 <= len(a); b += 16 {
			hyInv16((*[16]uint64)(a[b : b+16]))
		}
	case 32:
		for b := 0; b+32 <= len(a); b += 32 {
			hyInv32((*[32]uint64)(a[b : b+32]))
		}
	case 64:
		for b := 0; b+64 <= len(a); b += 64 {
			hyInv64((*[64]uint64)(a[b : b+64]))
		}
	}
}
