package bootstrap

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/goldfhe/goldfhe/smallntt"
	"github.com/goldfhe/goldfhe/tfhe"
	"github.com/goldfhe/goldfhe/torus"
)

// CPUOptions configures NewCPU. The zero value selects the default NTT plan
// and one worker per core.
type CPUOptions struct {
	// Plan is the NTT plan of every polynomial product. It must have
	// N = PolyDegree of the key's parameters. When nil, Variant and Factors
	// select one with smallntt.NewPlan.
	Plan *smallntt.Plan
	// Variant and Factors are passed to smallntt.NewPlan when Plan is nil
	// (for example smallntt.Matrix with 8, 8, 16). A zero Variant selects
	// smallntt.DefaultPlan, the fastest plan measured on a CPU.
	Variant smallntt.Variant
	Factors []int
	// Workers is the number of goroutines that share a batch; 0 means
	// runtime.GOMAXPROCS(0) at construction.
	Workers int
}

// CPU is the pure-Go Engine. A batch is spread over a fixed pool of worker
// goroutines, each with its own tfhe.Evaluator (scratch buffers reused from
// call to call: the hot path allocates nothing). CPU is safe for concurrent
// use; concurrent calls share the workers. Its outputs are bit-identical
// whatever NTT plan and number of workers it uses.
//
// A CPU engine dropped without Close is closed some time after the garbage
// collector finds it unreachable, which ends its workers; call Close to end
// them at a known time.
type CPU struct {
	noCopy  noCopy
	c       *cpuCore // nil for a zero CPU
	cleanup runtime.Cleanup
}

// cpuCore is a CPU engine behind its handle (closeWhenDropped): the workers
// and the queue reference it, never the CPU.
type cpuCore struct {
	params tfhe.Params
	plan   *smallntt.Plan
	name   string
	group  int // the bootstrapping key's grouping factor

	mu      sync.RWMutex // calls hold it for reading, Close for writing
	closed  bool
	jobs    chan *batch // one entry per worker taking part in a batch
	free    chan *batch // recycled batches
	workers sync.WaitGroup
	nw      int
	// stopHook, when set (tests only, before Close), runs in each worker
	// as it stops: a slow stop makes Close's wait for the workers testable.
	stopHook func()
	// callHook, when set (tests only), runs at the start of each call,
	// before it takes mu: where a collection that found the handle
	// unreachable would close the engine under the call.
	callHook func()
}

type opKind int

const (
	opBootstrap opKind = iota
	opBootstrapNoKS
	opKeySwitch
)

// batch is one call being served: workers claim indices with next.
type batch struct {
	op      opKind
	out, in []*tfhe.TLWE
	mu      torus.Torus32
	next    atomic.Int64
	done    sync.WaitGroup
}

var _ Engine = (*CPU)(nil)

// NewCPU returns a CPU engine for ck. It transforms the bootstrapping key
// with the selected plan (shared with other engines using a plan of the same
// NTT order, see tfhe.BootstrappingKey.NTT) and starts its workers; Close
// stops them.
func NewCPU(ck *tfhe.CloudKey, opts CPUOptions) (*CPU, error) {
	if err := ck.Validate(); err != nil {
		return nil, fmt.Errorf("bootstrap: NewCPU: %w", err)
	}
	p := ck.Params()
	plan, nw, err := opts.resolve("NewCPU", p)
	if err != nil {
		return nil, err
	}
	ev, err := tfhe.NewEvaluator(p, plan, ck)
	if err != nil {
		return nil, fmt.Errorf("bootstrap: NewCPU: %w", err)
	}
	e := &cpuCore{
		params: p,
		plan:   plan,
		name:   cpuName(plan, nw, ck.Grouping()),
		group:  ck.Grouping(),
		jobs:   make(chan *batch, 4*nw),
		free:   make(chan *batch, 16),
		nw:     nw,
	}
	for i := range nw {
		w := ev
		if i > 0 {
			w = ev.ShallowCopy()
		}
		e.workers.Go(func() { e.work(w) })
	}
	h := &CPU{c: e}
	h.cleanup = closeWhenDropped(h, e)
	return h, nil
}

// resolve returns the plan and the worker count opts select for p, or the
// error that names what is wrong with them (op names the caller).
func (opts CPUOptions) resolve(op string, p tfhe.Params) (*smallntt.Plan, int, error) {
	plan := opts.Plan
	var err error
	switch {
	case plan != nil:
		if opts.Variant != 0 || len(opts.Factors) != 0 {
			return nil, 0, fmt.Errorf("bootstrap: %s: set either Plan or Variant/Factors, not both", op)
		}
		if plan.N() != p.PolyDegree() {
			return nil, 0, fmt.Errorf("bootstrap: %s: plan %v has N=%d, the parameters N=%d", op, plan, plan.N(), p.PolyDegree())
		}
	case opts.Variant != 0:
		plan, err = smallntt.NewPlan(p.PolyDegree(), opts.Variant, opts.Factors...)
	case len(opts.Factors) != 0:
		return nil, 0, fmt.Errorf("bootstrap: %s: Factors given without a Variant", op)
	default:
		plan, err = defaultPlan(p.PolyDegree())
	}
	if err != nil {
		return nil, 0, fmt.Errorf("bootstrap: %s: %w", op, err)
	}
	nw := opts.Workers
	if nw < 0 || nw > maxCPUWorkers {
		return nil, 0, fmt.Errorf("bootstrap: %s: %d workers (0 for GOMAXPROCS, at most %d)", op, nw, maxCPUWorkers)
	}
	if nw == 0 {
		nw = runtime.GOMAXPROCS(0)
	}
	return plan, nw, nil
}

// defaultPlan is the plan used when CPUOptions selects none: the fastest
// measured on a CPU (smallntt.DefaultPlan).
func defaultPlan(n int) (*smallntt.Plan, error) { return smallntt.DefaultPlan(n) }

func (e *cpuCore) work(ev *tfhe.Evaluator) {
	for b := range e.jobs {
		for {
			i := int(b.next.Add(1) - 1)
			if i >= len(b.in) {
				break
			}
			switch b.op {
			case opBootstrap:
				ev.BootstrapTo(b.out[i], b.in[i], b.mu)
			case opBootstrapNoKS:
				ev.BootstrapNoKeySwitchTo(b.out[i], b.in[i], b.mu)
			case opKeySwitch:
				ev.KeySwitchTo(b.out[i], b.in[i])
			}
		}
		b.done.Done()
	}
	// Set before Close closed jobs, which happens before this read.
	if e.stopHook != nil {
		e.stopHook()
	}
}

// core returns the engine's core, nil for a nil or zero CPU.
func (e *CPU) core() *cpuCore {
	if e == nil {
		return nil
	}
	return e.c
}

// Name describes the engine: "cpu/<plan>/workers=<w>", with
// "/grouping=<g>" for a grouped key.
func (e *CPU) Name() string {
	defer runtime.KeepAlive(e)
	c := e.core()
	if c == nil {
		return "cpu/uninitialized"
	}
	return c.name
}

// String is Name.
func (e *CPU) String() string { return e.Name() }

// Grouping returns the grouping factor of the engine's bootstrapping key
// (tfhe.WithGrouping; KeyGrouping), 0 for an uninitialized engine.
func (e *CPU) Grouping() int {
	defer runtime.KeepAlive(e)
	c := e.core()
	if c == nil {
		return 0
	}
	return max(c.group, 1)
}

// Params returns the parameter set of the engine's cloud key (the zero
// Params for an uninitialized engine).
func (e *CPU) Params() tfhe.Params {
	defer runtime.KeepAlive(e)
	c := e.core()
	if c == nil {
		return tfhe.Params{}
	}
	return c.params
}

// Plan returns the engine's NTT plan.
func (e *CPU) Plan() *smallntt.Plan {
	defer runtime.KeepAlive(e)
	c := e.core()
	if c == nil {
		return nil
	}
	return c.plan
}

// Workers returns the number of worker goroutines.
func (e *CPU) Workers() int {
	defer runtime.KeepAlive(e)
	c := e.core()
	if c == nil {
		return 0
	}
	return c.nw
}

// Bootstrap implements Engine.
func (e *CPU) Bootstrap(out, in []*tfhe.TLWE, mu torus.Torus32) error {
	defer runtime.KeepAlive(e)
	return e.core().run(opBootstrap, out, in, mu)
}

// BootstrapNoKeySwitch implements Engine.
func (e *CPU) BootstrapNoKeySwitch(out, in []*tfhe.TLWE, mu torus.Torus32) error {
	defer runtime.KeepAlive(e)
	return e.core().run(opBootstrapNoKS, out, in, mu)
}

// KeySwitch implements Engine.
func (e *CPU) KeySwitch(out, in []*tfhe.TLWE) error {
	defer runtime.KeepAlive(e)
	return e.core().run(opKeySwitch, out, in, 0)
}

// maxCPUWorkers bounds CPUOptions.Workers: each worker is a goroutine with
// its own scratch (and the job queue holds 4 a worker).
const maxCPUWorkers = 1 << 12

// Close implements Engine: it waits for calls in progress, then stops the
// workers.
func (e *CPU) Close() error {
	defer runtime.KeepAlive(e)
	c := e.core()
	if c == nil {
		return ErrNotInitialized
	}
	err := c.Close()
	e.cleanup.Stop() // closed: nothing left for the collector to do
	return err
}

// Close is CPU.Close, which the cleanup of a dropped handle calls too.
func (e *cpuCore) Close() error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		e.workers.Wait() // a Close racing the first returns once the workers stopped too
		return nil
	}
	e.closed = true
	close(e.jobs)
	e.mu.Unlock()
	e.workers.Wait()
	return nil
}

func (e *cpuCore) run(op opKind, out, in []*tfhe.TLWE, mu torus.Torus32) error {
	if e == nil {
		return ErrNotInitialized
	}
	if e.callHook != nil {
		e.callHook()
	}
	e.mu.RLock()
	defer e.mu.RUnlock()
	if e.closed {
		// Before the arguments: every call to a closed engine says so.
		return ErrClosed
	}
	if err := checkBatch(e.params, op, out, in); err != nil {
		return err
	}
	if len(in) == 0 {
		return nil
	}
	var b *batch
	select {
	case b = <-e.free:
	default:
		b = new(batch)
	}
	b.op, b.out, b.in, b.mu = op, out, in, mu
	b.next.Store(0)
	tickets := min(e.nw, len(in))
	b.done.Add(tickets)
	for range tickets {
		e.jobs <- b
	}
	b.done.Wait()
	b.out, b.in = nil, nil // drop references to the caller's samples
	select {
	case e.free <- b:
	default:
	}
	return nil
}

// checkBatch validates a call's arguments before any work starts.
func checkBatch(p tfhe.Params, op opKind, out, in []*tfhe.TLWE) error {
	if len(out) != len(in) {
		return fmt.Errorf("bootstrap: %d outputs for %d inputs", len(out), len(in))
	}
	inDim, outDim := p.LWEDimension(), p.LWEDimension()
	switch op {
	case opBootstrapNoKS:
		outDim = p.ExtractedLWEDimension()
	case opKeySwitch:
		inDim = p.ExtractedLWEDimension()
	}
	for i := range in {
		if in[i] == nil {
			return fmt.Errorf("bootstrap: input %d is nil", i)
		}
		if out[i] == nil {
			return fmt.Errorf("bootstrap: output %d is nil", i)
		}
		if d := in[i].Dim(); d != inDim {
			return fmt.Errorf("bootstrap: input %d has dimension %d, want %d (%s)", i, d, inDim, p.Name())
		}
		if d := out[i].Dim(); d != outDim {
			return fmt.Errorf("bootstrap: output %d has dimension %d, want %d (%s)", i, d, outDim, p.Name())
		}
	}
	return checkAliases(out, in, op == opBootstrap)
}

// cpuName is the CPU engine's Name: plan, workers, and the key's grouping
// when it is not the plain one.
func cpuName(plan *smallntt.Plan, workers, grouping int) string {
	name := fmt.Sprintf("cpu/%v/workers=%d", plan, workers)
	if grouping > 1 {
		name += fmt.Sprintf("/grouping=%d", grouping)
	}
	return name
}
