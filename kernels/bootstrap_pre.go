package kernels

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"unsafe"
)

// The split kernels that take each step's K' from the combine kernel
// (bootstrap_combine.cuh; WideShape.Pre): a grouped step adds
// K' ⊡ ACC to ACC, K' = Σ_u (X^{e_u} − 1)·BK_u, which depends on the
// sample's rotation amounts and the key only. The combine kernel, on the
// SMs the split kernel leaves idle, forms every step's K' of a pass while
// the split kernel runs (programmatic dependent launch), and the split
// kernel's multiply-accumulate reads K' as a plain step reads its key: the
// seven products of a term per word no longer take the issue slots of the
// sample's own SMs.

// combineThreads is BSP_THREADS (bootstrap_combine.cuh), the combine
// kernel's block size: one step's K' of one sample is formed in
// (k+1)·N/combineThreads parts, each adding 1 to the step's flag.
const combineThreads = 128

// combineShape names one combine kernel: N, k, l and the grouping factor.
type combineShape struct{ N, K, L, G int }

func (c combineShape) kernelName() string {
	return fmt.Sprintf("goldfhe_bs_combine_n%d_k%d_l%d_g%d", c.N, c.K, c.L, c.G)
}

// SharedBytes is 0: the combine kernel's psiPow table is static shared
// memory.
func (combineShape) SharedBytes() int { return 0 }

// l1Threads is 0: the combine kernel keeps the largest carveout.
func (combineShape) l1Threads() int { return 0 }

// combineOf is the combine kernel a Pre split shape needs.
func combineOf(ws WideShape) combineShape { return combineShape{ws.n(), ws.K, ws.L, ws.G} }

// combineShapes are the kernels of BSP_DEFINE (bootstrap_split.cuh).
var combineShapes = []combineShape{
	{1024, 1, 3, 2}, {1024, 1, 2, 2}, {512, 3, 2, 2},
	{1024, 1, 3, 3}, {1024, 1, 2, 3}, {512, 3, 2, 3},
}

// SplitScratch is what a Pre split kernel needs beside its operands: the
// K' of every step of up to Samples() samples (⌈n/G⌉ steps of (k+1)·l·(k+1)·N
// words each per sample) and a flag per step and sample, which the
// combine kernel raises as it forms the step's parts and the split kernel
// zeroes at its end. So one scratch serves any number of passes, one at a
// time: passes that share a scratch must be ordered, on one stream or by
// the caller. Its methods are safe to call from several goroutines.
type SplitScratch struct {
	mu      sync.Mutex
	kp      *DeviceBuffer[uint64]
	flags   *DeviceBuffer[uint32]
	sh      BootstrapShape
	samples int
}

// preSteps is the number of grouped steps of sh: ⌈n/G⌉.
func preSteps(sh BootstrapShape) int { return (sh.LWEDim + sh.Grouping - 1) / sh.Grouping }

// preWords is the K' words of one sample: a TRGSW sample's
// (k+1)·l·(k+1)·N words for each of its steps.
func preWords(sh BootstrapShape) int { return preSteps(sh) * sh.Rows() * (sh.K + 1) * sh.N() }

// NewSplitScratch allocates a SplitScratch on c for passes of up to
// samples samples of the grouped shape sh (sh.Grouping 2 or 3).
func NewSplitScratch(c *Context, sh BootstrapShape, samples int) (*SplitScratch, error) {
	const op = "NewSplitScratch"
	if err := sh.Check(); err != nil {
		return nil, fmt.Errorf("%w (%s)", err, op)
	}
	if !sh.grouped() {
		return nil, argErr(op, "a plain key (grouping %d) has no K': the split kernels that take one need a key grouped by 2 or 3", sh.Grouping)
	}
	if samples < 1 {
		return nil, argErr(op, "samples = %d, want ≥ 1", samples)
	}
	kp, err := Alloc[uint64](c, preWords(sh)*samples)
	if err != nil {
		return nil, err
	}
	flags, err := Alloc[uint32](c, preSteps(sh)*samples)
	if err == nil {
		err = flags.Memset32(0)
	}
	if err != nil {
		frees := kp.Free()
		if flags != nil {
			frees = errors.Join(frees, flags.Free())
		}
		if c.Err() == nil { // after a device fault the frees only repeat it
			err = errors.Join(err, frees)
		}
		return nil, err
	}
	return &SplitScratch{kp: kp, flags: flags, sh: sh, samples: samples}, nil
}

// Samples is the most samples a pass using the scratch may have.
func (s *SplitScratch) Samples() int { return s.samples }

// Free releases the scratch's device memory; a pass still using it must
// have completed.
func (s *SplitScratch) Free() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.kp == nil {
		return nil
	}
	err := s.kp.Free()
	if e := s.flags.Free(); err == nil {
		err = e
	}
	s.kp, s.flags = nil, nil
	return err
}

// preLaunch is the launch of the combine kernel and the Pre split kernel of one pass,
// with their argument blocks.
type preLaunch struct {
	mu      sync.Mutex
	combine struct {
		p      [5]devicePtr // in, bk, psiPow, kp, flags
		u      [2]uint32    // n, count
		params [7]unsafe.Pointer
	}
	split struct {
		p      [5]devicePtr // in, kp, tables, ext, flags
		u      [5]uint32    // n, beta, offset, mu, count
		params [10]unsafe.Pointer
	}
	pdl pdlLaunch
}

func newPreLaunch() *preLaunch {
	k := &preLaunch{}
	for i := range k.combine.p {
		k.combine.params[i] = unsafe.Pointer(&k.combine.p[i])
	}
	for i := range k.combine.u {
		k.combine.params[5+i] = unsafe.Pointer(&k.combine.u[i])
	}
	for i := range k.split.p {
		k.split.params[i] = unsafe.Pointer(&k.split.p[i])
	}
	for i := range k.split.u {
		k.split.params[5+i] = unsafe.Pointer(&k.split.u[i])
	}
	return k
}

// blindRotatePre is BlindRotateWide for a Pre split shape: the combine
// kernel (a persistent grid, combinePerSM(count) blocks per SM) and then,
// on the same stream with programmatic dependent launch, the split kernel,
// which starts while the combine kernel runs and waits for each step's K'.
func (b *BootstrapKernels) blindRotatePre(s *Stream, sh BootstrapShape, ws WideShape, in *DeviceBuffer[uint32], bk, tables *DeviceBuffer[uint64], sc *SplitScratch, ext *DeviceBuffer[uint32], mu uint32, count int) error {
	const op = "BootstrapKernels.BlindRotateSplit"
	k, comb := b.wide[ws], b.combine[combineOf(ws)]
	if k == nil || comb == nil || !ws.fits(sh) {
		return argErr(op, "no split kernel %+v with its combine kernel for N = %d, k = %d, l = %d, grouping %d on this device", ws, sh.N(), sh.K, sh.BKLevels, sh.Grouping)
	}
	if sc == nil {
		return argErr(op, "scratch is nil (NewSplitScratch)")
	}
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if sc.kp == nil {
		return fmt.Errorf("kernels: %s: SplitScratch %w", op, shortClosed)
	}
	if sc.sh.LWEDim != sh.LWEDim || sc.sh.Grouping != sh.Grouping || sc.sh.N() != sh.N() || sc.sh.K != sh.K || sc.sh.BKLevels != sh.BKLevels {
		return argErr(op, "scratch is for n = %d, N = %d, k = %d, l = %d, grouping %d, not this shape's n = %d, N = %d, k = %d, l = %d, grouping %d",
			sc.sh.LWEDim, sc.sh.N(), sc.sh.K, sc.sh.BKLevels, sc.sh.Grouping, sh.LWEDim, sh.N(), sh.K, sh.BKLevels, sh.Grouping)
	}
	if count > sc.samples {
		return argErr(op, "count = %d samples, the scratch holds %d", count, sc.samples)
	}
	l := b.l
	w := wideOperands(sh, ws, in, bk, tables, ext, count)
	ops := [maxOperands]operandSpec{w[0], w[1], w[2], w[3],
		opnd("scratch K'", sc.kp, count*preWords(sh), true),
		opnd("scratch flags", sc.flags, count*preSteps(sh), true)}
	ptrs, h, err := b.prepare(op, s, sh, count, ops[:]...)
	if err != nil || count == 0 {
		return err
	}
	if err := checkKeyAlign(op, ptrs[1], ws); err != nil {
		return err
	}
	in0, bk0, tab, ext0, kp0, fl0 := ptrs[0], ptrs[1], ptrs[2], ptrs[3], ptrs[4], ptrs[5]
	pl := b.pre
	pl.mu.Lock()
	defer pl.mu.Unlock()
	pl.combine.p = [5]devicePtr{in0, bk0, tab + devicePtr(8*ws.psiAt()), kp0, fl0}
	pl.combine.u = [2]uint32{uint32(sh.LWEDim), uint32(count)}
	pl.split.p = [5]devicePtr{in0, kp0, tab, ext0, fl0}
	pl.split.u = [5]uint32{uint32(sh.LWEDim), uint32(sh.BKBaseLog), sh.BKOffset, mu, uint32(count)}
	var pin runtime.Pinner
	pin.Pin(pl)
	defer pin.Unpin()
	sms := max(l.c.info.SMs, 1)
	if err := comb.f.launch(dim3{uint32(combinePerSM(count, sms) * sms), 1, 1}, dim3{combineThreads, 1, 1}, 0, h, unsafe.Pointer(&pl.combine.params[0])); err != nil {
		return err
	}
	bps := ws.BlocksPerSample()
	grid := dim3{uint32(bps * min(count, maxNTTGrid/bps)), 1, 1}
	if err := k.f.launchPDL(&pl.pdl, grid, dim3{uint32(ws.Threads()), 1, 1}, uint32(ws.SharedBytes()), h, unsafe.Pointer(&pl.split.params[0])); err != nil {
		// The combine kernel raises the pass's flags and no split kernel
		// will zero them: zero them behind it, for the next pass.
		return errors.Join(err, sc.flags.View(0, count*preSteps(sh)).Memset32Async(0, s))
	}
	return nil
}

// combinePerSM is the combine kernel's blocks per SM for a pass of count
// samples: one while the pass's clusters take at most an SM per block (a
// second block per SM then slows the split kernel's blocks it shares SMs
// with: one sample grouped by 3 0.835 against 0.861 ms), two beyond, where
// forming K' would lag (33 samples grouped by 3 2.68 against 2.51 ms, 48
// 3.82 against 3.06; H100, kernels/NOTES.md session 9).
func combinePerSM(count, sms int) int {
	if count <= sms/8 {
		return 1
	}
	return 2
}

// BlindRotateSplit computes what BlindRotateWide computes, bit for bit, for
// a Pre split shape (WideShape.Pre: the split kernel that takes each step's
// K' from the combine kernel), with sc (NewSplitScratch, for sh and at
// least count samples) for the pass's K'. Passes that share sc must not
// overlap: run them on one stream.
func (b *BootstrapKernels) BlindRotateSplit(s *Stream, sh BootstrapShape, ws WideShape, in *DeviceBuffer[uint32], bk, tables *DeviceBuffer[uint64], sc *SplitScratch, ext *DeviceBuffer[uint32], mu uint32, count int) error {
	if !ws.Pre {
		return argErr("BootstrapKernels.BlindRotateSplit", "%v takes the key itself: BlindRotateWide runs it", ws)
	}
	return b.blindRotatePre(s, sh, ws, in, bk, tables, sc, ext, mu, count)
}
