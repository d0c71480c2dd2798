//go:build amd64 && !purego

package smallntt

import "golang.org/x/sys/cpu"

// haveBMI2 reports whether the CPU has MULX.
var haveBMI2 = cpu.X86.HasBMI2

// useMulSumAsm and useMulSumAVX2 select the kernels of mulsum_amd64.s
// (tests turn them off to compare with the generic code).
var useMulSumAsm, useMulSumAVX2 = haveBMI2, haveAVX2

// mulSumAccel runs MulSum (arguments checked) in assembly where it can:
// AVX2 for the first len(dst) &^ 3 outputs when rows ≤ 64, MULX for the
// rest; false if neither is available.
func mulSumAccel(dst, x []uint64, xStride int, y []uint64, yStride int, rows int) bool {
	n, n4 := len(dst), 0
	xs, ys := uintptr(xStride)*8, uintptr(yStride)*8
	if useMulSumAVX2 && rows <= 64 {
		if n4 = n &^ 3; n4 > 0 {
			mulSumAVX2(&dst[0], &x[0], &y[0], xs, ys, rows, n4)
		}
	}
	if n4 == n {
		return true
	}
	if !useMulSumAsm {
		if n4 > 0 {
			mulSumGeneric(dst[n4:], x[n4:], xStride, y[n4:], yStride, rows)
			return true
		}
		return false
	}
	mulSumAsm(&dst[n4], &x[n4], &y[n4], xs, ys, rows, n-n4)
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
