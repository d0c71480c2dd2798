//go:build amd64 && !purego

package smallntt

// haveBMI2 reports whether the CPU has MULX (CPUID.7:EBX bit 8).
var haveBMI2 = func() bool {
	if maxID, _, _, _ := cpuid(0, 0); maxID < 7 {
		return false
	}
	_, ebx7, _, _ := cpuid(7, 0)
	return ebx7&(1<<8) != 0
}()

// useMulSumAsm selects mulsum_amd64.s (tests turn it off to compare with
// the generic code).
var useMulSumAsm = haveBMI2

// mulSumAsm is MulSum's loop (mulsum_amd64.s): strides in bytes, n ≥ 1,
// 1 ≤ rows < 2^31; the caller checks the bounds.
//
//go:noescape
func mulSumAsm(dst, x, y *uint64, xStride, yStride uintptr, rows, n int)
