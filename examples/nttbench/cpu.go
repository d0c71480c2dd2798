package main

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"time"

	"github.com/goldfhe/goldfhe/examples/internal/benchio"

	"github.com/goldfhe/goldfhe/smallntt"
)

// cpuRunner times the smallntt CPU transforms on one goroutine.
type cpuRunner struct {
	reason string // why not the GPU
	model  string
	reps   int
	budget budget
	rng    *rand.Rand
	data   []uint64
}

func newCPU(cfg config, reason string) *cpuRunner {
	c := &cpuRunner{
		reason: reason, model: benchio.CPUModel(), reps: cfg.reps, rng: rand.New(rand.NewPCG(3, 4)),
		budget: budget{sample: 100 * time.Microsecond, perCase: 300 * time.Millisecond, minRuns: 3},
	}
	if cfg.quick {
		c.budget.perCase = 50 * time.Millisecond
	}
	return c
}

func (c *cpuRunner) device() deviceDesc {
	why := "no GPU: " + c.reason
	if c.reason == "-cpu" {
		why = "-cpu"
	}
	return deviceDesc{
		name:   "CPU " + c.model,
		header: fmt.Sprintf("CPU (%s): %s, %d logical CPUs, %s/%s; one goroutine", why, c.model, runtime.NumCPU(), runtime.GOOS, runtime.GOARCH),
		timing: fmt.Sprintf("wall clock on one goroutine, transforms in place one polynomial after another; median of up to %d runs", c.reps),
	}
}

func (c *cpuRunner) fatal(error) bool { return false }

func (c *cpuRunner) close() error { return nil }

// transform returns c's in-place transform of one polynomial.
func transform(bc benchCase) (func(x []uint64), error) {
	v, err := smallVariant(bc.variant)
	if err != nil {
		return nil, err
	}
	if bc.table == 1 {
		s, err := smallntt.NewSmall(bc.n, smallntt.SmallCyclic, v)
		if err != nil {
			return nil, err
		}
		return func(x []uint64) { s.Apply(x, x) }, nil
	}
	p, err := smallntt.NewPlan(bc.n, v, bc.factors...)
	if err != nil {
		return nil, err
	}
	return func(x []uint64) { p.Forward(smallntt.NTTPoly(x), smallntt.Poly(x)) }, nil
}

// reference returns a case computing the same transform as bc by another
// variant: the butterfly, or for the butterfly itself a matrix NTT.
func reference(bc benchCase) benchCase {
	r := benchCase{table: bc.table, n: bc.n, variant: vButterfly}
	if bc.variant != vButterfly {
		return r
	}
	r.variant = vMatrix
	for _, t := range table2 {
		if bc.table == 2 && t.n == bc.n {
			r.factors = t.factors[0]
		}
	}
	return r
}

func (c *cpuRunner) measure(bc benchCase, batches []int) ([]measurement, error) {
	n := bc.n
	apply, err := transform(bc)
	if err != nil {
		return nil, err
	}
	ref, err := transform(reference(bc))
	if err != nil {
		return nil, err
	}
	for i := 0; i < checkPolys; i++ {
		x := make([]uint64, n)
		randomCanonical(c.rng, x)
		y := append([]uint64(nil), x...)
		apply(x)
		ref(y)
		for j := range x {
			if x[j] != y[j] {
				return nil, fmt.Errorf("output differs from %v's (position %d: %#x, want %#x)", reference(bc), j, x[j], y[j])
			}
		}
	}
	maxB := batches[len(batches)-1]
	if len(c.data) < maxB*n {
		c.data = make([]uint64, maxB*n)
	}
	data := c.data[:maxB*n]
	randomCanonical(c.rng, data)
	var out []measurement
	for _, b := range descending(batches) {
		x := data[:b*n]
		batch := func() {
			for i := 0; i < b; i++ {
				apply(x[i*n : (i+1)*n])
			}
		}
		t := time.Now()
		batch() // warm-up
		k, runs := c.budget.plan(time.Since(t), c.reps, 1<<20)
		samples := make([]float64, runs)
		for r := range samples {
			t := time.Now()
			for j := 0; j < k; j++ {
				batch()
			}
			samples[r] = time.Since(t).Seconds() * 1e6 / float64(k)
		}
		out = append(out, measurement{batch: b, micros: max(median(samples), 1e-6), runs: runs})
	}
	reverse(out)
	return out, nil
}
