package bootstrap

import (
	"runtime"
	"testing"

	"github.com/goldfhe/goldfhe/torus"
)

// TestSpread: spreadStep's parts cover [0, count) once each, none much
// shorter than spreadMin (the last may be up to spreadMax shorter) unless
// the whole range is, at most spreadMax of them; and sampleCopy copies
// every sample to and from a flat buffer, in one part and in several
// (GOMAXPROCS 8), clearing its references afterwards, and allocates
// nothing in one part.
func TestSpread(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(8))
	for _, count := range []int{0, 1, spreadMin - 1, spreadMin, 2*spreadMin - 1, 2 * spreadMin, 1000, 4092, 16384, 100_000} {
		parts, step := spreadStep(count)
		seen := make([]int32, count)
		n := 0
		for lo := 0; lo < count; lo += step {
			hi := min(lo+step, count)
			n++
			if hi-lo < spreadMin-spreadMax && hi-lo != count {
				t.Errorf("count %d: part [%d, %d) shorter than %d", count, lo, hi, spreadMin)
			}
			for i := lo; i < hi; i++ {
				seen[i]++
			}
		}
		for i, k := range seen {
			if k != 1 {
				t.Fatalf("count %d: sample %d copied %d times", count, i, k)
			}
		}
		if parts < 1 || parts > spreadMax || count > 0 && n != parts {
			t.Errorf("count %d: %d parts (%d ranges), want 1 to %d", count, parts, n, spreadMax)
		}
	}
	const w = 5
	for _, count := range []int{1, spreadMin, 4*spreadMin + 3} {
		samples, back := newTLWEs(count, w-1), newTLWEs(count, w-1)
		for i, s := range samples {
			for j := range s.Value {
				s.Value[j] = torus.Torus32(i*w + j + 1)
			}
		}
		flat := make([]uint32, count*w)
		var c sampleCopy
		c.run(flat, samples, w, true)
		for i, v := range flat {
			if v != uint32(i+1) {
				t.Fatalf("count %d: flat[%d] = %d, want %d", count, i, v, i+1)
			}
		}
		c.run(flat, back, w, false)
		for i, s := range back {
			for j, v := range s.Value {
				if v != torus.Torus32(i*w+j+1) {
					t.Fatalf("count %d: sample %d word %d = %d", count, i, j, v)
				}
			}
		}
		if c.flat != nil || c.samples != nil {
			t.Errorf("count %d: the copier still references the last copy's buffers", count)
		}
		if parts, _ := spreadStep(count); parts == 1 && !raceEnabled {
			if a := testing.AllocsPerRun(10, func() { c.run(flat, samples, w, true) }); a != 0 {
				t.Errorf("count %d: a one-part copy allocates %v times", count, a)
			}
		}
	}
}
