package bootstrap

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/goldfhe/goldfhe/kernels"
	"github.com/goldfhe/goldfhe/smallntt"
	"github.com/goldfhe/goldfhe/tfhe"
	"github.com/goldfhe/goldfhe/torus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// newGPU builds a GPU engine or skips the test, naming why, when there is no
// GPU; any other failure (a fatbin without the kernels, say) fails it.
func newGPU(t testing.TB, ck *tfhe.CloudKey, opts GPUOptions) *GPU {
	t.Helper()
	e, err := NewGPU(ck, opts)
	if errors.Is(err, ErrNoGPU) {
		t.Skipf("no GPU: %v", err)
	}
	require.NoError(t, err)
	t.Cleanup(func() { e.Close() })
	return e
}

// requireGPU skips the test, naming why, when no CUDA device is there (before
// any expensive key generation).
func requireGPU(t testing.TB) {
	t.Helper()
	n, err := kernels.DeviceCount()
	if err != nil {
		t.Skipf("no GPU: %v", err)
	}
	if n == 0 {
		t.Skip("no GPU: the driver reports no CUDA device")
	}
}

// TestGPUUnavailable checks, where there is no GPU, the error of NewGPU and
// the fallback of New; it skips on a machine with a usable GPU.
func TestGPUUnavailable(t *testing.T) {
	kp := testKeys(toyParams, 0)
	g, err := NewGPU(kp.ck, GPUOptions{})
	if err == nil {
		g.Close()
		t.Skip("a GPU is usable here: " + g.Name())
	}
	if !errors.Is(err, ErrNoGPU) {
		t.Fatalf("NewGPU without a usable GPU: %v (does not wrap ErrNoGPU)", err)
	}
	if !errors.Is(err, kernels.ErrNoDriver) && !errors.Is(err, kernels.ErrNoDevice) {
		t.Errorf("NewGPU error %v wraps neither kernels.ErrNoDriver nor kernels.ErrNoDevice", err)
	}
	t.Logf("NewGPU: %v", err)
	s, err := New(kp.ck, Options{})
	require.NoError(t, err)
	defer s.Close()
	if s.OnGPU() || !strings.HasPrefix(s.Reason(), "CPU: ") || !strings.Contains(s.Reason(), "no usable GPU") {
		t.Errorf("New fell back with OnGPU = %v, reason %q", s.OnGPU(), s.Reason())
	}
	if _, ok := s.Engine.(*CPU); !ok {
		t.Errorf("New built %T, want *CPU", s.Engine)
	}
	if _, err := New(kp.ck, Options{Use: UseGPU}); !errors.Is(err, ErrNoGPU) {
		t.Errorf("New(UseGPU) without a GPU: %v", err)
	}
}

// TestNewSelection checks the choices every machine can make.
func TestNewSelection(t *testing.T) {
	kp := testKeys(toyParams, 0)
	s, err := New(kp.ck, Options{Use: UseCPU, CPU: CPUOptions{Workers: 1}})
	require.NoError(t, err)
	defer s.Close()
	if s.OnGPU() || s.Reason() != "CPU: requested (UseCPU)" || !strings.HasPrefix(s.Name(), "cpu/") {
		t.Errorf("UseCPU: OnGPU %v, reason %q, name %q", s.OnGPU(), s.Reason(), s.Name())
	}
	if _, err := New(kp.ck, Options{Use: 7}); err == nil {
		t.Error("New with an unknown Use: no error")
	}
	if _, err := New(nil, Options{}); err == nil {
		t.Error("New with a nil key: no error")
	}
	if _, err := NewGPU(nil, GPUOptions{}); err == nil {
		t.Error("NewGPU with a nil key: no error")
	}
	if _, err := NewGPU(kp.ck, GPUOptions{BlindRotation: 99}); err == nil || !strings.Contains(err.Error(), "BlindRotation(99)") {
		t.Errorf("NewGPU with BlindRotation 99: %v", err)
	}
	if _, err := NewGPU(kp.ck, GPUOptions{MaxBatch: -1}); err == nil {
		t.Error("NewGPU with MaxBatch -1: no error")
	}
	bad, _ := smallntt.NewPlan(512, smallntt.Butterfly)
	if _, err := NewGPU(kp.ck, GPUOptions{Plan: bad}); err == nil {
		t.Error("NewGPU with a plan of the wrong size: no error")
	}
	// The same options through New with UseAuto: errors, not the CPU engine
	// with the mistake as its reason (a machine without a GPU included).
	for _, o := range []GPUOptions{{BlindRotation: 99}, {MaxBatch: -1}, {Plan: bad}} {
		if s, err := New(kp.ck, Options{GPU: o}); err == nil {
			t.Errorf("New (UseAuto) with GPU options %+v: %s, want an error", o, s.Reason())
			s.Close()
		}
	}
	// And wrong CPU options, with UseAuto and UseGPU alike: checked before
	// any GPU is tried, so that a machine with a GPU reports them as one
	// without does.
	bad1024, _ := smallntt.NewPlan(1024, smallntt.Butterfly)
	for _, o := range []CPUOptions{{Workers: -1}, {Workers: maxCPUWorkers + 1}, {Plan: bad}, {Plan: bad1024, Variant: smallntt.Butterfly}, {Factors: []int{8, 8}}} {
		for _, use := range []Use{UseAuto, UseGPU} {
			s, err := New(kp.ck, Options{Use: use, CPU: o})
			if err == nil {
				t.Errorf("New (%v) with CPU options %+v: %s, want an error", use, o, s.Reason())
				s.Close()
			} else if !strings.HasPrefix(err.Error(), "bootstrap: New: Options.CPU: ") {
				t.Errorf("New (%v) with CPU options %+v: %q, want it to name Options.CPU", use, o, err)
			}
		}
	}
	// Zero and nil engines, and zero and nil Selected (New returns nil with
	// its error) and one that forwards to a zero engine: ErrNotInitialized
	// from every method, no panic.
	var zero GPU
	var nilE *GPU
	var zeroSel Selected
	var nilSel *Selected
	n, kn := toyParams.LWEDimension(), toyParams.ExtractedLWEDimension()
	for _, c := range []struct {
		name, wantName string
		en             Engine
	}{
		{"zero GPU", "gpu/uninitialized", &zero},
		{"nil GPU", "gpu/uninitialized", nilE},
		{"zero Selected", "uninitialized", &zeroSel},
		{"nil Selected", "uninitialized", nilSel},
		{"Selected of a zero GPU", "gpu/uninitialized", &Selected{Engine: &zero}},
	} {
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%s: panic %v", c.name, r)
				}
			}()
			en := c.en
			if err := en.Bootstrap(newTLWEs(1, n), newTLWEs(1, n), mu8); !errors.Is(err, ErrNotInitialized) {
				t.Errorf("%s Bootstrap: %v", c.name, err)
			}
			if err := en.BootstrapNoKeySwitch(newTLWEs(1, kn), newTLWEs(1, n), mu8); !errors.Is(err, ErrNotInitialized) {
				t.Errorf("%s BootstrapNoKeySwitch: %v", c.name, err)
			}
			if err := en.KeySwitch(newTLWEs(1, n), newTLWEs(1, kn)); !errors.Is(err, ErrNotInitialized) {
				t.Errorf("%s KeySwitch: %v", c.name, err)
			}
			if err := en.Close(); !errors.Is(err, ErrNotInitialized) {
				t.Errorf("%s Close: %v", c.name, err)
			}
			if en.Name() != c.wantName || !en.Params().IsZero() {
				t.Errorf("%s: name %q, params %v", c.name, en.Name(), en.Params())
			}
			if sel, ok := en.(*Selected); ok {
				if sel.OnGPU() || sel.Grouping() != 0 || sel.BatchTiers() != nil || (sel.engine() == nil && sel.Reason() != "") {
					t.Errorf("%s: OnGPU %v, grouping %d, tiers %v, reason %q", c.name, sel.OnGPU(), sel.Grouping(), sel.BatchTiers(), sel.Reason())
				}
			}
		}()
	}
}

// gpuSets are the parameter sets the GPU tests run: all named sets and the
// toy set (N = 256: the butterfly NTT path), fewer under -short.
func gpuSets() []tfhe.Params {
	if testing.Short() {
		return []tfhe.Params{toyParams, tfhe.TFHELib128}
	}
	return append([]tfhe.Params{toyParams}, tfhe.ParamSets()...)
}

// mixedInputs returns count samples of dimension n: even indices are NAND
// combinations of fresh encryptions (want gives the gate's value), odd ones
// uniformly random (every rotation amount and digit shows up).
func mixedInputs(t testing.TB, p tfhe.Params, kp keyPair, rng *rand.Rand, count int) (in []*tfhe.TLWE, want []bool) {
	enc := newEncryptor(t, kp.sk, int(rng.Int32()))
	nand, want := nandInputs(t, p, enc, count)
	in = make([]*tfhe.TLWE, count)
	for i := range in {
		if i%2 == 0 {
			in[i] = nand[i]
			continue
		}
		in[i] = tfhe.NewTLWE(p.LWEDimension())
		for j := range in[i].Value {
			in[i].Value[j] = torus.Torus32(rng.Uint32())
		}
	}
	return in, want
}

// sampleIndices returns every index below count when count ≤ 132, else 66:
// the first, the last 16 and 49 at random.
func sampleIndices(rng *rand.Rand, count int) []int {
	if count <= 132 {
		idx := make([]int, count)
		for i := range idx {
			idx[i] = i
		}
		return idx
	}
	// The last 16 are where a tail pass runs (tailPasses).
	idx := []int{0}
	for i := count - 16; i < count; i++ {
		idx = append(idx, i)
	}
	for range 49 {
		idx = append(idx, rng.IntN(count))
	}
	return idx
}

func pick(s []*tfhe.TLWE, idx []int) []*tfhe.TLWE {
	out := make([]*tfhe.TLWE, len(idx))
	for i, j := range idx {
		out[i] = s[j]
	}
	return out
}

// TestGPUMatchesCPU: for every set, batches of 1, 7, 20, 40, 132, 1000 (and 10,000
// for TFHELib128 outside -short), the GPU engine's Bootstrap,
// BootstrapNoKeySwitch and KeySwitch outputs equal the CPU engine's bit for
// bit (on every sample up to 132, on 66 beyond: sampleIndices), Bootstrap =
// KeySwitch ∘ BootstrapNoKeySwitch on the GPU for every sample, and the
// gates decrypt correctly. Four engines per named set: the default (the
// wide kernel: checked), the fused and the wide kernels forced (batches up
// to 132) and the step kernels (up to 1000); the toy set has only the step
// kernels.
func TestGPUMatchesCPU(t *testing.T) {
	requireGPU(t)
	for _, p := range gpuSets() {
		modes := []BlindRotation{BlindRotationAuto, BlindRotationFused, BlindRotationWide, BlindRotationUnfused}
		if p.Name() == toyParams.Name() {
			modes = []BlindRotation{BlindRotationAuto}
		}
		for _, mode := range modes {
			t.Run(p.Name()+"/"+mode.String(), func(t *testing.T) { testGPUMatchesCPU(t, p, mode, testKeys(p, 0)) })
		}
		if p.Name() == toyParams.Name() {
			continue // no wide kernel for the toy set: TestGPUGroupedErrors
		}
		// Grouped keys (tfhe.WithGrouping 2 and 3): the wide, cluster and
		// split kernels (_g2, _g3).
		for _, mode := range []BlindRotation{BlindRotationAuto, BlindRotationWide} {
			t.Run(p.Name()+"/grouped/"+mode.String(), func(t *testing.T) { testGPUMatchesCPU(t, p, mode, testGroupedKeys(p, 0)) })
			t.Run(p.Name()+"/grouped3/"+mode.String(), func(t *testing.T) { testGPUMatchesCPU(t, p, mode, keyCache(p, 0, 3)) })
		}
	}
}

func testGPUMatchesCPU(t *testing.T, p tfhe.Params, mode BlindRotation, kp keyPair) {
	g := newGPU(t, kp.ck, GPUOptions{BlindRotation: mode})
	cpu := newCPU(t, kp.ck, CPUOptions{})
	t.Logf("%s; %s", g.Name(), cpu.Name())
	want := map[BlindRotation]string{BlindRotationAuto: "/wide", BlindRotationFused: "/fused/", BlindRotationWide: "/wide", BlindRotationUnfused: "+butterfly<"}[mode]
	if p.Name() != toyParams.Name() && !strings.Contains(g.Name(), want) {
		t.Fatalf("%s, %v engine: %s, want %q in its name", p.Name(), mode, g.Name(), want)
	}
	if grouped := kp.ck.Grouping() > 1; grouped != strings.Contains(g.Name(), "/grouping=") {
		t.Fatalf("engine %s for a key with grouping %d", g.Name(), kp.ck.Grouping())
	}
	rng := rand.New(rand.NewPCG(uint64(p.LWEDimension()), 1))
	n, kn := p.LWEDimension(), p.ExtractedLWEDimension()
	// On a GPU of 132 SMs 1 and 7 run the split kernel (clusters of 8),
	// and 20 too with a grouped key (the split kernel that takes K' from
	// the combine kernel, up to 33 grouped by 2), and 40 too grouped by 3
	// (up to 60); 20 and 40 the cluster kernel otherwise, 132 and 1000 the
	// wide one (grouped by 3, 1000 is two waves of the flat kernel and 208
	// samples on the wide one: bodyPasses); 140 a pass of 132 on the N/8-thread wide kernel and one of
	// 8 on the split kernel, 280 a wave of the wide one (264) and a last
	// pass of 16 on the split kernel (tailPasses).
	batches := []int{1, 7, 20, 40, 132, 140, 280, 1000}
	switch {
	case mode == BlindRotationFused || mode == BlindRotationWide:
		batches = batches[:5]
	case mode == BlindRotationAuto && p.Name() == tfhe.TFHELib128.Name() && !testing.Short():
		batches = append(batches, 10_000)
		if g.c.flat.T != 0 {
			// Passes of a quarter of the call (passSize) of at least
			// flatMinWaves waves of the flat kernel, which the engine
			// runs for them (wideFor): 13,000 on 132 SMs; and a body too
			// small for those, in passes of whole flat waves and the
			// N/8-thread and split kernels after them (bodyPasses): 4,096
			// on 132 SMs.
			batches = append(batches, 4*flatMinWaves*g.c.flatWaveSize()+328, 10*g.c.flatWaveSize()+136)
		}
	}
	for _, count := range batches {
		in, want := mixedInputs(t, p, kp, rng, count)
		out, ext, ks := newTLWEs(count, n), newTLWEs(count, kn), newTLWEs(count, n)
		require.NoError(t, g.Bootstrap(out, in, mu8))
		require.NoError(t, g.BootstrapNoKeySwitch(ext, in, mu8))
		require.NoError(t, g.KeySwitch(ks, ext))
		for i := range out {
			if !equalTLWE(ks[i], out[i]) {
				t.Fatalf("batch %d, sample %d: GPU KeySwitch(BootstrapNoKeySwitch) ≠ Bootstrap", count, i)
			}
			if i%2 == 0 && (kp.sk.DecryptBool(out[i]) != want[i] || kp.sk.DecryptBool(ext[i]) != want[i]) {
				t.Fatalf("batch %d, gate %d decrypts wrong, want %v", count, i, want[i])
			}
		}
		// The CPU reference on a subset.
		idx := sampleIndices(rng, count)
		cin := pick(in, idx)
		cext, cout := newTLWEs(len(idx), kn), newTLWEs(len(idx), n)
		require.NoError(t, cpu.BootstrapNoKeySwitch(cext, cin, mu8))
		require.NoError(t, cpu.KeySwitch(cout, cext))
		for r, i := range idx {
			if !equalTLWE(ext[i], cext[r]) {
				t.Fatalf("batch %d, sample %d: GPU BootstrapNoKeySwitch ≠ CPU (%s)", count, i, firstDiff(ext[i], cext[r]))
			}
			if !equalTLWE(out[i], cout[r]) {
				t.Fatalf("batch %d, sample %d: GPU Bootstrap ≠ CPU (%s)", count, i, firstDiff(out[i], cout[r]))
			}
		}
		// KeySwitch of uniformly random samples of dimension k·N.
		rin := newTLWEs(count, kn)
		for _, c := range rin {
			for j := range c.Value {
				c.Value[j] = torus.Torus32(rng.Uint32())
			}
		}
		require.NoError(t, g.KeySwitch(ks, rin))
		require.NoError(t, cpu.KeySwitch(cout, pick(rin, idx)))
		for r, i := range idx {
			if !equalTLWE(ks[i], cout[r]) {
				t.Fatalf("batch %d, sample %d: GPU KeySwitch of a random sample ≠ CPU (%s)", count, i, firstDiff(ks[i], cout[r]))
			}
		}
		t.Logf("batch %d: GPU = CPU on %d samples (all three operations), KS∘NoKS = Bootstrap and decryption on all %d", count, len(idx), count)
	}
}

func firstDiff(a, b *tfhe.TLWE) string {
	for i := range a.Value {
		if a.Value[i] != b.Value[i] {
			return fmt.Sprintf("coordinate %d of %d: %#x vs %#x", i, len(a.Value), uint32(a.Value[i]), uint32(b.Value[i]))
		}
	}
	return "equal"
}

// TestGPUSplitAndInPlace: a batch larger than MaxBatch is split into passes
// with the same results, and out[i] = in[i] works. TFHELib128 with a key
// grouped by 3 takes 4,096 samples in passes of at most 1,000: two flat
// waves a pass (bodyPasses), then the N/8-thread and split kernels.
func TestGPUSplitAndInPlace(t *testing.T) {
	requireGPU(t)
	for _, c := range []struct {
		p               tfhe.Params
		g               int
		maxBatch, count int
	}{{toyParams, 1, 50, 132}, {tfhe.TFHELib128, 1, 50, 132}, {tfhe.TFHELib128, 3, 1000, 4096}} {
		p := c.p
		t.Run(fmt.Sprintf("%s/g%d", p.Name(), c.g), func(t *testing.T) {
			kp := keyCache(p, 0, c.g)
			g := newGPU(t, kp.ck, GPUOptions{})
			small := newGPU(t, kp.ck, GPUOptions{MaxBatch: c.maxBatch})
			if small.MaxBatch() != c.maxBatch {
				t.Fatalf("MaxBatch() = %d", small.MaxBatch())
			}
			rng := rand.New(rand.NewPCG(3, 4))
			count := c.count
			in, _ := mixedInputs(t, p, kp, rng, count)
			n := p.LWEDimension()
			a, b := newTLWEs(count, n), newTLWEs(count, n)
			require.NoError(t, g.Bootstrap(a, in, mu8))
			require.NoError(t, small.Bootstrap(b, in, mu8))
			require.NoError(t, small.Bootstrap(in, in, mu8))
			for i := range a {
				if !equalTLWE(a[i], b[i]) {
					t.Fatalf("sample %d: split batch differs", i)
				}
				if !equalTLWE(a[i], in[i]) {
					t.Fatalf("sample %d: in-place bootstrap differs", i)
				}
			}
		})
	}
}

// TestGPUDigest runs the CPU engine's digest computation (TestCPUDigest) on
// the GPU engine: same bits.
func TestGPUDigest(t *testing.T) {
	requireGPU(t)
	p := tfhe.TFHELib128
	kp := testKeys(p, 0)
	g := newGPU(t, kp.ck, GPUOptions{})
	rounds := 3
	if testing.Short() {
		rounds = 1
	}
	got := digestRun(t, g, kp, rounds)
	want := digestRun(t, newCPU(t, kp.ck, CPUOptions{}), kp, rounds)
	if got != want {
		t.Errorf("GPU digest %s, CPU %s", got, want)
	}
}

// TestGPUPlans: every GPU NTT variant gives the same outputs (toy set and
// TFHELib128's N = 1024 with a matrix plan).
func TestGPUPlans(t *testing.T) {
	requireGPU(t)
	kp := testKeys(toyParams, 0)
	ref := newGPU(t, kp.ck, GPUOptions{})
	rng := rand.New(rand.NewPCG(5, 6))
	in, _ := mixedInputs(t, toyParams, kp, rng, 9)
	want := newTLWEs(len(in), toyParams.LWEDimension())
	require.NoError(t, ref.Bootstrap(want, in, mu8))
	for _, f := range []func() (*smallntt.Plan, error){
		func() (*smallntt.Plan, error) { return smallntt.NewPlan(256, smallntt.Matrix, 16, 16) },
		func() (*smallntt.Plan, error) { return smallntt.NewPlan(256, smallntt.MatrixNoMerge, 4, 4, 4, 4) },
	} {
		plan, err := f()
		require.NoError(t, err)
		g := newGPU(t, kp.ck, GPUOptions{Plan: plan})
		got := newTLWEs(len(in), toyParams.LWEDimension())
		require.NoError(t, g.Bootstrap(got, in, mu8))
		for i := range got {
			if !equalTLWE(got[i], want[i]) {
				t.Fatalf("%v: sample %d differs from %v", plan, i, ref.Plan())
			}
		}
		g.Close()
	}
}

// TestGPUForcedKernelsMissing: forcing a blind-rotation kernel that the
// set has none of is an error of NewGPU (not ErrNoGPU).
func TestGPUForcedKernelsMissing(t *testing.T) {
	requireGPU(t)
	kp := testKeys(toyParams, 0)
	for _, mode := range []BlindRotation{BlindRotationFused, BlindRotationWide} {
		g, err := NewGPU(kp.ck, GPUOptions{BlindRotation: mode})
		if err == nil {
			g.Close()
			t.Errorf("%v on the toy set: no error", mode)
		} else if errors.Is(err, ErrNoGPU) || !strings.Contains(err.Error(), "no "+mode.String()) {
			t.Errorf("%v on the toy set: %v", mode, err)
		}
	}
}

// TestGPUGroupedErrors: a grouped key (factor 2 or 3) with kernels that do
// one CMux per bit, or with a set that has no wide kernel, is an error
// naming why.
func TestGPUGroupedErrors(t *testing.T) {
	requireGPU(t)
	for g := 2; g <= tfhe.MaxGrouping; g++ {
		t.Run(fmt.Sprintf("g=%d", g), func(t *testing.T) { testGPUGroupedErrors(t, g) })
	}
}

func testGPUGroupedErrors(t *testing.T, grouping int) {
	kp := keyCache(tfhe.CuFHE80, 0, grouping)
	for _, mode := range []BlindRotation{BlindRotationFused, BlindRotationUnfused} {
		g, err := NewGPU(kp.ck, GPUOptions{BlindRotation: mode})
		if err == nil {
			g.Close()
			t.Errorf("grouped key with %v: no error", mode)
		} else if !strings.Contains(err.Error(), "wide and cluster kernels only") {
			t.Errorf("grouped key with %v: %v", mode, err)
		}
	}
	bf, err := smallntt.NewPlan(1024, smallntt.Butterfly)
	require.NoError(t, err)
	if g, err := NewGPU(kp.ck, GPUOptions{Plan: bf}); err == nil {
		g.Close()
		t.Error("grouped key with the butterfly plan: no error")
	}
	toy := keyCache(toyParams, 0, grouping)
	if g, err := NewGPU(toy.ck, GPUOptions{}); err == nil {
		g.Close()
		t.Error("grouped toy key (no wide kernel): no error")
	} else if !strings.Contains(err.Error(), "no wide blind-rotation kernel") {
		t.Errorf("grouped toy key: %v", err)
	}
	// New falls back to the CPU engine and says why.
	e, err := New(toy.ck, Options{})
	require.NoError(t, err)
	defer e.Close()
	if !strings.HasPrefix(e.Name(), "cpu/") {
		t.Errorf("New with a grouped toy key: %s, want the CPU engine", e.Name())
	}
}

// TestGPUErrors feeds bad input to every method: errors, never panics, and
// no output written; then Close.
func TestGPUErrors(t *testing.T) {
	requireGPU(t)
	p := toyParams
	kp := testKeys(p, 0)
	n, kn := p.LWEDimension(), p.ExtractedLWEDimension()
	g := newGPU(t, kp.ck, GPUOptions{})
	good := func(c int) []*tfhe.TLWE { return newTLWEs(c, n) }
	poisoned := poisonedTLWEs
	cases := []struct {
		name string
		call func(out []*tfhe.TLWE) error
		out  []*tfhe.TLWE
	}{
		{"length mismatch", func(o []*tfhe.TLWE) error { return g.Bootstrap(o, good(3), mu8) }, poisoned(2, n)},
		{"nil input", func(o []*tfhe.TLWE) error { return g.Bootstrap(o, []*tfhe.TLWE{tfhe.NewTLWE(n), nil}, mu8) }, poisoned(2, n)},
		{"nil output", func([]*tfhe.TLWE) error { return g.Bootstrap([]*tfhe.TLWE{nil}, good(1), mu8) }, nil},
		{"empty sample", func(o []*tfhe.TLWE) error { return g.Bootstrap(o, []*tfhe.TLWE{{}}, mu8) }, poisoned(1, n)},
		{"input dimension", func(o []*tfhe.TLWE) error { return g.Bootstrap(o, newTLWEs(1, n+1), mu8) }, poisoned(1, n)},
		{"output dimension", func(o []*tfhe.TLWE) error { return g.Bootstrap(o, good(1), mu8) }, poisoned(1, kn)},
		{"no-KS output dimension", func(o []*tfhe.TLWE) error { return g.BootstrapNoKeySwitch(o, good(1), mu8) }, poisoned(1, n)},
		{"KS input dimension", func(o []*tfhe.TLWE) error { return g.KeySwitch(o, good(1)) }, poisoned(1, n)},
		{"KS output dimension", func(o []*tfhe.TLWE) error { return g.KeySwitch(o, newTLWEs(1, kn)) }, poisoned(1, kn)},
		{"other set's ciphertexts", func(o []*tfhe.TLWE) error {
			return g.Bootstrap(o, newTLWEs(1, tfhe.TFHELib128.LWEDimension()), mu8)
		}, poisoned(1, tfhe.TFHELib128.LWEDimension())},
	}
	for _, c := range cases {
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%s: panic %v", c.name, r)
				}
			}()
			if err := c.call(c.out); err == nil {
				t.Errorf("%s: no error", c.name)
			}
			for _, o := range c.out {
				if !isPoisoned(o) {
					t.Fatalf("%s: output written on error", c.name)
				}
			}
		}()
	}
	assert.NoError(t, g.Bootstrap(nil, nil, mu8), "empty batch")
	require.NoError(t, g.Close())
	assert.NoError(t, g.Close(), "second Close")
	if err := g.Bootstrap(good(1), good(1), mu8); !errors.Is(err, ErrClosed) {
		t.Errorf("Bootstrap after Close: %v", err)
	}
	if err := g.KeySwitch(good(1), newTLWEs(1, kn)); !errors.Is(err, ErrClosed) {
		t.Errorf("KeySwitch after Close: %v", err)
	}
}

// TestGPUConcurrent: goroutines sharing one engine get the results of
// sequential calls; New picks the GPU when one is usable.
func TestGPUConcurrent(t *testing.T) {
	requireGPU(t)
	p := toyParams
	kp := testKeys(p, 0)
	newGPU(t, kp.ck, GPUOptions{}) // skip without a GPU
	s, err := New(kp.ck, Options{})
	require.NoError(t, err)
	defer s.Close()
	if !s.OnGPU() || !strings.HasPrefix(s.Reason(), "GPU: ") {
		t.Fatalf("New with a GPU: OnGPU %v, reason %q", s.OnGPU(), s.Reason())
	}
	t.Log(s.Reason())
	const workers, count = 4, 20
	ins := make([][]*tfhe.TLWE, workers)
	wants := make([][]*tfhe.TLWE, workers)
	rng := rand.New(rand.NewPCG(7, 8))
	for w := range ins {
		ins[w], _ = mixedInputs(t, p, kp, rng, count)
		wants[w] = newTLWEs(count, p.LWEDimension())
		require.NoError(t, s.Bootstrap(wants[w], ins[w], mu8))
	}
	var wg sync.WaitGroup
	errs := make([]error, workers)
	for w := range workers {
		wg.Go(func() {
			out := newTLWEs(count, p.LWEDimension())
			for range 3 {
				if err := s.Bootstrap(out, ins[w], mu8); err != nil {
					errs[w] = err
					return
				}
				for i := range out {
					if !equalTLWE(out[i], wants[w][i]) {
						errs[w] = fmt.Errorf("worker %d, sample %d differs", w, i)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	require.NoError(t, errors.Join(errs...))
}

// TestGPUConcurrentMerged: goroutines making small calls of three kinds
// and two μ on one engine (TFHELib128 grouped by 3) get the CPU engine's
// outputs bit for bit, and calls that met a busy GPU ran merged.
func TestGPUConcurrentMerged(t *testing.T) {
	requireGPU(t)
	p := tfhe.TFHELib128
	kp := keyCache(p, 0, 3)
	g := newGPU(t, kp.ck, GPUOptions{})
	cpu := newCPU(t, kp.ck, CPUOptions{})
	const workers, rounds = 24, 4
	type job struct {
		op      opKind
		mu      torus.Torus32
		in, out []*tfhe.TLWE
		want    []*tfhe.TLWE
	}
	n, ext := p.LWEDimension(), p.ExtractedLWEDimension()
	rng := rand.New(rand.NewPCG(11, 12))
	jobs := make([][]job, workers)
	for w := range jobs {
		for r := range rounds {
			count := 1 + (7*w+5*r)%37
			in, _ := mixedInputs(t, p, kp, rng, count)
			j := job{op: opBootstrap, mu: mu8, in: in}
			switch w % 4 {
			case 1:
				j.mu = torus.Encode(1, 4)
			case 2:
				j.op = opBootstrapNoKS
			case 3:
				j.op, j.in = opKeySwitch, newTLWEs(count, ext)
				require.NoError(t, cpu.BootstrapNoKeySwitch(j.in, in, mu8))
			}
			outDim := n
			if j.op == opBootstrapNoKS {
				outDim = ext
			}
			j.out, j.want = newTLWEs(count, outDim), newTLWEs(count, outDim)
			require.NoError(t, cpu.c.run(j.op, j.want, j.in, j.mu))
			jobs[w] = append(jobs[w], j)
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, workers)
	for w := range workers {
		wg.Go(func() {
			for r, j := range jobs[w] {
				var err error
				switch j.op {
				case opBootstrap:
					err = g.Bootstrap(j.out, j.in, j.mu)
				case opBootstrapNoKS:
					err = g.BootstrapNoKeySwitch(j.out, j.in, j.mu)
				case opKeySwitch:
					err = g.KeySwitch(j.out, j.in)
				}
				if err != nil {
					errs[w] = err
					return
				}
				for i := range j.out {
					if !equalTLWE(j.out[i], j.want[i]) {
						errs[w] = fmt.Errorf("worker %d, round %d (op %d, %d samples): sample %d differs from the CPU engine's", w, r, j.op, len(j.in), i)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	require.NoError(t, errors.Join(errs...))
	merged := g.c.mergedCalls.Load()
	t.Logf("%d of %d calls ran merged with others", merged, workers*rounds)
	if merged == 0 {
		t.Error("no call ran merged, with 24 goroutines calling at once")
	}
}

// BenchmarkGPUBootstrap measures the GPU engine's Bootstrap on batches of
// NAND inputs: gates/s, and ms per batch (batch=1: the single-gate
// latency). Names: BenchmarkGPUBootstrap/TFHELib128/batch=1000.
func BenchmarkGPUBootstrap(b *testing.B) {
	requireGPU(b)
	for _, p := range tfhe.ParamSets() {
		kp := testKeys(p, 0)
		g := newGPU(b, kp.ck, GPUOptions{})
		b.Logf("%s", g.Name())
		for _, count := range []int{1, 16, 132, 1024, 4096, 10_000} {
			if p.Name() != tfhe.TFHELib128.Name() && count > 1024 {
				continue
			}
			in, _ := nandInputs(b, p, newEncryptor(b, kp.sk, 5), count)
			out := newTLWEs(count, p.LWEDimension())
			b.Run(fmt.Sprintf("%s/batch=%d", p.Name(), count), func(b *testing.B) {
				for b.Loop() {
					if err := g.Bootstrap(out, in, mu8); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.N*count)/b.Elapsed().Seconds(), "gates/s")
				b.ReportMetric(b.Elapsed().Seconds()*1e3/float64(b.N), "ms/batch")
			})
		}
		g.Close()
	}
}

// BenchmarkGPUConcurrent measures many goroutines each making small
// Bootstrap calls on one engine (TFHELib128 grouped by 3), the engine
// merging the calls that wait (the default) and with NoMerge: gates/s of
// all callers together, every caller making one call an iteration. Names:
// BenchmarkGPUConcurrent/merge/callers=64/batch=64.
func BenchmarkGPUConcurrent(b *testing.B) {
	requireGPU(b)
	p := tfhe.TFHELib128
	kp := keyCache(p, 0, 3)
	shapes := []struct{ callers, batch int }{{16, 64}, {64, 16}, {64, 64}, {256, 16}}
	for _, noMerge := range []bool{false, true} {
		g := newGPU(b, kp.ck, GPUOptions{NoMerge: noMerge})
		mode := map[bool]string{false: "merge", true: "nomerge"}[noMerge]
		for _, sh := range shapes {
			ins := make([][]*tfhe.TLWE, sh.callers)
			outs := make([][]*tfhe.TLWE, sh.callers)
			for w := range ins {
				ins[w], _ = nandInputs(b, p, newEncryptor(b, kp.sk, 100+w), sh.batch)
				outs[w] = newTLWEs(sh.batch, p.LWEDimension())
			}
			b.Run(fmt.Sprintf("%s/callers=%d/batch=%d", mode, sh.callers, sh.batch), func(b *testing.B) {
				errs := make([]error, sh.callers)
				for b.Loop() {
					var wg sync.WaitGroup
					for w := range sh.callers {
						wg.Go(func() { errs[w] = g.Bootstrap(outs[w], ins[w], mu8) })
					}
					wg.Wait()
					if err := errors.Join(errs...); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.N*sh.callers*sh.batch)/b.Elapsed().Seconds(), "gates/s")
				b.ReportMetric(b.Elapsed().Seconds()*1e3/float64(b.N), "ms/round")
			})
		}
		g.Close()
	}
}

// TestGPUBatchTiers: the tiers are ascending, start at the split kernel's
// largest pass and end at a wave of the wide kernel; forwarded by
// Selected; none on the step kernels.
func TestGPUBatchTiers(t *testing.T) {
	requireGPU(t)
	kp := testKeys(tfhe.TFHELib128, 0)
	e := newGPU(t, kp.ck, GPUOptions{})
	tiers := e.BatchTiers()
	t.Logf("%s: tiers %v", e.Name(), tiers)
	if len(tiers) == 0 || !slices.IsSorted(tiers) || len(slices.Compact(slices.Clone(tiers))) != len(tiers) {
		t.Fatalf("tiers %v", tiers)
	}
	sms := e.Device().SMs
	if last := tiers[len(tiers)-1]; last != sms && last != 2*sms {
		t.Errorf("last tier %d, want a wave of the wide kernel (%d or %d)", last, sms, 2*sms)
	}
	if got := BatchTiers(&Selected{Engine: e}); !slices.Equal(got, tiers) {
		t.Errorf("through Selected: %v", got)
	}
	u := newGPU(t, kp.ck, GPUOptions{BlindRotation: BlindRotationUnfused})
	if got := u.BatchTiers(); got != nil {
		t.Errorf("step kernels: tiers %v, want none", got)
	}
}

// requireGPUs skips the test, naming why, unless the host has n GPUs.
func requireGPUs(t testing.TB, n int) int {
	t.Helper()
	requireGPU(t)
	have, err := kernels.DeviceCount()
	require.NoError(t, err)
	if have < n {
		t.Skipf("needs %d GPUs; the driver reports %d", n, have)
	}
	return have
}

// TestGPUMulti: NewGPUs over every GPU of the host (two or more) gives,
// for TFHELib128 grouped by 3 and plain, the outputs of one GPU engine on
// every sample and the CPU engine's on a subset (sampleIndices), for
// batches of 1 to 10,000 (and 40,000 grouped by 3 outside -short) and all
// three operations; NewMulti of engines built apart accepts them (the
// probe); goroutines calling it at once get their own outputs.
func TestGPUMulti(t *testing.T) {
	devices := requireGPUs(t, 2)
	p := tfhe.TFHELib128
	for _, grouping := range []int{3, 1} {
		t.Run(fmt.Sprintf("grouping=%d", grouping), func(t *testing.T) {
			kp := keyCache(p, 0, grouping)
			m, err := NewGPUs(kp.ck, nil, GPUOptions{})
			require.NoError(t, err)
			defer m.Close()
			if len(m.Engines()) != devices {
				t.Fatalf("NewGPUs built %d engines on %d GPUs", len(m.Engines()), devices)
			}
			t.Logf("%s; tiers %v", m.Name(), m.BatchTiers())
			one := newGPU(t, kp.ck, GPUOptions{})
			cpu := newCPU(t, kp.ck, CPUOptions{})
			rng := rand.New(rand.NewPCG(uint64(devices), uint64(grouping)))
			n, kn := p.LWEDimension(), p.ExtractedLWEDimension()
			batches := []int{1, 2, 7, 132, 1000, 10_000}
			if grouping == 3 && !testing.Short() {
				batches = append(batches, 40_000)
			}
			for _, count := range batches {
				in, want := mixedInputs(t, p, kp, rng, count)
				out, ext, ks := newTLWEs(count, n), newTLWEs(count, kn), newTLWEs(count, n)
				ref, extRef := newTLWEs(count, n), newTLWEs(count, kn)
				require.NoError(t, m.Bootstrap(out, in, mu8))
				require.NoError(t, m.BootstrapNoKeySwitch(ext, in, mu8))
				require.NoError(t, m.KeySwitch(ks, ext))
				require.NoError(t, one.Bootstrap(ref, in, mu8))
				require.NoError(t, one.BootstrapNoKeySwitch(extRef, in, mu8))
				for i := range out {
					switch {
					case !equalTLWE(out[i], ref[i]):
						t.Fatalf("batch %d, sample %d: Multi Bootstrap ≠ one GPU's (%s)", count, i, firstDiff(out[i], ref[i]))
					case !equalTLWE(ext[i], extRef[i]):
						t.Fatalf("batch %d, sample %d: Multi BootstrapNoKeySwitch ≠ one GPU's", count, i)
					case !equalTLWE(ks[i], ref[i]):
						t.Fatalf("batch %d, sample %d: Multi KeySwitch(BootstrapNoKeySwitch) ≠ Bootstrap", count, i)
					case i%2 == 0 && kp.sk.DecryptBool(out[i]) != want[i]:
						t.Fatalf("batch %d, gate %d decrypts wrong", count, i)
					}
				}
				idx := sampleIndices(rng, count)
				cout := newTLWEs(len(idx), n)
				require.NoError(t, cpu.Bootstrap(cout, pick(in, idx), mu8))
				for r, i := range idx {
					if !equalTLWE(out[i], cout[r]) {
						t.Fatalf("batch %d, sample %d: Multi ≠ CPU (%s)", count, i, firstDiff(out[i], cout[r]))
					}
				}
				t.Logf("batch %d: Multi = one GPU on all %d samples (three operations), = CPU on %d", count, count, len(idx))
			}

			// Goroutines making small calls at once.
			const callers, batch = 24, 20
			ins := make([][]*tfhe.TLWE, callers)
			outs := make([][]*tfhe.TLWE, callers)
			errs := make([]error, callers)
			for c := range ins {
				ins[c], _ = mixedInputs(t, p, kp, rng, batch)
				outs[c] = newTLWEs(batch, n)
			}
			var wg sync.WaitGroup
			for c := range callers {
				wg.Go(func() { errs[c] = m.Bootstrap(outs[c], ins[c], mu8) })
			}
			wg.Wait()
			for c := range callers {
				if errs[c] != nil {
					t.Fatal(errs[c])
				}
				ref := newTLWEs(batch, n)
				require.NoError(t, one.Bootstrap(ref, ins[c], mu8))
				for i := range ref {
					if !equalTLWE(outs[c][i], ref[i]) {
						t.Fatalf("caller %d, sample %d: wrong output", c, i)
					}
				}
			}
			t.Logf("%d goroutines' calls of %d: every output right", callers, batch)
		})
	}
	// Engines built apart, handed to NewMulti: its probe runs on GPUs.
	kp := keyCache(p, 0, 3)
	var engines []Engine
	for d := range 2 {
		g, err := NewGPU(kp.ck, GPUOptions{Device: d})
		require.NoError(t, err)
		engines = append(engines, g)
	}
	m, err := NewMulti(engines...)
	if err != nil {
		for _, e := range engines {
			e.Close()
		}
		t.Fatal(err)
	}
	require.NoError(t, m.Close())
}

// BenchmarkGPUMulti measures TFHELib128 grouped by 3 on 1, 2, 4 and 8 GPUs
// (those the host has) through NewGPUs: gates/s and ms per batch. Names:
// BenchmarkGPUMulti/gpus=2/batch=16384.
func BenchmarkGPUMulti(b *testing.B) {
	have := requireGPUs(b, 1)
	p := tfhe.TFHELib128
	kp := keyCache(p, 0, 3)
	batches := []int{1, 132, 1024, 4096, 16_384, 65_536}
	ins := map[int][]*tfhe.TLWE{}
	for _, count := range batches {
		ins[count], _ = nandInputs(b, p, newEncryptor(b, kp.sk, count), count)
	}
	for _, gpus := range []int{1, 2, 4, 8} {
		if gpus > have {
			break
		}
		devices := make([]int, gpus)
		for i := range devices {
			devices[i] = i
		}
		m, err := NewGPUs(kp.ck, devices, GPUOptions{})
		if err != nil {
			b.Fatal(err)
		}
		for _, count := range batches {
			in, out := ins[count], newTLWEs(count, p.LWEDimension())
			b.Run(fmt.Sprintf("gpus=%d/batch=%d", gpus, count), func(b *testing.B) {
				for b.Loop() {
					if err := m.Bootstrap(out, in, mu8); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.N*count)/b.Elapsed().Seconds(), "gates/s")
				b.ReportMetric(b.Elapsed().Seconds()*1e3/float64(b.N), "ms/batch")
			})
		}
		if err := m.Close(); err != nil {
			b.Fatal(err)
		}
	}
}
