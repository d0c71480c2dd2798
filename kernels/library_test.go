package kernels

import (
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/goldfhe/goldfhe/smallntt"
	"github.com/stretchr/testify/require"
)

func mulRef(a, b uint64) uint64 { return smallntt.Mul(a, b) }

// TestFieldOpsMatchCPU compares every primitive of goldilocks.cuh with the
// CPU (smallntt, and 128-bit remainders for the 192-bit reduction) on all
// pairs of edge values and on random pairs, canonical or not.
func TestFieldOpsMatchCPU(t *testing.T) {
	both(t, func(t *testing.T, e testEnv) {
		rng := rand.New(rand.NewPCG(5, 6))
		var a, b []uint64
		for _, x := range goldilocksEdges {
			for _, y := range goldilocksEdges {
				a, b = append(a, x), append(b, y)
			}
		}
		for i := range 200_000 {
			x, y := rng.Uint64(), rng.Uint64()
			if i%2 == 0 {
				x, y = x%smallntt.P, y%smallntt.P
			}
			a, b = append(a, x), append(b, y)
		}
		n := len(a)
		da, db := devUint64(t, e.c, a, n), devUint64(t, e.c, b, n)
		out := devUint64(t, e.c, nil, FieldOpCount*n)
		require.NoError(t, out.Memset8(0x5A)) // poison: every output must be written
		require.NoError(t, e.l.FieldOps(nil, out, da, db))
		got := toHost(t, out)
		names := [FieldOpCount]string{"add", "sub", "mul", "mul_pow2", "reduce192", "mul_2_32"}
		bad := 0
		for i := range n {
			want := fieldOpsRef(a[i], b[i])
			for k := range FieldOpCount {
				if k < 2 && (a[i] >= smallntt.P || b[i] >= smallntt.P) {
					continue // add and sub take canonical inputs only
				}
				if g := got[k*n+i]; g != want[k] {
					if bad++; bad <= 10 {
						t.Errorf("%s(%#x, %#x) = %#x, want %#x", names[k], a[i], b[i], g, want[k])
					}
				} else if g >= smallntt.P {
					t.Errorf("%s(%#x, %#x) = %#x not canonical", names[k], a[i], b[i], g)
				}
			}
		}
		if bad > 0 {
			t.Fatalf("%d mismatches", bad)
		}
	})
}

// TestMulMatchesSmallntt: one long vector, length not a multiple of the
// block size, operands not canonical.
func TestMulMatchesSmallntt(t *testing.T) {
	both(t, func(t *testing.T, e testEnv) {
		rng := rand.New(rand.NewPCG(7, 8))
		n := 1<<20 + 7
		a, b := randomWords(rng, n, false), randomWords(rng, n, false)
		da, db := devUint64(t, e.c, a, n), devUint64(t, e.c, b, n)
		dst := devUint64(t, e.c, nil, n)
		require.NoError(t, dst.Memset8(0x5A))
		require.NoError(t, e.l.Mul(nil, Vecs{Buf: dst}, Vecs{Buf: da}, Vecs{Buf: db}, n, 1))
		got := toHost(t, dst)
		for i := range got {
			if want := mulRef(a[i], b[i]); got[i] != want {
				t.Fatalf("Mul[%d]: %#x·%#x = %#x, want %#x", i, a[i], b[i], got[i], want)
			}
		}
		// in place: dst = a
		require.NoError(t, e.l.Mul(nil, Vecs{Buf: da}, Vecs{Buf: da}, Vecs{Buf: db}, n, 1))
		if !slices.Equal(toHost(t, da), got) {
			t.Fatal("in-place Mul differs")
		}
	})
}

// TestMulAddBatched: more vectors than gridDim.y allows, padded strides, a
// broadcast operand, on a stream, and in place.
func TestMulAddBatched(t *testing.T) {
	both(t, func(t *testing.T, e testEnv) {
		rng := rand.New(rand.NewPCG(9, 10))
		const n, count = 3, 70_000
		const sAcc, sA, sB = 4, 5, 0
		acc := randomWords(rng, (count-1)*sAcc+n, true)
		a := randomWords(rng, (count-1)*sA+n+2, false) // slack at the end
		b := randomWords(rng, n, false)
		dacc, da, db := devUint64(t, e.c, acc, len(acc)), devUint64(t, e.c, a, len(a)), devUint64(t, e.c, b, len(b))
		s, err := e.c.NewStream()
		require.NoError(t, err)
		defer s.Close()
		require.NoError(t, e.l.MulAdd(s, Vecs{dacc, sAcc}, Vecs{da, sA}, Vecs{db, sB}, n, count))
		require.NoError(t, s.Synchronize())
		want := slices.Clone(acc)
		for v := range count {
			for i := range n {
				p := v*sAcc + i
				want[p] = smallntt.Add(want[p], mulRef(a[v*sA+i], b[v*sB+i]))
			}
		}
		if got := toHost(t, dacc); !slices.Equal(got, want) {
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("MulAdd: element %d = %#x, want %#x", i, got[i], want[i])
				}
			}
		}
		// Mul into the padded layout, then MulAdd in place acc = acc + acc·b
		require.NoError(t, e.l.Mul(nil, Vecs{dacc, sAcc}, Vecs{da, sA}, Vecs{db, sB}, n, count))
		require.NoError(t, e.l.MulAdd(nil, Vecs{dacc, sAcc}, Vecs{dacc, sAcc}, Vecs{db, sB}, n, count))
		got := toHost(t, dacc)
		for v := range count {
			for i := range n {
				p := v*sAcc + i
				x := mulRef(a[v*sA+i], b[i])
				if w := smallntt.Add(x, mulRef(x, b[i])); got[p] != w {
					t.Fatalf("Mul then MulAdd in place: vector %d element %d = %#x, want %#x", v, i, got[p], w)
				}
			}
			if p := v*sAcc + n; p < len(got) && got[p] != want[p] {
				t.Fatalf("padding element %d changed", p)
			}
		}
	})
}

func TestPointwiseArgumentChecks(t *testing.T) {
	both(t, func(t *testing.T, e testEnv) {
		b16 := devUint64(t, e.c, nil, 16)
		b8 := devUint64(t, e.c, nil, 8)
		ok := Vecs{Buf: b16}
		launches := 0
		if e.fake != nil {
			launches = len(e.fake.launches)
		}
		for _, tc := range []struct {
			name           string
			dst, a, b      Vecs
			n, count       int
			wantSubstrings string
		}{
			{"nil buffer", Vecs{}, ok, ok, 4, 1, "dst.Buf is nil"},
			{"negative n", ok, ok, ok, -1, 1, "want ≥ 0"},
			{"negative count", ok, ok, ok, 1, -1, "want ≥ 0"},
			{"n too large for C", ok, ok, ok, min(1<<32, math.MaxInt), 1, "2^32-1"},
			{"negative stride", ok, Vecs{b16, -1}, ok, 4, 2, "a.Stride = -1"},
			{"short operand", ok, ok, Vecs{Buf: b8}, 9, 1, "b holds 8 elements"},
			{"short batch", Vecs{b16, 8}, Vecs{b16, 8}, ok, 8, 3, "need 24"},
			{"overflowing extent", Vecs{b16, min(1<<62, math.MaxInt)}, ok, ok, 1, 4, "need -1"},
			{"overlapping outputs", Vecs{b16, 2}, Vecs{b8, 0}, Vecs{b8, 0}, 4, 2, "output vectors overlap"},
			{"partial alias", Vecs{b16.View(0, 8), 4}, Vecs{b16.View(4, 16), 4}, Vecs{Buf: b8}, 4, 2, "overlaps a"},
			{"alias with other stride", Vecs{b16, 8}, Vecs{b16, 0}, Vecs{Buf: b8}, 8, 2, "overlaps a"},
			{"alias of b", Vecs{b16, 4}, Vecs{Buf: b8}, Vecs{b16.View(1, 16), 4}, 4, 2, "overlaps b"},
		} {
			if tc.name == "n too large for C" && math.MaxInt < maxUint32 {
				continue // a 32-bit int cannot pass 2^32-1
			}
			for _, f := range []func(*Stream, Vecs, Vecs, Vecs, int, int) error{e.l.Mul, e.l.MulAdd} {
				err := f(nil, tc.dst, tc.a, tc.b, tc.n, tc.count)
				require.ErrorIs(t, err, ErrArgument)
				if !strings.Contains(err.Error(), tc.wantSubstrings) {
					t.Errorf("%s: error %q lacks %q", tc.name, err, tc.wantSubstrings)
				}
			}
		}
		// nothing to do: no launch, no error
		require.NoError(t, e.l.Mul(nil, ok, ok, ok, 0, 5))
		require.NoError(t, e.l.Mul(nil, ok, ok, ok, 5, 0))
		// allowed: disjoint views of one buffer, a broadcast input
		require.NoError(t, e.l.Mul(nil, Vecs{b16.View(0, 8), 4}, Vecs{b16.View(8, 16), 4}, Vecs{b8, 0}, 4, 2))
		if e.fake != nil && len(e.fake.launches) != launches+1 {
			t.Errorf("%d launches, want 1", len(e.fake.launches)-launches)
		}
		s, err := e.c.NewStream()
		require.NoError(t, err)
		require.NoError(t, s.Close())
		require.ErrorIs(t, e.l.Mul(s, ok, ok, ok, 4, 1), ErrClosed)
		// FieldOps
		out := devUint64(t, e.c, nil, FieldOpCount*8)
		require.ErrorIs(t, e.l.FieldOps(nil, out, b8, b16), ErrArgument)
		require.ErrorIs(t, e.l.FieldOps(nil, b16, b8, b8), ErrArgument)
		require.ErrorIs(t, e.l.FieldOps(nil, nil, b8, b8), ErrArgument)
		require.ErrorIs(t, e.l.FieldOps(nil, out, out.View(0, 8), b8), ErrArgument)
		require.NoError(t, e.l.FieldOps(nil, out, b8, b8))
	})
}

func TestLaunchGeometry(t *testing.T) {
	g, c, l := newFake(t)
	b := devUint64(t, c, nil, 1<<20)
	k := devUint64(t, c, nil, 10)
	s, err := c.NewStream()
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, l.Mul(nil, Vecs{b, 16}, Vecs{b, 16}, Vecs{k, 0}, 10, 65536))
	require.NoError(t, l.MulAdd(s, Vecs{Buf: b}, Vecs{Buf: b}, Vecs{Buf: b}, 1<<20, 1))
	require.NoError(t, l.FieldOps(s, b.View(0, 6*1000), b.View(6000, 7000), b.View(7000, 8000)))
	want := []fakeLaunch{
		{name: "goldfhe_mul", grid: dim3{1, 65535, 1}, block: dim3{256, 1, 1}},
		{name: "goldfhe_muladd", grid: dim3{4096, 1, 1}, block: dim3{256, 1, 1}, stream: s.h.Load()},
		{name: "goldfhe_field_ops", grid: dim3{4, 1, 1}, block: dim3{256, 1, 1}, stream: s.h.Load()},
	}
	if !slices.Equal(g.launches, want) {
		t.Errorf("launches %+v, want %+v", g.launches, want)
	}
}

// TestBadLaunch: a launch CUDA refuses returns an error naming the kernel,
// and the context stays usable; so does one asking for more dynamic shared
// memory than the function's limit, until the limit is raised (the fake
// refuses it as CUDA does).
func TestBadLaunch(t *testing.T) {
	both(t, func(t *testing.T, e testEnv) {
		f, err := e.l.Function("goldfhe_mul")
		require.NoError(t, err)
		buf := devUint64(t, e.c, []uint64{3, 5}, 2)
		p, err := buf.ptr("test")
		require.NoError(t, err)
		args := &pointwiseArgs{dst: p, a: p, b: p, n: 1, count: 1}
		args.init()
		err = launchPinned(f, dim3{1, 1, 1}, dim3{2048, 1, 1}, 0, args, unsafe.Pointer(&args.params[0]))
		require.ErrorIs(t, err, ErrInvalidValue)
		if !strings.Contains(err.Error(), "kernels: cuLaunchKernel(goldfhe_mul): CUDA_ERROR_INVALID_VALUE") ||
			!strings.Contains(err.Error(), "block 2048×1×1") {
			t.Errorf("error text %q", err)
		}
		t.Log(err)
		// still alive
		require.NoError(t, e.l.Mul(nil, Vecs{Buf: buf}, Vecs{Buf: buf}, Vecs{Buf: buf}, 2, 1))
		require.NoError(t, e.c.Synchronize())
		if got := toHost(t, buf); got[0] != 9 || got[1] != 25 {
			t.Errorf("after a bad launch: %v", got)
		}
		// More dynamic shared memory than the function's limit (48 KiB
		// until raised) is refused, and allowed once raised.
		err = launchPinnedShared(f, dim3{1, 1, 1}, dim3{1, 1, 1}, 64<<10, 0, args, unsafe.Pointer(&args.params[0]))
		require.ErrorIs(t, err, ErrInvalidValue)
		require.NoError(t, f.SetMaxDynamicSharedMemory(64<<10))
		require.NoError(t, launchPinnedShared(f, dim3{1, 1, 1}, dim3{1, 1, 1}, 64<<10, 0, args, unsafe.Pointer(&args.params[0])))
		require.NoError(t, f.SetMaxDynamicSharedMemory(0))
		require.NoError(t, e.c.Synchronize())
		if got := toHost(t, buf); got[0] != 81 || got[1] != 25 {
			t.Errorf("after the launch with 64 KiB of shared memory: %v", got)
		}
		_, err = e.l.Function("nope")
		require.ErrorIs(t, err, ErrArgument)
	})
}

// TestDebugModeReportsFault (fake): in debug mode a kernel fault is
// reported by its launch, naming the kernel, and the context refuses all
// later work with the reason.
func TestDebugModeReportsFault(t *testing.T) {
	g, c, _ := newFake(t)
	m, err := c.LoadModule(fakeImage)
	require.NoError(t, err)
	f, err := m.Function("fault")
	require.NoError(t, err)
	c.SetDebug(true)
	require.NoError(t, c.Err(), "Err before the fault")
	syncs := g.syncs
	err = f.launch(dim3{1, 1, 1}, dim3{1, 1, 1}, 0, 0, nil)
	require.ErrorIs(t, err, ErrLaunchFailed)
	require.ErrorIs(t, c.Err(), ErrLaunchFailed)
	if got := c.Err().Error(); !strings.Contains(got, "CUDA_ERROR_ILLEGAL_ADDRESS") {
		t.Errorf("Err after the fault: %q", got)
	}
	if !strings.Contains(err.Error(), "fault (debug: cuCtxSynchronize after launch): CUDA_ERROR_ILLEGAL_ADDRESS") {
		t.Errorf("error text %q", err)
	}
	if g.syncs != syncs+1 {
		t.Errorf("%d synchronisations", g.syncs-syncs)
	}
	_, err = Alloc[uint64](c, 1)
	require.ErrorIs(t, err, ErrLaunchFailed)
	if !strings.Contains(err.Error(), "kernels: cuMemAlloc_v2: context unusable since fault (debug") {
		t.Errorf("error text %q", err)
	}
}

// TestKernelFault makes a real kernel fault in a child process: the launch
// (in debug mode) reports it, later calls fail with the reason, and the
// process stays up. Excluded from compute-sanitizer runs (-test.skip),
// which would report the deliberate fault.
func TestKernelFault(t *testing.T) {
	if os.Getenv("GOLDFHE_TEST_FAULT_CHILD") == "1" {
		faultChild(t)
		return
	}
	gpuLibrary(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestKernelFault$", "-test.v")
	cmd.Env = append(os.Environ(), "GOLDFHE_TEST_FAULT_CHILD=1")
	out, err := cmd.CombinedOutput()
	t.Logf("child process:\n%s", out)
	if err != nil || !strings.Contains(string(out), "FAULT-REPORTED") {
		t.Fatalf("child: %v", err)
	}
}

func faultChild(t *testing.T) {
	c, l := gpuContext(t), gpuLibrary(t)
	c.SetDebug(true)
	f, err := l.Function("goldfhe_mul")
	require.NoError(t, err)
	args := &pointwiseArgs{dst: 0x100, a: 0x100, b: 0x100, n: 1, count: 1}
	args.init()
	err = launchPinned(f, dim3{1, 1, 1}, dim3{32, 1, 1}, 0, args, unsafe.Pointer(&args.params[0]))
	require.ErrorIs(t, err, ErrLaunchFailed)
	t.Log(err)
	_, err = Alloc[uint64](c, 1)
	require.ErrorIs(t, err, ErrLaunchFailed)
	t.Log(err)
	require.ErrorIs(t, c.Err(), ErrLaunchFailed)
	t.Log("FAULT-REPORTED")
}

func TestFunctionAttributes(t *testing.T) {
	both(t, func(t *testing.T, e testEnv) {
		for _, name := range []string{"goldfhe_mul", "goldfhe_muladd", "goldfhe_field_ops"} {
			f, err := e.l.Function(name)
			require.NoError(t, err)
			a, err := f.Attributes()
			require.NoError(t, err)
			t.Logf("%s on %s: %+v", name, e.c.Device().Name, a)
			if a.LocalBytes != 0 {
				t.Errorf("%s uses %d bytes of local memory per thread", name, a.LocalBytes)
			}
			if a.MaxThreadsPerBlock < threadsPerBlock {
				t.Errorf("%s: at most %d threads per block", name, a.MaxThreadsPerBlock)
			}
		}
		f, err := e.l.Function("goldfhe_mul")
		require.NoError(t, err)
		optin := e.c.Device().SharedPerBlockOptin
		require.NoError(t, f.SetMaxDynamicSharedMemory(optin))
		a, err := f.Attributes()
		require.NoError(t, err)
		if a.MaxDynamicShared != optin {
			t.Errorf("max dynamic shared %d after setting %d", a.MaxDynamicShared, optin)
		}
		require.NoError(t, f.SetMaxDynamicSharedMemory(0))
		require.ErrorIs(t, f.SetMaxDynamicSharedMemory(optin+1), ErrArgument)
		require.NoError(t, f.PreferSharedCarveout(67))
		require.ErrorIs(t, f.PreferSharedCarveout(101), ErrArgument)
		require.ErrorIs(t, f.PreferSharedCarveout(-1), ErrArgument)
		// Occupancy: 256-thread blocks of goldfhe_mul fit several to an SM
		// (a 2048-thread SM holds at most 8), none at 1025 threads, and
		// bad arguments are errors.
		nb, err := f.MaxActiveBlocksPerSM(256, 0)
		require.NoError(t, err)
		if nb < 1 || nb > 8 {
			t.Errorf("MaxActiveBlocksPerSM(256, 0) = %d, want 1 to 8", nb)
		}
		if nb, err := f.MaxActiveBlocksPerSM(256, optin+(1<<10)); err == nil && nb != 0 {
			t.Errorf("MaxActiveBlocksPerSM(256, %d bytes) = %d, want 0 or an error: more shared memory than a block may have", optin+(1<<10), nb)
		}
		_, err = f.MaxActiveBlocksPerSM(0, 0)
		require.ErrorIs(t, err, ErrArgument)
		_, err = f.MaxActiveBlocksPerSM(32, -1)
		require.ErrorIs(t, err, ErrArgument)
	})
}

// TestMulThroughput times Mul and MulAdd with events on the GPU (median of
// 20 after warm-up) and reports the achieved memory bandwidth.
func TestMulThroughput(t *testing.T) {
	if testing.Short() {
		t.Skip("timing: not in -short")
	}
	l := gpuLibrary(t)
	c := l.Context()
	const n, count = 1 << 16, 256 // 16 Mi elements, 128 MiB per operand
	rng := rand.New(rand.NewPCG(11, 12))
	host := randomWords(rng, n*count, true)
	a, b, d := devUint64(t, c, host, n*count), devUint64(t, c, host, n*count), devUint64(t, c, host, n*count)
	start, err := c.NewEvent()
	require.NoError(t, err)
	defer start.Close()
	end, err := c.NewEvent()
	require.NoError(t, err)
	defer end.Close()
	small := devUint64(t, c, host[:256], 256)
	allocs := testing.AllocsPerRun(100, func() {
		require.NoError(t, l.Mul(nil, Vecs{Buf: small}, Vecs{Buf: small}, Vecs{Buf: small}, 256, 1))
	})
	t.Logf("%s: %.0f heap allocations per Library.Mul call", c.Device().Name, allocs)
	for _, k := range []struct {
		name     string
		f        func(*Stream, Vecs, Vecs, Vecs, int, int) error
		accesses int
	}{{"Mul", l.Mul, 3}, {"MulAdd", l.MulAdd, 4}} {
		var times []time.Duration
		for i := range 25 {
			require.NoError(t, start.Record(nil))
			require.NoError(t, k.f(nil, Vecs{d, n}, Vecs{a, n}, Vecs{b, n}, n, count))
			require.NoError(t, end.Record(nil))
			require.NoError(t, end.Synchronize())
			el, err := ElapsedTime(start, end)
			require.NoError(t, err)
			if i >= 5 {
				times = append(times, el)
			}
		}
		sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
		med := times[len(times)/2]
		bytes := float64(k.accesses * 8 * n * count)
		t.Logf("%s: %s %d×%d elements: median %v, %.0f GB/s (%d accesses of 8 B per element)",
			c.Device().Name, k.name, count, n, med, bytes/med.Seconds()/1e9, k.accesses)
	}
}
