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

// fusedKernel is one fused kernel and its argument block.
type fusedKernel struct {
	f    *Function
	mu   sync.Mutex
	args struct {
		p      [5]devicePtr // in, bk, tw, twInv, ext
		u      [5]uint32    // n, beta, offset, mu, count
		params [10]unsafe.Pointer
	}
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
		if need := fs.SharedBytes(); need > b.l.c.info.SharedPerBlockOptin {
			continue
		} else if need > 48<<10 {
			if err := f.SetMaxDynamicSharedMemory(need); err != nil {
				return err
			}
		}
		if err := f.PreferMaxSharedMemory(); err != nil {
			return err
		}
		k := &fusedKernel{f: f}
		for i := range k.args.p {
			k.args.params[i] = unsafe.Pointer(&k.args.p[i])
		}
		for i := range k.args.u {
			k.args.params[5+i] = unsafe.Pointer(&k.args.u[i])
		}
		b.fused[fs] = k
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
