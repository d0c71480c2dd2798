package kernels

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func roundTrip[T Elem](t *testing.T, c *Context, src []T) {
	t.Helper()
	b, err := Alloc[T](c, len(src))
	require.NoError(t, err)
	defer b.Free()
	require.NoError(t, b.CopyFromHost(src))
	got := make([]T, len(src))
	require.NoError(t, b.CopyToHost(got))
	if !slices.Equal(got, src) {
		t.Fatalf("%T round trip differs", src)
	}
}

func TestAllocCopyRoundTrip(t *testing.T) {
	both(t, func(t *testing.T, e testEnv) {
		rng := rand.New(rand.NewPCG(1, 2))
		before := e.c.Stats()
		u64 := make([]uint64, 100_003)
		for i := range u64 {
			u64[i] = rng.Uint64()
		}
		roundTrip(t, e.c, u64)
		roundTrip(t, e.c, []int8{-1, 2, -3})
		roundTrip(t, e.c, []uint32{1, 2, 3, 1 << 31})
		roundTrip(t, e.c, []float32{1.5, -2.25})
		roundTrip(t, e.c, []float64{3.125})

		// device to device, and views
		a := devUint64(t, e.c, u64, len(u64))
		b := devUint64(t, e.c, nil, len(u64))
		require.NoError(t, b.CopyFrom(a))
		if !slices.Equal(toHost(t, b), u64) {
			t.Fatal("CopyFrom differs")
		}
		v := b.View(10, 20)
		if v.Len() != 10 || v.Bytes() != 80 || !v.IsView() || b.IsView() {
			t.Fatalf("view: len %d bytes %d", v.Len(), v.Bytes())
		}
		require.NoError(t, v.CopyFromHost(make([]uint64, 10)))
		want := slices.Clone(u64)
		clear(want[10:20])
		if !slices.Equal(toHost(t, b), want) {
			t.Fatal("write through a view")
		}
		if got := toHost(t, a.View(5, 7)); !slices.Equal(got, u64[5:7]) {
			t.Fatalf("read through a view: %v", got)
		}
		w := v.View(2, 4) // view of a view
		require.NoError(t, w.CopyFrom(a.View(0, 2)))
		if got := toHost(t, b.View(12, 14)); !slices.Equal(got, u64[:2]) {
			t.Fatalf("view of a view: %v", got)
		}
		require.NoError(t, a.Free())
		require.NoError(t, b.Free())
		if after := e.c.Stats(); after != before {
			t.Errorf("stats %+v, want %+v", after, before)
		}
	})
}

func TestMemset(t *testing.T) {
	both(t, func(t *testing.T, e testEnv) {
		b := devUint64(t, e.c, nil, 1001)
		require.NoError(t, b.Memset8(0xAB))
		for _, x := range toHost(t, b) {
			if x != 0xABAB_ABAB_ABAB_ABAB {
				t.Fatalf("Memset8: %#x", x)
			}
		}
		require.NoError(t, b.View(1, 3).Memset32(0x0102_0304))
		got := toHost(t, b)
		if got[0] != 0xABAB_ABAB_ABAB_ABAB || got[1] != 0x0102_0304_0102_0304 || got[2] != got[1] || got[3] != got[0] {
			t.Fatalf("Memset32 on a view: %#x", got[:4])
		}
		s, err := e.c.NewStream()
		require.NoError(t, err)
		defer s.Close()
		require.NoError(t, b.Memset8Async(0, s))
		require.NoError(t, b.View(0, 1).Memset32Async(7, s))
		require.NoError(t, s.Synchronize())
		if got := toHost(t, b)[:2]; got[0] != 7<<32|7 || got[1] != 0 {
			t.Fatalf("async memsets: %#x", got)
		}
		odd, err := Alloc[uint8](e.c, 7)
		require.NoError(t, err)
		defer odd.Free()
		require.ErrorIs(t, odd.Memset32(1), ErrArgument)
		require.ErrorIs(t, odd.View(1, 5).Memset32(1), ErrArgument)
		require.NoError(t, odd.View(1, 5).Memset8(1))
	})
}

func TestAsyncCopiesAndEvents(t *testing.T) {
	both(t, func(t *testing.T, e testEnv) {
		const n = 1 << 20
		before := e.c.Stats()
		in, err := AllocHost[uint64](e.c, n)
		require.NoError(t, err)
		out, err := AllocHost[uint64](e.c, n)
		require.NoError(t, err)
		rng := rand.New(rand.NewPCG(3, 4))
		src := in.Slice()
		for i := range src {
			src[i] = rng.Uint64()
		}
		clear(out.Slice())
		s1, err := e.c.NewStream()
		require.NoError(t, err)
		s2, err := e.c.NewStream()
		require.NoError(t, err)
		start, err := e.c.NewEvent()
		require.NoError(t, err)
		mid, err := e.c.NewEvent()
		require.NoError(t, err)
		end, err := e.c.NewEvent()
		require.NoError(t, err)
		d1 := devUint64(t, e.c, nil, n)
		d2 := devUint64(t, e.c, nil, n)

		require.NoError(t, start.Record(s1))
		require.NoError(t, d1.CopyFromHostAsync(in, s1))
		require.NoError(t, mid.Record(s1))
		require.NoError(t, s2.WaitEvent(mid)) // s2 waits for the upload on s1
		require.NoError(t, d2.CopyFromAsync(d1, s2))
		require.NoError(t, d2.CopyToHostAsync(out, s2))
		require.NoError(t, end.Record(s2))
		require.NoError(t, end.Synchronize())
		done, err := end.Done()
		require.NoError(t, err)
		if !done {
			t.Error("event not done after Synchronize")
		}
		if !slices.Equal(out.Slice(), src) {
			t.Fatal("async round trip differs")
		}
		el, err := ElapsedTime(start, end)
		require.NoError(t, err)
		if el <= 0 || el > 10*time.Second {
			t.Errorf("elapsed %v", el)
		}
		t.Logf("%s: 8 MiB up, device copy, 8 MiB down: %v", e.c.Device().Name, el)

		// default stream (nil) variants
		require.NoError(t, d1.CopyFromHostAsync(out, nil))
		require.NoError(t, d1.CopyToHostAsync(in, nil))
		require.NoError(t, start.Record(nil))
		require.NoError(t, start.Synchronize())

		for _, c := range []interface{ Close() error }{s1, s2, start, mid, end} {
			require.NoError(t, c.Close())
			require.NoError(t, c.Close()) // idempotent
		}
		require.NoError(t, in.Free())
		require.NoError(t, out.Free())
		require.NoError(t, d1.Free())
		require.NoError(t, d2.Free())
		if after := e.c.Stats(); after != before {
			t.Errorf("stats %+v, want %+v", after, before)
		}
	})
}

// TestHostPinnedViews: views of pinned memory copy their part (also views
// of views), share the memory, are not freed alone and die with their
// buffer.
func TestHostPinnedViews(t *testing.T) {
	both(t, func(t *testing.T, e testEnv) {
		const n = 1000
		h, err := AllocHost[uint32](e.c, n)
		require.NoError(t, err)
		all := h.Slice()
		for i := range all {
			all[i] = uint32(i)
		}
		v := h.View(100, 400).View(50, 150) // elements 150 … 249
		if v.Len() != 100 || v.Slice()[0] != 150 || v.Slice()[99] != 249 {
			t.Fatalf("view of a view: len %d, first %d", v.Len(), v.Slice()[0])
		}
		d := devUint32(t, e.c, nil, 100)
		require.NoError(t, d.CopyFromHostAsync(v, nil))
		back := h.View(600, 700)
		require.NoError(t, d.CopyToHostAsync(back, nil))
		require.NoError(t, e.c.Synchronize())
		for i, x := range all[600:700] {
			if x != uint32(150+i) {
				t.Fatalf("element %d after the round trip through views: %d", 600+i, x)
			}
		}
		require.ErrorIs(t, v.Free(), ErrArgument)
		for name, f := range map[string]func(){"lo < 0": func() { h.View(-1, 2) }, "hi > n": func() { h.View(0, n+1) }, "hi < lo": func() { h.View(5, 4) }} {
			func() {
				defer func() {
					if recover() == nil {
						t.Errorf("View %s: no panic", name)
					}
				}()
				f()
			}()
		}
		require.NoError(t, h.Free())
		require.ErrorIs(t, d.CopyFromHostAsync(v, nil), ErrFreed)
	})
}

func TestUseAfterFree(t *testing.T) {
	both(t, func(t *testing.T, e testEnv) {
		b, err := Alloc[uint64](e.c, 16)
		require.NoError(t, err)
		v := b.View(2, 4)
		require.ErrorIs(t, v.Free(), ErrArgument)
		require.NoError(t, b.Free())
		require.ErrorIs(t, b.Free(), ErrFreed)
		require.ErrorIs(t, b.CopyToHost(make([]uint64, 16)), ErrFreed)
		require.ErrorIs(t, b.CopyFromHost(make([]uint64, 16)), ErrFreed)
		require.ErrorIs(t, v.CopyToHost(make([]uint64, 2)), ErrFreed)
		require.ErrorIs(t, b.Memset8(0), ErrFreed)
		other := devUint64(t, e.c, nil, 16)
		require.ErrorIs(t, other.CopyFrom(b), ErrFreed)
		require.ErrorIs(t, e.l.Mul(nil, Vecs{Buf: other}, Vecs{Buf: b}, Vecs{Buf: other}, 16, 1), ErrFreed)
		if err := b.CopyToHost(make([]uint64, 16)); !strings.Contains(err.Error(), "DeviceBuffer.CopyToHost: buffer used after Free") {
			t.Errorf("error text %q", err)
		}

		h, err := AllocHost[uint32](e.c, 4)
		require.NoError(t, err)
		h.Slice()[3] = 9
		require.NoError(t, h.Free())
		require.ErrorIs(t, h.Free(), ErrFreed)
		d32, err := Alloc[uint32](e.c, 4)
		require.NoError(t, err)
		require.ErrorIs(t, d32.CopyFromHostAsync(h, nil), ErrFreed)
		require.NoError(t, d32.Free())
		func() {
			defer func() {
				if recover() == nil {
					t.Error("HostPinned.Slice after Free did not panic")
				}
			}()
			h.Slice()
		}()

		s, err := e.c.NewStream()
		require.NoError(t, err)
		require.NoError(t, s.Close())
		require.ErrorIs(t, s.Synchronize(), ErrClosed)
		require.ErrorIs(t, other.CopyFromAsync(other, s), ErrClosed)
		ev, err := e.c.NewEvent()
		require.NoError(t, err)
		require.NoError(t, ev.Close())
		require.ErrorIs(t, ev.Record(nil), ErrClosed)
		_, err = ElapsedTime(ev, ev)
		require.ErrorIs(t, err, ErrClosed)
	})
}

func TestBufferArgumentChecks(t *testing.T) {
	both(t, func(t *testing.T, e testEnv) {
		for _, n := range []int{0, -1} {
			_, err := Alloc[uint64](e.c, n)
			require.ErrorIs(t, err, ErrArgument)
			_, err = AllocHost[uint64](e.c, n)
			require.ErrorIs(t, err, ErrArgument)
		}
		if math.MaxInt > math.MaxInt64/8 {
			_, err := Alloc[uint64](e.c, min(1<<61, math.MaxInt))
			require.ErrorIs(t, err, ErrArgument) // overflows int64 bytes
		}
		b := devUint64(t, e.c, nil, 8)
		require.ErrorIs(t, b.CopyFromHost(make([]uint64, 7)), ErrArgument)
		require.ErrorIs(t, b.CopyToHost(make([]uint64, 9)), ErrArgument)
		require.ErrorIs(t, b.CopyFrom(devUint64(t, e.c, nil, 4)), ErrArgument)
		for _, bad := range [][2]int{{-1, 2}, {3, 2}, {0, 9}} {
			func() {
				defer func() {
					if recover() == nil {
						t.Errorf("View(%d, %d) of 8 did not panic", bad[0], bad[1])
					}
				}()
				b.View(bad[0], bad[1])
			}()
		}
		if b.View(8, 8).Len() != 0 {
			t.Error("empty view")
		}
		require.NoError(t, b.View(8, 8).CopyFromHost(nil)) // empty copies are no-ops
	})
}

// TestOutOfMemory asks for far more than any GPU has: an error, not a
// crash, and the context stays usable.
func TestOutOfMemory(t *testing.T) {
	both(t, func(t *testing.T, e testEnv) {
		_, err := Alloc[uint64](e.c, min(1<<50, math.MaxInt)) // 8 PiB (16 GiB on a 32-bit platform)
		require.ErrorIs(t, err, ErrOutOfMemory)
		var ce *Error
		if !errors.As(err, &ce) || ce.Call != "cuMemAlloc_v2" || ce.Name != "CUDA_ERROR_OUT_OF_MEMORY" {
			t.Errorf("error %v", err)
		}
		t.Log(err)
		_, err = AllocHost[uint64](e.c, min(1<<50, math.MaxInt))
		assert.Error(t, err, "8 PiB of pinned host memory allocated")
		t.Log(err)
		roundTrip(t, e.c, []uint64{1, 2, 3})
		free, total, err := e.c.MemInfo()
		require.NoError(t, err)
		if free == 0 || free > total {
			t.Errorf("MemInfo: free %d of %d", free, total)
		}
	})
}

// TestConcurrentUse runs independent work from many goroutines at once:
// the context must be current on whichever thread each one runs.
func TestConcurrentUse(t *testing.T) {
	both(t, func(t *testing.T, e testEnv) {
		var wg sync.WaitGroup
		errs := make(chan error, 16)
		for g := range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs <- concurrentWork(e, uint64(g))
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
	})
}

func concurrentWork(e testEnv, seed uint64) error {
	rng := rand.New(rand.NewPCG(seed, 99))
	const n = 4096
	a, b := make([]uint64, n), make([]uint64, n)
	for i := range a {
		a[i], b[i] = rng.Uint64(), rng.Uint64()
	}
	s, err := e.c.NewStream()
	if err != nil {
		return err
	}
	defer s.Close()
	var bufs [3]*DeviceBuffer[uint64]
	for i := range bufs {
		if bufs[i], err = Alloc[uint64](e.c, n); err != nil {
			return err
		}
		defer bufs[i].Free()
	}
	if err := bufs[0].CopyFromHost(a); err != nil {
		return err
	}
	if err := bufs[1].CopyFromHost(b); err != nil {
		return err
	}
	for range 10 {
		if err := e.l.Mul(s, Vecs{Buf: bufs[2]}, Vecs{Buf: bufs[0]}, Vecs{Buf: bufs[1]}, n, 1); err != nil {
			return err
		}
	}
	if err := s.Synchronize(); err != nil {
		return err
	}
	got := make([]uint64, n)
	if err := bufs[2].CopyToHost(got); err != nil {
		return err
	}
	for i := range got {
		if want := mulRef(a[i], b[i]); got[i] != want {
			return errors.New("concurrent Mul: wrong product")
		}
	}
	return nil
}

func TestContextClose(t *testing.T) {
	g, c, _ := newFake(t)
	c2, err := open(c.d, 0)
	require.NoError(t, err)
	if g.retains != 2 {
		t.Errorf("retains %d", g.retains)
	}
	b, err := Alloc[uint64](c2, 4)
	require.NoError(t, err)
	require.NoError(t, c2.Close())
	require.NoError(t, c2.Close())
	if g.retains != 1 {
		t.Errorf("retains %d after Close", g.retains)
	}
	_, err = Alloc[uint64](c2, 4)
	require.ErrorIs(t, err, ErrClosed)
	require.ErrorIs(t, b.CopyToHost(make([]uint64, 4)), ErrClosed)
	require.ErrorIs(t, b.Free(), ErrClosed)
	require.ErrorIs(t, b.Free(), ErrFreed)
	require.ErrorIs(t, c2.Synchronize(), ErrClosed)
	if s := c2.Stats(); s.DeviceBuffers != 0 {
		t.Errorf("stats after Close and Free: %+v", s)
	}
}

func TestDeviceInfo(t *testing.T) {
	_, c, _ := newFake(t)
	i := c.Device()
	if got, want := i.String(), "Fake GPU (sm_90, 132 SMs, 80.0 GiB, L2 50 MiB, smem/block 227 KiB)"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if i.Arch() != "sm_90" || i.SharedPerBlock != 48<<10 || i.WarpSize != 32 || i.MaxThreadsPerBlock != 1024 {
		t.Errorf("%+v", i)
	}
	_, err := open(c.d, 1)
	require.ErrorIs(t, err, ErrNoDevice)
}
