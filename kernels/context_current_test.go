package kernels

import (
	"fmt"
	"maps"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// Tests that every call on a Context leaves the calling OS thread's
// current CUDA context as it found it (package doc, "Threading and
// contexts"): nothing, a context of the caller's, or this one.

// fakeForeign is a context handle of "another CUDA library" on the fake:
// no primary context of the fake's devices has it (0xC0 + 0x100·device).
const fakeForeign uintptr = 0xF0E1D2C0

// lockThread locks the test's goroutine to its OS thread until t ends,
// as a caller that keeps its own context current must.
func lockThread(t *testing.T) {
	runtime.LockOSThread()
	t.Cleanup(runtime.UnlockOSThread) // cleanups run on the test's goroutine
}

// currentContext returns the calling thread's current context
// (cuCtxGetCurrent; 0: none).
func currentContext(t testing.TB, d *driver) uintptr {
	t.Helper()
	var h uintptr
	require.NoError(t, d.err("cuCtxGetCurrent", d.call(symCtxGetCurrent, uintptr(unsafe.Pointer(&h)))))
	return h
}

// pushContext makes h current on the calling thread as another library
// would (cuCtxPushCurrent), until t ends.
func pushContext(t *testing.T, d *driver, h uintptr) {
	t.Helper()
	require.NoError(t, d.err("cuCtxPushCurrent_v2", d.call(symCtxPushCurrent, h)))
	t.Cleanup(func() {
		var popped uintptr
		if err := d.err("cuCtxPopCurrent_v2", d.call(symCtxPopCurrent, uintptr(unsafe.Pointer(&popped)))); err != nil {
			t.Error(err)
		} else if popped != h {
			t.Errorf("popped context %#x at the end, pushed %#x", popped, h)
		}
	})
}

// contextOp is one call on a Context.
type contextOp struct {
	name string
	run  func() error
}

// contextOps are calls through every path that reaches the driver on c:
// Context.do (Synchronize, MemInfo, the copies, frees and stream and event
// calls), Function.launchBy (Library.Mul) and Event.Done's own.
func contextOps(c *Context, l *Library) []contextOp {
	var buf *DeviceBuffer[uint64]
	var s *Stream
	var ev *Event
	return []contextOp{
		{"Synchronize", c.Synchronize},
		{"MemInfo", func() error { _, _, err := c.MemInfo(); return err }},
		{"Alloc", func() (err error) { buf, err = Alloc[uint64](c, 64); return err }},
		{"CopyFromHost", func() error { return buf.CopyFromHost(make([]uint64, 64)) }},
		{"Mul", func() error { v := Vecs{Buf: buf}; return l.Mul(nil, v, v, v, 64, 1) }},
		{"CopyToHost", func() error { return buf.CopyToHost(make([]uint64, 64)) }},
		{"NewStream", func() (err error) { s, err = c.NewStream(); return err }},
		{"NewEvent", func() (err error) { ev, err = c.NewEvent(); return err }},
		{"Event.Record", func() error { return ev.Record(s) }},
		// A real GPU may not have passed the event yet right after Record
		// (it did not in session 43's first run): synchronize first.
		{"Stream.Synchronize", func() error { return s.Synchronize() }},
		{"Event.Done", func() error {
			done, err := ev.Done()
			if err == nil && !done {
				err = fmt.Errorf("event not done after its stream synchronized")
			}
			return err
		}},
		{"Event.Close", func() error { return ev.Close() }},
		{"Stream.Close", func() error { return s.Close() }},
		{"Free", func() error { return buf.Free() }},
	}
}

// TestContextLeavesThreadAsFound: on a locked thread where no context, the
// Context's own or (fake) another library's is current, each call runs in
// the Context's context (fake) and the thread's current context is the
// same after it as before.
func TestContextLeavesThreadAsFound(t *testing.T) {
	both(t, func(t *testing.T, e testEnv) {
		if e.fake != nil && !fakeThreads {
			t.Skip("the fake driver does not tell threads apart here")
		}
		starts := []struct {
			name string
			h    uintptr
		}{{"none", 0}, {"ours", e.c.h}}
		if e.fake != nil {
			starts = append(starts, struct {
				name string
				h    uintptr
			}{"foreign", fakeForeign})
		}
		for _, start := range starts {
			t.Run(start.name, func(t *testing.T) {
				lockThread(t)
				d := e.c.d
				if h := currentContext(t, d); h != 0 {
					t.Fatalf("context %#x current before the test (left by an earlier call?)", h)
				}
				if start.h != 0 {
					pushContext(t, d, start.h)
				}
				for _, op := range contextOps(e.c, e.l) {
					var before map[uintptr]int
					if e.fake != nil {
						before = e.fake.contextCalls()
					}
					require.NoError(t, op.run())
					if h := currentContext(t, d); h != start.h {
						t.Fatalf("%s: context %#x current after the call, %#x before", op.name, h, start.h)
					}
					if e.fake != nil {
						ranIn(t, e.fake, op.name, before, e.c.h)
					}
				}
			})
		}
	})
}

// contextCalls returns how many calls have run in each context.
func (g *fakeGPU) contextCalls() map[uintptr]int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return maps.Clone(g.inContext)
}

// ranIn fails t unless the fake's calls since before all ran in context h
// (and some did).
func ranIn(t *testing.T, g *fakeGPU, what string, before map[uintptr]int, h uintptr) {
	t.Helper()
	g.mu.Lock()
	defer g.mu.Unlock()
	for ctx, n := range g.inContext {
		if ctx != h && n != before[ctx] {
			t.Errorf("%s: %d calls ran in context %#x, not in %#x", what, n-before[ctx], ctx, h)
		}
	}
	if g.inContext[h] == before[h] {
		t.Errorf("%s: no call ran in context %#x", what, h)
	}
}

// TestContextsAlternateOnOneThread (fake): two Contexts of two devices
// used in turn on one locked thread where another library's context is
// current each run their calls in their own context, and leave the other
// library's current after every call.
func TestContextsAlternateOnOneThread(t *testing.T) {
	requireFake64(t)
	if !fakeThreads {
		t.Skip("the fake driver does not tell threads apart here")
	}
	g := newFakeGPU()
	g.devices = 2
	d := &driver{path: "fake", fake: g.call}
	var cs [2]*Context
	var ls [2]*Library
	for i := range cs {
		c, err := open(d, i)
		require.NoError(t, err)
		l, err := c.loadLibrary(fakeImage, "fake")
		require.NoError(t, err)
		t.Cleanup(func() {
			l.Close()
			c.Close()
		})
		cs[i], ls[i] = c, l
	}
	if cs[0].h == cs[1].h {
		t.Fatalf("both devices' primary contexts are %#x", cs[0].h)
	}
	lockThread(t)
	pushContext(t, d, fakeForeign)
	ops := [2][]contextOp{contextOps(cs[0], ls[0]), contextOps(cs[1], ls[1])}
	for i := range ops[0] {
		for dev := range 2 {
			op := ops[dev][i]
			before := g.contextCalls()
			require.NoError(t, op.run())
			what := fmt.Sprintf("device %d: %s", dev, op.name)
			if h := currentContext(t, d); h != fakeForeign {
				t.Fatalf("%s: context %#x current after the call, %#x before", what, h, fakeForeign)
			}
			ranIn(t, g, what, before, cs[dev].h)
		}
	}
}

// TestFailedCallsLeaveThreadAsFound (fake): a call whose driver call fails,
// one that faults in debug mode, one refused by a closed Context and one
// whose push fails leave the other library's context current, and the
// failed push is reported as such.
func TestFailedCallsLeaveThreadAsFound(t *testing.T) {
	g, c, _ := newFake(t)
	if !fakeThreads {
		t.Skip("the fake driver does not tell threads apart here")
	}
	lockThread(t)
	pushContext(t, c.d, fakeForeign)
	after := func(what string) {
		t.Helper()
		if h := currentContext(t, c.d); h != fakeForeign {
			t.Fatalf("%s: context %#x current after the call, %#x before", what, h, fakeForeign)
		}
	}

	g.mu.Lock()
	g.fail[symMemAlloc] = resultOutOfMemory
	g.mu.Unlock()
	_, err := Alloc[uint64](c, 8)
	require.ErrorIs(t, err, ErrOutOfMemory)
	after("failed Alloc")

	g.mu.Lock()
	g.fail[symCtxPushCurrent] = resultInvalidValue
	g.mu.Unlock()
	err = c.Synchronize()
	require.ErrorIs(t, err, ErrInvalidValue)
	if !strings.Contains(err.Error(), "cuCtxPushCurrent_v2") {
		t.Errorf("failed push: %v", err)
	}
	after("failed push")
	require.NoError(t, c.Synchronize()) // a failed push is not sticky

	c2, err := open(c.d, 0)
	require.NoError(t, err)
	require.NoError(t, c2.Close())
	require.ErrorIs(t, c2.Synchronize(), ErrClosed)
	after("closed Context")

	m, err := c.LoadModule(fakeImage)
	require.NoError(t, err)
	f, err := m.Function("fault")
	require.NoError(t, err)
	c.SetDebug(true)
	require.ErrorIs(t, f.launch(dim3{1, 1, 1}, dim3{1, 1, 1}, 0, 0, nil), ErrLaunchFailed)
	after("faulting launch")
	require.ErrorIs(t, c.Synchronize(), ErrLaunchFailed)
	after("call on a faulted Context")
}

// TestFailedPop (fake): a pop that fails with a sticky error leaves the
// Context unusable, its Err naming the pop; one that fails otherwise
// (the driver deinitialised at process exit) is dropped.
func TestFailedPop(t *testing.T) {
	for _, tc := range []struct {
		code   Result
		sticky bool
	}{{resultIllegalAddress, true}, {resultDeinitialized, false}} {
		t.Run(fmt.Sprint(int32(tc.code)), func(t *testing.T) {
			g, c, _ := newFake(t)
			if !fakeThreads {
				t.Skip("the fake driver does not tell threads apart here")
			}
			lockThread(t)
			pushContext(t, c.d, fakeForeign)
			g.mu.Lock()
			g.fail[symCtxPopCurrent] = tc.code
			g.mu.Unlock()
			require.NoError(t, c.Synchronize()) // the call itself succeeded
			// The fake popped nothing: take c off the thread.
			if h := currentContext(t, c.d); h != c.h {
				t.Fatalf("context %#x current after the failed pop, want %#x", h, c.h)
			}
			require.NoError(t, c.d.err("cuCtxPopCurrent_v2", c.d.call(symCtxPopCurrent, 0)))
			if !tc.sticky {
				require.NoError(t, c.Err())
				require.NoError(t, c.Synchronize())
				return
			}
			require.ErrorIs(t, c.Err(), ErrLaunchFailed)
			if got := c.Err().Error(); !strings.Contains(got, "cuCtxPopCurrent_v2: CUDA_ERROR_ILLEGAL_ADDRESS") {
				t.Errorf("Err: %q", got)
			}
			require.ErrorIs(t, c.Synchronize(), ErrLaunchFailed)
		})
	}
}

// TestNoThreadKeepsAContext (fake): after calls from many goroutines, no
// OS thread has a context current: each call took its own off again.
func TestNoThreadKeepsAContext(t *testing.T) {
	g, c, l := newFake(t)
	if !fakeThreads {
		t.Skip("the fake driver does not tell threads apart here")
	}
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			var err error
			for _, op := range contextOps(c, l) {
				if err = op.run(); err != nil {
					break
				}
			}
			errs <- err
		}()
	}
	for range 8 {
		require.NoError(t, <-errs)
	}
	if left := g.threadsWithContexts(); len(left) > 0 {
		t.Errorf("context stacks left on OS threads: %#x", left)
	}
}
