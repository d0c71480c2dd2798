package bootstrap

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goldfhe/goldfhe/tfhe"
	"github.com/goldfhe/goldfhe/torus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMultiMatchesOneEngine: a Multi of three CPU engines of one key gives
// the outputs of one CPU engine, bit for bit, for every operation and for
// batches smaller than, equal to and larger than the engine count, in
// place too.
func TestMultiMatchesOneEngine(t *testing.T) {
	p := toyParams
	kp := testKeys(p, 0)
	one := newCPU(t, kp.ck, CPUOptions{Workers: 1})
	m := newCPUMulti(t, kp.ck, 3, 1)
	enc := newEncryptor(t, kp.sk, 0)
	for _, count := range []int{1, 2, 3, 7, 20} {
		in, want := nandInputs(t, p, enc, count)
		got, ref := newTLWEs(count, p.LWEDimension()), newTLWEs(count, p.LWEDimension())
		require.NoError(t, m.Bootstrap(got, in, mu8))
		require.NoError(t, one.Bootstrap(ref, in, mu8))
		ext, extRef := newTLWEs(count, p.ExtractedLWEDimension()), newTLWEs(count, p.ExtractedLWEDimension())
		require.NoError(t, m.BootstrapNoKeySwitch(ext, in, mu8))
		require.NoError(t, one.BootstrapNoKeySwitch(extRef, in, mu8))
		ks := newTLWEs(count, p.LWEDimension())
		require.NoError(t, m.KeySwitch(ks, ext))
		for i := range got {
			if !equalTLWE(got[i], ref[i]) || !equalTLWE(ext[i], extRef[i]) || !equalTLWE(ks[i], ref[i]) {
				t.Fatalf("batch %d, sample %d: the Multi's outputs differ from one engine's", count, i)
			}
			if kp.sk.DecryptBool(got[i]) != want[i] {
				t.Fatalf("batch %d, sample %d: wrong NAND", count, i)
			}
		}
		if err := m.Bootstrap(in, in, mu8); err != nil { // in place
			t.Fatal(err)
		}
		for i := range in {
			if !equalTLWE(in[i], ref[i]) {
				t.Fatalf("batch %d: in-place output %d differs", count, i)
			}
		}
	}
	if got := m.Grouping(); got != 1 {
		t.Errorf("Grouping() = %d, want 1", got)
	}
	if m.BatchTiers() != nil {
		t.Errorf("BatchTiers() = %v for CPU engines, want nil", m.BatchTiers())
	}
	if name := m.Name(); !strings.HasPrefix(name, "multi(cpu/") || strings.Count(name, " | ") != 2 {
		t.Errorf("Name() = %q", name)
	}
}

// newCPUMulti returns the Multi of k CPU engines of ck with workers each.
func newCPUMulti(t *testing.T, ck *tfhe.CloudKey, k, workers int) *Multi {
	t.Helper()
	var engines []Engine
	for range k {
		e, err := NewCPU(ck, CPUOptions{Workers: workers})
		require.NoError(t, err)
		engines = append(engines, e)
	}
	m, err := NewMulti(engines...)
	require.NoError(t, err)
	t.Cleanup(func() { m.Close() })
	return m
}

// recorder is an Engine that records the batch sizes it is called with and
// copies in to out, for tests of how a Multi splits calls.
type recorder struct {
	p      tfhe.Params
	tiers  []int
	group  int
	fail   error // returned by every call
	panics any   // panicked with by every call when not nil

	mu     sync.Mutex
	sizes  []int
	closed int
}

func (r *recorder) Name() string        { return "recorder" }
func (r *recorder) Params() tfhe.Params { return r.p }
func (r *recorder) Grouping() int       { return r.group }
func (r *recorder) BatchTiers() []int   { return r.tiers }
func (r *recorder) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed++
	return r.fail
}
func (r *recorder) Bootstrap(out, in []*tfhe.TLWE, mu torus.Torus32) error {
	r.mu.Lock()
	r.sizes = append(r.sizes, len(in))
	r.mu.Unlock()
	if r.panics != nil {
		panic(r.panics)
	}
	if r.fail != nil {
		return r.fail
	}
	for i := range in {
		out[i].CopyFrom(in[i])
		out[i].SetB(mu)
	}
	return nil
}
func (r *recorder) BootstrapNoKeySwitch(out, in []*tfhe.TLWE, mu torus.Torus32) error {
	return r.Bootstrap(out, in, mu)
}
func (r *recorder) KeySwitch(out, in []*tfhe.TLWE) error { return r.Bootstrap(out, in, 0) }

func (r *recorder) taken() []int {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.sizes
	r.sizes = nil
	return s
}

// recorderMulti returns k recorders of the toy set and their Multi (without
// the probe), closed when t ends.
func recorderMulti(t *testing.T, k int) ([]*recorder, *Multi) {
	t.Helper()
	rs, es := recorders(toyParams, k)
	m, err := newMulti(es)
	require.NoError(t, err)
	t.Cleanup(func() { m.Close() })
	return rs, m
}

// panicValue is an error an engine panics with.
type panicValue struct{ s string }

func (p panicValue) Error() string { return p.s }

func recorders(p tfhe.Params, k int) ([]*recorder, []Engine) {
	rs := make([]*recorder, k)
	es := make([]Engine, k)
	for i := range rs {
		rs[i] = &recorder{p: p, group: 1}
		es[i] = rs[i]
	}
	return rs, es
}

// TestMultiSplits: shares are contiguous and even for engines of one
// weight; a call of fewer samples than engines uses that many, and
// successive calls start at successive engines.
func TestMultiSplits(t *testing.T) {
	p := toyParams
	rs, es := recorders(p, 3)
	m, err := newMulti(es)
	require.NoError(t, err)
	n := p.LWEDimension()
	for _, count := range []int{10, 1, 1, 1, 2, 300} {
		in, out := newTLWEs(count, n), newTLWEs(count, n)
		for i := range in {
			in[i].Value[0] = torus.Torus32(i)
		}
		require.NoError(t, m.Bootstrap(out, in, 7))
		for i := range out {
			if out[i].Value[0] != torus.Torus32(i) || out[i].B() != 7 {
				t.Fatalf("batch %d: output %d not from its own input", count, i)
			}
		}
		var sizes []int
		for _, r := range rs {
			sizes = append(sizes, r.taken()...)
		}
		slices.Sort(sizes)
		total := 0
		for _, s := range sizes {
			total += s
			if s < count/3 || s > (count+2)/3 {
				t.Errorf("batch %d split into %v, not evenly", count, sizes)
			}
		}
		if total != count || len(sizes) != min(count, 3) {
			t.Errorf("batch %d split into %v", count, sizes)
		}
	}
	// The three one-sample calls went to three different engines.
	for _, count := range []int{1, 1, 1} {
		in, out := newTLWEs(count, n), newTLWEs(count, n)
		require.NoError(t, m.Bootstrap(out, in, 0))
	}
	for i, r := range rs {
		if got := r.taken(); len(got) != 1 {
			t.Errorf("engine %d took %v of three one-sample calls, want one", i, got)
		}
	}
}

// TestMultiErrors: argument errors before any engine is called; an
// engine's error names it and leaves the others' shares written; a panic
// reaches the caller; Close closes every engine once; calls after Close.
func TestMultiErrors(t *testing.T) {
	p := toyParams
	n := p.LWEDimension()
	rs, es := recorders(p, 2)
	m, err := newMulti(es)
	require.NoError(t, err)
	in, out := newTLWEs(4, n), newTLWEs(4, n)
	bad := slices.Clone(in)
	bad[3] = nil
	if err := m.Bootstrap(out, bad, 0); err == nil || !strings.Contains(err.Error(), "input 3 is nil") {
		t.Errorf("nil input: %v", err)
	}
	if err := m.Bootstrap(out[:3], in, 0); err == nil {
		t.Error("3 outputs for 4 inputs: no error")
	}
	wrong := newTLWEs(4, n+1)
	if err := m.Bootstrap(out, wrong, 0); err == nil || !strings.Contains(err.Error(), "dimension") {
		t.Errorf("wrong dimension: %v", err)
	}
	if err := m.KeySwitch(out, in); err == nil {
		t.Error("KeySwitch of dimension-n inputs: no error")
	}
	for i, r := range rs {
		if s := r.taken(); len(s) != 0 {
			t.Errorf("engine %d called (%v) for a bad call", i, s)
		}
	}

	boom := errors.New("device fell off the bus")
	rs[1].fail = boom
	for i := range in {
		in[i].Value[0] = torus.Torus32(100 + i)
		out[i].Value[0] = 0
	}
	err = m.Bootstrap(out, in, 0)
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "engine 1 (recorder)") {
		t.Fatalf("failed engine: %v", err)
	}
	written := 0
	for i := range out {
		if out[i].Value[0] == torus.Torus32(100+i) {
			written++
		}
	}
	if written != 2 {
		t.Errorf("%d outputs written after engine 1 failed, want engine 0's 2", written)
	}
	rs[1].fail = nil
	// A panic of either share, the caller's own or the other goroutine's,
	// reaches the caller: the engine's error value inside, for errors.As.
	for range 2 { // the split starts at engine 0, then at engine 1
		rs[0].panics = panicValue{"told to"}
		func() {
			defer func() {
				p := recover()
				var pv panicValue
				if err, ok := p.(error); !ok || !errors.As(err, &pv) || !strings.Contains(err.Error(), "engine 0 (recorder) panicked") {
					t.Errorf("recovered %v, want an error naming engine 0 around its panicValue", p)
				}
			}()
			m.Bootstrap(out, in, 0)
		}()
	}
	rs[0].panics = "a string"
	func() {
		defer func() {
			if p := recover(); !strings.Contains(fmt.Sprint(p), "panicked: a string") {
				t.Errorf("recovered %v, want the engine's string", p)
			}
		}()
		m.Bootstrap(out, in, 0)
	}()
	// An empty call where engine 0 fails and then engine 1 panics leaves
	// no error behind for the next calls (those where engine 0 has no share
	// would return it).
	rs[0].panics = nil
	rs[0].fail, rs[1].panics = boom, "again"
	func() {
		defer func() { recover() }()
		m.Bootstrap(nil, nil, 0)
	}()
	rs[0].fail, rs[1].panics = nil, nil
	for range 3 {
		require.NoError(t, m.Bootstrap(out[:1], in[:1], 0), "after a panic")
	}

	require.NoError(t, m.Close())
	assert.NoError(t, m.Close(), "second Close")
	for i, r := range rs {
		if r.closed != 1 {
			t.Errorf("engine %d closed %d times", i, r.closed)
		}
	}
	if err := m.Bootstrap(out, bad, 0); !errors.Is(err, ErrClosed) {
		t.Errorf("after Close (bad arguments too): %v, want ErrClosed", err)
	}
	var zero *Multi
	if err := zero.Bootstrap(out, in, 0); !errors.Is(err, ErrNotInitialized) {
		t.Errorf("nil Multi: %v", err)
	}
	if err := (&Multi{}).Close(); !errors.Is(err, ErrNotInitialized) {
		t.Errorf("zero Multi Close: %v", err)
	}
}

// TestNewMultiChecks: the engines must be of one set, grouping and cloud
// key; tiers scale with the engine count only when every engine has them.
func TestNewMultiChecks(t *testing.T) {
	p := toyParams
	if _, err := NewMulti(); err == nil {
		t.Error("no engines: no error")
	}
	if _, err := NewMulti(&recorder{p: p}, nil); err == nil {
		t.Error("a nil engine: no error")
	}
	if _, err := NewMulti(&recorder{}); !errors.Is(err, ErrNotInitialized) {
		t.Errorf("an engine of no parameter set: %v", err)
	}
	other := tfhe.ParamSets()[0]
	if _, err := NewMulti(&recorder{p: p}, &recorder{p: other}); err == nil || !strings.Contains(err.Error(), other.Name()) {
		t.Errorf("two sets: %v", err)
	}
	lit := p.Literal()
	lit.LWEDimension++
	twin := tfhe.MustNewParams(lit) // p's name, another n
	if _, err := NewMulti(&recorder{p: p}, &recorder{p: twin}); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("n=%d", twin.LWEDimension())) {
		t.Errorf("two sets of one name: %v, want them in full", err)
	}
	if _, err := NewMulti(&recorder{p: p, group: 1}, &recorder{p: p, group: 2}); err == nil || !strings.Contains(err.Error(), "grouping") {
		t.Errorf("two groupings: %v", err)
	}
	m, err := newMulti([]Engine{&recorder{p: p, tiers: []int{16, 132}}, &recorder{p: p, tiers: []int{16, 132}}})
	require.NoError(t, err)
	if got := m.BatchTiers(); !slices.Equal(got, []int{32, 264}) {
		t.Errorf("BatchTiers() = %v, want [32 264]", got)
	}
	m, err = newMulti([]Engine{&recorder{p: p, tiers: []int{16, 132}}, &recorder{p: p, tiers: []int{16}}})
	require.NoError(t, err)
	if got := m.BatchTiers(); got != nil {
		t.Errorf("BatchTiers() of unlike engines = %v, want nil", got)
	}

	// Two cloud keys of one secret key: the probe tells them apart.
	a := testKeys(p, 0)
	b, err := tfhe.GenerateCloudKeyFromSeed(a.sk, seedOf("another cloud key", 0))
	require.NoError(t, err)
	ea := newCPU(t, a.ck, CPUOptions{Workers: 1})
	eb := newCPU(t, b, CPUOptions{Workers: 1})
	if _, err := NewMulti(ea, eb); err == nil || !strings.Contains(err.Error(), "not hold the same cloud key") {
		t.Errorf("two cloud keys: %v", err)
	}
	assert.NoError(t, ea.Bootstrap(nil, nil, 0), "a refused engine was closed")
}

// TestMultiConcurrent: goroutines calling one Multi each get their own
// outputs.
func TestMultiConcurrent(t *testing.T) {
	p := toyParams
	kp := testKeys(p, 0)
	one := newCPU(t, kp.ck, CPUOptions{Workers: 1})
	m := newCPUMulti(t, kp.ck, 2, 2)
	const callers, count = 6, 5
	enc := newEncryptor(t, kp.sk, 1)
	ins := make([][]*tfhe.TLWE, callers)
	refs := make([][]*tfhe.TLWE, callers)
	for c := range ins {
		ins[c], _ = nandInputs(t, p, enc, count)
		refs[c] = newTLWEs(count, p.LWEDimension())
		require.NoError(t, one.Bootstrap(refs[c], ins[c], mu8))
	}
	var wg sync.WaitGroup
	errs := make([]error, callers)
	outs := make([][]*tfhe.TLWE, callers)
	for c := range callers {
		outs[c] = newTLWEs(count, p.LWEDimension())
		wg.Go(func() { errs[c] = m.Bootstrap(outs[c], ins[c], mu8) })
	}
	wg.Wait()
	for c := range callers {
		if errs[c] != nil {
			t.Fatal(errs[c])
		}
		for i := range outs[c] {
			if !equalTLWE(outs[c][i], refs[c][i]) {
				t.Fatalf("caller %d, sample %d: wrong output", c, i)
			}
		}
	}
}

// TestNewGPUsOptions: options NewGPUs refuses before touching a device.
func TestNewGPUsOptions(t *testing.T) {
	ck := testKeys(toyParams, 0).ck
	for _, tc := range []struct {
		devices []int
		opts    GPUOptions
		want    string
	}{
		{[]int{0, 1}, GPUOptions{Device: 1}, "GPUOptions.Device"},
		{[]int{0, -1}, GPUOptions{}, "negative"},
		{[]int{1, 0, 1}, GPUOptions{}, "listed twice"},
		{nil, GPUOptions{Device: 1}, "no device list"},
		{[]int{}, GPUOptions{Device: 1}, "no device list"},
		{nil, GPUOptions{Device: -1}, "Device -1"},
	} {
		if _, err := NewGPUs(ck, tc.devices, tc.opts); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("NewGPUs(%v, %+v) = %v, want an error with %q", tc.devices, tc.opts, err, tc.want)
		}
	}
	// The caller's mistakes are errors for New too, not a reason to take
	// the CPU engine.
	for _, opts := range []Options{
		{Use: UseGPU, Devices: []int{2}, GPU: GPUOptions{Device: 1}},
		{Devices: []int{0, 1}, GPU: GPUOptions{Device: 1}},
		{Devices: []int{0, 0}},
		{Devices: []int{0, -1}},
	} {
		if s, err := New(ck, opts); err == nil || !strings.Contains(err.Error(), "Options.Devices") {
			s.Close()
			t.Errorf("New(%+v): %v", opts, err)
		}
	}
	// A negative device too, which used to fall back to the CPU as if no
	// GPU were there.
	if s, err := New(ck, Options{GPU: GPUOptions{Device: -1}}); err == nil || !strings.Contains(err.Error(), "Device = -1") {
		s.Close()
		t.Errorf("New with GPUOptions.Device -1: %v", err)
	}
}

// TestMultiStartWraps: the split's starting engine comes from a uint32
// call count, which wraps; past 2^31 it used to be a negative int (an index
// out of range) where an int has 32 bits.
func TestMultiStartWraps(t *testing.T) {
	_, es := recorders(toyParams, 3)
	m, err := newMulti(es)
	require.NoError(t, err)
	defer m.Close()
	n := toyParams.LWEDimension()
	for _, start := range []uint32{1 << 31, math.MaxUint32, 0} {
		m.c.start.Store(start)
		in, out := newTLWEs(1, n), newTLWEs(1, n)
		assert.NoErrorf(t, m.Bootstrap(out, in, 7), "call count %d", start)
	}
}

// TestDeviceErrors: NewGPUs names each failed device, and says once what
// every device gave alike.
func TestDeviceErrors(t *testing.T) {
	noDriver := errors.New("no driver")
	err := deviceErrors([]int{0, 1}, []error{noDriver, errors.New("no driver")})
	if got := err.Error(); got != "devices [0 1]: no driver" || !errors.Is(err, noDriver) {
		t.Errorf("alike: %q", got)
	}
	err = deviceErrors([]int{2, 5}, []error{nil, noDriver})
	if got := err.Error(); got != "device 5: no driver" {
		t.Errorf("one failed: %q", got)
	}
	err = deviceErrors([]int{2, 5}, []error{errors.New("a"), errors.New("b")})
	if got := err.Error(); got != "device 2: a\ndevice 5: b" {
		t.Errorf("two unlike: %q", got)
	}
	assert.NoError(t, deviceErrors([]int{0, 1}, []error{nil, nil}), "none failed")
}

// TestMultiAllocs: once its workers are started, calls seldom allocate
// (the engines here allocate nothing): a worker starts only when none is
// back waiting yet, 0 to 7 allocations in 1,000 calls where this was
// written; at most 50 pass. (A goroutine per share, the first form, made
// 3,000.)
func TestMultiAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("-race: allocations are the detector's")
	}
	rs, m := recorderMulti(t, 4)
	n := toyParams.LWEDimension()
	in, out := newTLWEs(64, n), newTLWEs(64, n)
	reset := func() {
		for _, r := range rs {
			r.mu.Lock()
			r.sizes = r.sizes[:0]
			r.mu.Unlock()
		}
	}
	for range 20 {
		m.Bootstrap(out, in, 0)
		reset()
	}
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	const calls = 1000
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range calls {
		require.NoError(t, m.Bootstrap(out, in, 0))
		reset()
	}
	runtime.ReadMemStats(&after)
	if a := after.Mallocs - before.Mallocs; a > calls/20 {
		t.Errorf("%d allocations in %d calls of 64 samples on 4 engines, want at most %d", a, calls, calls/20)
	} else {
		t.Logf("%d allocations in %d calls", a, calls)
	}
}

// TestMultiIdleWorkers: a burst of concurrent calls leaves at most
// maxIdleWorkers idle workers an engine, not one for every share it ran.
func TestMultiIdleWorkers(t *testing.T) {
	_, m := recorderMulti(t, 4)
	before := runtime.NumGoroutine()
	n := toyParams.LWEDimension()
	start := make(chan struct{})
	var wg sync.WaitGroup
	for range 200 {
		wg.Go(func() {
			in, out := newTLWEs(8, n), newTLWEs(8, n)
			<-start
			m.Bootstrap(out, in, 0)
		})
	}
	close(start)
	wg.Wait()
	limit := before + maxIdleWorkers*len(m.c.engines)
	for deadline := time.Now().Add(5 * time.Second); runtime.NumGoroutine() > limit; {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines after the burst, at most %d expected", runtime.NumGoroutine(), limit)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestMultiPanicsBesides: when several engines panic and another fails,
// the panic that reaches the caller is the lowest-index engine's, and it
// names the other panic and the error (which errors.Is finds where the
// panic's value is an error), for calls with samples and empty ones.
func TestMultiPanicsBesides(t *testing.T) {
	rs, m := recorderMulti(t, 3)
	n := toyParams.LWEDimension()
	boom := errors.New("device fell off the bus")
	for _, tc := range []struct {
		name  string
		first any
		count int
	}{
		{"Error", panicValue{"first"}, 9},
		{"String", "first", 9},
		{"ErrorEmptyCall", panicValue{"first"}, 0},
		{"StringEmptyCall", "first", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs[0].panics, rs[1].panics, rs[2].fail = tc.first, "second", boom
			defer func() { rs[0].panics, rs[1].panics, rs[2].fail = nil, nil, nil }()
			var p any
			func() {
				defer func() { p = recover() }()
				m.Bootstrap(newTLWEs(tc.count, n), newTLWEs(tc.count, n), 0)
			}()
			text := fmt.Sprint(p)
			for _, want := range []string{
				"engine 0 (recorder) panicked: first",
				"engine 1 (recorder) panicked too: second",
				"engine 2 (recorder): device fell off the bus",
			} {
				if !strings.Contains(text, want) {
					t.Errorf("the panic does not say %q:\n%s", want, text)
				}
			}
			if err, ok := p.(error); ok {
				var pv panicValue
				if !errors.As(err, &pv) || pv.s != "first" || !errors.Is(err, boom) {
					t.Errorf("the panic %v wraps engine 0's value: %v, engine 2's error: %v", err, errors.As(err, &pv), errors.Is(err, boom))
				}
			} else if _, isErr := tc.first.(error); isErr {
				t.Errorf("engine 0 panicked with an error, the Multi with %T", p)
			}
		})
	}
	for range 3 {
		require.NoError(t, m.Bootstrap(newTLWEs(1, n), newTLWEs(1, n), 0), "after the panics")
	}
}

// TestMultiKeepsNoSamples: after a call whose shares panicked, the pooled
// call state holds none of its samples, errors or panics (the next Get
// most likely returns it: one goroutine, no GC between).
func TestMultiKeepsNoSamples(t *testing.T) {
	rs, m := recorderMulti(t, 2)
	n := toyParams.LWEDimension()
	rs[0].panics, rs[1].panics = "boom", "boom"
	for range 2 {
		func() {
			defer func() { recover() }()
			m.Bootstrap(newTLWEs(4, n), newTLWEs(4, n), 0)
		}()
	}
	c := m.c.calls.Get().(*multiCall)
	for i := range c.tasks {
		if c.tasks[i].in != nil || c.tasks[i].out != nil || c.tasks[i].c != nil ||
			c.panics[i] != nil || c.stacks[i] != nil || c.errs[i] != nil {
			t.Errorf("engine %d's slot of the pooled call kept after a panic", i)
		}
	}
}

// TestMultiWorkersEnd: the goroutines that run shares have ended when
// Close returns.
func TestMultiWorkersEnd(t *testing.T) {
	before := runtime.NumGoroutine()
	_, m := recorderMulti(t, 3)
	n := toyParams.LWEDimension()
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			in, out := newTLWEs(9, n), newTLWEs(9, n)
			for range 10 {
				m.Bootstrap(out, in, 0)
			}
		})
	}
	wg.Wait()
	if m.c.idle.Load() == 0 {
		t.Fatal("no idle worker while the Multi is open")
	}
	require.NoError(t, m.Close())
	// A worker leaves idle before it ends, so none may be counted now.
	if w := m.c.idle.Load(); w > 0 {
		t.Fatalf("%d workers idle after Close", w)
	}
	// A worker whose deferred Done let Close return is still counted by
	// NumGoroutine until its goroutine has returned (a few instructions,
	// but its thread may be descheduled there: 1 to 3 Closes in 2,000
	// under load with the race detector): the count gets a moment to
	// settle. (Earlier tests' goroutines could only lower it.)
	for deadline := time.Now().Add(time.Second); runtime.NumGoroutine() > before; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines after Close, %d before the Multi", runtime.NumGoroutine(), before)
		}
	}
}
