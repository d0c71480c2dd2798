package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"time"

	"github.com/goldfhe/goldfhe/kernels"
	"github.com/goldfhe/goldfhe/kernels/gpuntt"
	"github.com/goldfhe/goldfhe/smallntt"
)

const (
	// maxWindows bounds the disjoint windows a batch's launches cycle
	// through (each a buffer view made before the timed loop).
	maxWindows = 1024
	// maxLaunchesPerSample bounds k, the launches between two events.
	maxLaunchesPerSample = 1024
	// noFillerAbove: launches at least this long cannot be outrun by the
	// host (a launch call takes microseconds) and need no filler.
	noFillerAbove = time.Millisecond
	// maxFiller bounds the filler's GPU time.
	maxFiller = 2 * time.Second
	// checkPolys is how many polynomials each case's output is checked on
	// (the CPU cases' too).
	checkPolys = 7
	// gpuCheckPolys is how many a GPU case's output is checked on: enough
	// to fill several blocks of every kernel, the small-point ones with many
	// polynomials a block included, and prime, so that the last block is
	// partial, as it is in most timed launches.
	gpuCheckPolys = 1031
)

// gpuRunner times the cases on GPU 0 with CUDA events.
type gpuRunner struct {
	dev    *gpuntt.Device
	ctx    *kernels.Context
	lib    *kernels.Library
	info   kernels.DeviceInfo
	reps   int
	budget budget
	warn   io.Writer
	rng    *rand.Rand
	events []*kernels.Event // grown on demand, reused by every measurement

	// The timing buffer: polys polynomials of n coefficients, random and
	// canonical, at least twice the L2 cache; reallocated when n changes.
	buf   *kernels.DeviceBuffer[uint64]
	n     int
	polys int
}

// openGPU opens GPU 0 and loads the kernels.
func openGPU(cfg config, warn io.Writer) (*gpuRunner, error) {
	d, err := gpuntt.Open(0)
	if err != nil {
		return nil, err
	}
	g := &gpuRunner{
		dev: d, ctx: d.Context(), lib: d.Library(), info: d.Info(),
		reps: cfg.reps, warn: warn, rng: rand.New(rand.NewPCG(1, 2)),
		budget: budget{sample: 200 * time.Microsecond, perCase: time.Second, minRuns: 5},
	}
	if cfg.quick {
		g.budget.perCase = 200 * time.Millisecond
	}
	if g.ctx.Debug() {
		fmt.Fprintf(warn, "nttbench: warning: %s=1 synchronises after every launch; the times include it\n", kernels.DebugEnv)
	}
	return g, nil
}

func (g *gpuRunner) device() deviceDesc {
	return deviceDesc{
		name:   g.info.Name,
		header: fmt.Sprintf("GPU %v; kernels: %s", g.info, g.lib.Source()),
		timing: fmt.Sprintf("CUDA events around back-to-back launches on one stream, after a warm-up; "+
			"inputs cycle through a device buffer of ≥ 2× L2; median of up to %d runs", g.reps),
		gpu: true,
	}
}

func (g *gpuRunner) fatal(err error) bool {
	return errors.Is(err, kernels.ErrLaunchFailed) || errors.Is(err, kernels.ErrClosed)
}

func (g *gpuRunner) close() error {
	var errs []error
	for _, e := range g.events {
		errs = append(errs, e.Close())
	}
	if g.buf != nil {
		errs = append(errs, g.buf.Free())
	}
	errs = append(errs, g.dev.Close())
	return errors.Join(errs...)
}

// launchFunc enqueues c's transform of every polynomial of p, in place, on
// the default stream.
type launchFunc func(p *gpuntt.Polys) error

// prepare returns c's launch, the CPU transform it must reproduce (one
// polynomial, dst and src distinct) and what frees its tables.
func (g *gpuRunner) prepare(c benchCase) (launch launchFunc, ref func(dst, src []uint64), cleanup func() error, err error) {
	noop := func() error { return nil }
	n := c.n
	if c.table == 1 {
		s, err := smallntt.NewSmall(n, smallntt.SmallCyclic, smallntt.Matrix)
		if err != nil {
			return nil, nil, nil, err
		}
		ref = s.Apply
		switch c.variant {
		case vMatrix, vNoMerge:
			merge := c.variant == vMatrix
			return func(p *gpuntt.Polys) error {
				return g.lib.SmallMatrix(nil, p.Buf, p.Count, n, kernels.SmallCyclic, merge)
			}, ref, noop, nil
		case vButterfly:
			host, err := gpuntt.SmallButterflyTable(n)
			if err != nil {
				return nil, nil, nil, err
			}
			tab, err := kernels.Alloc[uint64](g.ctx, n)
			if err != nil {
				return nil, nil, nil, err
			}
			if err := tab.CopyFromHost(host); err != nil {
				return nil, nil, nil, errors.Join(err, tab.Free())
			}
			return func(p *gpuntt.Polys) error {
				return g.lib.SmallButterfly(nil, p.Buf, p.Count, n, tab)
			}, ref, tab.Free, nil
		}
		return nil, nil, nil, fmt.Errorf("no small-point kernel for variant %q", c.variant)
	}
	v, err := smallVariant(c.variant)
	if err != nil {
		return nil, nil, nil, err
	}
	cp, err := smallntt.NewPlan(n, v, c.factors...)
	if err != nil {
		return nil, nil, nil, err
	}
	gp, err := g.dev.NewPlan(cp)
	if err != nil {
		return nil, nil, nil, err
	}
	ref = func(dst, src []uint64) { cp.Forward(smallntt.NTTPoly(dst), smallntt.Poly(src)) }
	return func(p *gpuntt.Polys) error { return gp.Forward(nil, p) }, ref, gp.Close, nil
}

// verify runs launch on gpuCheckPolys random polynomials and compares the
// result with the CPU transform: a broken kernel is reported, not timed.
func (g *gpuRunner) verify(n int, launch launchFunc, ref func(dst, src []uint64)) (err error) {
	in := make([]uint64, gpuCheckPolys*n)
	randomCanonical(g.rng, in)
	p, err := g.dev.AllocPolys(n, gpuCheckPolys)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, p.Free()) }()
	if err := p.Upload(in); err != nil {
		return err
	}
	if err := launch(p); err != nil {
		return err
	}
	got := make([]uint64, len(in))
	if err := p.Download(got); err != nil {
		return err
	}
	want := make([]uint64, n)
	for i := 0; i < gpuCheckPolys; i++ {
		ref(want, in[i*n:(i+1)*n])
		for j, w := range want {
			if got[i*n+j] != w {
				return fmt.Errorf("GPU output differs from the CPU's (polynomial %d, position %d: %#x, want %#x)", i, j, got[i*n+j], w)
			}
		}
	}
	return nil
}

// ensureBuffer makes the timing buffer hold at least maxBatch polynomials
// of n coefficients and at least twice the L2 cache, filled with random
// canonical values.
func (g *gpuRunner) ensureBuffer(n, maxBatch int) error {
	l2 := g.info.L2Bytes
	if l2 <= 0 {
		l2 = 64 << 20
	}
	polys := max(maxBatch, (2*l2+8*n-1)/(8*n))
	if g.buf != nil && g.n == n && g.polys >= polys {
		return nil
	}
	if g.buf != nil {
		err := g.buf.Free()
		g.buf, g.n, g.polys = nil, 0, 0
		if err != nil {
			return err
		}
	}
	buf, err := kernels.Alloc[uint64](g.ctx, polys*n)
	if err != nil {
		return fmt.Errorf("allocating %d polynomials of %d coefficients (%d MiB): %w", polys, n, polys*n*8>>20, err)
	}
	chunk := make([]uint64, min(1<<20, polys*n))
	for lo := 0; lo < polys*n; lo += len(chunk) {
		hi := min(lo+len(chunk), polys*n)
		randomCanonical(g.rng, chunk[:hi-lo])
		if err := buf.View(lo, hi).CopyFromHost(chunk[:hi-lo]); err != nil {
			return errors.Join(err, buf.Free())
		}
	}
	g.buf, g.n, g.polys = buf, n, polys
	return nil
}

// eventsN returns at least k events.
func (g *gpuRunner) eventsN(k int) ([]*kernels.Event, error) {
	for len(g.events) < k {
		e, err := g.ctx.NewEvent()
		if err != nil {
			return nil, err
		}
		g.events = append(g.events, e)
	}
	return g.events, nil
}

func (g *gpuRunner) measure(c benchCase, batches []int) (out []measurement, err error) {
	launch, ref, cleanup, err := g.prepare(c)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, cleanup()) }()
	if err := g.verify(c.n, launch, ref); err != nil {
		return nil, err
	}
	if err := g.ensureBuffer(c.n, batches[len(batches)-1]); err != nil {
		return nil, err
	}
	full := &gpuntt.Polys{N: c.n, Count: g.polys, Buf: g.buf}
	tFull, _, err := g.timeOnce(launch, full)
	if err != nil {
		return nil, err
	}
	defer func() { reverse(out) }()
	for _, b := range descending(batches) {
		m, err := g.measureBatch(c.n, b, launch, full, tFull)
		if err != nil {
			return out, fmt.Errorf("batch %d: %w", b, err)
		}
		out = append(out, m)
	}
	return out, nil
}

func reverse(ms []measurement) {
	for i, j := 0, len(ms)-1; i < j; i, j = i+1, j-1 {
		ms[i], ms[j] = ms[j], ms[i]
	}
}

// timeOnce launches on p once to warm up, then once between two events,
// and returns the GPU time of the second launch and the host time its
// launch call took.
func (g *gpuRunner) timeOnce(launch launchFunc, p *gpuntt.Polys) (gpu, host time.Duration, err error) {
	ev, err := g.eventsN(2)
	if err != nil {
		return 0, 0, err
	}
	if err := launch(p); err != nil {
		return 0, 0, err
	}
	if err := ev[0].Record(nil); err != nil {
		return 0, 0, err
	}
	t := time.Now()
	if err := launch(p); err != nil {
		return 0, 0, err
	}
	host = time.Since(t)
	if err := ev[1].Record(nil); err != nil {
		return 0, 0, err
	}
	if err := ev[1].Synchronize(); err != nil {
		return 0, 0, err
	}
	gpu, err = kernels.ElapsedTime(ev[0], ev[1])
	return gpu, host, err
}

// measureBatch times batches of b polynomials: runs samples of k
// back-to-back launches, each between two events, cycling through disjoint
// windows of the buffer. Short launches are preceded by a filler of
// launches on the whole buffer (tFull each) long enough for the host to
// enqueue every sample before the GPU reaches them, so the events time
// the kernels, not the host's launch rate.
func (g *gpuRunner) measureBatch(n, b int, launch launchFunc, full *gpuntt.Polys, tFull time.Duration) (measurement, error) {
	windows := min(g.polys/b, maxWindows)
	views := make([]*gpuntt.Polys, windows)
	for i := range views {
		views[i] = &gpuntt.Polys{N: n, Count: b, Buf: g.buf.View(i*b*n, (i+1)*b*n)}
	}
	one, host, err := g.timeOnce(launch, views[0])
	if err != nil {
		return measurement{}, err
	}
	k, runs := g.budget.plan(one, g.reps, maxLaunchesPerSample)
	filler := 0
	if one < noFillerAbove {
		enqueue := 2 * time.Duration(runs*(k+1)) * max(host, time.Microsecond)
		filler = int(min(math.Ceil(float64(enqueue)/float64(tFull)), math.Ceil(float64(maxFiller)/float64(tFull)))) + 1
	}
	ev, err := g.eventsN(runs + 2)
	if err != nil {
		return measurement{}, err
	}
	start := time.Now()
	if err := ev[0].Record(nil); err != nil {
		return measurement{}, err
	}
	for i := 0; i < filler; i++ {
		if err := launch(full); err != nil {
			return measurement{}, err
		}
	}
	if err := ev[1].Record(nil); err != nil {
		return measurement{}, err
	}
	w := 0
	for r := 0; r < runs; r++ {
		for j := 0; j < k; j++ {
			if err := launch(views[w]); err != nil {
				return measurement{}, err
			}
			if w++; w == windows {
				w = 0
			}
		}
		if err := ev[r+2].Record(nil); err != nil {
			return measurement{}, err
		}
	}
	enqueued := time.Since(start)
	if err := ev[runs+1].Synchronize(); err != nil {
		return measurement{}, err
	}
	samples := make([]float64, runs)
	for r := range samples {
		el, err := kernels.ElapsedTime(ev[r+1], ev[r+2])
		if err != nil {
			return measurement{}, err
		}
		samples[r] = el.Seconds() * 1e6 / float64(k)
	}
	if filler > 0 {
		fl, err := kernels.ElapsedTime(ev[0], ev[1])
		if err != nil {
			return measurement{}, err
		}
		if fl < enqueued {
			fmt.Fprintf(g.warn, "nttbench: warning: N=%d batch %d: the host took %v to enqueue, longer than the %v filler: "+
				"the GPU may have waited for launches (time per batch overstated)\n", n, b, enqueued, fl)
		}
	}
	return measurement{batch: b, micros: median(samples), runs: runs}, nil
}
