package smallntt

import (
	"errors"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// naiveNegacyclicInt returns a·b mod X^N+1 over the integers (math/big).
func naiveNegacyclicInt(a, b []int64) []*big.Int {
	n := len(a)
	out := make([]*big.Int, n)
	for i := range out {
		out[i] = new(big.Int)
	}
	t := new(big.Int)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			t.Mul(big.NewInt(a[i]), big.NewInt(b[j]))
			if k := i + j; k < n {
				out[k].Add(out[k], t)
			} else {
				out[k-n].Sub(out[k-n], t)
			}
		}
	}
	return out
}

func checkProduct(t *testing.T, p *Plan, a, b []int64) {
	t.Helper()
	got, err := p.MulInt64(a, b)
	require.NoErrorf(t, err, "%v", p)
	want := naiveNegacyclicInt(a, b)
	for i := range want {
		if !want[i].IsInt64() || want[i].Int64() != got[i] {
			t.Fatalf("%v: coefficient %d = %d, want %v", p, i, got[i], want[i])
		}
	}
}

// Products equal the naive O(N²) product mod X^N+1 for every variant, with
// coefficients as large as the bound allows.
func TestMulInt64AgainstNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for _, n := range Sizes {
		if testing.Short() && n > 1024 {
			continue
		}
		plans := []*Plan{}
		for _, v := range []Variant{Butterfly, Hybrid, Matrix} {
			var p *Plan
			var err error
			if v == Butterfly {
				p, err = NewPlan(n, v)
			} else {
				fs := factorisations(n)
				p, err = NewPlan(n, v, fs[rng.IntN(len(fs))]...)
			}
			require.NoError(t, err)
			plans = append(plans, p)
		}
		// TFHE-like: digits in [−64, 64), keys full signed 32-bit; then the
		// extremes: max|a|·max|b|·N exactly at the bound, all one sign.
		digits := make([]int64, n)
		keys := make([]int64, n)
		for i := range digits {
			digits[i] = rng.Int64N(128) - 64
			keys[i] = int64(int32(rng.Uint32()))
		}
		lim := (P / 2) / uint64(n)
		ma := uint64(1) << 31
		mb := lim / ma
		big1, big2 := make([]int64, n), make([]int64, n)
		neg := make([]int64, n)
		for i := range big1 {
			big1[i], big2[i], neg[i] = int64(ma), int64(mb), -int64(ma)
		}
		for _, p := range plans {
			checkProduct(t, p, digits, keys)
			checkProduct(t, p, big1, big2)
			checkProduct(t, p, neg, big2)
			checkProduct(t, p, big2, neg)
		}
	}
}

func TestMulInt64Bound(t *testing.T) {
	p, _ := NewPlan(1024, Butterfly)
	lim := (P / 2) / 1024
	a := make([]int64, 1024)
	b := make([]int64, 1024)
	a[3], b[5] = 1, int64(lim)
	if _, err := p.MulInt64(a, b); err != nil {
		t.Fatalf("at the bound: %v", err)
	}
	b[5] = int64(lim + 1)
	if _, err := p.MulInt64(a, b); !errors.Is(err, ErrBound) {
		t.Fatalf("over the bound: err = %v", err)
	}
	a[3], b[5] = -1<<63, -1<<63
	if _, err := p.MulInt64(a, b); !errors.Is(err, ErrBound) {
		t.Fatalf("MinInt64²: err = %v", err)
	}
	if _, err := p.MulInt64(a[:10], b); err == nil {
		t.Fatal("short input accepted")
	}
	q, _ := NewPlan(512, Butterfly)
	if err := p.MulInt64To(a, a, b, q.NewWorkspace()); err == nil {
		t.Fatal("wrong-size workspace accepted")
	}
	if MaxAbs([]int64{3, -1 << 63, 5}) != 1<<63 {
		t.Fatal("MaxAbs(−2^63)")
	}
}

// MulInt64To allocates nothing and may write over its inputs.
func TestMulInt64ToAliasing(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	p, _ := DefaultPlan(256)
	ws := p.NewWorkspace()
	a, b := make([]int64, 256), make([]int64, 256)
	for i := range a {
		a[i], b[i] = rng.Int64N(1<<20)-1<<19, rng.Int64N(1<<20)-1<<19
	}
	want, _ := p.MulInt64(a, b)
	a2 := append([]int64(nil), a...)
	require.NoError(t, p.MulInt64To(a2, a2, b, ws))
	b2 := append([]int64(nil), b...)
	require.NoError(t, p.MulInt64To(b2, a, b2, ws))
	for i := range want {
		if a2[i] != want[i] || b2[i] != want[i] {
			t.Fatalf("aliased product differs at %d", i)
		}
	}
	dst := make([]int64, 256)
	if n := testing.AllocsPerRun(10, func() { _ = p.MulInt64To(dst, a, b, ws) }); n != 0 {
		t.Errorf("MulInt64To: %v allocations", n)
	}
}

// TestCheckProductBoundAnyLength checks the bound exactly at its edge for
// lengths that are not powers of two too (n = 768 was checked as 256, so a
// product three times too large passed), and that a length below 1 is an
// error of its own (n = 0 claimed 1·1·0 > (P−1)/2; n = −1 passed).
func TestCheckProductBoundAnyLength(t *testing.T) {
	for _, n := range []int{1, 3, 256, 768, 1000, 1 << 20} {
		lim := (P / 2) / uint64(n) // floor((P−1)/2 / n)
		assert.NoErrorf(t, CheckProductBound(n, lim, 1), "n=%d: %d·1·n ≤ (P−1)/2 refused", n, lim)
		if err := CheckProductBound(n, lim+1, 1); !errors.Is(err, ErrBound) {
			t.Errorf("n=%d: %d·1·n > (P−1)/2 gave %v, want ErrBound", n, lim+1, err)
		}
	}
	for _, n := range []int{0, -1, -256} {
		if err := CheckProductBound(n, 1, 1); err == nil || errors.Is(err, ErrBound) {
			t.Errorf("n=%d: %v, want an error of the length, not ErrBound", n, err)
		}
	}
}
