package kernels

import (
	"fmt"
	"sync"
	"unsafe"
)

// The NTT kernels (ntt.cuh, ntt_hybrid.cuh): typed wrappers, one per
// __global__ kernel family. All work in place on `batch` polynomials stored
// one after another in a device buffer, coefficients canonical (in [0, p)).
// Each is bit for bit the transform of a smallntt.Plan of the same size,
// variant and factorisation (see smallntt.Plan for the layout); the twiddle
// tables come from that plan (smallntt.Plan.StageTables, ButterflyTables).

// MaxNTTStages is the most stages a decomposed NTT may have (4096 = 4^6).
const MaxNTTStages = 6

// NTTStage is one stage of a decomposed N-point NTT (smallntt.StageTable):
// blocks of Size positions, F rows by T columns, and the stage's twiddle
// table by position inside a block (T_s for a forward launch, T'_s for an
// inverse one), nil when T == 1.
type NTTStage struct {
	F, T, Size int
	Twiddle    *DeviceBuffer[uint64]
}

// NTTDesc describes a decomposed N-point transform for NTTMatrix.
type NTTDesc struct {
	N          int
	Stages     []NTTStage
	Negacyclic bool // twisted first stage (smallntt Forward/Inverse) vs cyclic
	Merge      bool // the merging preprocessing (Matrix) or not (MatrixNoMerge)
}

// nttStageC and nttDescC mirror struct NTTStage and NTTPlanDesc of ntt.cuh
// (24 and 160 bytes; the kernel receives NTTPlanDesc by value).
type nttStageC struct {
	f, logf, t, size int32
	tw               devicePtr
}

type nttDescC struct {
	n, nstages, negacyclic, merge int32
	st                            [MaxNTTStages]nttStageC
}

// Compile-time layout checks against ntt.cuh.
var (
	_ [24 - unsafe.Sizeof(nttStageC{})]struct{}
	_ [unsafe.Sizeof(nttStageC{}) - 24]struct{}
	_ [160 - unsafe.Sizeof(nttDescC{})]struct{}
	_ [unsafe.Sizeof(nttDescC{}) - 160]struct{}
)

// hybridShapes are the (F1, F2) pairs with a goldfhe_ntt_hybrid kernel.
var hybridShapes = [][2]int{{16, 32}, {32, 16}, {32, 32}, {32, 64}, {64, 32}}

// hybridWarps is HYB_WARPS of ntt_hybrid.cuh: polynomials per block.
const hybridWarps = 4

// HybridShapes lists the factorisations (F1, F2) the hybrid kernels support.
func HybridShapes() [][2]int { return append([][2]int(nil), hybridShapes...) }

// nttArgs is one argument block: up to five kernel arguments, each stored
// in a field of its own C type.
type nttArgs struct {
	data, tab devicePtr
	batch, n  int32
	kind, mrg int32
	desc      nttDescC
	params    [5]unsafe.Pointer
}

type nttKernel struct {
	f    *Function
	mu   sync.Mutex
	args nttArgs
}

type nttKernels struct {
	matrixFwd, matrixInv       nttKernel
	butterflyFwd, butterflyInv nttKernel
	smallMatrix, smallBfly     nttKernel
	hybridFwd, hybridInv       map[[2]int]*nttKernel
}

func (k *nttKernels) load(get func(string) *Function) {
	k.matrixFwd.f = get("goldfhe_ntt_matrix_fwd")
	k.matrixInv.f = get("goldfhe_ntt_matrix_inv")
	k.butterflyFwd.f = get("goldfhe_ntt_butterfly_fwd")
	k.butterflyInv.f = get("goldfhe_ntt_butterfly_inv")
	k.smallMatrix.f = get("goldfhe_small_matrix")
	k.smallBfly.f = get("goldfhe_small_butterfly")
	k.hybridFwd = map[[2]int]*nttKernel{}
	k.hybridInv = map[[2]int]*nttKernel{}
	for _, s := range hybridShapes {
		k.hybridFwd[s] = &nttKernel{f: get(fmt.Sprintf("goldfhe_ntt_hybrid_fwd_%dx%d", s[0], s[1]))}
		k.hybridInv[s] = &nttKernel{f: get(fmt.Sprintf("goldfhe_ntt_hybrid_inv_%dx%d", s[0], s[1]))}
	}
}

func (k *nttKernels) all() []*Function {
	fs := []*Function{k.matrixFwd.f, k.matrixInv.f, k.butterflyFwd.f, k.butterflyInv.f, k.smallMatrix.f, k.smallBfly.f}
	for _, s := range hybridShapes {
		fs = append(fs, k.hybridFwd[s].f, k.hybridInv[s].f)
	}
	return fs
}

// init raises the dynamic shared memory limit of the kernels whose blocks
// may need more than the default 48 KiB: the matrix kernels for N = 4096
// (2·N·8 bytes) and the hybrid N = 2048 shapes. (The butterfly kernels
// need N·8 bytes, 32 KiB at their largest N.) Where the GPU's opt-in limit
// is lower, launches of those sizes report it.
func (k *nttKernels) init(c *Context) error {
	if need := matrixShared(maxMatrixN); need <= c.info.SharedPerBlockOptin {
		for _, kk := range []*nttKernel{&k.matrixFwd, &k.matrixInv} {
			if err := kk.f.SetMaxDynamicSharedMemory(need); err != nil {
				return err
			}
		}
	}
	for _, s := range hybridShapes {
		need := hybridShared(s[0], s[1])
		if need <= 48<<10 {
			continue
		}
		if need > c.info.SharedPerBlockOptin {
			continue // launches of this shape will report it
		}
		for _, kk := range []*nttKernel{k.hybridFwd[s], k.hybridInv[s]} {
			if err := kk.f.SetMaxDynamicSharedMemory(need); err != nil {
				return err
			}
		}
	}
	return nil
}

func hybridShared(f1, f2 int) int { return hybridWarps * f1 * (f2 + 1) * 8 }

// maxMatrixN is the largest N of NTTMatrix; its blocks hold two copies of a
// polynomial in shared memory.
const maxMatrixN = 4096

func matrixShared(n int) int { return 2 * n * 8 }

// maxNTTGrid bounds the grids of the grid-stride NTT kernels: enough blocks
// to fill any current GPU several times over.
const maxNTTGrid = 1 << 16

func validSmallN(n int) bool { return n >= 4 && n <= 64 && n&(n-1) == 0 }

func log2(n int) int32 {
	l := int32(0)
	for ; n > 1; n >>= 1 {
		l++
	}
	return l
}

// checkPolys checks a batch of polynomials of n coefficients in data.
func (l *Library) checkPolys(op string, data *DeviceBuffer[uint64], n, batch int) (devicePtr, error) {
	if data == nil {
		return 0, argErr(op, "data is nil")
	}
	if data.a.c != l.c {
		return 0, argErr(op, "data belongs to another Context")
	}
	if batch < 0 || batch > 1<<31-1 {
		return 0, argErr(op, "batch = %d, want [0, 2^31)", batch)
	}
	if extent(n, batch, n) < 0 || extent(n, batch, n) > data.Len() {
		return 0, argErr(op, "data holds %d elements, %d polynomials of %d need %d", data.Len(), batch, n, n*batch)
	}
	return data.ptr(op)
}

func (l *Library) checkTable(op, name string, t *DeviceBuffer[uint64], n int) (devicePtr, error) {
	if t == nil {
		return 0, argErr(op, "%s is nil", name)
	}
	if t.a.c != l.c {
		return 0, argErr(op, "%s belongs to another Context", name)
	}
	if t.Len() < n {
		return 0, argErr(op, "%s holds %d elements, want %d", name, t.Len(), n)
	}
	return t.ptr(op)
}

// prepare checks a batch of polynomials and the stream of an NTT launch.
func (l *Library) prepare(op string, s *Stream, data *DeviceBuffer[uint64], n, batch int) (devicePtr, uintptr, error) {
	dp, err := l.checkPolys(op, data, n, batch)
	if err != nil {
		return 0, 0, err
	}
	sh, err := streamHandle(op, l.c, s)
	return dp, sh, err
}

// launch fills k's argument block under its lock (fill returns the
// addresses of the arguments, in order, inside that block) and launches.
func (k *nttKernel) launch(grid, block dim3, shared int, sh uintptr, fill func(a *nttArgs) []unsafe.Pointer) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.args.params = [5]unsafe.Pointer{}
	copy(k.args.params[:], fill(&k.args))
	return launchPinnedShared(k.f, grid, block, uint32(shared), sh, &k.args, unsafe.Pointer(&k.args.params[0]))
}

// NTTMatrix runs the decomposed N-point NTT in the paper's matrix style
// (one thread per output, shifted terms summed in 192 bits, one reduction
// per output), forward or inverse, on batch polynomials in data, enqueued
// on s (nil: the default stream). For the inverse, each stage's Twiddle
// must be its T'_s table.
func (l *Library) NTTMatrix(s *Stream, data *DeviceBuffer[uint64], batch int, d NTTDesc, inverse bool) error {
	op := "Library.NTTMatrix"
	k := &l.ntt.matrixFwd
	if inverse {
		k = &l.ntt.matrixInv
	}
	desc, err := l.nttDesc(op, d)
	if err != nil {
		return err
	}
	dp, sh, err := l.prepare(op, s, data, d.N, batch)
	if err != nil || batch == 0 {
		return err
	}
	return k.launch(dim3{uint32(min(batch, maxNTTGrid)), 1, 1}, dim3{uint32(min(256, d.N)), 1, 1}, matrixShared(d.N), sh,
		func(a *nttArgs) []unsafe.Pointer {
			a.data, a.batch, a.desc = dp, int32(batch), desc
			return []unsafe.Pointer{unsafe.Pointer(&a.data), unsafe.Pointer(&a.batch), unsafe.Pointer(&a.desc)}
		})
}

func (l *Library) nttDesc(op string, d NTTDesc) (nttDescC, error) {
	var c nttDescC
	if d.N < 16 || d.N > maxMatrixN || d.N&(d.N-1) != 0 {
		return c, argErr(op, "N = %d, want a power of two in [16, %d]", d.N, maxMatrixN)
	}
	if len(d.Stages) == 0 || len(d.Stages) > MaxNTTStages {
		return c, argErr(op, "%d stages, want 1..%d", len(d.Stages), MaxNTTStages)
	}
	size := d.N
	for i, st := range d.Stages {
		if !validSmallN(st.F) || st.Size != size || st.F*st.T != size {
			return c, argErr(op, "stage %d: F=%d T=%d Size=%d do not continue a factorisation of %d", i+1, st.F, st.T, st.Size, d.N)
		}
		var tw devicePtr
		if st.T > 1 {
			p, err := l.checkTable(op, fmt.Sprintf("stage %d twiddle", i+1), st.Twiddle, size)
			if err != nil {
				return c, err
			}
			tw = p
		} else if st.Twiddle != nil {
			return c, argErr(op, "stage %d has T = 1 and so no twiddle table", i+1)
		}
		c.st[i] = nttStageC{f: int32(st.F), logf: log2(st.F), t: int32(st.T), size: int32(st.Size), tw: tw}
		size = st.T
	}
	if size != 1 {
		return c, argErr(op, "the stages' factors multiply to %d, not N = %d", d.N/size, d.N)
	}
	c.n, c.nstages = int32(d.N), int32(len(d.Stages))
	if d.Negacyclic {
		c.negacyclic = 1
	}
	if d.Merge {
		c.merge = 1
	}
	return c, nil
}

// maxButterflyN is the largest N of NTTButterfly: the largest size of
// smallntt, whose tables it takes (its block holds the polynomial in
// shared memory, within the default 48 KiB). It used to accept 8192, which
// no smallntt table exists for, and whose 64 KiB block never launched.
const maxButterflyN = 4096

// NTTButterfly runs the radix-2 baseline N-point negacyclic NTT on batch
// polynomials: forward with table = smallntt's forward butterfly table,
// inverse with its inverse table (which carries N^{-1}).
func (l *Library) NTTButterfly(s *Stream, data *DeviceBuffer[uint64], batch, n int, table *DeviceBuffer[uint64], inverse bool) error {
	op := "Library.NTTButterfly"
	k := &l.ntt.butterflyFwd
	if inverse {
		k = &l.ntt.butterflyInv
	}
	if n < 4 || n > maxButterflyN || n&(n-1) != 0 {
		return argErr(op, "N = %d, want a power of two in [4, %d]", n, maxButterflyN)
	}
	tp, err := l.checkTable(op, "table", table, n)
	if err != nil {
		return err
	}
	dp, sh, err := l.prepare(op, s, data, n, batch)
	if err != nil || batch == 0 {
		return err
	}
	return k.launch(dim3{uint32(min(batch, maxNTTGrid)), 1, 1}, dim3{uint32(min(n/2, 1024)), 1, 1}, n*8, sh,
		func(a *nttArgs) []unsafe.Pointer {
			a.data, a.batch, a.n, a.tab = dp, int32(batch), int32(n), tp
			return []unsafe.Pointer{unsafe.Pointer(&a.data), unsafe.Pointer(&a.batch), unsafe.Pointer(&a.n), unsafe.Pointer(&a.tab)}
		})
}

// NTTHybrid runs the tuned two-stage negacyclic NTT of shape f1×f2 (one of
// HybridShapes) on batch polynomials of N = f1·f2: forward with table =
// stage 1's T_1, inverse with its T'_1.
func (l *Library) NTTHybrid(s *Stream, data *DeviceBuffer[uint64], batch, f1, f2 int, table *DeviceBuffer[uint64], inverse bool) error {
	op := "Library.NTTHybrid"
	shape := [2]int{f1, f2}
	k := l.ntt.hybridFwd[shape]
	if inverse {
		k = l.ntt.hybridInv[shape]
	}
	if k == nil {
		return argErr(op, "no hybrid kernel for %d×%d (have %v)", f1, f2, hybridShapes)
	}
	n := f1 * f2
	tp, err := l.checkTable(op, "table", table, n)
	if err != nil {
		return err
	}
	shared := hybridShared(f1, f2)
	if shared > l.c.info.SharedPerBlockOptin {
		return argErr(op, "%d×%d needs %d B of shared memory per block, the device allows %d", f1, f2, shared, l.c.info.SharedPerBlockOptin)
	}
	dp, sh, err := l.prepare(op, s, data, n, batch)
	if err != nil || batch == 0 {
		return err
	}
	blocks := min((batch+hybridWarps-1)/hybridWarps, maxNTTGrid)
	return k.launch(dim3{uint32(blocks), 1, 1}, dim3{32 * hybridWarps, 1, 1}, shared, sh,
		func(a *nttArgs) []unsafe.Pointer {
			a.data, a.batch, a.tab = dp, int32(batch), tp
			return []unsafe.Pointer{unsafe.Pointer(&a.data), unsafe.Pointer(&a.batch), unsafe.Pointer(&a.tab)}
		})
}

// SmallKind selects a small-point transform (the values of smallntt.SmallKind).
type SmallKind int32

const (
	SmallCyclic         SmallKind = 1
	SmallTwisted        SmallKind = 2
	SmallCyclicInverse  SmallKind = 3
	SmallTwistedInverse SmallKind = 4
)

const smallThreads = 256

// SmallMatrix runs batch independent n-point small transforms of the given
// kind (natural order in and out, unscaled inverses, as smallntt.Small) in
// the matrix style, merged or not, in place.
func (l *Library) SmallMatrix(s *Stream, data *DeviceBuffer[uint64], batch, n int, kind SmallKind, merge bool) error {
	op := "Library.SmallMatrix"
	if !validSmallN(n) {
		return argErr(op, "n = %d, want 4, 8, 16, 32 or 64", n)
	}
	if kind < SmallCyclic || kind > SmallTwistedInverse {
		return argErr(op, "kind = %d", kind)
	}
	dp, sh, err := l.prepare(op, s, data, n, batch)
	if err != nil || batch == 0 {
		return err
	}
	per := smallThreads / n
	return l.ntt.smallMatrix.launch(dim3{uint32(min((batch+per-1)/per, maxNTTGrid)), 1, 1}, dim3{smallThreads, 1, 1}, 2*smallThreads*8, sh,
		func(a *nttArgs) []unsafe.Pointer {
			a.data, a.batch, a.n, a.kind, a.mrg = dp, int32(batch), int32(n), int32(kind), 0
			if merge {
				a.mrg = 1
			}
			return []unsafe.Pointer{unsafe.Pointer(&a.data), unsafe.Pointer(&a.batch), unsafe.Pointer(&a.n), unsafe.Pointer(&a.kind), unsafe.Pointer(&a.mrg)}
		})
}

// SmallButterfly runs batch independent n-point cyclic transforms (equal to
// SmallMatrix with SmallCyclic) as a radix-2 network with one general
// multiplication per butterfly, the paper's Table 1 baseline; table[m+g] =
// ω_n^{brv(g)·n/(2m)} for level m, group g (n entries).
func (l *Library) SmallButterfly(s *Stream, data *DeviceBuffer[uint64], batch, n int, table *DeviceBuffer[uint64]) error {
	op := "Library.SmallButterfly"
	if !validSmallN(n) {
		return argErr(op, "n = %d, want 4, 8, 16, 32 or 64", n)
	}
	tp, err := l.checkTable(op, "table", table, n)
	if err != nil {
		return err
	}
	dp, sh, err := l.prepare(op, s, data, n, batch)
	if err != nil || batch == 0 {
		return err
	}
	per := smallThreads / (n / 2)
	return l.ntt.smallBfly.launch(dim3{uint32(min((batch+per-1)/per, maxNTTGrid)), 1, 1}, dim3{smallThreads, 1, 1}, 2*smallThreads*8, sh,
		func(a *nttArgs) []unsafe.Pointer {
			a.data, a.batch, a.n, a.tab = dp, int32(batch), int32(n), tp
			return []unsafe.Pointer{unsafe.Pointer(&a.data), unsafe.Pointer(&a.batch), unsafe.Pointer(&a.n), unsafe.Pointer(&a.tab)}
		})
}
