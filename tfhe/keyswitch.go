package tfhe

import (
	"fmt"

	"github.com/goldfhe/goldfhe/torus"
)

// KeySwitchTo switches src (dimension k·N, under the extracted key) to dst
// (dimension n, under the TLWE key): dst = (0, b) − Σ_{i,j} d_{i,j}·KS_{i,j},
// with signed digits d_{i,j} of a_i (t levels of basebit bits, rounded),
// each term read from the table — a row subtracted for a positive digit,
// added for a negative one (CGGI20 Alg. 2 with the TFHE library's table).
// The digits are those of KSGadget, in [−base/2, base/2), for an even a_i,
// and the negated digits of −a_i, in (−base/2, base/2], for an odd one
// (ksSign says why). It panics on wrong dimensions.
func (e *Evaluator) KeySwitchTo(dst, src *TLWE) {
	if e.ksk == nil {
		panic("tfhe: KeySwitchTo: evaluator has no cloud key")
	}
	p := e.params
	n, kn := p.LWEDimension(), p.ExtractedLWEDimension()
	if src == nil || dst == nil || src.Dim() != kn || dst.Dim() != n {
		panic(fmt.Sprintf("tfhe: KeySwitchTo: dimensions must be k·N=%d → n=%d", kn, n))
	}
	if !keySwitchAccel(dst.Value, src.Value, e.ksk.data, p, e.buf.ksRows) {
		keySwitch(dst.Value, src.Value, e.ksk.data, p)
	}
}

// ksSign returns x, 0 for an even x and −x, −1 for an odd one: key
// switching decomposes the word returned and negates its digits d by the
// sign s, (d ^ s) − s. Without branches: the sign of a word is a coin flip,
// which a branch would mispredict half the time. With
// digits in [−base/2, base/2) alone, the table row of magnitude base/2
// would only ever be added, so its fresh sample's error would not average
// out: every output of one cloud key would carry the same error mean (for
// TFHELib128, 4.6% of a bootstrap output's variance), which a sum of T
// outputs (a linear XOR) carries T² times. For a uniform input the word
// decomposed, x or −x, is uniform over its parity class, so the bits 1 to
// 31 of it plus the offset are uniform either way, and the digits read no
// lower bit (t·basebit ≤ 31: NewParams): even and odd words give digits
// of one distribution, the odd ones negated, and each row is added as
// often as it is subtracted: mean zero for every key. Every GPU
// key-switching kernel makes the same choice (bs_ks_sign in
// kernels/bootstrap.cuh), so the engines agree bit for bit.
func ksSign(x uint32) (uint32, int) {
	s := -int(x & 1)
	return (x ^ uint32(s)) - uint32(s), s
}

// keySwitch is KeySwitchTo in Go: one pass over the digits, each nonzero
// one adding or subtracting its table row.
func keySwitch(out, in []torus.Torus32, table []torus.Torus32, p Params) {
	n, kn := p.LWEDimension(), p.ExtractedLWEDimension()
	t, basebit := p.KSLevels(), uint(p.KSBaseLog())
	half := 1 << basebit / 2
	mask := uint32(1)<<basebit - 1
	w := n + 1
	b := in[kn]
	out = out[:w]
	clear(out)
	out[n] = b
	off := p.ksOffset
	for i, ai := range in[:kn] {
		x, sg := ksSign(uint32(ai))
		v := x + off
		base := i * t * half
		for j := 1; j <= t; j++ {
			d := int((v>>(32-uint(j)*basebit))&mask) - half
			if d == 0 {
				continue
			}
			d = (d ^ sg) - sg
			if d > 0 {
				o := ((base + (j-1)*half) + d - 1) * w
				subRow(out, table[o:o+w:o+w])
			} else {
				o := ((base + (j-1)*half) - d - 1) * w
				addRow(out, table[o:o+w:o+w])
			}
		}
	}
}

// subRow sets out −= row (len(row) = len(out)), unrolled by 4.
func subRow(out, row []torus.Torus32) {
	row = row[:len(out)]
	m := 0
	for ; m+4 <= len(out); m += 4 {
		o, r := out[m:m+4:m+4], row[m:m+4:m+4]
		o[0] -= r[0]
		o[1] -= r[1]
		o[2] -= r[2]
		o[3] -= r[3]
	}
	for ; m < len(out); m++ {
		out[m] -= row[m]
	}
}

// addRow sets out += row (len(row) = len(out)), unrolled by 4.
func addRow(out, row []torus.Torus32) {
	row = row[:len(out)]
	m := 0
	for ; m+4 <= len(out); m += 4 {
		o, r := out[m:m+4:m+4], row[m:m+4:m+4]
		o[0] += r[0]
		o[1] += r[1]
		o[2] += r[2]
		o[3] += r[3]
	}
	for ; m < len(out); m++ {
		out[m] += row[m]
	}
}

// ksRowList writes into rows, for the digits of in (as keySwitch visits
// them, zero digits left out), the byte offset in the table of the row to
// subtract (digit > 0) or add (digit < 0, offset | 1), and returns how
// many it wrote: the list keySwitchAccel's assembly consumes.
func ksRowList(rows []int64, in []torus.Torus32, p Params) int {
	n, kn := p.LWEDimension(), p.ExtractedLWEDimension()
	t, basebit := p.KSLevels(), uint(p.KSBaseLog())
	half := 1 << basebit / 2
	mask := uint32(1)<<basebit - 1
	w := n + 1
	off := p.ksOffset
	c := 0
	for i, ai := range in[:kn] {
		x, sg := ksSign(uint32(ai))
		v := x + off
		base := i * t * half
		for j := 1; j <= t; j++ {
			d := int((v>>(32-uint(j)*basebit))&mask) - half
			d = (d ^ sg) - sg // negated for an odd word
			neg := d >> 31    // −1 for d < 0: |d| ≤ 128, so bit 31 is its sign in any int
			mag := (d ^ neg) - neg
			// Written whatever d; kept (c advanced) only for d ≠ 0. c is
			// at most the digits visited so far, within len(rows).
			rows[c] = int64(((base+(j-1)*half)+mag-1)*w)*4 | int64(neg&1)
			if d != 0 {
				c++
			}
		}
	}
	return c
}
