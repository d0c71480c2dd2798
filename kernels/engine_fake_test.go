package kernels_test

// Tests of bootstrap's GPU engine on this package's fake GPU
// (export_test.go), so that they run where there is no GPU (CI): the
// engine's Go side — the kernels it picks per pass, batches split into
// passes over its pipeline slots, the pinned staging, concurrent calls,
// Close, device errors (hardware ones included) — checked bit for bit
// against the CPU engine. The fake runs the kernels with the references on
// the CPU, so the sets are the named sets' shapes with a small LWE
// dimension (the kernels take n at run time; 31 leaves a last key group of
// one bit grouped by 2 and 3) and the fake GPU has 2 SMs, so that a few
// dozen samples fill several waves of the wide kernels. The same tests'
// counterparts on a real GPU are bootstrap's TestGPU*. They live here
// because the fake is this package's test code.

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goldfhe/goldfhe/bootstrap"
	"github.com/goldfhe/goldfhe/gates"
	"github.com/goldfhe/goldfhe/gates/circuits"
	"github.com/goldfhe/goldfhe/kernels"
	"github.com/goldfhe/goldfhe/tfhe"
	"github.com/goldfhe/goldfhe/torus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeSMs is the fake GPU's SM count in these tests: a wave of the flat
// kernel is 6 samples, of the N/8-thread wide kernel 2.
const fakeSMs = 2

var mu8 = torus.Encode(1, 8)

// smallN returns named set p with LWE dimension 31 (insecure, tests only).
func smallN(p tfhe.Params) tfhe.Params {
	lit := p.Literal()
	lit.Name += "-n31"
	lit.LWEDimension = 31
	lit.Note = "insecure, tests only"
	return tfhe.MustNewParams(lit)
}

type fakeKeys struct {
	p  tfhe.Params
	sk *tfhe.SecretKey
	ck *tfhe.CloudKey
}

func newFakeKeys(t testing.TB, p tfhe.Params, grouping int) fakeKeys {
	t.Helper()
	seed := func(what string) [torus.SeedSize]byte {
		return torus.DeriveSeed([torus.SeedSize]byte{}, "kernels-fake-engine/"+p.Name()+"/"+what, uint64(grouping))
	}
	sk, err := tfhe.GenerateSecretKeyFromSeed(p, seed("sk"))
	require.NoError(t, err)
	ck, err := tfhe.GenerateCloudKeyFromSeed(sk, seed("ck"), tfhe.WithGrouping(grouping))
	require.NoError(t, err)
	return fakeKeys{p, sk, ck}
}

// inputs returns count fresh encryptions of random bits, and the bits.
func (k fakeKeys) inputs(t testing.TB, rng *rand.Rand, count int) ([]*tfhe.TLWE, []bool) {
	t.Helper()
	enc, err := tfhe.NewEncryptorFromSeed(k.sk, torus.DeriveSeed([torus.SeedSize]byte{}, "kernels-fake-engine/enc", rng.Uint64()))
	require.NoError(t, err)
	in, bits := make([]*tfhe.TLWE, count), make([]bool, count)
	for i := range in {
		bits[i] = rng.IntN(2) == 1
		in[i] = enc.EncryptBool(bits[i])
	}
	return in, bits
}

func newSamples(count, dim int) []*tfhe.TLWE {
	s := make([]*tfhe.TLWE, count)
	for i := range s {
		s[i] = tfhe.NewTLWE(dim)
	}
	return s
}

const poison = 0x5A5A5A5A

// poisoned returns count samples whose every word is poison, which no
// computed sample is.
func poisoned(count, dim int) []*tfhe.TLWE {
	s := newSamples(count, dim)
	for _, x := range s {
		for j := range x.Value {
			x.Value[j] = poison
		}
	}
	return s
}

func isPoisoned(x *tfhe.TLWE) bool {
	return !slices.ContainsFunc(x.Value, func(v torus.Torus32) bool { return v != poison })
}

func newFakeGPUEngine(t testing.TB, ck *tfhe.CloudKey, opts bootstrap.GPUOptions) *bootstrap.GPU {
	t.Helper()
	g, err := bootstrap.NewGPU(ck, opts)
	require.NoError(t, err)
	t.Cleanup(func() { g.Close() })
	return g
}

func newCPUEngine(t testing.TB, ck *tfhe.CloudKey) *bootstrap.CPU {
	t.Helper()
	c, err := bootstrap.NewCPU(ck, bootstrap.CPUOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

// sameAs fails t unless got[i] equals want[i] word for word.
func sameAs(t testing.TB, what string, got, want []*tfhe.TLWE) {
	t.Helper()
	for i := range want {
		if !slices.Equal(got[i].Value, want[i].Value) {
			t.Fatalf("%s: sample %d of %d differs", what, i, len(want))
		}
	}
}

// noneLeft fails t if the fake holds device or pinned host allocations.
func noneLeft(t testing.TB, fake *kernels.FakeDriver, when string) {
	t.Helper()
	if dev, host := fake.Live(); dev != 0 || host != 0 {
		t.Errorf("%s: %d device and %d pinned host allocations left", when, dev, host)
	}
}

// cpuBootstrap is the CPU engine's Bootstrap of in.
func cpuBootstrap(t testing.TB, cpu *bootstrap.CPU, in []*tfhe.TLWE) []*tfhe.TLWE {
	t.Helper()
	want := newSamples(len(in), cpu.Params().LWEDimension())
	require.NoError(t, cpu.Bootstrap(want, in, mu8))
	return want
}

// toyParams is a small set of no named set's shape, which the GPU engine
// runs on its step kernels and the butterfly NTT (insecure, tests only).
var toyParams = tfhe.MustNewParams(tfhe.ParamsLiteral{
	Name: "toy", LWEDimension: 40, PolyDegree: 256, GLWEDimension: 2,
	BKLevels: 3, BKBaseLog: 6, KSLevels: 6, KSBaseLog: 2,
	LWEStdDev: 0x1p-20, BKStdDev: 0x1p-28, Note: "insecure, tests only",
})

// TestFakeGPUEngineMatchesCPU: the GPU engine's Bootstrap,
// BootstrapNoKeySwitch and KeySwitch equal the CPU engine's on every
// sample. For the named sets' shapes, plain and grouped by 2 and 3, the
// engine's own choice on batches that run the split and cluster kernels
// (1, 7), the N/8-thread wide kernel with a tail (11) and, grouped by 3,
// the flat kernel (60: flatMinWaves waves of 6 and more); with a plain key
// also the fused kernel and the step kernels (BlindRotationFused,
// BlindRotationUnfused: the butterfly NTT, and without -short in a pass of
// 130 the hybrid); and the toy set, of no named shape, on the step
// kernels.
func TestFakeGPUEngineMatchesCPU(t *testing.T) {
	type run struct {
		p        tfhe.Params
		grouping int
		mode     bootstrap.BlindRotation
	}
	runs := []run{{toyParams, 1, bootstrap.BlindRotationAuto}}
	for _, named := range tfhe.ParamSets() {
		p := smallN(named)
		for _, grouping := range []int{1, 2, 3} {
			runs = append(runs, run{p, grouping, bootstrap.BlindRotationAuto})
		}
		runs = append(runs, run{p, 1, bootstrap.BlindRotationFused}, run{p, 1, bootstrap.BlindRotationUnfused})
	}
	for _, r := range runs {
		t.Run(fmt.Sprintf("%s/g%d/%v", r.p.Name(), r.grouping, r.mode), func(t *testing.T) {
			testFakeGPUEngineMatchesCPU(t, newFakeKeys(t, r.p, r.grouping), r.mode, "")
		})
	}
}

// TestFakeGPUEngineOlderGPUs: the same on the fake as an A100 (sm_80, 163
// KiB of shared memory a block) and as an RTX 30 / 40 class GPU (sm_86,
// 99 KiB a block, 48 warps an SM), which have no cluster or split kernels
// and fewer blocks of the wide kernels per SM: the engine's choice among
// the kernels that remain, for each named set's shape plain and grouped.
func TestFakeGPUEngineOlderGPUs(t *testing.T) {
	for _, arch := range []string{"sm_80", "sm_86"} {
		for _, named := range tfhe.ParamSets() {
			p := smallN(named)
			for _, grouping := range []int{1, 2, 3} {
				t.Run(fmt.Sprintf("%s/%s/g%d", arch, p.Name(), grouping), func(t *testing.T) {
					testFakeGPUEngineMatchesCPU(t, newFakeKeys(t, p, grouping), bootstrap.BlindRotationAuto, arch)
				})
			}
		}
	}
}

func testFakeGPUEngineMatchesCPU(t *testing.T, k fakeKeys, mode bootstrap.BlindRotation, arch string) {
	fake := kernels.UseFakeDriver(t, kernels.FakeOptions{SMs: fakeSMs, Arch: arch})
	g := newFakeGPUEngine(t, k.ck, bootstrap.GPUOptions{BlindRotation: mode})
	cpu := newCPUEngine(t, k.ck)
	t.Log(g.Name())
	want := map[bootstrap.BlindRotation]string{bootstrap.BlindRotationAuto: "/wide", bootstrap.BlindRotationFused: "/fused/",
		bootstrap.BlindRotationUnfused: "+butterfly<"}[mode]
	if k.p.Name() == toyParams.Name() {
		want = "/butterfly" // the step kernels
	}
	if !strings.HasPrefix(g.Name(), "gpu/Fake GPU/") || !strings.Contains(g.Name(), want) {
		t.Fatalf("engine %s: want %q in its name", g.Name(), want)
	}
	if arch != "" && arch != "sm_90" && (strings.Contains(g.Name(), "split") || strings.Contains(g.Name(), "cluster")) {
		t.Fatalf("engine %s on %s, which has no clusters", g.Name(), arch)
	}
	n, kn := k.p.LWEDimension(), k.p.ExtractedLWEDimension()
	rng := rand.New(rand.NewPCG(uint64(k.ck.Grouping()), 7))
	batches := []int{1, 7, 11}
	if k.ck.Grouping() == 3 && strings.Contains(g.Name(), "+f256>=") {
		batches = append(batches, 60)
	}
	if mode == bootstrap.BlindRotationUnfused && !testing.Short() {
		batches = append(batches, 130) // a pass on the hybrid NTT (SmallPassSamples)
	}
	launched := map[string]bool{}
	for _, count := range batches {
		in, bits := k.inputs(t, rng, count)
		before := len(fake.Launches())
		out, ext, ks := poisoned(count, n), poisoned(count, kn), poisoned(count, n)
		require.NoError(t, g.Bootstrap(out, in, mu8))
		require.NoError(t, g.BootstrapNoKeySwitch(ext, in, mu8))
		require.NoError(t, g.KeySwitch(ks, ext))
		for _, name := range fake.Launches()[before:] {
			launched[name] = true
		}
		cext, cout := newSamples(count, kn), newSamples(count, n)
		require.NoError(t, cpu.BootstrapNoKeySwitch(cext, in, mu8))
		require.NoError(t, cpu.KeySwitch(cout, cext))
		sameAs(t, fmt.Sprintf("batch %d, BootstrapNoKeySwitch", count), ext, cext)
		sameAs(t, fmt.Sprintf("batch %d, Bootstrap", count), out, cout)
		sameAs(t, fmt.Sprintf("batch %d, KeySwitch", count), ks, cout)
		for i := range out {
			if k.sk.DecryptBool(out[i]) != bits[i] {
				t.Fatalf("batch %d, sample %d decrypts to %v", count, i, !bits[i])
			}
		}
	}
	names := slices.Sorted(func(yield func(string) bool) {
		for name := range launched {
			if !yield(name) {
				return
			}
		}
	})
	t.Logf("kernels launched: %s", strings.Join(names, ", "))
	if k.ck.Grouping() == 3 && slices.Contains(batches, 60) &&
		!slices.ContainsFunc(names, func(s string) bool { return strings.Contains(s, "_f256_g3") }) {
		t.Errorf("60 samples grouped by 3 did not run the flat kernel")
	}
}

// TestFakeGPUEngineSplit: a batch larger than MaxBatch runs in passes over
// the pipeline slots with the same results, in place too; a device too
// small for a default pass lowers MaxBatch (to what half its free memory
// holds); one too small for the keys fails NewGPU with an error wrapping
// kernels.ErrOutOfMemory. Close frees every device and pinned buffer.
func TestFakeGPUEngineSplit(t *testing.T) {
	k := newFakeKeys(t, smallN(tfhe.TFHELib128), 3)
	fake := kernels.UseFakeDriver(t, kernels.FakeOptions{SMs: fakeSMs})
	cpu := newCPUEngine(t, k.ck)
	small, err := bootstrap.NewGPU(k.ck, bootstrap.GPUOptions{MaxBatch: 8})
	require.NoError(t, err)
	if small.MaxBatch() != 8 {
		t.Fatalf("MaxBatch() = %d, want 8", small.MaxBatch())
	}
	rng := rand.New(rand.NewPCG(3, 4))
	in, _ := k.inputs(t, rng, 30)
	want := cpuBootstrap(t, cpu, in)
	out := poisoned(len(in), k.p.LWEDimension())
	require.NoError(t, small.Bootstrap(out, in, mu8))
	sameAs(t, "30 samples in passes of 8", out, want)
	require.NoError(t, small.Bootstrap(in, in, mu8))
	sameAs(t, "in place", in, want)
	require.NoError(t, small.Close())
	noneLeft(t, fake, "after Close")

	// A device of 32 MiB: the bootstrapping key (7.0 MB) and the
	// key-switching table fit, a default pass does not.
	kernels.UseFakeDriver(t, kernels.FakeOptions{SMs: fakeSMs, Memory: 32 << 20})
	g := newFakeGPUEngine(t, k.ck, bootstrap.GPUOptions{})
	if g.MaxBatch() >= bootstrap.DefaultMaxBatch || g.MaxBatch() < 1 {
		t.Errorf("on 32 MiB MaxBatch() = %d, want it below %d", g.MaxBatch(), bootstrap.DefaultMaxBatch)
	}
	t.Logf("on 32 MiB: MaxBatch() = %d", g.MaxBatch())
	in2, _ := k.inputs(t, rng, 9)
	out2 := poisoned(len(in2), k.p.LWEDimension())
	require.NoError(t, g.Bootstrap(out2, in2, mu8))
	sameAs(t, "on 32 MiB", out2, cpuBootstrap(t, cpu, in2))

	// A device of 1 MiB: not even the bootstrapping key fits.
	tiny := kernels.UseFakeDriver(t, kernels.FakeOptions{SMs: fakeSMs, Memory: 1 << 20})
	if _, err := bootstrap.NewGPU(k.ck, bootstrap.GPUOptions{}); !errors.Is(err, kernels.ErrOutOfMemory) {
		t.Errorf("NewGPU on 1 MiB: %v, want an error wrapping kernels.ErrOutOfMemory", err)
	} else {
		t.Logf("NewGPU on 1 MiB: %v", err)
	}
	noneLeft(t, tiny, "after the failed NewGPU")
}

// TestFakeGPUEngineDeviceErrors: a device error in the middle of a call.
// An uncorrectable ECC error, or CUDA_ERROR_UNKNOWN from a GPU that stopped
// answering, leaves the context unusable: the call fails with an error
// wrapping kernels.ErrLaunchFailed that names the code, the passes before
// it keep their outputs (the CPU engine's) and the others stay untouched,
// later calls fail at once without launching anything, and Close works.
// An error CUDA recovers from (a launch asking too much of the device)
// fails that call only: the next call is right.
func TestFakeGPUEngineDeviceErrors(t *testing.T) {
	k := newFakeKeys(t, smallN(tfhe.TFHELib128), 3)
	cpu := newCPUEngine(t, k.ck)
	n := k.p.LWEDimension()
	rng := rand.New(rand.NewPCG(5, 6))
	in, _ := k.inputs(t, rng, 32)
	want := cpuBootstrap(t, cpu, in)
	for _, tc := range []struct {
		call   string
		after  int // calls of it that succeed first
		code   int32
		name   string
		sticky bool
	}{
		{"cuStreamSynchronize", 2, 214, "CUDA_ERROR_ECC_UNCORRECTABLE", true},
		{"cuMemcpyHtoDAsync_v2", 3, 999, "CUDA_ERROR_UNKNOWN", true},
		{"cuLaunchKernel", 2, 701, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := kernels.UseFakeDriver(t, kernels.FakeOptions{SMs: fakeSMs})
			g, err := bootstrap.NewGPU(k.ck, bootstrap.GPUOptions{MaxBatch: 8})
			require.NoError(t, err)
			defer g.Close()
			fake.FailAfter(t, tc.call, tc.after, tc.code)
			out := poisoned(len(in), n)
			err = g.Bootstrap(out, in, mu8)
			if err == nil || !strings.Contains(err.Error(), tc.name) {
				t.Fatalf("the failing call: %v, want an error naming %s", err, tc.name)
			}
			if got := errors.Is(err, kernels.ErrLaunchFailed); got != tc.sticky {
				t.Fatalf("the failing call's error %q wraps kernels.ErrLaunchFailed: %v, want %v", err, got, tc.sticky)
			}
			t.Logf("the failing call: %v", err)
			written := 0
			for written < len(out) && !isPoisoned(out[written]) {
				written++
			}
			for i := written; i < len(out); i++ {
				if !isPoisoned(out[i]) {
					t.Fatalf("output %d written after output %d was not", i, written)
				}
			}
			if written == len(out) {
				t.Fatalf("every output written by a call that failed")
			}
			sameAs(t, "the passes before the error", out[:written], want[:written])
			t.Logf("outputs 0 to %d written, equal to the CPU engine's; the rest untouched", written-1)

			launches := len(fake.Launches())
			again := poisoned(9, n)
			err = g.Bootstrap(again, in[:9], mu8)
			if !tc.sticky {
				require.NoError(t, err, "the call after a recoverable error")
				sameAs(t, "the call after a recoverable error", again, want[:9])
			} else {
				if !errors.Is(err, kernels.ErrLaunchFailed) || !strings.Contains(err.Error(), tc.name) {
					t.Fatalf("a call after the fault: %v", err)
				}
				if !isPoisoned(again[0]) || len(fake.Launches()) != launches {
					t.Fatalf("a call after the fault wrote outputs or launched kernels")
				}
				ks := poisoned(1, n)
				if err := g.KeySwitch(ks, newSamples(1, k.p.ExtractedLWEDimension())); !errors.Is(err, kernels.ErrLaunchFailed) || !isPoisoned(ks[0]) {
					t.Errorf("KeySwitch after the fault: %v", err)
				}
			}
			assert.NoError(t, g.Close(), "Close")
			if err := g.Bootstrap(again, in[:9], mu8); !errors.Is(err, bootstrap.ErrClosed) {
				t.Errorf("Bootstrap after Close: %v", err)
			}
			if err := g.Bootstrap(again[:1], in[:9], mu8); !errors.Is(err, bootstrap.ErrClosed) {
				t.Errorf("Bootstrap after Close, bad arguments: %v, want ErrClosed", err)
			}
			if !tc.sticky {
				noneLeft(t, fake, "after Close")
			}
		})
	}
}

// TestFakeGPUEngineConcurrent: calls from several goroutines (run one
// after another by the engine) give each its CPU-engine outputs; New with
// UseAuto picks the fake GPU and says so.
func TestFakeGPUEngineConcurrent(t *testing.T) {
	k := newFakeKeys(t, smallN(tfhe.TFHELib128), 2)
	kernels.UseFakeDriver(t, kernels.FakeOptions{SMs: fakeSMs})
	s, err := bootstrap.New(k.ck, bootstrap.Options{})
	require.NoError(t, err)
	defer s.Close()
	if !s.OnGPU() || !strings.HasPrefix(s.Reason(), "GPU: Fake GPU") {
		t.Fatalf("New(UseAuto) on the fake GPU: OnGPU %v, %q", s.OnGPU(), s.Reason())
	}
	cpu := newCPUEngine(t, k.ck)
	rng := rand.New(rand.NewPCG(7, 8))
	const callers = 4
	ins := make([][]*tfhe.TLWE, callers)
	outs := make([][]*tfhe.TLWE, callers)
	errs := make([]error, callers)
	for w := range ins {
		ins[w], _ = k.inputs(t, rng, 3+w)
		outs[w] = poisoned(len(ins[w]), k.p.LWEDimension())
	}
	var wg sync.WaitGroup
	for w := range callers {
		wg.Go(func() { errs[w] = s.Bootstrap(outs[w], ins[w], mu8) })
	}
	wg.Wait()
	for w := range callers {
		if errs[w] != nil {
			t.Fatalf("caller %d: %v", w, errs[w])
		}
		sameAs(t, fmt.Sprintf("caller %d", w), outs[w], cpuBootstrap(t, cpu, ins[w]))
	}
}

// TestFakeGPUEngineMergesCalls: small calls that find the GPU busy are
// merged. While a first call holds the pipeline (the fake holds its
// upload), twelve calls wait: Bootstrap of 1 to 6 samples with μ = 1/8,
// two with μ = 1/4, two BootstrapNoKeySwitch and two KeySwitch. Released,
// they run as one batch per kind and μ: every caller's outputs equal the
// CPU engine's, and the kernel launches are exactly those of the first
// call and the four groups run as four calls, fewer than the same calls
// take one after another with NoMerge. Then a device fault in a merged
// batch reaches every caller in it, and Close waits for queued calls.
func TestFakeGPUEngineMergesCalls(t *testing.T) {
	kernels.RequireFake64(t) // the subtests would skip, leaving no launches to compare
	k := newFakeKeys(t, smallN(tfhe.TFHELib128), 3)
	cpu := newCPUEngine(t, k.ck)
	rng := rand.New(rand.NewPCG(9, 10))
	n, ext := k.p.LWEDimension(), k.p.ExtractedLWEDimension()
	mu4 := torus.Encode(1, 4)
	type call struct {
		op      string // B, N or K
		mu      torus.Torus32
		in      []*tfhe.TLWE
		want    []*tfhe.TLWE
		outSize int
	}
	var calls []call
	for i := range 8 {
		in, _ := k.inputs(t, rng, 1+i%6)
		c := call{op: "B", mu: mu8, in: in, want: newSamples(len(in), n), outSize: n}
		if i >= 6 {
			c.mu = mu4
		}
		require.NoError(t, cpu.Bootstrap(c.want, in, c.mu))
		calls = append(calls, c)
	}
	for i := range 2 {
		in, _ := k.inputs(t, rng, 2+i)
		c := call{op: "N", mu: mu8, in: in, want: newSamples(len(in), ext), outSize: ext}
		require.NoError(t, cpu.BootstrapNoKeySwitch(c.want, in, mu8))
		calls = append(calls, c)
	}
	for i := range 2 {
		src, _ := k.inputs(t, rng, 3+i)
		in := newSamples(len(src), ext)
		require.NoError(t, cpu.BootstrapNoKeySwitch(in, src, mu8))
		c := call{op: "K", in: in, want: newSamples(len(in), n), outSize: n}
		require.NoError(t, cpu.KeySwitch(c.want, in))
		calls = append(calls, c)
	}
	do := func(g *bootstrap.GPU, c call, out []*tfhe.TLWE) error {
		switch c.op {
		case "B":
			return g.Bootstrap(out, c.in, c.mu)
		case "N":
			return g.BootstrapNoKeySwitch(out, c.in, c.mu)
		}
		return g.KeySwitch(out, c.in)
	}
	first, _ := k.inputs(t, rng, 3)
	firstWant := cpuBootstrap(t, cpu, first)
	// contended runs the first call, held, then calls, each in a goroutine
	// of its own, once all of them wait (before sets anything up, e.g. a
	// failure), and returns the outputs, the errors and the kernel
	// launches after the release.
	contended := func(t *testing.T, fake *kernels.FakeDriver, g *bootstrap.GPU, noMerge bool, calls []call, before func()) ([][]*tfhe.TLWE, []error, error, int) {
		base := countPipelineWaiters(noMerge) // goroutines of earlier subtests, if any
		held, release := fake.HoldNext(t, "cuMemcpyHtoDAsync_v2")
		var wg sync.WaitGroup
		firstOut := poisoned(len(first), n)
		var firstErr error
		wg.Go(func() { firstErr = catchPanic(func() error { return g.Bootstrap(firstOut, first, mu8) }) })
		<-held
		outs := make([][]*tfhe.TLWE, len(calls))
		errs := make([]error, len(calls))
		for i, c := range calls {
			outs[i] = poisoned(len(c.in), c.outSize)
			wg.Go(func() { errs[i] = catchPanic(func() error { return do(g, c, outs[i]) }) })
		}
		waitForPipeline(t, base+len(calls), noMerge)
		if before != nil {
			before()
		}
		start := len(fake.Launches())
		release()
		wg.Wait()
		if firstErr == nil {
			sameAs(t, "first call", firstOut, firstWant)
		}
		return outs, errs, firstErr, len(fake.Launches()) - start
	}
	launches := map[string]int{}
	for _, noMerge := range []bool{true, false} {
		t.Run(fmt.Sprintf("NoMerge=%v", noMerge), func(t *testing.T) {
			fake := kernels.UseFakeDriver(t, kernels.FakeOptions{SMs: fakeSMs})
			g := newFakeGPUEngine(t, k.ck, bootstrap.GPUOptions{NoMerge: noMerge})
			outs, errs, firstErr, l := contended(t, fake, g, noMerge, calls, nil)
			launches[fmt.Sprint(noMerge)] = l
			require.NoError(t, firstErr)
			for i, c := range calls {
				if errs[i] != nil {
					t.Fatalf("call %d (%s, %d samples): %v", i, c.op, len(c.in), errs[i])
				}
				sameAs(t, fmt.Sprintf("call %d (%s, %d samples)", i, c.op, len(c.in)), outs[i], c.want)
			}
		})
	}
	// The same work as the first call and four calls, one per group.
	t.Run("groups", func(t *testing.T) {
		fake := kernels.UseFakeDriver(t, kernels.FakeOptions{SMs: fakeSMs})
		g := newFakeGPUEngine(t, k.ck, bootstrap.GPUOptions{NoMerge: true})
		start := len(fake.Launches())
		require.NoError(t, g.Bootstrap(poisoned(len(first), n), first, mu8))
		groups := map[string]*call{}
		var order []string
		for _, c := range calls {
			key := fmt.Sprint(c.op, c.mu)
			if groups[key] == nil {
				groups[key] = &call{op: c.op, mu: c.mu, outSize: c.outSize}
				order = append(order, key)
			}
			groups[key].in = append(groups[key].in, c.in...)
		}
		for _, key := range order {
			c := *groups[key]
			require.NoError(t, do(g, c, poisoned(len(c.in), c.outSize)))
		}
		launches["groups"] = len(fake.Launches()) - start
	})
	t.Logf("kernel launches after the first call's release: %d one after another, %d merged, %d for the four groups",
		launches["true"], launches["false"], launches["groups"])
	if launches["false"] != launches["groups"] || launches["false"] >= launches["true"] {
		t.Errorf("merged calls took %d kernel launches, the four groups %d, one after another %d",
			launches["false"], launches["groups"], launches["true"])
	}

	t.Run("fault", func(t *testing.T) {
		// The first call's first synchronisation meets an uncorrectable
		// ECC error; the merged batch after it fails, and each of its
		// callers gets the device fault.
		fake := kernels.UseFakeDriver(t, kernels.FakeOptions{SMs: fakeSMs})
		g := newFakeGPUEngine(t, k.ck, bootstrap.GPUOptions{})
		_, errs, firstErr, _ := contended(t, fake, g, false, calls[:4], func() {
			fake.FailAfter(t, "cuStreamSynchronize", 0, 214) // CUDA_ERROR_ECC_UNCORRECTABLE
		})
		if !errors.Is(firstErr, kernels.ErrLaunchFailed) {
			t.Fatalf("first call: %v, want a device fault", firstErr)
		}
		for i, err := range errs {
			if !errors.Is(err, kernels.ErrLaunchFailed) {
				t.Errorf("queued call %d: %v, want the device fault", i, err)
			}
		}
	})
	t.Run("panic", func(t *testing.T) {
		// A bug that panics while a merged batch runs (here, the fake's
		// first kernel launch of that batch): the caller that ran it
		// panics, every other caller in it gets an error saying so rather
		// than waiting for ever, and the engine goes on working.
		fake := kernels.UseFakeDriver(t, kernels.FakeOptions{SMs: fakeSMs})
		g := newFakeGPUEngine(t, k.ck, bootstrap.GPUOptions{})
		start := len(fake.Launches())
		require.NoError(t, g.Bootstrap(poisoned(len(first), n), first, mu8))
		firstLaunches := len(fake.Launches()) - start
		_, errs, firstErr, _ := contended(t, fake, g, false, calls[:4], func() {
			fake.PanicAtLaunch(firstLaunches)
		})
		require.NoError(t, firstErr, "first call")
		panics := 0
		for i, err := range errs {
			var p panicked
			switch {
			case errors.As(err, &p):
				panics++
				if _, ok := p.value.(kernels.FakePanic); !ok {
					t.Errorf("queued call %d panicked with %v, want the fake's panic", i, p.value)
				}
			case err == nil || !strings.Contains(err.Error(), "a merged batch panicked"):
				t.Errorf("queued call %d: %v, want the merged batch's panic", i, err)
			}
		}
		if panics != 1 {
			t.Errorf("%d queued calls panicked, want the one that ran the merged batch", panics)
		}
		// A lone call that panics leaves the pipeline free too.
		fake.PanicAtLaunch(0)
		err := catchPanic(func() error { return g.Bootstrap(poisoned(len(first), n), first, mu8) })
		if p := (panicked{}); !errors.As(err, &p) {
			t.Errorf("a lone call: %v, want the fake's panic", err)
		}
		// Afterwards calls, alone or merged, run as before.
		again := poisoned(len(first), n)
		require.NoError(t, g.Bootstrap(again, first, mu8))
		sameAs(t, "a call after the panics", again, firstWant)
		outs, errs, firstErr, _ := contended(t, fake, g, false, calls[:4], nil)
		require.NoError(t, errors.Join(append(errs, firstErr)...))
		for i, c := range calls[:4] {
			sameAs(t, fmt.Sprintf("merged call %d after the panics", i), outs[i], c.want)
		}
	})
	t.Run("Close", func(t *testing.T) {
		// Close while calls wait: it waits for them, they run, and calls
		// after it fail with ErrClosed.
		fake := kernels.UseFakeDriver(t, kernels.FakeOptions{SMs: fakeSMs})
		g, err := bootstrap.NewGPU(k.ck, bootstrap.GPUOptions{})
		require.NoError(t, err)
		closed := make(chan error, 1)
		outs, errs, firstErr, _ := contended(t, fake, g, false, calls[:4], func() {
			go func() { closed <- g.Close() }()
			waitForStack(t, 1, "(*gpuCore).Close", "[sync.RWMutex.Lock")
		})
		require.NoError(t, errors.Join(append(errs, firstErr, <-closed)...))
		for i, c := range calls[:4] {
			sameAs(t, fmt.Sprintf("call %d", i), outs[i], c.want)
		}
		if err := g.Bootstrap(poisoned(1, n), first[:1], mu8); !errors.Is(err, bootstrap.ErrClosed) {
			t.Errorf("a call after Close: %v", err)
		}
		noneLeft(t, fake, "after Close")
	})
}

// panicked is the error catchPanic makes of a panic.
type panicked struct{ value any }

func (p panicked) Error() string { return fmt.Sprintf("panic: %v", p.value) }

// catchPanic returns call's error, or a panicked if it panics, so that a
// test's goroutines report a panic rather than end the test binary.
func catchPanic(call func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = panicked{p}
		}
	}()
	return call()
}

// Goroutines waiting for a GPU engine's pipeline, as their stacks show:
// merged calls in mergeCall's select (for their result or the pipeline:
// queued by then), with NoMerge calls sending to the pipeline's semaphore.
func pipelineWait(noMerge bool) (frame, state string) {
	if noMerge {
		return "bootstrap.(*gpuCore).lockPipe", "[chan send"
	}
	return "bootstrap.(*gpuCore).mergeCall", "[select"
}

func countPipelineWaiters(noMerge bool) int { return countStacks(pipelineWait(noMerge)) }

// waitForPipeline waits until want goroutines wait for the pipeline.
func waitForPipeline(t *testing.T, want int, noMerge bool) {
	t.Helper()
	frame, state := pipelineWait(noMerge)
	waitForStack(t, want, frame, state)
}

// countStacks counts the goroutines in state (the start of the bracket of
// their stack's first line, e.g. "[select") with frame in their stacks.
func countStacks(frame, state string) int {
	buf := make([]byte, 1<<22)
	got := 0
	for _, g := range strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
		head, _, _ := strings.Cut(g, "\n")
		if strings.Contains(head, state) && strings.Contains(g, frame) {
			got++
		}
	}
	return got
}

// waitForStack waits until want goroutines are in state with frame.
func waitForStack(t *testing.T, want int, frame, state string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		got := countStacks(frame, state)
		if got >= want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d goroutines in %s with %s after a minute", got, want, state, frame)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestFakeGPUEngineMergeStress: sixteen goroutines make small calls of
// four kinds (Bootstrap with two μ, BootstrapNoKeySwitch, KeySwitch) at
// random on one engine, so that rounds of merged calls meet new calls
// arriving; every output is the CPU engine's. (A request's fields read
// after it was answered, and so after it could be reused, gave about one
// wrong output in seven here once a pause widened that window; under
// -race the read itself is reported.)
func TestFakeGPUEngineMergeStress(t *testing.T) {
	k := newFakeKeys(t, smallN(tfhe.TFHELib128), 3)
	cpu := newCPUEngine(t, k.ck)
	kernels.UseFakeDriver(t, kernels.FakeOptions{SMs: fakeSMs})
	g := newFakeGPUEngine(t, k.ck, bootstrap.GPUOptions{})
	rng := rand.New(rand.NewPCG(13, 14))
	n, ext := k.p.LWEDimension(), k.p.ExtractedLWEDimension()
	type kind struct {
		op       string
		mu       torus.Torus32
		in, want []*tfhe.TLWE
		dim      int
	}
	var kinds []kind
	for _, op := range []string{"B8", "B4", "N", "K"} {
		in, _ := k.inputs(t, rng, 2)
		kd := kind{op: op, mu: mu8, in: in, dim: n, want: newSamples(2, n)}
		var err error
		switch op {
		case "B8":
			err = cpu.Bootstrap(kd.want, in, mu8)
		case "B4":
			kd.mu = torus.Encode(1, 4)
			err = cpu.Bootstrap(kd.want, in, kd.mu)
		case "N":
			kd.dim, kd.want = ext, newSamples(2, ext)
			err = cpu.BootstrapNoKeySwitch(kd.want, in, mu8)
		case "K":
			kd.in = newSamples(2, ext)
			if err = cpu.BootstrapNoKeySwitch(kd.in, in, mu8); err == nil {
				err = cpu.KeySwitch(kd.want, kd.in)
			}
		}
		require.NoError(t, err)
		kinds = append(kinds, kd)
	}
	workers, rounds := 16, 40
	if testing.Short() {
		rounds = 15
	}
	var wg sync.WaitGroup
	errs := make([]error, workers)
	for w := range workers {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 15))
			for round := range rounds {
				kd := kinds[r.IntN(len(kinds))]
				out := poisoned(len(kd.in), kd.dim)
				var err error
				switch kd.op {
				case "B8", "B4":
					err = g.Bootstrap(out, kd.in, kd.mu)
				case "N":
					err = g.BootstrapNoKeySwitch(out, kd.in, kd.mu)
				case "K":
					err = g.KeySwitch(out, kd.in)
				}
				if err == nil {
					for i := range out {
						if !slices.Equal(out[i].Value, kd.want[i].Value) {
							err = fmt.Errorf("sample %d differs from the CPU engine's", i)
							break
						}
					}
				}
				if err != nil {
					errs[w] = fmt.Errorf("worker %d, round %d (%s): %w", w, round, kd.op, err)
					return
				}
			}
		})
	}
	wg.Wait()
	require.NoError(t, errors.Join(errs...))
}

// TestFakeGPUEngineSyncErrorOrder: a call of four passes (MaxBatch 8, 32
// samples) whose k-th pass fails at its stream's wait with an error CUDA
// recovers from: the passes before it are written and bit-exact, no pass
// from the failing one on is written (not even the next, already run), and
// the next call runs whole.
func TestFakeGPUEngineSyncErrorOrder(t *testing.T) {
	k := newFakeKeys(t, smallN(tfhe.TFHELib128), 1)
	n := k.p.LWEDimension()
	in, _ := k.inputs(t, rand.New(rand.NewPCG(5, 6)), 32)
	want := cpuBootstrap(t, newCPUEngine(t, k.ck), in)
	for fail := range 4 {
		t.Run(fmt.Sprintf("pass%d", fail), func(t *testing.T) {
			fake := kernels.UseFakeDriver(t, kernels.FakeOptions{SMs: fakeSMs})
			g := newFakeGPUEngine(t, k.ck, bootstrap.GPUOptions{MaxBatch: 8})
			fake.FailAfter(t, "cuStreamSynchronize", fail, 1) // CUDA_ERROR_INVALID_VALUE: not sticky
			out := poisoned(len(in), n)
			if err := g.Bootstrap(out, in, mu8); err == nil {
				t.Fatalf("pass %d's wait failed, the call did not", fail)
			}
			for p := range 4 {
				if p < fail {
					sameAs(t, fmt.Sprintf("pass %d, before the failure", p), out[8*p:8*p+8], want[8*p:8*p+8])
					continue
				}
				for i, x := range out[8*p : 8*p+8] {
					if !isPoisoned(x) {
						t.Fatalf("pass %d failed, yet pass %d's sample %d was written", fail, p, i)
					}
				}
			}
			again := poisoned(len(in), n)
			require.NoError(t, g.Bootstrap(again, in, mu8), "the call after a recoverable error")
			sameAs(t, "the call after", again, want)
		})
	}
}

// TestFakeGPUEngineFailedEnqueue: a call of several passes over two slots
// (MaxBatch 8, 32 samples) one of whose passes fails to enqueue — a launch
// or its download failing with an error CUDA recovers from, its upload
// already queued — returns with nothing left queued on any stream, so
// that Close frees nothing a stream still uses; every pass before the
// failing one is written and bit-exact (the one still in flight in the
// other slot too, as Engine's doc says), the rest untouched.
func TestFakeGPUEngineFailedEnqueue(t *testing.T) {
	k := newFakeKeys(t, smallN(tfhe.TFHELib128), 3)
	n := k.p.LWEDimension()
	in, _ := k.inputs(t, rand.New(rand.NewPCG(5, 6)), 32)
	want := cpuBootstrap(t, newCPUEngine(t, k.ck), in)
	// failing calls the call with the after-th next call of the entry
	// point named call failing with code, for after = 0, 1, … until the
	// call succeeds, on one engine (each failure is recoverable), and
	// returns how many outputs each failing call wrote (a prefix, checked).
	failing := func(call string, code int32) []int {
		fake := kernels.UseFakeDriver(t, kernels.FakeOptions{SMs: fakeSMs})
		g, err := bootstrap.NewGPU(k.ck, bootstrap.GPUOptions{MaxBatch: 8})
		require.NoError(t, err)
		var counts []int
		for after := 0; ; after++ {
			what := fmt.Sprintf("%s %d failing", call, after)
			fake.FailAfter(t, call, after, code)
			out := poisoned(len(in), n)
			err := g.Bootstrap(out, in, mu8)
			if ops, _ := fake.Unwaited(); ops != 0 {
				t.Errorf("%s: the call (%v) returned with %d copies or launches not waited for", what, err, ops)
			}
			written := 0
			for written < len(out) && !isPoisoned(out[written]) {
				written++
			}
			for i := written; i < len(out); i++ {
				if !isPoisoned(out[i]) {
					t.Fatalf("%s: output %d written after output %d was not", what, i, written)
				}
			}
			sameAs(t, what+": the outputs written", out[:written], want[:written])
			if err == nil {
				if written != len(out) {
					t.Fatalf("a call that succeeded wrote %d of %d outputs", written, len(out))
				}
				break
			}
			if written == len(out) {
				t.Fatalf("%s: every output written by a call that failed (%v)", what, err)
			}
			counts = append(counts, written)
		}
		require.NoError(t, g.Close(), "Close")
		if _, frees := fake.Unwaited(); frees != 0 {
			t.Errorf("%s: %d frees made while a stream had work not waited for", call, frees)
		}
		return counts
	}
	// The download is each pass's last step: when pass p's fails, passes
	// 0 to p-1 are written, so the counts written are the passes'
	// boundaries, rising from 0.
	bounds := failing("cuMemcpyDtoHAsync_v2", 1) // CUDA_ERROR_INVALID_VALUE
	t.Logf("%d passes; outputs written when each one's download fails: %v", len(bounds), bounds)
	if len(bounds) < 3 {
		t.Fatalf("%d passes: too few to test", len(bounds))
	}
	for p, w := range bounds {
		if p == 0 && w != 0 || p > 0 && w <= bounds[p-1] {
			t.Fatalf("pass %d's download failing wrote %d outputs, want more than its predecessor's and 0 for the first (%v)", p, w, bounds)
		}
	}
	// A failing launch (the blind rotation's or the key switching's)
	// writes the passes before its own: a boundary, never fewer than an
	// earlier launch's failure wrote; the last one, every pass but the
	// last.
	counts := failing("cuLaunchKernel", 701) // CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES
	t.Logf("%d launches; outputs written when each one fails: %v", len(counts), counts)
	for a, w := range counts {
		if !slices.Contains(bounds, w) || a > 0 && w < counts[a-1] {
			t.Fatalf("launch %d failing wrote %d outputs, want a pass boundary of %v, no fewer than launch %d's", a, w, bounds, a-1)
		}
	}
	if last := counts[len(counts)-1]; last != bounds[len(bounds)-1] {
		t.Errorf("the last launch failing wrote %d outputs, want %d", last, bounds[len(bounds)-1])
	}
}

// TestFakeGPUEngineDrainFault: a call that fails with an error CUDA
// recovers from, and whose drain then meets a device fault while it waits
// for a pass still in flight, returns an error wrapping
// kernels.ErrLaunchFailed (GPU's doc), not only the first error: the later
// pass abandoned after a failed wait, or the earlier pass finished after a
// failed launch. Nothing is written (the only pass in flight before the
// failure faulted), and the next call fails at once with the fault.
func TestFakeGPUEngineDrainFault(t *testing.T) {
	k := newFakeKeys(t, smallN(tfhe.TFHELib128), 3)
	n := k.p.LWEDimension()
	in, _ := k.inputs(t, rand.New(rand.NewPCG(5, 6)), 32)
	type failure struct {
		call  string
		after int
		code  int32
	}
	for _, tc := range []struct {
		name  string
		fails []failure
	}{
		// Pass 0's wait (before pass 2 is enqueued) fails; the drain
		// abandons pass 1, and that wait faults.
		{"AbandonedPass", []failure{
			{"cuStreamSynchronize", 0, 1},   // CUDA_ERROR_INVALID_VALUE
			{"cuStreamSynchronize", 0, 214}, // CUDA_ERROR_ECC_UNCORRECTABLE
		}},
		// Pass 1's blind rotation fails to launch; the drain finishes
		// pass 0, and that wait faults.
		{"FinishedPass", []failure{
			{"cuLaunchKernel", 2, 701},      // CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES
			{"cuStreamSynchronize", 0, 214}, // CUDA_ERROR_ECC_UNCORRECTABLE
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := kernels.UseFakeDriver(t, kernels.FakeOptions{SMs: fakeSMs})
			g := newFakeGPUEngine(t, k.ck, bootstrap.GPUOptions{MaxBatch: 8})
			for _, f := range tc.fails {
				fake.FailAfter(t, f.call, f.after, f.code)
			}
			out := poisoned(len(in), n)
			err := g.Bootstrap(out, in, mu8)
			if !errors.Is(err, kernels.ErrLaunchFailed) || !strings.Contains(err.Error(), "CUDA_ERROR_ECC_UNCORRECTABLE") {
				t.Fatalf("the call: %v, want an error wrapping kernels.ErrLaunchFailed naming the ECC error", err)
			}
			t.Logf("the call: %v", err)
			for i, x := range out {
				if !isPoisoned(x) {
					t.Fatalf("output %d written", i)
				}
			}
			if err := g.Bootstrap(poisoned(1, n), in[:1], mu8); !errors.Is(err, kernels.ErrLaunchFailed) {
				t.Errorf("the next call: %v, want the fault", err)
			}
		})
	}
}

// TestFakeGPUEngineEmptyCall: a call of no samples returns at once, also
// while another call holds the GPU, and fails like every call once the
// GPU has faulted.
func TestFakeGPUEngineEmptyCall(t *testing.T) {
	k := newFakeKeys(t, smallN(tfhe.TFHELib128), 1)
	n := k.p.LWEDimension()
	in, _ := k.inputs(t, rand.New(rand.NewPCG(7, 8)), 4)
	fake := kernels.UseFakeDriver(t, kernels.FakeOptions{SMs: fakeSMs})
	g := newFakeGPUEngine(t, k.ck, bootstrap.GPUOptions{})
	held, release := fake.HoldNext(t, "cuMemcpyHtoDAsync_v2")
	done := make(chan error, 1)
	go func() { done <- g.Bootstrap(poisoned(len(in), n), in, mu8) }()
	<-held
	if err := g.Bootstrap(nil, nil, mu8); err != nil { // would hang here if it waited for the GPU
		t.Errorf("an empty call while the GPU is busy: %v", err)
	}
	release()
	require.NoError(t, <-done)
	fake.FailAfter(t, "cuStreamSynchronize", 0, 214) // CUDA_ERROR_ECC_UNCORRECTABLE: sticky
	if err := g.Bootstrap(poisoned(len(in), n), in, mu8); !errors.Is(err, kernels.ErrLaunchFailed) {
		t.Fatalf("the faulting call: %v", err)
	}
	if err := g.Bootstrap(nil, nil, mu8); !errors.Is(err, kernels.ErrLaunchFailed) {
		t.Errorf("an empty call after a fault: %v, want the fault", err)
	}
}

// TestFakeGPUEngineMergedKeepsNothing: a merged round whose first group
// (six samples) is larger than its last (one) keeps no caller's samples
// once it is over: the six outputs are collected while the engine lives.
func TestFakeGPUEngineMergedKeepsNothing(t *testing.T) {
	k := newFakeKeys(t, smallN(tfhe.TFHELib128), 1)
	n := k.p.LWEDimension()
	in, _ := k.inputs(t, rand.New(rand.NewPCG(9, 10)), 6)
	fake := kernels.UseFakeDriver(t, kernels.FakeOptions{SMs: fakeSMs})
	g := newFakeGPUEngine(t, k.ck, bootstrap.GPUOptions{})
	var freed atomic.Int64
	held, release := fake.HoldNext(t, "cuMemcpyHtoDAsync_v2")
	done := make(chan error, 3)
	go func() { done <- g.Bootstrap(poisoned(1, n), in[:1], mu8) }()
	<-held
	base := countPipelineWaiters(false)
	func() { // out is not kept beyond this function
		out := poisoned(6, n)
		for _, o := range out {
			runtime.AddCleanup(o, func(int) { freed.Add(1) }, 0)
		}
		go func() { done <- g.Bootstrap(out, in, mu8) }()
	}()
	waitForPipeline(t, base+1, false)
	go func() { done <- g.Bootstrap(poisoned(1, n), in[:1], torus.Encode(1, 4)) }()
	waitForPipeline(t, base+2, false)
	release()
	require.NoError(t, errors.Join(<-done, <-done, <-done))
	deadline := time.Now().Add(10 * time.Second)
	for freed.Load() < 6 && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if got := freed.Load(); got != 6 {
		t.Errorf("%d of the merged call's 6 outputs collected; the engine keeps the others", got)
	}
	runtime.KeepAlive(g)
}

// TestFakeGPUEngineNewFails: a device error while NewGPU uploads its
// tables and keys (the first to the fifth copy) fails it with that error,
// naming the upload; it leaves nothing allocated when the context is still
// usable, and New with UseAuto then builds the CPU engine, its Reason
// naming the error. An uncorrectable ECC error there is reported as a
// device fault, without the frees after it, which would only repeat it
// (the driver reclaims that memory with the context).
func TestFakeGPUEngineNewFails(t *testing.T) {
	k := newFakeKeys(t, smallN(tfhe.TFHELib128), 3)
	for _, tc := range []struct {
		after  int // uploads that succeed first
		code   int32
		name   string
		sticky bool
	}{
		{0, 214, "CUDA_ERROR_ECC_UNCORRECTABLE", true},
		{1, 214, "CUDA_ERROR_ECC_UNCORRECTABLE", true},
		{2, 214, "CUDA_ERROR_ECC_UNCORRECTABLE", true},
		{3, 1, "CUDA_ERROR_INVALID_VALUE", false},
		{4, 1, "CUDA_ERROR_INVALID_VALUE", false},
	} {
		t.Run(fmt.Sprintf("%s/after%d", tc.name, tc.after), func(t *testing.T) {
			fake := kernels.UseFakeDriver(t, kernels.FakeOptions{SMs: fakeSMs})
			fake.FailAfter(t, "cuMemcpyHtoD_v2", tc.after, tc.code)
			g, err := bootstrap.NewGPU(k.ck, bootstrap.GPUOptions{})
			if err == nil {
				g.Close()
				t.Fatal("NewGPU: no error")
			}
			if !strings.Contains(err.Error(), "uploading the") || !strings.Contains(err.Error(), tc.name) {
				t.Errorf("NewGPU: %v, want the upload named with %s", err, tc.name)
			}
			if got := errors.Is(err, kernels.ErrLaunchFailed); got != tc.sticky {
				t.Errorf("NewGPU's error wraps kernels.ErrLaunchFailed: %v, want %v", got, tc.sticky)
			}
			if strings.Contains(err.Error(), "cuMemFree") {
				t.Errorf("NewGPU's error reports frees after the fault, which only repeat it: %v", err)
			}
			t.Logf("NewGPU: %v", err)
			if !tc.sticky {
				noneLeft(t, fake, "after the failed NewGPU")
			}
			fake.FailAfter(t, "cuMemcpyHtoD_v2", tc.after, tc.code)
			s, err := bootstrap.New(k.ck, bootstrap.Options{})
			require.NoError(t, err)
			defer s.Close()
			if s.OnGPU() || !strings.HasPrefix(s.Reason(), "CPU: ") || !strings.Contains(s.Reason(), tc.name) {
				t.Errorf("New(UseAuto): OnGPU %v, reason %q", s.OnGPU(), s.Reason())
			}
		})
	}
}

// TestFakeGPUEngineMulti: NewGPUs over a fake host of two GPUs builds an
// engine per device and splits each call between them; the outputs are
// the CPU engine's, bit for bit, for batches that run the split, wide and
// flat kernels on each device (1, 7, 60 samples: 0/1, 3/4 and 30 a
// device). Its tiers are one engine's doubled; New with Options.Devices
// builds the same and says which devices; a GPU and a CPU engine do not
// make a Multi; Close releases everything.
func TestFakeGPUEngineMulti(t *testing.T) {
	k := newFakeKeys(t, smallN(tfhe.TFHELib128), 3)
	cpu := newCPUEngine(t, k.ck)
	fake := kernels.UseFakeDriver(t, kernels.FakeOptions{SMs: fakeSMs, Devices: 2})
	devs, err := bootstrap.GPUDevices()
	if err != nil || !slices.Equal(devs, []int{0, 1}) {
		t.Fatalf("GPUDevices() = %v, %v; want [0 1]", devs, err)
	}
	m, err := bootstrap.NewGPUs(k.ck, nil, bootstrap.GPUOptions{})
	require.NoError(t, err)
	engines := m.Engines()
	if len(engines) != 2 {
		t.Fatalf("NewGPUs built %d engines on two devices", len(engines))
	}
	for i, e := range engines {
		if g, ok := e.(*bootstrap.GPU); !ok || g.Device().Ordinal != i {
			t.Fatalf("engine %d: %T, not the GPU engine of device %d", i, e, i)
		}
	}
	one := bootstrap.BatchTiers(engines[0])
	want := make([]int, len(one))
	for i, tier := range one {
		want[i] = 2 * tier
	}
	if got := m.BatchTiers(); len(one) == 0 || !slices.Equal(got, want) {
		t.Errorf("BatchTiers() = %v, one engine's %v", got, one)
	}
	if m.Grouping() != 3 {
		t.Errorf("Grouping() = %d, want 3", m.Grouping())
	}
	rng := rand.New(rand.NewPCG(11, 12))
	for _, count := range []int{1, 7, 60} {
		in, _ := k.inputs(t, rng, count)
		out := poisoned(count, k.p.LWEDimension())
		require.NoError(t, m.Bootstrap(out, in, mu8))
		sameAs(t, fmt.Sprintf("Multi, %d samples", count), out, cpuBootstrap(t, cpu, in))
	}
	if _, err := bootstrap.NewMulti(engines[0], cpu); err == nil || !strings.Contains(err.Error(), "1 GPU engines and 1 others") {
		t.Errorf("NewMulti of a GPU and a CPU engine: %v", err)
	}
	require.NoError(t, m.Close())
	noneLeft(t, fake, "after Close")

	s, err := bootstrap.New(k.ck, bootstrap.Options{Devices: devs})
	require.NoError(t, err)
	if !s.OnGPU() || !strings.HasPrefix(s.Reason(), "GPU: 2 devices, N=1024/") || !strings.Contains(s.Reason(), ": 0: Fake GPU") || !strings.Contains(s.Reason(), "; 1: Fake GPU") {
		t.Errorf("New with Devices [0 1]: OnGPU %v, reason %q", s.OnGPU(), s.Reason())
	}
	if _, ok := s.Engine.(*bootstrap.Multi); !ok {
		t.Errorf("New with Devices [0 1] built a %T", s.Engine)
	}
	require.NoError(t, s.Close())
	noneLeft(t, fake, "after the Selected's Close")

	if _, err := bootstrap.NewGPUs(k.ck, []int{0, 5}, bootstrap.GPUOptions{}); !errors.Is(err, bootstrap.ErrNoGPU) || !strings.Contains(err.Error(), "device 5") {
		t.Errorf("NewGPUs on devices 0 and 5 of two: %v, want ErrNoGPU naming device 5", err)
	}
	noneLeft(t, fake, "after NewGPUs failed on one device")
}

// TestFakeGPUEngineLeavesThreadContext: a caller on a locked thread
// where a context of its own is current (another CUDA library's), or
// none, finds the same one current after each call of a GPU engine and of
// a two-device Multi (building it, Bootstrap, BootstrapNoKeySwitch,
// KeySwitch, Close); and no OS thread that the engines' goroutines ran on
// keeps a context current.
func TestFakeGPUEngineLeavesThreadContext(t *testing.T) {
	if !kernels.ThreadsApart() {
		t.Skip("the fake driver does not tell threads apart here")
	}
	k := newFakeKeys(t, toyParams, 1)
	cpu := newCPUEngine(t, k.ck)
	n, kn := k.p.LWEDimension(), k.p.ExtractedLWEDimension()
	in, _ := k.inputs(t, rand.New(rand.NewPCG(3, 4)), 7)
	want := cpuBootstrap(t, cpu, in)
	for _, foreign := range []uintptr{0, 0xF0E1D2C0} {
		t.Run(fmt.Sprintf("current=%#x", foreign), func(t *testing.T) {
			fake := kernels.UseFakeDriver(t, kernels.FakeOptions{SMs: fakeSMs, Devices: 2})
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			if foreign != 0 {
				fake.PushContext(foreign)
				defer func() {
					if h := fake.PopContext(); h != foreign {
						t.Errorf("context %#x current at the end, %#x pushed", h, foreign)
					}
				}()
			}
			check := func(what string, err error) {
				t.Helper()
				require.NoErrorf(t, err, "%s", what)
				if h := fake.CurrentContext(); h != foreign {
					t.Fatalf("after %s: context %#x current on the caller's thread, %#x before", what, h, foreign)
				}
			}

			g, err := bootstrap.NewGPU(k.ck, bootstrap.GPUOptions{})
			check("NewGPU", err)
			out, ext, ks := poisoned(len(in), n), poisoned(len(in), kn), poisoned(len(in), n)
			check("Bootstrap", g.Bootstrap(out, in, mu8))
			check("BootstrapNoKeySwitch", g.BootstrapNoKeySwitch(ext, in, mu8))
			check("KeySwitch", g.KeySwitch(ks, ext))
			sameAs(t, "GPU Bootstrap", out, want)
			sameAs(t, "GPU KeySwitch", ks, want)
			check("GPU.Close", g.Close())

			m, err := bootstrap.NewGPUs(k.ck, nil, bootstrap.GPUOptions{})
			check("NewGPUs", err)
			out = poisoned(len(in), n)
			check("Multi.Bootstrap", m.Bootstrap(out, in, mu8))
			sameAs(t, "Multi Bootstrap", out, want)
			check("Multi.Close", m.Close())

			left := fake.ThreadContexts()
			for tid, stack := range left {
				if foreign != 0 && slices.Equal(stack, []uintptr{foreign}) {
					delete(left, tid) // the caller's own
				}
			}
			if len(left) > 0 {
				t.Errorf("context stacks left on OS threads: %#x", left)
			}
		})
	}
}

// TestFakeGPUEngineMultiErrors: a device error on one of two GPUs fails
// the call with that engine's error, named, while the other device's share
// is written and right; a recoverable error leaves the next call right. A
// failed upload on one device fails NewGPUs and closes the other engine,
// and New with UseAuto then takes the CPU engine, saying why.
func TestFakeGPUEngineMultiErrors(t *testing.T) {
	k := newFakeKeys(t, smallN(tfhe.TFHELib128), 3)
	cpu := newCPUEngine(t, k.ck)
	fake := kernels.UseFakeDriver(t, kernels.FakeOptions{SMs: fakeSMs, Devices: 2})
	m, err := bootstrap.NewGPUs(k.ck, nil, bootstrap.GPUOptions{})
	require.NoError(t, err)
	defer m.Close()
	rng := rand.New(rand.NewPCG(13, 14))
	in, _ := k.inputs(t, rng, 8)
	want := cpuBootstrap(t, cpu, in)
	// One launch of one pass: the first launch fails, on whichever device.
	fake.FailAfter(t, "cuLaunchKernel", 0, 701)
	out := poisoned(len(in), k.p.LWEDimension())
	err = m.Bootstrap(out, in, mu8)
	if err == nil || !strings.Contains(err.Error(), "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES") || strings.Count(err.Error(), "engine ") != 1 {
		t.Fatalf("a launch failing on one device: %v, want one engine named", err)
	}
	t.Logf("the failing call: %v", err)
	var written, untouched int
	for i := range out {
		switch {
		case isPoisoned(out[i]):
			untouched++
		case slices.Equal(out[i].Value, want[i].Value):
			written++
		default:
			t.Fatalf("output %d neither untouched nor right", i)
		}
	}
	if written != 4 || untouched != 4 {
		t.Errorf("%d outputs written and %d untouched, want the other device's 4 and 4", written, untouched)
	}
	out = poisoned(len(in), k.p.LWEDimension())
	require.NoError(t, m.Bootstrap(out, in, mu8), "the call after a recoverable error")
	sameAs(t, "the call after a recoverable error", out, want)
	require.NoError(t, m.Close())
	noneLeft(t, fake, "after Close")

	fake.FailAfter(t, "cuMemcpyHtoD_v2", 0, 1)
	if _, err := bootstrap.NewGPUs(k.ck, nil, bootstrap.GPUOptions{}); err == nil || !strings.Contains(err.Error(), "CUDA_ERROR_INVALID_VALUE") || !strings.Contains(err.Error(), "device ") {
		t.Fatalf("NewGPUs with a failing upload: %v", err)
	}
	noneLeft(t, fake, "after the failed NewGPUs")
	fake.FailAfter(t, "cuMemcpyHtoD_v2", 0, 1)
	s, err := bootstrap.New(k.ck, bootstrap.Options{Devices: []int{0, 1}})
	require.NoError(t, err)
	defer s.Close()
	if s.OnGPU() || !strings.HasPrefix(s.Reason(), "CPU: ") || !strings.Contains(s.Reason(), "CUDA_ERROR_INVALID_VALUE") {
		t.Errorf("New(UseAuto) with a failing device: OnGPU %v, reason %q", s.OnGPU(), s.Reason())
	}
}

// TestFakeGPUEngineCircuits evaluates two shipped circuits with
// gates.EvalCircuits on the GPU engines of two fake devices behind
// bootstrap.New (a Multi), several sets of inputs at once: gates' levels
// filled to the batch tiers, each engine's merging of concurrent calls and
// the Multi's split, end to end against the circuits' plaintext
// evaluation. zero_equal has wide levels (32 ORs, then 16, …); neg64 XOR
// sums (XORLinear) and a carry chain of narrow ones. (The emulated blind
// rotations take most of its time: about 10 ms each.)
func TestFakeGPUEngineCircuits(t *testing.T) {
	k := newFakeKeys(t, smallN(tfhe.TFHELib128), 3)
	fake := kernels.UseFakeDriver(t, kernels.FakeOptions{SMs: fakeSMs, Devices: 2})
	enc, err := tfhe.NewEncryptorFromSeed(k.sk, torus.DeriveSeed([torus.SeedSize]byte{}, "kernels-fake-engine/circuits", 0))
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(21, 22))
	devices := []int{0, 1}
	s, err := bootstrap.New(k.ck, bootstrap.Options{Use: bootstrap.UseGPU, Devices: devices})
	require.NoError(t, err)
	ev, err := gates.NewEvaluator(s)
	require.NoError(t, err)
	for _, cc := range []struct {
		name string
		sets int
	}{{"zero_equal", 3}, {"neg64", 1}} {
		c, err := circuits.Load(cc.name)
		require.NoError(t, err)
		plain := make([][][]bool, cc.sets)
		cts := make([][][]*tfhe.TLWE, cc.sets)
		for i := range cc.sets {
			for _, w := range c.Inputs() {
				bits := make([]bool, w)
				for j := range bits {
					// zero_equal's answer is 1 only for 0: make its even
					// sets 0; every other set is random.
					bits[j] = !(cc.name == "zero_equal" && i%2 == 0) && rng.IntN(2) == 1
				}
				in, err := gates.EncryptBits(enc, bits)
				require.NoError(t, err)
				plain[i], cts[i] = append(plain[i], bits), append(cts[i], in)
			}
		}
		out, err := ev.EvalCircuits(context.Background(), c, cts, gates.CircuitOptions{})
		require.NoErrorf(t, err, "devices %v, %s", devices, cc.name)
		for i := range cc.sets {
			want, err := c.Eval(plain[i]...)
			require.NoError(t, err)
			for o := range want {
				got, err := gates.DecryptBits(k.sk, out[i][o])
				require.NoError(t, err)
				if !slices.Equal(got, want[o]) {
					t.Errorf("devices %v, %s, set %d, output %d: decrypts to %v, want %v", devices, cc.name, i, o, got, want[o])
				}
			}
		}
	}
	require.NoError(t, s.Close())
	noneLeft(t, fake, "after Close")
}

// TestFakeGPUEngineEveryGate: every kind of gate through gates.Evaluator's
// Batch on the GPU engine of a fake device, on each input combination of
// its truth table in one mixed batch (two-input and MAJ gates in one Bootstrap
// call, MUX in a BootstrapNoKeySwitch and a KeySwitch call, free gates on
// the host), gives the CPU engine's output bit for bit and the gate's
// value; plain and grouped-by-3 keys. Its counterpart on a real GPU is
// gates' TestGatesGPUMatchCPU.
func TestFakeGPUEngineEveryGate(t *testing.T) {
	kernels.UseFakeDriver(t, kernels.FakeOptions{SMs: fakeSMs})
	ops := []gates.Op{
		gates.OpZero, gates.OpOne, gates.OpCopy, gates.OpNOT,
		gates.OpAND, gates.OpNAND, gates.OpOR, gates.OpNOR, gates.OpXOR, gates.OpXNOR,
		gates.OpANDNY, gates.OpANDYN, gates.OpORNY, gates.OpORYN, gates.OpMUX, gates.OpMAJ,
	}
	for _, grouping := range []int{1, 3} {
		t.Run(fmt.Sprintf("grouping=%d", grouping), func(t *testing.T) {
			k := newFakeKeys(t, smallN(tfhe.TFHELib128), grouping)
			evG, err := gates.NewEvaluator(newFakeGPUEngine(t, k.ck, bootstrap.GPUOptions{}))
			require.NoError(t, err)
			evC, err := gates.NewEvaluator(newCPUEngine(t, k.ck))
			require.NoError(t, err)
			enc, err := tfhe.NewEncryptorFromSeed(k.sk, torus.DeriveSeed([torus.SeedSize]byte{}, "kernels-fake-engine/every-gate", uint64(grouping)))
			require.NoError(t, err)
			var calls []gates.Call
			var want []bool
			var names []string
			for _, op := range ops {
				for x := range 1 << op.Arity() {
					var in [3]bool
					for j := range op.Arity() {
						in[j] = x>>j&1 == 1
					}
					cts, err := gates.EncryptBits(enc, in[:])
					require.NoError(t, err)
					calls = append(calls, gates.Call{Op: op, Out: tfhe.NewTLWE(k.p.LWEDimension()), A: cts[0], B: cts[1], C: cts[2]})
					want = append(want, op.Eval(in[0], in[1], in[2]))
					names = append(names, fmt.Sprintf("%v%v", op, in[:op.Arity()]))
				}
			}
			ref := slices.Clone(calls)
			for i := range ref {
				ref[i].Out = tfhe.NewTLWE(k.p.LWEDimension())
			}
			require.NoError(t, evG.Batch(calls))
			require.NoError(t, evC.Batch(ref))
			for i, c := range calls {
				if !slices.Equal(c.Out.Value, ref[i].Out.Value) {
					t.Errorf("%s: the GPU engine's output differs from the CPU engine's", names[i])
				}
				got, err := gates.DecryptBits(k.sk, []*tfhe.TLWE{c.Out})
				require.NoError(t, err)
				if got[0] != want[i] {
					t.Errorf("%s decrypts to %v, want %v", names[i], got[0], want[i])
				}
			}
		})
	}
}
