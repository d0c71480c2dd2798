package gpuntt

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/goldfhe/goldfhe/kernels"
	"github.com/goldfhe/goldfhe/smallntt"
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

// testPlans lists every CPU plan the GPU must reproduce.
func testPlans(t testing.TB) []*smallntt.Plan {
	var plans []*smallntt.Plan
	add := func(n int, v smallntt.Variant, f ...int) {
		p, err := smallntt.NewPlan(n, v, f...)
		if err != nil {
			t.Fatalf("NewPlan(%d, %v, %v): %v", n, v, f, err)
		}
		plans = append(plans, p)
	}
	facts := map[int][][]int{
		256:  {{16, 16}, {4, 4, 4, 4}, {64, 4}},
		512:  {{8, 8, 8}, {16, 32}, {32, 16}},
		1024: {{4, 4, 4, 4, 4}, {8, 8, 16}, {16, 16, 4}, {32, 32}, {64, 16}, {16, 64}},
		2048: {{8, 16, 16}, {32, 64}, {64, 32}},
		4096: {{64, 64}, {16, 16, 16}},
	}
	for _, n := range smallntt.Sizes {
		add(n, smallntt.Butterfly)
		for _, f := range facts[n] {
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
			if err != nil {
				t.Fatal(err)
			}
			defer g.Close()
			n, count := p.N(), 37
			in := testBatch(rng, n, count)
			want := make([]uint64, len(in))
			for i := 0; i < count; i++ {
				p.Forward(smallntt.NTTPoly(want[i*n:(i+1)*n]), smallntt.Poly(in[i*n:(i+1)*n]))
			}
			b, err := d.AllocPolys(n, count)
			if err != nil {
				t.Fatal(err)
			}
			defer b.Free()
			if err := b.Upload(in); err != nil {
				t.Fatal(err)
			}
			if err := g.Forward(nil, b); err != nil {
				t.Fatal(err)
			}
			got := make([]uint64, len(in))
			if err := b.Download(got); err != nil {
				t.Fatal(err)
			}
			compare(t, "Forward", got, want, n)
			if err := g.Inverse(nil, b); err != nil {
				t.Fatal(err)
			}
			if err := b.Download(got); err != nil {
				t.Fatal(err)
			}
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
					if err != nil {
						t.Fatal(err)
					}
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
					tab, err := d.upload(SmallButterflyTable(n))
					if err != nil {
						t.Fatal(err)
					}
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
	if err != nil {
		t.Fatal(err)
	}
	defer b.Free()
	if err := b.Upload(in); err != nil {
		t.Fatal(err)
	}
	if err := f(b); err != nil {
		t.Fatal(err)
	}
	got := make([]uint64, len(in))
	if err := b.Download(got); err != nil {
		t.Fatal(err)
	}
	return got
}

// TestSmallButterflyTable checks the table against its definition: the
// network it drives must compute the cyclic DFT (run here on the CPU).
func TestSmallButterflyTable(t *testing.T) {
	for _, n := range []int{4, 8, 16, 32, 64} {
		tab := SmallButterflyTable(n)
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

func TestTransformerMatchesCPU(t *testing.T) {
	p, err := smallntt.NewPlan(1024, smallntt.Hybrid, 32, 32)
	if err != nil {
		t.Fatal(err)
	}
	tr := NewTransformer(p)
	defer tr.Close()
	t.Logf("transformer: %s", tr.Reason())
	if !tr.OnGPU() && !strings.HasPrefix(tr.Reason(), "CPU: ") {
		t.Fatalf("CPU fallback without a reason: %q", tr.Reason())
	}
	rng := rand.New(rand.NewPCG(1, 1))
	in := testBatch(rng, 1024, 9)
	got := append([]uint64(nil), in...)
	if err := tr.Forward(got); err != nil {
		t.Fatal(err)
	}
	want := make([]uint64, len(in))
	for i := 0; i < 9; i++ {
		p.Forward(smallntt.NTTPoly(want[i*1024:(i+1)*1024]), smallntt.Poly(in[i*1024:(i+1)*1024]))
	}
	compare(t, "Transformer.Forward", got, want, 1024)
	if err := tr.Inverse(got); err != nil {
		t.Fatal(err)
	}
	compare(t, "Transformer.Inverse", got, in, 1024)
	if err := tr.Forward(got[:1000]); err == nil {
		t.Fatal("Forward of a partial polynomial: no error")
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
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	b, err := d.AllocPolys(1024, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Free()
	if err := g.Forward(nil, b); err == nil {
		t.Error("N=512 plan on N=1024 batch: no error")
	}
}
