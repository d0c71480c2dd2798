package kernels

import (
	"errors"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/goldfhe/goldfhe/smallntt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Grouped blind rotation (grouping factors 2 and 3; bootstrap_step.cuh):
// the references, and the checks of the wrappers' grouping rules. The
// grouped wide, cluster and split kernels themselves are compared with
// refBlindRotateGrouped in TestBlindRotateWide.

// refDecompose is refRotateDecompose without the rotation: row c·l+i holds
// digit i of acc_c + offset, the input of every external product of a
// grouped step.
func refDecompose(sh BootstrapShape, acc []uint32, count int) []uint64 {
	N, k, l, beta := sh.N(), sh.K, sh.BKLevels, sh.BKBaseLog
	dec := make([]uint64, count*sh.Rows()*N)
	for s := range count {
		for c := 0; c <= k; c++ {
			p := acc[(s*(k+1)+c)*N : (s*(k+1)+c+1)*N]
			for j := range N {
				w := p[j] + sh.BKOffset
				for lv := range l {
					d := int64(w>>(32-(lv+1)*beta)&(1<<beta-1)) - 1<<(beta-1)
					dec[((s*(k+1)+c)*l+lv)*N+j] = smallntt.FromInt64(d)
				}
			}
		}
	}
	return dec
}

// monomialMinusOne returns the NTT-domain X^e − 1 (e < 2N) by plan's
// forward transform of the polynomial X^e = ±X^(e mod N).
func monomialMinusOne(plan *smallntt.Plan, e int) []uint64 {
	N := plan.N()
	x := make([]uint64, N)
	if e < N {
		x[e] = 1
	} else {
		x[e-N] = smallntt.P - 1
	}
	plan.Forward(x, x)
	for j := range x {
		x[j] = smallntt.Sub(x[j], 1)
	}
	return x
}

// refBlindRotateGrouped is the grouped blind rotation (BlindRotateWide with
// a WideShape of G = sh.Grouping, package tfhe's grouped engine) composed
// of the per-step references and plan's transforms: per group g of the key
// bits G·g … G·g + r − 1 (r = G, or n mod G for the last), if not all its
// rotation amounts are 0, ACC += Σ_u INTT(NTT(X^{e_u}) −
// 1)·(Dec(ACC) ⊡ BK_{(2^G−1)g+u−1})) for u < 2^r, with e_u the sum of the
// amounts picked by the bits of u. Terms with e_u = 0 are computed too
// (their factor is 0), so the kernels' skipping them is checked.
func refBlindRotateGrouped(sh BootstrapShape, plan *smallntt.Plan, in []uint32, bk []uint64, mu uint32, count int) []uint32 {
	N, G := sh.N(), sh.Grouping
	return refGroupedSteps(sh, plan, in, mu, count, func(_, g int, dec []uint64, a []uint32) []uint64 {
		y := make([]uint64, (sh.K+1)*N)
		for u := 1; u < 1<<len(a); u++ {
			e := 0
			for j := range a {
				if u>>j&1 == 1 {
					e += int(a[j])
				}
			}
			m := monomialMinusOne(plan, e%(2*N))
			prod := refMAC(sh, dec, bk, (1<<G-1)*g+u-1, 1)
			for i := range y {
				y[i] = smallntt.Add(y[i], smallntt.Mul(m[i%N], prod[i]))
			}
		}
		return y
	})
}

// refGroupedSteps is the grouped blind rotation's loop: for each group g
// of sample s whose amounts a are not all 0, ACC += the inverse transform
// of step(s, g, dec, a), dec the transformed digits of the sample's ACC.
func refGroupedSteps(sh BootstrapShape, plan *smallntt.Plan, in []uint32, mu uint32, count int, step func(s, g int, dec []uint64, a []uint32) []uint64) []uint32 {
	n, N, k1, rows := sh.LWEDim, sh.N(), sh.K+1, sh.Rows()
	G := sh.Grouping
	abar, acc := refInit(sh, in, mu, count)
	for g := 0; G*g < n; g++ {
		r := min(G, n-G*g)
		dec := refDecompose(sh, acc, count)
		for i := range count * rows {
			p := dec[i*N : (i+1)*N]
			plan.Forward(p, p)
		}
		for s := range count {
			a := abar[s*n+G*g : s*n+G*g+r]
			if !slices.ContainsFunc(a, func(v uint32) bool { return v != 0 }) {
				continue
			}
			y := step(s, g, dec[s*rows*N:(s+1)*rows*N], a)
			for c := range k1 {
				p := y[c*N : (c+1)*N]
				plan.Inverse(p, p)
			}
			for i, v := range y {
				acc[s*k1*N+i] += uint32(smallntt.ToInt64Centered(v))
			}
		}
	}
	return refExtract(sh, acc, count)
}

// naiveNegacyclic returns a·b mod (X^N + 1, p), schoolbook.
func naiveNegacyclic(a, b []uint64) []uint64 {
	N := len(a)
	out := make([]uint64, N)
	for i, x := range a {
		for j, y := range b {
			v := smallntt.Mul(x, y)
			if i+j < N {
				out[i+j] = smallntt.Add(out[i+j], v)
			} else {
				out[i+j-N] = smallntt.Sub(out[i+j-N], v)
			}
		}
	}
	return out
}

// naiveBlindRotateGrouped computes the grouped blind rotation of one
// sample from its definition, in coefficient form, without transforms:
// keys[t][r][c] is coefficient-form polynomial (r, c) of TRGSW sample t.
// Per group: the signed digits of ACC + offset, P_{u,c} = Σ_r D_r·K_u[r][c]
// and ACC_c += centred(Σ_u (X^{e_u} − 1)·P_{u,c}), all mod (X^N + 1, p).
func naiveBlindRotateGrouped(sh BootstrapShape, ct []uint32, keys [][][][]uint64, mu uint32) []uint32 {
	n, N, k, l, beta := sh.LWEDim, sh.N(), sh.K, sh.BKLevels, sh.BKBaseLog
	G := sh.Grouping
	twoN := 2 * N
	abar := make([]int, n)
	for i := range abar {
		abar[i] = int(refModSwitch(ct[i], sh.LogN+1))
	}
	_, acc := refInit(sh, ct, mu, 1)
	col := func(c int) []uint32 { return acc[c*N : (c+1)*N] }
	for g := 0; G*g < n; g++ {
		r := min(G, n-G*g)
		if !slices.ContainsFunc(abar[G*g:G*g+r], func(a int) bool { return a != 0 }) {
			continue
		}
		var digits [][]uint64 // row c·l + i
		for c := 0; c <= k; c++ {
			for i := range l {
				d := make([]uint64, N)
				for j, v := range col(c) {
					w := v + sh.BKOffset
					x := int64(w>>(32-(i+1)*beta)&(1<<beta-1)) - 1<<(beta-1)
					d[j] = smallntt.FromInt64(x)
				}
				digits = append(digits, d)
			}
		}
		sum := make([][]uint64, k+1)
		for c := range sum {
			sum[c] = make([]uint64, N)
		}
		for u := 1; u < 1<<r; u++ {
			e := 0
			for j := range r {
				if u>>j&1 == 1 {
					e += abar[G*g+j]
				}
			}
			e %= twoN
			key := keys[(1<<G-1)*g+u-1]
			for c := 0; c <= k; c++ {
				p := make([]uint64, N)
				for row, d := range digits {
					q := naiveNegacyclic(d, key[row][c])
					for j := range p {
						p[j] = smallntt.Add(p[j], q[j])
					}
				}
				// (X^e − 1)·p: coefficient j of X^e·p is ±p[(j − e) mod N].
				for j := range N {
					i := ((j-e)%twoN + twoN) % twoN
					rot := p[i%N]
					if i >= N {
						rot = smallntt.Neg(rot)
					}
					sum[c][j] = smallntt.Add(sum[c][j], smallntt.Sub(rot, p[j]))
				}
			}
		}
		for c := 0; c <= k; c++ {
			for j, v := range sum[c] {
				col(c)[j] += uint32(smallntt.ToInt64Centered(v))
			}
		}
	}
	return refExtract(sh, acc, 1)
}

// TestRefBlindRotateGroupedNaive: the grouped reference equals the naive
// coefficient-form computation on random keys (coefficients anywhere mod
// p), for grouping factors 2 and 3 and n with every size of last group,
// with groups whose amounts are all 0 (skipped), one of them 0, and two
// summing to 2N (a zero term).
func TestRefBlindRotateGroupedNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	shapes := []BootstrapShape{ // N = 256, the smallest smallntt plan
		{LogN: 8, K: 1, BKLevels: 3, BKBaseLog: 7, KSLevels: 8, KSBaseLog: 2},  // TFHELib128's k, l, β
		{LogN: 8, K: 3, BKLevels: 2, BKBaseLog: 10, KSLevels: 5, KSBaseLog: 3}, // TFHErsDefault's
		bsTestShapes[2], // the toy set: k = 2, l = 3, β = 6
		{LogN: 8, K: 1, BKLevels: 1, BKBaseLog: 32, KSLevels: 8, KSBaseLog: 2}, // l·β = 32
	}
	for i, base := range shapes {
		for _, c := range []struct{ g, n int }{{2, 7}, {2, 8}, {3, 7}, {3, 8}, {3, 9}} {
			if testing.Short() && i > 0 && c.g == 3 && c.n != 8 {
				continue // -short: every last group on the first shape only
			}
			n := c.n
			sh := base
			sh.LWEDim, sh.Grouping = n, c.g
			sh.BKOffset = refOffset(sh.BKLevels, sh.BKBaseLog)
			sh.KSOffset = refOffset(sh.KSLevels, sh.KSBaseLog)
			t.Run(fmt.Sprintf("%s/g=%d/n=%d", shapeName(sh), c.g, n), func(t *testing.T) {
				N, k1, rows := sh.N(), sh.K+1, sh.Rows()
				plan, err := smallntt.NewPlan(N, smallntt.Butterfly) // any plan: one NTT-domain order
				require.NoError(t, err)
				keys := make([][][][]uint64, sh.BKSamples())
				var bk []uint64
				for i := range keys {
					keys[i] = make([][][]uint64, rows)
					for r := range rows {
						keys[i][r] = make([][]uint64, k1)
						for c := range k1 {
							p := randomWords(rng, N, true)
							keys[i][r][c] = p
							q := make([]uint64, N)
							plan.Forward(q, p)
							bk = append(bk, q...)
						}
					}
				}
				if len(bk) != sh.BKLen() {
					t.Fatalf("key of %d words, BKLen %d", len(bk), sh.BKLen())
				}
				const count = 3
				mu := rng.Uint32()
				in := randU32(rng, count*(n+1))
				step := uint32(1) << (32 - sh.LogN - 1) // one unit of ā
				if c.g == 2 {
					in[0], in[1] = 0, 0      // group 0 of sample 0 skipped
					in[2], in[3] = 0, 5*step // only its second bit
					in[4], in[5] = 7*step, uint32(2*N-7)*step
				} else {
					in[0], in[1], in[2] = 0, 0, 0                                  // group 0 skipped
					in[3], in[4], in[5] = 0, 5*step, 0                             // only its second bit
					in[n+1], in[n+2], in[n+3] = 7*step, 9*step, uint32(2*N-7)*step // a + c = 2N
				}
				got := refBlindRotateGrouped(sh, plan, in, bk, mu, count)
				for s := range count {
					want := naiveBlindRotateGrouped(sh, in[s*(n+1):(s+1)*(n+1)], keys, mu)
					kn := sh.ExtractedDim()
					compareWords(t, fmt.Sprintf("sample %d", s), got[s*(kn+1):(s+1)*(kn+1)], want)
				}
				// The grouped rotation differs from the plain one on the same
				// key words (a check that the test sees the grouping at all).
				plain := sh
				plain.Grouping = 0
				if slices.Equal(got, refBlindRotate(plain, plan, in, bk[:plain.BKLen()], mu, count)) {
					t.Error("grouped and plain blind rotation agree")
				}
			})
		}
	}
}

// TestPsiPowers: PsiPowers(n) holds ψ^i for i < 2n with ψ = smallntt.Psi(n),
// and panics for a bad n.
func TestPsiPowers(t *testing.T) {
	for n := 32; n <= 1<<13; n *= 2 {
		got := PsiPowers(n)
		psi := smallntt.Psi(n)
		if len(got) != 2*n {
			t.Fatalf("PsiPowers(%d): %d words", n, len(got))
		}
		for _, i := range []int{0, 1, 2, n - 1, n, n + 1, 2*n - 1} {
			if want := smallntt.Exp(psi, uint64(i)); got[i] != want {
				t.Errorf("PsiPowers(%d)[%d] = %#x, want %#x", n, i, got[i], want)
			}
		}
		for i := 1; i < len(got); i++ {
			if got[i] != smallntt.Mul(got[i-1], psi) {
				t.Fatalf("PsiPowers(%d)[%d] is not ψ·[%d]", n, i, i-1)
			}
		}
		if got[n] != smallntt.P-1 {
			t.Errorf("PsiPowers(%d)[%d] = %#x, want −1", n, n, got[n])
		}
	}
	for _, n := range []int{0, 16, 48, 1 << 14} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("PsiPowers(%d) did not panic", n)
				}
			}()
			PsiPowers(n)
		}()
	}
}

// TestBootstrapShapeGrouping: BKSamples and BKLen for each grouping, and
// Check's range.
func TestBootstrapShapeGrouping(t *testing.T) {
	sh := tfheLib128Shape(630)
	for _, c := range []struct{ n, grouping, samples int }{
		{630, 0, 630}, {630, 1, 630}, {630, 2, 945}, {631, 2, 946}, {1, 2, 1}, {2, 2, 3}, {3, 2, 4}, {805, 2, 1207},
		{630, 3, 1470}, {631, 3, 1471}, {632, 3, 1473}, {1, 3, 1}, {2, 3, 3}, {3, 3, 7}, {805, 3, 1877}, {500, 3, 1165},
	} {
		s := sh
		s.LWEDim, s.Grouping = c.n, c.grouping
		if got := s.BKSamples(); got != c.samples {
			t.Errorf("n = %d, grouping %d: BKSamples %d, want %d", c.n, c.grouping, got, c.samples)
		}
		if got, want := s.BKLen(), c.samples*6*2*1024; got != want {
			t.Errorf("n = %d, grouping %d: BKLen %d, want %d", c.n, c.grouping, got, want)
		}
		assert.NoErrorf(t, s.Check(), "n = %d, grouping %d", c.n, c.grouping)
	}
	for _, g := range []int{-1, 4, 5} {
		s := sh
		s.Grouping = g
		if err := s.Check(); err == nil || !strings.HasPrefix(err.Error(), "kernels: ") {
			t.Errorf("grouping %d: Check = %v", g, err)
		}
	}
}

// TestWideShapesGrouped: every plain wide, cluster or split kernel has a
// grouped twin for G = 2 (_g2) and G = 3 (_g3) with the same launch shape,
// 2N more table words and the psiPow table's shared memory (and a split
// kernel's larger key buffers); WideFor picks by grouping.
func TestWideShapesGrouped(t *testing.T) {
	byG := map[int][]WideShape{}
	for _, ws := range WideShapes() {
		if ws.Pre || ws.Flat {
			continue // TestPreShapes, TestFlatShapes
		}
		switch ws.G {
		case 0:
		case 2, 3:
			if !strings.HasSuffix(ws.kernelName(), fmt.Sprintf("_g%d", ws.G)) {
				t.Errorf("%+v: kernel name %s", ws, ws.kernelName())
			}
		default:
			t.Errorf("%+v: G = %d", ws, ws.G)
		}
		byG[ws.G] = append(byG[ws.G], ws)
	}
	for _, G := range []int{2, 3} {
		if len(byG[0]) != len(byG[G]) {
			t.Fatalf("%d plain and %d grouped (G = %d) shapes", len(byG[0]), len(byG[G]), G)
		}
		for _, ws := range byG[0] {
			g := ws
			g.G = G
			if !slices.Contains(byG[G], g) {
				t.Errorf("%+v has no grouped twin for G = %d", ws, G)
				continue
			}
			// A grouped split kernel has a producer warp more, and for
			// G = 3 as many combiners as compute threads.
			more := 0
			if ws.Split != 0 {
				more = 32
				if G == 3 {
					more += ws.T
				}
			}
			if g.kernelName() != ws.kernelName()+fmt.Sprintf("_g%d", G) || g.Threads() != ws.Threads()+more || g.BlocksPerSample() != ws.BlocksPerSample() {
				t.Errorf("%+v: grouped twin %s differs in launch shape", ws, g.kernelName())
			}
			if d := g.TablesLen() - ws.TablesLen(); d != 2*ws.n() {
				t.Errorf("%s: %d more table words, want 2N = %d", g.kernelName(), d, 2*ws.n())
			}
			// psiPow; a split kernel's grouped twin keeps only its own
			// coefficients of ACC, and key buffers for 2^G − 1 TRGSW
			// samples: two, or one where two would pass 227 KiB
			// (bss_shared).
			want := (2*ws.n() + 16) * 8
			if c := ws.Split; c != 0 {
				k1, own := ws.K+1, ws.n()/c
				slice := k1 * ws.L * k1 * own * 8 // one TRGSW's words per block
				bufs := 2
				if G == 3 && ws.SharedBytes()+want+2*6*slice+slice-k1*(ws.n()-own)*4 > 227<<10 {
					bufs = 1
				}
				want += bufs*(1<<G-1)*slice - 2*slice - k1*(ws.n()-own)*4
				if G == 3 {
					want += slice // K'
				}
			}
			if d := g.SharedBytes() - ws.SharedBytes(); d != want {
				t.Errorf("%s: %d more shared bytes, want %d", g.kernelName(), d, want)
			}
			if g.SharedBytes() > 227<<10 {
				t.Errorf("%s: %d shared bytes, more than a block of sm_90 may have", g.kernelName(), g.SharedBytes())
			}
		}
	}
	// bsw_shared, bsc_shared and bss_shared, as the comments of
	// bootstrap_fused.cuh, bootstrap_cluster.cuh and bootstrap_split.cuh
	// give them.
	for name, want := range map[string]int{
		"goldfhe_bs_wide_8x8x16_k1_l3_t64":        60416,
		"goldfhe_bs_wide_8x8x16_k1_l3_t64_g2":     76928,
		"goldfhe_bs_wide_8x8x16_k1_l3_t64_g3":     76928,
		"goldfhe_bs_wide_8x8x16_k1_l3_f256_g3":    76800,
		"goldfhe_bs_cluster_8x8x16_k1_l3_t128":    38912,
		"goldfhe_bs_cluster_8x8x16_k1_l3_t128_g2": 55424,
		"goldfhe_bs_cluster_8x8x16_k1_l3_t128_g3": 55424,
		"goldfhe_bs_split_8x8x16_k1_l3_c8":        56256,
		"goldfhe_bs_split_8x8x16_k1_l3_c8_g2":     114752,
		"goldfhe_bs_split_8x8x16_k1_l3_c8_g3":     225344,
		"goldfhe_bs_split_8x8x16_k1_l2_c8_g3":     159552,
		"goldfhe_bs_split_8x8x8_k3_l2_c8_g3":      158144, // one key buffer
	} {
		i := slices.IndexFunc(WideShapes(), func(ws WideShape) bool { return ws.kernelName() == name })
		if i < 0 {
			t.Errorf("no shape named %s", name)
		} else if got := WideShapes()[i].SharedBytes(); got != want {
			t.Errorf("%s: SharedBytes %d, want %d", name, got, want)
		}
	}
}

// TestFlatShapes: each flat kernel (bsw_run_flat) is a grouped twin of a
// t64 wide kernel with (k+1)·N/F1 threads, as many samples per block, the
// same tables, and 128 bytes less shared memory (psiPow unpadded), few
// enough for three blocks in the 228 KiB of an sm_90 SM (1 KiB reserved
// per block); the name carries _f<threads>.
func TestFlatShapes(t *testing.T) {
	n := 0
	for _, ws := range WideShapes() {
		if !ws.Flat {
			continue
		}
		n++
		twin := ws
		twin.Flat, twin.T = false, ws.n()/16
		if !slices.Contains(WideShapes(), twin) {
			t.Errorf("%s: no t%d twin", ws.kernelName(), twin.T)
			continue
		}
		if ws.G != 2 && ws.G != 3 {
			t.Errorf("%s: G = %d, want 2 or 3", ws.kernelName(), ws.G)
		}
		if want := (ws.K + 1) * ws.n() / ws.F1; ws.Threads() != want || ws.T != want {
			t.Errorf("%s: %d threads (T = %d), want (k+1)N/F1 = %d", ws.kernelName(), ws.Threads(), ws.T, want)
		}
		if want := fmt.Sprintf("goldfhe_bs_wide_%dx%dx%d_k%d_l%d_f%d_g%d", ws.F1, ws.F2, ws.F3, ws.K, ws.L, ws.T, ws.G); ws.kernelName() != want {
			t.Errorf("kernel name %s, want %s", ws.kernelName(), want)
		}
		if ws.TablesLen() != twin.TablesLen() || ws.BlocksPerSample() != 1 {
			t.Errorf("%s: %d table words, %d blocks per sample; twin %d, 1", ws.kernelName(), ws.TablesLen(), ws.BlocksPerSample(), twin.TablesLen())
		}
		if d := twin.SharedBytes() - ws.SharedBytes(); d != 128 {
			t.Errorf("%s: %d shared bytes less than %s, want 128", ws.kernelName(), d, twin.kernelName())
		}
		if 3*(ws.SharedBytes()+1<<10) > 228<<10 && ws.n() == 1024 && ws.L == 3 {
			t.Errorf("%s: %d shared bytes, three blocks do not fit in 228 KiB", ws.kernelName(), ws.SharedBytes())
		}
	}
	if n == 0 {
		t.Fatal("no flat shapes")
	}
}

// TestPairKey: PairKey puts word c of position i of each TRGSW row at
// (k+1)·i + c of the row, for every k and grouping, leaves its input
// alone, and refuses a key of another length or an invalid shape; every
// flat kernel reads its key so (PairedKey), no other does.
func TestPairKey(t *testing.T) {
	for _, ws := range WideShapes() {
		if ws.PairedKey() != ws.Flat {
			t.Errorf("%s: PairedKey %v, Flat %v", ws.kernelName(), ws.PairedKey(), ws.Flat)
		}
	}
	rng := rand.New(rand.NewPCG(7, 8))
	for _, k := range []int{1, 2, 3} {
		for _, g := range []int{0, 2, 3} {
			sh := fusedTestShape(FusedShape{K: k, L: 2, F1: 32, F2: 1}, 5)
			sh.Grouping = g
			key := randomWords(rng, sh.BKLen(), true)
			orig := slices.Clone(key)
			got, err := PairKey(sh, key)
			require.NoErrorf(t, err, "k = %d, grouping %d", k, g)
			if !slices.Equal(key, orig) {
				t.Fatalf("k = %d, grouping %d: PairKey changed its input", k, g)
			}
			if back := unpairKey(sh, got); !slices.Equal(back, key) {
				t.Fatalf("k = %d, grouping %d: unpairKey(PairKey(key)) differs from key", k, g)
			}
			cols, n := k+1, sh.N()
			for row := 0; row < sh.BKLen()/(cols*n); row++ {
				for c := range cols {
					for i := range n {
						if w, want := got[row*cols*n+i*cols+c], key[row*cols*n+c*n+i]; w != want {
							t.Fatalf("k = %d, grouping %d, row %d, column %d, position %d: %#x, want %#x", k, g, row, c, i, w, want)
						}
					}
				}
			}
		}
	}
	sh := fusedTestShape(FusedShape{K: 1, L: 3, F1: 32, F2: 1}, 5)
	if _, err := PairKey(sh, make([]uint64, sh.BKLen()-1)); !errors.Is(err, ErrArgument) {
		t.Errorf("a short key: %v, want ErrArgument", err)
	}
	bad := sh
	bad.LogN = 20
	if _, err := PairKey(bad, nil); !errors.Is(err, ErrArgument) {
		t.Errorf("an invalid shape: %v, want ErrArgument", err)
	}
}

// unpairKey is PairKey's inverse (the fake launcher reads a flat
// kernel's key back in sh's layout with it).
func unpairKey(sh BootstrapShape, paired []uint64) []uint64 {
	cols, n := sh.K+1, sh.N()
	out := make([]uint64, len(paired))
	for row := 0; row < len(paired); row += cols * n {
		for i := range n {
			for c := range cols {
				out[row+c*n+i] = paired[row+i*cols+c]
			}
		}
	}
	return out
}

// TestGroupedKeyRules: a grouped key runs only on the grouped wide,
// cluster and split kernels of its grouping factor. The fused kernels and
// MAC refuse it, Fused reports false, WideFor returns exactly the shapes
// of its factor for it (and none of them for a plain key or another
// factor), and BlindRotateWide refuses a shape of another grouping.
func TestGroupedKeyRules(t *testing.T) {
	bothBootstrap(t, func(t *testing.T, l *Library, bk *BootstrapKernels) {
		c := l.Context()
		fs := FusedShapes()[0]
		plain := fusedTestShape(fs, 5)
		shapes := []BootstrapShape{plain}
		for _, g := range []int{2, 3} {
			grouped := plain
			grouped.Grouping = g
			shapes = append(shapes, grouped)
		}
		n, N, kn := plain.LWEDim, plain.N(), plain.ExtractedDim()
		const count = 2
		maxLen := 0
		for _, sh := range shapes {
			maxLen = max(maxLen, sh.BKLen())
		}
		in := devUint32(t, c, nil, count*(n+1))
		key := devUint64(t, c, nil, maxLen)
		tw := devUint64(t, c, nil, 2*N+2*N+2*N)
		ext := devUint32(t, c, nil, count*(kn+1))
		dec := devUint64(t, c, nil, count*plain.Rows()*N)
		prod := devUint64(t, c, nil, count*(plain.K+1)*N)
		if !bk.Fused(plain, fs.F1, fs.F2) {
			t.Errorf("Fused: false for a plain key")
		}
		for _, grouped := range shapes[1:] {
			if bk.Fused(grouped, fs.F1, fs.F2) {
				t.Errorf("Fused: true for a key of grouping %d", grouped.Grouping)
			}
			for name, err := range map[string]error{
				"BlindRotateFused": bk.BlindRotateFused(nil, grouped, fs.F1, fs.F2, in, key, tw, tw, ext, 1, count),
				"MAC":              bk.MAC(nil, grouped, dec, key, prod, 0, count),
			} {
				if err == nil || !strings.HasPrefix(err.Error(), "kernels: ") || !strings.Contains(err.Error(), "grouped bootstrapping keys need a wide or cluster kernel") {
					t.Errorf("%s with a key of grouping %d: %v", name, grouped.Grouping, err)
				}
			}
		}
		for _, sh := range shapes {
			ws := bk.WideFor(sh)
			if len(ws) == 0 {
				t.Fatalf("WideFor(grouping %d) is empty", sh.Grouping)
			}
			for _, w := range ws {
				if w.G != sh.Grouping {
					t.Errorf("WideFor(grouping %d) holds %s", sh.Grouping, w.kernelName())
				}
				for _, g := range []int{0, 2, 3} {
					if g == w.G {
						continue
					}
					other := w
					other.G = g
					err := bk.BlindRotateWide(nil, sh, other, in, key, tw, ext, 1, count)
					if err == nil || !strings.HasPrefix(err.Error(), "kernels: ") {
						t.Errorf("BlindRotateWide(%s) on a key of grouping %d: %v", other.kernelName(), sh.Grouping, err)
					}
				}
			}
		}
		// A key of another grouping is too short for a grouped kernel
		// (BKSamples: n = 5 is 5, 7 or 10 TRGSW samples).
		for _, sh := range shapes[1:] {
			ws := bk.WideFor(sh)[0]
			short := shapes[sh.Grouping-2] // plain for 2, grouping 2 for 3
			err := bk.BlindRotateWide(nil, sh, ws, in, key.View(0, short.BKLen()), tw, ext, 1, count)
			if err == nil || !strings.Contains(err.Error(), "bk") {
				t.Errorf("BlindRotateWide(%s) with a grouping-%d key's length: %v", ws.kernelName(), short.Grouping, err)
			}
		}
	})
}

// brv returns the reversal of the low b bits of x.
func brv(x, b int) int { return int(bits.Reverse32(uint32(x)) >> (32 - b)) }

// TestGroupedFactorTable: the kernels' factor of term u at position pos,
// psiPow[(e·(2·brv(pos) + 1)) mod 2N] − 1 (bsf_mac_group_at), is the
// NTT-domain X^e − 1 of every smallntt plan of size N; and bsg_pad spreads
// the words a half-warp reads over distinct bank pairs.
func TestGroupedFactorTable(t *testing.T) {
	for _, N := range []int{512, 1024} {
		logN := bits.TrailingZeros(uint(N))
		psiPow := PsiPowers(N)
		plan, err := smallntt.DefaultPlan(N)
		require.NoError(t, err)
		for _, e := range []int{1, 2, 3, 7, N - 1, N, N + 1, 2*N - 1} {
			want := monomialMinusOne(plan, e)
			for pos := range N {
				if got := psiPow[e*(2*brv(pos, logN)+1)%(2*N)] - 1; got != want[pos] {
					t.Fatalf("N = %d, e = %d, pos %d: %#x, want %#x", N, e, pos, got, want[pos])
				}
			}
			// Bank pairs (64-bit words: word w in banks 2w, 2w+1 mod 32) of
			// the padded words one half-warp reads, positions 32q + j.
			pad := func(i int) int { return i + i>>(logN-3) }
			for q := range N / 32 {
				for half := range 2 {
					banks := map[int]int{}
					for j := 16 * half; j < 16*half+16; j++ {
						i := e * (2*brv(32*q+j, logN) + 1) % (2 * N)
						if prev, ok := banks[pad(i)%16]; ok && prev != i {
							t.Fatalf("N = %d, e = %d, q = %d: words %d and %d share a bank pair", N, e, q, prev, i)
						}
						banks[pad(i)%16] = i
					}
				}
			}
		}
	}
}

// TestSplitLWEDimLimit: a split kernel keeps the sample's amounts in
// shared memory (BSS_CT_WORDS), so it fits shapes of n <= splitCTWords
// only; the wide and cluster kernels take any n.
func TestSplitLWEDimLimit(t *testing.T) {
	for _, ws := range WideShapes() {
		g := ws.G
		if g == 0 {
			g = 1
		}
		sh := BootstrapShape{LogN: bits.Len(uint(ws.n())) - 1, K: ws.K, BKLevels: ws.L, BKBaseLog: 32 / ws.L, Grouping: g}
		for _, n := range []int{1, 630, splitCTWords, splitCTWords + 1, 4096} {
			sh.LWEDim = n
			want := ws.Split == 0 || n <= splitCTWords
			if got := ws.fits(sh); got != want {
				t.Errorf("%s: fits(n = %d) = %v, want %v", ws, n, got, want)
			}
		}
	}
}
