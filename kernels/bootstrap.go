package kernels

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"unsafe"
)

// The gate-bootstrapping kernels (bootstrap.cuh): typed wrappers, one per
// __global__ kernel. They run the steps of TFHE gate bootstrapping (CGGI20
// Alg. 3; DESIGN.md §2 and §6) on a batch of `count` ciphertexts resident on
// the device; the NTTs between them are the NTT kernels' (NTTHybrid,
// NTTButterfly, NTTMatrix). Each computes exactly what package tfhe computes
// on the CPU, so a GPU engine built from them is bit-identical to the CPU
// engine. Torus values are uint32 (torus.Torus32's bits); Goldilocks values
// uint64. The layouts are documented in bootstrap.cuh.

// BootstrapShape holds the sizes of a parameter set that the bootstrapping
// kernels need (tfhe.Params in numbers: this package does not import tfhe).
type BootstrapShape struct {
	LWEDim    int    // n: dimension of the input and output TLWE samples
	LogN      int    // log2 N, N the TRLWE polynomial degree
	K         int    // k: the TRLWE (GLWE) dimension
	BKLevels  int    // l: gadget levels of the bootstrapping key
	BKBaseLog int    // β: bits per gadget level (Bg = 2^β)
	BKOffset  uint32 // the gadget offset Σ (Bg/2)·2^{32−iβ} + rounding bit (tfhe.Gadget.Offset)
	KSLevels  int    // t: key-switching digits
	KSBaseLog int    // bits per key-switching digit
	KSOffset  uint32 // the key-switching gadget offset

	// Grouping is the bootstrapping key's grouping factor: 0 or 1, one
	// TRGSW sample per key bit and one CMux step each; g = 2 or 3, key bits
	// taken g at a time with 2^g − 1 TRGSW samples per group
	// (bootstrapping-key unrolling, bootstrap_step.cuh), which only the
	// wide, cluster and split kernels with WideShape.G = g run.
	Grouping int
}

// N returns the polynomial degree 2^LogN.
func (s BootstrapShape) N() int { return 1 << s.LogN }

// ExtractedDim returns k·N, the dimension of extracted samples.
func (s BootstrapShape) ExtractedDim() int { return s.K << s.LogN }

// Rows returns (k+1)·l, the rows of a TRGSW sample.
func (s BootstrapShape) Rows() int { return (s.K + 1) * s.BKLevels }

// BKSamples returns the number of TRGSW samples of the bootstrapping key:
// n, or with Grouping g ≥ 2 2^g − 1 per full group of g key bits and
// 2^r − 1 for a last group of r = n mod g bits (Grouping 2: 3·(n/2) + n%2;
// 3: 7·(n/3) + 0, 1 or 3).
func (s BootstrapShape) BKSamples() int {
	g := s.Grouping
	if g < 2 {
		return s.LWEDim
	}
	return (s.LWEDim/g)*(1<<g-1) + (1<<(s.LWEDim%g) - 1)
}

// grouped reports whether the key is grouped (Grouping 2 or 3).
func (s BootstrapShape) grouped() bool { return s.Grouping > 1 }

// BKLen returns the number of uint64 of the NTT-domain bootstrapping key:
// BKSamples() × (k+1)·l × (k+1) × N.
func (s BootstrapShape) BKLen() int { return s.BKSamples() * s.Rows() * (s.K + 1) << s.LogN }

// KSTableLen returns the number of uint32 of the key-switching table:
// k·N × t × 2^basebit/2 × (n+1).
func (s BootstrapShape) KSTableLen() int {
	return s.ExtractedDim() * s.KSLevels * (1 << s.KSBaseLog / 2) * (s.LWEDim + 1)
}

// Check reports whether the shape is one the kernels handle: the ranges of
// tfhe.NewParams (N = 2^LogN with 2 ≤ LogN ≤ 13, k ≤ 8, l·β ≤ 32, t·basebit ≤
// 31, basebit ≤ 8), Grouping 0 to 3, and key tables of at most 2^40 words
// (2^31−1 on a 32-bit platform).
func (s BootstrapShape) Check() error {
	switch {
	case s.Grouping < 0 || s.Grouping > 3:
		return argErr("BootstrapShape", "grouping factor %d, want 0, 1, 2 or 3", s.Grouping)
	case s.LWEDim < 1 || s.LWEDim > 1<<16:
		return argErr("BootstrapShape", "n = %d, want [1, 65536]", s.LWEDim)
	case s.LogN < 2 || s.LogN > 13:
		return argErr("BootstrapShape", "log2 N = %d, want [2, 13]", s.LogN)
	case s.K < 1 || s.K > 8:
		return argErr("BootstrapShape", "k = %d, want [1, 8]", s.K)
	case s.BKLevels < 1 || s.BKBaseLog < 1 || s.BKLevels*s.BKBaseLog > 32:
		return argErr("BootstrapShape", "l = %d, β = %d: want l, β ≥ 1 and l·β ≤ 32", s.BKLevels, s.BKBaseLog)
	case s.KSLevels < 1 || s.KSBaseLog < 1 || s.KSBaseLog > 8 || s.KSLevels*s.KSBaseLog > 31:
		// Bit 0 of each input word picks its digits' sign (bs_ks_sign),
		// which balances them only if no digit reads it.
		return argErr("BootstrapShape", "t = %d, basebit = %d: want t ≥ 1, 1 ≤ basebit ≤ 8, t·basebit ≤ 31", s.KSLevels, s.KSBaseLog)
	}
	// In int64, so that a 32-bit int's overflow cannot pass a shape.
	bk := int64(s.BKSamples()) * int64(s.Rows()) * int64(s.K+1) << s.LogN
	ks := int64(s.ExtractedDim()) * int64(s.KSLevels) * int64(1<<s.KSBaseLog/2) * int64(s.LWEDim+1)
	if bk > maxTableLen || ks > maxTableLen {
		return argErr("BootstrapShape", "key tables of %d and %d words, want ≤ %d", bk, ks, int64(maxTableLen))
	}
	return nil
}

// maxTableLen bounds a shape's key tables: 2^40 words, or what an int can
// count on a 32-bit platform.
const maxTableLen = min(1<<40, math.MaxInt)

// BootstrapKernels are the kernels of bootstrap.cuh loaded from a Library.
// Like the Library, they are safe for concurrent use; each launch fills its
// kernel's argument block under that kernel's lock.
type BootstrapKernels struct {
	l                                      *Library
	init, rotdec, mac, add, extract, keysw bsKernel
	// keyswT are the tiled key-switching kernels goldfhe_bs_keyswitch_s16_b<BB>
	// for basebit 2 and 3.
	keyswT [2]bsKernel
	// keyswM are the tensor-core key-switching kernels
	// goldfhe_bs_keyswitch_mma_b<BB>, basebit 2 (t ≤ 8) and 3 (any t), each
	// f nil in a fatbin built before it (ksMMANames).
	keyswM [2]bsKernel
	// keyswP is goldfhe_bs_keyswitch_packed_b2 (KeySwitchPacked), f nil in a
	// fatbin built before it.
	keyswP bsKernel
	fused  map[FusedShape]*fusedKernel // bootstrap_fused.cuh, read-only after lookup
	wide   map[WideShape]*fusedKernel
	// combine are the combine kernels of the Pre split kernels in wide;
	// pre is their launches' argument blocks (one pass at a time).
	combine map[combineShape]*fusedKernel
	pre     *preLaunch
}

// bsArgs is one argument block: up to four device pointers and ten scalars,
// each in a field of its own C type; params lists the kernel's arguments in
// order (set once by BootstrapKernels).
type bsArgs struct {
	p      [4]devicePtr
	u      [9]uint32
	total  uint64
	params [13]unsafe.Pointer
}

type bsKernel struct {
	f    *Function
	mu   sync.Mutex
	args bsArgs
}

// bind sets the parameter list: np pointers then nu uint32 scalars, and the
// uint64 total last if withTotal.
func (k *bsKernel) bind(np, nu int, withTotal bool) {
	i := 0
	for j := 0; j < np; j++ {
		k.args.params[i] = unsafe.Pointer(&k.args.p[j])
		i++
	}
	for j := 0; j < nu; j++ {
		k.args.params[i] = unsafe.Pointer(&k.args.u[j])
		i++
	}
	if withTotal {
		k.args.params[i] = unsafe.Pointer(&k.args.total)
	}
}

// Bootstrap kernel names, as in bootstrap.cuh.
var bootstrapKernelNames = []string{
	"goldfhe_bs_init", "goldfhe_bs_rotate_decompose", "goldfhe_bs_mac",
	"goldfhe_bs_add_centered", "goldfhe_bs_extract", "goldfhe_bs_keyswitch",
	"goldfhe_bs_keyswitch_s16_b2", "goldfhe_bs_keyswitch_s16_b3",
}

// BootstrapKernels looks up the bootstrapping kernels in the library's
// fatbin. A fatbin built before bootstrap.cuh existed has none: the error
// then names the missing kernels and says to rebuild it.
func (l *Library) BootstrapKernels() (*BootstrapKernels, error) {
	b := &BootstrapKernels{l: l}
	ks := []*bsKernel{&b.init, &b.rotdec, &b.mac, &b.add, &b.extract, &b.keysw,
		&b.keyswT[0], &b.keyswT[1]}
	var errs []error
	for i, name := range bootstrapKernelNames {
		f, err := l.m.Function(name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		ks[i].f = f
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("%w (in %s: rebuild it from these sources)", err, l.source)
	}
	// Argument lists, in the order of bootstrap.cuh.
	b.init.bind(3, 5, false)   // in, abar, acc; n, logN, k, mu, count
	b.rotdec.bind(3, 8, false) // acc, abar, dec; iter, n, logN, k, l, beta, offset, count
	b.mac.bind(3, 5, false)    // dec, bk, prod; iter, logN, k, l, count
	b.add.bind(2, 0, true)     // acc, prod; total
	b.extract.bind(2, 3, false)
	b.keysw.bind(3, 8, false) // out, in, table; n, kn, t, basebit, offset, count, spb, cpt
	for i := range b.keyswT {
		b.keyswT[i].bind(3, 5, false) // out, in, table; n, kn, t, offset, count
	}
	// The tensor-core key switching kernels are optional (a fatbin without
	// them runs the others); any other failure of the lookup is an error,
	// not a kernel silently left out.
	for i, name := range ksMMANames {
		f, err := l.m.Function(name)
		if err == nil {
			b.keyswM[i].f = f
			b.keyswM[i].bind(3, 5, false) // out, in, table; n, kn, t, offset, count
		} else if !notFound(err) {
			return nil, err
		}
	}
	if f, err := l.m.Function(ksPackedName); err == nil {
		b.keyswP.f = f
		b.keyswP.bind(3, 5, false) // out, in, packed; n, kn, t, offset, count
	} else if !notFound(err) {
		return nil, err
	}
	if err := b.lookupFused(); err != nil {
		return nil, err
	}
	return b, nil
}

// Functions returns the kernels, for their Attributes.
func (b *BootstrapKernels) Functions() []*Function {
	fs := []*Function{b.init.f, b.rotdec.f, b.mac.f, b.add.f, b.extract.f, b.keysw.f,
		b.keyswT[0].f, b.keyswT[1].f}
	for i := range b.keyswM {
		if f := b.keyswM[i].f; f != nil {
			fs = append(fs, f)
		}
	}
	if b.keyswP.f != nil {
		fs = append(fs, b.keyswP.f)
	}
	return fs
}

// ksMMANames are the tensor-core key-switching kernels of basebit 2 and 3
// (bootstrap.cuh), optional: a fatbin built before one lacks it, and
// KeySwitch then takes another kernel.
var ksMMANames = [2]string{"goldfhe_bs_keyswitch_mma_b2", "goldfhe_bs_keyswitch_mma_b3"}

// ksMMATakes is whether a tensor-core kernel exists for the key shape:
// basebit 2 with t ≤ 8 (four levels a lane, two lanes a coordinate), or
// basebit 3 with kn·t below 2^23 (its 32-bit byte sums stay below 2^31).
func ksMMATakes(basebit, t, kn int) bool {
	return (basebit == 2 && t <= 8) || (basebit == 3 && kn*t < 1<<23)
}

// bsThreads is the block size of the flat bootstrapping kernels; key
// switching runs blocks of ksTX threads of ksCPT output coordinates each ×
// ksTY warps, each warp one sample's share of the input coordinates
// (KS_TX, KS_TY, KS_CPT in bootstrap.cuh).
const (
	bsThreads = 256
	ksTX      = 32
	ksTY      = 8
	ksCPT     = 4 // output coordinates per thread, at most (KS_CPT)
	kstW      = 4 // warps per block of the tiled kernels (KST_W)
)

// flatGrid returns the grid of a flat kernel over total threads.
func flatGrid(total int) dim3 {
	return dim3{uint32(min((total+bsThreads-1)/bsThreads, maxNTTGrid)), 1, 1}
}

// operand is one buffer argument to check: its name, its pointer, its
// length in bytes, the bytes the launch uses, and whether it is written.
type operand struct {
	name   string
	p      devicePtr
	used   uint64
	output bool
}

// bsOperand checks that buf holds at least need elements and is on l's
// device, and returns it as an operand.
func bsOperand[T Elem](l *Library, op, name string, buf *DeviceBuffer[T], need int, output bool) (operand, error) {
	if buf == nil {
		return operand{}, argErr(op, "%s is nil", name)
	}
	if buf.a.c != l.c {
		return operand{}, argErr(op, "%s belongs to another Context", name)
	}
	if need < 0 || buf.Len() < need {
		return operand{}, argErr(op, "%s holds %d elements, want %d", name, buf.Len(), need)
	}
	p, err := buf.ptr(op)
	if err != nil {
		return operand{}, err
	}
	return operand{name: name, p: p, used: uint64(need) * uint64(sizeOf[T]()), output: output}, nil
}

// checkOperands fails when an output overlaps any other operand (the
// kernels read and write with __restrict__ pointers: no aliasing at all).
func checkOperands(op string, ops []operand) error {
	for i, a := range ops {
		if !a.output || a.used == 0 {
			continue
		}
		for j, b := range ops {
			if i == j || b.used == 0 {
				continue
			}
			if uint64(a.p) < uint64(b.p)+b.used && uint64(b.p) < uint64(a.p)+a.used {
				return argErr(op, "%s overlaps %s", a.name, b.name)
			}
		}
	}
	return nil
}

// maxOperands is the most device-buffer operands a bootstrapping kernel
// takes (the split kernel with K' formed ahead: in, key, tables, ext, K',
// flags).
const maxOperands = 6

// prepare checks a launch's shape, count and operands (bsOperand, then
// that no output overlaps another operand) and returns the operands'
// device pointers, in order, and the stream's handle. It allocates
// nothing: the operands come as values (opnd) and the pointers as an
// array, so that a launch costs only the driver calls' allocations
// (package doc).
func (b *BootstrapKernels) prepare(op string, s *Stream, sh BootstrapShape, count int, ops ...operandSpec) (ptrs [maxOperands]devicePtr, h uintptr, err error) {
	if err := sh.Check(); err != nil {
		return ptrs, 0, fmt.Errorf("%w (%s)", err, op)
	}
	if count < 0 || count > 1<<24 {
		return ptrs, 0, argErr(op, "count = %d, want [0, 2^24]", count)
	}
	var list [maxOperands]operand
	if err := checkSpecs(b.l, op, ops, list[:]); err != nil {
		return ptrs, 0, err
	}
	if h, err = streamHandle(op, b.l.c, s); err != nil {
		return ptrs, 0, err
	}
	for i := range ops {
		ptrs[i] = list[i].p
	}
	return ptrs, h, nil
}

// checkSpecs checks each operand of ops into list (at least len(ops)
// long), the first failure returned, then that no output overlaps
// another operand (checkOperands).
func checkSpecs(l *Library, op string, ops []operandSpec, list []operand) error {
	if len(ops) > len(list) {
		return fmt.Errorf("kernels: %s: %d operands, more than the %d a kernel takes", op, len(ops), len(list))
	}
	for i, o := range ops {
		var err error
		if list[i], err = o.buf.operand(l, op, o.name, o.need, o.output); err != nil {
			return err
		}
	}
	return checkOperands(op, list[:len(ops)])
}

// plainKey fails for a grouped bootstrapping key (sh.Grouping 2 or 3),
// which only the wide, cluster and split kernels with WideShape.G =
// sh.Grouping take: a kernel that runs one CMux step per TRGSW sample
// would read it wrongly.
func plainKey(op string, sh BootstrapShape) error {
	if sh.grouped() {
		return argErr(op, "grouped bootstrapping keys need a wide or cluster kernel (BlindRotateWide with a WideShape of G = %d)", sh.Grouping)
	}
	return nil
}

func opnd[T Elem](name string, buf *DeviceBuffer[T], need int, output bool) operandSpec {
	return operandSpec{name: name, buf: buf, need: need, output: output}
}

// operandSpec is one operand of a bootstrapping kernel as prepare checks
// it (bsOperand): the buffer, at least need elements of it, and whether
// the kernel writes it.
type operandSpec struct {
	name   string
	buf    operandBuf
	need   int
	output bool
}

// operandBuf is a *DeviceBuffer of any element type (a nil one included),
// checked as an operand by bsOperand.
type operandBuf interface {
	operand(l *Library, op, name string, need int, output bool) (operand, error)
}

func (b *DeviceBuffer[T]) operand(l *Library, op, name string, need int, output bool) (operand, error) {
	return bsOperand(l, op, name, b, need, output)
}

// Init (goldfhe_bs_init) starts blind rotation for count TLWE samples of
// dimension n stored one after another in in ((n+1) words each): abar gets
// the n·count rotation amounts ModSwitchPow2(a_i, log2 2N) and acc the
// count accumulators (0, …, 0, X^{−b̄}·mu·(1 + X + … + X^{N−1})),
// (k+1)·N words each.
func (b *BootstrapKernels) Init(s *Stream, sh BootstrapShape, in, abar, acc *DeviceBuffer[uint32], mu uint32, count int) error {
	const op = "BootstrapKernels.Init"
	n, accLen := sh.LWEDim, (sh.K+1)<<sh.LogN
	ptrs, h, err := b.prepare(op, s, sh, count,
		opnd("in", in, count*(n+1), false),
		opnd("abar", abar, count*n, true),
		opnd("acc", acc, count*accLen, true))
	if err != nil || count == 0 {
		return err
	}
	k := &b.init
	k.mu.Lock()
	defer k.mu.Unlock()
	copy(k.args.p[:], ptrs[:])
	k.args.u = [9]uint32{uint32(n), uint32(sh.LogN), uint32(sh.K), mu, uint32(count)}
	return launchPinned(k.f, flatGrid(count*(n+accLen)), dim3{bsThreads, 1, 1}, h, &k.args, unsafe.Pointer(&k.args.params[0]))
}

// RotateDecompose (goldfhe_bs_rotate_decompose) writes to dec, for each of
// the count accumulators and each column c, the l gadget digits (as
// Goldilocks elements, row c·l+i) of X^{ā}·acc_c − acc_c, with ā =
// abar[s·n+iter]: the input of step iter of blind rotation, (k+1)·l·N
// words per sample.
func (b *BootstrapKernels) RotateDecompose(s *Stream, sh BootstrapShape, acc, abar *DeviceBuffer[uint32], dec *DeviceBuffer[uint64], iter, count int) error {
	const op = "BootstrapKernels.RotateDecompose"
	n, N := sh.LWEDim, sh.N()
	if iter < 0 || iter >= n {
		return argErr(op, "iter = %d, want [0, %d)", iter, n)
	}
	ptrs, h, err := b.prepare(op, s, sh, count,
		opnd("acc", acc, count*(sh.K+1)*N, false),
		opnd("abar", abar, count*n, false),
		opnd("dec", dec, count*sh.Rows()*N, true))
	if err != nil || count == 0 {
		return err
	}
	k := &b.rotdec
	k.mu.Lock()
	defer k.mu.Unlock()
	copy(k.args.p[:], ptrs[:])
	k.args.u = [9]uint32{uint32(iter), uint32(n), uint32(sh.LogN), uint32(sh.K), uint32(sh.BKLevels), uint32(sh.BKBaseLog), sh.BKOffset, uint32(count)}
	return launchPinned(k.f, flatGrid(count*(sh.K+1)*N), dim3{bsThreads, 1, 1}, h, &k.args, unsafe.Pointer(&k.args.params[0]))
}

// MAC (goldfhe_bs_mac) sets prod[s][c] = Σ_r dec[s][r]·BK_iter[r][c]
// pointwise mod p, for the count samples' (k+1)·l NTT-domain digit rows
// and bk, the whole NTT-domain bootstrapping key (sh.BKLen() words, the
// layout of tfhe.NTTBootstrappingKey.Data). dec and bk canonical; prod
// canonical, (k+1)·N words per sample. A grouped key (sh.Grouping 2 or 3)
// is an error: only the wide, cluster and split kernels run it.
func (b *BootstrapKernels) MAC(s *Stream, sh BootstrapShape, dec, bk, prod *DeviceBuffer[uint64], iter, count int) error {
	const op = "BootstrapKernels.MAC"
	if err := plainKey(op, sh); err != nil {
		return err
	}
	N := sh.N()
	if iter < 0 || iter >= sh.LWEDim {
		return argErr(op, "iter = %d, want [0, %d)", iter, sh.LWEDim)
	}
	ptrs, h, err := b.prepare(op, s, sh, count,
		opnd("dec", dec, count*sh.Rows()*N, false),
		opnd("bk", bk, sh.BKLen(), false),
		opnd("prod", prod, count*(sh.K+1)*N, true))
	if err != nil || count == 0 {
		return err
	}
	k := &b.mac
	k.mu.Lock()
	defer k.mu.Unlock()
	copy(k.args.p[:], ptrs[:])
	k.args.u = [9]uint32{uint32(iter), uint32(sh.LogN), uint32(sh.K), uint32(sh.BKLevels), uint32(count)}
	return launchPinned(k.f, flatGrid(count*N), dim3{bsThreads, 1, 1}, h, &k.args, unsafe.Pointer(&k.args.params[0]))
}

// AddCentered (goldfhe_bs_add_centered) adds to each of acc's first total
// words the centred representative, mod 2^32, of the same word of prod
// (smallntt.ToInt64Centered then truncation): the accumulation of an
// inverse-transformed external product into a torus accumulator.
func (b *BootstrapKernels) AddCentered(s *Stream, acc *DeviceBuffer[uint32], prod *DeviceBuffer[uint64], total int) error {
	const op = "BootstrapKernels.AddCentered"
	l := b.l
	if total < 0 {
		return argErr(op, "total = %d", total)
	}
	var list [2]operand
	if err := checkSpecs(l, op, []operandSpec{opnd("acc", acc, total, true), opnd("prod", prod, total, false)}, list[:]); err != nil {
		return err
	}
	h, err := streamHandle(op, l.c, s)
	if err != nil || total == 0 {
		return err
	}
	k := &b.add
	k.mu.Lock()
	defer k.mu.Unlock()
	k.args.p[0], k.args.p[1], k.args.total = list[0].p, list[1].p, uint64(total)
	return launchPinned(k.f, flatGrid(total), dim3{bsThreads, 1, 1}, h, &k.args, unsafe.Pointer(&k.args.params[0]))
}

// Extract (goldfhe_bs_extract) writes to ext the sample extraction of
// coefficient 0 of each of the count accumulators: TLWE samples of
// dimension k·N, (k·N+1) words each.
func (b *BootstrapKernels) Extract(s *Stream, sh BootstrapShape, acc, ext *DeviceBuffer[uint32], count int) error {
	const op = "BootstrapKernels.Extract"
	kn := sh.ExtractedDim()
	ptrs, h, err := b.prepare(op, s, sh, count,
		opnd("acc", acc, count*(sh.K+1)*sh.N(), false),
		opnd("ext", ext, count*(kn+1), true))
	if err != nil || count == 0 {
		return err
	}
	k := &b.extract
	k.mu.Lock()
	defer k.mu.Unlock()
	copy(k.args.p[:], ptrs[:])
	k.args.u = [9]uint32{uint32(sh.LogN), uint32(sh.K), uint32(count)}
	return launchPinned(k.f, flatGrid(count*(kn+1)), dim3{bsThreads, 1, 1}, h, &k.args, unsafe.Pointer(&k.args.params[0]))
}

// KeySwitch (goldfhe_bs_keyswitch) switches count TLWE samples of dimension
// k·N in in ((k·N+1) words each) to dimension n in out ((n+1) words each)
// with table, the key-switching table (sh.KSTableLen() words, the layout of
// tfhe.KeySwitchingKey).
func (b *BootstrapKernels) KeySwitch(s *Stream, sh BootstrapShape, out, in, table *DeviceBuffer[uint32], count int) error {
	const op = "BootstrapKernels.KeySwitch"
	l := b.l
	n, kn := sh.LWEDim, sh.ExtractedDim()
	ptrs, h, err := b.prepare(op, s, sh, count,
		opnd("out", out, count*(n+1), true),
		opnd("in", in, count*(kn+1), false),
		opnd("table", table, sh.KSTableLen(), false))
	if err != nil || count == 0 {
		return err
	}
	sms := l.c.info.SMs
	st := ksTileFor(count, sms, sh.KSBaseLog)
	if st == ksMMA && (!ksMMATakes(sh.KSBaseLog, sh.KSLevels, kn) || b.keyswM[sh.KSBaseLog-2].f == nil) {
		st = ksTileCUDA(count, sms, sh.KSBaseLog) // a shape no kernel takes, or a fatbin without the kernel
	}
	// The kernel, its arguments after the pointers, its grid and block, and
	// its chunk policy (grid.z) with the input coordinates it splits.
	var (
		k      *bsKernel
		grid   dim3
		block  dim3
		chunks func(blocks, kn, sms int) int
	)
	split := kn
	u := [9]uint32{uint32(n), uint32(kn), uint32(sh.KSLevels), sh.KSOffset, uint32(count)}
	switch {
	case st == ksMMA:
		k, block, chunks = &b.keyswM[sh.KSBaseLog-2], dim3{ksmWarps * 32, 1, 1}, ksMMAChunksFor
		grid = dim3{uint32((n + ksmWords) / ksmWords), uint32(min((count+ksmSamples-1)/ksmSamples, maxGridY)), 1}
		if sh.KSBaseLog == 3 {
			// The chunks split the k-steps: basebit 2's (kn+1)/2
			// coordinate pairs, basebit 3's kn·t/8 (coordinate, level)
			// octets, which the policy counts as two coordinates each.
			split = 2 * ((kn*sh.KSLevels + 7) / 8)
		}
	case st != 0:
		k, block, chunks = &b.keyswT[sh.KSBaseLog-2], dim3{kstW * 32, 1, 1}, ksTiledChunksFor
		grid = dim3{uint32((n + kstW*32) / (kstW * 32)), uint32(min((count+st-1)/st, maxGridY)), 1}
	default:
		spb, cpt := ksSamplesPerBlock(count, sms), ksCoordsPerThread(count, sms)
		u = [9]uint32{uint32(n), uint32(kn), uint32(sh.KSLevels), uint32(sh.KSBaseLog), sh.KSOffset, uint32(count), uint32(spb), uint32(cpt)}
		k, block, chunks = &b.keysw, dim3{ksTX, ksTY, 1}, ksChunksFor
		grid = dim3{uint32((n + ksTX*cpt) / (ksTX * cpt)), uint32(min((count+spb-1)/spb, maxGridY)), 1}
	}
	grid.z = uint32(chunks(int(grid.x)*int(grid.y), split, sms))
	k.mu.Lock()
	defer k.mu.Unlock()
	copy(k.args.p[:], ptrs[:])
	k.args.u = u
	if grid.z > 1 {
		// The chunks add into out with atomicAdd: it starts at zero.
		if err := memsetD32Async(l.c, ptrs[0], 0, count*(n+1), h); err != nil {
			return err
		}
	}
	return launchPinned(k.f, grid, block, h, &k.args, unsafe.Pointer(&k.args.params[0]))
}

// ksTile is the key-switching kernel for count samples: ksMMA for the
// tensor-core goldfhe_bs_keyswitch_mma_b<BB>, else the samples per tile of
// the tiled kernels (goldfhe_bs_keyswitch_s16_b<BB>: 16), or 0 for the
// untiled goldfhe_bs_keyswitch (ksTileCUDA). Tiles of 4 were measured
// and never won. On an H200 (TFHELib128, kernels BenchmarkKeySwitch, µs
// per sample, untiled / tiles of 16 / of 4): 16,384 samples 2.21 / 1.79
// / 3.07, 1,024: 2.40 / 2.22 / 3.38, 132: 2.48 / 2.52 / 4.46, one: 26 / 72
// / 48. Below a thousand samples the time is the walk of each sample's
// table rows, which tiling does not shorten; with many samples per SM,
// each word loaded serving 16 samples pays.
//
// Basebit 2 (TFHELib128) and 3 (TFHErsDefault) take the tensor-core
// kernels from ksMMAMin samples on. For basebit 3 on an H200 (µs per
// call, untiled / tiles of 16 / tensor cores; session 16): 16,384 samples
// 57,828 / 55,784 / 27,158, 1,024: 3,739 / 4,159 / 1,725, 132: 490 / 649
// / 355, 66: 266 / 359 / 218, 16: 244 / 126 / 183. For basebit 2 on an
// H100 (kernels BenchmarkKeySwitch, µs per sample,
// untiled / tiles of 16 / tensor cores, the last with 32 input-coordinate
// chunks where ksMMAChunks gives about that): 16,384 samples 2.24 / 1.79
// / 0.62, 4,224: 2.41 / 1.93 / 0.73, 1,024: 2.41 / 2.21 / 1.03, 264: 2.39
// / 2.38 / 0.90, 132: 2.47 / 2.49 / 1.19, 66: 2.65 / 2.78 / 1.53, 16: 10.3
// / 5.3 / 6.1, one: 23.6 / 78 / 84 (kernels/NOTES.md, session 12).
func ksTile(count, sms, basebit int) int {
	if (basebit == 2 || basebit == 3) && count >= ksMMAMin {
		return ksMMA
	}
	return ksTileCUDA(count, sms, basebit)
}

// ksMMAMin is the smallest batch that takes the tensor-core kernel.
const ksMMAMin = 64

// ksTileCUDA is the choice between the kernels without tensor cores, for
// basebit 2 and 3: tiles of 16 from 1,024 samples on, and from ksTiledFew
// samples up to the batches where the untiled kernel gives each thread a
// single output coordinate (ksCoordsPerThread): there its warps walk
// their table rows one after another, and one tile of 16 samples costs
// about what one sample does. On an H200 (kernels BenchmarkKeySwitch, µs
// per call, untiled / tiles of 16; session 16), TFHELib128: 1 sample 19 /
// 67, 4: 52 / 66, 8: 91 / 66, 16: 163 / 68, 32: 318 / 83, 48 (four
// coordinates per thread): 127 / 124, 66: 170 / 183; TFHErsDefault: 1: 24
// / 110, 4: 76 / 113, 8: 131 / 117, 16: 243 / 121, 32: 493 / 150, 48: 188
// / 217.
func ksTileCUDA(count, sms, basebit int) int {
	if basebit != 2 && basebit != 3 {
		return 0
	}
	if count >= 1024 || count >= ksTiledFew && ksCoordsPerThread(count, sms) == 1 {
		return ksTile16
	}
	return 0
}

// ksTiledFew is the smallest batch that ksTileCUDA gives the tiled kernel.
const ksTiledFew = 8

// The key-switching kernels ksTile chooses among: 0 the untiled
// goldfhe_bs_keyswitch, ksTile16 the tiled goldfhe_bs_keyswitch_s16_b<BB>,
// ksMMA the tensor-core goldfhe_bs_keyswitch_mma_b<BB> (basebit 2 with
// t ≤ 8 and basebit 3: ksMMATakes; for other shapes, or with a fatbin
// without the kernel, KeySwitch takes ksTileCUDA's choice).
const (
	ksTile16 = 16
	ksMMA    = -1
)

// The tensor-core kernel's tile (KSM_WARPS, KSM_Q in bootstrap.cuh): blocks
// of ksmWarps warps, 16 samples each, over ksmWords output coordinates.
const (
	ksmWarps   = 8
	ksmSamples = 16 * ksmWarps
	ksmWords   = 8 * 4
)

// ksMMAChunks is how many blocks of the tensor-core kernel share the input
// coordinates (the grid's z): none while the grid has two blocks per SM,
// else about eight blocks per SM in all, each chunk keeping at least 16
// coordinate pairs, at most 32 chunks. Its warps wait on their table
// loads, so a small grid gains from more of them: one TFHELib128 sample
// (20 blocks) took 806 µs in one chunk, 113 in 8 and 84 in 32; 132
// samples 6.5, 1.76, 1.19 µs per sample; 264 (60 blocks) 3.2, 0.96 and
// 0.90 (H100, kernels BenchmarkKeySwitch, session 12).
func ksMMAChunks(blocks, kn, sms int) int {
	if blocks >= 2*sms {
		return 1
	}
	return max(1, min((8*sms+max(blocks, 1)-1)/max(blocks, 1), kn/32, 32))
}

// ksMMAChunksFor is the chunk policy of the tensor-core kernel:
// ksMMAChunks, which tests and benchmarks replace to run other choices.
var ksMMAChunksFor = ksMMAChunks

// ksTileFor is the tile policy KeySwitch uses: ksTile, which tests and
// benchmarks replace to run other choices.
var ksTileFor = ksTile

// ksTiledChunks is how many blocks share the input coordinates of a tile
// of samples (the grid's z) in the tiled kernels: about 8 blocks of 4
// warps per SM in all, each chunk keeping at least 8 input coordinates, at
// most 64 chunks.
func ksTiledChunks(blocks, kn, sms int) int {
	return max(1, min(8*sms/max(blocks, 1), kn/8, 64))
}

// ksTiledChunksFor is the chunk policy of the tiled kernels: ksTiledChunks,
// which tests and benchmarks replace to run other choices.
var ksTiledChunksFor = ksTiledChunks

// ksChunks is how many blocks share the input coordinates of one sample
// (the key-switching grid's z): enough for about 24 blocks per SM when the
// grid without chunks falls short of that, at most 32, and each chunk
// keeping at least four coordinates for each of its ksTY classes. Each
// warp walks its coordinates' table rows one after another, so up to a
// few thousand samples the time is that walk, not the table's bandwidth:
// on an H200 (TFHELib128, kernels BenchmarkKeySwitch) 1, 2, 4 and 8
// chunks took 509, 375, 349 and 330 µs for 132 samples, 923, 779, 679
// and 634 µs for 264, 280, 191, 177 and 171 µs for 16. The cap of 32
// only changes passes of fewer than ten samples: one sample took 21.5 µs
// with 16 chunks, 17.2 with 32 and 16.6 with 64 (kernels/NOTES.md,
// session 8).
func ksChunks(blocks, kn, sms int) int {
	return max(1, min(24*sms/max(blocks, 1), 32, kn/(4*ksTY)))
}

// ksChunksFor is the chunk policy KeySwitch uses: ksChunks, which tests
// and benchmarks replace to run other choices.
var ksChunksFor = ksChunks

// ksCoordsPerThread is how many output coordinates a key-switching thread
// sums: ksCPT, which shares each digit between them, unless the batch is
// too small to fill the device, where one gives each sample more warps
// (on an H200: one TFHELib128 sample 184 µs with 1, 314 µs with 4; 66
// samples 5.4 µs per sample with 4).
func ksCoordsPerThread(count, sms int) int {
	if count < max(sms, 4)/4 {
		return 1
	}
	return ksCPT
}

// ksSamplesPerBlock is how many samples a key-switching block takes (a
// divisor of ksTY): the most that still leaves about two blocks' worth of
// samples per SM, so that large batches share each table row fetched
// between several samples (goldfhe_bs_keyswitch) and small ones keep every
// warp of a block on one sample, for latency.
func ksSamplesPerBlock(count, sms int) int {
	spb := ksTY
	for spb > 1 && count < spb*max(sms, 1)/2 {
		spb /= 2
	}
	return spb
}
