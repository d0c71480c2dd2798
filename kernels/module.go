package kernels

import (
	"fmt"
	"sync/atomic"
	"unsafe"
)

// Module is a loaded kernel image (cuModuleLoadData/cuModuleLoadFatBinary).
type Module struct {
	c *Context
	h atomic.Uintptr // CUmodule; 0 once closed
}

// LoadModule loads a kernel image: a fatbin, a cubin or PTX (with or
// without its terminating NUL). A fatbin goes through
// cuModuleLoadFatBinary, anything else through cuModuleLoadData; the
// driver picks the SASS for the device or JIT-compiles the PTX. An image
// with nothing for this device returns an error wrapping ErrBadImage, and
// so, before any driver call, does one whose headers declare more bytes
// than it has, which the driver would read past the end of, or a fatbin
// wrapper struct (checkImage).
func (c *Context) LoadModule(image []byte) (*Module, error) {
	if len(image) == 0 {
		return nil, fmt.Errorf("kernels: LoadModule: %w: empty image", short(ErrNoFatbin))
	}
	kind, err := checkImage(image)
	if err != nil {
		return nil, fmt.Errorf("kernels: LoadModule: %w: %v", short(ErrBadImage), err)
	}
	// The driver reads 8-byte header fields: hand it an 8-byte aligned
	// copy, which also keeps Go's garbage collector out of the picture.
	words := make([]uint64, (len(image)+8)/8) // +8: a NUL after the image ends PTX that has none
	buf := unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), len(words)*8)
	copy(buf, image)
	s, name := symModuleLoadData, "cuModuleLoadData"
	if kind == imageFatbin {
		s, name = symModuleLoadFatBinary, "cuModuleLoadFatBinary"
	}
	var h uintptr
	if err := c.do(name, s, uintptr(unsafe.Pointer(&h)), uintptr(unsafe.Pointer(&words[0]))); err != nil {
		return nil, err
	}
	m := &Module{c: c}
	m.h.Store(h)
	c.modules.Add(1)
	return m, nil
}

func (m *Module) handle(op string) (uintptr, error) {
	h := m.h.Load()
	if h == 0 {
		return 0, fmt.Errorf("kernels: %s: Module %w", op, shortClosed)
	}
	return h, nil
}

// Close unloads the module (cuModuleUnload); its Functions become unusable.
// A second Close is a no-op. It must not run beside other use of m or its
// Functions (package doc, "Threading and contexts").
func (m *Module) Close() error {
	h := m.h.Swap(0)
	if h == 0 {
		return nil
	}
	m.c.modules.Add(-1)
	return m.c.do("cuModuleUnload", symModuleUnload, h)
}

// Function is one __global__ kernel of a Module.
type Function struct {
	m        *Module
	name     string
	h        uintptr // CUfunction
	launchOp string  // "cuLaunchKernel(name)", for errors
	// launchExOp is "cuLaunchKernelEx(name)" (launchPDL), for errors.
	launchExOp string
}

// Function looks up an extern "C" kernel by name (cuModuleGetFunction).
func (m *Module) Function(name string) (*Function, error) {
	mh, err := m.handle("Module.Function")
	if err != nil {
		return nil, err
	}
	cname := append([]byte(name), 0)
	var h uintptr
	if err := m.c.do("cuModuleGetFunction("+name+")", symModuleGetFunction, uintptr(unsafe.Pointer(&h)), mh, uintptr(unsafe.Pointer(&cname[0]))); err != nil {
		return nil, err
	}
	return &Function{m: m, name: name, h: h, launchOp: "cuLaunchKernel(" + name + ")", launchExOp: "cuLaunchKernelEx(" + name + ")"}, nil
}

// Name returns the kernel's name.
func (f *Function) Name() string { return f.name }

func (f *Function) handle(op string) (uintptr, error) {
	if _, err := f.m.handle(op); err != nil {
		return 0, err
	}
	return f.h, nil
}

// CUfunction_attribute values (cuda.h).
const (
	funcMaxThreadsPerBlock = 0
	funcSharedSizeBytes    = 1
	funcConstSizeBytes     = 2
	funcLocalSizeBytes     = 3
	funcNumRegs            = 4
	funcPTXVersion         = 5
	funcBinaryVersion      = 6
	funcMaxDynamicShared   = 8
	funcPreferredCarveout  = 9
)

// SetMaxDynamicSharedMemory raises (or lowers) the dynamic shared memory a
// launch of f may ask for; above 48 KiB this is required, up to the
// device's DeviceInfo.SharedPerBlockOptin (cuFuncSetAttribute,
// CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES).
func (f *Function) SetMaxDynamicSharedMemory(bytes int) error {
	op := "cuFuncSetAttribute(" + f.name + ", MAX_DYNAMIC_SHARED_SIZE_BYTES)"
	if bytes < 0 || bytes > f.m.c.info.SharedPerBlockOptin {
		return argErr(op, "%d bytes, device allows [0, %d]", bytes, f.m.c.info.SharedPerBlockOptin)
	}
	h, err := f.handle(op)
	if err != nil {
		return err
	}
	return f.m.c.do(op, symFuncSetAttribute, h, funcMaxDynamicShared, uintptr(uint32(int32(bytes))))
}

// PreferSharedCarveout asks the driver to give f's launches pct percent of
// the unified L1/shared storage as shared memory
// (CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT; the driver rounds up
// to a configuration it has, e.g. 0, 8, 16, 32, 64, 100, 132, 164, 196 or
// 228 KiB on sm_90). A hint; the driver may choose otherwise.
func (f *Function) PreferSharedCarveout(pct int) error {
	op := "cuFuncSetAttribute(" + f.name + ", PREFERRED_SHARED_MEMORY_CARVEOUT)"
	if pct < 0 || pct > 100 {
		return argErr(op, "%d%%, want [0, 100]", pct)
	}
	h, err := f.handle(op)
	if err != nil {
		return err
	}
	return f.m.c.do(op, symFuncSetAttribute, h, funcPreferredCarveout, uintptr(pct))
}

// sharedCarveout is the smallest carveout, in percent of perSM bytes, that
// holds as many blocks of `need` dynamic (plus static) shared bytes as the
// largest carveout does, or as maxBlocks when that is fewer (the blocks
// the registers and threads allow; 0 when unknown): the occupancy is
// unchanged, and what is left stays L1 cache. The driver reserves reserve
// bytes per block (1 KiB on sm_8x and sm_90). 100 when perSM is unknown.
func sharedCarveout(need, static, reserve, perSM, maxBlocks int) int {
	per := need + static + reserve
	if perSM <= 0 || per <= 0 || per > perSM {
		return 100
	}
	blocks := perSM / per
	if maxBlocks > 0 {
		blocks = min(blocks, maxBlocks)
	}
	return min(100, (blocks*per*100+perSM-1)/perSM)
}

// FunctionAttributes are a compiled kernel's resources, as the driver
// reports them for the device's chosen SASS.
type FunctionAttributes struct {
	Registers          int // per thread
	LocalBytes         int // local memory per thread (spills, stack arrays)
	StaticSharedBytes  int // statically declared shared memory per block
	ConstBytes         int
	MaxThreadsPerBlock int // for this kernel's register use
	MaxDynamicShared   int // the current dynamic shared memory limit
	PTXVersion         int // e.g. 90 for compute_90
	BinaryVersion      int // SASS version, e.g. 90
}

// Attributes reads f's resource usage (cuFuncGetAttribute).
func (f *Function) Attributes() (FunctionAttributes, error) {
	var a FunctionAttributes
	op := "cuFuncGetAttribute(" + f.name + ")"
	h, err := f.handle(op)
	if err != nil {
		return a, err
	}
	for _, q := range []struct {
		attr int
		dst  *int
	}{
		{funcNumRegs, &a.Registers},
		{funcLocalSizeBytes, &a.LocalBytes},
		{funcSharedSizeBytes, &a.StaticSharedBytes},
		{funcConstSizeBytes, &a.ConstBytes},
		{funcMaxThreadsPerBlock, &a.MaxThreadsPerBlock},
		{funcMaxDynamicShared, &a.MaxDynamicShared},
		{funcPTXVersion, &a.PTXVersion},
		{funcBinaryVersion, &a.BinaryVersion},
	} {
		var v int32
		if err := f.m.c.do(op, symFuncGetAttribute, uintptr(unsafe.Pointer(&v)), uintptr(q.attr), h); err != nil {
			return a, err
		}
		*q.dst = int(v)
	}
	return a, nil
}

// MaxActiveBlocksPerSM is how many blocks of f, each of blockThreads
// threads and dynamicShared bytes of dynamic shared memory, one
// multiprocessor holds at once (cuOccupancyMaxActiveBlocksPerMultiprocessor):
// the least that its registers, shared memory, threads and block slots
// allow. 0 when one block does not fit.
func (f *Function) MaxActiveBlocksPerSM(blockThreads, dynamicShared int) (int, error) {
	op := "cuOccupancyMaxActiveBlocksPerMultiprocessor(" + f.name + ")"
	if blockThreads <= 0 || dynamicShared < 0 {
		return 0, argErr(op, "%d threads, %d shared bytes", blockThreads, dynamicShared)
	}
	h, err := f.handle(op)
	if err != nil {
		return 0, err
	}
	var v int32
	if err := f.m.c.do(op, symOccupancyMaxActiveBlocks, uintptr(unsafe.Pointer(&v)), h, uintptr(blockThreads), uintptr(dynamicShared)); err != nil {
		return 0, err
	}
	return int(v), nil
}

// dim3 is a CUDA launch dimension (three C unsigned ints).
type dim3 struct{ x, y, z uint32 }

// launch enqueues f on stream sh with the kernel parameter array params
// (C void **kernelParams: one pointer per kernel argument, each to a value
// of the argument's C type). The caller keeps what params points to pinned
// for the duration of the call; cuLaunchKernel copies the values before it
// returns. In debug mode it then synchronises the context, so a kernel
// fault is reported here, naming the kernel.
func (f *Function) launch(grid, block dim3, shared uint32, sh uintptr, params unsafe.Pointer) error {
	return f.launchBy(f.launchOp, grid, block, shared, func(d *driver) Result {
		return d.call(symLaunchKernel, f.h,
			uintptr(grid.x), uintptr(grid.y), uintptr(grid.z),
			uintptr(block.x), uintptr(block.y), uintptr(block.z),
			uintptr(shared), sh, uintptr(params), 0)
	})
}

// launchBy makes the launch call (named op, of that configuration, for
// errors) with f's context current, and in debug mode then synchronises.
func (f *Function) launchBy(op string, grid, block dim3, shared uint32, call func(*driver) Result) error {
	c := f.m.c
	if err := c.enter(op); err != nil {
		return err
	}
	defer c.exit()
	if f.m.h.Load() == 0 {
		return fmt.Errorf("kernels: %s: Module %w", op, shortClosed)
	}
	if err := c.check(op, call(c.d)); err != nil {
		return fmt.Errorf("%w (grid %d×%d×%d, block %d×%d×%d, %d B shared)", err,
			grid.x, grid.y, grid.z, block.x, block.y, block.z, shared)
	}
	if c.debug.Load() {
		return c.check(f.name+" (debug: cuCtxSynchronize after launch)", c.d.call(symCtxSynchronize))
	}
	return nil
}

// launchConfig is the driver's CUlaunchConfig (cuda.h): grid and block
// dimensions, dynamic shared memory, stream, and the launch attributes.
type launchConfig struct {
	grid, block dim3
	shared      uint32
	_           uint32
	stream      uintptr
	attrs       *launchAttribute
	numAttrs    uint32
	_           uint32
}

// launchAttribute is the driver's CUlaunchAttribute: an id, padding to 8
// bytes, and a 64-byte value union.
type launchAttribute struct {
	id    uint32
	_     uint32
	value [64]byte
}

// attrProgrammaticStreamSerialization is
// CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION: with value 1 the
// kernel may start before the previous kernel of its stream has finished,
// as soon as every block of that kernel has executed
// griddepcontrol.launch_dependents (or exited).
const attrProgrammaticStreamSerialization = 6

// pdlLaunch is the pinned argument block of a programmatic dependent
// launch (cuLaunchKernelEx reads it during the call).
type pdlLaunch struct {
	cfg  launchConfig
	attr launchAttribute
}

// launchPDL is launch with programmatic dependent launch
// (cuLaunchKernelEx, attrProgrammaticStreamSerialization): f may start
// while the kernel before it on sh still runs, once that kernel's blocks
// have all signalled that they run (griddepcontrol.launch_dependents). The
// two kernels then synchronise through memory themselves: nothing orders
// f's reads after the earlier kernel's writes. pl is the caller's pinned
// block for the configuration.
func (f *Function) launchPDL(pl *pdlLaunch, grid, block dim3, shared uint32, sh uintptr, params unsafe.Pointer) error {
	pl.attr = launchAttribute{id: attrProgrammaticStreamSerialization}
	pl.attr.value[0] = 1 // programmaticStreamSerializationAllowed (int)
	pl.cfg = launchConfig{grid: grid, block: block, shared: shared, stream: sh, attrs: &pl.attr, numAttrs: 1}
	return f.launchBy(f.launchExOp, grid, block, shared, func(d *driver) Result {
		return d.call(symLaunchKernelEx, uintptr(unsafe.Pointer(&pl.cfg)), f.h, uintptr(params), 0)
	})
}
