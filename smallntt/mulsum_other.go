//go:build !amd64 || purego

package smallntt

// Without assembly MulSum runs mulSumGeneric.

const haveBMI2 = false

const haveIFMA = false

var useMulSumAsm, useMulSumAVX2, useMulSumIFMA = false, false, false

func mulSumAccel(dst, x []uint64, xStride int, y []uint64, yStride int, rows int) bool {
	return false
}
