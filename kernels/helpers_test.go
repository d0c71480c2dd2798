package kernels

import (
	"errors"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// The real GPU, opened once per test binary. Tests that need it skip,
// giving the reason, when there is no driver, no device or no fatbin; any
// other failure to open is a test failure, never a skip.
var (
	gpu    = sync.OnceValues(func() (*Context, error) { return Open(0) })
	gpuLib = sync.OnceValues(func() (*Library, error) {
		c, err := gpu()
		if err != nil {
			return nil, err
		}
		return c.LoadLibrary()
	})
)

func skipOrFail(t testing.TB, err error) {
	t.Helper()
	if errors.Is(err, ErrNoDriver) || errors.Is(err, ErrNoDevice) || errors.Is(err, ErrNoFatbin) {
		t.Skip(err.Error())
	}
	t.Fatal(err)
}

func gpuContext(t testing.TB) *Context {
	t.Helper()
	c, err := gpu()
	if err != nil {
		skipOrFail(t, err)
	}
	return c
}

func gpuLibrary(t testing.TB) *Library {
	t.Helper()
	gpuContext(t)
	l, err := gpuLib()
	if err != nil {
		skipOrFail(t, err)
	}
	return l
}

// testEnv is a Context and a Library to run a test against: the fake
// driver, or the real GPU.
type testEnv struct {
	c    *Context
	l    *Library
	fake *fakeGPU // nil on the GPU
}

// both runs f against the fake driver and against the GPU (skipped, with
// the reason, where there is none).
func both(t *testing.T, f func(t *testing.T, e testEnv)) {
	t.Run("fake", func(t *testing.T) {
		g, c, l := newFake(t)
		f(t, testEnv{c: c, l: l, fake: g})
	})
	t.Run("gpu", func(t *testing.T) {
		l := gpuLibrary(t)
		f(t, testEnv{c: l.Context(), l: l})
	})
}

// devUint64 allocates n device elements and fills them with src if given.
func devUint64(t testing.TB, c *Context, src []uint64, n int) *DeviceBuffer[uint64] {
	t.Helper()
	b, err := Alloc[uint64](c, n)
	require.NoError(t, err)
	t.Cleanup(func() { b.Free() })
	if src != nil {
		require.NoError(t, b.CopyFromHost(src))
	}
	return b
}

// toHost reads a device buffer back.
func toHost(t testing.TB, b *DeviceBuffer[uint64]) []uint64 {
	t.Helper()
	out := make([]uint64, b.Len())
	require.NoError(t, b.CopyToHost(out))
	return out
}

// goldilocksEdges are values that stress the reductions.
var goldilocksEdges = []uint64{
	0, 1, 2, 3, 0xFFFF_FFFF, 1 << 32, 1<<32 + 1, 1 << 63, 1<<63 - 1,
	0xFFFF_FFFF_0000_0000, 0xFFFF_FFFF_0000_0001 - 1, 0xFFFF_FFFF_0000_0001 - 2,
	0xFFFF_FFFF_0000_0001, 0xFFFF_FFFF_0000_0002, 1<<64 - 1, 1<<64 - 2,
}

// randomWords returns n words: the edge values first, then random ones,
// canonical if canon.
func randomWords(rng *rand.Rand, n int, canon bool) []uint64 {
	out := make([]uint64, n)
	for i := range out {
		if i < len(goldilocksEdges) {
			out[i] = goldilocksEdges[i]
		} else {
			out[i] = rng.Uint64()
		}
		if canon && out[i] >= 0xFFFF_FFFF_0000_0001 {
			out[i] -= 0xFFFF_FFFF_0000_0001
		}
	}
	return out
}
