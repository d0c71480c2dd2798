package bootstrap

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/goldfhe/goldfhe/kernels"
	"github.com/goldfhe/goldfhe/tfhe"
	"github.com/goldfhe/goldfhe/torus"
)

// Multi is the Engine of several engines that hold the same cloud key —
// one GPU engine per device of a host (NewGPUs) — that runs every call on
// all of them at once: engine i takes a contiguous share of the batch in
// proportion to its weight (a GPU engine's SM count; 1 for any other
// engine), and the call returns when every share is done. Each output is
// the one its engine computes, which for engines of one key is the same
// bit for bit whichever engine it is (DESIGN.md §3), so a Multi's outputs
// are the CPU engine's.
//
// A call of fewer samples than engines runs on as many engines as it has
// samples, and successive calls start their split at successive engines, so
// that goroutines making one-gate calls spread over the devices. Each
// engine keeps its own way of running concurrent calls (a GPU engine merges
// small calls that find it busy), so a Multi is safe for concurrent use by
// several goroutines as its engines are. The shares beside the caller's
// own run on worker goroutines that the Multi keeps until Close (up to
// twice as many idle ones as engines), so that a steady load seldom starts
// a goroutine or allocates. An engine must not call back into its Multi:
// Close waits for the calls in progress, and such a call would wait for
// Close.
//
// Errors: argument errors come before any work, as Engine promises. When
// an engine fails (a device error), the call returns its error, wrapped with
// the engine's index and name and joined with any other engine's; the
// other engines' shares are then written, and the failed engine's share is
// written as far as that engine writes a failed call. An engine's panic
// reaches the caller once every share is done: the lowest-index engine's,
// named, its value wrapped when an error, with every other engine's panic
// and error after it (multiCore.besides). Close closes every engine.
//
// A Multi dropped without Close is closed some time after the garbage
// collector finds it unreachable, which ends its workers and closes its
// engines as Close does; call Close to do so at a known time.
type Multi struct {
	noCopy  noCopy
	c       *multiCore // nil for a zero Multi
	cleanup runtime.Cleanup
}

// multiCore is a Multi behind its handle (closeWhenDropped): the worker
// goroutines and the calls' shares reference it, never the Multi. It holds
// the engines' handles, so they stay reachable, and open, while it is.
type multiCore struct {
	engines []Engine
	weights []int // engine i's share of a batch is weights[i] / total
	total   int64
	params  tfhe.Params
	group   int   // KeyGrouping common to the engines, 0 if unknown
	tiers   []int // BatchTiers, nil unless the engines' tiers scale
	name    string

	start atomic.Uint32   // the engine the next call's split starts at
	calls sync.Pool       // *multiCall
	work  chan *shareTask // to idle workers (unbuffered); closed by Close
	idle  atomic.Int32    // workers waiting on work
	// workers counts the worker goroutines, for Close to wait for their
	// end: once Close returns nothing of m runs (as with CPU.Close), and
	// a caller counting goroutines sees them gone.
	workers sync.WaitGroup

	mu     sync.RWMutex // held by calls (read) and Close (write)
	closed bool
	// callHook, when set (tests only), runs at the start of each call,
	// before it takes mu: where a collection that found the handle
	// unreachable would close the Multi under the call.
	callHook func()
}

// multiCall is one call's shares in flight: the engines' errors and any
// panic of a share run on another goroutine.
type multiCall struct {
	wg     sync.WaitGroup
	errs   []error
	panics []any
	stacks [][]byte    // of the panics
	tasks  []shareTask // the shares handed to workers, by engine
}

// shareTask is a share of a call for a worker goroutine.
type shareTask struct {
	c       *multiCall
	i       int // the engine
	op      opKind
	out, in []*tfhe.TLWE
	mu      torus.Torus32
}

// NewMulti returns the Multi of engines, which it takes over (Multi.Close
// closes them). The engines must hold the same cloud key: NewMulti checks
// that they have the same parameter set and key grouping, and that each
// bootstraps a fixed probe sample to the same bits as engines[0] (one
// gate's time on each, one engine after another); engines of two cloud
// keys fail that check even when the keys are of one secret key, since
// their outputs differ. Mixing GPU and CPU engines is an error: no split
// by SM count suits a CPU, and every call would wait for its share. On
// error the engines are left open, the caller's.
func NewMulti(engines ...Engine) (*Multi, error) {
	m, err := newMultiCore(engines)
	if err != nil {
		return nil, err
	}
	// Before the handle: a Multi that failed its probe must not close the
	// engines, the caller's, when collected.
	if err := m.probe(); err != nil {
		return nil, err
	}
	return m.handle(), nil
}

// newMulti checks engines and builds their Multi, without the probe.
func newMulti(engines []Engine) (*Multi, error) {
	m, err := newMultiCore(engines)
	if err != nil {
		return nil, err
	}
	return m.handle(), nil
}

// handle returns the Multi of m, which closes m once it is unreachable.
func (m *multiCore) handle() *Multi {
	h := &Multi{c: m}
	h.cleanup = closeWhenDropped(h, m)
	return h
}

// newMultiCore checks engines and builds the core of their Multi.
func newMultiCore(engines []Engine) (*multiCore, error) {
	if len(engines) == 0 {
		return nil, errors.New("bootstrap: NewMulti: no engines")
	}
	m := &multiCore{engines: slices.Clone(engines), weights: make([]int, len(engines))}
	gpus := 0
	names := make([]string, len(engines))
	for i, e := range m.engines {
		if e == nil {
			return nil, fmt.Errorf("bootstrap: NewMulti: engine %d is nil", i)
		}
		p := e.Params()
		if p.IsZero() {
			return nil, fmt.Errorf("bootstrap: NewMulti: engine %d: %w", i, ErrNotInitialized)
		}
		if i == 0 {
			m.params, m.group = p, KeyGrouping(e)
		} else {
			if !p.Equal(m.params) {
				a, b := tfhe.DistinctNames(p, m.params)
				return nil, fmt.Errorf("bootstrap: NewMulti: engine %d is for %s, engine 0 for %s", i, a, b)
			}
			if g := KeyGrouping(e); g != m.group {
				return nil, fmt.Errorf("bootstrap: NewMulti: engine %d's key has grouping %d, engine 0's %d", i, g, m.group)
			}
		}
		m.weights[i] = 1
		if g := gpuOf(e); g != nil {
			gpus++
			m.weights[i] = max(1, g.Device().SMs)
		}
		m.total += int64(m.weights[i])
		names[i] = e.Name()
	}
	if gpus != 0 && gpus != len(engines) {
		return nil, fmt.Errorf("bootstrap: NewMulti: %d GPU engines and %d others: a Multi splits calls by SM count among GPUs and evenly otherwise, so it takes engines of one kind", gpus, len(engines)-gpus)
	}
	m.tiers = multiTiers(m.engines, m.weights)
	m.work = make(chan *shareTask)
	m.name = "multi(" + strings.Join(names, " | ") + ")"
	m.calls.New = func() any {
		k := len(m.engines)
		return &multiCall{errs: make([]error, k), panics: make([]any, k), stacks: make([][]byte, k), tasks: make([]shareTask, k)}
	}
	return m, nil
}

// gpuOf returns the GPU engine e is or forwards to (a Selected), or nil.
func gpuOf(e Engine) *GPU {
	if s, ok := e.(*Selected); ok {
		e = s.engine()
	}
	g, _ := e.(*GPU)
	return g
}

// multiTiers is the BatchTiers of a Multi: with equal weights and the same
// tiers on every engine, a call of up to k·t samples gives each of the k
// engines at most t, so the Multi steps at k times each tier. Otherwise
// nil: no steps worth filling to.
func multiTiers(engines []Engine, weights []int) []int {
	first := BatchTiers(engines[0])
	if first == nil {
		return nil
	}
	for i, e := range engines {
		if weights[i] != weights[0] || !slices.Equal(BatchTiers(e), first) {
			return nil
		}
	}
	tiers := make([]int, len(first))
	for i, t := range first {
		tiers[i] = t * len(engines)
	}
	return tiers
}

// probe bootstraps one pseudorandom sample (a fixed seed, so every engine
// gets the same) on each engine and compares the outputs with engine 0's.
func (m *multiCore) probe() error {
	n := m.params.LWEDimension()
	in := tfhe.NewTLWE(n)
	r := rand.New(rand.NewPCG(0x676f6c64, 0x66686521))
	for i := range in.Value {
		in.Value[i] = torus.Torus32(r.Uint32())
	}
	mu := torus.Torus32(1 << 29) // 1/8, a gate's
	var want *tfhe.TLWE
	for i, e := range m.engines {
		out := tfhe.NewTLWE(n)
		if err := e.Bootstrap([]*tfhe.TLWE{out}, []*tfhe.TLWE{in}, mu); err != nil {
			return fmt.Errorf("bootstrap: NewMulti: engine %d (%s): %w", i, e.Name(), err)
		}
		if i == 0 {
			want = out
			continue
		}
		if !slices.Equal(out.Value, want.Value) {
			return fmt.Errorf("bootstrap: NewMulti: engine %d (%s) bootstraps a probe sample to other bits than engine 0 (%s): they do not hold the same cloud key", i, e.Name(), m.engines[0].Name())
		}
	}
	return nil
}

// NewGPUs builds one GPU engine per device of devices (CUDA ordinals; nil
// or empty: every device) with opts and the same cloud key, at once, and
// returns their Multi, which splits calls by the devices' SM counts.
// opts.Device must be 0: devices says which. When any engine fails, the
// ones built are closed and the error says which device failed; without a
// driver or device it wraps ErrNoGPU, as NewGPU's does. One device gives a
// Multi of one engine, which forwards every call to it.
func NewGPUs(ck *tfhe.CloudKey, devices []int, opts GPUOptions) (*Multi, error) {
	if err := checkDevices(devices, opts); err != nil {
		return nil, fmt.Errorf("bootstrap: NewGPUs: %w", err)
	}
	if len(devices) == 0 && opts.Device != 0 {
		// Every device, which GPUOptions.Device would contradict.
		return nil, fmt.Errorf("bootstrap: NewGPUs: GPUOptions.Device %d with no device list: list the devices instead", opts.Device)
	}
	if len(devices) == 0 {
		var err error
		if devices, err = GPUDevices(); err != nil {
			return nil, err
		}
	}
	engines := make([]Engine, len(devices))
	errs := make([]error, len(devices))
	var wg sync.WaitGroup
	for i, d := range devices {
		wg.Go(func() {
			o := opts
			o.Device = d
			g, err := NewGPU(ck, o)
			if err != nil {
				errs[i] = err
				return
			}
			engines[i] = g
		})
	}
	wg.Wait()
	if err := deviceErrors(devices, errs); err != nil {
		for _, e := range engines {
			if e != nil {
				err = errors.Join(err, e.Close())
			}
		}
		return nil, fmt.Errorf("bootstrap: NewGPUs: %w", err)
	}
	m, err := newMulti(engines) // one key by construction: no probe
	if err != nil {
		for _, e := range engines {
			err = errors.Join(err, e.Close())
		}
		return nil, err
	}
	return m, nil
}

// checkDevices reports a list of devices no host could take: a negative or
// repeated ordinal, or one given beside opts.Device (which must be 0, or
// the one device listed).
func checkDevices(devices []int, opts GPUOptions) error {
	for i, d := range devices {
		if d < 0 {
			return fmt.Errorf("device %d is negative", d)
		}
		if slices.Contains(devices[:i], d) {
			return fmt.Errorf("device %d is listed twice", d)
		}
	}
	if opts.Device != 0 && len(devices) > 0 && !slices.Equal(devices, []int{opts.Device}) {
		return fmt.Errorf("devices %v given beside GPUOptions.Device %d: the list says which", devices, opts.Device)
	}
	return nil
}

// deviceErrors joins the errors of NewGPU per device, each named by its
// device, or says once the error that every device gave (no driver, say).
func deviceErrors(devices []int, errs []error) error {
	same := len(errs) > 1
	var named []error
	for i, err := range errs {
		if err == nil {
			same = false
			continue
		}
		same = same && err.Error() == errs[0].Error()
		named = append(named, fmt.Errorf("device %d: %w", devices[i], err))
	}
	if same {
		return fmt.Errorf("devices %v: %w", devices, errs[0])
	}
	return errors.Join(named...)
}

// GPUDevices lists the ordinals of every CUDA device, for NewGPUs and
// Options.Devices. Without a driver or device the error wraps ErrNoGPU.
func GPUDevices() ([]int, error) {
	n, err := kernels.DeviceCount()
	if err == nil && n == 0 {
		err = kernels.ErrNoDevice
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNoGPU, err)
	}
	devices := make([]int, n)
	for i := range devices {
		devices[i] = i
	}
	return devices, nil
}

// core returns m's core, nil for a nil or zero Multi.
func (m *Multi) core() *multiCore {
	if m == nil {
		return nil
	}
	return m.c
}

// Engines returns the engines m spreads its calls over, in order (a new
// slice; the engines are m's and closed by its Close).
func (m *Multi) Engines() []Engine {
	defer runtime.KeepAlive(m)
	c := m.core()
	if c == nil {
		return nil
	}
	return slices.Clone(c.engines)
}

// Name implements Engine: "multi(" and the engines' names, separated by
// " | ", then ")".
func (m *Multi) Name() string {
	defer runtime.KeepAlive(m)
	c := m.core()
	if c == nil {
		return ""
	}
	return c.name
}

// String returns Name.
func (m *Multi) String() string { return m.Name() }

// Params implements Engine.
func (m *Multi) Params() tfhe.Params {
	defer runtime.KeepAlive(m)
	c := m.core()
	if c == nil {
		return tfhe.Params{}
	}
	return c.params
}

// Grouping returns the grouping factor of the engines' key (KeyGrouping).
func (m *Multi) Grouping() int {
	defer runtime.KeepAlive(m)
	c := m.core()
	if c == nil {
		return 0
	}
	return c.group
}

// BatchTiers returns the engines' tiers times their number when every
// engine has the same weight and tiers (GPUs of one model), else nil.
func (m *Multi) BatchTiers() []int {
	defer runtime.KeepAlive(m)
	c := m.core()
	if c == nil {
		return nil
	}
	return slices.Clone(c.tiers)
}

// Bootstrap implements Engine.
func (m *Multi) Bootstrap(out, in []*tfhe.TLWE, mu torus.Torus32) error {
	defer runtime.KeepAlive(m)
	return m.core().run(opBootstrap, out, in, mu)
}

// BootstrapNoKeySwitch implements Engine.
func (m *Multi) BootstrapNoKeySwitch(out, in []*tfhe.TLWE, mu torus.Torus32) error {
	defer runtime.KeepAlive(m)
	return m.core().run(opBootstrapNoKS, out, in, mu)
}

// KeySwitch implements Engine.
func (m *Multi) KeySwitch(out, in []*tfhe.TLWE) error {
	defer runtime.KeepAlive(m)
	return m.core().run(opKeySwitch, out, in, 0)
}

// Close implements Engine: it waits for calls in progress, ends the worker
// goroutines and waits for them, and closes every engine, joining their
// errors. It is idempotent.
func (m *Multi) Close() error {
	defer runtime.KeepAlive(m)
	err := m.core().Close()
	if m != nil {
		m.cleanup.Stop() // closed: nothing left for the collector to do
	}
	return err
}

// Close is Multi.Close, which the cleanup of a dropped handle calls too.
func (m *multiCore) Close() error {
	if m == nil || m.name == "" {
		return ErrNotInitialized
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil
	}
	m.closed = true
	close(m.work) // no call is in flight: the idle workers end
	m.workers.Wait()
	errs := make([]error, len(m.engines))
	for i, e := range m.engines {
		errs[i] = e.Close()
	}
	if err := m.engineErrors(errs); err != nil {
		return fmt.Errorf("bootstrap: Multi.Close: %w", err)
	}
	return nil
}

// run checks the call, splits it and runs the shares, the last on the
// caller's goroutine.
func (m *multiCore) run(op opKind, out, in []*tfhe.TLWE, mu torus.Torus32) error {
	if m == nil || m.name == "" {
		return ErrNotInitialized
	}
	if m.callHook != nil {
		m.callHook()
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.closed {
		return ErrClosed
	}
	if err := checkBatch(m.params, op, out, in); err != nil {
		return err
	}
	k := len(m.engines)
	c := m.calls.Get().(*multiCall)
	defer m.calls.Put(c)
	if len(in) == 0 {
		// Every engine sees the empty call: a GPU that has faulted fails
		// it. One after another, each panic kept as a share's is, so that
		// an engine's panic neither skips the later engines nor hides the
		// earlier ones' errors.
		for i := range m.engines {
			m.share(c, i, op, nil, nil, mu, false)
		}
		m.raise(c)
		return m.collect(c)
	}
	// Reduced as a uint32: converted first, a count past 2^31 would be a
	// negative int where an int has 32 bits.
	first := int((m.start.Add(1) - 1) % uint32(k))
	var acc int64 // weights of the engines before this one in the split
	last := -1    // the last engine with a share: the caller runs it
	var lastLo, lastHi int
	for j := range k {
		i := (first + j) % k
		lo := int(int64(len(in)) * acc / m.total)
		acc += int64(m.weights[i])
		hi := int(int64(len(in)) * acc / m.total)
		if lo == hi {
			continue
		}
		if last >= 0 {
			m.handOff(c, shareTask{c: c, i: last, op: op, out: out[lastLo:lastHi], in: in[lastLo:lastHi], mu: mu})
		}
		last, lastLo, lastHi = i, lo, hi
	}
	m.share(c, last, op, out[lastLo:lastHi], in[lastLo:lastHi], mu, false)
	c.wg.Wait()
	clear(c.tasks) // no samples kept in the pool
	m.raise(c)
	return m.collect(c)
}

// raise panics, on the caller's goroutine, with the lowest-index engine's
// panic of call c, if any engine panicked, once c is cleared for the pool.
func (m *multiCore) raise(c *multiCall) {
	for i, p := range c.panics {
		if p != nil {
			stack := c.stacks[i]
			others := m.besides(c, i)
			clear(c.panics)
			clear(c.stacks)
			clear(c.errs)
			// The engine's own value where it is an error (errors.As
			// finds it: a runtime.Error, say), with the engine and the
			// stack of the goroutine that panicked, which is gone; then
			// what else went wrong (besides).
			what := fmt.Sprintf("bootstrap: Multi engine %d (%s) panicked", i, m.engines[i].Name())
			if err, ok := p.(error); ok {
				if others != nil {
					panic(fmt.Errorf("%s: %w\nbesides:\n%w\n\n%s", what, err, others, stack))
				}
				panic(fmt.Errorf("%s: %w\n\n%s", what, err, stack))
			}
			if others != nil {
				panic(fmt.Sprintf("%s: %v\nbesides:\n%v\n\n%s", what, p, others, stack))
			}
			panic(fmt.Sprintf("%s: %v\n\n%s", what, p, stack))
		}
	}
}

// besides joins what else went wrong in call c beside engine i's panic,
// which run raises: the other engines' panics (their values; the stacks
// stay unsaid) and errors, each named by its engine, nil if nothing did.
// The panic carries them, so that a caller who recovers it learns of every
// share left unwritten and of a device fault (an engine to close) that the
// panic would otherwise hide: in its text, and, when the panic's value is
// an error, for errors.Is and errors.As too.
func (m *multiCore) besides(c *multiCall, i int) error {
	var errs []error
	for j, p := range c.panics {
		if j == i || p == nil {
			continue
		}
		what := fmt.Sprintf("engine %d (%s) panicked too", j, m.engines[j].Name())
		if err, ok := p.(error); ok {
			errs = append(errs, fmt.Errorf("%s: %w", what, err))
		} else {
			errs = append(errs, fmt.Errorf("%s: %v", what, p))
		}
	}
	return errors.Join(append(errs, m.engineErrors(c.errs))...)
}

// handOff runs share t on another goroutine: an idle worker, or a new one
// when none is idle, which then stays for later calls. Shares never wait
// for each other.
func (m *multiCore) handOff(c *multiCall, t shareTask) {
	c.tasks[t.i] = t
	c.wg.Add(1)
	select {
	case m.work <- &c.tasks[t.i]:
	default:
		// Under m.mu's read lock, so before Close's Wait.
		m.workers.Add(1)
		go m.worker(&c.tasks[t.i])
	}
}

// worker runs t, then every share it receives, until Close closes m.work
// or enough other workers wait already (maxIdleWorkers): a burst of
// concurrent calls leaves no crowd of idle goroutines behind.
func (m *multiCore) worker(t *shareTask) {
	defer m.workers.Done()
	for t != nil {
		m.share(t.c, t.i, t.op, t.out, t.in, t.mu, true) // t is the caller's again after this
		if m.idle.Add(1) > int32(maxIdleWorkers*len(m.engines)) {
			m.idle.Add(-1)
			return
		}
		t = <-m.work
		m.idle.Add(-1)
	}
}

// maxIdleWorkers is the idle workers kept per engine: those of a few
// concurrent calls, each of which hands a share to all engines but one.
const maxIdleWorkers = 2

// share runs engine i's share, on a goroutine of its own when counted in
// c.wg. A panic is kept for run to raise on the caller's goroutine, where
// it can be recovered, once no share uses c any more.
func (m *multiCore) share(c *multiCall, i int, op opKind, out, in []*tfhe.TLWE, mu torus.Torus32, counted bool) {
	if counted {
		defer c.wg.Done()
	}
	defer func() {
		if p := recover(); p != nil {
			c.panics[i], c.stacks[i] = p, debug.Stack()
		}
	}()
	c.errs[i] = call(m.engines[i], op, out, in, mu)
}

// collect joins the engines' errors of a call and clears them for the
// next call.
func (m *multiCore) collect(c *multiCall) error {
	err := m.engineErrors(c.errs)
	clear(c.errs)
	if err != nil {
		return fmt.Errorf("bootstrap: Multi: %w", err)
	}
	return nil
}

// engineErrors joins errs[i], engine i's error, each named by its engine.
func (m *multiCore) engineErrors(errs []error) error {
	var named []error
	for i, err := range errs {
		if err != nil {
			named = append(named, fmt.Errorf("engine %d (%s): %w", i, m.engines[i].Name(), err))
		}
	}
	return errors.Join(named...)
}

// call makes the call op on e.
func call(e Engine, op opKind, out, in []*tfhe.TLWE, mu torus.Torus32) error {
	switch op {
	case opBootstrapNoKS:
		return e.BootstrapNoKeySwitch(out, in, mu)
	case opKeySwitch:
		return e.KeySwitch(out, in)
	}
	return e.Bootstrap(out, in, mu)
}
