package tfhe

import (
	"math"
	"math/big"
	"strings"
	"testing"

	"github.com/goldfhe/goldfhe/smallntt"
)

// TestParamSets checks each named set's figures against DESIGN.md §5 and its
// source (see params_list.go), and the exactness bound of DESIGN.md §3.
func TestParamSets(t *testing.T) {
	want := map[string][8]int{ // n, N, k, l, log2 Bg, t, basebit, security
		"TFHELib128":    {630, 1024, 1, 3, 7, 8, 2, 120},
		"TFHErsDefault": {805, 512, 3, 2, 10, 5, 3, 132},
		"CuFHE80":       {500, 1024, 1, 2, 10, 8, 2, 80},
	}
	sigmas := map[string][2]float64{
		"TFHELib128":    {math.Ldexp(1, -15), math.Ldexp(1, -25)},
		"TFHErsDefault": {5.8615896642671336e-06, 9.315272083503367e-10},
		"CuFHE80":       {2.44e-5, 7.18e-9}, // DESIGN.md §5, 3 digits
	}
	halfP := new(big.Int).SetUint64(smallntt.P / 2)
	for _, p := range ParamSets() {
		w, ok := want[p.Name()]
		if !ok {
			t.Fatalf("unexpected set %s", p.Name())
		}
		got := [8]int{p.LWEDimension(), p.PolyDegree(), p.GLWEDimension(), p.BKLevels(), p.BKBaseLog(),
			p.KSLevels(), p.KSBaseLog(), p.SecurityBits()}
		if got != w {
			t.Errorf("%s: figures %v, want %v", p.Name(), got, w)
		}
		s := sigmas[p.Name()]
		if math.Abs(p.LWEStdDev()/s[0]-1) > 3e-3 || math.Abs(p.BKStdDev()/s[1]-1) > 3e-3 {
			t.Errorf("%s: σ = %g, %g; want %g, %g", p.Name(), p.LWEStdDev(), p.BKStdDev(), s[0], s[1])
		}
		// Exactness, recomputed independently: (k+1)·l·N·(Bg/2)·2^31 < p/2.
		b := new(big.Int).SetInt64(int64((p.GLWEDimension() + 1) * p.BKLevels() * p.PolyDegree()))
		b.Mul(b, new(big.Int).Lsh(big.NewInt(1), uint(p.BKBaseLog()-1)))
		b.Mul(b, new(big.Int).Lsh(big.NewInt(1), 31))
		if b.Cmp(halfP) >= 0 {
			t.Errorf("%s breaks the exactness bound", p.Name())
		}
		if ExactnessBound(p.GLWEDimension(), p.BKLevels(), p.PolyDegree(), p.BKBaseLog()).Cmp(b) != 0 {
			t.Errorf("%s: ExactnessBound disagrees", p.Name())
		}
		if p.ExactnessLog2() >= 63 {
			t.Errorf("%s: exactness log2 %v", p.Name(), p.ExactnessLog2())
		}
		if p.ExtractedLWEDimension() != p.GLWEDimension()*p.PolyDegree() || 1<<p.LogPolyDegree() != p.PolyDegree() {
			t.Errorf("%s: derived dimensions wrong", p.Name())
		}
		q, err := NewParams(p.Literal())
		if err != nil || !q.Equal(p) {
			t.Errorf("%s: round trip through Literal: %v", p.Name(), err)
		}
	}
	// DESIGN.md §3's worked figure for the TFHE-lib set: 6·2^10·2^6·2^31 ≈ 1.5·2^49.
	if got := TFHELib128.ExactnessLog2(); math.Abs(got-(49+math.Log2(1.5))) > 1e-9 {
		t.Errorf("TFHELib128 exactness bound 2^%v, want 1.5·2^49", got)
	}
	if !strings.Contains(CuFHE80.String(), "80-bit") {
		t.Errorf("CuFHE80.String() must say it is ~80-bit: %s", CuFHE80)
	}
}

func TestNewParamsRejects(t *testing.T) {
	base := TFHELib128.Literal()
	cases := []struct {
		name string
		mod  func(*ParamsLiteral)
		msg  string
	}{
		{"N not a power of two", func(l *ParamsLiteral) { l.PolyDegree = 1000 }, "power of two"},
		{"N unsupported", func(l *ParamsLiteral) { l.PolyDegree = 128 }, "not supported"},
		{"N too large", func(l *ParamsLiteral) { l.PolyDegree = 8192 }, "not supported"},
		{"n zero", func(l *ParamsLiteral) { l.LWEDimension = 0 }, "LWE dimension"},
		{"k zero", func(l *ParamsLiteral) { l.GLWEDimension = 0 }, "GLWE dimension"},
		{"l zero", func(l *ParamsLiteral) { l.BKLevels = 0 }, "gadget"},
		{"l·β > 32", func(l *ParamsLiteral) { l.BKLevels, l.BKBaseLog = 5, 7 }, "gadget"},
		// Products that wrap an int (each factor is bounded first).
		{"l·β wraps", func(l *ParamsLiteral) { l.BKLevels, l.BKBaseLog = 2, math.MaxInt/2+2 }, "gadget"},
		{"β·l wraps", func(l *ParamsLiteral) { l.BKLevels, l.BKBaseLog = math.MaxInt/2+2, 2 }, "gadget"},
		{"KS t·basebit wraps", func(l *ParamsLiteral) { l.KSLevels, l.KSBaseLog = math.MaxInt/4+1, 4 }, "key switching"},
		{"KS basebit 9", func(l *ParamsLiteral) { l.KSBaseLog = 9; l.KSLevels = 2 }, "key switching"},
		{"KS t·basebit > 32", func(l *ParamsLiteral) { l.KSLevels = 17 }, "key switching"},
		{"KS t·basebit = 32", func(l *ParamsLiteral) { l.KSLevels = 16 }, "t·basebit ≤ 31"},
		{"σ zero", func(l *ParamsLiteral) { l.LWEStdDev = 0 }, "standard deviation"},
		{"σ NaN", func(l *ParamsLiteral) { l.BKStdDev = math.NaN() }, "standard deviation"},
		// Rounds to 0 on the torus: a noiseless sample.
		{"σ below 2^-32", func(l *ParamsLiteral) { l.LWEStdDev = 1e-300 }, "standard deviation"},
		{"σ_bk below 2^-32", func(l *ParamsLiteral) { l.BKStdDev = 0x1p-33 }, "standard deviation"},
		// (k+1)·l·N·(Bg/2)·2^31 = 2·1·4096·2^31·2^31 = 2^75: not exact.
		{"exactness l=1 Bg=2^32", func(l *ParamsLiteral) { l.PolyDegree, l.BKLevels, l.BKBaseLog = 4096, 1, 32 }, "exact"},
		// 9·1·4096·2^17·2^31 ≈ 2^63.17 ≥ p/2: just over the bound.
		{"exactness k=8", func(l *ParamsLiteral) {
			l.PolyDegree, l.GLWEDimension, l.BKLevels, l.BKBaseLog = 4096, 8, 1, 18
		}, "exact"},
		// PhaseTLWE could not tell the TLWE key's samples from the
		// extracted key's.
		{"n = k·N", func(l *ParamsLiteral) { l.LWEDimension = 1024 }, "equals k·N"},
		// Serialized keys carry both in at most 1024 bytes each.
		{"long name", func(l *ParamsLiteral) { l.Name = strings.Repeat("x", 1025) }, "longer than 1024"},
		{"long note", func(l *ParamsLiteral) { l.Note = strings.Repeat("x", 65539) }, "longer than 1024"},
		{"SecurityBits negative", func(l *ParamsLiteral) { l.SecurityBits = -1 }, "SecurityBits"},
		// A set derived by Literal keeps the built-in name until renamed.
		{"built-in name, other n", func(l *ParamsLiteral) { l.LWEDimension = 600 }, "name of its own"},
		{"built-in name, other note", func(l *ParamsLiteral) { l.Note = "mine" }, "name of its own"},
		{"another built-in name", func(l *ParamsLiteral) { l.Name = CuFHE80.Name() }, "name of its own"},
		{"built-in name in lower case", func(l *ParamsLiteral) { l.Name, l.LWEDimension = "tfhelib128", 600 }, "name of its own"},
	}
	if math.MaxInt > math.MaxInt32 { // a 32-bit int holds no SecurityBits past 2^31−1
		cases = append(cases, struct {
			name string
			mod  func(*ParamsLiteral)
			msg  string
		}{"SecurityBits 2^40", func(l *ParamsLiteral) { l.SecurityBits = min(1<<40, math.MaxInt) }, "SecurityBits"})
	}
	for _, c := range cases {
		lit := base
		c.mod(&lit)
		_, err := NewParams(lit)
		if err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: err = %v, want one mentioning %q", c.name, err, c.msg)
		}
	}
	// Just below the bound is accepted: 8·2·4096·2^15·2^31 = 2^62.
	lit := base
	lit.Name, lit.PolyDegree, lit.GLWEDimension, lit.BKLevels, lit.BKBaseLog = "at-the-bound", 4096, 7, 2, 16
	lit.LWEDimension = 100 // a key of 393 MB, which a 32-bit platform holds too
	if _, err := NewParams(lit); err != nil {
		t.Errorf("a set at 2^62 was rejected: %v", err)
	}
	var zero Params
	if !zero.IsZero() || zero.check() == nil || zero.String() != "tfhe.Params{}" {
		t.Error("the zero Params must be recognisably invalid")
	}
}

func TestGadgetOffset(t *testing.T) {
	// TFHE-lib set: Bg = 2^7, l = 3: 2^6·(2^25 + 2^18 + 2^11) + 2^10.
	if got, want := gadgetOffset(3, 7), uint32(1<<31+1<<24+1<<17+1<<10); got != want {
		t.Fatalf("gadgetOffset(3, 7) = %#x, want %#x", got, want)
	}
	if got := gadgetOffset(1, 32); got != 1<<31 {
		t.Fatalf("gadgetOffset(1, 32) = %#x", got)
	}
}

func TestParamSetByName(t *testing.T) {
	for _, p := range ParamSets() {
		for _, name := range []string{p.Name(), strings.ToLower(p.Name()), strings.ToUpper(p.Name())} {
			if q, ok := ParamSetByName(name); !ok || !q.Equal(p) {
				t.Errorf("ParamSetByName(%q) = %v, %v; want %v", name, q.Name(), ok, p.Name())
			}
		}
	}
	for _, name := range []string{"", "TFHELib", "TFHELib128 ", "toy"} {
		if q, ok := ParamSetByName(name); ok || !q.IsZero() {
			t.Errorf("ParamSetByName(%q) = %v, %v; want none", name, q.Name(), ok)
		}
	}
	names := ParamSetNames()
	if len(names) != len(ParamSets()) {
		t.Fatalf("ParamSetNames() = %v, want one name a set", names)
	}
	for i, p := range ParamSets() {
		if q, ok := ParamSetByName(names[i]); names[i] != p.Name() || !ok || !q.Equal(p) {
			t.Errorf("ParamSetNames()[%d] = %q, want %q, found by ParamSetByName", i, names[i], p.Name())
		}
	}
}

// TestKeySize: cloudKeyWords counts what key generation allocates, and a
// set whose cloud key an int cannot index (on a 32-bit platform) is refused
// by NewParams instead of wrapping its sizes.
func TestKeySize(t *testing.T) {
	for g := 1; g <= MaxGrouping; g++ {
		kp := keyCache(toyParams, g)
		if got, want := cloudKeyWords(toyParams, g), int64(len(kp.ck.bk.data)+len(kp.ck.ksk.data)); got != want {
			t.Errorf("toy set, grouping %d: cloudKeyWords %d, key generation made %d", g, got, want)
		}
	}
	lit := TFHELib128.Literal()
	lit.Name, lit.LWEDimension, lit.PolyDegree, lit.BKLevels, lit.BKBaseLog, lit.KSLevels, lit.KSBaseLog = "large-key", 8192, 4096, 1, 16, 3, 8
	p, err := NewParams(lit)
	if math.MaxInt > math.MaxInt32 {
		if err != nil || cloudKeyWords(p, 1) != 8192*2*1*2*4096+4096*3*128*8193 {
			t.Errorf("a set of a 52 GB key on a 64-bit platform: %v, %d words", err, cloudKeyWords(p, 1))
		}
	} else if err == nil || !strings.Contains(err.Error(), "does not fit this platform") {
		t.Errorf("a set of a 52 GB key on a 32-bit platform: %v", err)
	}
}

// TestExactnessBoundDomain checks that ExactnessBound's product does not
// wrap an int and that a bgBits no parameter set has panics with its own
// message (a bgBits far out of range asked for a shift of up to 2^64 bits
// and ended the program out of memory; 0 or 33 gave a figure of nothing).
func TestExactnessBoundDomain(t *testing.T) {
	// (1+1)·MaxInt·4 wraps an int (on 32- and 64-bit platforms).
	want := new(big.Int).Mul(big.NewInt(8), big.NewInt(math.MaxInt))
	want.Lsh(want, 7-1+31)
	if got := ExactnessBound(1, math.MaxInt, 4, 7); got.Cmp(want) != 0 {
		t.Errorf("ExactnessBound(1, MaxInt, 4, 7) = %v, want %v", got, want)
	}
	for _, a := range [][4]int{{1, 3, 1024, 0}, {1, 3, 1024, 33}, {1, 3, 1024, -1}, {-2, 3, 1024, 7}, {1, 0, 1024, 7}, {1, 3, 0, 7}} {
		func() {
			defer func() {
				r := recover()
				if s, ok := r.(string); !ok || !strings.Contains(s, "ExactnessBound") {
					t.Errorf("ExactnessBound%v: recovered %v, want its panic", a, r)
				}
			}()
			ExactnessBound(a[0], a[1], a[2], a[3])
		}()
	}
}
