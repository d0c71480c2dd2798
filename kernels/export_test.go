package kernels

import (
	"slices"
	"sync"
	"testing"
)

// FakeDriver is this package's fake GPU (fake_test.go, with the
// bootstrapping kernels of bootstrapFakeDriver), exported to the external
// test package kernels_test so that code built on Open — gpuntt and
// bootstrap's GPU engine — runs on it where there is no GPU. Its kernels
// run on the CPU with the references, one launch at a time: slow, so tests
// keep their batches small.
type FakeDriver struct {
	g *fakeGPU

	mu       sync.Mutex
	launches []string
	failAt   map[sym][]failAt // each call's failures to come, in order
	hold     map[sym]fakeHold
	// panicIn counts kernel launches down to one that panics (0: none).
	panicIn int
	// unwaited counts per stream handle the asynchronous copies, sets and
	// launches that succeeded since the stream's last wait
	// (cuStreamSynchronize; cuCtxSynchronize for every stream), and
	// freedBusy the frees made while some stream had any (Unwaited). The
	// fake runs such work at once, so this is what a real GPU might still
	// be running.
	unwaited  map[uintptr]int
	freedBusy int
}

// Unwaited returns how much asynchronous work (copies, sets, launches) the
// streams have that nobody waited for, and how many device or pinned host
// frees were made while some stream had any: on a GPU, memory its stream
// might still be using.
func (f *FakeDriver) Unwaited() (ops, frees int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, n := range f.unwaited {
		ops += n
	}
	return ops, f.freedBusy
}

// track records a driver call that returned r for Unwaited. A wait counts
// whatever it returned (CUDA's waits report the errors of the work they
// waited for); other calls only when they succeeded.
func (f *FakeDriver) track(s sym, a []uintptr, r Result) {
	if r != resultSuccess && s != symStreamSynchronize && s != symCtxSynchronize {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	switch s {
	case symMemcpyHtoDAsync, symMemcpyDtoHAsync, symMemcpyDtoDAsync, symMemsetD8Async, symMemsetD32Async:
		f.unwaited[a[3]]++ // (dst, src or value, count, stream)
	case symLaunchKernel:
		f.unwaited[a[8]]++ // (f, grid×3, block×3, shared, stream, params, extra)
	case symLaunchKernelEx:
		f.unwaited[(*launchConfig)(arg(a, 0)).stream]++
	case symStreamSynchronize:
		delete(f.unwaited, a[0])
	case symCtxSynchronize:
		clear(f.unwaited)
	case symMemFree, symMemFreeHost:
		if len(f.unwaited) > 0 {
			f.freedBusy++
		}
	}
}

// fakeHold: the next call of a symbol waits for release, having closed held.
type fakeHold struct {
	held    chan struct{}
	release chan struct{}
}

// failAt: the call after `after` more calls of a symbol (counted from the
// failure queued before it, if any) fails with code.
type failAt struct {
	after int
	code  Result
}

// FakeOptions shape the fake GPU; zero fields keep the fake's defaults
// (an sm_90 of 132 SMs and 80 GiB).
type FakeOptions struct {
	Memory uint64 // bytes of device memory
	SMs    int    // streaming multiprocessors: fewer make smaller waves
	// Arch is the compute capability whose shared memory, occupancy limits
	// and kernels the fake has: "sm_90" (the default), "sm_80" (an A100),
	// "sm_86" or "sm_89" (RTX 30 / 40 class: 99 KiB a block); before sm_90
	// the fatbin has no cluster or split kernels.
	Arch string
	// Devices is the device count (default 1). The devices are alike and
	// share Memory: what one allocates, the others' MemInfo no longer
	// counts free.
	Devices int
}

// RequireFake64 skips t where the fake driver cannot run (requireFake64).
func RequireFake64(t testing.TB) { t.Helper(); requireFake64(t) }

// UseFakeDriver makes Open and Driver use a new fake GPU until t ends.
// Tests that use it must not run in parallel with tests that open the real
// driver.
func UseFakeDriver(t testing.TB, opts FakeOptions) *FakeDriver {
	t.Helper()
	requireFake64(t)
	g, call := bootstrapFakeDriver(false, nil)
	if opts.Memory > 0 {
		g.total = opts.Memory
	}
	if opts.SMs > 0 {
		g.sms = int32(opts.SMs)
	}
	if opts.Devices > 0 {
		g.devices = int32(opts.Devices)
	}
	if opts.Arch != "" {
		a, ok := fakeArchs[opts.Arch]
		if !ok {
			t.Fatalf("UseFakeDriver: no fake %q", opts.Arch)
		}
		g.arch = a
	}
	f := &FakeDriver{g: g, failAt: map[sym][]failAt{}, hold: map[sym]fakeHold{}, unwaited: map[uintptr]int{}}
	d := &driver{path: "fake", fake: func(s sym, a []uintptr) Result {
		f.mu.Lock()
		if h, ok := f.hold[s]; ok {
			delete(f.hold, s)
			f.mu.Unlock()
			close(h.held)
			<-h.release
			f.mu.Lock()
		}
		if q := f.failAt[s]; len(q) > 0 {
			if fa := q[0]; fa.after == 0 {
				if len(q) == 1 {
					delete(f.failAt, s)
				} else {
					f.failAt[s] = q[1:]
				}
				f.mu.Unlock()
				f.track(s, a, fa.code)
				return fa.code
			}
			q[0].after--
		}
		f.mu.Unlock()
		if s == symLaunchKernel || s == symLaunchKernelEx {
			h := a[0]
			if s == symLaunchKernelEx {
				h = a[1]
			}
			g.mu.Lock()
			name := g.funcs[h]
			g.mu.Unlock()
			f.mu.Lock()
			f.launches = append(f.launches, name)
			boom := false
			if f.panicIn > 0 {
				f.panicIn--
				boom = f.panicIn == 0
			}
			f.mu.Unlock()
			if boom {
				panic(FakePanic(name))
			}
		}
		r := call(s, a)
		f.track(s, a, r)
		return r
	}}
	prev := theDriver
	theDriver = func() (*driver, error) { return d, nil }
	t.Cleanup(func() { theDriver = prev })
	return f
}

// FailAfter makes the call of the driver entry point named call (its ABI
// name, e.g. "cuStreamSynchronize") that follows after more calls of it
// fail with code, doing nothing. While a failure FailAfter set for call is
// still to come, another one queues behind it: its after counts the calls
// following that failure (0: the very next one fails too).
func (f *FakeDriver) FailAfter(t testing.TB, call string, after int, code int32) {
	t.Helper()
	i := slices.Index(symNames[:], call)
	if i < 0 {
		t.Fatalf("FailAfter: the driver binds no %q", call)
	}
	f.mu.Lock()
	f.failAt[sym(i)] = append(f.failAt[sym(i)], failAt{after, Result(code)})
	f.mu.Unlock()
}

// HoldNext makes the next call of the driver entry point named call wait,
// before it does anything, until release is called (at the latest when t
// ends, so that a failing test does not hang); held is closed when that
// call starts waiting.
func (f *FakeDriver) HoldNext(t testing.TB, call string) (held <-chan struct{}, release func()) {
	t.Helper()
	i := slices.Index(symNames[:], call)
	if i < 0 {
		t.Fatalf("HoldNext: the driver binds no %q", call)
	}
	h := fakeHold{held: make(chan struct{}), release: make(chan struct{})}
	f.mu.Lock()
	f.hold[sym(i)] = h
	f.mu.Unlock()
	release = sync.OnceFunc(func() { close(h.release) })
	t.Cleanup(release)
	return h.held, release
}

// FakePanic is the value a launch that PanicAtLaunch picked panics with:
// the kernel's name.
type FakePanic string

// PanicAtLaunch makes the kernel launch after the next after launches
// panic with a FakePanic, launching nothing: a stand-in for a bug in the
// code that drives the GPU, to test what its callers see.
func (f *FakeDriver) PanicAtLaunch(after int) {
	f.mu.Lock()
	f.panicIn = after + 1
	f.mu.Unlock()
}

// Launches returns the names of the kernels launched so far, in order.
func (f *FakeDriver) Launches() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.launches)
}

// Live returns how many device and pinned host allocations are not freed.
func (f *FakeDriver) Live() (device, host int) {
	f.g.mu.Lock()
	defer f.g.mu.Unlock()
	return len(f.g.dev), len(f.g.host)
}

// Contexts returns how many primary contexts are retained and not
// released: one for each engine open on the fake.
func (f *FakeDriver) Contexts() int {
	f.g.mu.Lock()
	defer f.g.mu.Unlock()
	return f.g.retains
}

// ThreadsApart reports whether the fake tells OS threads apart, as CUDA
// does for current contexts (fakeThreads); where it does not, tests of
// what is current on one thread skip.
func ThreadsApart() bool { return fakeThreads }

// PushContext makes h current on the calling OS thread, above whatever
// was (cuCtxPushCurrent), as another CUDA library would: h stands for a
// context of the caller's own, which none of the fake's devices has. The
// caller locks its goroutine to the thread.
func (f *FakeDriver) PushContext(h uintptr) {
	f.g.mu.Lock()
	defer f.g.mu.Unlock()
	tid, st, _ := f.g.current()
	f.g.threads[tid] = append(st, h)
}

// PopContext undoes PushContext and returns the context it took off the
// calling thread (0 if none was current).
func (f *FakeDriver) PopContext() uintptr {
	f.g.mu.Lock()
	defer f.g.mu.Unlock()
	tid, st, h := f.g.current()
	if len(st) > 0 {
		f.g.threads[tid] = st[:len(st)-1]
	}
	return h
}

// CurrentContext returns the context current on the calling OS thread
// (cuCtxGetCurrent; 0: none).
func (f *FakeDriver) CurrentContext() uintptr {
	f.g.mu.Lock()
	defer f.g.mu.Unlock()
	_, _, h := f.g.current()
	return h
}

// ThreadContexts returns the context stacks of the OS threads that have a
// context current, by thread.
func (f *FakeDriver) ThreadContexts() map[int][]uintptr { return f.g.threadsWithContexts() }
