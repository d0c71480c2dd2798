package kernels

import (
	"fmt"
	"sync"
	"unsafe"
)

// FusedShape names one fused blind-rotation kernel (bootstrap_fused.cuh):
// the hybrid NTT factorisation N = F1·F2 and the TRLWE dimension k and
// gadget levels l it is compiled for.
type FusedShape struct{ F1, F2, K, L int }

// fusedShapes are the kernels of bootstrap_fused.cuh (BSF_DEFINE): the
// named parameter sets' shapes.
var fusedShapes = []FusedShape{{32, 32, 1, 3}, {32, 32, 1, 2}, {16, 32, 3, 2}}

// FusedShapes lists the shapes that have a fused blind-rotation kernel.
func FusedShapes() []FusedShape { return append([]FusedShape(nil), fusedShapes...) }

func (f FusedShape) kernelName() string {
	return fmt.Sprintf("goldfhe_bs_fused_%dx%d_k%d_l%d", f.F1, f.F2, f.K, f.L)
}

// threads is the block size of the kernel: one warp per TRGSW row.
func (f FusedShape) threads() int { return 32 * (f.K + 1) * f.L }

// SharedBytes is the dynamic shared memory one block uses (bsf_shared):
// (k+1)·l padded polynomials of F1·(F2+1) words and the 32-bit accumulator.
func (f FusedShape) SharedBytes() int {
	return (f.K+1)*f.L*f.F1*(f.F2+1)*8 + (f.K+1)*f.F1*f.F2*4
}

// fusedKernel is one fused kernel and its argument block: np pointers
// (fused: in, bk, tw, twInv, ext; wide: in, bk, tables, ext), then the
// scalars n, beta, offset, mu, count.
type fusedKernel struct {
	f    *Function
	mu   sync.Mutex
	args struct {
		p      [5]devicePtr
		u      [5]uint32
		params [10]unsafe.Pointer
	}
}

// newFusedKernel binds f's argument block for np pointer arguments.
func newFusedKernel(f *Function, np int) *fusedKernel {
	k := &fusedKernel{f: f}
	for i := 0; i < np; i++ {
		k.args.params[i] = unsafe.Pointer(&k.args.p[i])
	}
	for i := range k.args.u {
		k.args.params[np+i] = unsafe.Pointer(&k.args.u[i])
	}
	return k
}

// prepareSharedKernel raises f's dynamic shared-memory limit to need bytes
// and asks for the largest carveout; ok is false when the device cannot
// give a block that much.
func (b *BootstrapKernels) prepareSharedKernel(f *Function, need int) (ok bool, err error) {
	if need > b.l.c.info.SharedPerBlockOptin {
		return false, nil
	}
	if need > 48<<10 {
		if err := f.SetMaxDynamicSharedMemory(need); err != nil {
			return false, err
		}
	}
	return true, f.PreferMaxSharedMemory()
}

// lookupFused finds the fused kernels the library's fatbin has. A fatbin
// without them (built before bootstrap_fused.cuh) is not an error: Fused
// then reports false and an engine uses the unfused kernels.
func (b *BootstrapKernels) lookupFused() error {
	b.fused = map[FusedShape]*fusedKernel{}
	for _, fs := range fusedShapes {
		f, err := b.l.m.Function(fs.kernelName())
		if err != nil {
			continue
		}
		if ok, err := b.prepareSharedKernel(f, fs.SharedBytes()); err != nil {
			return err
		} else if ok {
			b.fused[fs] = newFusedKernel(f, 5)
		}
	}
	b.wide = map[WideShape]*fusedKernel{}
	for _, ws := range wideShapes {
		f, err := b.l.m.Function(ws.kernelName())
		if err != nil {
			continue
		}
		if ok, err := b.prepareSharedKernel(f, ws.SharedBytes()); err != nil {
			return err
		} else if ok {
			b.wide[ws] = newFusedKernel(f, 4)
		}
	}
	return nil
}

// Fused reports whether a fused blind-rotation kernel exists for the shape
// sh with a hybrid NTT of factorisation f1×f2, and fits this device.
func (b *BootstrapKernels) Fused(sh BootstrapShape, f1, f2 int) bool {
	_, ok := b.fused[FusedShape{f1, f2, sh.K, sh.BKLevels}]
	return ok && f1*f2 == sh.N()
}

// BlindRotateFused (goldfhe_bs_fused_<F1>x<F2>_k<k>_l<l>) runs, for each of
// the count TLWE samples in in ((n+1) words each), modulus switching, the n
// CMux steps of blind rotation with accumulator mu·(1 + X + … + X^{N−1})
// and sample extraction, writing the extracted samples (k·N+1 words each)
// to ext: what Init, n × (RotateDecompose, forward NTT, MAC, inverse NTT,
// AddCentered) and Extract compute, bit for bit, in one launch with the
// accumulator in shared memory. bk is the NTT-domain bootstrapping key of a
// plan whose NTT-domain order is the hybrid f1×f2 plan's (every smallntt
// plan of one N shares it), tw and twInv that plan's stage-1 tables T_1
// and T'_1 (smallntt.Plan.StageTables()[0].Twiddle and TwiddleInv).
func (b *BootstrapKernels) BlindRotateFused(s *Stream, sh BootstrapShape, f1, f2 int, in *DeviceBuffer[uint32], bk, tw, twInv *DeviceBuffer[uint64], ext *DeviceBuffer[uint32], mu uint32, count int) error {
	const op = "BootstrapKernels.BlindRotateFused"
	fs := FusedShape{f1, f2, sh.K, sh.BKLevels}
	k := b.fused[fs]
	if k == nil || f1*f2 != sh.N() {
		return argErr(op, "no fused kernel for %d×%d, k = %d, l = %d on this device (have %v)", f1, f2, sh.K, sh.BKLevels, fusedShapes)
	}
	l := b.l
	n, N, kn := sh.LWEDim, sh.N(), sh.ExtractedDim()
	ptrs, h, err := b.prepare(op, s, sh, count,
		opnd(l, op, "in", in, count*(n+1), false),
		opnd(l, op, "bk", bk, sh.BKLen(), false),
		opnd(l, op, "tw", tw, N, false),
		opnd(l, op, "twInv", twInv, N, false),
		opnd(l, op, "ext", ext, count*(kn+1), true))
	if err != nil || count == 0 {
		return err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	copy(k.args.p[:], ptrs)
	k.args.u = [5]uint32{uint32(n), uint32(sh.BKBaseLog), sh.BKOffset, mu, uint32(count)}
	grid := dim3{uint32(min(count, maxNTTGrid)), 1, 1}
	return launchPinnedShared(k.f, grid, dim3{uint32(fs.threads()), 1, 1}, uint32(fs.SharedBytes()), h, &k.args, unsafe.Pointer(&k.args.params[0]))
}

// WideShape names one wide blind-rotation kernel (bootstrap_fused.cuh,
// bsw_run): one thread block of T·(k+1)·l threads per sample, each
// polynomial transformed by T threads through the three stages of the
// hybrid plan with factors (F1, F2, F3). T = N/8 runs one block per SM,
// T = N/16 two; the second is the faster on an H200 at every batch size.
//
// With Cluster set it names the cluster kernel (bootstrap_cluster.cuh,
// bsc_run, sm_90 and later): the same computation by a cluster of k+1
// blocks of T·l threads per sample, block c owning accumulator column c
// and its digit rows, the rows exchanged through distributed shared
// memory once per CMux step.
type WideShape struct {
	F1, F2, F3, K, L, T int
	Cluster             bool
}

// wideShapes are the kernels of BSW_DEFINE.
var wideShapes = []WideShape{
	{8, 8, 16, 1, 3, 128, false}, {8, 8, 16, 1, 3, 64, false}, {8, 8, 16, 1, 3, 128, true},
	{8, 8, 16, 1, 2, 128, false}, {8, 8, 16, 1, 2, 64, false}, {8, 8, 16, 1, 2, 128, true},
	{8, 8, 8, 3, 2, 64, false}, {8, 8, 8, 3, 2, 32, false}, {8, 8, 8, 3, 2, 64, true},
}

// WideShapes lists the shapes that have a wide blind-rotation kernel.
func WideShapes() []WideShape { return append([]WideShape(nil), wideShapes...) }

func (w WideShape) n() int { return w.F1 * w.F2 * w.F3 }

func (w WideShape) kernelName() string {
	kind := "wide"
	if w.Cluster {
		kind = "cluster"
	}
	return fmt.Sprintf("goldfhe_bs_%s_%dx%dx%d_k%d_l%d_t%d", kind, w.F1, w.F2, w.F3, w.K, w.L, w.T)
}

// blocksPerSample is the cluster size: k+1 for a cluster kernel, else 1.
func (w WideShape) blocksPerSample() int {
	if w.Cluster {
		return w.K + 1
	}
	return 1
}

// Threads is the block size: T threads per TRGSW row of the block.
func (w WideShape) Threads() int { return w.T * (w.K + 1) * w.L / w.blocksPerSample() }

// SharedBytes is the dynamic shared memory of one block (bsw_shared,
// bsc_shared).
func (w WideShape) SharedBytes() int {
	poly := (w.n() + w.F1*w.F2) * 8
	if w.Cluster {
		return (w.L+1)*poly + w.n()*4
	}
	return (w.K+1)*w.L*poly + (w.K+1)*w.n()*4
}

// TablesLen is the length of the tables operand: T_1, T'_1 (N words
// each), T_2, T'_2 (F2·F3 words each).
func (w WideShape) TablesLen() int { return 2*w.n() + 2*w.F2*w.F3 }

// WideFor returns the wide kernels for sh that fit this device, most
// threads per polynomial first.
func (b *BootstrapKernels) WideFor(sh BootstrapShape) []WideShape {
	var out []WideShape
	for _, ws := range wideShapes {
		if _, ok := b.wide[ws]; ok && ws.n() == sh.N() && ws.K == sh.K && ws.L == sh.BKLevels {
			out = append(out, ws)
		}
	}
	return out
}

// BlindRotateWide (goldfhe_bs_wide_<F1>x<F2>x<F3>_k<k>_l<l>_t<T>, or
// goldfhe_bs_cluster_… for a cluster shape) computes what BlindRotateFused
// computes, bit for bit, with one block of ws.Threads() threads per
// sample (a cluster of k+1 such blocks for a cluster shape). tables holds, one after another, T_1, T'_1, T_2 and T'_2
// of the hybrid plan with factors (F1, F2, F3)
// (smallntt.Plan.StageTables()[0] and [1]); bk is in the NTT-domain order
// every plan of size N shares.
func (b *BootstrapKernels) BlindRotateWide(s *Stream, sh BootstrapShape, ws WideShape, in *DeviceBuffer[uint32], bk, tables *DeviceBuffer[uint64], ext *DeviceBuffer[uint32], mu uint32, count int) error {
	const op = "BootstrapKernels.BlindRotateWide"
	k := b.wide[ws]
	if k == nil || ws.n() != sh.N() || ws.K != sh.K || ws.L != sh.BKLevels {
		return argErr(op, "no wide kernel %+v for N = %d, k = %d, l = %d on this device (have %v)", ws, sh.N(), sh.K, sh.BKLevels, wideShapes)
	}
	l := b.l
	n, kn := sh.LWEDim, sh.ExtractedDim()
	ptrs, h, err := b.prepare(op, s, sh, count,
		opnd(l, op, "in", in, count*(n+1), false),
		opnd(l, op, "bk", bk, sh.BKLen(), false),
		opnd(l, op, "tables", tables, ws.TablesLen(), false),
		opnd(l, op, "ext", ext, count*(kn+1), true))
	if err != nil || count == 0 {
		return err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	copy(k.args.p[:], ptrs)
	k.args.u = [5]uint32{uint32(n), uint32(sh.BKBaseLog), sh.BKOffset, mu, uint32(count)}
	bps := ws.blocksPerSample()
	grid := dim3{uint32(bps * min(count, maxNTTGrid/bps)), 1, 1}
	return launchPinnedShared(k.f, grid, dim3{uint32(ws.Threads()), 1, 1}, uint32(ws.SharedBytes()), h, &k.args, unsafe.Pointer(&k.args.params[0]))
}
