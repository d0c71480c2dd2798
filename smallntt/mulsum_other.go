//go:build !amd64 || purego

package smallntt

// Without assembly MulSum runs mulSumGeneric.

const haveBMI2 = false

var useMulSumAsm = false

func mulSumAsm(dst, x, y *uint64, xStride, yStride uintptr, rows, n int) {
	panic("smallntt: no MulSum assembly")
}
