package smallntt

import (
	"fmt"
	"math/bits"
)

// MulSum sets dst[j] = Σ_{r<rows} x[r·xStride+j]·y[r·yStride+j] mod P for
// every j < len(dst): the pointwise inner product of rows NTT-domain
// polynomials with rows of another, the multiply-accumulate of an external
// product (DESIGN.md §3), the same in every NTT order. Rows are read at a
// fixed stride (in elements) from x and y, which must hold them all; dst
// must not overlap them. Inputs any; dst canonical. An empty dst is
// written nothing; rows < 1 or ≥ 2^31, a stride below len(dst) (even for
// one row), or rows that x or y do not hold, panic.
//
// The products are not reduced one by one: their 128-bit values are summed
// in three 64-bit limbs (lo, hi, top) and reduced once per output with
// 2^128 ≡ −2^32 (DESIGN.md §3): lo + 2^64·hi + 2^128·top ≡ lo − (hh +
// 2^32·top) + ε·hl where hi = 2^32·hh + hl. On amd64 this runs in assembly
// (mulsum_amd64.s: AVX-512 IFMA, eight outputs at a time, or AVX2, four,
// for up to 64 rows; MULX for the rest); the generic code below gives the
// same bits (TestMulSumAgainstGeneric). It allocates nothing.
func MulSum(dst []uint64, x []uint64, xStride int, y []uint64, yStride int, rows int) {
	n := len(dst)
	if n == 0 && rows >= 1 {
		return // no output to write, whatever x and y hold
	}
	// rows·stride could overflow an int (and the assembly's byte strides
	// with it), so the extent is checked by division.
	fits := func(l, stride int) bool { return l >= n && (rows == 1 || stride <= (l-n)/(rows-1)) }
	if rows < 1 || int64(rows) >= 1<<31 || n == 0 || xStride < n || yStride < n || !fits(len(x), xStride) || !fits(len(y), yStride) {
		panic(fmt.Sprintf("smallntt: MulSum of %d rows of %d with strides %d, %d on lengths %d, %d", rows, n, xStride, yStride, len(x), len(y)))
	}
	if !mulSumAccel(dst, x, xStride, y, yStride, rows) {
		mulSumGeneric(dst, x, xStride, y, yStride, rows)
	}
}

// mulSumGeneric is MulSum in Go. Rows go in chunks of up to four: more
// live slices than that make the Go compiler spill registers in the inner
// loop (measured: 6 rows in one loop are 2.7× slower per product than 4).
// Each chunk's sum is reduced and added to the previous chunks' (Add).
func mulSumGeneric(dst []uint64, x []uint64, xStride int, y []uint64, yStride int, rows int) {
	n := len(dst)
	row := func(s []uint64, stride, r int) []uint64 { return s[r*stride : r*stride+n] }
	for r := 0; r < rows; r += 4 {
		add := r > 0
		switch rows - r {
		case 1:
			mulSum1(dst, row(x, xStride, r), row(y, yStride, r), add)
		case 2:
			mulSum2(dst, row(x, xStride, r), row(x, xStride, r+1), row(y, yStride, r), row(y, yStride, r+1), add)
		case 3:
			mulSum3(dst, row(x, xStride, r), row(x, xStride, r+1), row(x, xStride, r+2),
				row(y, yStride, r), row(y, yStride, r+1), row(y, yStride, r+2), add)
		default:
			mulSum4(dst, row(x, xStride, r), row(x, xStride, r+1), row(x, xStride, r+2), row(x, xStride, r+3),
				row(y, yStride, r), row(y, yStride, r+1), row(y, yStride, r+2), row(y, yStride, r+3), add)
		}
	}
}

// reduce192Small returns lo + 2^64·hi + 2^128·top mod P for top < 2^32 − 1.
func reduce192Small(lo, hi, top uint64) uint64 {
	return Sub(Reduce128(hi, lo), top<<32)
}

// mulSum1 sets (or, if add, adds to) acc[j] the product x0[j]·y0[j].
func mulSum1(acc, x0, y0 []uint64, add bool) {
	x0, y0 = x0[:len(acc)], y0[:len(acc)]
	for j := range acc {
		h, l := bits.Mul64(x0[j], y0[j])
		v := Reduce128(h, l)
		if add {
			v = Add(acc[j], v)
		}
		acc[j] = v
	}
}

// mulSum2 is mulSum1 for the sum of two products.
func mulSum2(acc, x0, x1, y0, y1 []uint64, add bool) {
	n := len(acc)
	x0, x1, y0, y1 = x0[:n], x1[:n], y0[:n], y1[:n]
	for j := range acc {
		h0, l0 := bits.Mul64(x0[j], y0[j])
		h1, l1 := bits.Mul64(x1[j], y1[j])
		lo, c := bits.Add64(l0, l1, 0)
		hi, top := bits.Add64(h0, h1, c)
		v := reduce192Small(lo, hi, top)
		if add {
			v = Add(acc[j], v)
		}
		acc[j] = v
	}
}

// mulSum3 is mulSum1 for the sum of three products.
func mulSum3(acc, x0, x1, x2, y0, y1, y2 []uint64, add bool) {
	n := len(acc)
	x0, x1, x2, y0, y1, y2 = x0[:n], x1[:n], x2[:n], y0[:n], y1[:n], y2[:n]
	for j := range acc {
		h0, l0 := bits.Mul64(x0[j], y0[j])
		h1, l1 := bits.Mul64(x1[j], y1[j])
		h2, l2 := bits.Mul64(x2[j], y2[j])
		lo, c := bits.Add64(l0, l1, 0)
		hi, top := bits.Add64(h0, h1, c)
		lo, c = bits.Add64(lo, l2, 0)
		hi, c = bits.Add64(hi, h2, c)
		top += c
		v := reduce192Small(lo, hi, top)
		if add {
			v = Add(acc[j], v)
		}
		acc[j] = v
	}
}

// mulSum4 is mulSum1 for the sum of four products.
func mulSum4(acc, x0, x1, x2, x3, y0, y1, y2, y3 []uint64, add bool) {
	n := len(acc)
	x0, x1, x2, x3 = x0[:n], x1[:n], x2[:n], x3[:n]
	y0, y1, y2, y3 = y0[:n], y1[:n], y2[:n], y3[:n]
	for j := range acc {
		h0, l0 := bits.Mul64(x0[j], y0[j])
		h1, l1 := bits.Mul64(x1[j], y1[j])
		h2, l2 := bits.Mul64(x2[j], y2[j])
		h3, l3 := bits.Mul64(x3[j], y3[j])
		lo, c := bits.Add64(l0, l1, 0)
		hi, top := bits.Add64(h0, h1, c)
		lo, c = bits.Add64(lo, l2, 0)
		hi, c = bits.Add64(hi, h2, c)
		top += c
		lo, c = bits.Add64(lo, l3, 0)
		hi, c = bits.Add64(hi, h3, c)
		top += c
		v := reduce192Small(lo, hi, top)
		if add {
			v = Add(acc[j], v)
		}
		acc[j] = v
	}
}
