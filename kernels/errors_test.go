package kernels

import (
	"errors"
	"strings"
	"testing"
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
		{35, ErrNoDriver},
		{100, ErrNoDevice},
		{101, ErrNoDevice},
		{200, ErrBadImage},
		{209, ErrBadImage},
		{218, ErrBadImage},
		{222, ErrBadImage},
		{700, ErrLaunchFailed},
		{715, ErrLaunchFailed},
		{719, ErrLaunchFailed},
		{701, nil}, // too many resources requested: not sticky
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
	wantErr(t, err, ErrArgument)
	err = opErr("DeviceBuffer.Free", ErrFreed)
	if got, want := err.Error(), "kernels: DeviceBuffer.Free: buffer used after Free"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	wantErr(t, err, ErrFreed)
	for _, s := range []error{ErrNoDriver, ErrNoDevice, ErrOutOfMemory, ErrInvalidValue, ErrNoFatbin,
		ErrBadImage, ErrLaunchFailed, ErrArgument, ErrFreed, ErrClosed} {
		if !strings.HasPrefix(s.Error(), "kernels: ") {
			t.Errorf("sentinel %q lacks the kernels: prefix", s)
		}
	}
}
