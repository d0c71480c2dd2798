package main

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"time"
	"unsafe"

	"github.com/goldfhe/goldfhe/bootstrap"
	"github.com/goldfhe/goldfhe/kernels"
	"github.com/goldfhe/goldfhe/smallntt"
	"github.com/goldfhe/goldfhe/tfhe"
	"github.com/goldfhe/goldfhe/torus"
)

const (
	// warmupLimit: a batch size gets its own warm-up call when its expected
	// time is below this; larger ones follow a warm engine (the first batch
	// size of a case always warms it up).
	warmupLimit = 500 * time.Millisecond
	// minEnergyWindow is the shortest timed window whose energy per gate
	// is reported (mj_per_gate; the GPU's counter: gpumon).
	minEnergyWindow = time.Second
	// timeCap ends the timed runs of one batch size once they add up to it.
	timeCap = 10 * time.Second
	// inputChunk samples share one encryptor, seeded by the chunk's index:
	// the inputs do not depend on the number of cores.
	inputChunk = 512
)

// mu is the bootstrapping output, 1/8: what gates.Evaluator uses.
var mu = tfhe.EncodeBool(true)

// fixture is one parameter set's keys, inputs and output buffers, shared by
// its cases. The inputs are what a NAND gate bootstraps: (0, 1/8) − c1 − c2
// for fresh encryptions c1, c2 of random bits (DESIGN.md §2), phase ±1/8 or
// 3/8, so each output must decrypt to NAND of the bits.
type fixture struct {
	p       tfhe.Params
	sk      *tfhe.SecretKey
	in, out []*tfhe.TLWE
	want    []bool
	// keys[g] is the cloud key with grouping g (tfhe.WithGrouping), made
	// when first needed, and its reference outputs.
	keys [tfhe.MaxGrouping + 1]*fixtureKey
}

// fixtureKey is one cloud key of a fixture and what its outputs must be:
// sums[i] is the digest (outputDigest) of output i as first computed with
// this key, by the engine names[by[i]]. Every engine and plan must
// reproduce every output bit for bit, not only a call's first ones: on the
// GPU a large call's last samples run on other kernels than its first
// (bootstrap's tailPasses). A digest of 8 bytes a sample keeps this within
// reach for the largest batches (-batches up to 2^20).
type fixtureKey struct {
	ck    *tfhe.CloudKey
	sums  []uint64
	by    []int32
	names []string
}

// digestSeed seeds outputDigest: the digests are compared within one run.
var digestSeed = maphash.MakeSeed()

// outputDigest is a 64-bit hash of a sample's words: two samples that
// differ in any bit have equal digests with probability about 2^-64.
func outputDigest(o *tfhe.TLWE) uint64 {
	if len(o.Value) == 0 {
		return maphash.Bytes(digestSeed, nil)
	}
	return maphash.Bytes(digestSeed, unsafe.Slice((*byte)(unsafe.Pointer(&o.Value[0])), len(o.Value)*int(unsafe.Sizeof(o.Value[0]))))
}

// key returns the fixture's cloud key with grouping g, generating it the
// first time.
func (fx *fixture) key(g int) (*fixtureKey, error) {
	if fx.keys[g] == nil {
		label := "cloud key"
		if g > 1 {
			label = fmt.Sprintf("cloud key, grouping %d", g)
		}
		ck, err := tfhe.GenerateCloudKeyFromSeed(fx.sk, seedFor(label, fx.p), tfhe.WithGrouping(g))
		if err != nil {
			return nil, err
		}
		fx.keys[g] = &fixtureKey{ck: ck}
	}
	return fx.keys[g], nil
}

// seedFor derives a fixed seed: keys and inputs are the same in every run.
func seedFor(what string, p tfhe.Params) [torus.SeedSize]byte {
	return sha256.Sum256([]byte("goldfhe examples/bench: " + what + " for " + p.Name()))
}

// newFixture generates p's keys and batch NAND inputs.
func newFixture(p tfhe.Params, batch int) (*fixture, error) {
	sk, err := tfhe.GenerateSecretKeyFromSeed(p, seedFor("secret key", p))
	if err != nil {
		return nil, err
	}
	fx := &fixture{p: p, sk: sk, in: newTLWEs(p.LWEDimension(), batch), out: newTLWEs(p.LWEDimension(), batch), want: make([]bool, batch)}
	base := seedFor("inputs", p)
	chunks := (batch + inputChunk - 1) / inputChunk
	errs := make([]error, chunks)
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for c := range chunks {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			seed := torus.DeriveSeed(base, "chunk", uint64(c))
			enc, err := tfhe.NewEncryptorFromSeed(sk, seed)
			if err != nil {
				errs[c] = err
				return
			}
			// The plaintext bits from a stream of their own, not the
			// encryptor's.
			rng := rand.New(rand.NewChaCha8(torus.DeriveSeed(seed, "bits", 0)))
			x, y := tfhe.NewTLWE(p.LWEDimension()), tfhe.NewTLWE(p.LWEDimension())
			for i := c * inputChunk; i < min(batch, (c+1)*inputChunk); i++ {
				a, b := rng.IntN(2) == 1, rng.IntN(2) == 1
				enc.EncryptBoolTo(x, a)
				enc.EncryptBoolTo(y, b)
				tfhe.NegTLWETo(fx.in[i], x)
				tfhe.SubTLWETo(fx.in[i], fx.in[i], y)
				tfhe.AddConstTLWETo(fx.in[i], fx.in[i], mu)
				fx.want[i] = !(a && b)
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if _, err := fx.key(1); err != nil {
		return nil, err
	}
	return fx, nil
}

// newTLWEs returns count samples of dimension n in one allocation.
func newTLWEs(n, count int) []*tfhe.TLWE {
	buf := make([]torus.Torus32, count*(n+1))
	out := make([]*tfhe.TLWE, count)
	for i := range out {
		out[i] = &tfhe.TLWE{Value: buf[i*(n+1) : (i+1)*(n+1) : (i+1)*(n+1)]}
	}
	return out
}

// poison sets the first b outputs to trivial samples of the wrong answer, so
// that an output the engine did not write fails the check.
func (fx *fixture) poison(b int) {
	for i, o := range fx.out[:b] {
		o.SetTrivial(tfhe.EncodeBool(!fx.want[i]))
	}
}

// check decrypts the first b outputs and compares them with the expected
// bits and, bit for bit (their digests), with the outputs first computed
// for the same inputs with key k; outputs computed for the first time
// become the reference.
func (fx *fixture) check(b int, engine string, k *fixtureKey) error {
	wrong, first := 0, -1
	for i, o := range fx.out[:b] {
		if fx.sk.DecryptBool(o) != fx.want[i] {
			if wrong == 0 {
				first = i
			}
			wrong++
		}
	}
	if wrong > 0 {
		return fmt.Errorf("WRONG RESULT: %d of %d outputs decrypt wrongly (first: sample %d decrypts to %v, NAND gives %v)",
			wrong, b, first, !fx.want[first], fx.want[first])
	}
	known := min(b, len(k.sums))
	for i, o := range fx.out[:known] {
		if outputDigest(o) != k.sums[i] {
			return fmt.Errorf("WRONG RESULT: output %d differs from the one %s computed for the same input and keys "+
				"(every engine and NTT plan must agree bit for bit, DESIGN.md §3)", i, k.names[k.by[i]])
		}
	}
	if b > known {
		id := slices.Index(k.names, engine)
		if id < 0 {
			id = len(k.names)
			k.names = append(k.names, engine)
		}
		for _, o := range fx.out[known:b] {
			k.sums = append(k.sums, outputDigest(o))
			k.by = append(k.by, int32(id))
		}
	}
	return nil
}

// measurement is the median time of one batch size of one case.
type measurement struct {
	batch  int
	median time.Duration
	runs   int // timed runs the median is over
	// from and to bound the timed runs (the GPU's clock and power
	// samples of this batch size are those between them).
	from, to time.Time
	// gates and busy are the timed runs' gates and time in Bootstrap; the
	// rest of the window is the output checks between calls.
	gates int
	busy  time.Duration
	// joules is the GPU's energy over the window (its energy counter at
	// from and at to), 0 when not measured.
	joules float64
}

func (m measurement) ms() float64 { return float64(m.median.Nanoseconds()) / 1e6 }

// mJPerGate is the GPU's energy per gate over the timed runs, in
// millijoules; ok is false when it was not measured.
func (m measurement) mJPerGate() (mj float64, ok bool) {
	if m.joules <= 0 || m.gates == 0 {
		return 0, false
	}
	return 1000 * m.joules / float64(m.gates), true
}

// gatesPerSecond is the batch over its median time.
func (m measurement) gatesPerSecond() float64 {
	return float64(m.batch) / max(m.median.Seconds(), 1e-9)
}

// caseResult is what one case gave: its measurements in batch order, up to
// the first error.
type caseResult struct {
	c          benchCase
	variant    string // the plan the engine used (planLabel), or c.variant before it was built
	engineName string // Engine.Name()
	ms         []measurement
	err        error
}

// newEngine builds c's engine for fx's cloud key ck (c.variant's grouping).
func newEngine(c benchCase, fx *fixture, ck *tfhe.CloudKey) (bootstrap.Engine, string, error) {
	plan, err := c.variant.plan(fx.p.PolyDegree(), c.engine)
	if err != nil {
		return nil, "", err
	}
	switch c.engine {
	case engGPU:
		// One device pass per batch: MaxBatch is the largest batch. If that
		// does not fit, the engine's own choice (it then splits batches).
		opts := bootstrap.GPUOptions{Plan: plan, MaxBatch: c.batches[len(c.batches)-1], BlindRotation: c.variant.blindRotation()}
		// With several GPUs each one's share of a batch (by SM count)
		// fits that too: one pass per GPU.
		e, err := newGPUEngine(ck, opts, c.gpus)
		if errors.Is(err, kernels.ErrOutOfMemory) {
			opts.MaxBatch = 0
			e, err = newGPUEngine(ck, opts, c.gpus)
		}
		if err != nil {
			return nil, "", err
		}
		switch {
		case c.variant.name == vWide, c.variant.grouping() > 1:
			return e, c.variant.name, nil
		case plan == nil:
			// The engine's own choice, which may depend on the batch size:
			// its Name says what it is.
			return e, vDefault, nil
		case c.variant.gpuOnly():
			return e, planLabel(e.Plan()) + "/" + c.variant.name, nil
		}
		return e, planLabel(e.Plan()), nil
	case engCPU:
		e, err := bootstrap.NewCPU(ck, bootstrap.CPUOptions{Plan: plan})
		if err != nil {
			return nil, "", err
		}
		switch {
		case c.variant.grouping() > 1:
			return e, planLabel(e.Plan()) + "/" + c.variant.name, nil
		case c.variant.name == vDefault:
			// The same plan as hybrid's on the CPU, labelled apart so that
			// -variants default,hybrid gives two rows a reader can tell.
			return e, planLabel(e.Plan()) + "/" + vDefault, nil
		}
		return e, planLabel(e.Plan()), nil
	}
	panic("bench: unknown engine kind " + c.engine)
}

// gpuPlanner is what newEngine needs of a GPU engine beside Engine: the
// plan it chose (every engine of a Multi chooses the same).
type gpuPlanner interface {
	bootstrap.Engine
	Plan() *smallntt.Plan
}

// multiPlan is a Multi of GPU engines with their plan.
type multiPlan struct{ *bootstrap.Multi }

func (m multiPlan) Plan() *smallntt.Plan { return m.Engines()[0].(*bootstrap.GPU).Plan() }

// newGPUEngine is NewGPU on GPU 0, or NewGPUs on GPUs 0 to gpus-1.
func newGPUEngine(ck *tfhe.CloudKey, opts bootstrap.GPUOptions, gpus int) (gpuPlanner, error) {
	if gpus <= 1 {
		g, err := bootstrap.NewGPU(ck, opts)
		if err != nil {
			return nil, err // not a typed nil in the interface
		}
		return g, nil
	}
	devices := make([]int, gpus)
	for i := range devices {
		devices[i] = i
	}
	m, err := bootstrap.NewGPUs(ck, devices, opts)
	if err != nil {
		return nil, err
	}
	return multiPlan{m}, nil
}

// runCase builds c's engine and times it at each batch size, checking every
// output; progress goes to w, prefixed by tag. energy, when not nil, reads
// the GPU's energy counter in joules (machine.energyMeter) around each
// batch size's timed runs of a GPU case.
func runCase(c benchCase, fx *fixture, reps, maxGates int, w io.Writer, tag string, energy func() (float64, error)) (res caseResult) {
	res = caseResult{c: c, variant: c.variant.String()}
	t0 := time.Now()
	key, err := fx.key(c.variant.grouping())
	if err != nil {
		res.err = err
		return res
	}
	eng, label, err := newEngine(c, fx, key.ck)
	if err != nil {
		res.err = err
		return res
	}
	defer func() {
		if err := eng.Close(); err != nil && res.err == nil {
			res.err = err
		}
	}()
	res.variant, res.engineName = label, eng.Name()
	fmt.Fprintf(w, "bench: %s %s %s %s: engine %s ready in %v\n", tag, c.engine, c.set.Name(), label, eng.Name(), roundDur(time.Since(t0)))

	call := func(b int) (time.Duration, error) {
		fx.poison(b)
		t := time.Now()
		err := eng.Bootstrap(fx.out[:b], fx.in[:b], mu)
		d := time.Since(t)
		if err != nil {
			return d, err
		}
		return d, fx.check(b, eng.Name(), key)
	}
	var prev measurement
	for i, b := range c.batches {
		if i == 0 || time.Duration(float64(prev.median)*float64(b)/float64(prev.batch)) <= warmupLimit {
			if _, err := call(b); err != nil {
				res.err = fmt.Errorf("batch %d (warm-up): %w", b, err)
				return res
			}
		}
		n := min(reps, max(1, maxGates/b))
		var ts []time.Duration
		var spent time.Duration
		var e0 float64
		metered := false
		if energy != nil && c.engine == engGPU {
			var err error
			e0, err = energy()
			metered = err == nil
		}
		from := time.Now()
		for range n {
			d, err := call(b)
			if err != nil {
				res.err = fmt.Errorf("batch %d: %w", b, err)
				return res
			}
			ts = append(ts, d)
			if spent += d; spent >= timeCap {
				break
			}
		}
		prev = measurement{batch: b, median: median(ts), runs: len(ts), from: from, to: time.Now(), gates: b * len(ts), busy: spent}
		if metered {
			prev.joules = windowEnergy(prev.to.Sub(prev.from), e0, energy)
		}
		res.ms = append(res.ms, prev)
		fmt.Fprintf(w, "bench: %s %s %s %s: batch %6d  %10.3f ms  %9.1f gates/s  (median of %d)\n",
			tag, c.engine, c.set.Name(), label, b, prev.ms(), prev.gatesPerSecond(), prev.runs)
	}
	return res
}

// windowEnergy is the energy in joules over a timed window of length
// window whose counter read e0 at its start, reading the counter again at
// its end; 0 (no figure) when the window is shorter than minEnergyWindow,
// the read fails, or the counter did not advance. NVML's energy counter
// moves every 20-100 ms, so a window much shorter than a second gives one
// or two of its steps over a few gates: no figure rather than a wrong one.
func windowEnergy(window time.Duration, e0 float64, energy func() (float64, error)) float64 {
	if window < minEnergyWindow {
		return 0
	}
	e1, err := energy()
	if err != nil || e1 <= e0 {
		return 0
	}
	return e1 - e0
}

// median of a non-empty list; the mean of the middle two for an even count.
func median(ts []time.Duration) time.Duration {
	s := slices.Clone(ts)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// roundDur keeps about three significant digits.
func roundDur(d time.Duration) time.Duration {
	switch {
	case d >= 10*time.Second:
		return d.Round(100 * time.Millisecond)
	case d >= time.Second:
		return d.Round(10 * time.Millisecond)
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond)
	}
	return d.Round(time.Microsecond)
}
