//go:build !(linux && (amd64 || arm64))

package kernels

import (
	"fmt"
	"runtime"
)

// The CUDA driver is reached through purego on linux/amd64 and linux/arm64
// only; elsewhere every entry point reports ErrNoDriver.

func dlopen(path string) (uintptr, error) {
	return 0, fmt.Errorf("CUDA driver binding not supported on %s/%s", runtime.GOOS, runtime.GOARCH)
}

func dlsym(h uintptr, name string) (uintptr, error) {
	return 0, fmt.Errorf("%s: not supported on %s/%s", name, runtime.GOOS, runtime.GOARCH)
}

func dlclose(h uintptr) {}

func callC(fn uintptr, args ...uintptr) Result {
	panic("kernels: callC without a driver")
}
