package kernels

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestErrorText(t *testing.T) {
	e := &Error{Call: "cuMemAlloc_v2", Code: 2, Name: "CUDA_ERROR_OUT_OF_MEMORY", Text: "out of memory"}
	if got, want := e.Error(), "kernels: cuMemAlloc_v2: CUDA_ERROR_OUT_OF_MEMORY: out of memory"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	e = &Error{Call: "cuInit", Code: 12345}
	if got, want := e.Error(), "kernels: cuInit: CUresult(12345)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if errors.Unwrap(e) != nil {
		t.Errorf("unknown code unwraps to %v", errors.Unwrap(e))
	}
}

func TestErrorSentinels(t *testing.T) {
	for _, tc := range []struct {
		code Result
		want error
	}{
		{1, ErrInvalidValue},
		{2, ErrOutOfMemory},
		{3, ErrNoDriver},
		{34, ErrNoDriver},
		{36, ErrNoDriver}, // call requires a newer driver
		{100, ErrNoDevice},
		{101, ErrNoDevice},
		{200, ErrBadImage},
		{209, ErrBadImage},
		{218, ErrBadImage},
		{222, ErrBadImage},
		{221, ErrBadImage}, // PTX JIT compiler library not found
		{223, ErrBadImage}, // PTX JIT compilation disabled
		{700, ErrLaunchFailed},
		{715, ErrLaunchFailed},
		{719, ErrLaunchFailed},
		{214, ErrLaunchFailed}, // uncorrectable ECC error
		{220, ErrLaunchFailed}, // uncorrectable NVLink error
		{226, ErrLaunchFailed}, // contained hardware error
		{709, ErrLaunchFailed}, // context destroyed
		{721, ErrLaunchFailed}, // tensor memory leak
		{810, ErrLaunchFailed}, // MPS client terminated
		{911, ErrLaunchFailed}, // external device
		{999, ErrLaunchFailed}, // unknown: what a lost GPU tends to give
		{701, nil},             // too many resources requested: not sticky
		{711, nil},             // too many peers
		{720, nil},             // cooperative launch too large
		{400, nil},
	} {
		var err error = &Error{Call: "x", Code: tc.code}
		var wrapped error = &wrapped{msg: "outer", err: err}
		if tc.want == nil {
			if s := tc.code.sentinel(); s != nil {
				t.Errorf("code %d maps to %v, want none", tc.code, s)
			}
		} else if !errors.Is(wrapped, tc.want) {
			t.Errorf("code %d: errors.Is(%v) false", tc.code, tc.want)
		}
		var ce *Error
		if !errors.As(wrapped, &ce) || ce.Code != tc.code {
			t.Errorf("code %d: errors.As failed", tc.code)
		}
		if got, want := tc.code.sticky(), tc.want == ErrLaunchFailed; got != want {
			t.Errorf("code %d: sticky %v, want %v", tc.code, got, want)
		}
	}
}

func TestArgumentErrorText(t *testing.T) {
	err := argErr("Library.Mul", "dst holds %d elements", 3)
	if got, want := err.Error(), "kernels: Library.Mul: dst holds 3 elements: bad argument"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	require.ErrorIs(t, err, ErrArgument)
	err = opErr("DeviceBuffer.Free", ErrFreed)
	if got, want := err.Error(), "kernels: DeviceBuffer.Free: buffer used after Free"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	require.ErrorIs(t, err, ErrFreed)
	for _, s := range []error{ErrNoDriver, ErrNoDevice, ErrOutOfMemory, ErrInvalidValue, ErrNoFatbin,
		ErrBadImage, ErrLaunchFailed, ErrArgument, ErrFreed, ErrClosed} {
		if !strings.HasPrefix(s.Error(), "kernels: ") {
			t.Errorf("sentinel %q lacks the kernels: prefix", s)
		}
	}
}

// TestDeviceErrorsAreSticky (fake): a hardware error met by a
// synchronisation (an uncorrectable ECC error, one the GPU's containment
// caught, a GPU that stopped answering) leaves the context unusable like a
// kernel fault, so no later call computes on memory that may be corrupt; an
// error CUDA recovers from (a launch asking too much) does not.
func TestDeviceErrorsAreSticky(t *testing.T) {
	for _, tc := range []struct {
		code   Result
		name   string
		sticky bool
	}{
		{214, "CUDA_ERROR_ECC_UNCORRECTABLE", true},
		{226, "CUDA_ERROR_CONTAINED", true},
		{999, "CUDA_ERROR_UNKNOWN", true},
		{701, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, c, _ := newFake(t)
			g.fail[symCtxSynchronize] = tc.code
			err := c.Synchronize()
			var ce *Error
			if !errors.As(err, &ce) || ce.Code != tc.code || ce.Name != tc.name {
				t.Fatalf("Synchronize: %v", err)
			}
			if got := errors.Is(err, ErrLaunchFailed); got != tc.sticky {
				t.Errorf("Synchronize's error wraps ErrLaunchFailed: %v, want %v", got, tc.sticky)
			}
			_, err = Alloc[uint64](c, 1)
			if !tc.sticky {
				require.NoError(t, err)
				require.NoError(t, c.Err())
				require.NoError(t, c.Synchronize())
				return
			}
			require.ErrorIs(t, c.Err(), ErrLaunchFailed)
			require.ErrorIs(t, err, ErrLaunchFailed)
			want := "kernels: cuMemAlloc_v2: context unusable since cuCtxSynchronize failed with " + tc.name
			if !strings.HasPrefix(err.Error(), want) {
				t.Errorf("later call: %q, want it to start %q", err, want)
			}
			calls := g.calls[symMemAlloc]
			if calls != 0 {
				t.Errorf("the later Alloc reached the driver (%d calls)", calls)
			}
		})
	}
}

// TestDriverInitError (fake): whatever code cuInit fails with, the error
// says there is no driver to use (so bootstrap falls back to the CPU naming
// it), and errors.As still gives the code.
func TestDriverInitError(t *testing.T) {
	for _, tc := range []struct {
		code Result
		want error
	}{
		{999, ErrNoDriver},
		{214, ErrNoDriver},
		{resultNotInitialized, ErrNoDriver},
		{resultNoDevice, ErrNoDevice},
	} {
		g := newFakeGPU()
		g.fail[symInit] = tc.code
		d := &driver{path: "fake", fake: g.call}
		err := d.init()
		require.ErrorIs(t, err, tc.want)
		if errors.Is(err, ErrLaunchFailed) {
			t.Errorf("code %d: cuInit's error wraps ErrLaunchFailed: %v", tc.code, err)
		}
		var ce *Error
		if !errors.As(err, &ce) || ce.Code != tc.code || ce.Call != "cuInit" {
			t.Errorf("code %d: errors.As gives %+v", tc.code, ce)
		}
		if !strings.HasPrefix(err.Error(), "kernels: cuInit: ") {
			t.Errorf("code %d: text %q", tc.code, err)
		}
	}
	g := newFakeGPU()
	assert.NoError(t, (&driver{path: "fake", fake: g.call}).init(), "cuInit on a working driver")
}
