package kernels

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"unsafe"
)

// Library is goldfhe's kernels (the fatbin) loaded into one Context, with
// one typed Go method per __global__ kernel. It is safe for concurrent use;
// launches of one kernel are serialised for the few microseconds it takes
// to fill and pass its argument block.
type Library struct {
	c      *Context
	m      *Module
	source string

	mul, muladd pointwiseKernel
	fieldOps    fieldOpsKernel
	ntt         nttKernels
}

// LoadLibrary loads goldfhe's kernels into c: the fatbin named by
// GOLDFHE_FATBIN if set, else the embedded one. Without a fatbin it returns
// an error wrapping ErrNoFatbin; with one that has no code for this GPU,
// ErrBadImage.
func (c *Context) LoadLibrary() (*Library, error) {
	image, source, err := fatbinImage(os.Getenv)
	if err != nil {
		return nil, err
	}
	return c.loadLibrary(image, source)
}

func (c *Context) loadLibrary(image []byte, source string) (*Library, error) {
	m, err := c.LoadModule(image)
	if err != nil {
		return nil, fmt.Errorf("%w (loading %s)", err, source)
	}
	l := &Library{c: c, m: m, source: source}
	var errs []error
	get := func(name string) *Function {
		f, err := m.Function(name)
		if err != nil {
			errs = append(errs, err)
		}
		return f
	}
	l.mul.f = get("goldfhe_mul")
	l.muladd.f = get("goldfhe_muladd")
	l.fieldOps.f = get("goldfhe_field_ops")
	l.ntt.load(get)
	if err := errors.Join(errs...); err != nil {
		m.Close()
		return nil, fmt.Errorf("%w (in %s: rebuild it from these sources)", err, source)
	}
	l.mul.args.init()
	l.muladd.args.init()
	l.fieldOps.args.init()
	if err := l.ntt.init(l.c); err != nil {
		m.Close()
		return nil, err
	}
	return l, nil
}

// Source says which fatbin was loaded, e.g. "embedded goldfhe.fatbin
// (sources sha256 0123456789ab…)" or "GOLDFHE_FATBIN=/tmp/dev.fatbin".
func (l *Library) Source() string { return l.source }

// Context returns the Context the library was loaded into.
func (l *Library) Context() *Context { return l.c }

// Function returns one of the library's kernels by name, for its
// Attributes (registers, local memory) or its shared memory limit.
func (l *Library) Function(name string) (*Function, error) {
	for _, f := range append([]*Function{l.mul.f, l.muladd.f, l.fieldOps.f}, l.ntt.all()...) {
		if f.name == name {
			return f, nil
		}
	}
	return nil, argErr("Library.Function", "no kernel %q", name)
}

// Close unloads the kernels; the Library is unusable afterwards. It must not
// run beside a launch of l (package doc, "Threading and contexts").
func (l *Library) Close() error { return l.m.Close() }

// threadsPerBlock is the block size of the elementwise kernels.
const threadsPerBlock = 256

// maxGridY is CUDA's limit on gridDim.y.
const maxGridY = 65535

// launchPinned launches f with the argument block blk, whose params array
// points into blk itself. blk is pinned for the call (runtime.Pinner) so
// that the driver may read through the pointers; cuLaunchKernel copies the
// argument values before it returns.
func launchPinned(f *Function, grid, block dim3, sh uintptr, blk any, params unsafe.Pointer) error {
	return launchPinnedShared(f, grid, block, 0, sh, blk, params)
}

// launchPinnedShared is launchPinned with `shared` bytes of dynamic shared
// memory per block.
func launchPinnedShared(f *Function, grid, block dim3, shared uint32, sh uintptr, blk any, params unsafe.Pointer) error {
	var pin runtime.Pinner
	pin.Pin(blk)
	defer pin.Unpin()
	return f.launch(grid, block, shared, sh, params)
}

// Vecs names `count` vectors of n Goldilocks elements in a device buffer,
// for the batched kernels: vector v is Buf's elements [v·Stride, v·Stride+n).
// Stride 0 repeats one vector for every v (a broadcast operand); an output
// needs Stride ≥ n when count > 1, so that no two vectors overlap.
type Vecs struct {
	Buf    *DeviceBuffer[uint64]
	Stride int
}

// pointwiseArgs is the argument block of goldfhe_mul and goldfhe_muladd:
//
//	(uint64_t *dst, const uint64_t *a, const uint64_t *b,
//	 uint32_t n, uint32_t count, uint64_t sdst, uint64_t sa, uint64_t sb)
type pointwiseArgs struct {
	dst, a, b  devicePtr
	n, count   uint32
	sd, sa, sb uint64
	params     [8]unsafe.Pointer
}

func (p *pointwiseArgs) init() {
	p.params = [8]unsafe.Pointer{
		unsafe.Pointer(&p.dst), unsafe.Pointer(&p.a), unsafe.Pointer(&p.b),
		unsafe.Pointer(&p.n), unsafe.Pointer(&p.count),
		unsafe.Pointer(&p.sd), unsafe.Pointer(&p.sa), unsafe.Pointer(&p.sb),
	}
}

// pointwiseKernel is a kernel with its argument block, prepared once and
// reused under mu.
type pointwiseKernel struct {
	f    *Function
	mu   sync.Mutex
	args pointwiseArgs
}

// Mul sets dst_v = a_v · b_v (mod p) elementwise for count vectors of n
// elements (goldfhe_mul), enqueued on s (nil: the default stream). Inputs
// may be any uint64 (they need not be canonical); outputs are canonical.
// dst may be the same memory as a or b with the same Stride (in place); no
// other overlap is allowed. n = 0 or count = 0 does nothing.
func (l *Library) Mul(s *Stream, dst, a, b Vecs, n, count int) error {
	return l.pointwise(&l.mul, "Library.Mul", s, dst, a, b, n, count)
}

// MulAdd sets acc_v = acc_v + a_v · b_v (mod p) elementwise for count
// vectors of n elements (goldfhe_muladd), enqueued on s (nil: the default
// stream). acc must be canonical and stays canonical; a and b may be any
// uint64. Same aliasing rules as Mul.
func (l *Library) MulAdd(s *Stream, acc, a, b Vecs, n, count int) error {
	return l.pointwise(&l.muladd, "Library.MulAdd", s, acc, a, b, n, count)
}

func (l *Library) pointwise(k *pointwiseKernel, op string, s *Stream, dst, a, b Vecs, n, count int) error {
	if n < 0 || count < 0 {
		return argErr(op, "n = %d, count = %d, want ≥ 0", n, count)
	}
	if uint64(n) > maxUint32 || uint64(count) > maxUint32 {
		return argErr(op, "n = %d, count = %d, want ≤ 2^32-1", n, count)
	}
	if err := checkVecs(op, l.c, "dst", dst, n, count); err != nil {
		return err
	}
	if err := checkVecs(op, l.c, "a", a, n, count); err != nil {
		return err
	}
	if err := checkVecs(op, l.c, "b", b, n, count); err != nil {
		return err
	}
	if count > 1 && dst.Stride < n {
		return argErr(op, "dst.Stride = %d < n = %d: output vectors overlap", dst.Stride, n)
	}
	if n == 0 || count == 0 {
		return nil
	}
	dp, err := dst.Buf.ptr(op)
	if err != nil {
		return err
	}
	ap, err := a.Buf.ptr(op)
	if err != nil {
		return err
	}
	bp, err := b.Buf.ptr(op)
	if err != nil {
		return err
	}
	if err := checkAlias(op, "a", dp, dst, ap, a, n, count); err != nil {
		return err
	}
	if err := checkAlias(op, "b", dp, dst, bp, b, n, count); err != nil {
		return err
	}
	sh, err := streamHandle(op, l.c, s)
	if err != nil {
		return err
	}
	grid := dim3{uint32((n + threadsPerBlock - 1) / threadsPerBlock), uint32(min(count, maxGridY)), 1}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.args.dst, k.args.a, k.args.b = dp, ap, bp
	k.args.n, k.args.count = uint32(n), uint32(count)
	k.args.sd, k.args.sa, k.args.sb = uint64(dst.Stride), uint64(a.Stride), uint64(b.Stride)
	return launchPinned(k.f, grid, dim3{threadsPerBlock, 1, 1}, sh, &k.args, unsafe.Pointer(&k.args.params[0]))
}

const maxUint32 = 1<<32 - 1

// extent returns how many elements count vectors of n with this stride
// span: (count−1)·stride + n, or -1 if that overflows an int.
func extent(n, count, stride int) int {
	if count == 0 || n == 0 {
		return 0
	}
	if stride > 0 && count-1 > (maxInt-n)/stride {
		return -1
	}
	return (count-1)*stride + n
}

const maxInt = int(^uint(0) >> 1)

// checkVecs checks one operand of a batched kernel.
func checkVecs(op string, c *Context, name string, v Vecs, n, count int) error {
	if v.Buf == nil {
		return argErr(op, "%s.Buf is nil", name)
	}
	if v.Buf.a.c != c {
		return argErr(op, "%s belongs to another Context", name)
	}
	if v.Stride < 0 {
		return argErr(op, "%s.Stride = %d < 0", name, v.Stride)
	}
	if e := extent(n, count, v.Stride); e < 0 || e > v.Buf.Len() {
		return argErr(op, "%s holds %d elements, %d vectors of %d with stride %d need %d",
			name, v.Buf.Len(), count, n, v.Stride, e)
	}
	return nil
}

// checkAlias allows the output to overlap an input only exactly: the same
// first element and the same stride (in place). Any other overlap would
// let one thread read what another writes.
func checkAlias(op, name string, dp devicePtr, dst Vecs, ip devicePtr, in Vecs, n, count int) error {
	const size = 8
	dEnd := uint64(dp) + uint64(extent(n, count, dst.Stride))*size
	iEnd := uint64(ip) + uint64(extent(n, count, in.Stride))*size
	if uint64(dp) >= iEnd || uint64(ip) >= dEnd {
		return nil // disjoint
	}
	if dp == ip && dst.Stride == in.Stride {
		return nil // in place
	}
	return argErr(op, "output overlaps %s other than in place (same start and stride)", name)
}

// FieldOpCount is the number of results FieldOps writes per element.
const FieldOpCount = 6

// fieldOpsArgs is the argument block of goldfhe_field_ops:
//
//	(uint64_t *out, const uint64_t *a, const uint64_t *b, uint32_t n)
type fieldOpsArgs struct {
	out, a, b devicePtr
	n         uint32
	params    [4]unsafe.Pointer
}

func (p *fieldOpsArgs) init() {
	p.params = [4]unsafe.Pointer{unsafe.Pointer(&p.out), unsafe.Pointer(&p.a), unsafe.Pointer(&p.b), unsafe.Pointer(&p.n)}
}

type fieldOpsKernel struct {
	f    *Function
	mu   sync.Mutex
	args fieldOpsArgs
}

// FieldOps evaluates each field primitive of goldilocks.cuh on the pairs
// (a[i], b[i]) (goldfhe_field_ops), so that tests can compare the device
// arithmetic with the CPU's. With n = a.Len() = b.Len() and
// out.Len() = FieldOpCount·n, it writes
//
//	out[0n+i] = a+b, out[1n+i] = a−b  (a, b canonical)
//	out[2n+i] = a·b                   (any)
//	out[3n+i] = a·2^(b mod 192)       (any a)
//	out[4n+i] = (a + b·2^64 + (a XOR b)·2^128) mod p  (any)
//	out[5n+i] = a·2^32                (any)
//
// all mod p and canonical. out must not overlap a or b.
func (l *Library) FieldOps(s *Stream, out, a, b *DeviceBuffer[uint64]) error {
	const op = "Library.FieldOps"
	if out == nil || a == nil || b == nil {
		return argErr(op, "nil buffer")
	}
	n := a.Len()
	if b.Len() != n || out.Len() != FieldOpCount*n {
		return argErr(op, "lengths out %d, a %d, b %d; want %d·n, n, n", out.Len(), a.Len(), b.Len(), FieldOpCount)
	}
	if uint64(n) > maxUint32 {
		return argErr(op, "n = %d > 2^32-1", n)
	}
	for _, x := range []*DeviceBuffer[uint64]{out, a, b} {
		if x.a.c != l.c {
			return argErr(op, "a buffer belongs to another Context")
		}
	}
	if n == 0 {
		return nil // as every other launch: no pairs, no grid
	}
	outp, err := out.ptr(op)
	if err != nil {
		return err
	}
	ap, err := a.ptr(op)
	if err != nil {
		return err
	}
	bp, err := b.ptr(op)
	if err != nil {
		return err
	}
	for _, in := range []devicePtr{ap, bp} {
		if uint64(outp) < uint64(in)+uint64(n)*8 && uint64(in) < uint64(outp)+uint64(out.Len())*8 {
			return argErr(op, "out overlaps an input")
		}
	}
	sh, err := streamHandle(op, l.c, s)
	if err != nil {
		return err
	}
	blocks := min((n+threadsPerBlock-1)/threadsPerBlock, 1<<16)
	k := &l.fieldOps
	k.mu.Lock()
	defer k.mu.Unlock()
	k.args.out, k.args.a, k.args.b, k.args.n = outp, ap, bp, uint32(n)
	return launchPinned(k.f, dim3{uint32(blocks), 1, 1}, dim3{threadsPerBlock, 1, 1}, sh, &k.args, unsafe.Pointer(&k.args.params[0]))
}
