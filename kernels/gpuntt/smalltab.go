package gpuntt

import (
	"fmt"

	"github.com/goldfhe/goldfhe/smallntt"
)

// SmallButterflyTable returns the table of kernels.Library.SmallButterfly
// for n-point cyclic transforms: level m, group g at index m+g holds
// ω_n^{(n/2m)·brv_{log2 m}(g)} with ω_n = 2^{192/n} (DESIGN.md §3), the
// cyclic Cooley–Tukey twiddles that leave output k at position brv(k).
// n must be one of the small sizes, 4, 8, 16, 32 or 64 (the n-th roots of
// unity that are powers of 2).
func SmallButterflyTable(n int) ([]uint64, error) {
	if n < 4 || n > 64 || n&(n-1) != 0 {
		return nil, fmt.Errorf("gpuntt: SmallButterflyTable(%d): n is one of 4, 8, 16, 32, 64", n)
	}
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
	return t, nil
}
