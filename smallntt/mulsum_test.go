package smallntt

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"
)

// mulSumBig is MulSum by math/big: the oracle.
func mulSumBig(n int, x []uint64, xStride int, y []uint64, yStride int, rows int) []uint64 {
	p := new(big.Int).SetUint64(P)
	out := make([]uint64, n)
	for j := range out {
		s := new(big.Int)
		for r := 0; r < rows; r++ {
			a := new(big.Int).SetUint64(x[r*xStride+j])
			b := new(big.Int).SetUint64(y[r*yStride+j])
			s.Add(s, a.Mul(a, b))
		}
		out[j] = s.Mod(s, p).Uint64()
	}
	return out
}

// TestMulSumAgainstGeneric checks MulSum (the assembly where there is one)
// and the generic code against math/big, for every row count up to 9 and
// around the assembly's limit of 64, odd strides and lengths, random and
// extreme inputs (any uint64: P−1, P, 2^64−1, 2^63, 0), with canonical
// outputs.
func TestMulSumAgainstGeneric(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	extremes := []uint64{0, 1, P - 1, P, P + 1, 1<<64 - 1, 1 << 63, epsilon, epsilon + 1}
	defer func() { useMulSumAsm, useMulSumAVX2, useMulSumIFMA = haveBMI2, haveAVX2, haveIFMA }()
	for _, im := range mulSumImpls() {
		name := im.name
		useMulSumAsm, useMulSumAVX2, useMulSumIFMA = im.mulx, im.avx2, im.ifma
		for _, rows := range []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 64, 65} {
			for _, n := range []int{1, 4, 7, 64, 67} {
				for trial := range 4 {
					xs, ys := n+3*trial, n+trial
					x := make([]uint64, rows*xs)
					y := make([]uint64, rows*ys)
					for i := range x {
						switch trial {
						case 0:
							x[i] = r.Uint64N(P)
						case 1:
							x[i] = 1<<64 - 1
						default:
							x[i] = extremes[r.IntN(len(extremes))]
						}
					}
					for i := range y {
						switch trial {
						case 0:
							y[i] = r.Uint64N(P)
						case 1:
							y[i] = 1<<64 - 1
						case 2:
							y[i] = extremes[r.IntN(len(extremes))]
						default:
							y[i] = r.Uint64()
						}
					}
					want := mulSumBig(n, x, xs, y, ys, rows)
					got := make([]uint64, n)
					MulSum(got, x, xs, y, ys, rows)
					for j := range got {
						if got[j] != want[j] {
							t.Fatalf("%s: rows=%d n=%d trial %d: position %d: %#x, want %#x", name, rows, n, trial, j, got[j], want[j])
						}
					}
				}
			}
		}
	}
}

// TestMulSumFixedN checks MulSum on a plan-sized case (6 rows of N = 1024,
// the TFHELib128 external product) against Mul and Add, and that it
// allocates nothing.
func TestMulSumFixedN(t *testing.T) {
	const n, rows = 1024, 6
	r := rand.New(rand.NewPCG(23, 24))
	x, y := make([]uint64, rows*n), make([]uint64, rows*2*n)
	for i := range x {
		x[i] = r.Uint64N(P)
	}
	for i := range y {
		y[i] = r.Uint64N(P)
	}
	got := make([]uint64, n)
	MulSum(got, x, n, y[n:], 2*n, rows)
	for j := range got {
		var want uint64
		for i := 0; i < rows; i++ {
			want = Add(want, Mul(x[i*n+j], y[n+i*2*n+j]))
		}
		if got[j] != want {
			t.Fatalf("position %d: %#x, want %#x", j, got[j], want)
		}
	}
	if a := testing.AllocsPerRun(10, func() { MulSum(got, x, n, y, 2*n, rows) }); a != 0 {
		t.Errorf("MulSum allocates %v times", a)
	}
}

// TestMulSumPanics: arguments whose rows do not fit x or y panic with the
// package's message before anything is read, also where rows·stride
// overflows an int (it used to wrap and let the assembly read past x).
func TestMulSumPanics(t *testing.T) {
	backing := make([]uint64, 64)
	ones := make([]uint64, 64)
	for i := range ones {
		ones[i] = 1
	}
	for _, tc := range []struct {
		name             string
		x                []uint64
		xStride, yStride int
		y                []uint64
		rows             int
	}{
		{"short y", make([]uint64, 16), 8, 8, make([]uint64, 15), 2},
		{"short x", make([]uint64, 15), 8, 8, make([]uint64, 16), 2},
		{"x stride overflowing", backing[:8:8], min(1<<61+8, math.MaxInt), 8, ones[:40], 5},
		{"x stride overflowing further", backing[:8:8], min(1<<61+1<<40, math.MaxInt), 8, ones[:40], 5},
		{"y stride overflowing", ones[:40], 8, min(1<<62+8, math.MaxInt), backing[:8:8], 5},
		{"largest stride", backing[:8:8], int(^uint(0) >> 1), 8, ones[:16], 2},
		{"no rows", ones, 8, 8, ones, 0},
	} {
		func() {
			defer func() {
				r := recover()
				if msg, ok := r.(string); !ok || !strings.HasPrefix(msg, "smallntt: MulSum") {
					t.Errorf("%s: recovered %v, want the package's panic", tc.name, r)
				}
			}()
			MulSum(make([]uint64, 8), tc.x, tc.xStride, tc.y, tc.yStride, tc.rows)
		}()
	}
	// No output: nothing to read or write, whatever x and y hold; but
	// still no rows is a caller's mistake.
	MulSum(nil, nil, 0, nil, 0, 1)
	MulSum([]uint64{}, ones[:3], 1, nil, 0, 6)
	func() {
		defer func() {
			if r := recover(); r == nil {
				t.Error("MulSum of no rows into an empty dst: no panic")
			}
		}()
		MulSum(nil, nil, 0, nil, 0, 0)
	}()
}

// BenchmarkMulSum measures the TFHELib128 multiply-accumulate of one
// output column (6 rows of N = 1024), assembly and generic side by side.
func BenchmarkMulSum(b *testing.B) {
	const n, rows = 1024, 6
	r := rand.New(rand.NewPCG(25, 26))
	x, y := make([]uint64, rows*(n+8)), make([]uint64, rows*(2*n+8))
	for i := range x {
		x[i] = r.Uint64N(P)
	}
	for i := range y {
		y[i] = r.Uint64N(P)
	}
	dst := make([]uint64, n)
	defer func() { useMulSumAsm, useMulSumAVX2, useMulSumIFMA = haveBMI2, haveAVX2, haveIFMA }()
	for _, pad := range []int{0, 8} {
		for _, im := range mulSumImpls() {
			b.Run(fmt.Sprintf("rows=6/N=1024/pad=%d/%s", pad, im.name), func(b *testing.B) {
				useMulSumAsm, useMulSumAVX2, useMulSumIFMA = im.mulx, im.avx2, im.ifma
				for b.Loop() {
					MulSum(dst, x, n+pad, y, 2*n+pad, rows)
				}
			})
		}
	}
}

type mulSumImpl struct {
	name             string
	mulx, avx2, ifma bool
}

// mulSumImpls lists the MulSum implementations this machine and build can
// run: generic, MULX alone, AVX2 (with MULX for the tail).
func mulSumImpls() []mulSumImpl {
	out := []mulSumImpl{{"generic", false, false, false}}
	if haveBMI2 {
		out = append(out, mulSumImpl{"mulx", true, false, false})
	}
	if haveAVX2 {
		out = append(out, mulSumImpl{"avx2", haveBMI2, true, false})
	}
	if haveIFMA {
		out = append(out, mulSumImpl{"ifma", haveBMI2, haveAVX2, true})
	}
	return out
}
