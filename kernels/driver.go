package kernels

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"unsafe"
)

// sym indexes the driver entry points this package calls. Every name is the
// ABI name the CUDA 12/13 headers' #defines resolve to (cuMemAlloc is
// cuMemAlloc_v2, …), legacy default-stream flavour (not _ptds/_ptsz).
type sym int

const (
	symInit sym = iota
	symDriverGetVersion
	symGetErrorName
	symGetErrorString
	symDeviceGetCount
	symDeviceGet
	symDeviceGetName
	symDeviceTotalMem
	symDeviceGetAttribute
	symDeviceGetUuid
	symDevicePrimaryCtxRetain
	symDevicePrimaryCtxRelease
	symCtxGetCurrent
	symCtxPushCurrent
	symCtxPopCurrent
	symCtxSynchronize
	symMemGetInfo
	symModuleLoadData
	symModuleLoadFatBinary
	symModuleUnload
	symModuleGetFunction
	symFuncSetAttribute
	symFuncGetAttribute
	symMemAlloc
	symMemFree
	symMemsetD8
	symMemsetD32
	symMemsetD8Async
	symMemsetD32Async
	symMemHostAlloc
	symMemFreeHost
	symMemcpyHtoD
	symMemcpyDtoH
	symMemcpyDtoD
	symMemcpyHtoDAsync
	symMemcpyDtoHAsync
	symMemcpyDtoDAsync
	symStreamCreate
	symStreamDestroy
	symStreamSynchronize
	symStreamWaitEvent
	symEventCreate
	symEventDestroy
	symEventRecord
	symEventSynchronize
	symEventQuery
	symEventElapsedTime
	symLaunchKernel
	symLaunchKernelEx
	symOccupancyMaxActiveBlocks
	numSyms
)

// symNames are the exported symbol names, indexed by sym. The C prototype
// of each is in the comment; C int/unsigned int map to int32/uint32,
// size_t and CUdeviceptr to uint64, handles (pointers) to uintptr.
var symNames = [numSyms]string{
	symInit:                     "cuInit",                                      // (unsigned int flags)
	symDriverGetVersion:         "cuDriverGetVersion",                          // (int *version)
	symGetErrorName:             "cuGetErrorName",                              // (CUresult, const char **)
	symGetErrorString:           "cuGetErrorString",                            // (CUresult, const char **)
	symDeviceGetCount:           "cuDeviceGetCount",                            // (int *count)
	symDeviceGet:                "cuDeviceGet",                                 // (CUdevice *, int ordinal)
	symDeviceGetName:            "cuDeviceGetName",                             // (char *, int len, CUdevice)
	symDeviceTotalMem:           "cuDeviceTotalMem_v2",                         // (size_t *, CUdevice)
	symDeviceGetAttribute:       "cuDeviceGetAttribute",                        // (int *, CUdevice_attribute, CUdevice)
	symDeviceGetUuid:            "cuDeviceGetUuid_v2",                          // (CUuuid *, CUdevice)
	symDevicePrimaryCtxRetain:   "cuDevicePrimaryCtxRetain",                    // (CUcontext *, CUdevice)
	symDevicePrimaryCtxRelease:  "cuDevicePrimaryCtxRelease_v2",                // (CUdevice)
	symCtxGetCurrent:            "cuCtxGetCurrent",                             // (CUcontext *)
	symCtxPushCurrent:           "cuCtxPushCurrent_v2",                         // (CUcontext)
	symCtxPopCurrent:            "cuCtxPopCurrent_v2",                          // (CUcontext *, may be NULL)
	symCtxSynchronize:           "cuCtxSynchronize",                            // (void)
	symMemGetInfo:               "cuMemGetInfo_v2",                             // (size_t *free, size_t *total)
	symModuleLoadData:           "cuModuleLoadData",                            // (CUmodule *, const void *image)
	symModuleLoadFatBinary:      "cuModuleLoadFatBinary",                       // (CUmodule *, const void *fatCubin)
	symModuleUnload:             "cuModuleUnload",                              // (CUmodule)
	symModuleGetFunction:        "cuModuleGetFunction",                         // (CUfunction *, CUmodule, const char *)
	symFuncSetAttribute:         "cuFuncSetAttribute",                          // (CUfunction, CUfunction_attribute, int)
	symFuncGetAttribute:         "cuFuncGetAttribute",                          // (int *, CUfunction_attribute, CUfunction)
	symMemAlloc:                 "cuMemAlloc_v2",                               // (CUdeviceptr *, size_t)
	symMemFree:                  "cuMemFree_v2",                                // (CUdeviceptr)
	symMemsetD8:                 "cuMemsetD8_v2",                               // (CUdeviceptr, unsigned char, size_t n)
	symMemsetD32:                "cuMemsetD32_v2",                              // (CUdeviceptr, unsigned int, size_t n)
	symMemsetD8Async:            "cuMemsetD8Async",                             // (CUdeviceptr, unsigned char, size_t, CUstream)
	symMemsetD32Async:           "cuMemsetD32Async",                            // (CUdeviceptr, unsigned int, size_t, CUstream)
	symMemHostAlloc:             "cuMemHostAlloc",                              // (void **, size_t, unsigned int flags)
	symMemFreeHost:              "cuMemFreeHost",                               // (void *)
	symMemcpyHtoD:               "cuMemcpyHtoD_v2",                             // (CUdeviceptr dst, const void *src, size_t)
	symMemcpyDtoH:               "cuMemcpyDtoH_v2",                             // (void *dst, CUdeviceptr src, size_t)
	symMemcpyDtoD:               "cuMemcpyDtoD_v2",                             // (CUdeviceptr dst, CUdeviceptr src, size_t)
	symMemcpyHtoDAsync:          "cuMemcpyHtoDAsync_v2",                        // (…, CUstream)
	symMemcpyDtoHAsync:          "cuMemcpyDtoHAsync_v2",                        // (…, CUstream)
	symMemcpyDtoDAsync:          "cuMemcpyDtoDAsync_v2",                        // (…, CUstream)
	symStreamCreate:             "cuStreamCreate",                              // (CUstream *, unsigned int flags)
	symStreamDestroy:            "cuStreamDestroy_v2",                          // (CUstream)
	symStreamSynchronize:        "cuStreamSynchronize",                         // (CUstream)
	symStreamWaitEvent:          "cuStreamWaitEvent",                           // (CUstream, CUevent, unsigned int flags)
	symEventCreate:              "cuEventCreate",                               // (CUevent *, unsigned int flags)
	symEventDestroy:             "cuEventDestroy_v2",                           // (CUevent)
	symEventRecord:              "cuEventRecord",                               // (CUevent, CUstream)
	symEventSynchronize:         "cuEventSynchronize",                          // (CUevent)
	symEventQuery:               "cuEventQuery",                                // (CUevent)
	symEventElapsedTime:         "cuEventElapsedTime",                          // (float *ms, CUevent start, CUevent end)
	symLaunchKernel:             "cuLaunchKernel",                              // (CUfunction, 3×grid, 3×block, shmem, CUstream, void **params, void **extra)
	symLaunchKernelEx:           "cuLaunchKernelEx",                            // (const CUlaunchConfig *, CUfunction, void **params, void **extra)
	symOccupancyMaxActiveBlocks: "cuOccupancyMaxActiveBlocksPerMultiprocessor", // (int *numBlocks, CUfunction, int blockSize, size_t dynamicSMemSize)
}

func (s sym) String() string {
	if s >= 0 && s < numSyms {
		return symNames[s]
	}
	return fmt.Sprintf("sym(%d)", int(s))
}

// driver is a loaded libcuda with its entry points resolved and cuInit done.
type driver struct {
	path string                      // the library file that was opened
	fns  [numSyms]uintptr            // entry points, indexed by sym
	fake func(sym, []uintptr) Result // tests: replaces the C calls when set
}

// call invokes entry point s with C arguments already converted to uintptr
// (unsigned values zero-extended; pointers converted in the argument list
// itself, so that go:uintptrescapes keeps what they point to alive and in
// place for the duration of the call).
//
//go:uintptrescapes
func (d *driver) call(s sym, args ...uintptr) Result {
	if d.fake != nil {
		return d.fake(s, args)
	}
	return callC(d.fns[s], args...)
}

// err returns nil for success and an *Error naming what for any other code.
func (d *driver) err(what string, r Result) error {
	if r == resultSuccess {
		return nil
	}
	e := &Error{Call: what, Code: r}
	e.Name = d.errorString(symGetErrorName, r)
	e.Text = d.errorString(symGetErrorString, r)
	return e
}

// errorString asks the driver for the name or the text of r ("" if it
// does not know the code).
func (d *driver) errorString(s sym, r Result) string {
	var p *byte
	if d.call(s, uintptr(uint32(r)), uintptr(unsafe.Pointer(&p))) != resultSuccess || p == nil {
		return ""
	}
	return cString(p, 512)
}

// cString copies a NUL-terminated C string of at most max bytes.
func cString(p *byte, max int) string {
	var b []byte
	for i := 0; i < max; i++ {
		c := *(*byte)(unsafe.Add(unsafe.Pointer(p), i))
		if c == 0 {
			break
		}
		b = append(b, c)
	}
	return string(b)
}

// cStringBuf returns the bytes of buf up to its first NUL.
func cStringBuf(buf []byte) string {
	for i, c := range buf {
		if c == 0 {
			return string(buf[:i])
		}
	}
	return string(buf)
}

// bind resolves every entry point through lookup, reporting all missing
// names in one error that wraps ErrNoDriver.
func bind(path string, lookup func(name string) (uintptr, error)) (*driver, error) {
	d := &driver{path: path}
	var missing []string
	for s := sym(0); s < numSyms; s++ {
		p, err := lookup(symNames[s])
		if err != nil || p == 0 {
			missing = append(missing, symNames[s])
			continue
		}
		d.fns[s] = p
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%w: %s lacks %s (driver too old?)", ErrNoDriver, path, strings.Join(missing, ", "))
	}
	return d, nil
}

// libraryCandidates lists the files tried, in order, to find libcuda:
// GOLDFHE_LIBCUDA if set (alone), else the bare soname (the dynamic
// loader's own search: LD_LIBRARY_PATH, ld.so.cache), then every
// LD_LIBRARY_PATH entry and the usual driver directories explicitly.
func libraryCandidates(getenv func(string) string) []string {
	if p := getenv("GOLDFHE_LIBCUDA"); p != "" {
		return []string{p}
	}
	names := []string{"libcuda.so.1", "libcuda.so"}
	dirs := filepath.SplitList(getenv("LD_LIBRARY_PATH"))
	dirs = append(dirs,
		"/usr/local/nvidia/lib64",
		"/usr/local/nvidia/lib",
		"/usr/lib/x86_64-linux-gnu",
		"/usr/lib/aarch64-linux-gnu",
		"/usr/lib64",
		"/usr/lib",
		"/usr/lib/wsl/lib",
	)
	out := append([]string(nil), names...)
	seen := map[string]bool{}
	for _, dir := range dirs {
		if dir == "" {
			continue
		}
		for _, n := range names {
			p := filepath.Join(dir, n)
			if !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	return out
}

// loadDriver opens libcuda, binds the entry points and calls cuInit(0).
func loadDriver() (*driver, error) {
	return loadFirst(libraryCandidates(os.Getenv), dlopen, dlsym, dlclose, (*driver).init)
}

// loadFirst returns the driver of the first of paths that opens, binds and
// initializes. After a library that opens but fails the rest (a toolkit's
// stub library, whose cuInit says CUDA_ERROR_STUB_LIBRARY, or a driver too
// old) the search goes on, so that one found first through LD_LIBRARY_PATH
// does not hide the driver in a system directory; its error is the one
// returned when no library is usable. A library that failed to bind is
// closed (nothing in it ran); one whose cuInit ran stays loaded, as
// unloading code that may have registered thread or exit hooks is unsafe.
// Libraries are opened RTLD_LOCAL (dlopen), so such a library's symbols do
// not stand in for the next one's.
func loadFirst(paths []string, open func(string) (uintptr, error), lookup func(uintptr, string) (uintptr, error),
	unload func(uintptr), init func(*driver) error) (*driver, error) {
	var openErr, libErr error
	for _, path := range paths {
		if strings.ContainsRune(path, '/') {
			if _, err := os.Stat(path); err != nil {
				continue
			}
		}
		h, err := open(path)
		if err != nil {
			if openErr == nil {
				openErr = err
			}
			continue
		}
		d, err := bind(path, func(name string) (uintptr, error) { return lookup(h, name) })
		if err != nil {
			unload(h)
		} else if err = init(d); err == nil {
			return d, nil
		}
		if libErr == nil {
			libErr = err
		}
	}
	if libErr != nil {
		return nil, libErr
	}
	msg := "libcuda.so.1 not found"
	if p := os.Getenv("GOLDFHE_LIBCUDA"); p != "" {
		msg = "GOLDFHE_LIBCUDA=" + p + " cannot be opened"
	}
	if openErr != nil {
		return nil, fmt.Errorf("%w: %s (%v)", ErrNoDriver, msg, openErr)
	}
	return nil, fmt.Errorf("%w: %s", ErrNoDriver, msg)
}

// init calls cuInit(0). Whatever code it fails with, there is no driver to
// use, so its error matches ErrNoDriver (or ErrNoDevice for
// CUDA_ERROR_NO_DEVICE): cuInit gives CUDA_ERROR_UNKNOWN, say, when the
// kernel module and libcuda disagree, which on a context would mean a device
// fault instead.
func (d *driver) init() error {
	err := d.err("cuInit", d.call(symInit, 0))
	if err == nil || errors.Is(err, ErrNoDriver) || errors.Is(err, ErrNoDevice) {
		return err
	}
	return &initError{err.(*Error)}
}

// initError is a failed cuInit whose code maps to another sentinel or none.
// It matches ErrNoDriver only, and errors.As still gives the *Error.
type initError struct{ err *Error }

func (e *initError) Error() string { return e.err.Error() }
func (e *initError) Unwrap() error { return ErrNoDriver }
func (e *initError) As(target any) bool {
	p, ok := target.(**Error)
	if ok {
		*p = e.err
	}
	return ok
}

// theDriver is the process's driver, loaded on first use. cuInit is
// process-wide and a missing driver does not appear later, so the result
// (and the error) is kept.
var theDriver = sync.OnceValues(loadDriver)

// Driver checks that a CUDA driver can be loaded and initialised, and
// returns its version (e.g. 13000 for CUDA 13.0) and the library file.
// Its error wraps ErrNoDriver or ErrNoDevice and is the reason to give when
// falling back to the CPU.
func Driver() (version int, path string, err error) {
	d, err := theDriver()
	if err != nil {
		return 0, "", err
	}
	var v int32
	if err := d.err("cuDriverGetVersion", d.call(symDriverGetVersion, uintptr(unsafe.Pointer(&v)))); err != nil {
		return 0, d.path, err
	}
	return int(v), d.path, nil
}
