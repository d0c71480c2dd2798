package kernels

import (
	"fmt"
	"math/bits"
	"strings"
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

// l1Threads is 0: the fused kernels keep the largest carveout (not
// measured with a smaller one).
func (FusedShape) l1Threads() int { return 0 }

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
// and asks for a carveout: the largest, or for a kernel of l1Threads > 0
// threads per block the smallest that still holds as many blocks as the
// largest (sharedCarveout), leaving the rest to L1. How many that is, the
// driver's occupancy at the largest carveout says: registers may allow
// fewer blocks than shared memory does, and a carveout sized by shared
// memory alone then takes L1 for blocks that never run (kernels/NOTES.md
// session 15: a smaller psiPow table let three TFHELib128 t64 blocks'
// shared memory fit where their registers hold two, which left them 28
// KiB of L1 instead of 88). ok is false when the device cannot give a
// block that much.
func (b *BootstrapKernels) prepareSharedKernel(f *Function, need, l1Threads int) (ok bool, err error) {
	if need > b.l.c.info.SharedPerBlockOptin {
		return false, nil
	}
	if need > 48<<10 {
		if err := f.SetMaxDynamicSharedMemory(need); err != nil {
			return false, err
		}
	}
	if err := f.PreferSharedCarveout(100); err != nil {
		return false, err
	}
	if l1Threads <= 0 {
		return true, nil
	}
	a, err := f.Attributes()
	if err != nil {
		return false, err
	}
	blocks, err := f.MaxActiveBlocksPerSM(l1Threads, need)
	if err != nil {
		return false, err
	}
	return true, f.PreferSharedCarveout(sharedCarveout(need, a.StaticSharedBytes, 1<<10, b.l.c.info.SharedPerSM, blocks))
}

// lookupFused finds the fused, wide and cluster kernels the library's
// fatbin has. A fatbin without them (built before bootstrap_fused.cuh) is
// not an error: Fused then reports false, WideFor returns none, and an
// engine uses the unfused kernels.
func (b *BootstrapKernels) lookupFused() (err error) {
	if b.fused, err = lookupShapes(b, fusedShapes, 5); err != nil {
		return err
	}
	if b.wide, err = lookupShapes(b, wideShapes, 4); err != nil {
		return err
	}
	// A Pre split kernel runs only with its combine kernel.
	comb, err := lookupShapes(b, combineShapes, 5)
	if err != nil {
		return err
	}
	b.combine = map[combineShape]*fusedKernel{}
	for ws := range b.wide {
		if !ws.Pre {
			continue
		}
		if c := comb[combineOf(ws)]; c != nil {
			b.combine[combineOf(ws)] = c
		} else {
			delete(b.wide, ws)
		}
	}
	b.pre = newPreLaunch()
	return nil
}

// oneLaunchShape is a shape of the one-launch blind-rotation kernels.
type oneLaunchShape interface {
	comparable
	kernelName() string
	SharedBytes() int
	// l1Threads: the block's threads, for a kernel that takes the
	// smallest carveout that keeps its blocks per SM rather than the
	// largest (prepareSharedKernel); 0 for the largest.
	l1Threads() int
}

// lookupShapes binds the kernel of each shape that the fatbin has and
// whose shared memory this device gives, with np pointer arguments. A
// kernel the fatbin lacks is left out; any other failure is an error.
func lookupShapes[S oneLaunchShape](b *BootstrapKernels, shapes []S, np int) (map[S]*fusedKernel, error) {
	out := map[S]*fusedKernel{}
	for _, s := range shapes {
		f, err := b.l.m.Function(s.kernelName())
		if notFound(err) {
			continue
		} else if err != nil {
			return nil, err
		}
		if ok, err := b.prepareSharedKernel(f, s.SharedBytes(), s.l1Threads()); err != nil {
			return nil, err
		} else if ok {
			out[s] = newFusedKernel(f, np)
		}
	}
	return out, nil
}

// Fused reports whether a fused blind-rotation kernel exists for the shape
// sh with a hybrid NTT of factorisation f1×f2, and fits this device. It is
// false for a grouped key (sh.Grouping 2 or 3): the fused kernels run one
// CMux step per key bit.
func (b *BootstrapKernels) Fused(sh BootstrapShape, f1, f2 int) bool {
	_, ok := b.fused[FusedShape{f1, f2, sh.K, sh.BKLevels}]
	return ok && f1*f2 == sh.N() && !sh.grouped()
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
// and T'_1 (smallntt.Plan.StageTables()[0].Twiddle and TwiddleInv). A
// grouped key (sh.Grouping 2 or 3) is an error: BlindRotateWide runs it.
func (b *BootstrapKernels) BlindRotateFused(s *Stream, sh BootstrapShape, f1, f2 int, in *DeviceBuffer[uint32], bk, tw, twInv *DeviceBuffer[uint64], ext *DeviceBuffer[uint32], mu uint32, count int) error {
	const op = "BootstrapKernels.BlindRotateFused"
	if err := plainKey(op, sh); err != nil {
		return err
	}
	fs := FusedShape{f1, f2, sh.K, sh.BKLevels}
	k := b.fused[fs]
	if k == nil || f1*f2 != sh.N() {
		return argErr(op, "no fused kernel for %d×%d, k = %d, l = %d on this device (have %v)", f1, f2, sh.K, sh.BKLevels, fusedShapes)
	}
	n, N, kn := sh.LWEDim, sh.N(), sh.ExtractedDim()
	ptrs, h, err := b.prepare(op, s, sh, count,
		opnd("in", in, count*(n+1), false),
		opnd("bk", bk, sh.BKLen(), false),
		opnd("tw", tw, N, false),
		opnd("twInv", twInv, N, false),
		opnd("ext", ext, count*(kn+1), true))
	if err != nil || count == 0 {
		return err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	copy(k.args.p[:], ptrs[:])
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
//
// With Split = C set it names the split kernel (bootstrap_split.cuh,
// bss_run, sm_90 and later): a cluster of C blocks per sample, split by
// NTT index (block r owns N/C consecutive NTT-domain positions and the
// coefficients of M/C stage-1 columns, M = F2·F3), two or three
// distributed-shared-memory exchanges per step; T is then its block size,
// (k+1)·N/C threads. The lowest latency for a few samples.
//
// G is the grouping factor of the key the kernel takes: 0 for one CMux
// step per key bit, 2 or 3 for the grouped kernels (name suffix _g2, _g3;
// G in bootstrap_step.cuh), which take key bits G at a time, 2^G − 1
// TRGSW samples per group (BootstrapShape.Grouping G), and psiPow after
// the twiddle tables (TablesLen, PsiPowers).
//
// Pre (split kernels of G = 2, 3 only; suffix _g2p, _g3p) names the split
// kernel that reads each step's K' = Σ_u (X^{e_u} − 1)·BK_u, formed ahead
// by the combine kernel on the other SMs, instead of the key:
// BlindRotateSplit runs it.
//
// Flat (grouped keys only, built for TFHELib128 grouped by 3; name infix
// _f<T>: wide_8x8x16_k1_l3_f256_g3) names the flat kernel
// (bootstrap_fused.cuh, bsw_run_flat): T threads per sample, (k+1)·N/F1
// of them, each owning the N/F1-th of an accumulator column that its
// inverse stage 1 writes and the next step's forward stage 1 reads for all
// l digit rows, the other stages spread over the block; psiPow staged
// unpadded (and less 1), so that three TFHELib128 blocks share an SM. It reads the key
// in the paired layout (PairedKey, PairKey). The engine runs it instead of
// the t64 kernel for passes of at least a few of its waves.
type WideShape struct {
	F1, F2, F3, K, L, T int
	Cluster             bool
	Split               int
	G                   int
	Pre                 bool
	Flat                bool
}

// wideShapes are the kernels of BSW_DEFINE and BSC_DEFINE, then of
// BSW_DEFINE_GROUPED and BSC_DEFINE_GROUPED (the same shapes, grouped by 2),
// of BSS_DEFINE (split, plain and grouped by 2), then of the grouped-by-3
// kernels of BSW_DEFINE_GROUPED, BSC_DEFINE_GROUPED and BSS_DEFINE_AS.
var wideShapes = []WideShape{
	{F1: 8, F2: 8, F3: 16, K: 1, L: 3, T: 128},
	{F1: 8, F2: 8, F3: 16, K: 1, L: 3, T: 64},
	{F1: 8, F2: 8, F3: 16, K: 1, L: 3, T: 128, Cluster: true},
	{F1: 8, F2: 8, F3: 16, K: 1, L: 2, T: 128},
	{F1: 8, F2: 8, F3: 16, K: 1, L: 2, T: 64},
	{F1: 8, F2: 8, F3: 16, K: 1, L: 2, T: 128, Cluster: true},
	{F1: 8, F2: 8, F3: 8, K: 3, L: 2, T: 64},
	{F1: 8, F2: 8, F3: 8, K: 3, L: 2, T: 32},
	{F1: 8, F2: 8, F3: 8, K: 3, L: 2, T: 64, Cluster: true},

	{F1: 8, F2: 8, F3: 16, K: 1, L: 3, T: 128, G: 2},
	{F1: 8, F2: 8, F3: 16, K: 1, L: 3, T: 64, G: 2},
	{F1: 8, F2: 8, F3: 16, K: 1, L: 3, T: 128, Cluster: true, G: 2},
	{F1: 8, F2: 8, F3: 16, K: 1, L: 2, T: 128, G: 2},
	{F1: 8, F2: 8, F3: 16, K: 1, L: 2, T: 64, G: 2},
	{F1: 8, F2: 8, F3: 16, K: 1, L: 2, T: 128, Cluster: true, G: 2},
	{F1: 8, F2: 8, F3: 8, K: 3, L: 2, T: 64, G: 2},
	{F1: 8, F2: 8, F3: 8, K: 3, L: 2, T: 32, G: 2},
	{F1: 8, F2: 8, F3: 8, K: 3, L: 2, T: 64, Cluster: true, G: 2},

	// BSS_DEFINE: the split kernels, plain and grouped.
	{F1: 8, F2: 8, F3: 16, K: 1, L: 3, T: 256, Split: 8},
	{F1: 8, F2: 8, F3: 16, K: 1, L: 2, T: 256, Split: 8},
	{F1: 8, F2: 8, F3: 8, K: 3, L: 2, T: 256, Split: 8},
	{F1: 8, F2: 8, F3: 16, K: 1, L: 3, T: 256, Split: 8, G: 2},
	{F1: 8, F2: 8, F3: 16, K: 1, L: 2, T: 256, Split: 8, G: 2},
	{F1: 8, F2: 8, F3: 8, K: 3, L: 2, T: 256, Split: 8, G: 2},

	// Grouping factor 3.
	{F1: 8, F2: 8, F3: 16, K: 1, L: 3, T: 128, G: 3},
	{F1: 8, F2: 8, F3: 16, K: 1, L: 3, T: 64, G: 3},
	{F1: 8, F2: 8, F3: 16, K: 1, L: 3, T: 128, Cluster: true, G: 3},
	{F1: 8, F2: 8, F3: 16, K: 1, L: 2, T: 128, G: 3},
	{F1: 8, F2: 8, F3: 16, K: 1, L: 2, T: 64, G: 3},
	{F1: 8, F2: 8, F3: 16, K: 1, L: 2, T: 128, Cluster: true, G: 3},
	{F1: 8, F2: 8, F3: 8, K: 3, L: 2, T: 64, G: 3},
	{F1: 8, F2: 8, F3: 8, K: 3, L: 2, T: 32, G: 3},
	{F1: 8, F2: 8, F3: 8, K: 3, L: 2, T: 64, Cluster: true, G: 3},
	{F1: 8, F2: 8, F3: 16, K: 1, L: 3, T: 256, Split: 8, G: 3},
	{F1: 8, F2: 8, F3: 16, K: 1, L: 2, T: 256, Split: 8, G: 3},
	{F1: 8, F2: 8, F3: 8, K: 3, L: 2, T: 256, Split: 8, G: 3},

	// BSS_DEFINE_PRE: the split kernels that take K' (combineShapes).
	{F1: 8, F2: 8, F3: 16, K: 1, L: 3, T: 256, Split: 8, G: 2, Pre: true},
	{F1: 8, F2: 8, F3: 16, K: 1, L: 2, T: 256, Split: 8, G: 2, Pre: true},
	{F1: 8, F2: 8, F3: 8, K: 3, L: 2, T: 256, Split: 8, G: 2, Pre: true},
	{F1: 8, F2: 8, F3: 16, K: 1, L: 3, T: 256, Split: 8, G: 3, Pre: true},
	{F1: 8, F2: 8, F3: 16, K: 1, L: 2, T: 256, Split: 8, G: 3, Pre: true},
	{F1: 8, F2: 8, F3: 8, K: 3, L: 2, T: 256, Split: 8, G: 3, Pre: true},

	// BSW_DEFINE_FLAT: the flat kernel (TFHELib128 grouped by 3).
	{F1: 8, F2: 8, F3: 16, K: 1, L: 3, T: 256, G: 3, Flat: true},
}

// splitMaxShared is BSS_MAX_SHARED (bootstrap_split.cuh): the most shared
// memory a block of sm_90 may have, 227 KiB, which decides whether a split
// kernel of grouping factor 3 double-buffers its key slices.
const splitMaxShared = 227 << 10

// splitCTWords is BSS_CT_WORDS (bootstrap_split.cuh): the largest LWE
// dimension n a split kernel takes (it keeps the sample's amounts in
// shared memory).
const splitCTWords = 1024

// WideShapes lists the shapes that have a wide blind-rotation kernel.
func WideShapes() []WideShape { return append([]WideShape(nil), wideShapes...) }

func (w WideShape) n() int { return w.F1 * w.F2 * w.F3 }

// grouped reports whether the kernel takes a grouped key.
func (w WideShape) grouped() bool { return w.G >= 2 }

// terms is the number of TRGSW samples per step of the kernel's key: 1,
// or 2^G − 1 for a grouped kernel.
func (w WideShape) terms() int {
	if !w.grouped() {
		return 1
	}
	return 1<<w.G - 1
}

// String names the shape as its kernel, without the goldfhe_bs_ prefix,
// e.g. "wide_8x8x16_k1_l3_t64_g2".
func (w WideShape) String() string { return strings.TrimPrefix(w.kernelName(), "goldfhe_bs_") }

func (w WideShape) kernelName() string {
	suffix := ""
	if w.grouped() {
		suffix = fmt.Sprintf("_g%d", w.G)
	}
	if w.Pre {
		suffix += "p"
	}
	if w.Split != 0 {
		return fmt.Sprintf("goldfhe_bs_split_%dx%dx%d_k%d_l%d_c%d%s", w.F1, w.F2, w.F3, w.K, w.L, w.Split, suffix)
	}
	kind, per := "wide", "t"
	if w.Cluster {
		kind = "cluster"
	}
	if w.Flat {
		per = "f"
	}
	return fmt.Sprintf("goldfhe_bs_%s_%dx%dx%d_k%d_l%d_%s%d%s", kind, w.F1, w.F2, w.F3, w.K, w.L, per, w.T, suffix)
}

// BlocksPerSample is the cluster size: k+1 for a cluster kernel, Split for
// a split kernel, else 1.
func (w WideShape) BlocksPerSample() int {
	switch {
	case w.Split != 0:
		return w.Split
	case w.Cluster:
		return w.K + 1
	}
	return 1
}

// Threads is the block size: T threads per TRGSW row of the block; for a
// split kernel (bss_block) T compute threads, for G = 3 then T combiners,
// which sum each step's terms into one key (bss_combiner), and for G = 2,
// 3 a producer warp, which fetches the key (bss_producer).
func (w WideShape) Threads() int {
	if w.Split != 0 {
		switch {
		case w.Pre:
			return w.T + 32
		case w.G == 3:
			return 2*w.T + 32
		case w.G == 2:
			return w.T + 32
		}
		return w.T
	}
	if w.Flat {
		return w.T
	}
	return w.T * (w.K + 1) * w.L / w.BlocksPerSample()
}

// wantsL1 reports whether the kernel runs with the smallest carveout that
// keeps its blocks per SM (prepareSharedKernel) rather than the largest:
// the wide kernels, whose multiply-accumulate reads the key through L1.
// Same run, H100, TFHELib128, engine, two rounds (kernels/NOTES.md session
// 10): 16,384 gates 30,774 and 30,769 -> 31,182 and 31,111 gates/s grouped
// by 2, 30,927 and 31,002 -> 31,263 and 31,272 by 3; 132 gates 5.77 and
// 5.74 -> 5.60 and 5.58 ms by 2. The split, cluster and fused kernels keep
// the largest: with every kernel on the smallest, one gate grouped by 3
// took 0.892 ms twice against 0.878 and 0.883.
func (w WideShape) wantsL1() bool { return w.Split == 0 && !w.Cluster }

// l1Threads is the block's threads when the kernel wantsL1, else 0.
func (w WideShape) l1Threads() int {
	if w.wantsL1() {
		return w.Threads()
	}
	return 0
}

// SharedBytes is the dynamic shared memory of one block (bsw_shared,
// bsc_shared, bss_shared): the digit rows, the accumulator, and for G = 2,
// 3 the staged psiPow table (2N + 16 words, bsg_psi_words).
func (w WideShape) SharedBytes() int {
	poly := (w.n() + w.F1*w.F2) * 8
	psi := 0
	if w.grouped() {
		psi = (2*w.n() + 16) * 8
	}
	if c := w.Split; c != 0 {
		// bss_shared: (k+1)(2l+1) padded rows of N/C positions (two
		// buffers of the forward stages' rows, one of the inverse
		// stage 3's columns), Z (k+1 columns of N/C), psiPow, the
		// twiddles (T_1 of the owned columns, T'_1 of the owned
		// positions, T_2 and T'_2), two key buffers (the N/C
		// positions of every row and column of a step's one, three or
		// seven TRGSW samples; one buffer where two do not fit, G = 3
		// only: bss_key_bufs), for G = 3 K' (one TRGSW's words: the
		// combiners' sum of the step's terms), ACC: the owned coefficients for a
		// grouped key, all of them otherwise, eight mbarriers (8 bytes
		// each: the two exchanges', each key buffer's full and empty,
		// K''s full and empty), then the amounts of a sample (16 bits
		// each, splitCTWords).
		k1, own := w.K+1, w.n()/c
		acc := k1 * w.n() * 4
		if w.grouped() {
			acc = k1 * own * 4
		}
		tw := 2*own + 2*w.F2*w.F3
		if w.Pre {
			// Two buffers of one TRGSW's words (the step's K'), no
			// psiPow, no combiners. Small enough for several blocks
			// per SM: a lone cluster still gets an SM per block (one
			// sample grouped by 3 took 0.841 ms with the block padded
			// to more than half an SM's shared memory and 0.843
			// without), and 16 to 30 samples run in one wave (30
			// samples 2.39 against 1.83 ms; H100, kernels/NOTES.md
			// session 9).
			key := 2 * k1 * w.L * k1 * own
			return (k1*(2*w.L+1)*(own+w.F1*w.F2/c)+k1*own+tw+key)*8 + acc + 8*8 + splitCTWords*2
		}
		size := func(bufs int) int {
			key := bufs * w.terms() * k1 * w.L * k1 * own
			if w.G == 3 {
				key += k1 * w.L * k1 * own // K', the combiners' sum of the step's terms
			}
			return (k1*(2*w.L+1)*(own+w.F1*w.F2/c)+k1*own+tw+key)*8 + psi + acc + 8*8 + splitCTWords*2
		}
		if w.G == 3 && size(2) > splitMaxShared {
			return size(1)
		}
		return size(2)
	}
	if w.Cluster {
		return (w.L+1)*poly + w.n()*4 + psi
	}
	if w.Flat {
		psi = 2 * w.n() * 8 // bsw_flat_shared: unpadded (bsg_swz)
	}
	return (w.K+1)*w.L*poly + (w.K+1)*w.n()*4 + psi
}

// TablesLen is the length of the tables operand: T_1, T'_1 (N words
// each), T_2, T'_2 (F2·F3 words each), and for G = 2, 3 psiPow (2N words,
// PsiPowers).
func (w WideShape) TablesLen() int {
	l := w.psiAt()
	if w.grouped() {
		l += 2 * w.n()
	}
	return l
}

// psiAt is where psiPow starts in the tables operand: after the twiddle
// tables T_1, T'_1, T_2, T'_2.
func (w WideShape) psiAt() int { return 2*w.n() + 2*w.F2*w.F3 }

// fits reports whether the kernel runs the shape sh: its N, k, l, and its
// grouping (G = g exactly for sh.Grouping g = 2, 3; G = 0 for 0 and 1);
// a split kernel, n <= splitCTWords too.
func (w WideShape) fits(sh BootstrapShape) bool {
	g := sh.Grouping
	if g < 2 {
		g = 0
	}
	return w.n() == sh.N() && w.K == sh.K && w.L == sh.BKLevels && w.G == g && (w.Split == 0 || sh.LWEDim <= splitCTWords)
}

// WideFor returns the wide kernels for sh that fit this device, most
// threads per polynomial first: those for a grouped key of factor g when
// sh.Grouping is g = 2 or 3, the plain ones otherwise.
func (b *BootstrapKernels) WideFor(sh BootstrapShape) []WideShape {
	var out []WideShape
	for _, ws := range wideShapes {
		if _, ok := b.wide[ws]; ok && ws.fits(sh) {
			out = append(out, ws)
		}
	}
	return out
}

// wideOperands are the checks of a wide kernel's operands (prepare): count
// samples in, the key, the tables of ws and count extracted samples out.
func wideOperands(sh BootstrapShape, ws WideShape, in *DeviceBuffer[uint32], bk, tables *DeviceBuffer[uint64], ext *DeviceBuffer[uint32], count int) [4]operandSpec {
	return [4]operandSpec{
		opnd("in", in, count*(sh.LWEDim+1), false),
		opnd("bk", bk, sh.BKLen(), false),
		opnd("tables", tables, ws.TablesLen(), false),
		opnd("ext", ext, count*(sh.ExtractedDim()+1), true),
	}
}

// PairedKey reports whether the kernel ws reads the bootstrapping key in
// the paired layout of PairKey: the flat kernels, whose multiply-accumulate
// loads a TRGSW row's two words of a position (k = 1) in one 16-byte
// access, half the load instructions (TFHELib128 grouped by 3 on an H100,
// 3,960 samples: 99.37-99.42 -> 97.88-97.91 ms; kernels/NOTES.md session
// 20).
func (w WideShape) PairedKey() bool { return w.Flat }

// PairKey returns key, an NTT-domain bootstrapping key of sh (sh.BKLen()
// words: for each TRGSW row, its k+1 columns of N words one after the
// other), in the paired layout: for each row, its k+1 words of position 0,
// then of position 1, and so on (word c of position i of a row at (k+1)·i
// + c of the row's (k+1)·N). The key of a kernel whose
// WideShape.PairedKey holds. It allocates the result; key is unchanged.
func PairKey(sh BootstrapShape, key []uint64) ([]uint64, error) {
	const op = "PairKey"
	if err := sh.Check(); err != nil {
		return nil, argErr(op, "%v", err)
	}
	if len(key) != sh.BKLen() {
		return nil, argErr(op, "key of %d words, want BKLen %d", len(key), sh.BKLen())
	}
	cols, n := sh.K+1, sh.N()
	out := make([]uint64, len(key))
	for row := 0; row < len(key); row += cols * n {
		src, dst := key[row:row+cols*n], out[row:row+cols*n]
		for c := range cols {
			for i, w := range src[c*n : (c+1)*n] {
				dst[i*cols+c] = w
			}
		}
	}
	return out, nil
}

// BlindRotateWide (goldfhe_bs_wide_<F1>x<F2>x<F3>_k<k>_l<l>_t<T>, or
// goldfhe_bs_cluster_… for a cluster shape) computes what BlindRotateFused
// computes, bit for bit, with one block of ws.Threads() threads per
// sample (a cluster of k+1 such blocks for a cluster shape). tables
// holds, one after another, T_1, T'_1, T_2 and T'_2 of the hybrid plan
// with factors (F1, F2, F3) (smallntt.Plan.StageTables()[0] and [1]), and
// for a grouped shape (ws.G = sh.Grouping = 2 or 3) then PsiPowers(N); bk
// is in the NTT-domain order every plan of size N shares, sh.BKSamples()
// TRGSW samples, and for a kernel whose ws.PairedKey() holds in the
// paired layout of that order (PairKey); it must start on a 16-byte
// boundary (checkKeyAlign).
//
// A grouped kernel of factor G runs ⌈n/G⌉ steps: step q, of the r =
// min(G, n − Gq) key bits Gq … Gq+r−1 with rotation amounts ā_{Gq+j},
// adds to ACC Σ_u (X^{e_u} − 1)·(BK_{(2^G−1)q+u−1} ⊡ ACC) for u = 1 …
// 2^r − 1 and e_u = Σ_{j: bit j of u} ā_{Gq+j} mod 2N (G = 2: e =
// (ā_{2q}, ā_{2q+1}, ā_{2q} + ā_{2q+1})), each external product on ACC
// unrotated, X^{e_u} − 1 applied in the NTT domain, terms with e_u = 0
// left out; a step whose amounts are all 0 is skipped. That is package
// tfhe's grouped blind rotation, bit for bit.
func (b *BootstrapKernels) BlindRotateWide(s *Stream, sh BootstrapShape, ws WideShape, in *DeviceBuffer[uint32], bk, tables *DeviceBuffer[uint64], ext *DeviceBuffer[uint32], mu uint32, count int) error {
	const op = "BootstrapKernels.BlindRotateWide"
	if ws.Pre {
		return argErr(op, "%v takes each step's K' from a scratch: BlindRotateSplit runs it", ws)
	}
	k := b.wide[ws]
	if k == nil || !ws.fits(sh) {
		return argErr(op, "no wide kernel %+v for N = %d, k = %d, l = %d, grouping %d on this device (have %v)", ws, sh.N(), sh.K, sh.BKLevels, sh.Grouping, wideShapes)
	}
	ops := wideOperands(sh, ws, in, bk, tables, ext, count)
	ptrs, h, err := b.prepare(op, s, sh, count, ops[:]...)
	if err != nil {
		return err
	}
	if err := checkKeyAlign(op, ptrs[1], ws); err != nil {
		return err
	}
	if count == 0 {
		return nil
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	copy(k.args.p[:], ptrs[:])
	k.args.u = [5]uint32{uint32(sh.LWEDim), uint32(sh.BKBaseLog), sh.BKOffset, mu, uint32(count)}
	bps := ws.BlocksPerSample()
	grid := dim3{uint32(bps * min(count, maxNTTGrid/bps)), 1, 1}
	return launchPinnedShared(k.f, grid, dim3{uint32(ws.Threads()), 1, 1}, uint32(ws.SharedBytes()), h, &k.args, unsafe.Pointer(&k.args.params[0]))
}

// checkKeyAlign refuses a bootstrapping key that does not start on a
// 16-byte boundary (a view at an odd word): every wide-family kernel reads
// it 16 bytes at a time (the flat kernel's paired loads, the split
// kernel's bulk and cp.async copies, the L2 prefetches of the N/8-thread
// and cluster kernels), and PTX requires those addresses aligned, or the
// copy faults and the context is lost.
func checkKeyAlign(op string, bk devicePtr, ws WideShape) error {
	if bk%16 != 0 {
		return argErr(op, "bk at %#x: %v reads the key 16 bytes at a time, from 16-byte boundaries (a view must start at an even word)", bk, ws)
	}
	return nil
}

// WideWave is how many samples one launch of ws runs side by side: the
// blocks of it the driver fits on one SM (at its launch's threads and
// shared memory) times the device's SMs. Every block of a wide kernel
// runs the whole blind rotation of its sample, so a launch of count
// samples takes about ceil(count / WideWave) times one block's time, and
// a last wave of a few samples costs much of a full one: the engine runs
// such a remainder on a smaller kernel. ws must be a kernel of one block
// per sample (not a cluster or split kernel, whose clusters the GPCs
// place).
func (b *BootstrapKernels) WideWave(ws WideShape) (int, error) {
	const op = "BootstrapKernels.WideWave"
	k := b.wide[ws]
	if k == nil || ws.BlocksPerSample() != 1 {
		return 0, argErr(op, "no wide kernel of one block per sample %+v on this device (have %v)", ws, wideShapes)
	}
	n, err := k.f.MaxActiveBlocksPerSM(ws.Threads(), ws.SharedBytes())
	if err != nil {
		return 0, err
	}
	return n * b.l.c.info.SMs, nil
}

// PsiPowers returns ψ^i mod p for i < 2n, ψ = smallntt.Psi(n) (the
// primitive 2n-th root of unity whose n/32-th power is 8): the psiPow table
// that the grouped wide and cluster kernels take after the twiddle tables
// (WideShape.TablesLen), from which they apply X^e − 1 in the NTT domain.
// Computed here because package kernels imports no other goldfhe package;
// a test compares it with smallntt. n must be a power of two in [32,
// 8192]; other values are a caller bug and panic.
func PsiPowers(n int) []uint64 {
	if n < 32 || n > 1<<13 || n&(n-1) != 0 {
		panic(fmt.Sprintf("kernels: PsiPowers(%d): n must be a power of two in [32, 8192]", n))
	}
	// As smallntt.Psi: r a primitive 2n-th root (7 generates Z_p^*);
	// r^(n/32) has order 64, so it is 8^j for an odd j, and ψ = r^(j^-1 mod
	// 64) has ψ^(n/32) = 8.
	r := glExp(7, (glP-1)/uint64(2*n))
	c := glExp(r, uint64(n/32))
	j := uint64(1)
	for glExp(8, j) != c {
		j += 2
	}
	m := uint64(1)
	for m*j%64 != 1 {
		m += 2
	}
	psi := glExp(r, m)
	out := make([]uint64, 2*n)
	out[0] = 1
	for i := 1; i < len(out); i++ {
		out[i] = glMul(out[i-1], psi)
	}
	return out
}

// glP is the Goldilocks prime 2^64 − 2^32 + 1.
const glP = 0xFFFFFFFF00000001

// glMul returns a·b mod p for a, b < p (then the high word is below p, as
// bits.Div64 requires).
func glMul(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	_, r := bits.Div64(hi, lo, glP)
	return r
}

// glExp returns a^e mod p for a < p.
func glExp(a, e uint64) uint64 {
	r := uint64(1)
	for ; e > 0; e >>= 1 {
		if e&1 == 1 {
			r = glMul(r, a)
		}
		a = glMul(a, a)
	}
	return r
}
