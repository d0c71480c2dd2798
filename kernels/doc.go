// Package kernels holds goldfhe's CUDA kernels and the small CUDA driver
// binding that runs them, with no cgo and no CUDA toolkit at build time.
//
// # Driver binding
//
// The NVIDIA driver library (libcuda.so.1) is opened at run time with
// github.com/ebitengine/purego and its entry points are called through
// purego.SyscallN, so a binary built with CGO_ENABLED=0 on a machine
// without CUDA runs unchanged on a GPU host. The library is looked up, in
// order, as GOLDFHE_LIBCUDA (if set, alone), then by its soname through the
// dynamic loader (LD_LIBRARY_PATH, ld.so.cache), then in every
// LD_LIBRARY_PATH directory and in /usr/local/nvidia/lib64,
// /usr/local/nvidia/lib, /usr/lib/x86_64-linux-gnu, /usr/lib/aarch64-linux-gnu,
// /usr/lib64, /usr/lib and /usr/lib/wsl/lib (each opened RTLD_LOCAL); after
// a library that opens but lacks a symbol or whose cuInit fails (a toolkit's
// stub library) the search goes on. Every symbol is resolved once
// with dlsym before anything is called (never purego.RegisterLibFunc, which
// panics on a missing symbol); a missing library or symbol is an error
// wrapping ErrNoDriver. The symbols bound are the ABI names the CUDA 12/13
// headers resolve to (cuMemAlloc_v2, cuMemcpyHtoD_v2, cuStreamDestroy_v2,
// cuDevicePrimaryCtxRelease_v2, …; see symNames), legacy default stream
// flavour. C types map to fixed-width Go types: int and enums to int32,
// unsigned int to uint32, size_t and CUdeviceptr to uint64, opaque handles
// to uintptr, and CUresult to Result (int32; only the low 32 bits of the
// return register are read). The driver is loaded and cuInit'ed once per
// process, on first use; Driver, DeviceCount and Devices report it.
//
// # Threading and contexts
//
// A Context is a device's primary context (cuDevicePrimaryCtxRetain),
// released by Close. CUDA makes a context current per OS thread, while Go
// moves goroutines between threads. This package makes its context current
// for each call and leaves every thread as it found it: each method that
// reaches the driver locks its goroutine to the OS thread
// (runtime.LockOSThread), pushes the context on the thread's context stack
// (cuCtxPushCurrent_v2), makes its call, pops the context
// (cuCtxPopCurrent_v2) and unlocks again. Whatever was current on the
// thread before (no context, or one of the caller's own, such as another
// CUDA library's on a thread the caller has locked) is current again when
// the method returns, whether its call succeeded or not. So goldfhe may be
// called between the calls of code that keeps its own context current, and
// it leaves no context on a thread that had none, where the CUDA runtime
// would take it for its own (cudart uses the driver's current context when
// there is one). The calls that need no context (Open's retain, Close's
// release, Devices, DeviceCount, Driver) do not touch the current one. A
// pop that fails with a sticky error leaves the Context unusable
// (Context.Err), as any call's does; the thread may then keep it current.
// No goroutine relies on thread-local state between calls, there is no
// dedicated thread to funnel work through, and every type here is safe for
// concurrent use by several goroutines (the driver API itself is
// thread-safe). A push and a pop are thread-local operations in the driver;
// they cost far less than the launch or copy they surround. A read-write
// lock keeps a Context's Close from running under a call in progress. The
// exceptions are the calls that destroy one object: DeviceBuffer.Free,
// HostPinned.Free and the Close of a Stream, Event, Module or Library must
// not run beside other use of that object (or of a Function of that
// module), as CUDA requires of its own handles. A use that starts after
// them returns ErrFreed or ErrClosed, but one that read the handle first
// may pass the destroyed handle to the driver. Each driver call costs one
// small heap allocation inside purego.SyscallN, so a kernel launch makes
// three (cuCtxPushCurrent_v2, cuLaunchKernel, cuCtxPopCurrent_v2). The
// bootstrapping kernels' methods (BootstrapKernels) check their operands
// without allocating and so make only those (TestLaunchAllocs); View
// allocates the small header of the buffer it returns.
//
// # Errors
//
// Every error starts with "kernels:". A failed driver call is an *Error
// naming the call and CUDA's own name and text for the code
// (cuGetErrorName, cuGetErrorString), e.g.
//
//	kernels: cuMemAlloc_v2: CUDA_ERROR_OUT_OF_MEMORY: out of memory (asked for 9007199254740992 bytes)
//
// and it wraps, for errors.Is, the sentinel its code maps to: ErrNoDriver,
// ErrNoDevice, ErrOutOfMemory, ErrInvalidValue, ErrBadImage or
// ErrLaunchFailed. Checks done in Go before any CUDA call wrap ErrArgument;
// uses after Free or Close wrap ErrFreed or ErrClosed; a missing fatbin
// wraps ErrNoFatbin. A kernel fault (illegal address and the like) is
// sticky in CUDA: the context is dead. So, here, are the hardware errors
// after which CUDA's documentation promises nothing (an uncorrectable ECC
// error, CUDA_ERROR_UNKNOWN from a GPU that stopped answering): going on
// could compute on corrupted memory and return wrong bits without an
// error. The Context remembers the first such error and every later call
// fails at once with ErrLaunchFailed, naming the call that faulted; only a new process recovers (resetting the primary
// context would pull memory from under every other user of it). Nothing
// here panics on a condition of the outside world; panics are kept for
// caller bugs that have no error return (a View out of bounds,
// HostPinned.Slice after Free).
//
// Kernel launches are asynchronous: a fault shows up at a later
// synchronising call. With GOLDFHE_CUDA_DEBUG=1 in the environment (or
// Context.SetDebug(true)), every launch is followed by cuCtxSynchronize and
// a fault is reported by the launch that caused it, naming the kernel.
//
// # Memory
//
// Device memory is a DeviceBuffer[T] (cuMemAlloc_v2) and pinned host
// memory a HostPinned[T] (cuMemHostAlloc, exposed as a []T by Slice): two
// types, so device and host memory cannot be mixed up; T is a fixed-size
// number type (Elem). Synchronous copies take plain Go slices; asynchronous
// copies take only HostPinned memory, because the driver reads or writes
// it after the call has returned. Both kinds are released explicitly with
// Free (no finalizers: the GPU may still be using memory the Go program no
// longer references); a use after Free returns an error wrapping ErrFreed.
// Views (DeviceBuffer.View, HostPinned.View) share their buffer's memory
// and its freed state. Context.Stats counts live buffers, streams, events and modules.
// Never ask for managed memory: it is not bound here.
//
// # Kernels and the fatbin
//
// The CUDA sources are goldilocks.cuh (Goldilocks field arithmetic,
// DESIGN.md §3), one .cuh per kernel family, and goldfhe.cu, the single
// translation unit that #includes them:
//
//   - fieldops.cuh, pointwise.cuh: field checks and batched pointwise
//     multiply(-accumulate).
//   - ntt_fastops.cuh: the same canonical field operations written as carry
//     chains, for the NTT kernels.
//   - ntt.cuh: the decomposed N-point NTT in the paper's matrix style (Li,
//     Pan, Li, Wang, Mathematics 12(3):458, 2024, eq. 9 and §2.2: one thread
//     per output, shifted terms summed in 192 bits, one reduction per
//     output, with and without merging; merging of one level only, inputs m
//     and m + f/2, where smallntt.Matrix also splits the even outputs by
//     f/4), the radix-2 butterfly baseline, and
//     the batched small-point transforms of the paper's Table 1.
//   - ntt_hybrid.cuh: the tuned two-stage NTT (one warp per polynomial, each
//     small transform an in-register network of shift twiddles).
//   - ntt_lazy.cuh: lazy Goldilocks operations (any 64-bit value inside a
//     network, carry folds instead of compare-and-select, shift twiddles and
//     the multiply-accumulate as 32-bit multiply-add chains on the FMA pipe),
//     checked on the host by the models in testdata/.
//   - bootstrap.cuh: the gate-bootstrapping steps (modulus switching, rotate
//     and decompose, NTT-domain multiply-accumulate, centred add, sample
//     extraction, key switching), one kernel each; key switching also
//     tiled over 16 samples and, for basebit 2 and 3, as an integer matrix
//     product on the tensor cores (mma.sync s8 × u8); for basebit 2 from
//     64 samples on with the table packed in the fragments' load order
//     (PackKSTable, KeySwitchPacked).
//   - bootstrap_step.cuh, bootstrap_fused.cuh, bootstrap_cluster.cuh,
//     bootstrap_split.cuh: the whole blind rotation of a batch in one
//     launch, the accumulator in shared memory: one block of (k+1)·l warps
//     per sample (fused), one block of N/16 or N/8 threads per polynomial
//     (wide), a thread-block cluster of k+1 blocks per sample exchanging
//     digit rows through distributed shared memory (cluster, sm_90 only),
//     or a cluster of 8 blocks per sample split by NTT index along the
//     stages of the decomposed transform (eq. (9) of Li et al. 2024), the
//     key fetched a step ahead with cp.async (split, sm_90 only: the lowest
//     latency). BootstrapKernels' BlindRotateFused and BlindRotateWide run
//     them (FusedShapes, WideShapes, WideFor).
//
// The wide, cluster and split kernels also come grouped (name suffix _g2
// or _g3, WideShape.G = BootstrapShape.Grouping = 2 or 3):
// bootstrapping-key unrolling with grouping factor 2 or 3 (Zhou et al.
// 2018, "Faster bootstrapping with multiple addends"; Bourse et al. 2018;
// TFHE-rs' multi-bit PBS). Key bits go in groups of G with 2^G − 1 TRGSW
// samples per group (2^r − 1 for a last group of r = n mod G bits), and
// the step of bits i … i+G−1 adds Σ_u (X^{e_u} − 1)·(BK_u ⊡ ACC) with e_u
// the sum of the amounts ā_{i+j} picked by the bits j of u, mod 2N (G = 2:
// e = (ā_i, ā_{i+1}, ā_i + ā_{i+1})): the external products decompose the
// same unrotated accumulator, so a group of key bits costs the transforms
// of one CMux step, for a key 1.5 (G = 2) or 7/3 (G = 3) times as large.
// X^e − 1 is applied in the NTT domain from a table of the powers of ψ
// (PsiPowers) that the kernels stage in shared memory. The fused and the
// per-step kernels take plain keys only and refuse a grouped one.
//
// A grouped step's K' = Σ_u (X^{e_u} − 1)·BK_u depends on the sample and
// the key only, not on ACC. So for the split kernel
// (bootstrap_combine.cuh; WideShape.Pre, suffix _g2p and _g3p) a combine
// kernel on the SMs the split kernel leaves idle forms every step's K' of
// the pass ahead, into a SplitScratch, raising a flag per step and sample;
// the split kernel, launched behind it with programmatic dependent launch
// (cuLaunchKernelEx), starts at once, waits for each step's flag and then
// multiplies by K' alone, as for a plain key. BlindRotateSplit runs them.
//
// Every NTT kernel is bit for bit the transform of a smallntt.Plan (one
// NTT-domain layout for all plans of a size; see smallntt.Plan); package
// gpuntt wraps them for batches of device-resident polynomials. `make fatbin`, run where nvcc exists, compiles goldfhe.cu
// into goldfhe.fatbin with SASS for sm_80, sm_86, sm_89 and sm_90 and PTX
// for compute_90 (which newer GPUs JIT-compile), and writes
// goldfhe.fatbin.sha256, the hash of the sources (defined in sourceHash and
// srchash.sh). Both files are committed; the fatbin is embedded with
// go:embed, and a test fails when the sources no longer match the recorded
// hash. Setting GOLDFHE_FATBIN=/path/to/dev.fatbin makes LoadLibrary load
// that file instead, so kernels can be rebuilt and tested in one command on
// a GPU host without committing. (The hash covers the sources only, not the
// nvcc version or flags: changing those in the Makefile also calls for a
// rebuild.)
//
// Context.LoadLibrary loads the fatbin and returns a Library with one typed
// method per __global__ kernel (Mul, MulAdd, FieldOps). Each checks its
// arguments in Go (lengths, strides, overlaps, devices) before launching,
// fills an argument block prepared once per kernel whose parameter array
// points into the block itself, and pins the block (runtime.Pinner) while
// cuLaunchKernel reads it.
//
// # Tests
//
// Without a driver or a GPU every GPU test calls t.Skip with the reason
// (e.g. "kernels: no CUDA driver: libcuda.so.1 not found"). The Go side is
// also tested without a GPU against an in-process fake driver that
// implements the bound entry points over Go memory and runs the kernels on
// the CPU, so argument marshalling, bookkeeping and error paths are checked
// on every machine. The external test package drives bootstrap's GPU engine
// on that fake (engine_fake_test.go, through export_test.go's
// UseFakeDriver), so the engine's passes, pipeline slots, staging and
// device-error handling are checked against the CPU engine without a GPU
// too.
package kernels
