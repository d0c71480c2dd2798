package kernels_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/goldfhe/goldfhe/kernels"
	"github.com/goldfhe/goldfhe/kernels/gpuntt"
	"github.com/goldfhe/goldfhe/smallntt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFakeGPUNTT checks the fake driver's NTT launches (fake_ntt_test.go)
// through gpuntt, as the GPU engine's step kernels use them: every plan
// variant's Forward equals the CPU plan's and Inverse undoes it, for a few
// sizes and factorisations, so that the engine tests on the fake
// (engine_fake_test.go) rest on transforms checked here. gpuntt's own
// TestGPUMatchesCPU checks the GPU's.
func TestFakeGPUNTT(t *testing.T) {
	kernels.UseFakeDriver(t, kernels.FakeOptions{SMs: fakeSMs})
	d, err := gpuntt.Open(0)
	require.NoError(t, err)
	defer d.Close()
	rng := rand.New(rand.NewPCG(1, 9))
	for _, c := range []struct {
		n int
		v smallntt.Variant
		f []int
	}{
		{256, smallntt.Butterfly, nil},
		{1024, smallntt.Butterfly, nil},
		{1024, smallntt.Hybrid, []int{32, 32}},
		{512, smallntt.Hybrid, []int{16, 32}},
		{1024, smallntt.Matrix, []int{8, 8, 16}},
		{256, smallntt.MatrixNoMerge, []int{16, 16}},
	} {
		p, err := smallntt.NewPlan(c.n, c.v, c.f...)
		require.NoError(t, err)
		t.Run(fmt.Sprint(p), func(t *testing.T) {
			g, err := d.NewPlan(p)
			require.NoError(t, err)
			defer g.Close()
			const count = 5
			in := make([]uint64, count*c.n)
			for i := range in {
				in[i] = rng.Uint64N(smallntt.P)
			}
			want := make([]uint64, len(in))
			for i := range count {
				p.Forward(smallntt.NTTPoly(want[i*c.n:(i+1)*c.n]), smallntt.Poly(in[i*c.n:(i+1)*c.n]))
			}
			b, err := d.AllocPolys(c.n, count)
			require.NoError(t, err)
			defer b.Free()
			require.NoError(t, b.Upload(in))
			got := make([]uint64, len(in))
			for _, step := range []struct {
				what string
				run  func(*kernels.Stream, *gpuntt.Polys) error
				want []uint64
			}{{"Forward(x), against the CPU plan's", g.Forward, want}, {"Inverse(Forward(x)), against x", g.Inverse, in}} {
				require.NoError(t, step.run(nil, b))
				require.NoError(t, b.Download(got))
				if !slices.Equal(got, step.want) {
					t.Fatalf("%s: differs", step.what)
				}
			}
		})
	}
}

// TestFakeTransformer runs Transformer on the fake GPU, whose NTT launches
// refuse words ≥ p as the kernels cannot take them: input words the CPU
// plan takes mod p give the CPU plan's bits, a plan without a GPU kernel
// runs on the GPU as gpuntt.DefaultPlan of its size (Reason says so), and
// a closed Transformer says so rather than failing in the driver.
func TestFakeTransformer(t *testing.T) {
	kernels.UseFakeDriver(t, kernels.FakeOptions{SMs: 4})
	rng := rand.New(rand.NewPCG(5, 7))
	for _, c := range []struct {
		n    int
		v    smallntt.Variant
		f    []int
		swap bool // no GPU kernel of its own
	}{
		{1024, smallntt.Hybrid, []int{32, 32}, false},
		{1024, smallntt.Hybrid, []int{8, 8, 16}, true},
		{2048, smallntt.Hybrid, []int{16, 8, 16}, true},
		{256, smallntt.Butterfly, nil, false},
	} {
		p, err := smallntt.NewPlan(c.n, c.v, c.f...)
		require.NoError(t, err)
		t.Run(strings.ReplaceAll(p.String(), "/", "_"), func(t *testing.T) {
			if gpuntt.HasKernel(p) == c.swap || gpuntt.HasKernel(nil) {
				t.Fatalf("HasKernel = %v (nil: %v)", !c.swap, gpuntt.HasKernel(nil))
			}
			tr := gpuntt.NewTransformer(p)
			defer tr.Close()
			if !tr.OnGPU() {
				t.Fatalf("not on the fake GPU: %s", tr.Reason())
			}
			if got := strings.Contains(tr.Reason(), " run as "); got != c.swap {
				t.Errorf("Reason %q: says the plan is run as another: %v, want %v", tr.Reason(), got, c.swap)
			}
			in := make([]uint64, 3*c.n)
			for i := range in {
				in[i] = []uint64{smallntt.P, ^uint64(0), smallntt.P + 1, rng.Uint64()}[i%4]
			}
			for _, inverse := range []bool{false, true} {
				got, want := slices.Clone(in), slices.Clone(in)
				run := tr.Forward
				if inverse {
					run = tr.Inverse
				}
				require.NoError(t, run(got))
				for i := range 3 {
					w := want[i*c.n : (i+1)*c.n]
					if inverse {
						p.Inverse(w, w)
					} else {
						p.Forward(w, w)
					}
				}
				if !slices.Equal(got, want) {
					t.Errorf("inverse=%v: differs from the CPU plan on words ≥ p", inverse)
				}
			}
			require.NoError(t, tr.Close())
			if err := tr.Forward(slices.Clone(in)); err == nil || !strings.Contains(err.Error(), "Transformer used after Close") {
				t.Errorf("Forward after Close: %v, want an error saying so", err)
			}
		})
	}
}

// TestFakeTransformerSwapFails: when the plan run for one without a GPU
// kernel cannot be loaded (too little memory for its tables), the
// Transformer takes the CPU and its Reason names the plan asked for, not
// only the stand-in.
func TestFakeTransformerSwapFails(t *testing.T) {
	kernels.UseFakeDriver(t, kernels.FakeOptions{SMs: 4, Memory: 8 << 10})
	p, err := smallntt.NewPlan(1024, smallntt.Hybrid, 8, 8, 16)
	require.NoError(t, err)
	tr := gpuntt.NewTransformer(p)
	defer tr.Close()
	if tr.OnGPU() || !strings.HasPrefix(tr.Reason(), "CPU: ") || !strings.Contains(tr.Reason(), "N=1024/8x8x16/hybrid run as N=1024/32x32/hybrid") {
		t.Errorf("OnGPU %v, Reason %q: want the CPU, naming the plan and its stand-in", tr.OnGPU(), tr.Reason())
	}
}

// TestFakeTransformerAfterFailedGrowth: a Transformer whose staging buffer
// failed to grow (out of memory) goes on working for batches that fit,
// and Close leaves nothing allocated. It used to keep the freed buffer, so
// that every later batch failed with ErrFreed.
func TestFakeTransformerAfterFailedGrowth(t *testing.T) {
	f := kernels.UseFakeDriver(t, kernels.FakeOptions{SMs: 4})
	p, err := smallntt.NewPlan(256, smallntt.Butterfly)
	require.NoError(t, err)
	tr := gpuntt.NewTransformer(p)
	if !tr.OnGPU() {
		t.Fatalf("the Transformer is not on the fake GPU: %s", tr.Reason())
	}
	rng := rand.New(rand.NewPCG(3, 5))
	polys := func(k int) []uint64 {
		b := make([]uint64, 256*k)
		for i := range b {
			b[i] = rng.Uint64N(smallntt.P)
		}
		return b
	}
	require.NoError(t, tr.Forward(polys(2)))
	f.FailAfter(t, "cuMemAlloc_v2", 0, 2) // CUDA_ERROR_OUT_OF_MEMORY
	if err := tr.Forward(polys(4)); !errors.Is(err, kernels.ErrOutOfMemory) {
		t.Errorf("Forward of 4 polynomials with the allocation failing: %v, want ErrOutOfMemory", err)
	}
	one := polys(1)
	want := slices.Clone(one)
	p.Forward(smallntt.NTTPoly(want), smallntt.Poly(want))
	if err := tr.Forward(one); err != nil {
		t.Errorf("Forward of 1 polynomial after the failure: %v", err)
	} else if !slices.Equal(one, want) {
		t.Error("Forward of 1 polynomial after the failure differs from the CPU plan")
	}
	assert.NoError(t, tr.Close(), "Close")
	assert.NoError(t, tr.Close(), "second Close")
	if err := tr.Forward(one); err == nil {
		t.Error("Forward after Close succeeded")
	}
	if d, h := f.Live(); d != 0 || h != 0 {
		t.Errorf("after Close: %d device and %d pinned allocations left", d, h)
	}
}

// TestTransformerNilPlan: a Transformer of no plan says so and fails its
// transforms with an error, rather than a nil dereference.
func TestTransformerNilPlan(t *testing.T) {
	tr := gpuntt.NewTransformer(nil)
	if tr.OnGPU() || !strings.Contains(tr.Reason(), "no plan") {
		t.Errorf("OnGPU %v, Reason %q", tr.OnGPU(), tr.Reason())
	}
	if err := tr.Forward(make([]uint64, 256)); err == nil {
		t.Error("Forward without a plan succeeded")
	}
	if err := tr.Inverse(make([]uint64, 256)); err == nil {
		t.Error("Inverse without a plan succeeded")
	}
	assert.NoError(t, tr.Close(), "Close")
}
