package bootstrap

import (
	"sync/atomic"
	"testing"
)

// TestSpread: spread calls f on parts that cover [0, count) once each,
// none much shorter than spreadMin (the last may be up to spreadMax
// shorter) unless the whole range is, at most spreadMax of them.
func TestSpread(t *testing.T) {
	for _, count := range []int{0, 1, spreadMin - 1, spreadMin, 2*spreadMin - 1, 2 * spreadMin, 1000, 4092, 16384, 100_000} {
		seen := make([]int32, count)
		var parts atomic.Int32
		spread(count, func(lo, hi int) {
			parts.Add(1)
			if hi-lo < spreadMin-spreadMax && hi-lo != count {
				t.Errorf("count %d: part [%d, %d) shorter than %d", count, lo, hi, spreadMin)
			}
			for i := lo; i < hi; i++ {
				atomic.AddInt32(&seen[i], 1)
			}
		})
		for i, n := range seen {
			if n != 1 {
				t.Fatalf("count %d: sample %d copied %d times", count, i, n)
			}
		}
		if p := parts.Load(); p < 1 || p > spreadMax {
			t.Errorf("count %d: %d parts, want 1 to %d", count, p, spreadMax)
		}
	}
}
