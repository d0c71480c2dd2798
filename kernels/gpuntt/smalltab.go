package gpuntt

import "github.com/goldfhe/goldfhe/smallntt"

// SmallButterflyTable returns the table of kernels.Library.SmallButterfly
// for n-point cyclic transforms: level m, group g at index m+g holds
// ω_n^{(n/2m)·brv_{log2 m}(g)} with ω_n = 2^{192/n} (DESIGN.md §3), the
// cyclic Cooley–Tukey twiddles that leave output k at position brv(k).
func SmallButterflyTable(n int) []uint64 {
	omega := smallntt.MulPow2(1, uint(192/n))
	t := make([]uint64, n)
	for m, lm := 1, 0; m < n; m, lm = 2*m, lm+1 {
		for g := 0; g < m; g++ {
			b := 0
			for i := 0; i < lm; i++ {
				b |= (g >> i & 1) << (lm - 1 - i)
			}
			t[m+g] = smallntt.Exp(omega, uint64(n/(2*m)*b))
		}
	}
	return t
}
