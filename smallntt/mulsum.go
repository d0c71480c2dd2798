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

// mulSumGeneric is MulSum in Go. The first six rows go in one pass
// (mulSum6: the external product of TFHELib128; arm64 keeps the twelve
// slices in registers, amd64 reloads a few from the stack and still beats
// chunks of four and two by 25%), the others in chunks of up to four. A
// later chunk adds its products to dst's value so far (keep: all ones
// after the first chunk; zero for a first one, whose dst is not read into
// the sum) in three 64-bit limbs and reduces once per output
// (reduce192Lazy): it costs its products and one reduction. Six products
// of any inputs, or four and a value of dst, sum to less than 6·2^128, so
// top ≤ 5. The limbs are summed in carry chains (top, _ = bits.Add64(top,
// 0, c): one ADC on amd64 and arm64, where top += c materialises c).
func mulSumGeneric(dst []uint64, x []uint64, xStride int, y []uint64, yStride int, rows int) {
	n := len(dst)
	row := func(s []uint64, stride, r int) []uint64 { return s[r*stride : r*stride+n] }
	r, keep := 0, uint64(0)
	if rows >= 6 {
		mulSum6(dst, row(x, xStride, 0), row(x, xStride, 1), row(x, xStride, 2),
			row(x, xStride, 3), row(x, xStride, 4), row(x, xStride, 5),
			row(y, yStride, 0), row(y, yStride, 1), row(y, yStride, 2),
			row(y, yStride, 3), row(y, yStride, 4), row(y, yStride, 5))
		r, keep = 6, ^uint64(0)
	}
	for ; r < rows; keep = ^uint64(0) {
		switch k := rows - r; {
		case k >= 4:
			mulSum4(dst, row(x, xStride, r), row(x, xStride, r+1), row(x, xStride, r+2), row(x, xStride, r+3),
				row(y, yStride, r), row(y, yStride, r+1), row(y, yStride, r+2), row(y, yStride, r+3), keep)
			r += 4
		case k == 3:
			mulSum3(dst, row(x, xStride, r), row(x, xStride, r+1), row(x, xStride, r+2),
				row(y, yStride, r), row(y, yStride, r+1), row(y, yStride, r+2), keep)
			r += 3
		case k == 2:
			mulSum2(dst, row(x, xStride, r), row(x, xStride, r+1), row(y, yStride, r), row(y, yStride, r+1), keep)
			r += 2
		default:
			mulSum1(dst, row(x, xStride, r), row(y, yStride, r), keep)
			r++
		}
	}
}

// reduce192Lazy returns a value in [0, 2^64) ≡ lo + 2^64·hi + 2^128·top
// for any lo, hi and top ≤ 2^32 − 2: with hi = 2^32·hh + hl, the 128-bit
// rule of reduce128Lazy with hh + 2^32·top (≡ hh·2^96 + top·2^128 negated,
// DESIGN.md §3) in hh's place, which is (top:hi) >> 32 ≤ 2^64 − 2^32 − 1,
// so that on borrow lo − it + 2^64 ≥ 2^32 + 1 > ε still takes one
// correction. (Before: Sub(Reduce128(hi, lo), top<<32), too large to
// inline, a call per output in MulSum's loops.)
func reduce192Lazy(lo, hi, top uint64) uint64 {
	hh := hi>>32 | top<<32
	hl := uint64(uint32(hi))
	t, br := bits.Sub64(lo, hh, 0)
	t -= uint64(uint32(-br))
	r, c := bits.Add64(t, hl<<32-hl, 0)
	return r + uint64(uint32(-c))
}

// mulSum1 sets acc[j] to acc[j]&keep + x0[j]·y0[j] mod P, canonical; acc
// is read as any uint64.
func mulSum1(acc, x0, y0 []uint64, keep uint64) {
	x0, y0 = x0[:len(acc)], y0[:len(acc)]
	for j := range acc {
		hi, lo := bits.Mul64(x0[j], y0[j])
		lo, c := bits.Add64(lo, acc[j]&keep, 0)
		hi, top := bits.Add64(hi, 0, c)
		acc[j] = Reduce(reduce192Lazy(lo, hi, top))
	}
}

// mulSum2 is mulSum1 for the sum of two products.
func mulSum2(acc, x0, x1, y0, y1 []uint64, keep uint64) {
	n := len(acc)
	x0, x1, y0, y1 = x0[:n], x1[:n], y0[:n], y1[:n]
	for j := range acc {
		h0, l0 := bits.Mul64(x0[j], y0[j])
		h1, l1 := bits.Mul64(x1[j], y1[j])
		lo, c := bits.Add64(l0, l1, 0)
		hi, top := bits.Add64(h0, h1, c)
		lo, c = bits.Add64(lo, acc[j]&keep, 0)
		hi, c = bits.Add64(hi, 0, c)
		top, _ = bits.Add64(top, 0, c)
		acc[j] = Reduce(reduce192Lazy(lo, hi, top))
	}
}

// mulSum3 is mulSum1 for the sum of three products.
func mulSum3(acc, x0, x1, x2, y0, y1, y2 []uint64, keep uint64) {
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
		top, _ = bits.Add64(top, 0, c)
		lo, c = bits.Add64(lo, acc[j]&keep, 0)
		hi, c = bits.Add64(hi, 0, c)
		top, _ = bits.Add64(top, 0, c)
		acc[j] = Reduce(reduce192Lazy(lo, hi, top))
	}
}

// mulSum4 is mulSum1 for the sum of four products.
func mulSum4(acc, x0, x1, x2, x3, y0, y1, y2, y3 []uint64, keep uint64) {
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
		top, _ = bits.Add64(top, 0, c)
		lo, c = bits.Add64(lo, l3, 0)
		hi, c = bits.Add64(hi, h3, c)
		top, _ = bits.Add64(top, 0, c)
		lo, c = bits.Add64(lo, acc[j]&keep, 0)
		hi, c = bits.Add64(hi, 0, c)
		top, _ = bits.Add64(top, 0, c)
		acc[j] = Reduce(reduce192Lazy(lo, hi, top))
	}
}

// mulSum6 sets acc[j] to the sum of six products mod P, canonical (the
// first chunk only: it does not read acc).
func mulSum6(acc, x0, x1, x2, x3, x4, x5, y0, y1, y2, y3, y4, y5 []uint64) {
	n := len(acc)
	x0, x1, x2, x3, x4, x5 = x0[:n], x1[:n], x2[:n], x3[:n], x4[:n], x5[:n]
	y0, y1, y2, y3, y4, y5 = y0[:n], y1[:n], y2[:n], y3[:n], y4[:n], y5[:n]
	for j := range acc {
		h0, l0 := bits.Mul64(x0[j], y0[j])
		h1, l1 := bits.Mul64(x1[j], y1[j])
		lo, c := bits.Add64(l0, l1, 0)
		hi, top := bits.Add64(h0, h1, c)
		h2, l2 := bits.Mul64(x2[j], y2[j])
		lo, c = bits.Add64(lo, l2, 0)
		hi, c = bits.Add64(hi, h2, c)
		top, _ = bits.Add64(top, 0, c)
		h3, l3 := bits.Mul64(x3[j], y3[j])
		lo, c = bits.Add64(lo, l3, 0)
		hi, c = bits.Add64(hi, h3, c)
		top, _ = bits.Add64(top, 0, c)
		h4, l4 := bits.Mul64(x4[j], y4[j])
		lo, c = bits.Add64(lo, l4, 0)
		hi, c = bits.Add64(hi, h4, c)
		top, _ = bits.Add64(top, 0, c)
		h5, l5 := bits.Mul64(x5[j], y5[j])
		lo, c = bits.Add64(lo, l5, 0)
		hi, c = bits.Add64(hi, h5, c)
		top, _ = bits.Add64(top, 0, c)
		acc[j] = Reduce(reduce192Lazy(lo, hi, top))
	}
}
