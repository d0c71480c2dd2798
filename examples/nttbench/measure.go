package main

import (
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/goldfhe/goldfhe/smallntt"
)

// runner times cases on one device.
type runner interface {
	device() deviceDesc
	// measure times c at each batch size (ascending, no duplicates) and
	// returns one measurement per size, in that order; on error, those
	// measured before it.
	measure(c benchCase, batches []int) ([]measurement, error)
	// fatal reports whether err leaves the device unusable for later cases.
	fatal(err error) bool
	close() error
}

// deviceDesc says what the cases ran on.
type deviceDesc struct {
	name   string // the CSV's device column, e.g. "NVIDIA H200" or "CPU AMD EPYC"
	header string // the summary's heading line
	timing string // how times were taken, for the summary
	gpu    bool
}

// measurement is the median time of one batch of one case.
type measurement struct {
	batch  int
	micros float64 // median time per batch, µs
	runs   int     // timed runs the median is over
}

// budget decides how many launches one timed sample holds and how many
// samples a (case, batch) gets.
type budget struct {
	sample  time.Duration // a sample lasts at least this long (timer resolution, launch noise)
	perCase time.Duration // timed work per (case, batch), as long as minRuns allows
	minRuns int
}

// plan returns k launches per sample and runs samples, for one launch
// taking about one and at most maxRuns samples.
func (b budget) plan(one time.Duration, maxRuns, maxK int) (k, runs int) {
	one = max(one, time.Nanosecond)
	k = int(min(int64(maxK), max(1, int64(math.Ceil(float64(b.sample)/float64(one))))))
	runs = int(min(int64(maxRuns), max(int64(min(b.minRuns, maxRuns)), int64(b.perCase)/(int64(k)*int64(one)))))
	return k, runs
}

// median returns the median of xs (xs is reordered).
func median(xs []float64) float64 {
	slices.Sort(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

// randomCanonical fills x with uniform values in [1, p): random canonical
// coefficients, never all zero.
func randomCanonical(rng *rand.Rand, x []uint64) {
	for i := range x {
		x[i] = 1 + rng.Uint64N(smallntt.P-1)
	}
}

// descending returns the batch sizes largest first: the largest batch is
// timed first, so its launches can serve as fillers for the smaller ones.
func descending(batches []int) []int {
	d := slices.Clone(batches)
	slices.Sort(d)
	slices.Reverse(d)
	return d
}
