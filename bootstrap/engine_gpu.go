package bootstrap

import (
	"errors"
	"fmt"
	"iter"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/goldfhe/goldfhe/kernels"
	"github.com/goldfhe/goldfhe/kernels/gpuntt"
	"github.com/goldfhe/goldfhe/smallntt"
	"github.com/goldfhe/goldfhe/tfhe"
	"github.com/goldfhe/goldfhe/torus"
)

// ErrNoGPU is wrapped by the error of NewGPU when no GPU can be used at all:
// no CUDA driver, no CUDA device, or none with the ordinal GPUOptions.Device
// names. The error also wraps the kernels sentinel that says which
// (kernels.ErrNoDriver, kernels.ErrNoDevice), and its text gives the
// driver's reason (for an ordinal out of range, the range), which New's
// Reason repeats when UseAuto falls back to the CPU engine.
var ErrNoGPU = errors.New("bootstrap: no usable GPU")

// GPUOptions configures NewGPU. The zero value selects GPU 0, the fastest
// GPU NTT plan for the key's N and a batch size from the free device memory.
type GPUOptions struct {
	// Device is the CUDA device ordinal.
	Device int
	// Plan is the NTT plan of the polynomial products; it must have N =
	// PolyDegree of the key's parameters and a GPU kernel (gpuntt: every
	// variant; Hybrid only for kernels.HybridShapes). When nil, the engine
	// uses the Hybrid variant for N = 512 (16×32) and 1024 (32×32) — for
	// the named sets that means the wide or fused kernels (BlindRotation) —
	// and the Butterfly for other sizes. With the step kernels and a hybrid
	// plan it picks per device pass: the Hybrid plan for passes of at least
	// SmallPassSamples samples and the Butterfly (one block of N/2 threads
	// per polynomial: lower latency) for smaller ones — each the faster in
	// its range on an H200 (BENCHMARKS.md, "GPU bootstrapping"). Every plan
	// gives the same outputs, and one NTT-domain key serves all.
	Plan *smallntt.Plan
	// MaxBatch is the most ciphertexts one pass over the device holds;
	// larger batches are split. 0 selects DefaultMaxBatch, lowered to what
	// half of the free device memory holds.
	MaxBatch int
	// BlindRotation selects the blind-rotation kernels; the zero value,
	// BlindRotationAuto, picks per pass. Forcing one is for comparisons
	// and benchmarks.
	BlindRotation BlindRotation
	// NoMerge runs concurrent calls one after another, each alone, where
	// by default small calls that wait for the GPU are merged into one
	// batch (see GPU, Concurrency): for measuring each call alone.
	NoMerge bool
}

// BlindRotation names the GPU engine's ways of running the blind rotation
// of a pass. All give the same bits.
type BlindRotation int

const (
	// BlindRotationAuto, for the named parameter sets (the shapes of
	// kernels.WideShapes) with no plan or a hybrid plan given: the wide
	// kernel, the fastest at every batch size measured on an H200 (1 to
	// 16,384 samples; BENCHMARKS.md, "GPU bootstrapping"); a fused shape
	// without a wide kernel: the fused kernel. Other sets, and forced
	// non-hybrid plans, run the step kernels (with no plan given: the
	// butterfly NTT below SmallPassSamples, the hybrid above).
	BlindRotationAuto BlindRotation = iota
	// BlindRotationFused: one launch per pass, one block of (k+1)·l warps
	// per sample, each transform one warp's two-stage hybrid NTT, the
	// accumulator in shared memory (kernels.BlindRotateFused; needs a
	// hybrid plan of a fused shape, or none).
	BlindRotationFused
	// BlindRotationWide: one launch per pass of the wide family
	// (kernels.BlindRotateWide), the accumulator in shared memory, each
	// transform the three-stage hybrid NTT: on Hopper, for passes of up
	// to SMs/8 samples, the split kernel (a cluster of 8 blocks per
	// sample, split by NTT index: the lowest latency; with a grouped key
	// up to SMs/4, each step's summed key formed ahead by a combine
	// kernel on the other SMs: kernels.BlindRotateSplit), up to SMs/(k+1)
	// the cluster kernel (k+1 blocks per sample, one per TRLWE column),
	// beyond that one block of N/16·(k+1)·l threads per sample.
	BlindRotationWide
	// BlindRotationUnfused: the step kernels, five launches per CMux step
	// with the accumulator and the digits in device memory.
	BlindRotationUnfused
)

// String names the choice as the engine's Name does.
func (b BlindRotation) String() string {
	switch b {
	case BlindRotationAuto:
		return "auto"
	case BlindRotationFused:
		return "fused"
	case BlindRotationWide:
		return "wide"
	case BlindRotationUnfused:
		return "unfused"
	}
	return fmt.Sprintf("BlindRotation(%d)", int(b))
}

// SmallPassSamples is the pass size below which an engine with no plan
// chosen that runs the step kernels uses the butterfly NTT kernels rather
// than the hybrid ones (measured crossover between 64 and 256 samples for
// every named set).
const SmallPassSamples = 128

// DefaultMaxBatch is the largest device pass NewGPU chooses by itself: far
// more than a GPU needs to be busy (an H100 runs 528 polynomial transforms
// at once, 88 ciphertexts' worth for TFHELib128).
const DefaultMaxBatch = 8192

// GPU is the Engine that runs gate bootstrapping on an NVIDIA GPU: every
// step of a batch — modulus switching, blind rotation, sample extraction,
// key switching — runs on the device; only TLWE samples cross the bus
// (DESIGN.md §6). Its outputs are bit-identical to the CPU engine's for the
// same key and inputs (DESIGN.md §3).
//
// The bootstrapping key (in the NTT domain) and the key-switching table
// are uploaded once, by NewGPU; with the flat kernel (TFHELib128 grouped
// by 3) the bootstrapping key twice, the second copy in the paired layout
// it reads (kernels.PairKey: 144 MB more), and for a key-switching key of
// basebit 2 (TFHELib128, CuFHE80) the table twice, the second copy packed
// for the tensor cores (kernels.PackKSTable: 41 MB more for TFHELib128),
// which key switching reads from 64 samples on. A batch runs as: upload;
// the blind rotation; key switching (one kernel); download. For the named parameter
// sets the blind rotation is one launch of the wide kernel
// (kernels.BlindRotateWide: one thread block per sample, from modulus
// switching through the n CMux steps — gadget digits straight into the
// registers of the first NTT stage, the multiply-accumulate against BK_i,
// the inverse NTT added into an accumulator that stays in shared memory —
// to sample extraction); BK_i is read from L2 by all the blocks at step i.
// Other shapes, forced non-hybrid plans and BlindRotationUnfused run it
// step by step: one kernel for modulus switching and the accumulator; per
// CMux step one kernel for X^{ā_i}·ACC − ACC and its gadget digits, a
// batched forward NTT of the (k+1)·l digit polynomials of every sample, one
// kernel for the multiply-accumulate against BK_i, a batched inverse NTT
// and one kernel adding the result into ACC; one kernel for sample
// extraction.
//
// Concurrency: a GPU is safe for concurrent use by several goroutines; its
// device pipeline (one set of device buffers and pinned staging buffers) is
// held by one call at a time. Calls of up to 4,096 samples that find it
// busy (or other calls waiting) are merged: the next of them to get it
// runs the waiting calls of the same kind and μ as one batch (up to 16,384
// samples at a time), so that goroutines making small calls (each
// evaluating its own circuit, say) share the GPU's full rate instead of
// waiting for each other's small batches. A merged call's outputs are its
// own, bit for bit as if it had run alone; when the merged batch fails (a
// device error), every call in it returns that error, and each may have
// some outputs written, as a failing call may. A small call that finds the
// GPU free and nobody waiting, and every larger call, runs alone, at once
// or when the GPU is free. GPUOptions.NoMerge runs calls one after another
// instead.
//
// Device faults: a kernel fault or device failure during a call (an
// illegal address, a trap, an uncorrectable ECC error, a GPU that stopped
// answering: the errors after which CUDA cannot use the context, or
// promises nothing, which kernels reports as kernels.ErrLaunchFailed)
// makes the call return an error wrapping kernels.ErrLaunchFailed. The
// passes finished before it keep their outputs; the others' outputs are
// not written. Every later call fails the same way at once, and Close
// releases the engine. CUDA documents kernel faults as leaving the process
// unable to use the device until it restarts (after a hardware error it
// promises nothing): NewGPU and New with UseGPU then fail with an error
// wrapping kernels.ErrLaunchFailed (TestGPUFault saw this after a trap),
// and New with UseAuto builds the CPU engine, its Reason saying why. Other
// device errors fail the call that meets them, wrapping kernels.Error.
// TestGPUFault checks the fault case with a kernel that traps
// (kernels/NOTES.md session 27); kernels' TestFakeGPUEngineDeviceErrors
// an uncorrectable ECC error and CUDA_ERROR_UNKNOWN mid-batch, and a
// recoverable error, on its fake driver.
//
// A GPU engine dropped without Close is closed some time after the garbage
// collector finds it unreachable, which releases its device memory, pinned
// host memory and context; call Close to release them at a known time (and
// to learn of a failed release).
type GPU struct {
	noCopy  noCopy
	c       *gpuCore // nil for a zero GPU
	cleanup runtime.Cleanup
}

// gpuCore is a GPU engine behind its handle (closeWhenDropped): calls,
// merged calls and the release reference it, never the GPU. Its methods
// named as GPU's are the handle's, which forward to them.
type gpuCore struct {
	params   tfhe.Params
	shape    kernels.BootstrapShape
	name     string
	info     kernels.DeviceInfo
	cpuPlan  *smallntt.Plan
	maxBatch int

	dev   *gpuntt.Device
	plan  *gpuntt.Plan
	small *gpuntt.Plan // for passes below SmallPassSamples; nil when a plan was chosen
	bsk   *kernels.BootstrapKernels
	// fused is the hybrid plan whose shape has a fused blind-rotation
	// kernel (its stage-1 tables are the kernel's), nil without one; wide
	// the wide kernel's shape (its tables in buf.wideTables), zero without
	// one.
	fused *gpuntt.Plan
	wide  kernels.WideShape
	// few is the wide kernel with N/8 threads per polynomial, one block per
	// SM, which asks L2 for each next step's key ahead (kernels
	// bs_prefetch_next_key): passes of at most a sample per SM beyond the
	// split and cluster kernels run it instead of wide; zero without one.
	few kernels.WideShape
	// cluster is the cluster kernel (a cluster of k+1 blocks per sample,
	// kernels.WideShape.Cluster) that passes small enough for every block
	// to have an SM run instead of wide; zero without one.
	cluster kernels.WideShape
	// split is the split kernel (a cluster of Split blocks per sample,
	// kernels.WideShape.Split) that passes of so few samples that all
	// their clusters' blocks have SMs of their own run; zero without one.
	split kernels.WideShape
	// flat is the flat kernel (kernels.WideShape.Flat: three samples per
	// SM where wide runs two) that passes of at least flatMinWaves of its
	// waves run instead of wide; zero without one.
	flat kernels.WideShape
	// wave, fewWave and flatWave are how many samples the wide, the
	// N/8-thread wide and the flat kernel run side by side
	// (kernels.BootstrapKernels.WideWave: blocks per SM times SMs), zero
	// without them.
	wave, fewWave, flatWave int
	mode                    BlindRotation
	unfuse                  bool // the step kernels can run (their buffers exist)

	mu     sync.RWMutex // calls hold it for reading, Close for writing
	closed bool
	pipe   chan struct{} // the device pipeline, a one-slot semaphore: buffers below, one call at a time
	buf    gpuBuffers

	noMerge bool        // GPUOptions.NoMerge
	qmu     sync.Mutex  // guards queue
	queue   []*mergeReq // small calls waiting for the pipeline (engine_gpu_merge.go)
	merged  mergeBufs   // the pipeline holder's
	// mergedCalls counts the calls that ran in a batch with others.
	mergedCalls atomic.Int64
	// callHook, when set (tests only), runs at the start of each call,
	// before it takes mu: where a collection that found the handle
	// unreachable would close the engine under the call.
	callHook func()
}

// gpuBuffers are the engine's device and pinned host memory, allocated once
// by NewGPU for maxBatch samples per slot. abar, acc, dec and prod are the
// step kernels' working memory: nil on the wide and fused paths, which
// keep them on chip.
type gpuBuffers struct {
	bk   *kernels.DeviceBuffer[uint64] // NTT-domain bootstrapping key, shape.BKLen()
	ksk  *kernels.DeviceBuffer[uint32] // key-switching table, shape.KSTableLen()
	abar *kernels.DeviceBuffer[uint32] // rotation amounts, maxBatch × n
	acc  *kernels.DeviceBuffer[uint32] // accumulators, maxBatch × (k+1)·N
	dec  *kernels.DeviceBuffer[uint64] // digit polynomials, maxBatch × (k+1)·l·N
	prod *kernels.DeviceBuffer[uint64] // external-product columns, maxBatch × (k+1)·N
	// bkPaired is bk in the paired layout (kernels.PairKey) that the flat
	// kernel reads; nil without one.
	bkPaired *kernels.DeviceBuffer[uint64]
	// kskPacked is ksk packed for the tensor-core fragments
	// (kernels.PackKSTable) that KeySwitchPacked reads from 64 samples on;
	// nil for a key without that form (basebit 3) or a fatbin without the
	// kernel.
	kskPacked *kernels.DeviceBuffer[uint32]
	// wideTables are the wide kernel's twiddle tables (WideShape.TablesLen).
	wideTables *kernels.DeviceBuffer[uint64]
	// slots are the pipeline's stages (two with the one-launch kernels,
	// whose passes share nothing else; one with the step kernels).
	slots []passSlot
}

// passSlot holds one pass in flight: its samples on the device and staged
// in pinned host memory, and the stream its copies and kernels run on.
type passSlot struct {
	in  *kernels.DeviceBuffer[uint32] // input samples, maxBatch × (n+1)
	ext *kernels.DeviceBuffer[uint32] // extracted samples, maxBatch × (k·N+1)
	out *kernels.DeviceBuffer[uint32] // key-switched samples, maxBatch × (n+1)
	// hostIn and hostOut stage samples on the host, maxBatch × (max(n, k·N)+1):
	// pinned, so that the copies run at full bus speed and asynchronously.
	hostIn, hostOut *kernels.HostPinned[uint32]
	stream          *kernels.Stream
	// pre holds the K' of a split pass when the engine's split kernel
	// takes it (kernels.WideShape.Pre), for splitPassMax samples.
	pre *kernels.SplitScratch
	// queued: the stream has work of this call not waited for yet. enqueue
	// sets it before it queues anything, so that a pass whose enqueue
	// fails part-way (its upload already queued, say) is waited for too
	// (finish, abandon): Close must not free what the stream still uses.
	queued bool
	// The pass in flight: its outputs, to fill from hostOut once the
	// stream is done, and the width of each output sample. pending is set
	// once the whole pass is queued: nil, with queued set, for a pass
	// whose enqueue failed, which has no outputs to write.
	pending []*tfhe.TLWE
	outW    int
	// copier is the slot's copy between samples and a staging buffer,
	// held here so that a pass's copy allocates nothing (sampleCopy).
	copier sampleCopy
}

func (b *gpuBuffers) free() error {
	var errs []error
	for _, d := range []*kernels.DeviceBuffer[uint64]{b.bk, b.bkPaired, b.dec, b.prod, b.wideTables} {
		if d != nil {
			errs = append(errs, d.Free())
		}
	}
	for _, d := range []*kernels.DeviceBuffer[uint32]{b.ksk, b.kskPacked, b.abar, b.acc} {
		if d != nil {
			errs = append(errs, d.Free())
		}
	}
	for _, sl := range b.slots {
		for _, d := range []*kernels.DeviceBuffer[uint32]{sl.in, sl.ext, sl.out} {
			if d != nil {
				errs = append(errs, d.Free())
			}
		}
		for _, h := range []*kernels.HostPinned[uint32]{sl.hostIn, sl.hostOut} {
			if h != nil {
				errs = append(errs, h.Free())
			}
		}
		if sl.pre != nil {
			errs = append(errs, sl.pre.Free())
		}
		if sl.stream != nil {
			errs = append(errs, sl.stream.Close())
		}
	}
	*b = gpuBuffers{}
	return errors.Join(errs...)
}

var _ Engine = (*GPU)(nil)

// NewGPU returns a GPU engine for ck on the device opts.Device. It loads
// goldfhe's kernels (kernels.Context.LoadLibrary: the embedded fatbin, or
// the one GOLDFHE_FATBIN names), transforms the bootstrapping key with the
// plan on the CPU (tfhe.BootstrappingKey.NTT, shared with CPU engines using
// a plan of the same NTT order) and uploads it and the key-switching table,
// and allocates the device buffers; Close releases everything.
//
// Without a driver or a device the error wraps ErrNoGPU and the kernels
// sentinel; a fatbin without the bootstrapping kernels, a plan without a
// GPU kernel or too little device memory give other errors. New picks the
// CPU engine instead when any of these happens; options no GPU could take
// (a negative MaxBatch, an unknown BlindRotation, a plan of another N) are
// errors for New too.
func NewGPU(ck *tfhe.CloudKey, opts GPUOptions) (*GPU, error) {
	if err := ck.Validate(); err != nil {
		return nil, fmt.Errorf("bootstrap: NewGPU: %w", err)
	}
	p := ck.Params()
	if err := opts.check(p); err != nil {
		return nil, err
	}
	plan, auto := opts.Plan, opts.Plan == nil
	if auto {
		var err error
		if plan, err = gpuntt.DefaultPlan(p.PolyDegree()); err != nil {
			return nil, fmt.Errorf("bootstrap: NewGPU: %w", err)
		}
	}
	shape := shapeOf(p)
	shape.Grouping = ck.Grouping()
	if err := shape.Check(); err != nil {
		return nil, fmt.Errorf("bootstrap: NewGPU: %s: %w", p.Name(), err)
	}
	dev, err := gpuntt.Open(opts.Device)
	if err != nil {
		if errors.Is(err, kernels.ErrNoDriver) || errors.Is(err, kernels.ErrNoDevice) {
			return nil, fmt.Errorf("%w: %w", ErrNoGPU, err)
		}
		return nil, fmt.Errorf("bootstrap: NewGPU: %w", err)
	}
	e := &gpuCore{params: p, shape: shape, info: dev.Info(), cpuPlan: plan, dev: dev, mode: opts.BlindRotation, noMerge: opts.NoMerge,
		pipe: make(chan struct{}, 1)}
	if err := e.init(ck, opts.MaxBatch, auto); err != nil {
		// The release's own error (a failed free) is kept beside the cause.
		return nil, fmt.Errorf("bootstrap: NewGPU: %w", errors.Join(err, e.release()))
	}
	e.name = fmt.Sprintf("gpu/%s/%v%s/maxbatch=%d", e.info.Name, plan, e.kernelsName(), e.maxBatch)
	if g := shape.Grouping; g > 1 {
		e.name += fmt.Sprintf("/grouping=%d", g)
	}
	h := &GPU{c: e}
	h.cleanup = closeWhenDropped(h, e)
	return h, nil
}

// check reports options no GPU can satisfy for parameter set p: the
// caller's mistakes, which New returns rather than taking the CPU engine.
func (opts GPUOptions) check(p tfhe.Params) error {
	if opts.MaxBatch < 0 {
		return fmt.Errorf("bootstrap: NewGPU: MaxBatch = %d", opts.MaxBatch)
	}
	if opts.Device < 0 {
		return fmt.Errorf("bootstrap: NewGPU: Device = %d: a CUDA ordinal is 0 or more", opts.Device)
	}
	if opts.BlindRotation < BlindRotationAuto || opts.BlindRotation > BlindRotationUnfused {
		return fmt.Errorf("bootstrap: NewGPU: unknown %v", opts.BlindRotation)
	}
	if opts.Plan != nil && opts.Plan.N() != p.PolyDegree() {
		return fmt.Errorf("bootstrap: NewGPU: plan %v has N=%d, the key N=%d", opts.Plan, opts.Plan.N(), p.PolyDegree())
	}
	return nil
}

// shapeOf returns the kernels' view of a parameter set.
func shapeOf(p tfhe.Params) kernels.BootstrapShape {
	return kernels.BootstrapShape{
		LWEDim: p.LWEDimension(), LogN: p.LogPolyDegree(), K: p.GLWEDimension(),
		BKLevels: p.BKLevels(), BKBaseLog: p.BKBaseLog(), BKOffset: p.BKGadget().Offset(),
		KSLevels: p.KSLevels(), KSBaseLog: p.KSBaseLog(), KSOffset: p.KSGadget().Offset(),
	}
}

// perSampleBytes is the device memory one sample of a batch needs: the
// input, extracted and key-switched samples, and for the unfused kernels
// the rotation amounts, the accumulator, its digits and the products.
func perSampleBytes(s kernels.BootstrapShape, fused bool) int {
	n, N, kn := s.LWEDim, s.N(), s.ExtractedDim()
	words32 := (n + 1) + (kn + 1) + (n + 1)
	if fused {
		return 4 * words32
	}
	words32 += n + (s.K+1)*N
	words64 := s.Rows()*N + (s.K+1)*N
	return 4*words32 + 8*words64
}

// kernelsName describes the blind-rotation kernels for Name.
func (e *gpuCore) kernelsName() string {
	var parts []string
	if w := e.wide; w.T != 0 {
		name := fmt.Sprintf("wide%dx%dx%d/t%d", w.F1, w.F2, w.F3, w.T)
		if f := e.flat; f.T != 0 {
			name += fmt.Sprintf("+f%d>=%d", f.T, flatMinWaves*e.flatWaveSize())
		}
		if w := e.split; w.T != 0 {
			pre := ""
			if w.Pre {
				pre = "p" // K' from the combine kernel
			}
			name += fmt.Sprintf("+split%d%s<=%d", w.Split, pre, e.splitPassMax())
		}
		if c := e.cluster; c.T != 0 {
			name += fmt.Sprintf("+cluster%d/t%d<=%d", c.K+1, c.T, e.clusterMax())
		}
		if f := e.few; f.T != 0 && f != w {
			name += fmt.Sprintf("+t%d<=%d", f.T, e.info.SMs)
		}
		parts = append(parts, name)
	} else if e.fused != nil {
		parts = append(parts, "fused")
	}
	if len(parts) == 1 {
		return "/" + parts[0]
	}
	if e.small != nil {
		return fmt.Sprintf("+butterfly<%d", SmallPassSamples)
	}
	return ""
}

func (e *gpuCore) init(ck *tfhe.CloudKey, maxBatch int, auto bool) error {
	var err error
	if e.bsk, err = e.dev.Library().BootstrapKernels(); err != nil {
		return err
	}
	if e.plan, err = e.dev.NewPlan(e.cpuPlan); err != nil {
		return err
	}
	hybrid := e.cpuPlan.Variant() == smallntt.Hybrid
	if grouped := e.shape.Grouping > 1; grouped {
		// Only the wide and cluster kernels know grouped keys (the
		// butterfly baseline and the step kernels do one CMux per bit).
		switch {
		case len(e.bsk.WideFor(e.shape)) == 0:
			// The toy set's shape has none; a fatbin built before the _g3
			// kernels existed has none of grouping 3.
			s := e.shape
			return fmt.Errorf("no wide blind-rotation kernel for %s with grouping %d on this device (no …_g%d kernel for N = %d, k = %d, l = %d in this fatbin; one built before such kernels existed needs `make fatbin`)", e.params.Name(), s.Grouping, s.Grouping, s.N(), s.K, s.BKLevels)
		case e.mode == BlindRotationFused || e.mode == BlindRotationUnfused:
			return fmt.Errorf("a grouped bootstrapping key (grouping %d) runs on the wide and cluster kernels only, not with BlindRotation %v", e.shape.Grouping, e.mode)
		case !hybrid:
			return fmt.Errorf("a grouped bootstrapping key (grouping %d) runs on the wide and cluster kernels only, which use the hybrid NTT, not plan %v", e.shape.Grouping, e.cpuPlan)
		}
	}
	if e.mode == BlindRotationWide || e.mode == BlindRotationAuto && hybrid {
		// N/16 threads per polynomial: the fastest at every batch size on
		// an H200 (kernels/NOTES.md); else whatever this fatbin has.
		for _, w := range e.bsk.WideFor(e.shape) {
			switch {
			case w.Split != 0:
				// With a grouped key, the split kernel that takes each
				// step's K' from the combine kernel (kernels.WideShape.Pre)
				// when there is one: its multiply-accumulate leaves the
				// step's terms to other SMs (one gate grouped by 3 on an
				// H100: 1.03-1.05 -> 0.87-0.90 ms, BENCHMARKS.md).
				if e.split.T == 0 || w.Pre {
					e.split = w
				}
			case w.Cluster:
				if e.cluster.T == 0 {
					e.cluster = w // the first listed: the most threads per row
				}
			default:
				if w.T == e.shape.N()/8 && !w.Flat {
					e.few = w
				}
				switch {
				case w.Flat:
					e.flat = w // wideFor
				case e.wide.T == 0 || w.T == e.shape.N()/16:
					e.wide = w
				}
			}
		}
	}
	if f := e.cpuPlan.Factors(); (e.mode == BlindRotationAuto && e.wide.T == 0 || e.mode == BlindRotationFused) && hybrid && len(f) == 2 && e.bsk.Fused(e.shape, f[0], f[1]) {
		e.fused = e.plan
	}
	switch {
	case e.mode == BlindRotationFused && e.fused == nil:
		return fmt.Errorf("no fused blind-rotation kernel for %s with plan %v (have %v)", e.params.Name(), e.cpuPlan, kernels.FusedShapes())
	case e.mode == BlindRotationWide && e.wide.T == 0:
		return fmt.Errorf("no wide blind-rotation kernel for %s (have %v)", e.params.Name(), kernels.WideShapes())
	}
	e.unfuse = e.fused == nil && e.wide.T == 0
	for _, k := range []struct {
		ws   kernels.WideShape
		wave *int
	}{{e.wide, &e.wave}, {e.few, &e.fewWave}, {e.flat, &e.flatWave}} {
		if k.ws.T == 0 {
			continue
		}
		w, err := e.bsk.WideWave(k.ws)
		if err != nil {
			return fmt.Errorf("the occupancy of %v: %w", k.ws, err)
		}
		*k.wave = w
	}
	if auto && e.unfuse && e.cpuPlan.Variant() != smallntt.Butterfly {
		bf, err := smallntt.NewPlan(e.cpuPlan.N(), smallntt.Butterfly)
		if err != nil {
			return err
		}
		if e.small, err = e.dev.NewPlan(bf); err != nil {
			return err
		}
	}
	s := e.shape
	ctx := e.dev.Context()
	// The keys, uploaded once.
	nttBK, err := ck.BootstrappingKey().NTT(e.cpuPlan)
	if err != nil {
		return err
	}
	if e.buf.bk, err = upload(ctx, nttBK.Data()); err != nil {
		return fmt.Errorf("uploading the bootstrapping key: %w", err)
	}
	if e.flat.PairedKey() {
		paired, err := kernels.PairKey(s, nttBK.Data())
		if err != nil {
			return err
		}
		if e.buf.bkPaired, err = upload(ctx, paired); err != nil {
			return fmt.Errorf("uploading the bootstrapping key (paired layout): %w", err)
		}
	}
	table := ksTable(ck)
	if e.buf.ksk, err = upload(ctx, table); err != nil {
		return fmt.Errorf("uploading the key-switching key: %w", err)
	}
	if s.KSPackable() && e.bsk.HasKeySwitchPacked() {
		packed, err := kernels.PackKSTable(s, table)
		if err != nil {
			return err
		}
		if e.buf.kskPacked, err = upload(ctx, packed); err != nil {
			return fmt.Errorf("uploading the key-switching key (packed): %w", err)
		}
	}
	if w := e.wide; w.T != 0 {
		wp, err := smallntt.NewPlan(s.N(), smallntt.Hybrid, w.F1, w.F2, w.F3)
		if err != nil {
			return err
		}
		st := wp.StageTables()
		tables := slices.Concat(st[0].Twiddle, st[0].TwiddleInv, st[1].Twiddle, st[1].TwiddleInv)
		if s.Grouping > 1 {
			tables = append(tables, kernels.PsiPowers(s.N())...) // the monomials' NTT forms
		}
		if e.buf.wideTables, err = upload(ctx, tables); err != nil {
			return err
		}
	}
	// The batch size: what half the free memory holds, at most the default.
	// The wide and fused kernels need no working memory on the device; they
	// run passes in two slots.
	nslots := 2
	if e.unfuse {
		nslots = 1
	}
	per := nslots * perSampleBytes(s, !e.unfuse)
	if maxBatch == 0 {
		free, _, err := ctx.MemInfo()
		if err != nil {
			return err
		}
		maxBatch = int(min(uint64(DefaultMaxBatch), free/2/uint64(per)))
		if maxBatch < 1 {
			return fmt.Errorf("%w: %d bytes free on %s, one sample needs %d", kernels.ErrOutOfMemory, free, e.info.Name, per)
		}
	}
	e.maxBatch = maxBatch
	unfused := 0 // samples the step kernels' buffers hold
	if e.unfuse {
		unfused = maxBatch
	}
	n, N, kn := s.LWEDim, s.N(), s.ExtractedDim()
	wide := max(n, kn) + 1
	e.buf.slots = make([]passSlot, nslots)
	for i := range e.buf.slots {
		sl := &e.buf.slots[i]
		allocs := []struct {
			dst  **kernels.DeviceBuffer[uint32]
			size int
		}{
			{&sl.in, n + 1}, {&sl.ext, kn + 1}, {&sl.out, n + 1},
		}
		for _, a := range allocs {
			if *a.dst, err = kernels.Alloc[uint32](ctx, maxBatch*a.size); err != nil {
				return err
			}
		}
		if sl.hostIn, err = kernels.AllocHost[uint32](ctx, maxBatch*wide); err != nil {
			return err
		}
		if sl.hostOut, err = kernels.AllocHost[uint32](ctx, maxBatch*wide); err != nil {
			return err
		}
		if sl.stream, err = ctx.NewStream(); err != nil {
			return err
		}
	}
	if e.split.Pre {
		// Every step's K' of the largest split pass, per slot; without
		// the memory for it, the split kernel that sums the terms itself.
		for i := range e.buf.slots {
			sl := &e.buf.slots[i]
			if sl.pre, err = kernels.NewSplitScratch(ctx, s, min(e.splitPassMax(), maxBatch)); err != nil {
				break
			}
		}
		if errors.Is(err, kernels.ErrOutOfMemory) {
			var errs []error
			for i := range e.buf.slots {
				if sl := &e.buf.slots[i]; sl.pre != nil {
					errs = append(errs, sl.pre.Free())
					sl.pre = nil
				}
			}
			if err := errors.Join(errs...); err != nil {
				return err
			}
			e.split.Pre = false
			if !slices.Contains(e.bsk.WideFor(s), e.split) {
				e.split = kernels.WideShape{}
			}
		} else if err != nil {
			return err
		}
	}
	if unfused > 0 {
		if e.buf.abar, err = kernels.Alloc[uint32](ctx, unfused*n); err != nil {
			return err
		}
		if e.buf.acc, err = kernels.Alloc[uint32](ctx, unfused*(s.K+1)*N); err != nil {
			return err
		}
		if e.buf.dec, err = kernels.Alloc[uint64](ctx, unfused*s.Rows()*N); err != nil {
			return err
		}
		if e.buf.prod, err = kernels.Alloc[uint64](ctx, unfused*(s.K+1)*N); err != nil {
			return err
		}
	}
	return nil
}

// upload copies a host table to a new device buffer.
func upload[T kernels.Elem](c *kernels.Context, src []T) (*kernels.DeviceBuffer[T], error) {
	b, err := kernels.Alloc[T](c, len(src))
	if err != nil {
		return nil, err
	}
	if err := b.CopyFromHost(src); err != nil {
		if c.Err() != nil {
			return nil, err // a device fault: freeing would only repeat it (release)
		}
		return nil, errors.Join(err, b.Free())
	}
	return b, nil
}

// ksTable returns the key-switching key as the flat table the kernel reads:
// entry ((i·t + j−1)·base/2 + m−1)·(n+1) + coordinate, the layout of
// tfhe.KeySwitchingKey, read through its Sample accessor.
func ksTable(ck *tfhe.CloudKey) []uint32 {
	p := ck.Params()
	ksk := ck.KeySwitchingKey()
	t, half := p.KSLevels(), 1<<p.KSBaseLog()/2
	table := make([]uint32, 0, p.ExtractedLWEDimension()*t*half*(p.LWEDimension()+1))
	for i := range p.ExtractedLWEDimension() {
		for j := 1; j <= t; j++ {
			for m := 1; m <= half; m++ {
				for _, v := range ksk.Sample(i, j, m).Value {
					table = append(table, uint32(v))
				}
			}
		}
	}
	return table
}

// release frees whatever init allocated and closes the device. After a
// device fault (kernels.Context.Err), whether recorded before or met by
// the frees here (the primary context is shared, so another engine's
// fault can have killed it), every free only repeats the fault: then the
// frees' errors are dropped and only the context is released, the
// memory, streams and modules made on it being the driver's to reclaim
// with it.
func (e *gpuCore) release() error {
	var errs []error
	if e.dev == nil || e.dev.Context().Err() == nil {
		errs = append(errs, e.buf.free())
		if e.small != nil {
			errs = append(errs, e.small.Close())
		}
		if e.plan != nil {
			errs = append(errs, e.plan.Close())
		}
	}
	e.buf, e.small, e.plan = gpuBuffers{}, nil, nil
	if e.dev != nil {
		if ctx := e.dev.Context(); ctx.Err() != nil {
			errs = []error{ctx.Close()}
		} else {
			errs = append(errs, e.dev.Close())
		}
		e.dev = nil
	}
	return errors.Join(errs...)
}

// core returns the engine's core, nil for a nil or zero GPU.
func (e *GPU) core() *gpuCore {
	if e == nil {
		return nil
	}
	return e.c
}

// Name describes the engine: "gpu/<device>/<plan>/<kernels>/maxbatch=<m>",
// with "/grouping=<g>" for a grouped key; <kernels> names the blind-rotation
// kernels and the batch sizes each takes (e.g. "wide8x8x16/t64+f256>=3168+…").
func (e *GPU) Name() string {
	defer runtime.KeepAlive(e)
	return e.core().Name()
}

// String is Name.
func (e *GPU) String() string { return e.Name() }

// Params returns the parameter set of the engine's cloud key (the zero
// Params for an uninitialized engine).
func (e *GPU) Params() tfhe.Params {
	defer runtime.KeepAlive(e)
	return e.core().Params()
}

// Device describes the engine's GPU.
func (e *GPU) Device() kernels.DeviceInfo {
	defer runtime.KeepAlive(e)
	return e.core().Device()
}

// Plan returns the NTT plan the engine's transforms reproduce.
func (e *GPU) Plan() *smallntt.Plan {
	defer runtime.KeepAlive(e)
	return e.core().Plan()
}

// Grouping returns the grouping factor of the engine's bootstrapping key
// (tfhe.WithGrouping; KeyGrouping), 0 for an uninitialized engine.
func (e *GPU) Grouping() int {
	defer runtime.KeepAlive(e)
	return e.core().Grouping()
}

// BatchTiers returns the batch sizes at which a pass's time steps up
// (see the package function BatchTiers): the largest passes of the split
// kernel (its first wave, and the second where it runs two: a key grouped
// by 3, splitPassMax), of the cluster and N/8-thread wide kernels, then a
// wave of the wide kernel (waveSize: two samples per SM for the
// N/16-thread kernel), none beyond MaxBatch (then the last tier). On an
// H200, TFHELib128 grouped by 2 (bench, ms per call): 1.91 at 1 sample,
// 2.41 at 16, 3.88 at 33, 4.02 at 66, 5.71 at 99, 5.81 at 132, 9.59 at
// 198, 9.77 at 264. nil when the engine runs the fused or step kernels. Beyond a wave, a call's
// remainder of up to clusterMax samples runs on the split or cluster
// kernel (tailPasses), so such a call costs its whole waves plus that
// remainder's tier (session 13, H200, grouped by 2: 280 samples 10.6 ms
// against 13.1 with the remainder left to the wide kernel).
func (e *GPU) BatchTiers() []int {
	defer runtime.KeepAlive(e)
	return e.core().BatchTiers()
}

// MaxBatch returns the most samples one device pass holds; larger batches
// are split into passes of this size.
func (e *GPU) MaxBatch() int {
	defer runtime.KeepAlive(e)
	return e.core().MaxBatch()
}

// Bootstrap implements Engine.
func (e *GPU) Bootstrap(out, in []*tfhe.TLWE, mu torus.Torus32) error {
	defer runtime.KeepAlive(e)
	return e.core().run(opBootstrap, out, in, mu)
}

// BootstrapNoKeySwitch implements Engine.
func (e *GPU) BootstrapNoKeySwitch(out, in []*tfhe.TLWE, mu torus.Torus32) error {
	defer runtime.KeepAlive(e)
	return e.core().run(opBootstrapNoKS, out, in, mu)
}

// KeySwitch implements Engine.
func (e *GPU) KeySwitch(out, in []*tfhe.TLWE) error {
	defer runtime.KeepAlive(e)
	return e.core().run(opKeySwitch, out, in, 0)
}

// Close implements Engine: it waits for calls in progress, then frees the
// device memory, the pinned buffers and the device context. After a device
// fault (see GPU) it releases only the context, the driver's to reclaim
// the rest with, and returns only that release's error.
func (e *GPU) Close() error {
	defer runtime.KeepAlive(e)
	err := e.core().Close()
	if e != nil {
		e.cleanup.Stop() // closed: nothing left for the collector to do
	}
	return err
}

// Name is GPU.Name.
func (e *gpuCore) Name() string {
	if e == nil || e.name == "" {
		return "gpu/uninitialized"
	}
	return e.name
}

// Params is GPU.Params.
func (e *gpuCore) Params() tfhe.Params {
	if e == nil {
		return tfhe.Params{}
	}
	return e.params
}

// Device is GPU.Device.
func (e *gpuCore) Device() kernels.DeviceInfo {
	if e == nil {
		return kernels.DeviceInfo{}
	}
	return e.info
}

// Plan is GPU.Plan.
func (e *gpuCore) Plan() *smallntt.Plan {
	if e == nil {
		return nil
	}
	return e.cpuPlan
}

// Grouping is GPU.Grouping.
func (e *gpuCore) Grouping() int {
	if e == nil || e.name == "" {
		return 0
	}
	return max(e.shape.Grouping, 1)
}

// BatchTiers is GPU.BatchTiers.
func (e *gpuCore) BatchTiers() []int {
	if e == nil || e.name == "" || e.wide.T == 0 {
		return nil
	}
	var tiers []int
	add := func(n int) {
		if n > 0 && (len(tiers) == 0 || n > tiers[len(tiers)-1]) {
			tiers = append(tiers, n)
		}
	}
	if e.split.T != 0 {
		add(e.splitMax())
		add(e.splitPassMax())
	}
	if e.cluster.T != 0 {
		add(e.clusterMax())
	}
	if e.few.T != 0 {
		add(e.info.SMs)
	}
	add(e.waveSize())
	// A call runs in passes of at most maxBatch samples, so a tier beyond
	// it is no step of the cost: maxBatch is the last one then.
	if e.maxBatch > 0 && tiers[len(tiers)-1] > e.maxBatch {
		tiers = slices.DeleteFunc(tiers, func(n int) bool { return n > e.maxBatch })
		add(e.maxBatch)
	}
	return tiers
}

// waveSize and fewWaveSize are how many samples the wide and the
// N/8-thread wide kernel run side by side (waveOf).
func (e *gpuCore) waveSize() int    { return e.waveOf(e.wide, e.wave) }
func (e *gpuCore) fewWaveSize() int { return e.waveOf(e.few, e.fewWave) }

// waveOf is how many samples the wide-family kernel ws of one block per
// sample runs side by side: measured, the driver's occupancy (init), or,
// before it is known (an engine value built without a device, in tests),
// two samples per SM for an N/16-thread kernel, one for an N/8-thread one
// and three for a flat one (its shared memory is sized for three); 0
// without the kernel.
func (e *gpuCore) waveOf(ws kernels.WideShape, measured int) int {
	switch {
	case ws.T == 0:
		return 0
	case measured > 0:
		return measured
	case ws.Flat:
		return 3 * e.info.SMs
	}
	return e.info.SMs * max(1, 2*e.shape.N()/(16*ws.T))
}

// MaxBatch is GPU.MaxBatch.
func (e *gpuCore) MaxBatch() int {
	if e == nil {
		return 0
	}
	return e.maxBatch
}

// Close is GPU.Close, which the cleanup of a dropped handle calls too.
func (e *gpuCore) Close() error {
	if e == nil || e.name == "" {
		return ErrNotInitialized
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil
	}
	e.closed = true
	if err := e.release(); err != nil {
		return fmt.Errorf("bootstrap: GPU.Close: %w", err)
	}
	return nil
}

// run checks the call and runs it in passes of at most maxBatch samples.
// Arguments are checked before any work (no output is written on such an
// error); a device error in a later pass leaves the outputs of the earlier
// passes written.
//
// With two slots the passes are pipelined: while one pass's blind rotation
// runs, the host stages the next pass's inputs and the previous pass's
// outputs, and the copies and key switching of one pass overlap the
// kernels of the other (each slot has its own stream).
func (e *gpuCore) run(op opKind, out, in []*tfhe.TLWE, mu torus.Torus32) error {
	if e == nil || e.name == "" {
		return ErrNotInitialized
	}
	if e.callHook != nil {
		e.callHook()
	}
	e.mu.RLock()
	defer e.mu.RUnlock()
	if e.closed {
		// Before the arguments: every call to a closed engine says so.
		return ErrClosed
	}
	if err := checkBatch(e.params, op, out, in); err != nil {
		return err
	}
	if len(in) == 0 {
		// Nothing to wait for the pipeline with; a GPU that has faulted
		// still fails every call, as its doc says.
		if err := e.dev.Context().Err(); err != nil {
			return fmt.Errorf("bootstrap: GPU (%s): %w", e.info.Name, err)
		}
		return nil
	}
	if e.noMerge || len(in) > mergeCallMax {
		e.lockPipe()
		defer e.unlockPipe()
		return e.runPasses(op, out, in, mu)
	}
	// A small call (engine_gpu_merge.go): alone at once when nothing
	// waits, else merged with the waiting calls.
	holding := e.tryLockPipe()
	if holding && !e.queued() {
		defer e.unlockPipe()
		return e.runPasses(op, out, in, mu)
	}
	return e.mergeCall(op, out, in, mu, holding)
}

// runPasses runs a checked call holding the pipeline.
func (e *gpuCore) runPasses(op opKind, out, in []*tfhe.TLWE, mu torus.Torus32) error {
	slots := e.buf.slots
	// Should a pass panic, no slot may keep this call's outputs pending
	// (a later call would copy a stale pass into them; engine_gpu_merge.go
	// answers the panicking round's callers with an error) nor its work
	// queued unwaited (the panicking launch's pass included). A no-op
	// after the drain below.
	defer func() {
		for i := range slots {
			slots[i].abandon()
		}
	}()
	// Whole waves of the wide kernel in passes of passSize (or whole waves
	// of the flat kernel: bodyPasses), then the rest in at most two passes
	// of their own (tailPasses).
	few, tail := e.tailPasses(op, len(in))
	body := len(in) - few - tail
	whole, chunk := e.bodyPasses(op, body)
	var err error
	// earlier: the passes still in flight when the loop stops all come
	// before the failed pass, so they are still to be written. So it is
	// when a pass fails to enqueue (its slot's previous pass was finished
	// just before); when a pass fails at its wait, the one in flight in
	// the other slot comes after it.
	earlier := false
	i := 0
	for lo, hi := range passBounds(len(in), whole, chunk, body-whole, few) {
		sl := &slots[i%len(slots)]
		i++
		if err = e.finish(sl); err != nil {
			break
		}
		if err = e.enqueue(sl, op, out[lo:hi], in[lo:hi], mu); err != nil {
			// A device fault leaves nothing worth waiting for: the
			// passes in flight are not written (see GPU, Device faults).
			earlier = e.dev.Context().Err() == nil
			break
		}
	}
	// Drain, the oldest pass first (slot i mod slots holds pass i - 2),
	// waiting for every slot whose stream has work of this call (a pass
	// whose enqueue failed part-way too): no work stays queued after a
	// call, so that Close frees nothing a stream still uses. A failed
	// call's outputs are those of the passes before the failure, every
	// one of them (Engine's doc): after a failed enqueue the passes in
	// flight are earlier ones, finished and written here; once a pass has
	// failed at its wait no later one is written (a recoverable error at a
	// pass's wait used to leave the next pass written, and the slot order
	// could write a later pass before an earlier one failed).
	for j := range slots {
		sl := &slots[(i+j)%len(slots)]
		if err != nil && !earlier {
			sl.abandon()
			continue
		}
		if ferr := e.finish(sl); ferr != nil {
			// An earlier pass failed too (after a failed enqueue): both
			// errors are the call's.
			if err == nil {
				err = ferr
			} else {
				err = errors.Join(err, ferr)
			}
			earlier = false
		}
	}
	if err != nil {
		// The call keeps its first error, and abandon drops its wait's:
		// after an error CUDA recovers from, a device fault met there (or
		// by another engine on the shared context) would go unsaid,
		// though every later call fails with it. A fault makes the call's
		// error wrap kernels.ErrLaunchFailed, as GPU's doc promises.
		if f := e.dev.Context().Err(); f != nil && !errors.Is(err, kernels.ErrLaunchFailed) {
			err = errors.Join(err, f)
		}
		return fmt.Errorf("bootstrap: GPU (%s): %w", e.info.Name, err)
	}
	return nil
}

// passSize is the samples per pass for a call of count: everything in one
// pass up to minPipelined samples (splitting a small call only adds
// latency), else passes of a quarter of the call, at least minPipelined
// and at most maxBatch, so that the two slots overlap.
func (e *gpuCore) passSize(count int) int {
	minPipelined := 4 * e.info.SMs // passes that still fill the GPU
	if len(e.buf.slots) < 2 || count <= 2*minPipelined {
		return min(count, e.maxBatch)
	}
	return min(max((count+3)/4, minPipelined), e.maxBatch)
}

// bodyPasses is how a call's body (its samples before tailPasses' last
// passes) is split: the first whole samples in passes of chunk (the last
// one shorter), the rest of the body in one pass after them. By default
// whole = body in passes of passSize. Where those passes would be too
// small for the flat kernel (fewer than flatMinWaves of its waves: bodies
// below about 12,700 samples for TFHELib128 grouped by 3 on 132 SMs), the
// whole waves of the flat kernel in the body run it instead, in about as
// many passes of whole waves, and what is left (less than a wave) runs in
// a pass of its own on the kernel wideFor gives it. A pass of whole waves
// has no partial wave to lose time on, so the flat kernel pays there at
// any size (wideFor). On an H200, TFHELib128 grouped by 3, two alternated
// rounds: 4,096 gates 37,152 / 37,282 -> 38,628 / 38,625 gates/s, 8,192
// 37,941 / 38,018 -> 39,401 / 39,417, 12,000 37,959 / 38,017 -> 39,976 /
// 40,007, 1,024 to 2,048 1-3% faster, 16,384 and 65,536 as before
// (BENCHMARKS.md session 23).
func (e *gpuCore) bodyPasses(op opKind, body int) (whole, chunk int) {
	chunk = e.passSize(body)
	f := e.flatWaveSize()
	if op == opKeySwitch || f == 0 || e.kernelFor() != BlindRotationWide || chunk >= flatMinWaves*f || body < f ||
		e.maxBatch < f {
		return body, chunk
	}
	waves := body / f
	passes := (body + chunk - 1) / chunk
	return waves * f, min((waves+passes-1)/passes, e.maxBatch/f) * f // a pass holds at most maxBatch
}

// passBounds yields the passes [lo, hi) of a call of count samples: passes
// of chunk samples (the last one shorter) up to body, then a pass of each
// size in then that is above 0, then the rest in one pass. chunk ≥ 1 when
// body > 0.
func passBounds(count, body, chunk int, then ...int) iter.Seq2[int, int] {
	return func(yield func(int, int) bool) {
		next := 0 // the first of then not yet run
		for lo := 0; lo < count; {
			hi := count
			if lo < body {
				hi = min(lo+chunk, body)
			} else {
				for next < len(then) && then[next] <= 0 {
					next++
				}
				if next < len(then) {
					hi = min(lo+then[next], count)
					next++
				}
			}
			if !yield(lo, hi) {
				return
			}
			lo = hi
		}
	}
}

// tailPasses is how a call of count samples ends: after whole waves of the
// wide kernel, its remainder r runs in passes of its own, few samples on
// the N/8-thread wide kernel and then tail samples on the split or cluster
// kernel, when that is faster than a partial wave of the wide kernel:
//   - r ≤ clusterMax (splitPassMax without a cluster kernel), beyond at
//     least one whole wave: tail = r. A wave's blocks run side by side for
//     the whole blind rotation, so r samples left to the wide kernel cost
//     a wave of their own, with its blocks alone on their SMs, where the
//     split and cluster kernels spread them over every SM. On an H200,
//     TFHELib128: 264 samples 13.5, 8.9 and 8.8 ms plain, grouped by 2 and
//     3; 280 19.9, 13.1 and 14.0 ms that way, 17.2, 10.6 and 9.8 this way;
//     330 18.0, 11.3 and 11.5 this way.
//   - fewWaveSize < r ≤ fewWaveSize + splitPassMax: few = fewWaveSize,
//     tail = r − few, a wave of the N/8-thread kernel and the rest on the
//     split kernel. A partial wave of more than fewWaveSize samples costs
//     about a full one (133 samples 13.6, 8.9 and 9.2 ms; 11.0, 6.3 and 5.4
//     this way; 150 7.8 and 6.3 ms this way grouped by 2 and 3, against
//     8.8 and 8.9). With the cluster kernel's tail it would not pay (150
//     plain 17.2 ms, 170 grouped by 2 10.6, 198 grouped by 3 10.1).
//   - Otherwise nothing: a remainder of at most fewWaveSize costs a
//     partial wave about as long as the N/8-thread kernel's, and a larger
//     one about a full wave either way.
//
// Nothing for key switching alone, or when a pass would exceed maxBatch.
func (e *gpuCore) tailPasses(op opKind, count int) (few, tail int) {
	if op == opKeySwitch || e.wide.T == 0 {
		return 0, 0
	}
	split := 0
	if e.split.T != 0 {
		split = e.splitPassMax()
	}
	limit := split
	if e.cluster.T != 0 {
		limit = max(limit, e.clusterMax())
	}
	w, fw := e.waveSize(), e.fewWaveSize()
	r := count % w
	if count > w && r > 0 && r <= limit && r <= e.maxBatch {
		return 0, r
	}
	if fw > 0 && r > fw && r-fw <= split && fw <= e.maxBatch && r-fw <= e.maxBatch {
		return fw, r - fw
	}
	return 0, 0
}

// finish waits for sl's pass in flight, if any, and writes its outputs
// (none for a pass whose enqueue failed).
func (e *gpuCore) finish(sl *passSlot) error {
	if !sl.queued {
		return nil
	}
	out, w := sl.pending, sl.outW
	sl.queued, sl.pending = false, nil
	if err := sl.stream.Synchronize(); err != nil {
		return err
	}
	if out != nil {
		sl.copier.run(sl.hostOut.Slice()[:len(out)*w], out, w, false)
	}
	return nil
}

// abandon waits for sl's pass in flight, if any, without writing its
// outputs: the call it belongs to has failed (or panicked) already, so
// the wait's own error adds nothing the caller can act on.
func (sl *passSlot) abandon() {
	if sl.queued {
		sl.queued, sl.pending = false, nil
		_ = sl.stream.Synchronize()
	}
}

// sampleCopy copies between a pass's samples and a pinned staging buffer
// (w words a sample, one after another), in parts of about spreadMin
// samples or more, at most spreadMax of them at once (one on the calling
// goroutine: spreadStep). The first pass's staging keeps the GPU waiting
// and the last one's copy back keeps the caller waiting; one goroutine
// copies 4,096 TFHELib128 samples (10 MB) in about 1.2 ms (a 2-vCPU
// Xeon), a quarter of a percent of a 16,384-gate call each way. On an
// H100, TFHELib128 grouped by 3: 16,384 gates 39,612-40,096 ->
// 40,173-40,327 gates/s, 65,536 gates 39,837-39,858 -> 40,263-40,421
// (BENCHMARKS.md session 21). A copy in one part allocates nothing; its
// fields are cleared when it returns, so that no caller's samples stay
// referenced.
type sampleCopy struct {
	flat    []uint32
	samples []*tfhe.TLWE
	w       int
	toFlat  bool
}

// run copies samples into flat (toFlat) or flat into samples.
func (c *sampleCopy) run(flat []uint32, samples []*tfhe.TLWE, w int, toFlat bool) {
	*c = sampleCopy{flat: flat, samples: samples, w: w, toFlat: toFlat}
	defer func() { *c = sampleCopy{} }()
	count := len(samples)
	parts, step := spreadStep(count)
	if parts <= 1 {
		c.part(0, count)
		return
	}
	var wg sync.WaitGroup
	for lo := step; lo < count; lo += step {
		wg.Add(1)
		go func(lo, hi int) {
			defer wg.Done()
			c.part(lo, hi)
		}(lo, min(lo+step, count))
	}
	c.part(0, step)
	wg.Wait()
}

// part copies samples [lo, hi).
func (c *sampleCopy) part(lo, hi int) {
	for i := lo; i < hi; i++ {
		s, f := torusWords(c.samples[i].Value), c.flat[i*c.w:(i+1)*c.w]
		if c.toFlat {
			copy(f, s)
		} else {
			copy(s, f)
		}
	}
}

// spreadStep returns how many parts a copy of count samples runs in and
// their length (the last one shorter): one part below 2·spreadMin samples
// or with one processor.
func spreadStep(count int) (parts, step int) {
	parts = max(min(count/spreadMin, spreadMax, runtime.GOMAXPROCS(0)), 1)
	return parts, (count + parts - 1) / parts
}

// The parts sampleCopy makes: at least spreadMin samples (about 75 µs of
// copying, far more than starting a goroutine), at most spreadMax at once.
const (
	spreadMin = 256
	spreadMax = 8
)

// torusWords is v as its uint32 words, for copies to and from the pinned
// staging buffers (a copy is a memmove; converting word by word cost about
// 25 µs per 132 samples each way, single-threaded, on every pass).
func torusWords(v []torus.Torus32) []uint32 {
	return unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(v))), len(v))
}

// enqueue stages len(in) ≤ maxBatch samples in sl and enqueues the pass
// on sl's stream: upload, blind rotation and extraction, key switching,
// download. finish(sl) completes it. sl's previous pass must be finished.
// On an error the slot stays queued (with no outputs pending): what was
// queued before the failure must still be waited for.
func (e *gpuCore) enqueue(sl *passSlot, op opKind, out, in []*tfhe.TLWE, mu torus.Torus32) error {
	sl.queued = true
	count := len(in)
	s := e.shape
	n, kn := s.LWEDim, s.ExtractedDim()
	inW, outW := n+1, n+1
	switch op {
	case opBootstrapNoKS:
		outW = kn + 1
	case opKeySwitch:
		inW = kn + 1
	}
	st := sl.stream
	// Upload: the samples one after another, through pinned memory.
	host := sl.hostIn.View(0, count*inW)
	sl.copier.run(host.Slice(), in, inW, true)
	src := sl.in
	if op == opKeySwitch {
		src = sl.ext
	}
	if err := src.View(0, count*inW).CopyFromHostAsync(host, st); err != nil {
		return err
	}
	// Blind rotation and sample extraction.
	if op != opKeySwitch {
		switch e.kernelFor() {
		case BlindRotationWide:
			if ws := e.wideFor(count); ws.Pre {
				if err := e.bsk.BlindRotateSplit(st, s, ws, sl.in, e.buf.bk, e.buf.wideTables, sl.pre, sl.ext, uint32(mu), count); err != nil {
					return err
				}
			} else if err := e.bsk.BlindRotateWide(st, s, ws, sl.in, e.keyFor(ws), e.buf.wideTables, sl.ext, uint32(mu), count); err != nil {
				return err
			}
		case BlindRotationFused:
			fwd, inv := e.fused.HybridTables()
			f := e.cpuPlan.Factors()
			if err := e.bsk.BlindRotateFused(st, s, f[0], f[1], sl.in, e.buf.bk, fwd, inv, sl.ext, uint32(mu), count); err != nil {
				return err
			}
		default:
			if err := e.blindRotate(st, sl.in, count, mu); err != nil {
				return err
			}
			if err := e.bsk.Extract(st, s, e.buf.acc, sl.ext, count); err != nil {
				return err
			}
		}
	}
	// Key switching.
	res := sl.ext
	if op != opBootstrapNoKS {
		if err := e.bsk.KeySwitchPacked(st, s, sl.out, sl.ext, e.buf.ksk, e.buf.kskPacked, count); err != nil {
			return err
		}
		res = sl.out
	}
	// Download, on the same stream: finish waits for it.
	if err := res.View(0, count*outW).CopyToHostAsync(sl.hostOut.View(0, count*outW), st); err != nil {
		return err
	}
	sl.pending, sl.outW = out, outW
	return nil
}

// clusterMax is the largest pass that runs the cluster kernel: every block
// of every cluster on an SM of its own. Beyond, the N/8-thread wide
// kernel's one block per sample wins (kernel BenchmarkBlindRotate on an
// H200, TFHELib128 grouped by 2: 66 samples 3.76 ms against 5.34, 99
// samples 5.77 against 5.35; grouped by 3, 99 samples 5.42 against 5.12).
func (e *gpuCore) clusterMax() int { return e.info.SMs / (e.shape.K + 1) }

// splitMax is the largest pass that runs the split kernel: every block of
// every cluster on an SM of its own. Beyond, the cluster kernel's smaller
// clusters win (kernel BenchmarkBlindRotate on an H200, TFHELib128,
// grouped key: 16 samples 2.50 against 4.15 ms, 33 samples 4.85 against
// 4.16 ms). A split kernel whose block takes more than half an SM's shared
// memory (a key grouped by 3: 213 KB) runs one block per SM, and then one
// cluster fewer fits at once than SMs/8 (an H200's GPCs: 15 of 8 blocks;
// 1 to 8 samples 1.47 ms, 10 to 15 about 1.66, 16 samples 2.93).
func (e *gpuCore) splitMax() int {
	n := e.info.SMs / max(e.split.Split, 1)
	if e.splitAlone() {
		n--
	}
	return max(n, 1)
}

// splitAlone reports whether a split kernel's block takes more than half
// an SM's shared memory, so that it runs one block per SM.
func (e *gpuCore) splitAlone() bool {
	sm := e.info.SharedPerSM
	return sm > 0 && e.split.SharedBytes() > sm/2
}

// splitPassMax is the largest pass that runs the split kernel: splitMax,
// or two waves of it (the clusters beyond the first wave start as the
// first ones finish) when the split kernel runs one block per SM (a key
// grouped by 3), whose wave takes less than half the cluster kernel's
// (kernel BenchmarkBlindRotate on an H200, TFHELib128 grouped by 3: 15
// samples 1.33 ms by the split kernel, 66 samples 3.62 ms by the cluster
// kernel, kernels/NOTES.md session 7).
//
// A split kernel that takes K' from the combine kernel (kernels.WideShape.Pre)
// runs up to SMs/4 samples grouped by 2 and 60/132 of SMs grouped by 3:
// its blocks are small enough for several per SM, and it stays ahead of
// the cluster kernel that far (kernel BenchmarkBlindRotate, TFHELib128: on
// an H100, grouped by 2, 33 samples 3.03 ms against 3.73, 48 4.02 against
// 3.73, kernels/NOTES.md session 9; on an H200, grouped by 2, 33 samples
// 3.01-3.04 against 3.47, 40 3.46-3.47 against 3.47; grouped by 3, 33
// samples 2.44 against 3.60, 48 3.09-3.11 against 3.60, 60 3.34-3.36
// against 3.59, 61 3.60 against 3.59, 62 3.95-3.99 against 3.60,
// session 13).
func (e *gpuCore) splitPassMax() int {
	if e.split.Pre {
		if e.split.G == 3 {
			return max(e.info.SMs*60/132, e.splitMax())
		}
		return max(e.info.SMs/4, e.splitMax())
	}
	if e.splitAlone() {
		return 2 * e.splitMax()
	}
	return e.splitMax()
}

// wideFor returns the wide-family kernel for a pass of count samples: the
// split kernel or the cluster kernel while all their blocks get an SM of
// their own (the split kernel: up to splitPassMax), then the N/8-thread
// wide kernel up to a sample per SM, the flat kernel from flatMinWaves of
// its waves or for whole waves of it, else the wide kernel.
func (e *gpuCore) wideFor(count int) kernels.WideShape {
	if e.split.T != 0 && count <= e.splitPassMax() {
		return e.split
	}
	if e.cluster.T != 0 && count <= e.clusterMax() {
		return e.cluster
	}
	if e.few.T != 0 && count <= e.info.SMs {
		return e.few
	}
	if f := e.flatWaveSize(); f > 0 && (count >= flatMinWaves*f || count%f == 0) {
		return e.flat
	}
	return e.wide
}

// flatMinWaves is the fewest of its waves a pass runs on the flat kernel
// unless the pass is whole waves of it. Its waves (three samples per SM)
// are 1.5 times the wide kernel's and take about 1.46 times as long
// (TFHELib128 grouped by 3 on an H100, 3,960 samples: 99.7 against 102.1
// ms), so a partial wave of it pays only where it matters little; below,
// for instance AES-128's levels of up to 264 gates, one wave of it took
// longer than one of the wide kernel (AES-128 grouped by 3 0.94 -> 1.01
// s; kernels/NOTES.md session 19). A pass of whole waves loses nothing
// (396 samples: 10.77 against 11.05 ms; BENCHMARKS.md session 21), and
// bodyPasses makes such passes for the bodies below this bound.
const flatMinWaves = 8

// keyFor is the key buffer in the layout the wide-family kernel ws reads.
func (e *gpuCore) keyFor(ws kernels.WideShape) *kernels.DeviceBuffer[uint64] {
	if ws.PairedKey() {
		return e.buf.bkPaired
	}
	return e.buf.bk
}

// flatWaveSize is how many samples the flat kernel runs side by side
// (waveOf).
func (e *gpuCore) flatWaveSize() int { return e.waveOf(e.flat, e.flatWave) }

// kernelFor returns the kernels a pass runs: the wide or
// the fused kernel when the engine has one (never both), else the step
// kernels.
func (e *gpuCore) kernelFor() BlindRotation {
	switch {
	case e.wide.T != 0:
		return BlindRotationWide
	case e.fused != nil:
		return BlindRotationFused
	}
	return BlindRotationUnfused
}

// blindRotate enqueues on st modulus switching and the n CMux steps of
// blind rotation (the step kernels) on the count samples in in, leaving
// the accumulators in buf.acc.
func (e *gpuCore) blindRotate(st *kernels.Stream, in *kernels.DeviceBuffer[uint32], count int, mu torus.Torus32) error {
	s := e.shape
	b := &e.buf
	if err := e.bsk.Init(st, s, in, b.abar, b.acc, uint32(mu), count); err != nil {
		return err
	}
	N := s.N()
	digits := &gpuntt.Polys{N: N, Count: count * s.Rows(), Buf: b.dec}
	cols := &gpuntt.Polys{N: N, Count: count * (s.K + 1), Buf: b.prod}
	plan := e.plan
	if e.small != nil && count < SmallPassSamples {
		plan = e.small // same NTT-domain layout, so the same key
	}
	for i := range s.LWEDim {
		if err := e.bsk.RotateDecompose(st, s, b.acc, b.abar, b.dec, i, count); err != nil {
			return err
		}
		if err := plan.Forward(st, digits); err != nil {
			return err
		}
		if err := e.bsk.MAC(st, s, b.dec, b.bk, b.prod, i, count); err != nil {
			return err
		}
		if err := plan.Inverse(st, cols); err != nil {
			return err
		}
		if err := e.bsk.AddCentered(st, b.acc, b.prod, cols.Count*N); err != nil {
			return err
		}
	}
	return nil
}
