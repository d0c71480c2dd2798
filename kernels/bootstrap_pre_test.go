package kernels

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/goldfhe/goldfhe/smallntt"
	"github.com/stretchr/testify/require"
)

// refCombine is what the combine kernel writes: for each sample s < count
// and grouped step g, K'[s][g] = Σ_u (X^{e_u} − 1)·BK_{(2^G−1)g+u−1} in the
// NTT domain of plan, one TRGSW's words (ROWS × (k+1) × N), from the
// definition (monomialMinusOne, smallntt's products) rather than the
// kernel's ψ table.
func refCombine(sh BootstrapShape, plan *smallntt.Plan, in []uint32, bk []uint64, count int) []uint64 {
	n, N, G := sh.LWEDim, sh.N(), sh.Grouping
	steps, trgsw := preSteps(sh), sh.Rows()*(sh.K+1)*N
	abar, _ := refInit(sh, in, 0, count)
	kp := make([]uint64, count*steps*trgsw)
	for s := range count {
		for g := range steps {
			r := min(G, n-G*g)
			a := abar[s*n+G*g : s*n+G*g+r]
			out := kp[(s*steps+g)*trgsw : (s*steps+g+1)*trgsw]
			for u := 1; u < 1<<r; u++ {
				e := 0
				for j := range r {
					if u>>j&1 == 1 {
						e += int(a[j])
					}
				}
				m := monomialMinusOne(plan, e%(2*N))
				key := bk[((1<<G-1)*g+u-1)*trgsw:]
				for i := range out {
					out[i] = smallntt.Add(out[i], smallntt.Mul(m[i%N], key[i]))
				}
			}
		}
	}
	return kp
}

// refBlindRotatePre is the grouped blind rotation with each step's
// K' ⊡ ACC, K' from kp (refCombine's layout): refBlindRotateGrouped
// with the step's terms summed before the multiply-accumulate, which is
// the same value mod p.
func refBlindRotatePre(sh BootstrapShape, plan *smallntt.Plan, in []uint32, kp []uint64, mu uint32, count int) []uint32 {
	steps := preSteps(sh)
	return refGroupedSteps(sh, plan, in, mu, count, func(s, g int, dec []uint64, _ []uint32) []uint64 {
		return refMAC(sh, dec, kp, s*steps+g, 1)
	})
}

// TestRefBlindRotatePre: the two references agree, so the Pre kernels'
// comparison with refWide below is a comparison with the grouped blind
// rotation itself.
func TestRefBlindRotatePre(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, G := range []int{2, 3} {
		for _, n := range []int{7, 8, 9} {
			sh := fusedTestShape(FusedShape{K: 1, L: 3, F1: 256, F2: 1}, n)
			sh.Grouping = G
			plan, err := smallntt.NewPlan(sh.N(), smallntt.Butterfly)
			require.NoError(t, err)
			const count = 2
			in := randU32(rng, count*(n+1))
			groupedInputs(G, sh, in)
			key := randomWords(rng, sh.BKLen(), true)
			mu := rng.Uint32()
			got := refBlindRotatePre(sh, plan, in, refCombine(sh, plan, in, key, count), mu, count)
			compareWords(t, fmt.Sprintf("G = %d, n = %d", G, n), got, refBlindRotateGrouped(sh, plan, in, key, mu, count))
		}
	}
}

// TestPreShapes: every Pre split shape is the twin of a grouped split
// kernel with the producer warp but no combiners, one TRGSW's words per
// key buffer and no psiPow table (so less than half an SM's shared
// memory: several blocks per SM), and a combine kernel of its N, k, l and G;
// and WideFor offers it for its grouped shapes only.
func TestPreShapes(t *testing.T) {
	all := WideShapes()
	pre := 0
	for _, ws := range all {
		if !ws.Pre {
			continue
		}
		pre++
		twin := ws
		twin.Pre = false
		if ws.Split == 0 || !ws.grouped() || !slices.Contains(all, twin) {
			t.Errorf("%+v: not the twin of a grouped split kernel", ws)
			continue
		}
		if ws.kernelName() != twin.kernelName()+"p" || ws.Threads() != ws.T+32 || ws.BlocksPerSample() != twin.BlocksPerSample() || ws.TablesLen() != twin.TablesLen() {
			t.Errorf("%s: launch shape differs from %s's", ws.kernelName(), twin.kernelName())
		}
		k1, own := ws.K+1, ws.n()/ws.Split
		need := (k1*(2*ws.L+1)*(own+ws.F1*ws.F2/ws.Split)+k1*own+2*own+2*ws.F2*ws.F3+2*k1*ws.L*k1*own)*8 + k1*own*4 + 64 + 2048
		if got := ws.SharedBytes(); got != need || got >= (228<<10)/2 {
			t.Errorf("%s: SharedBytes %d, want %d, under half of 228 KiB", ws.kernelName(), got, need)
		}
		if !slices.Contains(combineShapes, combineOf(ws)) {
			t.Errorf("%s: no combine kernel %s", ws.kernelName(), combineOf(ws).kernelName())
		}
		sh := fusedTestShape(FusedShape{K: ws.K, L: ws.L, F1: ws.n(), F2: 1}, 630)
		for _, g := range []int{0, 1, 2, 3} {
			sh.Grouping = g
			if got := ws.fits(sh); got != (g == ws.G) {
				t.Errorf("%s fits grouping %d: %v", ws.kernelName(), g, got)
			}
		}
	}
	if pre != len(combineShapes) {
		t.Errorf("%d Pre split shapes, %d combine kernels", pre, len(combineShapes))
	}
	if got := combineOf(WideShape{F1: 8, F2: 8, F3: 16, K: 1, L: 3, G: 3}).kernelName(); got != "goldfhe_bs_combine_n1024_k1_l3_g3" {
		t.Errorf("combine kernel name %s", got)
	}
}

// fakeLaunchEx turns a cuLaunchKernelEx call (config, f, params, extra)
// into cuLaunchKernel's argument list, and says whether the launch asked
// for programmatic dependent launch.
func fakeLaunchEx(a []uintptr) ([]uintptr, bool) {
	cfg := (*launchConfig)(arg(a, 0))
	pdl := false
	for i := range int(cfg.numAttrs) {
		at := unsafe.Slice(cfg.attrs, cfg.numAttrs)[i]
		if at.id == attrProgrammaticStreamSerialization && at.value[0] == 1 {
			pdl = true
		}
	}
	return []uintptr{a[1], uintptr(cfg.grid.x), uintptr(cfg.grid.y), uintptr(cfg.grid.z),
		uintptr(cfg.block.x), uintptr(cfg.block.y), uintptr(cfg.block.z), uintptr(cfg.shared), cfg.stream, a[2], a[3]}, pdl
}

// fakeCombine runs a goldfhe_bs_combine_* launch: refCombine into kp, and
// each step's flag raised by its parts, as the kernel's blocks do.
func fakeCombine(g *fakeGPU, name string, grid, block dim3, a []uintptr) Result {
	var cs combineShape
	if n, _ := fmt.Sscanf(strings.TrimPrefix(name, "goldfhe_bs_combine_"), "n%d_k%d_l%d_g%d", &cs.N, &cs.K, &cs.L, &cs.G); n != 4 {
		return 400
	}
	if block.x != combineThreads || grid.x == 0 || a[7] != 0 {
		return resultInvalidValue
	}
	params := unsafe.Slice((*unsafe.Pointer)(arg(a, 9)), 7)
	ptr := func(i int) uint64 { return *(*uint64)(params[i]) }
	u := func(i int) int { return int(*(*uint32)(params[i])) }
	n, count := u(5), u(6)
	sh := BootstrapShape{LWEDim: n, K: cs.K, BKLevels: cs.L, Grouping: cs.G}
	for 1<<sh.LogN < cs.N {
		sh.LogN++
	}
	plan, err := smallntt.NewPlan(cs.N, smallntt.Butterfly)
	if err != nil {
		return 400
	}
	if !equalWords(fakeWords64(g, ptr(2), 2*cs.N), PsiPowers(cs.N)) {
		panic("fake " + name + ": psiPow is not PsiPowers(N)")
	}
	kp := refCombine(sh, plan, fakeWords32(g, ptr(0), count*(n+1)), fakeWords64(g, ptr(1), sh.BKLen()), count)
	copy(fakeWords64(g, ptr(3), len(kp)), kp)
	flags := fakeWords32(g, ptr(4), count*preSteps(sh))
	for i := range flags {
		flags[i] += uint32((cs.K + 1) * cs.N / combineThreads)
	}
	return 0
}

// fakeSplitPre runs a goldfhe_bs_split_*_g2p or _g3p launch: every step's
// flag of the pass's samples must have reached its target (the combine
// kernel ran first), then refBlindRotatePre from kp, then the flags
// zeroed, as the kernel leaves them.
func fakeSplitPre(g *fakeGPU, ws WideShape, name string, grid, block dim3, a []uintptr) Result {
	f, r := fakeWideArgs(g, ws, name, grid, block, a, 5) // in, kp, tables, ext, flags
	if r != 0 {
		return r
	}
	sh, count := f.sh, f.count
	steps := preSteps(sh)
	flags := fakeWords32(g, f.ptr(4), count*steps)
	for i, f := range flags {
		if f != uint32((ws.K+1)*ws.n()/combineThreads) {
			panic(fmt.Sprintf("fake %s: flag %d is %d: the combine kernel did not run first, or a pass left it raised", name, i, f))
		}
	}
	kp := fakeWords64(g, f.ptr(1), count*steps*sh.Rows()*(sh.K+1)*sh.N())
	ext := refBlindRotatePre(sh, f.plan, fakeWords32(g, f.ptr(0), count*(sh.LWEDim+1)), kp, f.mu, count)
	copy(fakeWords32(g, f.ptr(3), len(ext)), ext)
	clear(flags)
	return 0
}

// TestBlindRotateSplitLaunchFailure: when the split kernel fails to
// launch after its combine kernel, BlindRotateSplit says so and leaves the
// flags zero, so that the next pass on the scratch is right.
func TestBlindRotateSplitLaunchFailure(t *testing.T) {
	g, l := newBootstrapFakeGPU(t)
	bk, err := l.BootstrapKernels()
	require.NoError(t, err)
	c := l.Context()
	rng := rand.New(rand.NewPCG(7, 8))
	ws := WideShape{F1: 8, F2: 8, F3: 16, K: 1, L: 3, T: 256, Split: 8, G: 3, Pre: true}
	sh := fusedTestShape(FusedShape{K: 1, L: 3, F1: 1024, F2: 1}, 10)
	sh.Grouping = 3
	plan, err := smallntt.NewPlan(sh.N(), smallntt.Hybrid, ws.F1, ws.F2, ws.F3)
	require.NoError(t, err)
	tables := wideTables(plan, true)
	dtab := devUint64(t, c, tables, len(tables))
	key := randomWords(rng, sh.BKLen(), true)
	dkey := devUint64(t, c, key, len(key))
	sc, err := NewSplitScratch(c, sh, 2)
	require.NoError(t, err)
	defer sc.Free()
	const count = 2
	in := randU32(rng, count*(sh.LWEDim+1))
	din := devUint32(t, c, in, len(in))
	dext := devUint32(t, c, nil, count*(sh.ExtractedDim()+1))
	g.mu.Lock()
	g.fail[symLaunchKernelEx] = resultInvalidValue
	g.mu.Unlock()
	if err := bk.BlindRotateSplit(nil, sh, ws, din, dkey, dtab, sc, dext, 1, count); err == nil || !strings.Contains(err.Error(), "cuLaunchKernelEx(goldfhe_bs_split_8x8x16_k1_l3_c8_g3p)") {
		t.Fatalf("failed split launch: error %v", err)
	}
	for i, f := range host32(t, sc.flags) {
		if f != 0 {
			t.Fatalf("flag %d is %d after the failed launch", i, f)
		}
	}
	require.NoError(t, bk.BlindRotateSplit(nil, sh, ws, din, dkey, dtab, sc, dext, 7, count))
	compareWords(t, "the pass after", host32(t, dext), refWide(ws, sh, plan, in, key, 7, count))
}

// testBlindRotatePreErrors: a Pre split kernel's calls that must fail
// before any launch (sc: a scratch for sh).
func testBlindRotatePreErrors(t *testing.T, bk *BootstrapKernels, c *Context, ws WideShape, sh BootstrapShape, dkey, dtab *DeviceBuffer[uint64], sc *SplitScratch) {
	other := sh
	other.BKLevels++
	plain := sh
	plain.Grouping = 0
	small, err := NewSplitScratch(c, sh, 1)
	require.NoError(t, err)
	defer small.Free()
	freed, err := NewSplitScratch(c, sh, 2)
	require.NoError(t, err)
	require.NoError(t, freed.Free())
	din := devUint32(t, c, nil, 2*(sh.LWEDim+1))
	dext := devUint32(t, c, nil, 2*(sh.ExtractedDim()+1))
	plainWS := ws
	plainWS.Pre = false
	for name, err := range map[string]error{
		"BlindRotateWide": bk.BlindRotateWide(nil, sh, ws, din, dkey, dtab, dext, 1, 2),
		"not Pre":         bk.BlindRotateSplit(nil, sh, plainWS, din, dkey, dtab, sc, dext, 1, 2),
		"nil scratch":     bk.BlindRotateSplit(nil, sh, ws, din, dkey, dtab, nil, dext, 1, 2),
		"small scratch":   bk.BlindRotateSplit(nil, sh, ws, din, dkey, dtab, small, dext, 1, 2),
		"freed scratch":   bk.BlindRotateSplit(nil, sh, ws, din, dkey, dtab, freed, dext, 1, 2),
		"shape mismatch":  bk.BlindRotateSplit(nil, other, ws, din, dkey, dtab, sc, dext, 1, 2),
		"plain key":       bk.BlindRotateSplit(nil, plain, ws, din, dkey, dtab, sc, dext, 1, 2),
		"short key":       bk.BlindRotateSplit(nil, sh, ws, din, dkey.View(0, sh.BKLen()-1), dtab, sc, dext, 1, 2),
		"short tables":    bk.BlindRotateSplit(nil, sh, ws, din, dkey, dtab.View(0, ws.TablesLen()-1), sc, dext, 1, 2),
		"short ext":       bk.BlindRotateSplit(nil, sh, ws, din, dkey, dtab, sc, dext.View(0, 3), 1, 2),
		"key at an odd word": func() error {
			odd := devUint64(t, c, nil, sh.BKLen()+1)
			return bk.BlindRotateSplit(nil, sh, ws, din, odd.View(1, sh.BKLen()+1), dtab, sc, dext, 1, 2)
		}(),
		"scratch of plain key": func() error { _, err := NewSplitScratch(c, plain, 1); return err }(),
		"scratch of 0":         func() error { _, err := NewSplitScratch(c, sh, 0); return err }(),
	} {
		if err == nil || !strings.HasPrefix(err.Error(), "kernels: ") {
			t.Errorf("%+v, %s: error %v", ws, name, err)
		}
	}
}

// TestNewSplitScratchFails: when the flags' memset fails, NewSplitScratch
// frees what it allocated and returns the error; a recoverable error with
// the frees' errors (none here), a device fault alone, not repeated by the
// frees that meet the unusable context.
func TestNewSplitScratchFails(t *testing.T) {
	sh := fusedTestShape(FusedShape{K: 1, L: 3, F1: 1024, F2: 1}, 10)
	sh.Grouping = 3
	for _, tc := range []struct {
		code  Result
		fault bool
	}{{resultInvalidValue, false}, {214, true}} {
		g, l := newBootstrapFakeGPU(t)
		c := l.Context()
		g.mu.Lock()
		g.fail[symMemsetD32] = tc.code
		g.mu.Unlock()
		sc, err := NewSplitScratch(c, sh, 2)
		if sc != nil || err == nil {
			t.Fatalf("code %d: NewSplitScratch = %v, %v; want an error", tc.code, sc, err)
		}
		t.Logf("code %d: %v", tc.code, err)
		name := string(fakeStrings[tc.code][0][:len(fakeStrings[tc.code][0])-1])
		if n := strings.Count(err.Error(), name); n != 1 {
			t.Errorf("code %d: %s named %d times in %q, want once", tc.code, name, n, err)
		}
		if got := errors.Is(err, ErrLaunchFailed); got != tc.fault {
			t.Errorf("code %d: errors.Is(err, ErrLaunchFailed) = %v, want %v", tc.code, got, tc.fault)
		}
		if s := c.Stats(); s.DeviceBuffers != 0 {
			t.Errorf("code %d: %d device buffers left", tc.code, s.DeviceBuffers)
		}
	}
}
