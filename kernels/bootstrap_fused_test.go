package kernels

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/goldfhe/goldfhe/smallntt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// refBlindRotate composes the per-step references (refInit,
// refRotateDecompose, refMAC, refExtract) with the CPU NTT plan: what the
// fused kernel computes, one step after another, as the unfused kernels do.
func refBlindRotate(sh BootstrapShape, plan *smallntt.Plan, in []uint32, bk []uint64, mu uint32, count int) []uint32 {
	n, N, k1, rows := sh.LWEDim, sh.N(), sh.K+1, sh.Rows()
	abar, acc := refInit(sh, in, mu, count)
	for iter := range n {
		dec := refRotateDecompose(sh, acc, abar, iter, count)
		for r := range count * rows {
			p := dec[r*N : (r+1)*N]
			plan.Forward(p, p)
		}
		prod := refMAC(sh, dec, bk, iter, count)
		for c := range count * k1 {
			p := prod[c*N : (c+1)*N]
			plan.Inverse(p, p)
		}
		for i, v := range prod {
			acc[i] += uint32(smallntt.ToInt64Centered(v))
		}
	}
	return refExtract(sh, acc, count)
}

// fusedTestShape returns a small-n BootstrapShape for a fused kernel shape.
func fusedTestShape(fs FusedShape, n int) BootstrapShape {
	beta := map[int]int{2: 10, 3: 7}[fs.L]
	sh := BootstrapShape{LWEDim: n, K: fs.K, BKLevels: fs.L, BKBaseLog: beta, KSLevels: 8, KSBaseLog: 2}
	for 1<<sh.LogN < fs.F1*fs.F2 {
		sh.LogN++
	}
	sh.BKOffset = refOffset(sh.BKLevels, sh.BKBaseLog)
	sh.KSOffset = refOffset(sh.KSLevels, sh.KSBaseLog)
	return sh
}

// TestBlindRotateFused: every fused kernel equals the composed references
// bit for bit, on random keys and samples (some rotation amounts 0, so
// skipped steps are covered), for several batch sizes. The fake driver's
// run checks the wrapper's argument block and launch shape.
func TestBlindRotateFused(t *testing.T) {
	bothBootstrap(t, func(t *testing.T, l *Library, bk *BootstrapKernels) {
		c := l.Context()
		rng := rand.New(rand.NewPCG(21, 22))
		for _, fs := range FusedShapes() {
			sh := fusedTestShape(fs, 9)
			N := sh.N()
			if !bk.Fused(sh, fs.F1, fs.F2) {
				t.Fatalf("%+v: no fused kernel", fs)
			}
			plan, err := smallntt.NewPlan(N, smallntt.Hybrid, fs.F1, fs.F2)
			require.NoError(t, err)
			st := plan.StageTables()[0]
			tw := devUint64(t, c, st.Twiddle, N)
			twInv := devUint64(t, c, st.TwiddleInv, N)
			key := randomWords(rng, sh.BKLen(), true)
			dkey := devUint64(t, c, key, len(key))
			for _, count := range []int{1, 3, 37} {
				t.Run(fmt.Sprintf("%dx%d_k%d_l%d/count=%d", fs.F1, fs.F2, fs.K, fs.L, count), func(t *testing.T) {
					n, kn := sh.LWEDim, sh.ExtractedDim()
					mu := rng.Uint32()
					in := randU32(rng, count*(n+1))
					in[0], in[2] = 0, 1 // rotation amounts 0: a skipped step
					din := devUint32(t, c, in, len(in))
					dext := devUint32(t, c, nil, count*(kn+1))
					require.NoError(t, bk.BlindRotateFused(nil, sh, fs.F1, fs.F2, din, dkey, tw, twInv, dext, mu, count))
					compareWords(t, "BlindRotateFused", host32(t, dext), refBlindRotate(sh, plan, in, key, mu, count))
				})
			}
		}
	})
}

// wideTables packs the tables operand of BlindRotateWide for plan: T_1,
// T'_1, T_2, T'_2, and psiPow (PsiPowers) for a grouped kernel.
func wideTables(plan *smallntt.Plan, grouped bool) []uint64 {
	st := plan.StageTables()
	tables := slices.Concat(st[0].Twiddle, st[0].TwiddleInv, st[1].Twiddle, st[1].TwiddleInv)
	if grouped {
		tables = append(tables, PsiPowers(plan.N())...)
	}
	return tables
}

// refWide is what the wide kernel ws computes: refBlindRotateGrouped for a
// grouped kernel, refBlindRotate otherwise.
func refWide(ws WideShape, sh BootstrapShape, plan *smallntt.Plan, in []uint32, bk []uint64, mu uint32, count int) []uint32 {
	if ws.grouped() {
		return refBlindRotateGrouped(sh, plan, in, bk, mu, count)
	}
	return refBlindRotate(sh, plan, in, bk, mu, count)
}

// TestBlindRotateWide: every wide, cluster and split kernel equals the
// composed references bit for bit, like TestBlindRotateFused; the grouped
// ones (_g2, _g3) refBlindRotateGrouped, for n with every size of last
// group (G = 2: n = 9, 10; G = 3: n = 9, 10, 11). Code built for a GPU
// without clusters (before compute_90) has no cluster or split kernels.
func TestBlindRotateWide(t *testing.T) {
	bothBootstrap(t, func(t *testing.T, l *Library, bk *BootstrapKernels) {
		c := l.Context()
		rng := rand.New(rand.NewPCG(23, 24))
		clusters := clusterCode(t, l)
		for _, ws := range WideShapes() {
			if ws.BlocksPerSample() > 1 && !clusters {
				t.Logf("%s: none in code without clusters", ws.kernelName())
				continue
			}
			ns := []int{9}
			switch ws.G {
			case 2:
				ns = []int{9, 10}
			case 3:
				ns = []int{9, 10, 11}
			}
			for _, n := range ns {
				sh := fusedTestShape(FusedShape{K: ws.K, L: ws.L, F1: ws.n(), F2: 1}, n)
				sh.Grouping = ws.G
				testBlindRotateWide(t, bk, c, rng, ws, sh)
			}
		}
	})
}

// clusterCode reports whether l's kernels were compiled for a virtual
// architecture with thread block clusters (compute_90 and later), and so
// have the cluster and split kernels: true for the committed fatbin on an
// H100 or H200, false on an A100 or RTX GPU, or for a GOLDFHE_FATBIN of
// compute_80 PTX, which the driver compiles for whatever GPU runs it.
func clusterCode(t *testing.T, l *Library) bool {
	t.Helper()
	f, err := l.Function("goldfhe_mul")
	require.NoError(t, err)
	a, err := f.Attributes()
	require.NoError(t, err)
	return a.PTXVersion >= 90
}

func testBlindRotateWide(t *testing.T, bk *BootstrapKernels, c *Context, rng *rand.Rand, ws WideShape, sh BootstrapShape) {
	if got := bk.WideFor(sh); !slices.Contains(got, ws) {
		t.Fatalf("WideFor(%s, grouping %d) = %+v, want it to hold %+v", shapeName(sh), sh.Grouping, got, ws)
	}
	plan, err := smallntt.NewPlan(sh.N(), smallntt.Hybrid, ws.F1, ws.F2, ws.F3)
	require.NoError(t, err)
	tables := wideTables(plan, ws.grouped())
	if len(tables) != ws.TablesLen() {
		t.Fatalf("%+v: %d table words, TablesLen %d", ws, len(tables), ws.TablesLen())
	}
	dtab := devUint64(t, c, tables, len(tables))
	key := randomWords(rng, sh.BKLen(), true)
	dkey := devUint64(t, c, key, len(key))
	if ws.PairedKey() {
		paired, err := PairKey(sh, key)
		require.NoError(t, err)
		dkey = devUint64(t, c, paired, len(paired)) // the reference below reads key
	}
	counts := []int{1, 3, 37}
	if ws.G == 3 && testing.Short() {
		// -short: the reference's seven terms per step are slow, and a
		// batch of 37 runs the same sample loop as for G = 1 and 2.
		counts = counts[:2]
	}
	run := func(din *DeviceBuffer[uint32], dext *DeviceBuffer[uint32], mu uint32, count int) error {
		return bk.BlindRotateWide(nil, sh, ws, din, dkey, dtab, dext, mu, count)
	}
	if ws.Pre {
		// One scratch for every pass, so that the flags' reset is
		// exercised.
		sc, err := NewSplitScratch(c, sh, slices.Max(counts))
		require.NoError(t, err)
		defer sc.Free()
		run = func(din *DeviceBuffer[uint32], dext *DeviceBuffer[uint32], mu uint32, count int) error {
			return bk.BlindRotateSplit(nil, sh, ws, din, dkey, dtab, sc, dext, mu, count)
		}
		defer testBlindRotatePreErrors(t, bk, c, ws, sh, dkey, dtab, sc)
	}
	for i, count := range counts {
		t.Run(fmt.Sprintf("%s/n=%d/count=%d", ws.String(), sh.LWEDim, count), func(t *testing.T) {
			n, kn := sh.LWEDim, sh.ExtractedDim()
			mu := rng.Uint32()
			if ws.Flat && i%2 == 1 {
				mu = 1 << 29 // a gate's μ, as the engine passes: its first step has one nonzero digit row
			}
			in := randU32(rng, count*(n+1))
			in[0], in[2] = 0, 1
			groupedInputs(ws.G, sh, in)
			if ws.grouped() {
				// The last sample's last group skipped too (a Pre split
				// kernel does not wait for its flag, which must still
				// be zero for the next pass).
				last := in[(count-1)*(n+1):]
				for i := (n - 1) / ws.G * ws.G; i < n; i++ {
					last[i] = 0
				}
			}
			din := devUint32(t, c, in, len(in))
			dext := devUint32(t, c, nil, count*(kn+1))
			require.NoError(t, run(din, dext, mu, count))
			compareWords(t, ws.String(), host32(t, dext), refWide(ws, sh, plan, in, key, mu, count))
		})
	}
	if ws.Pre {
		return // testBlindRotatePreErrors
	}
	// Bad operands.
	other := sh
	other.BKLevels++
	regrouped := sh
	regrouped.Grouping = map[int]int{0: 2, 2: 3, 3: 0}[sh.Grouping]
	din := devUint32(t, c, nil, 2*(sh.LWEDim+1))
	dext := devUint32(t, c, nil, 2*(sh.ExtractedDim()+1))
	bad := map[string]error{
		"shape mismatch":    bk.BlindRotateWide(nil, other, ws, din, dkey, dtab, dext, 1, 2),
		"grouping mismatch": bk.BlindRotateWide(nil, regrouped, ws, din, dkey, dtab, dext, 1, 2),
		"short key":         bk.BlindRotateWide(nil, sh, ws, din, dkey.View(0, sh.BKLen()-1), dtab, dext, 1, 2),
		"short tables":      bk.BlindRotateWide(nil, sh, ws, din, dkey, dtab.View(0, ws.TablesLen()-1), dext, 1, 2),
		"short ext":         bk.BlindRotateWide(nil, sh, ws, din, dkey, dtab, dext.View(0, 3), 1, 2),
	}
	// Every wide-family kernel reads the key 16 bytes at a time (paired
	// loads, bulk and cp.async copies, L2 prefetches): a key at an odd word
	// is refused, for all of them (once only for the flat kernel).
	odd := devUint64(t, c, nil, sh.BKLen()+1)
	bad["key at an odd word"] = bk.BlindRotateWide(nil, sh, ws, din, odd.View(1, sh.BKLen()+1), dtab, dext, 1, 2)
	for name, err := range bad {
		if err == nil || !strings.HasPrefix(err.Error(), "kernels: ") {
			t.Errorf("%+v, %s: error %v", ws, name, err)
		}
	}
}

// groupedInputs sets the first words of in (samples of dimension sh.LWEDim
// ≥ 9) for a kernel of grouping factor G so that the grouped steps'
// special cases come up: for G = 2, group 0 of sample 0 skipped (both
// amounts 0), group 1 with amounts summing to 2N (a zero third term),
// group 2 with one amount 0; for G = 3, group 0 skipped (all three amounts
// 0), group 1 with b = 0 and a + c = 2N (zero terms u = 2, 5 and 7), group
// 2 with a + b = N, c = N and so a + b + c = 2N (a zero term u = 7).
func groupedInputs(G int, sh BootstrapShape, in []uint32) {
	step := uint32(1) << (31 - sh.LogN)
	N := uint32(sh.N())
	switch G {
	case 2:
		in[1], in[2], in[3], in[4] = 0, 3*step, (2*N-3)*step, 0
	case 3:
		in[0], in[1], in[2] = 0, 0, 0
		in[3], in[4], in[5] = 5*step, 0, (2*N-5)*step
		in[6], in[7], in[8] = 7*step, (N-7)*step, N*step
	}
}

// TestBlindRotateFusedArgumentChecks: bad shapes, short or overlapping
// buffers and a shape without a kernel are errors before any launch.
func TestBlindRotateFusedArgumentChecks(t *testing.T) {
	bothBootstrap(t, func(t *testing.T, l *Library, bk *BootstrapKernels) {
		c := l.Context()
		fs := FusedShapes()[0]
		sh := fusedTestShape(fs, 4)
		n, N, kn := sh.LWEDim, sh.N(), sh.ExtractedDim()
		const count = 2
		in := devUint32(t, c, nil, count*(n+1))
		key := devUint64(t, c, nil, sh.BKLen())
		tw := devUint64(t, c, nil, N)
		ext := devUint32(t, c, nil, count*(kn+1))
		other := sh
		other.BKLevels = 4
		cases := map[string]error{
			"no kernel for l=4": bk.BlindRotateFused(nil, other, fs.F1, fs.F2, in, key, tw, tw, ext, 1, count),
			"f1·f2 ≠ N":         bk.BlindRotateFused(nil, sh, fs.F1/2, fs.F2, in, key, tw, tw, ext, 1, count),
			"short key":         bk.BlindRotateFused(nil, sh, fs.F1, fs.F2, in, key.View(0, 5), tw, tw, ext, 1, count),
			"short table":       bk.BlindRotateFused(nil, sh, fs.F1, fs.F2, in, key, tw.View(0, N-1), tw, ext, 1, count),
			"short ext":         bk.BlindRotateFused(nil, sh, fs.F1, fs.F2, in, key, tw, tw, ext.View(0, kn), 1, count),
			"ext overlaps in":   bk.BlindRotateFused(nil, sh, fs.F1, fs.F2, in, key, tw, tw, in, 1, 1),
			"negative count":    bk.BlindRotateFused(nil, sh, fs.F1, fs.F2, in, key, tw, tw, ext, 1, -1),
		}
		for name, err := range cases {
			if err == nil {
				t.Errorf("%s: no error", name)
			} else if !strings.HasPrefix(err.Error(), "kernels: ") {
				t.Errorf("%s: error %q lacks the package prefix", name, err)
			}
		}
		if bk.Fused(other, fs.F1, fs.F2) {
			t.Error("Fused reports a kernel for l = 4")
		}
		assert.NoError(t, bk.BlindRotateFused(nil, sh, fs.F1, fs.F2, in, key, tw, tw, ext, 1, 0), "count 0")
	})
}

// fakeFused runs a goldfhe_bs_fused_* or goldfhe_bs_wide_* launch with
// refBlindRotate.
func fakeFused(g *fakeGPU, name string, grid, block dim3, a []uintptr) Result {
	if strings.HasPrefix(name, "goldfhe_bs_wide_") || strings.HasPrefix(name, "goldfhe_bs_cluster_") || strings.HasPrefix(name, "goldfhe_bs_split_") {
		return fakeWide(g, name, grid, block, a)
	}
	var fs FusedShape
	if _, err := fmt.Sscanf(strings.TrimPrefix(name, "goldfhe_bs_fused_"), "%dx%d_k%d_l%d", &fs.F1, &fs.F2, &fs.K, &fs.L); err != nil {
		return 400
	}
	if int(block.x) != fs.threads() || grid.x == 0 || uint32(a[7]) != uint32(fs.SharedBytes()) {
		return resultInvalidValue
	}
	params := unsafe.Slice((*unsafe.Pointer)(arg(a, 9)), 10)
	ptr := func(i int) uint64 { return *(*uint64)(params[i]) }
	u := func(i int) int { return int(*(*uint32)(params[i])) }
	n, beta, count := u(5), u(6), u(9)
	sh := BootstrapShape{LWEDim: n, K: fs.K, BKLevels: fs.L, BKBaseLog: beta, BKOffset: uint32(u(7))}
	for 1<<sh.LogN < fs.F1*fs.F2 {
		sh.LogN++
	}
	plan, err := smallntt.NewPlan(sh.N(), smallntt.Hybrid, fs.F1, fs.F2)
	if err != nil {
		return 400
	}
	st := plan.StageTables()[0]
	if !equalWords(fakeWords64(g, ptr(2), sh.N()), st.Twiddle) || !equalWords(fakeWords64(g, ptr(3), sh.N()), st.TwiddleInv) {
		panic("fake " + name + ": tw, twInv are not the hybrid plan's stage-1 tables")
	}
	ext := refBlindRotate(sh, plan, fakeWords32(g, ptr(0), count*(n+1)), fakeWords64(g, ptr(1), sh.BKLen()), uint32(u(8)), count)
	copy(fakeWords32(g, ptr(4), len(ext)), ext)
	return 0
}

func equalWords(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func fakeWords32(g *fakeGPU, p uint64, n int) []uint32 {
	b, ok := g.devBytes(p, 4*uint64(n))
	if !ok {
		panic(fmt.Sprintf("fake: device range %#x+%d not allocated", p, 4*n))
	}
	return unsafe.Slice((*uint32)(unsafe.Pointer(&b[0])), n)
}

func fakeWords64(g *fakeGPU, p uint64, n int) []uint64 {
	b, ok := g.devBytes(p, 8*uint64(n))
	if !ok {
		panic(fmt.Sprintf("fake: device range %#x+%d not allocated", p, 8*n))
	}
	return unsafe.Slice((*uint64)(unsafe.Pointer(&b[0])), n)
}

// fakeWide runs a goldfhe_bs_wide_* (t or flat f), goldfhe_bs_cluster_* or
// goldfhe_bs_split_* launch with refBlindRotate, or refBlindRotateGrouped
// for a name ending in _g2 or _g3.
func fakeWide(g *fakeGPU, name string, grid, block dim3, a []uintptr) Result {
	var ws WideShape
	rest, cluster := strings.CutPrefix(name, "goldfhe_bs_cluster_")
	rest, split := strings.CutPrefix(rest, "goldfhe_bs_split_")
	if !cluster && !split {
		rest = strings.TrimPrefix(name, "goldfhe_bs_wide_")
	}
	rest, pre := strings.CutSuffix(rest, "p")
	if pre && !split {
		return 400
	}
	rest, g2 := strings.CutSuffix(rest, "_g2")
	rest, g3 := strings.CutSuffix(rest, "_g3")
	grouped := g2 || g3
	var tail string
	format, last := "%dx%dx%d_k%d_l%d_t%d%s", &ws.T
	if split {
		format, last = "%dx%dx%d_k%d_l%d_c%d%s", &ws.Split
	} else if !cluster && strings.Contains(rest, "_f") {
		if !grouped {
			return 400 // the flat kernels take grouped keys only
		}
		format, ws.Flat = "%dx%dx%d_k%d_l%d_f%d%s", true
	}
	if n, _ := fmt.Sscanf(rest, format, &ws.F1, &ws.F2, &ws.F3, &ws.K, &ws.L, last, &tail); n != 6 {
		return 400 // CUDA_ERROR_NOT_FOUND: also for a suffix other than _g2, _g3
	}
	if split {
		ws.T = (ws.K + 1) * ws.n() / ws.Split
	}
	ws.Cluster = cluster
	switch {
	case g2:
		ws.G = 2
	case g3:
		ws.G = 3
	}
	if pre {
		if !grouped {
			return 400
		}
		ws.Pre = true
		return fakeSplitPre(g, ws, name, grid, block, a)
	}
	f, r := fakeWideArgs(g, ws, name, grid, block, a, 4)
	if r != 0 {
		return r
	}
	key := fakeWords64(g, f.ptr(1), f.sh.BKLen())
	if ws.PairedKey() {
		key = unpairKey(f.sh, key) // as the kernel reads it (PairKey)
	}
	ext := refWide(ws, f.sh, f.plan, fakeWords32(g, f.ptr(0), f.count*(f.sh.LWEDim+1)), key, f.mu, f.count)
	copy(fakeWords32(g, f.ptr(3), len(ext)), ext)
	return 0
}

// fakeWideLaunch is a decoded wide-family launch: its shape and hybrid
// plan, its mu and count, and its pointer arguments.
type fakeWideLaunch struct {
	sh    BootstrapShape
	plan  *smallntt.Plan
	mu    uint32
	count int
	ptr   func(i int) uint64
}

// fakeWideArgs checks a launch of kernel ws (name) like CUDA does and
// decodes its arguments: np pointers (in, bk or kp, tables, ext, …), then
// n, beta, offset, mu, count; the tables must be the plan's (wideTables).
func fakeWideArgs(g *fakeGPU, ws WideShape, name string, grid, block dim3, a []uintptr, np int) (fakeWideLaunch, Result) {
	if int(block.x) != ws.Threads() || grid.x == 0 || int(grid.x)%ws.BlocksPerSample() != 0 || uint32(a[7]) != uint32(ws.SharedBytes()) {
		return fakeWideLaunch{}, resultInvalidValue
	}
	params := unsafe.Slice((*unsafe.Pointer)(arg(a, 9)), np+5)
	u := func(i int) int { return int(*(*uint32)(params[np+i])) }
	sh := BootstrapShape{LWEDim: u(0), K: ws.K, BKLevels: ws.L, BKBaseLog: u(1), BKOffset: uint32(u(2)), Grouping: ws.G}
	for 1<<sh.LogN < ws.n() {
		sh.LogN++
	}
	plan, err := smallntt.NewPlan(sh.N(), smallntt.Hybrid, ws.F1, ws.F2, ws.F3)
	if err != nil {
		return fakeWideLaunch{}, 400
	}
	f := fakeWideLaunch{sh: sh, plan: plan, mu: uint32(u(3)), count: u(4), ptr: func(i int) uint64 { return *(*uint64)(params[i]) }}
	if !equalWords(fakeWords64(g, f.ptr(2), ws.TablesLen()), wideTables(plan, ws.grouped())) {
		panic("fake " + name + ": tables are not the hybrid plan's T_1, T'_1, T_2, T'_2 (and psiPow)")
	}
	return f, 0
}

// BenchmarkBlindRotate times the fused, wide and cluster kernels alone (no
// transfers, no key switching) on TFHELib128's shape with a random key:
// kernel time per sample, for batch sizes around the SM count; the grouped
// wide, cluster and split kernels (…_g2, …_g3) on the same samples with a
// random grouped key of each factor, for a side-by-side comparison. GPU
// only.
func BenchmarkBlindRotate(b *testing.B) {
	l := gpuLibrary(b)
	bk, err := l.BootstrapKernels()
	require.NoError(b, err)
	c := l.Context()
	sh := tfheLib128Shape(630)
	rng := rand.New(rand.NewPCG(1, 2))
	key := devUint64(b, c, randomWords(rng, sh.BKLen(), true), sh.BKLen())
	sms := c.Device().SMs
	maxCount := 32 * sms
	in := devUint32(b, c, randU32(rng, maxCount*(sh.LWEDim+1)), maxCount*(sh.LWEDim+1))
	ext := devUint32(b, c, nil, maxCount*(sh.ExtractedDim()+1))
	fplan, err := smallntt.NewPlan(1024, smallntt.Hybrid, 32, 32)
	require.NoError(b, err)
	st := fplan.StageTables()[0]
	tw, twInv := devUint64(b, c, st.Twiddle, 1024), devUint64(b, c, st.TwiddleInv, 1024)
	wplan, err := smallntt.NewPlan(1024, smallntt.Hybrid, 8, 8, 16)
	require.NoError(b, err)
	tables := devUint64(b, c, wideTables(wplan, false), 2*1024+2*128)
	// The grouped kernels (_g2, _g3): the same n = 630 key bits as 315
	// pairs or 210 triples, a random key of 945 or 1470 TRGSW samples,
	// psiPow after the twiddle tables.
	gtables := devUint64(b, c, wideTables(wplan, true), 2*1024+2*128+2*1024)
	type variant struct {
		name string
		run  func(count int) error
	}
	vs := []variant{{"fused32x32", func(count int) error {
		return bk.BlindRotateFused(nil, sh, 32, 32, in, key, tw, twInv, ext, 1<<29, count)
	}}}
	for _, ws := range bk.WideFor(sh) {
		vs = append(vs, variant{ws.String(), func(count int) error {
			return bk.BlindRotateWide(nil, sh, ws, in, key, tables, ext, 1<<29, count)
		}})
	}
	for _, g := range []int{2, 3} {
		gsh := sh
		gsh.Grouping = g
		gkey := devUint64(b, c, randomWords(rng, gsh.BKLen(), true), gsh.BKLen())
		for _, ws := range bk.WideFor(gsh) {
			if ws.Pre {
				// K' of every step, for passes of up to SMs/2 samples
				// (where the cluster kernel's range ends).
				sc, err := NewSplitScratch(c, gsh, sms/2)
				require.NoError(b, err)
				b.Cleanup(func() { sc.Free() })
				vs = append(vs, variant{ws.String(), func(count int) error {
					return bk.BlindRotateSplit(nil, gsh, ws, in, gkey, gtables, sc, ext, 1<<29, count)
				}})
				continue
			}
			vs = append(vs, variant{ws.String(), func(count int) error {
				return bk.BlindRotateWide(nil, gsh, ws, in, gkey, gtables, ext, 1<<29, count)
			}})
		}
	}
	for _, v := range vs {
		for _, count := range benchCounts([]int{1, sms / 8, sms / 4, sms / 2, 3 * sms / 4, sms, 3 * sms / 2, 2 * sms, 4 * sms, 32 * sms}) {
			if strings.HasSuffix(v.name, "p") && count > sms/2 {
				continue // beyond the scratch
			}
			b.Run(fmt.Sprintf("%s/count=%d", v.name, count), func(b *testing.B) {
				require.NoError(b, v.run(count)) // warm-up
				require.NoError(b, c.Synchronize())
				b.ResetTimer()
				for range b.N {
					require.NoError(b, v.run(count))
				}
				require.NoError(b, c.Synchronize())
				b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*count), "µs/sample")
				b.ReportMetric(float64(b.N*count)/b.Elapsed().Seconds(), "samples/s")
			})
		}
	}
}

// benchCounts returns the batch sizes of GOLDFHE_BENCH_COUNTS
// (comma-separated) when it is set, else def: for sweeps on the device
// without rebuilding the test binary.
func benchCounts(def []int) []int {
	env := os.Getenv("GOLDFHE_BENCH_COUNTS")
	if env == "" {
		return def
	}
	var out []int
	for _, f := range strings.Split(env, ",") {
		if n, err := strconv.Atoi(strings.TrimSpace(f)); err == nil && n > 0 {
			out = append(out, n)
		}
	}
	return out
}

// TestSharedCarveout: the carveout holds as many blocks as the largest one
// and no more than it needs (H100/H200: 228 KiB per SM, 1 KiB reserved per
// block).
func TestSharedCarveout(t *testing.T) {
	const perSM = 228 << 10
	for _, c := range []struct{ need, static, blocks, want int }{
		{76928, 0, 0, 67},   // wide t64 grouped, TFHELib128: two blocks
		{76928, 0, 2, 67},   // … which its registers allow too
		{68672, 0, 0, 90},   // 8 KiB less (session 15's half psiPow table): three blocks
		{68672, 0, 2, 60},   // … of which the registers allow two
		{68672, 0, 5, 90},   // more than shared memory allows: three
		{60416, 0, 0, 79},   // wide t64 plain: three blocks
		{225344, 0, 0, 97},  // split _g3: one block
		{0, 16512, 0, 98},   // static psiPow only: 13 blocks
		{300000, 0, 0, 100}, // more than an SM: the largest
		{0, 0, 0, 100},      // nothing asked: the largest (the reserve alone)
	} {
		got := sharedCarveout(c.need, c.static, 1<<10, perSM, c.blocks)
		if got != c.want {
			t.Errorf("sharedCarveout(%d, %d, %d blocks): %d%%, want %d%%", c.need, c.static, c.blocks, got, c.want)
		}
		per := c.need + c.static + 1<<10
		blocks := perSM / per
		if c.blocks > 0 {
			blocks = min(blocks, c.blocks)
		}
		if per <= perSM && got*perSM < blocks*per*100 {
			t.Errorf("sharedCarveout(%d, %d, %d blocks) = %d%% holds fewer than %d blocks", c.need, c.static, c.blocks, got, blocks)
		}
	}
	if got := sharedCarveout(1000, 0, 1024, 0, 0); got != 100 {
		t.Errorf("unknown shared memory per SM: %d%%, want 100", got)
	}
}

// TestWideCarveout: the wide kernels ask for the smallest carveout that
// keeps their blocks per SM, the split, cluster and fused kernels for the
// largest (the fake driver records the attribute).
func TestWideCarveout(t *testing.T) {
	g, l := newBootstrapFakeGPU(t)
	bk, err := l.BootstrapKernels()
	require.NoError(t, err)
	perSM := l.Context().Device().SharedPerSM
	g.mu.Lock()
	defer g.mu.Unlock()
	carve := map[string]int32{}
	for h, name := range g.funcs {
		if v, ok := g.attrs[h][funcPreferredCarveout]; ok {
			carve[name] = v
		}
	}
	seen := 0
	for ws := range bk.wide {
		want := 100
		if ws.wantsL1() {
			want = sharedCarveout(ws.SharedBytes(), 0, 1<<10, perSM, g.arch.occupancy(32, 0, ws.Threads(), ws.SharedBytes()))
			if want < 100 {
				seen++
			}
		}
		if got, ok := carve[ws.kernelName()]; !ok || int(got) != want {
			t.Errorf("%s: carveout %d%% (set: %v), want %d%%", ws.kernelName(), got, ok, want)
		}
	}
	if seen == 0 {
		t.Fatalf("no wide kernel asked for less than the largest carveout (%d shared bytes per SM)", perSM)
	}
	for fs := range bk.fused {
		if got := carve[fs.kernelName()]; got != 100 {
			t.Errorf("%s: carveout %d%%, want 100%%", fs.kernelName(), got)
		}
	}
}

// TestCarveoutRegisterLimited: a kernel whose registers hold fewer blocks
// than its shared memory would gets the carveout for the blocks that run,
// not for those its shared memory allows (the fake driver's occupancy
// counts both).
func TestCarveoutRegisterLimited(t *testing.T) {
	g, l := newBootstrapFakeGPU(t)
	bk, err := l.BootstrapKernels()
	require.NoError(t, err)
	perSM := l.Context().Device().SharedPerSM
	ws := WideShape{F1: 8, F2: 8, F3: 16, K: 1, L: 3, T: 64, G: 2}
	k := bk.wide[ws]
	if k == nil {
		t.Fatalf("no kernel for %+v", ws)
	}
	h, err := k.f.handle("test")
	require.NoError(t, err)
	const need = 68672 // three blocks per SM by shared memory
	for _, c := range []struct{ regs, blocks int }{{32, 3}, {80, 2}, {168, 1}} {
		g.mu.Lock()
		g.attrs[h][funcNumRegs] = int32(c.regs)
		g.mu.Unlock()
		ok, err := bk.prepareSharedKernel(k.f, need, ws.Threads())
		if err != nil || !ok {
			t.Fatalf("%d registers: prepareSharedKernel: %v, %v", c.regs, ok, err)
		}
		g.mu.Lock()
		got := g.attrs[h][funcPreferredCarveout]
		g.mu.Unlock()
		if want := sharedCarveout(need, 0, 1<<10, perSM, c.blocks); int(got) != want {
			t.Errorf("%d registers (%d blocks per SM): carveout %d%%, want %d%%", c.regs, c.blocks, got, want)
		}
	}
}

// TestWideWave: every wide kernel of one block per sample has a wave of
// whole SMs' worth of blocks within what its shared memory and threads
// allow per SM, and on the fake device exactly the fake's occupancy;
// cluster and split kernels and unknown shapes are argument errors. On the
// GPU it logs each kernel's blocks per SM.
func TestWideWave(t *testing.T) {
	bothBootstrap(t, func(t *testing.T, l *Library, bk *BootstrapKernels) {
		info := l.Context().Device()
		fake := strings.HasSuffix(t.Name(), "/fake")
		n := 0
		for _, ws := range WideShapes() {
			if bk.wide[ws] == nil {
				continue // not in this fatbin
			}
			got, err := bk.WideWave(ws)
			if ws.BlocksPerSample() != 1 {
				if !errors.Is(err, ErrArgument) {
					t.Errorf("%s (%d blocks per sample): WideWave = %d, %v, want ErrArgument", ws.kernelName(), ws.BlocksPerSample(), got, err)
				}
				continue
			}
			require.NoError(t, err)
			n++
			perSM := got / info.SMs
			bySmem := info.SharedPerSM / (ws.SharedBytes() + 1<<10)
			byThreads := 2048 / ws.Threads()
			if got%info.SMs != 0 || perSM < 1 || perSM > min(bySmem, byThreads, 32) {
				t.Errorf("%s: WideWave %d samples, want 1 to min(%d by shared memory, %d by threads) blocks per SM on each of %d SMs", ws.kernelName(), got, bySmem, byThreads, info.SMs)
			}
			if fake {
				if want := fakeArchs[info.Arch()].occupancy(32, 0, ws.Threads(), ws.SharedBytes()) * info.SMs; got != want {
					t.Errorf("%s: WideWave %d on the fake device, want %d", ws.kernelName(), got, want)
				}
			} else {
				t.Logf("%s: %d blocks per SM, %d samples per wave", ws.kernelName(), perSM, got)
			}
		}
		if n == 0 {
			t.Fatal("no wide kernels of one block per sample in this library")
		}
		bad := WideShape{F1: 3, F2: 3, F3: 3, K: 1, L: 1, T: 1}
		if _, err := bk.WideWave(bad); !errors.Is(err, ErrArgument) {
			t.Errorf("WideWave(%+v) = %v, want ErrArgument", bad, err)
		}
	})
}
