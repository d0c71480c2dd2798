//go:build amd64 && !purego

package smallntt

import "golang.org/x/sys/cpu"

// AVX2 kernels for the Hybrid variant on amd64 (generated: hybrid_amd64.s,
// hybrid_avx2_amd64.go). They compute the same networks as the Go kernels
// of hybrid_kernels.go, four columns (or blocks) at a time, with the same
// value ranges, so every plan gives the same bits with or without them
// (tested: TestAVX2AgainstGeneric). Build with -tags purego to leave them out.

// haveAVX2 reports whether the CPU and the OS support AVX2
// (golang.org/x/sys/cpu checks both the CPUID bits and that the OS saves
// the YMM state).
var haveAVX2 = cpu.X86.HasAVX2

// useAVX2 selects the AVX2 kernels for plans built from now on (tests turn
// it off to build the generic plans they compare with).
var useAVX2 = haveAVX2

// haveAVX512 reports whether the CPU and the OS support AVX-512 F (the
// ZMM and mask state included). The AVX-512 kernels (generated:
// hybrid_avx512_amd64.s) replace the AVX2 ones for the stage sizes
// 8, 16 and 32 where a stage has a multiple of 8 columns (blocks): eight
// lanes per vector, mask registers for the carries.
var haveAVX512 = cpu.X86.HasAVX512F && haveAVX2

// useAVX512 selects the AVX-512 kernels for plans built from now on, when
// useAVX2 is set too (tests turn it off to compare the AVX2 kernels).
var useAVX512 = haveAVX512

type asmCol func(blk, T *uint64, t int)
type asmLast func(a *uint64, n int)

var (
	asmColFwdTw  = map[int]asmCol{4: hyColFwdTwAVX2_4, 8: hyColFwdTwAVX2_8, 16: hyColFwdTwAVX2_16, 32: hyColFwdTwAVX2_32}
	asmColFwdCyc = map[int]asmCol{4: hyColFwdCycAVX2_4, 8: hyColFwdCycAVX2_8, 16: hyColFwdCycAVX2_16, 32: hyColFwdCycAVX2_32}
	asmColInvTw  = map[int]asmCol{4: hyColInvTwAVX2_4, 8: hyColInvTwAVX2_8, 16: hyColInvTwAVX2_16, 32: hyColInvTwAVX2_32}
	asmColInvCyc = map[int]asmCol{4: hyColInvCycAVX2_4, 8: hyColInvCycAVX2_8, 16: hyColInvCycAVX2_16, 32: hyColInvCycAVX2_32}
	asmLastFwd   = map[int]asmLast{4: hyFwdAVX2_4, 8: hyFwdAVX2_8, 16: hyFwdAVX2_16, 32: hyFwdAVX2_32}
	asmLastInv   = map[int]asmLast{4: hyInvAVX2_4, 8: hyInvAVX2_8, 16: hyInvAVX2_16, 32: hyInvAVX2_32}

	zmmColFwdTw  = map[int]asmCol{8: hyColFwdTwAVX512_8, 16: hyColFwdTwAVX512_16, 32: hyColFwdTwAVX512_32}
	zmmColFwdCyc = map[int]asmCol{8: hyColFwdCycAVX512_8, 16: hyColFwdCycAVX512_16, 32: hyColFwdCycAVX512_32}
	zmmColInvTw  = map[int]asmCol{8: hyColInvTwAVX512_8, 16: hyColInvTwAVX512_16, 32: hyColInvTwAVX512_32}
	zmmColInvCyc = map[int]asmCol{8: hyColInvCycAVX512_8, 16: hyColInvCycAVX512_16, 32: hyColInvCycAVX512_32}
	zmmLastFwd   = map[int]asmLast{8: hyFwdAVX512_8, 16: hyFwdAVX512_16, 32: hyFwdAVX512_32}
	zmmLastInv   = map[int]asmLast{8: hyInvAVX512_8, 16: hyInvAVX512_16, 32: hyInvAVX512_32}
	zmmLastFwdPF = map[int]func(a *uint64, n int, pf *uint64, pfStride int){
		8: hyFwdPrefetchAVX512_8, 16: hyFwdPrefetchAVX512_16, 32: hyFwdPrefetchAVX512_32,
	}
	zmmDigits = map[int]func(blk, T *uint64, t int, w *uint32, shift, mask, half uint64, pf *uint64, pfStride int){
		8: hyColFwdTwDigitsAVX512_8, 16: hyColFwdTwDigitsAVX512_16, 32: hyColFwdTwDigitsAVX512_32,
	}
)

// prefetchArgs returns the pointer and stride (bytes) with which a kernel
// that has slots prefetches covers the start of pf, one 64-byte line per
// slot at most, and what is left of pf after it. With pf empty the kernel
// prefetches the line at idle (already in cache) over and over.
func prefetchArgs(pf []uint64, slots int, idle *uint64) (p *uint64, stride int, rest []uint64) {
	if len(pf) == 0 || slots == 0 {
		return idle, 0, pf
	}
	stride = min(64, len(pf)*8/slots) &^ 7
	if stride == 0 {
		return &pf[0], 0, nil
	}
	used := min(len(pf), slots*stride/8)
	return &pf[0], stride, pf[used:]
}

// accelCol returns the AVX2 column kernel for a stage of size f, or nil.
// The kernel needs len(blk) = f·t, len(T) ≥ f·t and t a multiple of 4,
// which every non-last stage of a plan satisfies (t ≥ 4, a power of two).
func accelCol(f int, twisted, inverse bool) colKernel {
	if !useAVX2 {
		return nil
	}
	k := pickCol(f, twisted, inverse, asmColFwdTw, asmColInvTw, asmColFwdCyc, asmColInvCyc)
	if k == nil {
		return nil
	}
	var z asmCol // AVX-512, for t a multiple of 8
	if useAVX512 {
		z = pickCol(f, twisted, inverse, zmmColFwdTw, zmmColInvTw, zmmColFwdCyc, zmmColInvCyc)
	}
	return func(blk, T []uint64, t int) {
		if t%4 != 0 || len(blk) != 4*(len(blk)/4) || len(T) < len(blk) || len(blk) == 0 {
			panic("smallntt: bad AVX2 column kernel call")
		}
		if z != nil && t%8 == 0 {
			z(&blk[0], &T[0], t)
			return
		}
		k(&blk[0], &T[0], t)
	}
}

// pickCol returns the column kernel of size f of the table set (forward
// and inverse, twisted and cyclic) that the stage needs, or nil.
func pickCol(f int, twisted, inverse bool, fwdTw, invTw, fwdCyc, invCyc map[int]asmCol) asmCol {
	switch {
	case twisted && !inverse:
		return fwdTw[f]
	case twisted:
		return invTw[f]
	case !inverse:
		return fwdCyc[f]
	}
	return invCyc[f]
}

// accelLast returns the AVX2 last-stage kernel for size f, or nil. It needs
// len(a) a multiple of 4·f (N/f ≥ 4 blocks, a power of two).
func accelLast(f int, inverse bool) func(a []uint64) {
	if !useAVX2 {
		return nil
	}
	k := asmLastFwd[f]
	if inverse {
		k = asmLastInv[f]
	}
	if k == nil {
		return nil
	}
	var z asmLast // AVX-512, for a multiple of 8 blocks
	if useAVX512 {
		z = zmmLastFwd[f]
		if inverse {
			z = zmmLastInv[f]
		}
	}
	return func(a []uint64) {
		if len(a)%(4*f) != 0 || len(a) == 0 {
			panic("smallntt: bad AVX2 last-stage kernel call")
		}
		if z != nil && len(a)%(8*f) == 0 {
			z(&a[0], len(a))
			return
		}
		k(&a[0], len(a))
	}
}

// accelDigits returns the AVX2 digit-reading first-stage kernel for f rows
// (ForwardDigits), or nil. Same needs as accelCol, and len(w) = len(blk).
func accelDigits(f int) digitKernel {
	if !useAVX2 {
		return nil
	}
	k := map[int]func(blk, T *uint64, t int, w *uint32, shift, mask, half uint64){
		8: hyColFwdTwDigitsAVX2_8, 16: hyColFwdTwDigitsAVX2_16, 32: hyColFwdTwDigitsAVX2_32,
	}[f]
	if k == nil {
		return nil
	}
	var z func(blk, T *uint64, t int, w *uint32, shift, mask, half uint64, pf *uint64, pfStride int)
	if useAVX512 {
		z = zmmDigits[f]
	}
	return func(blk, T []uint64, t int, w []uint32, shift, mask, half uint64, pf []uint64) []uint64 {
		if t%4 != 0 || len(blk) != f*t || len(T) < len(blk) || len(w) != len(blk) || half > 1<<13 {
			panic("smallntt: bad AVX2 digit kernel call")
		}
		if z != nil && t%8 == 0 {
			p, stride, rest := prefetchArgs(pf, t/8*avx512PrefetchSlots(f), &blk[0])
			z(&blk[0], &T[0], t, &w[0], shift, mask, half, p, stride)
			return rest
		}
		k(&blk[0], &T[0], t, &w[0], shift, mask, half)
		return pf
	}
}

// accelLastPrefetch returns the AVX-512 forward last-stage kernel of size
// f that also prefetches (see prefetchArgs) and returns what is left of
// pf, or nil. Same needs as accelLast, and len(a) a multiple of 8·f.
func accelLastPrefetch(f int) func(a, pf []uint64) []uint64 {
	if !useAVX2 || !useAVX512 || zmmLastFwdPF[f] == nil {
		return nil
	}
	z := zmmLastFwdPF[f]
	return func(a, pf []uint64) []uint64 {
		if len(a)%(8*f) != 0 || len(a) == 0 {
			panic("smallntt: bad AVX-512 last-stage kernel call")
		}
		p, stride, rest := prefetchArgs(pf, len(a)/(8*f)*avx512PrefetchSlots(f), &a[0])
		z(&a[0], len(a), p, stride)
		return rest
	}
}
