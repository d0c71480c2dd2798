//go:build amd64 && !purego

package smallntt

import "golang.org/x/sys/cpu"

// haveBMI2 reports whether the CPU has MULX.
var haveBMI2 = cpu.X86.HasBMI2

// haveIFMA reports whether the CPU and the OS support AVX-512 F and IFMA
// (VPMADD52LUQ/VPMADD52HUQ), and AVX-512 is in use (haveAVX512: so that
// GODEBUG=cpu.avx512f=off or cpu.avx2=off turns this kernel off too).
var haveIFMA = haveAVX512 && cpu.X86.HasAVX512IFMA

// useMulSumAsm, useMulSumAVX2 and useMulSumIFMA select the kernels of
// mulsum_amd64.s (tests turn them off to compare with the generic code).
var useMulSumAsm, useMulSumAVX2, useMulSumIFMA = haveBMI2, haveAVX2, haveIFMA

// mulSumAccel runs MulSum (arguments checked) in assembly where it can:
// when rows ≤ 64, AVX-512 IFMA for the first len(dst) &^ 7 outputs and
// AVX2 for the next multiple of 4, MULX for the rest; false if none is
// available.
func mulSumAccel(dst, x []uint64, xStride int, y []uint64, yStride int, rows int) bool {
	n, done := len(dst), 0
	xs, ys := uintptr(xStride)*8, uintptr(yStride)*8
	if useMulSumIFMA && rows <= 64 {
		if n8 := n &^ 7; n8 > 0 {
			mulSumIFMA(&dst[0], &x[0], &y[0], xs, ys, rows, n8)
			done = n8
		}
	}
	if useMulSumAVX2 && rows <= 64 {
		if n4 := (n - done) &^ 3; n4 > 0 {
			mulSumAVX2(&dst[done], &x[done], &y[done], xs, ys, rows, n4)
			done += n4
		}
	}
	if done == n {
		return true
	}
	if !useMulSumAsm {
		if done > 0 {
			mulSumGeneric(dst[done:], x[done:], xStride, y[done:], yStride, rows)
			return true
		}
		return false
	}
	mulSumAsm(&dst[done], &x[done], &y[done], xs, ys, rows, n-done)
	return true
}

// mulSumAsm is MulSum's loop with MULX: strides in bytes, n ≥ 1,
// 1 ≤ rows < 2^31; the caller checks the bounds.
//
//go:noescape
func mulSumAsm(dst, x, y *uint64, xStride, yStride uintptr, rows, n int)

// mulSumAVX2 is MulSum's loop with AVX2: strides in bytes, n ≥ 4 a
// multiple of 4, 1 ≤ rows ≤ 64; the caller checks the bounds.
//
//go:noescape
func mulSumAVX2(dst, x, y *uint64, xStride, yStride uintptr, rows, n int)

// mulSumIFMA is MulSum's loop with AVX-512 IFMA: strides in bytes, n ≥ 8 a
// multiple of 8, 1 ≤ rows ≤ 64; the caller checks the bounds.
//
//go:noescape
func mulSumIFMA(dst, x, y *uint64, xStride, yStride uintptr, rows, n int)
