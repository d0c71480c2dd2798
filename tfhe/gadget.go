package tfhe

import (
	"fmt"

	"github.com/goldfhe/goldfhe/torus"
)

// Gadget is a signed base-2^β decomposition with l levels (DESIGN.md §2): a
// Torus32 a is approximated by Σ_{i=1..l} d_i·2^{32−iβ}, rounded to the
// nearest multiple of 2^{32−lβ}, with every d_i in [−2^β/2, 2^β/2).
// Params.BKGadget is the gadget of the bootstrapping key (Bg = 2^β) and
// Params.KSGadget the decomposition of key switching. Make one with
// NewGadget or take a Params'; the zero Gadget decomposes nothing (its
// methods panic).
type Gadget struct {
	levels  int
	baseLog int
	offset  uint32 // Σ_{i=1..l} (B/2)·2^{32−iβ} + 2^{32−lβ−1}
}

// NewGadget returns the gadget with l levels of β bits, 1 ≤ l·β ≤ 32.
func NewGadget(l, beta int) (Gadget, error) {
	// Each factor bounded before the product, which large ones would wrap
	// to a small or negative l·β (as NewParams bounds them).
	if l < 1 || beta < 1 || l > 32 || beta > 32 || l*beta > 32 {
		return Gadget{}, fmt.Errorf("tfhe: gadget with l=%d levels of %d bits: need l, β ≥ 1 and l·β ≤ 32", l, beta)
	}
	return Gadget{levels: l, baseLog: beta, offset: gadgetOffset(l, beta)}, nil
}

// BKGadget returns the gadget H of the bootstrapping key: l levels, Bg = 2^β.
func (p Params) BKGadget() Gadget {
	return Gadget{levels: p.lit.BKLevels, baseLog: p.lit.BKBaseLog, offset: p.bkOffset}
}

// KSGadget returns the key-switching decomposition: t levels of basebit bits.
// Key switching applies it to an even word and to the negation of an odd
// one, whose digits it negates (KeySwitchTo).
func (p Params) KSGadget() Gadget {
	return Gadget{levels: p.lit.KSLevels, baseLog: p.lit.KSBaseLog, offset: p.ksOffset}
}

// Levels returns l.
func (g Gadget) Levels() int { return g.levels }

// BaseLog returns β.
func (g Gadget) BaseLog() int { return g.baseLog }

// Offset returns Σ_{i=1..l} (B/2)·2^{32−iβ} + 2^{32−lβ−1} (mod 2^32; no
// rounding term when l·β = 32).
func (g Gadget) Offset() uint32 { return g.offset }

// Decompose writes the l digits of a into dst[:l], most significant first:
// with w = a + Offset, d_i = ((w >> (32−iβ)) mod 2^β) − 2^β/2 (DESIGN.md §2).
func (g Gadget) Decompose(dst []int32, a torus.Torus32) {
	w := uint64(uint32(a) + g.offset)
	mask := uint64(1)<<g.baseLog - 1
	half := int64(1) << (g.baseLog - 1)
	for i := 0; i < g.levels; i++ {
		dst[i] = int32(int64((w>>(32-(i+1)*g.baseLog))&mask) - half)
	}
}

// Recompose returns Σ_{i=1..l} d_i·2^{32−iβ} for the digits d = digits[:l].
func (g Gadget) Recompose(digits []int32) torus.Torus32 {
	var s torus.Torus32
	for i := 0; i < g.levels; i++ {
		s += torus.Torus32(digits[i]) << (32 - (i+1)*g.baseLog)
	}
	return s
}

// Factor returns 1/B^i as a Torus32 (i = 1..l): the gadget entry of level i.
func (g Gadget) Factor(i int) torus.Torus32 { return torus.Torus32(uint64(1) << (32 - i*g.baseLog)) }
