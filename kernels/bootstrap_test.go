package kernels

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/goldfhe/goldfhe/smallntt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The references below restate each bootstrapping kernel from its
// definition (DESIGN.md §2, bootstrap.cuh), in plain Go over host slices;
// package bootstrap checks the composed GPU engine against tfhe's CPU
// engine.

func refModSwitch(t uint32, logm int) uint32 {
	return uint32((uint64(t)>>(31-logm)+1)>>1) & (1<<logm - 1)
}

func refInit(sh BootstrapShape, in []uint32, mu uint32, count int) (abar, acc []uint32) {
	n, N, k := sh.LWEDim, sh.N(), sh.K
	abar = make([]uint32, count*n)
	acc = make([]uint32, count*(k+1)*N)
	for s := range count {
		ct := in[s*(n+1) : (s+1)*(n+1)]
		for i := range n {
			abar[s*n+i] = refModSwitch(ct[i], sh.LogN+1)
		}
		b := int(refModSwitch(ct[n], sh.LogN+1))
		body := acc[(s*(k+1)+k)*N : (s*(k+1)+k+1)*N]
		// X^{-b}·mu·(1 + … + X^{N-1}): coefficient j is ±mu by the sign of
		// the wrap of j+b.
		for j := range body {
			if (j+b)/N%2 == 0 {
				body[j] = mu
			} else {
				body[j] = -mu
			}
		}
	}
	return abar, acc
}

func refRotateDecompose(sh BootstrapShape, acc, abar []uint32, iter, count int) []uint64 {
	n, N, k, l, beta := sh.LWEDim, sh.N(), sh.K, sh.BKLevels, sh.BKBaseLog
	dec := make([]uint64, count*sh.Rows()*N)
	for s := range count {
		a := int(abar[s*n+iter])
		for c := 0; c <= k; c++ {
			p := acc[(s*(k+1)+c)*N : (s*(k+1)+c+1)*N]
			for j := range N {
				// (X^a·p)[j] = Σ over i with i + a ≡ j (mod 2N), sign by the wrap.
				i := ((j-a)%(2*N) + 2*N) % (2 * N)
				rot := p[i%N]
				if i >= N {
					rot = -rot
				}
				w := rot - p[j] + sh.BKOffset
				for lv := range l {
					d := int64(w>>(32-(lv+1)*beta)&(1<<beta-1)) - 1<<(beta-1)
					dec[((s*(k+1)+c)*l+lv)*N+j] = smallntt.FromInt64(d)
				}
			}
		}
	}
	return dec
}

func refMAC(sh BootstrapShape, dec, bk []uint64, iter, count int) []uint64 {
	N, k1, rows := sh.N(), sh.K+1, sh.Rows()
	key := bk[iter*rows*k1*N:]
	prod := make([]uint64, count*k1*N)
	for s := range count {
		for c := range k1 {
			for j := range N {
				var v uint64
				for r := range rows {
					v = smallntt.Add(v, smallntt.Mul(dec[(s*rows+r)*N+j], key[(r*k1+c)*N+j]))
				}
				prod[(s*k1+c)*N+j] = v
			}
		}
	}
	return prod
}

func refExtract(sh BootstrapShape, acc []uint32, count int) []uint32 {
	N, k, kn := sh.N(), sh.K, sh.ExtractedDim()
	ext := make([]uint32, count*(kn+1))
	for s := range count {
		a := acc[s*(k+1)*N:]
		e := ext[s*(kn+1):]
		for c := range k {
			e[c*N] = a[c*N]
			for i := 1; i < N; i++ {
				e[c*N+i] = -a[c*N+N-i]
			}
		}
		e[kn] = a[k*N]
	}
	return ext
}

func refKeySwitch(sh BootstrapShape, in, table []uint32, count int) []uint32 {
	n, kn, t, bb := sh.LWEDim, sh.ExtractedDim(), sh.KSLevels, sh.KSBaseLog
	half := 1 << bb / 2
	out := make([]uint32, count*(n+1))
	for s := range count {
		a := in[s*(kn+1):]
		o := out[s*(n+1) : (s+1)*(n+1)]
		o[n] = a[kn]
		for i := range kn {
			// An odd word's digits are those of its negation, negated
			// (tfhe keySwitch, bs_ks_sign).
			x, sign := a[i], 1
			if x&1 != 0 {
				x, sign = -x, -1
			}
			v := x + sh.KSOffset
			for j := 1; j <= t; j++ {
				d := sign * (int(v>>(32-j*bb)&(1<<bb-1)) - half)
				if d == 0 {
					continue
				}
				m := d
				if m < 0 {
					m = -m
				}
				row := table[((i*t+j-1)*half+m-1)*(n+1):]
				for x := range o {
					if d > 0 {
						o[x] -= row[x]
					} else {
						o[x] += row[x]
					}
				}
			}
		}
	}
	return out
}

// bsTestShapes cover k = 1..4 (the register-accumulator MAC for k+1 ≤ 4 and
// the generic one beyond), several N, levels and key-switching bases.
var bsTestShapes = []BootstrapShape{
	{LWEDim: 11, LogN: 10, K: 1, BKLevels: 3, BKBaseLog: 7, KSLevels: 8, KSBaseLog: 2}, // TFHELib128-like
	{LWEDim: 9, LogN: 9, K: 3, BKLevels: 2, BKBaseLog: 10, KSLevels: 5, KSBaseLog: 3},  // TFHErsDefault-like
	{LWEDim: 5, LogN: 8, K: 2, BKLevels: 3, BKBaseLog: 6, KSLevels: 6, KSBaseLog: 2},   // the toy set
	{LWEDim: 4, LogN: 6, K: 4, BKLevels: 1, BKBaseLog: 32, KSLevels: 3, KSBaseLog: 8},  // generic MAC, l·β = 32
	{LWEDim: 3, LogN: 11, K: 1, BKLevels: 4, BKBaseLog: 8, KSLevels: 31, KSBaseLog: 1}, // t·basebit = 31, the most
}

func init() {
	for i := range bsTestShapes {
		s := &bsTestShapes[i]
		s.BKOffset = refOffset(s.BKLevels, s.BKBaseLog)
		s.KSOffset = refOffset(s.KSLevels, s.KSBaseLog)
	}
}

// refOffset is the gadget offset Σ_{i=1..l} (B/2)·2^{32−iβ} + 2^{32−lβ−1}.
func refOffset(l, beta int) uint32 {
	var off uint64
	for i := 1; i <= l; i++ {
		off += 1 << (beta - 1) << (32 - i*beta)
	}
	if l*beta < 32 {
		off += 1 << (32 - l*beta - 1)
	}
	return uint32(off)
}

func shapeName(s BootstrapShape) string {
	return fmt.Sprintf("n=%d,N=%d,k=%d,l=%d,beta=%d,t=%d,bb=%d", s.LWEDim, s.N(), s.K, s.BKLevels, s.BKBaseLog, s.KSLevels, s.KSBaseLog)
}

func devUint32(t testing.TB, c *Context, src []uint32, n int) *DeviceBuffer[uint32] {
	t.Helper()
	b, err := Alloc[uint32](c, n)
	require.NoError(t, err)
	t.Cleanup(func() { b.Free() })
	if src != nil {
		require.NoError(t, b.CopyFromHost(src))
	} else {
		require.NoError(t, b.Memset8(0x5A)) // poison: every output must be written
	}
	return b
}

func host32(t testing.TB, b *DeviceBuffer[uint32]) []uint32 {
	t.Helper()
	out := make([]uint32, b.Len())
	require.NoError(t, b.CopyToHost(out))
	return out
}

func randU32(rng *rand.Rand, n int) []uint32 {
	s := make([]uint32, n)
	for i := range s {
		s[i] = rng.Uint32()
	}
	return s
}

// bothBootstrap runs f with the bootstrapping kernels of the fake driver
// (which runs the references above on the arguments it is passed: a check
// of the wrappers' argument marshalling on every machine) and of the GPU.
func bothBootstrap(t *testing.T, f func(t *testing.T, l *Library, bk *BootstrapKernels)) {
	t.Run("fake", func(t *testing.T) {
		l := newBootstrapFake(t)
		bk, err := l.BootstrapKernels()
		require.NoError(t, err)
		f(t, l, bk)
	})
	t.Run("gpu", func(t *testing.T) {
		l := gpuLibrary(t)
		bk, err := l.BootstrapKernels()
		require.NoError(t, err)
		f(t, l, bk)
	})
}

// newBootstrapFake is newFake with the bootstrapping kernels added: the
// fake driver's calls pass through, except the lookup and the launches of
// goldfhe_bs_* kernels, which bsFakeLaunch runs.
func newBootstrapFake(t *testing.T) *Library {
	t.Helper()
	_, l := newBootstrapFakeGPU(t)
	return l
}

// newBootstrapFakeGPU is newBootstrapFake with its fake GPU (to inject
// failures).
func newBootstrapFakeGPU(t *testing.T) (*fakeGPU, *Library) {
	t.Helper()
	return newBootstrapFakeWith(t, false, nil)
}

// newBootstrapFakeWith is newBootstrapFakeGPU whose goldfhe_bs_*
// launches by cuLaunchKernel do nothing when noop (for TestLaunchAllocs),
// and which counts every driver call in calls when it is not nil.
func newBootstrapFakeWith(t *testing.T, noop bool, calls *atomic.Int64) (*fakeGPU, *Library) {
	t.Helper()
	requireFake64(t)
	g, call := bootstrapFakeDriver(noop, calls)
	c, err := open(&driver{path: "fake", fake: call}, 0)
	require.NoError(t, err)
	c.SetDebug(false)
	l, err := c.loadLibrary(fakeImage, "fake")
	require.NoError(t, err)
	t.Cleanup(func() {
		l.Close()
		c.Close()
	})
	return g, l
}

// bootstrapFakeDriver is a fake GPU and its driver entry point with the
// bootstrapping kernels added (newBootstrapFakeWith).
func bootstrapFakeDriver(noop bool, calls *atomic.Int64) (*fakeGPU, func(s sym, a []uintptr) Result) {
	g := newFakeGPU()
	mine := map[uintptr]string{}
	call := func(s sym, a []uintptr) Result {
		if calls != nil {
			calls.Add(1)
		}
		switch s {
		case symModuleGetFunction:
			name := cString((*byte)(arg(a, 2)), 256)
			if !strings.HasPrefix(name, "goldfhe_bs_") {
				break
			}
			g.mu.Lock()
			defer g.mu.Unlock()
			if !g.arch.clusters && (strings.HasPrefix(name, "goldfhe_bs_cluster_") || strings.HasPrefix(name, "goldfhe_bs_split_")) {
				return 500 // CUDA_ERROR_NOT_FOUND: sm_90 kernels, not in an older GPU's code
			}
			h := g.newHandle()
			g.funcs[h] = name
			g.attrs[h] = map[int32]int32{funcNumRegs: 32, funcMaxThreadsPerBlock: 1024}
			mine[h] = name
			put(a, 0, h)
			return 0
		case symLaunchKernel:
			if name, ok := mine[a[0]]; ok {
				g.mu.Lock()
				defer g.mu.Unlock()
				if !g.sharedFits(a[0], uint32(a[7])) {
					return resultInvalidValue
				}
				if noop {
					return 0
				}
				return bsFakeLaunch(g, name, a)
			}
		case symLaunchKernelEx:
			if name, ok := mine[a[1]]; ok {
				la, pdl := fakeLaunchEx(a)
				if !pdl || !strings.HasPrefix(name, "goldfhe_bs_split_") {
					panic("fake: " + name + " launched by cuLaunchKernelEx without programmatic dependent launch")
				}
				g.mu.Lock()
				defer g.mu.Unlock()
				if !g.sharedFits(a[1], uint32(la[7])) {
					return resultInvalidValue
				}
				if r, ok := g.fail[s]; ok {
					delete(g.fail, s)
					return r
				}
				return bsFakeLaunch(g, name, la)
			}
		}
		return g.call(s, a)
	}
	return g, call
}

// bsFakeLaunch decodes a goldfhe_bs_* launch the way the CUDA code reads
// its parameters (bootstrap.cuh) and computes the kernel with the
// references on the fake device memory.
func bsFakeLaunch(g *fakeGPU, name string, a []uintptr) Result {
	grid := dim3{uint32(a[1]), uint32(a[2]), uint32(a[3])}
	block := dim3{uint32(a[4]), uint32(a[5]), uint32(a[6])}
	if grid.x == 0 || grid.y == 0 || grid.y > 65535 || block.x == 0 || block.x > 1024 {
		return resultInvalidValue
	}
	if strings.HasPrefix(name, "goldfhe_bs_combine_") {
		return fakeCombine(g, name, grid, block, a)
	}
	if strings.HasPrefix(name, "goldfhe_bs_fused_") || strings.HasPrefix(name, "goldfhe_bs_wide_") || strings.HasPrefix(name, "goldfhe_bs_cluster_") || strings.HasPrefix(name, "goldfhe_bs_split_") {
		return fakeFused(g, name, grid, block, a)
	}
	np := map[string]int{"goldfhe_bs_init": 8, "goldfhe_bs_rotate_decompose": 11, "goldfhe_bs_mac": 8,
		"goldfhe_bs_add_centered": 3, "goldfhe_bs_extract": 5, "goldfhe_bs_keyswitch": 11}[name]
	tiled := strings.HasPrefix(name, "goldfhe_bs_keyswitch_s")
	mmaAt := slices.Index(ksMMANames[:], name) // basebit 2 + mmaAt
	mma := mmaAt >= 0
	packed := name == ksPackedName
	if tiled || mma || packed {
		np = 8
	}
	params := unsafe.Slice((*unsafe.Pointer)(arg(a, 9)), np)
	ptr := func(i int) uint64 { return *(*uint64)(params[i]) }
	u := func(i int) int { return int(*(*uint32)(params[i])) }
	w32 := func(p uint64, n int) []uint32 {
		b, ok := g.devBytes(p, 4*uint64(n))
		if !ok {
			panic(fmt.Sprintf("fake %s: device range %#x+%d not allocated", name, p, 4*n))
		}
		return unsafe.Slice((*uint32)(unsafe.Pointer(&b[0])), n)
	}
	w64 := func(p uint64, n int) []uint64 {
		b, ok := g.devBytes(p, 8*uint64(n))
		if !ok {
			panic(fmt.Sprintf("fake %s: device range %#x+%d not allocated", name, p, 8*n))
		}
		return unsafe.Slice((*uint64)(unsafe.Pointer(&b[0])), n)
	}
	switch {
	case packed:
		n, kn := u(3), u(4)
		sh := BootstrapShape{LWEDim: n, LogN: 0, K: kn, KSLevels: u(5), KSBaseLog: 2, KSOffset: uint32(u(6))}
		count := u(7)
		if int(block.x) != kspWarps*32 || int(grid.x)*kspOctets*8 < n+1 || !sh.KSPackable() {
			panic("fake " + name + ": grid does not cover n+1 coordinates, or a shape the kernel does not take")
		}
		if int(grid.y)*kspSamples < count && int(grid.y) < maxGridY {
			panic(fmt.Sprintf("fake %s: grid.y %d for %d samples", name, grid.y, count))
		}
		if ptr(2)%16 != 0 {
			panic("fake " + name + ": packed table not on a 16-byte boundary")
		}
		out := refKeySwitch(sh, w32(ptr(1), count*(kn+1)), unpackKSTable(sh, w32(ptr(2), sh.KSPackedLen())), count)
		copy(w32(ptr(0), len(out)), out)
		return 0
	case mma:
		n, kn := u(3), u(4)
		bb := 2 + mmaAt
		sh := BootstrapShape{LWEDim: n, LogN: 0, K: kn, KSLevels: u(5), KSBaseLog: bb, KSOffset: uint32(u(6))}
		count := u(7)
		if int(block.x) != ksmWarps*32 || int(grid.x)*ksmWords < n+1 || !ksMMATakes(bb, sh.KSLevels, kn) {
			panic("fake " + name + ": grid does not cover n+1 coordinates, or a shape the kernel does not take")
		}
		if int(grid.y)*ksmSamples < count && int(grid.y) < maxGridY {
			panic(fmt.Sprintf("fake %s: grid.y %d for %d samples", name, grid.y, count))
		}
		out := refKeySwitch(sh, w32(ptr(1), count*(kn+1)), w32(ptr(2), sh.KSTableLen()), count)
		copy(w32(ptr(0), len(out)), out)
		return 0
	case tiled:
		var st, bb int
		if _, err := fmt.Sscanf(name, "goldfhe_bs_keyswitch_s%d_b%d", &st, &bb); err != nil || st != 16 || (bb != 2 && bb != 3) {
			return 400
		}
		n, kn := u(3), u(4)
		sh := BootstrapShape{LWEDim: n, LogN: 0, K: kn, KSLevels: u(5), KSBaseLog: bb, KSOffset: uint32(u(6))}
		count := u(7)
		if int(block.x) != kstW*32 || int(grid.x)*kstW*32 < n+1 {
			panic("fake goldfhe_bs_keyswitch_s*: grid does not cover n+1 coordinates")
		}
		if int(grid.y)*st < count && int(grid.y) < maxGridY {
			panic(fmt.Sprintf("fake %s: grid.y %d for %d samples", name, grid.y, count))
		}
		out := refKeySwitch(sh, w32(ptr(1), count*(kn+1)), w32(ptr(2), sh.KSTableLen()), count)
		copy(w32(ptr(0), len(out)), out)
		return 0
	}
	switch name {
	case "goldfhe_bs_init":
		sh := BootstrapShape{LWEDim: u(3), LogN: u(4), K: u(5)}
		count := u(7)
		abar, acc := refInit(sh, w32(ptr(0), count*(sh.LWEDim+1)), uint32(u(6)), count)
		copy(w32(ptr(1), len(abar)), abar)
		copy(w32(ptr(2), len(acc)), acc)
	case "goldfhe_bs_rotate_decompose":
		sh := BootstrapShape{LWEDim: u(4), LogN: u(5), K: u(6), BKLevels: u(7), BKBaseLog: u(8), BKOffset: uint32(u(9))}
		count := u(10)
		dec := refRotateDecompose(sh, w32(ptr(0), count*(sh.K+1)*sh.N()), w32(ptr(1), count*sh.LWEDim), u(3), count)
		copy(w64(ptr(2), len(dec)), dec)
	case "goldfhe_bs_mac":
		sh := BootstrapShape{LogN: u(4), K: u(5), BKLevels: u(6)}
		iter, count := u(3), u(7)
		sh.LWEDim = iter + 1 // the key rows up to BK_iter
		prod := refMAC(sh, w64(ptr(0), count*sh.Rows()*sh.N()), w64(ptr(1), sh.BKLen()), iter, count)
		copy(w64(ptr(2), len(prod)), prod)
	case "goldfhe_bs_add_centered":
		total := int(*(*uint64)(params[2]))
		acc, prod := w32(ptr(0), total), w64(ptr(1), total)
		for i, v := range prod {
			acc[i] += uint32(smallntt.ToInt64Centered(v))
		}
	case "goldfhe_bs_extract":
		sh := BootstrapShape{LogN: u(2), K: u(3)}
		count := u(4)
		ext := refExtract(sh, w32(ptr(0), count*(sh.K+1)*sh.N()), count)
		copy(w32(ptr(1), len(ext)), ext)
	case "goldfhe_bs_keyswitch":
		n, kn := u(3), u(4)
		sh := BootstrapShape{LWEDim: n, LogN: 0, K: kn, KSLevels: u(5), KSBaseLog: u(6), KSOffset: uint32(u(7))}
		count, spb, cpt := u(8), u(9), u(10)
		if cpt < 1 || cpt > ksCPT || int(grid.x)*int(block.x)*cpt < n+1 {
			panic("fake goldfhe_bs_keyswitch: grid does not cover n+1 coordinates")
		}
		if spb < 1 || ksTY%spb != 0 || int(block.y) != ksTY || min(count, int(grid.y)*spb) < count && int(grid.y) < maxGridY {
			panic(fmt.Sprintf("fake goldfhe_bs_keyswitch: %d samples per block, grid.y %d for %d samples", spb, grid.y, count))
		}
		out := refKeySwitch(sh, w32(ptr(1), count*(kn+1)), w32(ptr(2), sh.KSTableLen()), count)
		copy(w32(ptr(0), len(out)), out)
	default:
		return 400
	}
	return 0
}

func compareWords[T uint32 | uint64](t *testing.T, what string, got, want []T) {
	t.Helper()
	bad := 0
	for i := range want {
		if got[i] != want[i] {
			if bad++; bad <= 5 {
				t.Errorf("%s[%d] = %#x, want %#x", what, i, got[i], want[i])
			}
		}
	}
	if bad > 0 {
		t.Fatalf("%s: %d of %d words differ", what, bad, len(want))
	}
}

// TestBootstrapKernelsMatchReference runs every bootstrapping kernel on
// random data and compares with the references, for each test shape and a
// few batch sizes.
func TestBootstrapKernelsMatchReference(t *testing.T) {
	bothBootstrap(t, testBootstrapKernels)
}

func testBootstrapKernels(t *testing.T, l *Library, bk *BootstrapKernels) {
	c := l.Context()
	for _, f := range bk.Functions() {
		a, err := f.Attributes()
		require.NoError(t, err)
		t.Logf("%s: %+v", f.Name(), a)
	}
	rng := rand.New(rand.NewPCG(11, 12))
	for _, sh := range bsTestShapes {
		for _, count := range []int{1, 3, 37} {
			t.Run(fmt.Sprintf("%s/count=%d", shapeName(sh), count), func(t *testing.T) {
				n, N, k, kn := sh.LWEDim, sh.N(), sh.K, sh.ExtractedDim()
				mu := rng.Uint32()
				in := randU32(rng, count*(n+1))
				in[0] = 0 // b = a_0 = 0: rotation by 0 and the unrotated test vector
				din := devUint32(t, c, in, len(in))
				dabar := devUint32(t, c, nil, count*n)
				dacc := devUint32(t, c, nil, count*(k+1)*N)
				require.NoError(t, bk.Init(nil, sh, din, dabar, dacc, mu, count))
				wantAbar, wantAcc := refInit(sh, in, mu, count)
				compareWords(t, "Init abar", host32(t, dabar), wantAbar)
				compareWords(t, "Init acc", host32(t, dacc), wantAcc)

				// A random accumulator from here on.
				acc := randU32(rng, count*(k+1)*N)
				require.NoError(t, dacc.CopyFromHost(acc))
				ddec := devUint64(t, c, nil, count*sh.Rows()*N)
				for _, iter := range []int{0, n - 1} {
					require.NoError(t, ddec.Memset8(0x5A))
					require.NoError(t, bk.RotateDecompose(nil, sh, dacc, dabar, ddec, iter, count))
					compareWords(t, fmt.Sprintf("RotateDecompose(iter %d)", iter), toHost(t, ddec), refRotateDecompose(sh, acc, wantAbar, iter, count))
				}

				dec := randomWords(rng, count*sh.Rows()*N, true)
				key := randomWords(rng, sh.BKLen(), true)
				require.NoError(t, ddec.CopyFromHost(dec))
				dkey := devUint64(t, c, key, len(key))
				dprod := devUint64(t, c, nil, count*(k+1)*N)
				for _, iter := range []int{n - 1, 0} {
					require.NoError(t, dprod.Memset8(0x5A))
					require.NoError(t, bk.MAC(nil, sh, ddec, dkey, dprod, iter, count))
					compareWords(t, fmt.Sprintf("MAC(iter %d)", iter), toHost(t, dprod), refMAC(sh, dec, key, iter, count))
				}

				// AddCentered on values around 0, (p−1)/2 and p, canonical or not.
				prod := randomWords(rng, count*(k+1)*N, false)
				for i := range prod {
					switch i % 4 {
					case 0:
						prod[i] = (smallntt.P-1)/2 + prod[i]%5 - 2
					case 1:
						prod[i] %= 1 << 40
					case 2:
						prod[i] = smallntt.P - prod[i]%(1<<40)
					}
				}
				require.NoError(t, dprod.CopyFromHost(prod))
				require.NoError(t, bk.AddCentered(nil, dacc, dprod, len(acc)))
				want := append([]uint32(nil), acc...)
				for i, v := range prod {
					want[i] += uint32(smallntt.ToInt64Centered(v))
				}
				compareWords(t, "AddCentered", host32(t, dacc), want)

				dext := devUint32(t, c, nil, count*(kn+1))
				require.NoError(t, bk.Extract(nil, sh, dacc, dext, count))
				compareWords(t, "Extract", host32(t, dext), refExtract(sh, want, count))

				ksIn := randU32(rng, count*(kn+1))
				table := randU32(rng, sh.KSTableLen())
				require.NoError(t, dext.CopyFromHost(ksIn))
				dtab := devUint32(t, c, table, len(table))
				dout := devUint32(t, c, nil, count*(n+1))
				require.NoError(t, bk.KeySwitch(nil, sh, dout, dext, dtab, count))
				compareWords(t, "KeySwitch", host32(t, dout), refKeySwitch(sh, ksIn, table, count))
			})
		}
	}
}

// TestBootstrapKernelsArgumentChecks: every wrapper rejects bad shapes,
// short or overlapping buffers and bad indices before launching.
func TestBootstrapKernelsArgumentChecks(t *testing.T) {
	bothBootstrap(t, testBootstrapArgumentChecks)
}

func testBootstrapArgumentChecks(t *testing.T, l *Library, bk *BootstrapKernels) {
	c := l.Context()
	sh := bsTestShapes[2]
	n, N, k, kn := sh.LWEDim, sh.N(), sh.K, sh.ExtractedDim()
	const count = 2
	in := devUint32(t, c, nil, count*(n+1))
	abar := devUint32(t, c, nil, count*n)
	acc := devUint32(t, c, nil, count*(k+1)*N)
	dec := devUint64(t, c, nil, count*sh.Rows()*N)
	key := devUint64(t, c, nil, sh.BKLen())
	prod := devUint64(t, c, nil, count*(k+1)*N)
	ext := devUint32(t, c, nil, count*(kn+1))
	out := devUint32(t, c, nil, count*(n+1))
	table := devUint32(t, c, nil, sh.KSTableLen())
	bad := sh
	bad.K = 0
	cases := map[string]error{
		"bad shape":            bk.Init(nil, bad, in, abar, acc, 1, count),
		"short in":             bk.Init(nil, sh, in.View(0, 5), abar, acc, 1, count),
		"nil acc":              bk.Init(nil, sh, in, abar, nil, 1, count),
		"negative count":       bk.Init(nil, sh, in, abar, acc, 1, -1),
		"abar overlaps in":     bk.Init(nil, sh, in, in, acc, 1, 1),
		"iter out of range":    bk.RotateDecompose(nil, sh, acc, abar, dec, n, count),
		"short dec":            bk.RotateDecompose(nil, sh, acc, abar, dec.View(0, N), 0, count),
		"short key":            bk.MAC(nil, sh, dec, key.View(0, 10), prod, 0, count),
		"prod is dec":          bk.MAC(nil, sh, dec, key, dec, 0, 1),
		"MAC iter":             bk.MAC(nil, sh, dec, key, prod, -1, count),
		"short prod":           bk.AddCentered(nil, acc, prod.View(0, 3), 4),
		"negative total":       bk.AddCentered(nil, acc, prod, -1),
		"short ext":            bk.Extract(nil, sh, acc, ext.View(0, kn), count),
		"short table":          bk.KeySwitch(nil, sh, out, ext, table.View(0, 1), count),
		"out overlaps ext":     bk.KeySwitch(nil, sh, ext, ext, table, 1),
		"count beyond buffers": bk.KeySwitch(nil, sh, out, ext, table, count+1),
	}
	for name, err := range cases {
		if err == nil {
			t.Errorf("%s: no error", name)
		} else if !strings.HasPrefix(err.Error(), "kernels: ") {
			t.Errorf("%s: error %q lacks the package prefix", name, err)
		}
	}
	assert.NoError(t, bk.Init(nil, sh, in, abar, acc, 1, 0), "count 0")
}

// TestBootstrapKernelsMissing: a fatbin without bootstrap.cuh (the fake
// driver's) gives an error naming the kernels and asking for a rebuild.
func TestBootstrapKernelsMissing(t *testing.T) {
	_, _, l := newFake(t)
	_, err := l.BootstrapKernels()
	if err == nil || !strings.Contains(err.Error(), "goldfhe_bs_init") || !strings.Contains(err.Error(), "rebuild") {
		t.Fatalf("BootstrapKernels on a fatbin without them: %v", err)
	}
}

func TestBootstrapShapeCheck(t *testing.T) {
	for _, s := range bsTestShapes {
		assert.NoErrorf(t, s.Check(), "%s", shapeName(s))
	}
	good := bsTestShapes[0]
	for name, f := range map[string]func(*BootstrapShape){
		"n = 0":       func(s *BootstrapShape) { s.LWEDim = 0 },
		"log N = 1":   func(s *BootstrapShape) { s.LogN = 1 },
		"log N = 14":  func(s *BootstrapShape) { s.LogN = 14 },
		"k = 9":       func(s *BootstrapShape) { s.K = 9 },
		"l·β = 33":    func(s *BootstrapShape) { s.BKLevels, s.BKBaseLog = 3, 11 },
		"basebit = 9": func(s *BootstrapShape) { s.KSBaseLog = 9 },
		"t = 0":       func(s *BootstrapShape) { s.KSLevels = 0 },
		"t·bb = 32":   func(s *BootstrapShape) { s.KSLevels, s.KSBaseLog = 4, 8 }, // bit 0 picks the digits' sign
		"huge key":    func(s *BootstrapShape) { s.LWEDim, s.LogN, s.K, s.BKLevels, s.BKBaseLog = 65536, 13, 8, 32, 1 },
	} {
		s := good
		f(&s)
		if err := s.Check(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
