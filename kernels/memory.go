package kernels

import (
	"fmt"
	"math"
	"sync/atomic"
	"unsafe"
)

// Elem is the set of element types a buffer may hold: fixed-size plain
// numbers with no Go pointers inside, so their bytes mean the same on both
// sides of the bus.
type Elem interface {
	~int8 | ~uint8 | ~int16 | ~uint16 | ~int32 | ~uint32 | ~int64 | ~uint64 | ~float32 | ~float64
}

// devicePtr is a CUDA device address (CUdeviceptr, unsigned long long).
type devicePtr uint64

// allocation is one cuMemAlloc block, shared by a DeviceBuffer and its views.
type allocation struct {
	c     *Context
	ptr   atomic.Uint64 // the device address; 0 once freed
	bytes int64
}

// DeviceBuffer is an array of n elements of type T in device memory. It is
// a distinct type from host memory (a []T or a HostPinned[T]), so the two
// cannot be confused: data moves between them only through the Copy
// methods.
//
// A buffer made by Alloc owns its memory and must be released with Free.
// View returns a window into a buffer that shares its memory; a view is
// never freed itself and becomes unusable when its buffer is freed. Every
// method returns an error wrapping ErrFreed when used after Free (detection
// is best effort: Free must not race with other uses of the buffer).
//
// Methods may be called from several goroutines at once; the order of the
// operations on the GPU is then the order the calls reach the driver, so
// order dependent work with streams and events, or with a single goroutine.
type DeviceBuffer[T Elem] struct {
	a    *allocation
	off  int  // first element, within the allocation
	n    int  // elements
	view bool // made by View: never freed itself, even when it spans all of a
}

// sizeOf returns the size of T in bytes.
func sizeOf[T Elem]() int {
	var z T
	return int(unsafe.Sizeof(z))
}

// Alloc allocates n elements of device memory (cuMemAlloc_v2). The memory is
// not cleared. An allocation the device cannot hold returns an error
// wrapping ErrOutOfMemory.
func Alloc[T Elem](c *Context, n int) (*DeviceBuffer[T], error) {
	size := sizeOf[T]()
	if n <= 0 {
		return nil, argErr("Alloc", "length %d, want ≥ 1", n)
	}
	if int64(n) > math.MaxInt64/int64(size) {
		return nil, argErr("Alloc", "length %d overflows", n)
	}
	bytes := int64(n) * int64(size)
	var p uint64
	if err := c.do("cuMemAlloc_v2", symMemAlloc, uintptr(unsafe.Pointer(&p)), uintptr(bytes)); err != nil {
		return nil, fmt.Errorf("%w (asked for %d bytes)", err, bytes)
	}
	a := &allocation{c: c, bytes: bytes}
	a.ptr.Store(p)
	c.devBufs.Add(1)
	c.devBytes.Add(bytes)
	return &DeviceBuffer[T]{a: a, n: n}, nil
}

// Len returns the number of elements.
func (b *DeviceBuffer[T]) Len() int { return b.n }

// Bytes returns the size in bytes.
func (b *DeviceBuffer[T]) Bytes() int64 { return int64(b.n) * int64(sizeOf[T]()) }

// Context returns the Context the buffer was allocated on.
func (b *DeviceBuffer[T]) Context() *Context { return b.a.c }

// IsView reports whether b is a View of another buffer (any View, also
// one of the whole buffer).
func (b *DeviceBuffer[T]) IsView() bool { return b.view }

// View returns the elements [lo, hi) of b as a buffer sharing b's memory.
// Like slicing, it panics if the bounds are out of range.
func (b *DeviceBuffer[T]) View(lo, hi int) *DeviceBuffer[T] {
	if lo < 0 || hi < lo || hi > b.n {
		panic(viewBounds{"DeviceBuffer", lo, hi, b.n})
	}
	return &DeviceBuffer[T]{a: b.a, off: b.off + lo, n: hi - lo, view: true}
}

// viewBounds is the panic value of a View out of range. It is formatted
// only when printed, so that View stays small enough to inline: a caller's
// view then need not escape to the heap (the engine takes four a pass).
type viewBounds struct {
	typ         string
	lo, hi, len int
}

func (v viewBounds) Error() string {
	return fmt.Sprintf("kernels: %s.View(%d, %d) of %d elements", v.typ, v.lo, v.hi, v.len)
}

// ptr returns b's device address, or an error wrapping ErrFreed.
func (b *DeviceBuffer[T]) ptr(op string) (devicePtr, error) {
	p := b.a.ptr.Load()
	if p == 0 {
		return 0, fmt.Errorf("kernels: %s: %w", op, shortFreed)
	}
	return devicePtr(p + uint64(b.off)*uint64(sizeOf[T]())), nil
}

// Free releases the buffer's memory (cuMemFree_v2). Free of a view, or a
// second Free, returns an error. After its Context is closed, Free only
// marks the buffer freed and returns an error wrapping ErrClosed: the
// driver frees the memory with the primary context, when the device's last
// Context closes. Free buffers before closing their Context.
func (b *DeviceBuffer[T]) Free() error {
	if b.IsView() {
		return argErr("DeviceBuffer.Free", "buffer is a View; free the buffer it came from")
	}
	p := b.a.ptr.Swap(0)
	if p == 0 {
		return fmt.Errorf("kernels: DeviceBuffer.Free: %w", shortFreed)
	}
	c := b.a.c
	c.devBufs.Add(-1)
	c.devBytes.Add(-b.a.bytes)
	return c.do("cuMemFree_v2", symMemFree, uintptr(p))
}

// sameLen checks a copy's lengths.
func sameLen(op string, dst, src int) error {
	if dst != src {
		return argErr(op, "destination holds %d elements, source %d", dst, src)
	}
	return nil
}

// streamHandle returns s's CUstream for use on c: 0 (the legacy default
// stream) for nil, an error if s is closed or belongs to another Context.
func streamHandle(op string, c *Context, s *Stream) (uintptr, error) {
	if s == nil {
		return 0, nil
	}
	if s.c != c {
		return 0, argErr(op, "stream belongs to another Context")
	}
	h := s.h.Load()
	if h == 0 {
		return 0, fmt.Errorf("kernels: %s: Stream %w", op, shortClosed)
	}
	return h, nil
}

// CopyFromHost copies src into b (cuMemcpyHtoD_v2); len(src) must equal
// b.Len(). It returns when src may be reused.
func (b *DeviceBuffer[T]) CopyFromHost(src []T) error {
	const op = "DeviceBuffer.CopyFromHost"
	if err := sameLen(op, b.n, len(src)); err != nil || b.n == 0 {
		return err
	}
	p, err := b.ptr(op)
	if err != nil {
		return err
	}
	return b.a.c.do("cuMemcpyHtoD_v2", symMemcpyHtoD, uintptr(p), uintptr(unsafe.Pointer(&src[0])), uintptr(b.Bytes()))
}

// CopyToHost copies b into dst (cuMemcpyDtoH_v2); len(dst) must equal
// b.Len(). It returns when the data is in dst.
func (b *DeviceBuffer[T]) CopyToHost(dst []T) error {
	const op = "DeviceBuffer.CopyToHost"
	if err := sameLen(op, len(dst), b.n); err != nil || b.n == 0 {
		return err
	}
	p, err := b.ptr(op)
	if err != nil {
		return err
	}
	return b.a.c.do("cuMemcpyDtoH_v2", symMemcpyDtoH, uintptr(unsafe.Pointer(&dst[0])), uintptr(p), uintptr(b.Bytes()))
}

// CopyFrom copies src into b on the device (cuMemcpyDtoD_v2); the lengths
// must be equal. The copy is ordered on the default stream.
func (b *DeviceBuffer[T]) CopyFrom(src *DeviceBuffer[T]) error {
	return b.copyFrom(src, nil, false)
}

// CopyFromAsync is CopyFrom enqueued on s (nil: the default stream).
func (b *DeviceBuffer[T]) CopyFromAsync(src *DeviceBuffer[T], s *Stream) error {
	return b.copyFrom(src, s, true)
}

func (b *DeviceBuffer[T]) copyFrom(src *DeviceBuffer[T], s *Stream, async bool) error {
	op := "DeviceBuffer.CopyFrom"
	if async {
		op += "Async"
	}
	if err := sameLen(op, b.n, src.n); err != nil || b.n == 0 {
		return err
	}
	if src.a.c != b.a.c {
		return argErr(op, "source belongs to another Context")
	}
	dp, err := b.ptr(op)
	if err != nil {
		return err
	}
	sp, err := src.ptr(op)
	if err != nil {
		return err
	}
	c := b.a.c
	if !async {
		return c.do("cuMemcpyDtoD_v2", symMemcpyDtoD, uintptr(dp), uintptr(sp), uintptr(b.Bytes()))
	}
	sh, err := streamHandle(op, c, s)
	if err != nil {
		return err
	}
	return c.do("cuMemcpyDtoDAsync_v2", symMemcpyDtoDAsync, uintptr(dp), uintptr(sp), uintptr(b.Bytes()), sh)
}

// CopyFromHostAsync enqueues a copy of src into b on s (nil: the default
// stream) and returns at once (cuMemcpyHtoDAsync_v2). Only pinned host
// memory is accepted: the driver reads it after the call returns, so it
// must not be Go memory, and must not be changed or freed before the copy
// is done (synchronise s, or an Event recorded after it).
func (b *DeviceBuffer[T]) CopyFromHostAsync(src *HostPinned[T], s *Stream) error {
	const op = "DeviceBuffer.CopyFromHostAsync"
	if err := sameLen(op, b.n, src.n); err != nil || b.n == 0 {
		return err
	}
	if src.c != b.a.c {
		return argErr(op, "source belongs to another Context")
	}
	dp, err := b.ptr(op)
	if err != nil {
		return err
	}
	hp, err := src.addr(op)
	if err != nil {
		return err
	}
	sh, err := streamHandle(op, b.a.c, s)
	if err != nil {
		return err
	}
	return b.a.c.do("cuMemcpyHtoDAsync_v2", symMemcpyHtoDAsync, uintptr(dp), uintptr(hp), uintptr(b.Bytes()), sh)
}

// CopyToHostAsync enqueues a copy of b into dst on s (nil: the default
// stream) and returns at once (cuMemcpyDtoHAsync_v2); dst holds the data
// once s (or an Event recorded after the copy) has been synchronised.
func (b *DeviceBuffer[T]) CopyToHostAsync(dst *HostPinned[T], s *Stream) error {
	const op = "DeviceBuffer.CopyToHostAsync"
	if err := sameLen(op, dst.n, b.n); err != nil || b.n == 0 {
		return err
	}
	if dst.c != b.a.c {
		return argErr(op, "destination belongs to another Context")
	}
	sp, err := b.ptr(op)
	if err != nil {
		return err
	}
	hp, err := dst.addr(op)
	if err != nil {
		return err
	}
	sh, err := streamHandle(op, b.a.c, s)
	if err != nil {
		return err
	}
	return b.a.c.do("cuMemcpyDtoHAsync_v2", symMemcpyDtoHAsync, uintptr(hp), uintptr(sp), uintptr(b.Bytes()), sh)
}

// Memset8 sets every byte of b to v (cuMemsetD8_v2).
func (b *DeviceBuffer[T]) Memset8(v uint8) error {
	return b.memset("DeviceBuffer.Memset8", 8, uint32(v), nil, false)
}

// Memset8Async is Memset8 enqueued on s (cuMemsetD8Async).
func (b *DeviceBuffer[T]) Memset8Async(v uint8, s *Stream) error {
	return b.memset("DeviceBuffer.Memset8Async", 8, uint32(v), s, true)
}

// Memset32 sets every 32-bit word of b to v (cuMemsetD32_v2). b's size and
// address must be multiples of 4 bytes.
func (b *DeviceBuffer[T]) Memset32(v uint32) error {
	return b.memset("DeviceBuffer.Memset32", 32, v, nil, false)
}

// Memset32Async is Memset32 enqueued on s (cuMemsetD32Async).
func (b *DeviceBuffer[T]) Memset32Async(v uint32, s *Stream) error {
	return b.memset("DeviceBuffer.Memset32Async", 32, v, s, true)
}

// memset is the Memset methods' body; op is the caller's name.
func (b *DeviceBuffer[T]) memset(op string, bits, v uint32, s *Stream, async bool) error {
	p, err := b.ptr(op)
	if err != nil || b.n == 0 {
		return err
	}
	count := uint64(b.Bytes())
	if bits == 32 {
		if p%4 != 0 || count%4 != 0 {
			return argErr(op, "address %#x and size %d must be multiples of 4", uint64(p), count)
		}
		count /= 4
	}
	c := b.a.c
	switch {
	case !async && bits == 8:
		return c.do("cuMemsetD8_v2", symMemsetD8, uintptr(p), uintptr(v), uintptr(count))
	case !async:
		return c.do("cuMemsetD32_v2", symMemsetD32, uintptr(p), uintptr(v), uintptr(count))
	}
	sh, err := streamHandle(op, c, s)
	if err != nil {
		return err
	}
	if bits == 8 {
		return c.do("cuMemsetD8Async", symMemsetD8Async, uintptr(p), uintptr(v), uintptr(count), sh)
	}
	return memsetD32Async(c, p, v, int(count), sh)
}

// memsetD32Async sets words 32-bit words at p to v on the stream of handle
// h (cuMemsetD32Async). Memset32Async's driver call, and what the key
// switching calls on its output's pointer from prepare, where a View would
// allocate on the engine's hot path.
func memsetD32Async(c *Context, p devicePtr, v uint32, words int, h uintptr) error {
	return c.do("cuMemsetD32Async", symMemsetD32Async, uintptr(p), uintptr(v), uintptr(words), h)
}

// HostPinned is an array of n elements of page-locked host memory
// (cuMemHostAlloc), the only host memory the asynchronous copies accept,
// with buffers and streams of the Context that allocated it. Slice exposes
// it as a Go slice.
//
// It must be released with Free, before its Context is closed. The slice
// returned by Slice must not be used after Free or after the Context's
// Close: it then points at memory returned to the driver, or that the
// driver frees with the primary context (Slice itself panics then, and
// every other method returns an error wrapping ErrFreed or ErrClosed).
type HostPinned[T Elem] struct {
	c   *Context
	mem *pinnedAlloc[T] // the allocation, shared with h's views
	off int             // the first element's index in mem
	n   int
	// view marks a View: it is not freed on its own.
	view bool
}

// pinnedAlloc is one cuMemHostAlloc block. Keeping its address out of the
// HostPinned value lets a View made in a caller stay on the caller's stack:
// loading p does not make the HostPinned itself escape.
type pinnedAlloc[T Elem] struct {
	p     atomic.Pointer[T] // first element; nil once freed
	bytes int64
}

// View returns elements [lo, hi) of h as a HostPinned that shares h's
// memory, for asynchronous copies of part of it. A view is not freed on
// its own (Free returns an error); it is unusable once h is freed. Like
// slicing, it panics if the bounds are out of range.
func (h *HostPinned[T]) View(lo, hi int) *HostPinned[T] {
	if lo < 0 || hi < lo || hi > h.n {
		panic(viewBounds{"HostPinned", lo, hi, h.n})
	}
	return &HostPinned[T]{c: h.c, mem: h.mem, off: h.off + lo, n: hi - lo, view: true}
}

// CU_MEMHOSTALLOC_PORTABLE: the pinned memory is usable from every context.
const memHostAllocPortable = 0x01

// AllocHost allocates n elements of pinned host memory on c's device.
func AllocHost[T Elem](c *Context, n int) (*HostPinned[T], error) {
	size := sizeOf[T]()
	if n <= 0 {
		return nil, argErr("AllocHost", "length %d, want ≥ 1", n)
	}
	if int64(n) > math.MaxInt64/int64(size) {
		return nil, argErr("AllocHost", "length %d overflows", n)
	}
	bytes := int64(n) * int64(size)
	var p *T
	if err := c.do("cuMemHostAlloc", symMemHostAlloc, uintptr(unsafe.Pointer(&p)), uintptr(bytes), memHostAllocPortable); err != nil {
		return nil, fmt.Errorf("%w (asked for %d bytes)", err, bytes)
	}
	h := &HostPinned[T]{c: c, mem: &pinnedAlloc[T]{bytes: bytes}, n: n}
	h.mem.p.Store(p)
	c.hostBufs.Add(1)
	c.hostBytes.Add(bytes)
	return h, nil
}

// Len returns the number of elements.
func (h *HostPinned[T]) Len() int { return h.n }

// Slice returns the pinned memory as a Go slice of length Len. It panics
// after Free or after its Context's Close (a use after free is a bug in
// the caller; detection is best effort, as for Free).
func (h *HostPinned[T]) Slice() []T {
	p := h.first()
	if p == nil {
		panic("kernels: HostPinned.Slice after Free")
	}
	if h.c.isClosed() {
		panic("kernels: HostPinned.Slice after its Context's Close")
	}
	return unsafe.Slice(p, h.n)
}

func (h *HostPinned[T]) addr(op string) (unsafe.Pointer, error) {
	p := h.first()
	if p == nil {
		return nil, fmt.Errorf("kernels: %s: HostPinned %w", op, shortFreed)
	}
	return unsafe.Pointer(p), nil
}

// first is the address of h's first element, nil once the memory is freed.
func (h *HostPinned[T]) first() *T {
	p := h.mem.p.Load()
	if p == nil || h.off == 0 {
		return p
	}
	return (*T)(unsafe.Add(unsafe.Pointer(p), h.off*sizeOf[T]()))
}

// Free releases the pinned memory (cuMemFreeHost). A second Free returns
// an error wrapping ErrFreed.
func (h *HostPinned[T]) Free() error {
	if h.view {
		return argErr("HostPinned.Free", "a view is freed with the buffer it views")
	}
	p := h.mem.p.Swap(nil)
	if p == nil {
		return fmt.Errorf("kernels: HostPinned.Free: %w", shortFreed)
	}
	h.c.hostBufs.Add(-1)
	h.c.hostBytes.Add(-h.mem.bytes)
	return h.c.do("cuMemFreeHost", symMemFreeHost, uintptr(unsafe.Pointer(p)))
}
