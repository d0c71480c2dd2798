package kernels

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors. Every error this package returns starts with "kernels:"
// and wraps at most one of these, so callers can test it with errors.Is.
var (
	// ErrNoDriver: libcuda.so.1 could not be found or opened, lacks a symbol
	// this package binds, or is a stub or too old for the call.
	ErrNoDriver = errors.New("kernels: no CUDA driver")
	// ErrNoDevice: the driver is there but reports no usable GPU (or the
	// ordinal asked for does not exist).
	ErrNoDevice = errors.New("kernels: no CUDA device")
	// ErrOutOfMemory: device or pinned host memory is exhausted.
	ErrOutOfMemory = errors.New("kernels: out of memory")
	// ErrInvalidValue: CUDA rejected a value (CUDA_ERROR_INVALID_VALUE),
	// e.g. a launch configuration beyond the device's limits.
	ErrInvalidValue = errors.New("kernels: invalid value")
	// ErrNoFatbin: the kernel image is missing or empty (not built yet, or
	// GOLDFHE_FATBIN names a file that cannot be read).
	ErrNoFatbin = errors.New("kernels: no fatbin")
	// ErrBadImage: the driver cannot load the kernel image on this device:
	// no SASS or PTX for its architecture, PTX newer than the driver, PTX
	// it cannot JIT-compile (the JIT library missing or the JIT disabled),
	// or a corrupt file; or LoadModule found, before calling the driver, that
	// the image is truncated (its headers declare more bytes than it has)
	// or is no image (a fatbin wrapper struct, which holds pointers).
	ErrBadImage = errors.New("kernels: kernel image not loadable on this device")
	// ErrLaunchFailed: a kernel faulted (illegal address, illegal
	// instruction, timeout, …) or the device failed under it (an
	// uncorrectable ECC error, an error its containment caught, a GPU that
	// stopped answering). Such errors are sticky: the CUDA context is
	// unusable afterwards, and every later call on it fails with this error
	// too. Only a new process recovers (and, after a hardware error, maybe
	// only a reset GPU).
	ErrLaunchFailed = errors.New("kernels: device fault (context unusable)")
	// ErrArgument: a Go-side argument check failed before any CUDA call.
	ErrArgument = errors.New("kernels: bad argument")
	// ErrFreed: a device or pinned host buffer was used after Free.
	ErrFreed = errors.New("kernels: buffer used after Free")
	// ErrClosed: a Context, Stream, Event, Module or Library was used after
	// Close.
	ErrClosed = errors.New("kernels: used after Close")
)

// Result is a CUDA driver API status code (CUresult, a C enum: int32).
type Result int32

// CUresult values this package interprets. The numbers are cuda.h's.
const (
	resultSuccess             Result = 0
	resultInvalidValue        Result = 1
	resultOutOfMemory         Result = 2
	resultNotInitialized      Result = 3
	resultDeinitialized       Result = 4
	resultStubLibrary         Result = 34
	resultNeedsNewerDriver    Result = 36 // CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER
	resultDeviceUnavailable   Result = 46
	resultNoDevice            Result = 100
	resultInvalidDevice       Result = 101
	resultInvalidImage        Result = 200
	resultNoBinaryForGPU      Result = 209
	resultECCUncorrectable    Result = 214
	resultInvalidPTX          Result = 218
	resultJITNotFound         Result = 221
	resultNVLinkUncorrectable Result = 220
	resultUnsupportedPTX      Result = 222
	resultJITDisabled         Result = 223
	resultContained           Result = 226
	resultNotFound            Result = 500
	resultNotReady            Result = 600
	resultIllegalAddress      Result = 700
	resultLaunchTimeout       Result = 702
	resultContextDestroyed    Result = 709
	resultAssert              Result = 710
	resultHardwareStack       Result = 714
	resultIllegalInstruction  Result = 715
	resultMisalignedAddress   Result = 716
	resultInvalidAddrSpace    Result = 717
	resultInvalidPC           Result = 718
	resultLaunchFailed        Result = 719
	resultTensorMemoryLeak    Result = 721
	resultSystemDriverMism    Result = 803
	resultCompatNotSupported  Result = 804
	resultMPSClientGone       Result = 810
	resultExternalDevice      Result = 911
	resultUnknown             Result = 999
)

// sentinel returns the sentinel error a CUresult maps to, or nil.
func (r Result) sentinel() error {
	switch r {
	case resultInvalidValue:
		return ErrInvalidValue
	case resultOutOfMemory:
		return ErrOutOfMemory
	case resultNotInitialized, resultDeinitialized, resultStubLibrary,
		resultNeedsNewerDriver, resultSystemDriverMism, resultCompatNotSupported:
		return ErrNoDriver
	case resultNoDevice, resultInvalidDevice, resultDeviceUnavailable:
		return ErrNoDevice
	case resultInvalidImage, resultNoBinaryForGPU, resultInvalidPTX, resultUnsupportedPTX,
		resultJITNotFound, resultJITDisabled:
		return ErrBadImage
	}
	if r.sticky() {
		return ErrLaunchFailed
	}
	return nil
}

// sticky reports whether r leaves the context unusable. Most of these cuda.h
// documents as leaving "the process in an inconsistent state" (or "the
// context cannot be used"): kernel faults, a contained hardware error, a
// tensor-memory leak, a failed external device, a terminated MPS client.
// cuda.h says nothing of what follows an uncorrectable ECC or NVLink error
// or CUDA_ERROR_UNKNOWN (what a GPU that fell off the bus tends to give),
// nor of a destroyed context; they are treated as sticky too, because
// going on after them risks outputs computed from corrupted memory, which
// decrypt to wrong bits without any error.
func (r Result) sticky() bool {
	switch r {
	case resultIllegalAddress, resultLaunchTimeout, resultAssert, resultHardwareStack,
		resultIllegalInstruction, resultMisalignedAddress, resultInvalidAddrSpace,
		resultInvalidPC, resultLaunchFailed, resultContained, resultTensorMemoryLeak,
		resultExternalDevice, resultMPSClientGone,
		resultECCUncorrectable, resultNVLinkUncorrectable, resultUnknown, resultContextDestroyed:
		return true
	}
	return false
}

// Error is a failed CUDA driver call. Its text names the call and CUDA's own
// name and description of the code, e.g.
//
//	kernels: cuMemAlloc_v2: CUDA_ERROR_OUT_OF_MEMORY: out of memory
//
// errors.Is matches it against the sentinel its code maps to (ErrOutOfMemory
// here); errors.As gives the code.
type Error struct {
	Call string // the driver entry point (ABI name), optionally with context
	Code Result // the CUresult
	Name string // cuGetErrorName's text, e.g. "CUDA_ERROR_OUT_OF_MEMORY"
	Text string // cuGetErrorString's text, e.g. "out of memory"
}

func (e *Error) Error() string {
	name := e.Name
	if name == "" {
		name = fmt.Sprintf("CUresult(%d)", int32(e.Code))
	}
	if e.Text == "" {
		return "kernels: " + e.Call + ": " + name
	}
	return "kernels: " + e.Call + ": " + name + ": " + e.Text
}

// Unwrap returns the sentinel the code maps to (nil if none).
func (e *Error) Unwrap() error { return e.Code.sentinel() }

// notFound reports whether err is the driver's CUDA_ERROR_NOT_FOUND: for
// cuModuleGetFunction, a kernel the fatbin does not have.
func notFound(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == resultNotFound
}

// argErr returns an ErrArgument error for a Go-side check in op, e.g.
// "kernels: Mul: dst holds 10 elements, needs 20: bad argument".
func argErr(op, format string, args ...any) error {
	return fmt.Errorf("kernels: %s: %s: %w", op, fmt.Sprintf(format, args...), shortArgument)
}

// opErr returns "kernels: op: <sentinel text>" wrapping sentinel.
func opErr(op string, sentinel error) error {
	return fmt.Errorf("kernels: %s: %w", op, short(sentinel))
}

var shortArgument = short(ErrArgument)

// wrapped is an error with its own text that unwraps to err; it keeps the
// "kernels:" prefix from appearing twice in one message.
type wrapped struct {
	msg string
	err error
}

func (w *wrapped) Error() string { return w.msg }
func (w *wrapped) Unwrap() error { return w.err }

// short returns an error matching sentinel whose text is the sentinel's
// without the "kernels: " prefix.
func short(sentinel error) error {
	return &wrapped{msg: strings.TrimPrefix(sentinel.Error(), "kernels: "), err: sentinel}
}
