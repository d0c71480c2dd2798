package kernels_test

import (
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/goldfhe/goldfhe/bootstrap"
	"github.com/goldfhe/goldfhe/kernels"
	"github.com/goldfhe/goldfhe/tfhe"
	"github.com/stretchr/testify/require"
)

// TestFakeGPUEngineDropped: a GPU engine dropped without Close — by
// itself, in the Multi of NewGPUs, or in the Selected of New — is closed
// once the garbage collector finds it unreachable: its device and pinned
// host memory are freed and its context released. An engine closed before
// it is dropped releases nothing twice.
func TestFakeGPUEngineDropped(t *testing.T) {
	k := newFakeKeys(t, smallN(tfhe.TFHELib128), 1)
	in, _ := k.inputs(t, rand.New(rand.NewPCG(13, 14)), 3)
	for _, tc := range []struct {
		name   string
		closed bool // closed before it is dropped
		build  func() (bootstrap.Engine, error)
	}{
		{"GPU", false, func() (bootstrap.Engine, error) { return bootstrap.NewGPU(k.ck, bootstrap.GPUOptions{}) }},
		{"NewGPUs", false, func() (bootstrap.Engine, error) { return bootstrap.NewGPUs(k.ck, nil, bootstrap.GPUOptions{}) }},
		{"New", false, func() (bootstrap.Engine, error) { return bootstrap.New(k.ck, bootstrap.Options{Use: bootstrap.UseGPU}) }},
		{"closed", true, func() (bootstrap.Engine, error) { return bootstrap.NewGPUs(k.ck, nil, bootstrap.GPUOptions{}) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := kernels.UseFakeDriver(t, kernels.FakeOptions{SMs: fakeSMs, Devices: 2})
			released := func() bool {
				dev, host := fake.Live()
				return dev == 0 && host == 0 && fake.Contexts() == 0
			}
			func() {
				e, err := tc.build()
				require.NoError(t, err)
				require.NoError(t, e.Bootstrap(newSamples(len(in), k.p.LWEDimension()), in, mu8))
				if released() {
					t.Fatal("an open engine holds no memory or context")
				}
				if tc.closed {
					require.NoError(t, e.Close())
				}
			}()
			// A cleanup runs some time after the collection that finds
			// its engine unreachable, and the close it starts runs on a
			// goroutine of its own. A few collections at least, for a
			// closed engine's cleanup to have its chance to release twice.
			deadline := time.Now().Add(5 * time.Second)
			for i := 0; (i < 5 || !released()) && time.Now().Before(deadline); i++ {
				runtime.GC()
				time.Sleep(5 * time.Millisecond)
			}
			dev, host := fake.Live()
			if n := fake.Contexts(); dev != 0 || host != 0 || n != 0 {
				t.Errorf("dropped: %d device and %d pinned host allocations left, %d contexts retained (negative: released too often)", dev, host, n)
			}
		})
	}
}
