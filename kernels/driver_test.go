package kernels

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// abiVersioned are the functions of this package's set that cuda.h (CUDA
// 12/13) #defines to a _v2 ABI name; every other one is exported under its
// plain name.
var abiVersioned = map[string]bool{
	"cuDeviceTotalMem": true, "cuDeviceGetUuid": true, "cuDevicePrimaryCtxRelease": true, "cuMemGetInfo": true,
	"cuCtxPushCurrent": true, "cuCtxPopCurrent": true,
	"cuMemAlloc": true, "cuMemFree": true, "cuMemsetD8": true, "cuMemsetD32": true,
	"cuMemcpyHtoD": true, "cuMemcpyDtoH": true, "cuMemcpyDtoD": true,
	"cuMemcpyHtoDAsync": true, "cuMemcpyDtoHAsync": true, "cuMemcpyDtoDAsync": true,
	"cuStreamDestroy": true, "cuEventDestroy": true,
}

func TestSymbolTable(t *testing.T) {
	seen := map[string]bool{}
	for s := sym(0); s < numSyms; s++ {
		name := symNames[s]
		if name == "" || !strings.HasPrefix(name, "cu") {
			t.Fatalf("sym %d has name %q", s, name)
		}
		if seen[name] {
			t.Errorf("%s bound twice", name)
		}
		seen[name] = true
		if strings.Contains(name, "_pt") {
			t.Errorf("%s: per-thread default stream flavour; bind the legacy one", name)
		}
		base := strings.TrimSuffix(name, "_v2")
		if abiVersioned[base] != strings.HasSuffix(name, "_v2") {
			t.Errorf("%s: cuda.h resolves %s to %s", name, base, map[bool]string{true: base + "_v2", false: base}[abiVersioned[base]])
		}
		if s.String() != name {
			t.Errorf("sym %d String %q", s, s.String())
		}
	}
	for base := range abiVersioned {
		if !seen[base+"_v2"] {
			t.Errorf("%s_v2 listed as versioned but not bound", base)
		}
	}
}

func TestBindMissingSymbols(t *testing.T) {
	d, err := bind("libfake.so", func(name string) (uintptr, error) {
		if name == "cuLaunchKernel" || name == "cuMemAlloc_v2" {
			return 0, fmt.Errorf("undefined symbol: %s", name)
		}
		return 1, nil
	})
	if d != nil {
		t.Fatal("bind succeeded with missing symbols")
	}
	require.ErrorIs(t, err, ErrNoDriver)
	for _, want := range []string{"kernels: no CUDA driver: libfake.so lacks ", "cuMemAlloc_v2", "cuLaunchKernel"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	d, err = bind("libfake.so", func(string) (uintptr, error) { return 1, nil })
	require.NoError(t, err)
	for s, p := range d.fns {
		if p != 1 {
			t.Errorf("%v not bound", sym(s))
		}
	}
}

// TestBindRealLibrary binds against a real shared library that is not
// libcuda: every symbol is missing, and that is an error, not a panic.
func TestBindRealLibrary(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("dlopen through purego is used on linux only")
	}
	h, err := dlopen("libc.so.6")
	if err != nil {
		t.Skipf("cannot dlopen libc.so.6 to test against: %v", err)
	}
	if p, err := dlsym(h, "getpid"); err != nil || p == 0 {
		t.Fatalf("dlsym(getpid) = %#x, %v", p, err)
	}
	_, err = bind("libc.so.6", func(name string) (uintptr, error) { return dlsym(h, name) })
	require.ErrorIs(t, err, ErrNoDriver)
	if !strings.Contains(err.Error(), "cuInit") {
		t.Errorf("error %q does not name cuInit", err)
	}
}

func TestLibraryCandidates(t *testing.T) {
	env := map[string]string{"LD_LIBRARY_PATH": "/opt/a::/opt/b"}
	got := libraryCandidates(func(k string) string { return env[k] })
	want := []string{"libcuda.so.1", "libcuda.so", "/opt/a/libcuda.so.1", "/opt/a/libcuda.so",
		"/opt/b/libcuda.so.1", "/opt/b/libcuda.so", "/usr/local/nvidia/lib64/libcuda.so.1"}
	if !slices.Equal(got[:len(want)], want) {
		t.Errorf("candidates start %q, want %q", got[:len(want)], want)
	}
	if !slices.Contains(got, "/usr/lib/x86_64-linux-gnu/libcuda.so.1") {
		t.Errorf("candidates %q miss /usr/lib/x86_64-linux-gnu", got)
	}
	env["GOLDFHE_LIBCUDA"] = "/x/libcuda.so.1"
	if got := libraryCandidates(func(k string) string { return env[k] }); !slices.Equal(got, []string{"/x/libcuda.so.1"}) {
		t.Errorf("with GOLDFHE_LIBCUDA: %q", got)
	}
}

// TestLoadFirstGoesOn: after a library that opens but does not bind (closed)
// or whose cuInit fails (a toolkit's stub, first on LD_LIBRARY_PATH) the
// next one is tried; the first such error is the one returned when none is
// usable. It used to end the search.
func TestLoadFirstGoesOn(t *testing.T) {
	// Bare names: loadFirst stats only paths with a slash.
	handles := map[string]uintptr{"stub.so": 1, "old.so": 2, "real.so": 3}
	open := func(path string) (uintptr, error) {
		if h, ok := handles[path]; ok {
			return h, nil
		}
		return 0, fmt.Errorf("%s: cannot open", path)
	}
	lookup := func(h uintptr, name string) (uintptr, error) {
		if h == 2 && name == "cuLaunchKernelEx" {
			return 0, errors.New("undefined symbol")
		}
		return 0x1000 + h, nil
	}
	var closed []uintptr
	unload := func(h uintptr) { closed = append(closed, h) }
	stubErr := &Error{Call: "cuInit", Code: 34, Name: "CUDA_ERROR_STUB_LIBRARY"}
	init := func(d *driver) error {
		if d.path == "stub.so" {
			return &initError{stubErr}
		}
		return nil
	}
	d, err := loadFirst([]string{"none.so", "stub.so", "old.so", "real.so"}, open, lookup, unload, init)
	if err != nil || d.path != "real.so" {
		t.Fatalf("loadFirst = %v, %v; want the driver of real.so", d, err)
	}
	if !slices.Equal(closed, []uintptr{2}) {
		t.Errorf("closed handles %v, want [2]: the old driver, which failed to bind (the stub's cuInit ran)", closed)
	}
	closed = nil
	_, err = loadFirst([]string{"none.so", "stub.so", "old.so"}, open, lookup, unload, init)
	var e *Error
	if !errors.Is(err, ErrNoDriver) || !errors.As(err, &e) || e.Code != 34 {
		t.Errorf("no usable library: %v, want the stub's cuInit error (ErrNoDriver, code 34)", err)
	}
	_, err = loadFirst([]string{"none.so"}, open, lookup, unload, init)
	if !errors.Is(err, ErrNoDriver) || !strings.Contains(err.Error(), "none.so: cannot open") {
		t.Errorf("nothing opens: %v", err)
	}
}

// TestDriver reports what this machine has. Without a driver the error
// must say so in a form fit to show a user.
func TestDriver(t *testing.T) {
	v, path, err := Driver()
	if err != nil {
		if !errors.Is(err, ErrNoDriver) && !errors.Is(err, ErrNoDevice) {
			t.Fatalf("Driver: %v (wraps neither ErrNoDriver nor ErrNoDevice)", err)
		}
		if !strings.HasPrefix(err.Error(), "kernels: ") {
			t.Errorf("error %q lacks the kernels: prefix", err)
		}
		if _, err2 := Open(0); !errors.Is(err2, ErrNoDriver) && !errors.Is(err2, ErrNoDevice) {
			t.Errorf("Open without a driver: %v", err2)
		}
		if _, err2 := Devices(); err2 == nil {
			t.Error("Devices without a driver succeeded")
		}
		t.Skip(err.Error())
	}
	t.Logf("CUDA driver %d.%d at %s", v/1000, v%1000/10, path)
	if v < 11000 {
		t.Errorf("driver version %d", v)
	}
}
