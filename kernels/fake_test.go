package kernels

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/goldfhe/goldfhe/smallntt"
	"github.com/stretchr/testify/require"
)

// fakeGPU implements the bound driver entry points in Go memory, so the Go
// side of this package (argument marshalling, bookkeeping, error paths) is
// tested on machines without a GPU. It runs the library's kernels on the
// CPU with smallntt's arithmetic, following the CUDA sources' index math.
type fakeGPU struct {
	mu       sync.Mutex
	next     uint64            // next device address to hand out
	dev      map[uint64][]byte // device allocations by base address
	host     map[uintptr][]uint64
	total    uint64 // device memory size
	sms      int32  // streaming multiprocessors
	devices  int32  // device count; all share the memory above
	arch     fakeArch
	retains  int
	handles  uintptr
	funcs    map[uintptr]string // CUfunction → kernel name
	attrs    map[uintptr]map[int32]int32
	modules  map[uintptr]bool
	streams  map[uintptr]bool
	events   map[uintptr]bool
	pending  Result // an error the next synchronisation reports (a fault)
	syncs    int    // cuCtxSynchronize calls
	calls    map[sym]int
	launches []fakeLaunch
	fail     map[sym]Result            // inject: the next call of sym returns this
	plans    map[string]*smallntt.Plan // fakeNTT's

	// threads holds each OS thread's stack of current contexts, top last
	// (by fakeThread; an emptied stack keeps its slice, so that pushing
	// again allocates nothing). The calls that work in the current
	// context fail with fakeInvalidContext on a thread that has none, and
	// inContext counts them by the context they ran in.
	threads   map[int][]uintptr
	inContext map[uintptr]int
}

// fakeInvalidContext is CUDA_ERROR_INVALID_CONTEXT: no context is current,
// or the context stack to pop is empty.
const fakeInvalidContext Result = 201

// fakeContextFree are the entry points that need no current context.
var fakeContextFree = map[sym]bool{
	symInit: true, symDriverGetVersion: true, symGetErrorName: true, symGetErrorString: true,
	symDeviceGetCount: true, symDeviceGet: true, symDeviceGetName: true, symDeviceTotalMem: true,
	symDeviceGetAttribute: true, symDeviceGetUuid: true,
	symDevicePrimaryCtxRetain: true, symDevicePrimaryCtxRelease: true,
	symCtxGetCurrent: true, symCtxPushCurrent: true, symCtxPopCurrent: true,
}

// fakeArch is what the fake device's attributes and occupancy follow: the
// limits of one compute capability (CUDA C++ Programming Guide, "Technical
// Specifications per Compute Capability"), and whether it has thread block
// clusters, without which the fatbin has no cluster or split kernels
// (bootstrap_cluster.cuh, bootstrap_split.cuh are sm_90 only).
type fakeArch struct {
	major, minor int32
	sharedPerSM  int32 // bytes a multiprocessor has, 1 KiB of it reserved per block
	sharedOptin  int32 // bytes a block may have after raising its limit
	warps        int   // resident warps per SM
	blocks       int   // resident blocks per SM
	l2           int32
	clusters     bool
}

// fakeArchs: an H100 or H200 (the default), an A100, and the GeForce /
// workstation parts of Ampere and Ada (RTX 30 and 40, A40, L4, L40).
var fakeArchs = map[string]fakeArch{
	"sm_90": {9, 0, 228 << 10, 227 << 10, 64, 32, 50 << 20, true},
	"sm_80": {8, 0, 164 << 10, 163 << 10, 64, 32, 40 << 20, false},
	"sm_86": {8, 6, 100 << 10, 99 << 10, 48, 16, 6 << 20, false},
	"sm_89": {8, 9, 100 << 10, 99 << 10, 48, 24, 72 << 20, false},
}

// occupancy is blocks per SM under a's limits (64K registers allotted per
// warp in units of 256) for blocks of threads threads, regs registers per
// thread, static and dynamic shared bytes.
func (a fakeArch) occupancy(regs, static, threads, dynamic int) int {
	if threads <= 0 || threads > 1024 {
		return 0
	}
	warps := (threads + 31) / 32
	perWarp := (max(regs, 1)*32 + 255) / 256 * 256
	return min(a.blocks, a.warps/warps, 65536/(perWarp*warps), int(a.sharedPerSM)/(static+dynamic+1<<10))
}

type fakeLaunch struct {
	name        string
	grid, block dim3
	shared      uint32
	stream      uintptr
}

const fakeDeviceBase = 0x7f00_0000_0000

func newFakeGPU() *fakeGPU {
	return &fakeGPU{
		next:    fakeDeviceBase,
		dev:     map[uint64][]byte{},
		host:    map[uintptr][]uint64{},
		total:   80 << 30,
		sms:     132,
		devices: 1,
		arch:    fakeArchs["sm_90"],
		funcs:   map[uintptr]string{},
		attrs:   map[uintptr]map[int32]int32{},
		modules: map[uintptr]bool{},
		streams: map[uintptr]bool{},
		events:  map[uintptr]bool{},
		calls:   map[sym]int{},
		fail:    map[sym]Result{},
		handles: 0x1000,

		threads:   map[int][]uintptr{},
		inContext: map[uintptr]int{},
	}
}

// current returns the calling thread's context stack and the context on
// top of it (0: none). g.mu is held.
func (g *fakeGPU) current() (int, []uintptr, uintptr) {
	tid := fakeThread()
	st := g.threads[tid]
	if len(st) == 0 {
		return tid, st, 0
	}
	return tid, st, st[len(st)-1]
}

// contextCall does what the context-stack entry points do to the calling
// thread's stack (cuCtxPopCurrent hands back the popped context where
// asked).
// Any other entry point that needs a context fails without one, else it
// is counted in inContext; ok reports whether s may go on.
func (g *fakeGPU) contextCall(s sym, a []uintptr) (r Result, ok bool) {
	tid, st, cur := g.current()
	switch s {
	case symCtxGetCurrent:
		put(a, 0, cur)
	case symCtxPushCurrent:
		if a[0] == 0 {
			return fakeInvalidContext, false
		}
		st = append(st, a[0])
	case symCtxPopCurrent:
		if len(st) == 0 {
			return fakeInvalidContext, false
		}
		if a[0] != 0 {
			put(a, 0, cur)
		}
		st = st[:len(st)-1]
	default:
		if fakeContextFree[s] {
			return 0, true
		}
		if cur == 0 {
			return fakeInvalidContext, false
		}
		g.inContext[cur]++
		return 0, true
	}
	g.threads[tid] = st
	return 0, false
}

// threadsWithContexts returns the context stacks of the OS threads that
// have a context current, by thread.
func (g *fakeGPU) threadsWithContexts() map[int][]uintptr {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := map[int][]uintptr{}
	for tid, st := range g.threads {
		if len(st) > 0 {
			out[tid] = slices.Clone(st)
		}
	}
	return out
}

// requireFake64 skips t on a 32-bit platform, saying why: the fake stands
// in for the 64-bit CUDA driver, whose device addresses (fakeDeviceBase and
// up) do not fit a 32-bit uintptr, and there this package never reaches a
// driver at all (dlopen_other.go).
func requireFake64(t testing.TB) {
	t.Helper()
	if strconv.IntSize < 64 {
		t.Skipf("the fake CUDA driver needs a 64-bit platform (%s/%s has no CUDA driver to fake)", runtime.GOOS, runtime.GOARCH)
	}
}

// newFake returns a Context and a Library on a fresh fake GPU.
func newFake(t *testing.T) (*fakeGPU, *Context, *Library) {
	t.Helper()
	requireFake64(t)
	g := newFakeGPU()
	d := &driver{path: "fake", fake: g.call}
	c, err := open(d, 0)
	require.NoError(t, err)
	c.SetDebug(false)
	l, err := c.loadLibrary(fakeImage, "fake")
	require.NoError(t, err)
	t.Cleanup(func() {
		l.Close()
		c.Close()
	})
	return g, c, l
}

// fakeImage looks like a fatbin to LoadModule: a whole header (version 1,
// 16 bytes) declaring no entries.
var fakeImage = binary.LittleEndian.AppendUint64(
	binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(nil, fatbinMagic), 1|fatbinHeaderSize<<16), 0)

// fakeStrings are NUL-terminated, kept alive for the driver's const char*.
var fakeStrings = map[Result][2][]byte{
	resultInvalidValue:   {[]byte("CUDA_ERROR_INVALID_VALUE\x00"), []byte("invalid argument\x00")},
	resultOutOfMemory:    {[]byte("CUDA_ERROR_OUT_OF_MEMORY\x00"), []byte("out of memory\x00")},
	resultIllegalAddress: {[]byte("CUDA_ERROR_ILLEGAL_ADDRESS\x00"), []byte("an illegal memory access was encountered\x00")},
	resultNoBinaryForGPU: {[]byte("CUDA_ERROR_NO_BINARY_FOR_GPU\x00"), []byte("no kernel image is available for execution on the device\x00")},
	500:                  {[]byte("CUDA_ERROR_NOT_FOUND\x00"), []byte("named symbol not found\x00")},
	214:                  {[]byte("CUDA_ERROR_ECC_UNCORRECTABLE\x00"), []byte("uncorrectable ECC error encountered\x00")},
	226:                  {[]byte("CUDA_ERROR_CONTAINED\x00"), []byte("Invalid access of peer GPU memory over nvlink or a hardware error\x00")},
	999:                  {[]byte("CUDA_ERROR_UNKNOWN\x00"), []byte("unknown error\x00")},
	fakeInvalidContext:   {[]byte("CUDA_ERROR_INVALID_CONTEXT\x00"), []byte("invalid device context\x00")},
	701:                  {[]byte("CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES\x00"), []byte("too many resources requested for launch\x00")},
}

// arg reinterprets argument i as a pointer (the driver's view of it).
func arg(a []uintptr, i int) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&a[i])) }

func put[T any](a []uintptr, i int, v T) { *(*T)(arg(a, i)) = v }

// devBytes returns the device bytes [p, p+n), which must lie in one
// allocation.
func (g *fakeGPU) devBytes(p, n uint64) ([]byte, bool) {
	for base, b := range g.dev {
		if p >= base && p+n <= base+uint64(len(b)) {
			return b[p-base : p-base+n], true
		}
	}
	return nil, false
}

func (g *fakeGPU) hostBytes(a []uintptr, i int, n uint64) []byte {
	return unsafe.Slice((*byte)(arg(a, i)), n)
}

func (g *fakeGPU) newHandle() uintptr {
	g.handles += 0x10
	return g.handles
}

func (g *fakeGPU) call(s sym, a []uintptr) Result {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.calls[s]++
	if r, ok := g.fail[s]; ok {
		delete(g.fail, s)
		return r
	}
	if r, ok := g.contextCall(s, a); !ok {
		return r
	}
	switch s {
	case symInit:
		return 0
	case symDriverGetVersion:
		put(a, 0, int32(13000))
	case symGetErrorName, symGetErrorString:
		str, ok := fakeStrings[Result(int32(a[0]))]
		if !ok {
			return resultInvalidValue
		}
		put(a, 1, &str[int(s-symGetErrorName)][0])
	case symDeviceGetCount:
		put(a, 0, g.devices)
	case symDeviceGet:
		if int32(a[1]) < 0 || int32(a[1]) >= g.devices {
			return resultInvalidDevice
		}
		put(a, 0, int32(a[1]))
	case symDeviceGetName:
		copy(g.hostBytes(a, 0, uint64(a[1])), "Fake GPU\x00")
	case symDeviceGetUuid:
		u := g.hostBytes(a, 0, 16)
		for i := range u {
			u[i] = byte(0x10*int(a[1]) + i) // a UUID per device
		}
	case symDeviceTotalMem:
		put(a, 0, g.total)
	case symDeviceGetAttribute:
		v := map[uintptr]int32{
			attrComputeMajor: g.arch.major, attrComputeMinor: g.arch.minor, attrMultiprocessorCount: g.sms,
			attrL2CacheSize: g.arch.l2, attrMaxSharedPerBlock: 48 << 10,
			attrMaxSharedPerBlockOptin: g.arch.sharedOptin, attrMaxSharedPerSM: g.arch.sharedPerSM,
			attrMaxThreadsPerBlock: 1024, attrWarpSize: 32,
		}[a[1]]
		put(a, 0, v)
	case symDevicePrimaryCtxRetain:
		g.retains++
		put(a, 0, uintptr(0xC0+0x100*a[1])) // a context per device
	case symDevicePrimaryCtxRelease:
		g.retains--
	case symCtxSynchronize, symStreamSynchronize, symEventSynchronize:
		g.syncs++
		r := g.pending
		g.pending = 0
		return r
	case symMemGetInfo:
		var used uint64
		for _, b := range g.dev {
			used += uint64(len(b))
		}
		put(a, 0, g.total-used)
		put(a, 1, g.total)
	case symModuleLoadData, symModuleLoadFatBinary:
		img := g.hostBytes(a, 1, 4)
		if binary.LittleEndian.Uint32(img) != fatbinMagic {
			return resultNoBinaryForGPU
		}
		h := g.newHandle()
		g.modules[h] = true
		put(a, 0, h)
	case symModuleUnload:
		if !g.modules[a[0]] {
			return 400
		}
		delete(g.modules, a[0])
	case symModuleGetFunction:
		name := cString((*byte)(arg(a, 2)), 256)
		switch name {
		case "goldfhe_mul", "goldfhe_muladd", "goldfhe_field_ops", "fault",
			"goldfhe_ntt_matrix_fwd", "goldfhe_ntt_matrix_inv", "goldfhe_ntt_butterfly_fwd", "goldfhe_ntt_butterfly_inv", "goldfhe_small_matrix", "goldfhe_small_butterfly":
		default:
			if !strings.HasPrefix(name, "goldfhe_ntt_hybrid_") {
				return 500
			}
		}
		h := g.newHandle()
		g.funcs[h] = name
		v := 10*g.arch.major + g.arch.minor
		g.attrs[h] = map[int32]int32{funcNumRegs: 32, funcMaxThreadsPerBlock: 1024, funcPTXVersion: v, funcBinaryVersion: v}
		put(a, 0, h)
	case symFuncSetAttribute:
		at := g.attrs[a[0]]
		if int32(a[1]) == funcMaxDynamicShared && int32(a[2]) > g.arch.sharedOptin-at[funcSharedSizeBytes] {
			return resultInvalidValue
		}
		at[int32(a[1])] = int32(a[2])
	case symFuncGetAttribute:
		put(a, 0, g.attrs[a[2]][int32(a[1])])
	case symOccupancyMaxActiveBlocks:
		at := g.attrs[a[1]]
		put(a, 0, int32(g.arch.occupancy(int(at[funcNumRegs]), int(at[funcSharedSizeBytes]), int(a[2]), int(a[3]))))
	case symMemAlloc:
		n := uint64(a[1])
		var used uint64
		for _, b := range g.dev {
			used += uint64(len(b))
		}
		if n == 0 {
			return resultInvalidValue
		}
		if n > g.total-used {
			return resultOutOfMemory
		}
		p := g.next
		g.dev[p] = make([]byte, n)
		g.next += (n + 511) &^ 511
		put(a, 0, p)
	case symMemFree:
		if _, ok := g.dev[uint64(a[0])]; !ok {
			return resultInvalidValue
		}
		delete(g.dev, uint64(a[0]))
	case symMemsetD8, symMemsetD8Async:
		b, ok := g.devBytes(uint64(a[0]), uint64(a[2]))
		if !ok {
			return resultInvalidValue
		}
		for i := range b {
			b[i] = byte(a[1])
		}
	case symMemsetD32, symMemsetD32Async:
		b, ok := g.devBytes(uint64(a[0]), 4*uint64(a[2]))
		if !ok {
			return resultInvalidValue
		}
		for i := 0; i < len(b); i += 4 {
			binary.LittleEndian.PutUint32(b[i:], uint32(a[1]))
		}
	case symMemHostAlloc:
		if uint64(a[1]) > 1<<32 {
			return resultOutOfMemory
		}
		m := make([]uint64, (a[1]+7)/8)
		p := uintptr(unsafe.Pointer(&m[0]))
		g.host[p] = m
		put(a, 0, unsafe.Pointer(&m[0]))
	case symMemFreeHost:
		p := uintptr(arg(a, 0))
		if _, ok := g.host[p]; !ok {
			return resultInvalidValue
		}
		delete(g.host, p)
	case symMemcpyHtoD, symMemcpyHtoDAsync:
		d, ok := g.devBytes(uint64(a[0]), uint64(a[2]))
		if !ok {
			return resultInvalidValue
		}
		copy(d, g.hostBytes(a, 1, uint64(a[2])))
	case symMemcpyDtoH, symMemcpyDtoHAsync:
		src, ok := g.devBytes(uint64(a[1]), uint64(a[2]))
		if !ok {
			return resultInvalidValue
		}
		copy(g.hostBytes(a, 0, uint64(a[2])), src)
	case symMemcpyDtoD, symMemcpyDtoDAsync:
		d, ok1 := g.devBytes(uint64(a[0]), uint64(a[2]))
		src, ok2 := g.devBytes(uint64(a[1]), uint64(a[2]))
		if !ok1 || !ok2 {
			return resultInvalidValue
		}
		copy(d, src)
	case symStreamCreate:
		h := g.newHandle()
		g.streams[h] = true
		put(a, 0, h)
	case symStreamDestroy:
		if !g.streams[a[0]] {
			return 400
		}
		delete(g.streams, a[0])
	case symStreamWaitEvent:
		if !g.streams[a[0]] || !g.events[a[1]] {
			return 400
		}
	case symEventCreate:
		h := g.newHandle()
		g.events[h] = true
		put(a, 0, h)
	case symEventDestroy:
		if !g.events[a[0]] {
			return 400
		}
		delete(g.events, a[0])
	case symEventRecord, symEventQuery:
		if !g.events[a[0]] {
			return 400
		}
	case symEventElapsedTime:
		put(a, 0, float32(1.5))
	case symLaunchKernel:
		return g.launch(a)
	case symLaunchKernelEx:
		la, _ := fakeLaunchEx(a)
		return g.launch(la)
	default:
		panic(fmt.Sprintf("fake driver: %v not implemented", s))
	}
	return 0
}

// sharedFits reports whether a launch of function h may have dynamic bytes
// of dynamic shared memory: up to its MaxDynamicShared attribute, which
// starts at 48 KiB less its static shared memory.
func (g *fakeGPU) sharedFits(h uintptr, dynamic uint32) bool {
	at := g.attrs[h]
	limit, ok := at[funcMaxDynamicShared]
	if !ok {
		limit = 48<<10 - at[funcSharedSizeBytes]
	}
	return int64(dynamic) <= int64(limit)
}

// launch checks the configuration like CUDA does and runs the kernel.
func (g *fakeGPU) launch(a []uintptr) Result {
	name, ok := g.funcs[a[0]]
	if !ok {
		return 400
	}
	l := fakeLaunch{name: name,
		grid:   dim3{uint32(a[1]), uint32(a[2]), uint32(a[3])},
		block:  dim3{uint32(a[4]), uint32(a[5]), uint32(a[6])},
		shared: uint32(a[7]), stream: a[8]}
	if l.grid.x == 0 || l.grid.y == 0 || l.grid.z == 0 || l.grid.y > 65535 ||
		l.block.x*l.block.y*l.block.z > 1024 || l.block.x*l.block.y*l.block.z == 0 || !g.sharedFits(a[0], l.shared) {
		return resultInvalidValue
	}
	nparams := map[string]int{"fault": 0, "goldfhe_mul": 8, "goldfhe_muladd": 8, "goldfhe_field_ops": 4}[name]
	var params []unsafe.Pointer
	if nparams > 0 {
		params = unsafe.Slice((*unsafe.Pointer)(arg(a, 9)), nparams)
	}
	u64 := func(i int) uint64 { return *(*uint64)(params[i]) }
	u32 := func(i int) uint32 { return *(*uint32)(params[i]) }
	words := func(p, n uint64) []uint64 {
		b, ok := g.devBytes(p, 8*n)
		if !ok {
			panic(fmt.Sprintf("fake %s: device range %#x+%d not allocated", name, p, 8*n))
		}
		return unsafe.Slice((*uint64)(unsafe.Pointer(&b[0])), n)
	}
	if r, ok := g.fakeNTT(name, a, words); ok {
		if r == 0 {
			g.launches = append(g.launches, l)
		}
		return r
	}
	switch name {
	case "fault":
		g.pending = resultIllegalAddress // reported by the next synchronisation
	case "goldfhe_mul", "goldfhe_muladd":
		dst, pa, pb := u64(0), u64(1), u64(2)
		n, count := uint64(u32(3)), uint64(u32(4))
		sd, sa, sb := u64(5), u64(6), u64(7)
		if uint64(l.grid.x)*uint64(l.block.x) < n {
			panic("fake: grid does not cover n")
		}
		for v := uint64(0); v < count; v++ {
			d := words(dst+8*v*sd, n)
			x := words(pa+8*v*sa, n)
			y := words(pb+8*v*sb, n)
			for i := range d {
				if name == "goldfhe_mul" {
					d[i] = smallntt.Mul(x[i], y[i])
				} else {
					d[i] = smallntt.Add(d[i], smallntt.Mul(x[i], y[i]))
				}
			}
		}
	case "goldfhe_field_ops":
		n := uint64(u32(3))
		out, x, y := words(u64(0), 6*n), words(u64(1), n), words(u64(2), n)
		for i := uint64(0); i < n; i++ {
			r := fieldOpsRef(x[i], y[i])
			for k := range r {
				out[uint64(k)*n+i] = r[k]
			}
		}
	}
	g.launches = append(g.launches, l)
	return 0
}

// fieldOpsRef is the CPU reference of goldfhe_field_ops for one pair.
func fieldOpsRef(a, b uint64) [FieldOpCount]uint64 {
	var r [FieldOpCount]uint64
	if a < smallntt.P && b < smallntt.P {
		r[0] = smallntt.Add(a, b)
		r[1] = smallntt.Sub(a, b)
	}
	r[2] = smallntt.Mul(a, b)
	r[3] = smallntt.Mul(a, smallntt.Pow(2, b%192))
	r[4] = reduce192Ref(a, b, a^b)
	r[5] = smallntt.Mul(a, 1<<32)
	return r
}

// reduce192Ref computes (z + y·2^64 + w·2^128) mod p with plain 128-bit
// remainders: 2^64 ≡ 2^32−1 and 2^128 ≡ −2^32 are not assumed.
func reduce192Ref(z, y, w uint64) uint64 {
	// Horner: ((w·2^64 + y) mod p)·2^64 + z, each step a 128-bit remainder.
	_, t := bits.Div64(w%smallntt.P, y, smallntt.P)
	_, r := bits.Div64(t, z, smallntt.P)
	return r
}
