package tfhe

import (
	"fmt"
	mrand "math/rand/v2"
	"testing"

	"github.com/goldfhe/goldfhe/torus"
	"github.com/stretchr/testify/require"
)

// TestKeySwitchAccel checks the assembly key switching (where there is
// one) against keySwitch, bit for bit, on random tables and inputs and on
// inputs whose digits are all −base/2, all base/2 − 1 or all zero (even
// words), or all +base/2 (an odd word, decomposed as its negation: ksSign),
// for every parameter set and the toy one (rows of 41 words: vectors and a
// tail).
func TestKeySwitchAccel(t *testing.T) {
	if !useKSAsm {
		t.Skip("no key-switching assembly on this machine or build (purego, not amd64, or no AVX2)")
	}
	r := mrand.New(mrand.NewPCG(71, 72))
	for _, p := range append([]Params{toyParams}, ParamSets()...) {
		table := make([]torus.Torus32, ksTableLen(p))
		for i := range table {
			table[i] = torus.Torus32(r.Uint32())
		}
		kn, n := p.ExtractedLWEDimension(), p.LWEDimension()
		rows := make([]int64, kn*p.KSLevels())
		inputs := map[string]func(int) torus.Torus32{
			"random": func(int) torus.Torus32 { return torus.Torus32(r.Uint32()) },
			"min":    func(int) torus.Torus32 { return torus.Torus32(-p.ksOffset) },
			"max":    func(int) torus.Torus32 { return torus.Torus32(^uint32(1) - p.ksOffset) },
			"plus":   func(int) torus.Torus32 { return torus.Torus32(p.ksOffset - 1) },
			"zero":   func(int) torus.Torus32 { return 0 },
			"mixed": func(i int) torus.Torus32 {
				return [4]torus.Torus32{0, 1 << 31, 0xFFFFFFFF, torus.Torus32(-p.ksOffset)}[i%4]
			},
		}
		for name, f := range inputs {
			in := make([]torus.Torus32, kn+1)
			for i := range in {
				in[i] = f(i)
			}
			require.NoErrorf(t, checkKSDigits(name, in[:kn], p), "%s", p.Name())
			want, got := make([]torus.Torus32, n+1), make([]torus.Torus32, n+1)
			for i := range got {
				got[i] = 0xDEADBEEF // overwritten
			}
			keySwitch(want, in, table, p)
			if !keySwitchAccel(got, in, table, p, rows) {
				t.Fatal("keySwitchAccel declined with a row list")
			}
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("%s %s: coordinate %d: %#x, want %#x", p.Name(), name, i, got[i], want[i])
				}
			}
		}
	}
}

// checkKSDigits checks that the named inputs have the digits
// TestKeySwitchAccel says (ksSign, then KSGadget's decomposition).
func checkKSDigits(name string, in []torus.Torus32, p Params) error {
	half := int32(1) << p.KSBaseLog() / 2
	want, sign := map[string]int32{"min": -half, "max": half - 1, "zero": 0, "plus": half}[name]
	if !sign {
		return nil
	}
	g := p.KSGadget()
	d := make([]int32, g.Levels())
	for i, a := range in {
		x, sg := ksSign(uint32(a))
		g.Decompose(d, torus.Torus32(x))
		for _, v := range d {
			v = (v ^ int32(sg)) - int32(sg)
			if v != want {
				return fmt.Errorf("input %s, word %d (%#x): digit %d, want %d", name, i, uint32(a), v, want)
			}
		}
	}
	return nil
}
