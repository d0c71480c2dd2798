package smallntt

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// digitWords returns test inputs for ForwardDigits: random words, and the
// extremes where every digit is −2^(β−1) (0), 2^(β−1) − 1 (all ones), or
// they alternate between the two across coefficients and levels.
func digitWords(n int, rng *rand.Rand) map[string][]uint32 {
	ws := map[string][]uint32{"random": make([]uint32, n), "min": make([]uint32, n), "max": make([]uint32, n), "alternate": make([]uint32, n)}
	for j := range n {
		ws["random"][j] = rng.Uint32()
		ws["max"][j] = 1<<32 - 1
		if j%2 == 0 {
			ws["alternate"][j] = 0xAAAAAAAA
		} else {
			ws["alternate"][j] = 0x55555555
		}
	}
	return ws
}

// TestForwardDigits checks ForwardDigits, on every factorisation of N ≤
// 1024 (with and without AVX2) and the other variants, against the digits
// computed one by one (Gadget-style, as int64) and transformed by Forward of
// the generic Hybrid plan; and N = 64 against the naive transform. Digit
// widths 1 … 16 and 32 cover the assembly (β ≤ 14) and the fallback.
func TestForwardDigits(t *testing.T) {
	rng := rand.New(rand.NewPCG(61, 62))
	for _, n := range []int{256, 512, 1024} {
		ref := genericPlan(t, n, DefaultFactors(n))
		ws := digitWords(n, rng)
		var plans []*Plan
		for _, f := range factorisations(n) {
			p, err := NewPlan(n, Hybrid, f...)
			require.NoError(t, err)
			plans = append(plans, p)
		}
		bf, err := NewPlan(n, Butterfly)
		require.NoError(t, err)
		mx, err := NewPlan(n, Matrix, 16, n/16)
		require.NoError(t, err)
		plans = append(plans, bf, mx)
		plans = append(plans, genericPlan(t, n, []int{32, n / 32}))
		for _, beta := range []int{1, 2, 5, 7, 10, 13, 14, 15, 16, 32} {
			l := min(32/beta, 3)
			for name, w := range ws {
				want := make([]NTTPoly, l)
				for i := range want {
					want[i] = make(NTTPoly, n)
					shift := 32 - (i+1)*beta
					for j, v := range w {
						d := int64(uint64(v)>>shift&(1<<beta-1)) - 1<<(beta-1)
						want[i][j] = FromInt64(d)
					}
					ref.Forward(want[i], Poly(want[i]))
				}
				for _, p := range plans {
					if testing.Short() && beta != 7 && beta != 14 && beta != 15 && p.variant != Hybrid {
						continue
					}
					got := make([]NTTPoly, l)
					for i := range got {
						got[i] = make(NTTPoly, n)
						got[i][0] = 1<<64 - 1 // overwritten
					}
					p.ForwardDigits(got, w, beta)
					for i := range got {
						for j := range got[i] {
							if got[i][j] != want[i][j] {
								t.Fatalf("%v β=%d %s: digit %d position %d: %#x, want %#x", p, beta, name, i, j, got[i][j], want[i][j])
							}
						}
					}
				}
			}
		}
	}
}

// TestForwardDigitsNaive checks the digit transform against the naive NTT
// for N = 256 in three hybrid factorisations (a single digit level, β = 7).
func TestForwardDigitsNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(63, 64))
	for _, f := range [][]int{{8, 8}, {16, 4}, {4, 16}} {
		p, err := NewPlan(256, Hybrid, append(f, 4)...)
		require.NoError(t, err)
		w := make([]uint32, 256)
		for j := range w {
			w[j] = rng.Uint32()
		}
		x := make([]uint64, 256)
		for j, v := range w {
			x[j] = FromInt64(int64(v>>25) - 64)
		}
		want := naiveNegacyclicNTT(x)
		got := []NTTPoly{make(NTTPoly, 256)}
		p.ForwardDigits(got, w, 7)
		// got is in the plan's order: position j holds X_{Order()[j]}.
		for j, k := range p.Order() {
			if got[0][j] != want[k] {
				t.Fatalf("%v: position %d: %#x, want X_%d = %#x", p, j, got[0][j], k, want[k])
			}
		}
	}
}

func TestForwardDigitsAllocs(t *testing.T) {
	p, err := DefaultPlan(1024)
	require.NoError(t, err)
	dst := []NTTPoly{make(NTTPoly, 1024), make(NTTPoly, 1024), make(NTTPoly, 1024)}
	w := make([]uint32, 1024)
	if a := testing.AllocsPerRun(10, func() { p.ForwardDigits(dst, w, 7) }); a != 0 {
		t.Errorf("ForwardDigits allocates %v times", a)
	}
}

// BenchmarkForwardDigits compares ForwardDigits with writing the digits
// and calling Forward (the TFHELib128 column: 3 digits of 7 bits, N=1024).
func BenchmarkForwardDigits(b *testing.B) {
	p, err := DefaultPlan(1024)
	require.NoError(b, err)
	rng := rand.New(rand.NewPCG(65, 66))
	w := make([]uint32, 1024)
	for j := range w {
		w[j] = rng.Uint32()
	}
	dst := []NTTPoly{make(NTTPoly, 1024), make(NTTPoly, 1024), make(NTTPoly, 1024)}
	b.Run(fmt.Sprintf("%v/fused", p), func(b *testing.B) {
		for b.Loop() {
			p.ForwardDigits(dst, w, 7)
		}
	})
	b.Run(fmt.Sprintf("%v/split", p), func(b *testing.B) {
		for b.Loop() {
			for i, d := range dst {
				shift := uint(32 - 7*(i+1))
				for j, v := range w {
					d[j] = FromInt64(int64(v>>shift&127) - 64)
				}
				p.Forward(d, Poly(d))
			}
		}
	})
}

// ForwardDigitsPrefetch writes what ForwardDigits writes, prefetching or
// not, and allocates nothing.
func TestForwardDigitsPrefetch(t *testing.T) {
	rng := rand.New(rand.NewPCG(65, 66))
	for _, n := range []int{256, 512, 1024} {
		for _, f := range [][]int{DefaultFactors(n), {32, n / 32}, {16, 4, n / 64}} {
			p, err := NewPlan(n, Hybrid, f...)
			require.NoError(t, err)
			w := make([]uint32, n)
			for j := range w {
				w[j] = rng.Uint32()
			}
			want, got := []NTTPoly{make(NTTPoly, n), make(NTTPoly, n)}, []NTTPoly{make(NTTPoly, n), make(NTTPoly, n)}
			p.ForwardDigits(want, w, 7)
			for _, m := range []int{0, 1, 100, 3 * n, 100 * n} {
				pf := make([]uint64, m)
				p.ForwardDigitsPrefetch(got, w, 7, pf)
				for i := range got {
					equalAt(t, fmt.Sprintf("%v prefetching %d words, digit %d", p, m, i), got[i], want[i])
				}
				if a := testing.AllocsPerRun(5, func() { p.ForwardDigitsPrefetch(got, w, 7, pf) }); a != 0 {
					t.Errorf("%v: ForwardDigitsPrefetch allocates %v times", p, a)
				}
			}
		}
	}
}

// TestForwardDigitsPanics: digit counts and widths beyond 32 bits panic,
// also where their product overflows an int (4 digits of 2^62 bits used to
// wrap to 0 and write zero transforms).
func TestForwardDigitsPanics(t *testing.T) {
	p, err := DefaultPlan(256)
	require.NoError(t, err)
	rows := func(k int) []NTTPoly {
		d := make([]NTTPoly, k)
		for i := range d {
			d[i] = make(NTTPoly, 256)
		}
		return d
	}
	w := make([]uint32, 256)
	for _, tc := range []struct {
		name        string
		digits, bet int
	}{
		{"no bits", 1, 0}, {"33 bits", 1, 33}, {"3 digits of 11 bits", 3, 11},
		{"4 digits of 2^62 bits", 4, min(1<<62, math.MaxInt)}, {"2 digits of 2^63-1 bits", 2, int(^uint(0) >> 1)},
	} {
		func() {
			defer func() {
				if r := recover(); r == nil {
					t.Errorf("%s: no panic", tc.name)
				}
			}()
			p.ForwardDigits(rows(tc.digits), w, tc.bet)
		}()
	}
	p.ForwardDigits(rows(4), w, 8) // 32 bits: fine
}
