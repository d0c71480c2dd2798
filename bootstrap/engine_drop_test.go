package bootstrap

import (
	"errors"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// collected runs the garbage collector until done reports true, for a few
// seconds at most: a cleanup runs some time after the collection that
// finds its object unreachable, and the close it starts runs on a
// goroutine of its own.
func collected(done func() bool) bool {
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
		runtime.GC()
		if done() {
			return true
		}
		time.Sleep(5 * time.Millisecond)
	}
	return done()
}

// stacksIn counts the frames of the function frame names (the end of its
// name as runtime.Stack writes it, e.g. "bootstrap.(*multiCore).worker(")
// in every goroutine's stack.
func stacksIn(frame string) int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return strings.Count(string(buf[:n]), frame)
		}
		buf = make([]byte, 2*len(buf))
	}
}

// TestCPUDropped: a CPU engine dropped without Close, by itself or in the
// Selected that New returns, is closed once the collector finds it
// unreachable: its workers end.
func TestCPUDropped(t *testing.T) {
	kp := testKeys(toyParams, 0)
	n := toyParams.LWEDimension()
	const workers = 4
	for _, selected := range []bool{false, true} {
		var stopped atomic.Int32
		func() {
			var e Engine
			var c *cpuCore
			if selected {
				s, err := New(kp.ck, Options{Use: UseCPU, CPU: CPUOptions{Workers: workers}})
				require.NoError(t, err)
				e, c = s, s.Engine.(*CPU).c
			} else {
				cpu, err := NewCPU(kp.ck, CPUOptions{Workers: workers})
				require.NoError(t, err)
				e, c = cpu, cpu.c
			}
			c.stopHook = func() { stopped.Add(1) }
			require.NoError(t, e.Bootstrap(newTLWEs(8, n), newTLWEs(8, n), mu8))
		}()
		if !collected(func() bool { return stopped.Load() == workers }) {
			t.Errorf("dropped (through a Selected: %v): %d of %d workers stopped", selected, stopped.Load(), workers)
		}
	}
}

// TestMultiDropped: a Multi of CPU engines dropped without Close is closed
// once the collector finds it unreachable: its share workers end, and so do
// its engines' workers.
func TestMultiDropped(t *testing.T) {
	kp := testKeys(toyParams, 0)
	n := toyParams.LWEDimension()
	const k = 3
	const worker = "bootstrap.(*multiCore).worker("
	var stopped atomic.Int32
	func() {
		var engines []Engine
		for range k {
			e, err := NewCPU(kp.ck, CPUOptions{Workers: 1})
			require.NoError(t, err)
			e.c.stopHook = func() { stopped.Add(1) }
			engines = append(engines, e)
		}
		m, err := NewMulti(engines...)
		require.NoError(t, err)
		// Shares for two worker goroutines, which stay idle after.
		require.NoError(t, m.Bootstrap(newTLWEs(3*k, n), newTLWEs(3*k, n), mu8))
		if stacksIn(worker) == 0 {
			t.Fatal("no share worker after a call")
		}
	}()
	if !collected(func() bool { return stopped.Load() == k && stacksIn(worker) == 0 }) {
		t.Errorf("dropped Multi: %d share workers left, %d of %d engine workers stopped", stacksIn(worker), stopped.Load(), k)
	}
}

// TestMultiDroppedClosesEngines: a dropped Multi closes each of its
// engines once, as Close does (these engines, unlike this package's, are
// not closed when collected themselves).
func TestMultiDroppedClosesEngines(t *testing.T) {
	rs, es := recorders(toyParams, 3)
	n := toyParams.LWEDimension()
	func() {
		m, err := newMulti(es)
		require.NoError(t, err)
		require.NoError(t, m.Bootstrap(newTLWEs(9, n), newTLWEs(9, n), 0))
	}()
	closes := func() (c []int) {
		for _, r := range rs {
			r.mu.Lock()
			c = append(c, r.closed)
			r.mu.Unlock()
		}
		return c
	}
	if !collected(func() bool { return allOne(closes()) }) {
		t.Errorf("dropped Multi: engines closed %v times, want once each", closes())
	}
	for range 3 {
		runtime.GC()
	}
	if c := closes(); !allOne(c) {
		t.Errorf("engines closed %v times after more collections, want once each", c)
	}
}

func allOne(c []int) bool {
	for _, n := range c {
		if n != 1 {
			return false
		}
	}
	return true
}

// TestDroppedDuringCall: a call that is its engine's last use keeps the
// engine open to its end: collections made inside the call, before it
// takes the engine's lock (where a collection that found the handle
// unreachable would have its cleanup close the engine under the call), do
// not fail it with ErrClosed; the engine is closed after it.
func TestDroppedDuringCall(t *testing.T) {
	kp := testKeys(toyParams, 0)
	n := toyParams.LWEDimension()
	collect := func() {
		for range 5 {
			runtime.GC()
			time.Sleep(5 * time.Millisecond)
		}
	}
	call := func(t *testing.T, e Engine) {
		t.Helper()
		if err := e.Bootstrap(newTLWEs(2, n), newTLWEs(2, n), mu8); err != nil {
			t.Fatalf("call on a handle dropped during it: %v (ErrClosed: %v)", err, errors.Is(err, ErrClosed))
		}
	}
	t.Run("CPU", func(t *testing.T) {
		var stopped atomic.Int32
		e, err := NewCPU(kp.ck, CPUOptions{Workers: 1})
		require.NoError(t, err)
		e.c.stopHook = func() { stopped.Add(1) }
		e.c.callHook = collect
		call(t, e)
		if !collected(func() bool { return stopped.Load() == 1 }) {
			t.Error("the engine was not closed after the call")
		}
	})
	t.Run("Multi", func(t *testing.T) {
		rs, es := recorders(toyParams, 2)
		m, err := newMulti(es)
		require.NoError(t, err)
		m.c.callHook = collect
		call(t, m)
		if !collected(func() bool { rs[0].mu.Lock(); defer rs[0].mu.Unlock(); return rs[0].closed == 1 }) {
			t.Error("the Multi was not closed after the call")
		}
	})
	t.Run("GPU", func(t *testing.T) {
		e, err := NewGPU(kp.ck, GPUOptions{})
		if errors.Is(err, ErrNoGPU) {
			t.Skipf("no GPU: %v", err)
		}
		require.NoError(t, err)
		c := e.c // not the handle: the call is the handle's last use
		c.callHook = collect
		call(t, e)
		closed := func() bool {
			c.mu.RLock()
			defer c.mu.RUnlock()
			return c.closed
		}
		if !collected(closed) {
			t.Error("the engine was not closed after the call")
		}
	})
}

// TestNewMultiFailedLeavesEngines: a Multi that NewMulti built but whose
// probe failed is not closed when collected: its engines stay the
// caller's, open.
func TestNewMultiFailedLeavesEngines(t *testing.T) {
	rs, es := recorders(toyParams, 2)
	rs[1].fail = errors.New("probe fails")
	if _, err := NewMulti(es...); err == nil {
		t.Fatal("NewMulti succeeded with an engine whose calls fail")
	}
	for range 5 {
		runtime.GC()
		time.Sleep(5 * time.Millisecond)
	}
	for i, r := range rs {
		r.mu.Lock()
		if r.closed != 0 {
			t.Errorf("engine %d closed %d times after NewMulti failed", i, r.closed)
		}
		r.mu.Unlock()
	}
}
