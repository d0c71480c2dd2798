package gpuntt

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/goldfhe/goldfhe/kernels"
	"github.com/goldfhe/goldfhe/smallntt"
	"github.com/stretchr/testify/require"
)

// openOrSkip opens GPU 0 or skips, saying why.
func openOrSkip(t testing.TB) *Device {
	t.Helper()
	d, err := Open(0)
	if err != nil {
		t.Skipf("gpuntt: no usable GPU: %v", err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// factorisations returns every factorisation of n into the small sizes 4,
// 8, 16, 32 and 64 in stage order (the compositions of log2 n into parts 2
// to 6: 12, 18, 29, 45 and 71 for 256 to 4096), as smallntt.NewPlan takes
// them.
func factorisations(n int) [][]int {
	if n == 1 {
		return [][]int{nil}
	}
	var out [][]int
	for f := 4; f <= 64 && f <= n; f *= 2 {
		if n%f == 0 {
			for _, rest := range factorisations(n / f) {
				out = append(out, append([]int{f}, rest...))
			}
		}
	}
	return out
}

// testPlans lists every CPU plan the GPU must reproduce: the butterfly and
// the matrix variants, with and without merging, in every factorisation of
// every size, and the hybrid shapes.
func testPlans(t testing.TB) []*smallntt.Plan {
	var plans []*smallntt.Plan
	add := func(n int, v smallntt.Variant, f ...int) {
		p, err := smallntt.NewPlan(n, v, f...)
		require.NoErrorf(t, err, "NewPlan(%d, %v, %v)", n, v, f)
		plans = append(plans, p)
	}
	for _, n := range smallntt.Sizes {
		add(n, smallntt.Butterfly)
		for _, f := range factorisations(n) {
			add(n, smallntt.Matrix, f...)
			add(n, smallntt.MatrixNoMerge, f...)
		}
	}
	for _, s := range kernels.HybridShapes() {
		add(s[0]*s[1], smallntt.Hybrid, s[0], s[1])
	}
	return plans
}

// testBatch returns count random polynomials of n coefficients, the first
// ones extreme: zero, one, all p−1, a single spike, all max.
func testBatch(rng *rand.Rand, n, count int) []uint64 {
	b := make([]uint64, n*count)
	for i := range b {
		b[i] = rng.Uint64N(smallntt.P)
	}
	extremes := []func(i int) uint64{
		func(int) uint64 { return 0 },
		func(i int) uint64 { return map[bool]uint64{true: 1}[i == 0] },
		func(int) uint64 { return smallntt.P - 1 },
		func(i int) uint64 { return map[bool]uint64{true: smallntt.P - 1}[i == n/2+1] },
		func(i int) uint64 { return uint64(i) * 0x9E3779B97F4A7C15 % smallntt.P },
	}
	for e, f := range extremes {
		if e >= count {
			break
		}
		for i := 0; i < n; i++ {
			b[e*n+i] = f(i)
		}
	}
	return b
}

func TestGPUMatchesCPU(t *testing.T) {
	d := openOrSkip(t)
	rng := rand.New(rand.NewPCG(7, 11))
	for _, p := range testPlans(t) {
		t.Run(strings.ReplaceAll(p.String(), "/", "_"), func(t *testing.T) {
			g, err := d.NewPlan(p)
			require.NoError(t, err)
			defer g.Close()
			n, count := p.N(), 37
			in := testBatch(rng, n, count)
			want := make([]uint64, len(in))
			for i := 0; i < count; i++ {
				p.Forward(smallntt.NTTPoly(want[i*n:(i+1)*n]), smallntt.Poly(in[i*n:(i+1)*n]))
			}
			b, err := d.AllocPolys(n, count)
			require.NoError(t, err)
			defer b.Free()
			require.NoError(t, b.Upload(in))
			require.NoError(t, g.Forward(nil, b))
			got := make([]uint64, len(in))
			require.NoError(t, b.Download(got))
			compare(t, "Forward", got, want, n)
			require.NoError(t, g.Inverse(nil, b))
			require.NoError(t, b.Download(got))
			compare(t, "Inverse∘Forward", got, in, n)
		})
	}
}

func compare(t *testing.T, what string, got, want []uint64, n int) {
	t.Helper()
	bad := 0
	for i := range want {
		if got[i] != want[i] {
			if bad < 3 {
				t.Errorf("%s: polynomial %d, position %d: GPU %#x, CPU %#x", what, i/n, i%n, got[i], want[i])
			}
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%s: %d of %d coefficients differ", what, bad, len(want))
	}
}

func TestSmallGPUMatchesCPU(t *testing.T) {
	d := openOrSkip(t)
	rng := rand.New(rand.NewPCG(3, 5))
	for _, n := range []int{4, 8, 16, 32, 64} {
		for kind := smallntt.SmallCyclic; kind <= smallntt.SmallTwistedInverse; kind++ {
			for _, merge := range []bool{true, false} {
				t.Run(fmt.Sprintf("n=%d/%v/merge=%v", n, kind, merge), func(t *testing.T) {
					count := 1000 + n // not a multiple of the per-block count
					in := testBatch(rng, n, count)
					ref, err := smallntt.NewSmall(n, kind, smallntt.Matrix)
					require.NoError(t, err)
					want := make([]uint64, len(in))
					for i := 0; i < count; i++ {
						ref.Apply(want[i*n:(i+1)*n], in[i*n:(i+1)*n])
					}
					got := runSmall(t, d, in, func(b *Polys) error {
						return d.lib.SmallMatrix(nil, b.Buf, b.Count, n, kernels.SmallKind(kind), merge)
					}, n)
					compare(t, "SmallMatrix", got, want, n)
					if kind != smallntt.SmallCyclic || !merge {
						return
					}
					host, err := SmallButterflyTable(n)
					require.NoError(t, err)
					tab, err := d.upload(host)
					require.NoError(t, err)
					defer tab.Free()
					got = runSmall(t, d, in, func(b *Polys) error {
						return d.lib.SmallButterfly(nil, b.Buf, b.Count, n, tab)
					}, n)
					compare(t, "SmallButterfly", got, want, n)
				})
			}
		}
	}
}

func runSmall(t *testing.T, d *Device, in []uint64, f func(*Polys) error, n int) []uint64 {
	t.Helper()
	b, err := d.AllocPolys(n, len(in)/n)
	require.NoError(t, err)
	defer b.Free()
	require.NoError(t, b.Upload(in))
	require.NoError(t, f(b))
	got := make([]uint64, len(in))
	require.NoError(t, b.Download(got))
	return got
}

// TestSmallButterflyTable checks the table against its definition: the
// network it drives must compute the cyclic DFT (run here on the CPU).
func TestSmallButterflyTable(t *testing.T) {
	for _, n := range []int{-4, 0, 2, 3, 12, 128, 256} {
		if tab, err := SmallButterflyTable(n); err == nil {
			t.Errorf("SmallButterflyTable(%d): %d words, no error", n, len(tab))
		}
	}
	for _, n := range []int{4, 8, 16, 32, 64} {
		tab, err := SmallButterflyTable(n)
		require.NoError(t, err)
		x := make([]uint64, n)
		for i := range x {
			x[i] = uint64(i*i+3) % smallntt.P
		}
		a := append([]uint64(nil), x...)
		for m, h := 1, n/2; m < n; m, h = 2*m, h/2 {
			for g := 0; g < m; g++ {
				for j := 0; j < h; j++ {
					i := 2*g*h + j
					u, v := a[i], smallntt.Mul(a[i+h], tab[m+g])
					a[i], a[i+h] = smallntt.Add(u, v), smallntt.Sub(u, v)
				}
			}
		}
		omega := smallntt.MulPow2(1, uint(192/n))
		for k := 0; k < n; k++ {
			var want uint64
			for i := 0; i < n; i++ {
				want = smallntt.Add(want, smallntt.Mul(x[i], smallntt.Exp(omega, uint64(i*k))))
			}
			pos := 0
			for b, kk := 0, k; b < bitsLen(n); b, kk = b+1, kk>>1 {
				pos |= (kk & 1) << (bitsLen(n) - 1 - b)
			}
			if a[pos] != want {
				t.Fatalf("n=%d: output %d at position %d = %#x, want %#x", n, k, pos, a[pos], want)
			}
		}
	}
}

func bitsLen(n int) int {
	l := 0
	for ; n > 1; n >>= 1 {
		l++
	}
	return l
}

// TestTransformerMatchesCPU runs Transformer on the GPU when there is one
// and on the CPU otherwise: the same bits as the CPU plan for any input
// words (those ≥ p too, which the kernels do not take), for a plan with a
// GPU kernel and for plans without one (run as DefaultPlan of their size).
func TestTransformerMatchesCPU(t *testing.T) {
	plans := []*smallntt.Plan{}
	for _, c := range []struct {
		n int
		v smallntt.Variant
		f []int
	}{
		{1024, smallntt.Hybrid, []int{32, 32}},
		{1024, smallntt.Hybrid, []int{8, 8, 16}}, // no GPU kernel
		{512, smallntt.Butterfly, nil},
	} {
		p, err := smallntt.NewPlan(c.n, c.v, c.f...)
		require.NoError(t, err)
		plans = append(plans, p)
	}
	for _, n := range smallntt.Sizes {
		p, err := smallntt.DefaultPlan(n)
		require.NoError(t, err)
		plans = append(plans, p)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	for _, p := range plans {
		t.Run(strings.ReplaceAll(p.String(), "/", "_"), func(t *testing.T) {
			tr := NewTransformer(p)
			defer tr.Close()
			t.Logf("transformer: %s", tr.Reason())
			if !tr.OnGPU() && !strings.HasPrefix(tr.Reason(), "CPU: ") {
				t.Fatalf("CPU fallback without a reason: %q", tr.Reason())
			}
			if tr.OnGPU() && !HasKernel(p) && !strings.Contains(tr.Reason(), " run as ") {
				t.Errorf("a plan without a GPU kernel on the GPU, and Reason does not say as what: %q", tr.Reason())
			}
			n, count := p.N(), 9
			in := testBatch(rng, n, count)
			// Words the CPU plan takes mod p: p itself, the largest, and
			// p + 5, in a polynomial of its own and among random ones.
			for i, x := range []uint64{smallntt.P, ^uint64(0), smallntt.P + 5} {
				in[(count-2)*n+i] = x
				for j := range n {
					in[(count-1)*n+j] = []uint64{smallntt.P, ^uint64(0), smallntt.P + 5, rng.Uint64()}[j%4]
				}
			}
			got := append([]uint64(nil), in...)
			require.NoError(t, tr.Forward(got))
			want := make([]uint64, len(in))
			for i := range count {
				p.Forward(smallntt.NTTPoly(want[i*n:(i+1)*n]), smallntt.Poly(in[i*n:(i+1)*n]))
			}
			compare(t, "Transformer.Forward", got, want, n)
			// Inverse of non-canonical NTT-domain words, against the CPU's.
			copy(got, in)
			require.NoError(t, tr.Inverse(got))
			for i := range count {
				p.Inverse(smallntt.Poly(want[i*n:(i+1)*n]), smallntt.NTTPoly(in[i*n:(i+1)*n]))
			}
			compare(t, "Transformer.Inverse", got, want, n)
			if err := tr.Forward(got[:n-1]); err == nil {
				t.Fatal("Forward of a partial polynomial: no error")
			}
			require.NoError(t, tr.Close())
			if err := tr.Forward(got); tr.OnGPU() && (err == nil || !strings.Contains(err.Error(), "Transformer used after Close")) {
				t.Errorf("Forward after Close on the GPU: %v, want an error saying so", err)
			}
		})
	}
}

func TestPlanErrors(t *testing.T) {
	d := openOrSkip(t)
	p, _ := smallntt.NewPlan(1024, smallntt.Hybrid, 8, 8, 16)
	if p != nil {
		if _, err := d.NewPlan(p); err == nil {
			t.Error("hybrid 8x8x16: no error")
		}
	}
	q, _ := smallntt.NewPlan(512, smallntt.Butterfly)
	g, err := d.NewPlan(q)
	require.NoError(t, err)
	defer g.Close()
	b, err := d.AllocPolys(1024, 1)
	require.NoError(t, err)
	defer b.Free()
	if err := g.Forward(nil, b); err == nil {
		t.Error("N=512 plan on N=1024 batch: no error")
	}
}

func TestFactorisations(t *testing.T) {
	want := map[int]int{256: 12, 512: 18, 1024: 29, 2048: 45, 4096: 71}
	for _, n := range smallntt.Sizes {
		fs := factorisations(n)
		if len(fs) != want[n] {
			t.Errorf("N=%d: %d factorisations, want %d", n, len(fs), want[n])
		}
		for _, f := range fs {
			if _, err := smallntt.NewPlan(n, smallntt.Matrix, f...); err != nil {
				t.Errorf("N=%d: %v: %v", n, f, err)
			}
		}
	}
}
