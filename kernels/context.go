package kernels

import (
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"
)

// Context is one GPU's primary CUDA context, retained for the lifetime of
// the Context value. It is safe for concurrent use by several goroutines:
// every method that reaches the driver locks the calling goroutine to its
// OS thread, makes the context current on that thread for the call and
// then makes current again whatever was before (no context, or one of the
// caller's), and unlocks, so no goroutine ever depends on which thread it
// runs on, and a caller's own context survives the call (see the package
// documentation).
//
// Several Contexts opened on one device share the device's primary context
// (the driver counts the retains). Buffers, streams, events and pinned
// host memory are used with the Context that made them (and its
// Libraries); an operand of another Context is refused, so that nothing
// made on a closed Context reaches the driver through an open one.
type Context struct {
	d    *driver
	dev  int32   // CUdevice
	h    uintptr // CUcontext (the primary context)
	info DeviceInfo

	mu     sync.RWMutex // read-held by every call, write-held by Close
	closed atomic.Bool  // set under mu's write lock; read without it by isClosed

	fault atomic.Pointer[Error] // the first sticky (context-killing) error
	debug atomic.Bool           // synchronise and check after every launch

	// Bookkeeping of live objects (see Stats).
	devBufs, devBytes, hostBufs, hostBytes atomic.Int64
	streams, events, modules               atomic.Int64
}

// DebugEnv is the environment variable that turns on debug mode for every
// Context opened afterwards: GOLDFHE_CUDA_DEBUG=1 synchronises the context
// after every kernel launch and reports the kernel's own error, naming it.
const DebugEnv = "GOLDFHE_CUDA_DEBUG"

// Open retains the primary context of CUDA device ordinal. Its error wraps
// ErrNoDriver or ErrNoDevice when there is no GPU to use; the error's text
// is the reason to report when falling back to the CPU.
func Open(ordinal int) (*Context, error) {
	d, err := theDriver()
	if err != nil {
		return nil, err
	}
	return open(d, ordinal)
}

func open(d *driver, ordinal int) (*Context, error) {
	dev, info, err := d.device(ordinal)
	if err != nil {
		return nil, err
	}
	c := &Context{d: d, dev: dev, info: info}
	if err := d.err("cuDevicePrimaryCtxRetain", d.call(symDevicePrimaryCtxRetain, uintptr(unsafe.Pointer(&c.h)), uintptr(uint32(dev)))); err != nil {
		return nil, err
	}
	c.debug.Store(os.Getenv(DebugEnv) == "1")
	return c, nil
}

// Device describes the context's GPU.
func (c *Context) Device() DeviceInfo { return c.info }

// SetDebug turns debug mode on or off (see DebugEnv).
func (c *Context) SetDebug(on bool) { c.debug.Store(on) }

// Debug reports whether debug mode is on.
func (c *Context) Debug() bool { return c.debug.Load() }

// Err returns the error that left the context unusable, or nil while it is
// usable: the first kernel fault or device failure met by a call on c (an
// illegal address, a trap, a launch failure, an uncorrectable ECC error, a
// GPU that stopped answering: it wraps ErrLaunchFailed; Result.sticky lists
// the codes). From then on every call on c fails at once, with an error
// that names this one and wraps ErrLaunchFailed (Err still gives the
// *Error itself). CUDA documents kernel faults as leaving the process
// unable to use the device until it restarts (after a hardware error it
// promises nothing): close c
// (freeing what was made on it would only repeat the error; see Close),
// and expect Open of that device to fail with an error wrapping
// ErrLaunchFailed (bootstrap's TestGPUFault saw this after a trap on an
// H100 and an H200).
func (c *Context) Err() error {
	if f := c.fault.Load(); f != nil {
		return f
	}
	return nil
}

// Close releases the primary context. Buffers, streams, events and modules
// still open are not freed one by one: when the last retain of the primary
// context goes, the driver destroys it with everything in it, and using
// them afterwards returns ErrClosed. Close is idempotent.
func (c *Context) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed.Load() {
		return nil
	}
	c.closed.Store(true)
	return c.d.err("cuDevicePrimaryCtxRelease_v2", c.d.call(symDevicePrimaryCtxRelease, uintptr(uint32(c.dev))))
}

// isClosed reports whether Close was called on c. It takes no lock, so a
// caller may hold c's read lock.
func (c *Context) isClosed() bool { return c.closed.Load() }

// enter prepares the calling goroutine for a driver call on c: it takes the
// read lock, locks the goroutine to its thread and pushes c on the
// thread's stack of current contexts. Every successful enter must be
// paired with exit, which pops it, so that the thread is left as enter
// found it.
//
// Push and pop (cuCtxPushCurrent_v2, cuCtxPopCurrent_v2) rather than
// cuCtxGetCurrent, then cuCtxSetCurrent to c and back: the pop makes
// current again exactly what was (no context, one of the caller's, or c
// itself) without this package holding its handle, for two driver calls
// besides the call itself, every time. Get and set would cost one where c
// is current already, but three (get, set, set back) where it is not,
// which is the common case: since calls here leave no context behind, a
// thread has none unless its caller keeps one there. cuCtxGetCurrent
// also writes through a pointer, which go:uintptrescapes moves to the
// heap: one allocation more per call. All four are thread-local
// operations in the driver (and cuda.h defines cuCtxSetCurrent(NULL) as
// a pop).
func (c *Context) enter(op string) error {
	c.mu.RLock()
	if c.closed.Load() {
		c.mu.RUnlock()
		return fmt.Errorf("kernels: %s: Context %w", op, shortClosed)
	}
	if f := c.fault.Load(); f != nil {
		c.mu.RUnlock()
		return fmt.Errorf("kernels: %s: context unusable since %s failed with %s: %w", op, f.Call, f.Name, shortFault)
	}
	runtime.LockOSThread()
	if r := c.d.call(symCtxPushCurrent, c.h); r != resultSuccess {
		runtime.UnlockOSThread()
		c.mu.RUnlock()
		return c.check("cuCtxPushCurrent_v2", r)
	}
	return nil
}

// exit undoes enter: it pops c off the thread's context stack, which makes
// current again what was current before enter, and unlocks.
//
// cuda.h gives a pop these errors: CUDA_ERROR_DEINITIALIZED or
// CUDA_ERROR_NOT_INITIALIZED (the driver is shutting down),
// CUDA_ERROR_INVALID_CONTEXT (the stack is empty) and, as for most calls,
// an error of earlier asynchronous work. After a failed pop c may still
// be current on the thread. exit has no error to return, so a sticky
// error is recorded as c's fault (check): the context is dead, Err
// reports it and every later call on c fails naming the pop. The others
// are dropped: once the driver is deinitialised every later call, on any
// context, reports that by itself; and the stack cannot be empty here,
// since between enter and exit the goroutine holds the thread and makes
// only this package's driver calls, none of which pops or destroys a
// context.
func (c *Context) exit() {
	// NULL: the popped context (c) is not asked for.
	if r := c.d.call(symCtxPopCurrent, 0); r != resultSuccess && r.sticky() {
		c.check("cuCtxPopCurrent_v2", r)
	}
	runtime.UnlockOSThread()
	c.mu.RUnlock()
}

var (
	shortClosed = short(ErrClosed)
	shortFault  = short(ErrLaunchFailed)
	shortFreed  = short(ErrFreed)
)

// check turns r into an error naming what, and remembers the first sticky
// one so that later calls fail fast with a message that says why.
func (c *Context) check(what string, r Result) error {
	if r == resultSuccess {
		return nil
	}
	err := c.d.err(what, r)
	if r.sticky() {
		c.fault.CompareAndSwap(nil, err.(*Error))
	}
	return err
}

// do runs one driver call on c: enter, call, check, exit.
//
//go:uintptrescapes
func (c *Context) do(what string, s sym, args ...uintptr) error {
	if err := c.enter(what); err != nil {
		return err
	}
	defer c.exit()
	return c.check(what, c.d.call(s, args...))
}

// Synchronize waits for all work on the context to finish
// (cuCtxSynchronize) and returns the first error any of it raised.
func (c *Context) Synchronize() error {
	return c.do("cuCtxSynchronize", symCtxSynchronize)
}

// MemInfo returns the free and total device memory in bytes.
func (c *Context) MemInfo() (free, total uint64, err error) {
	err = c.do("cuMemGetInfo_v2", symMemGetInfo, uintptr(unsafe.Pointer(&free)), uintptr(unsafe.Pointer(&total)))
	return free, total, err
}

// Stats counts the objects created on a Context and not yet freed or
// closed.
type Stats struct {
	DeviceBuffers int
	DeviceBytes   int64
	HostBuffers   int
	HostBytes     int64
	Streams       int
	Events        int
	Modules       int
}

// Stats returns the live-object counts (for leak checks in tests).
func (c *Context) Stats() Stats {
	return Stats{
		DeviceBuffers: int(c.devBufs.Load()),
		DeviceBytes:   c.devBytes.Load(),
		HostBuffers:   int(c.hostBufs.Load()),
		HostBytes:     c.hostBytes.Load(),
		Streams:       int(c.streams.Load()),
		Events:        int(c.events.Load()),
		Modules:       int(c.modules.Load()),
	}
}
