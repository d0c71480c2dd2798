//go:build linux && (amd64 || arm64)

package kernels

import (
	"runtime"

	"github.com/ebitengine/purego"
)

// dlopen opens a shared library through purego (no cgo). RTLD_LOCAL: its
// symbols are looked up through the handle only, and an unusable library
// loadFirst leaves loaded does not interpose on the next one's. The thread
// is locked because purego reads dlerror, which is per thread, after the
// call: a goroutine moved in between would read an empty message.
func dlopen(path string) (uintptr, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_LOCAL)
}

// dlsym looks a symbol up; a missing one is an error, never a panic.
func dlsym(h uintptr, name string) (uintptr, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return purego.Dlsym(h, name)
}

// dlclose closes a library dlopen opened (loadFirst's that failed to bind).
func dlclose(h uintptr) { purego.Dlclose(h) }

// callC calls the C function at fn. CUresult is a 32-bit C enum: only the
// low half of the return register is defined.
//
//go:uintptrescapes
func callC(fn uintptr, args ...uintptr) Result {
	r, _, _ := purego.SyscallN(fn, args...)
	return Result(int32(r))
}
