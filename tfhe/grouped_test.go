package tfhe

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	mrand "math/rand/v2"
	"strings"
	"testing"

	"github.com/goldfhe/goldfhe/smallntt"
	"github.com/goldfhe/goldfhe/torus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// toyOddParams is toyParams with an odd n, so that the last group of a
// grouped key has one bit.
var toyOddParams = MustNewParams(ParamsLiteral{
	Name: "toy-odd", LWEDimension: 41, PolyDegree: 256, GLWEDimension: 2,
	BKLevels: 3, BKBaseLog: 6, KSLevels: 6, KSBaseLog: 2,
	LWEStdDev: 0x1p-20, BKStdDev: 0x1p-28, Note: "insecure, tests only",
})

func TestBKSamples(t *testing.T) {
	for _, c := range []struct{ n, g, want int }{
		{630, 1, 630}, {630, 2, 945}, {805, 2, 1207}, {41, 2, 61}, {1, 2, 1}, {2, 2, 3},
		{630, 3, 1470}, {805, 3, 1877}, {500, 3, 1165}, {40, 3, 92}, {41, 3, 94}, {1, 3, 1}, {2, 3, 3}, {3, 3, 7},
	} {
		if got := bkSamples(c.n, c.g); got != c.want {
			t.Errorf("bkSamples(%d, %d) = %d, want %d", c.n, c.g, got, c.want)
		}
	}
}

func TestGroupMessage(t *testing.T) {
	// Exactly one pattern u ≥ 1 matches nonzero bits; none matches zeros.
	for r := 1; r <= MaxGrouping; r++ {
		for bits := 0; bits < 1<<r; bits++ {
			s := make([]int32, r)
			for j := range s {
				s[j] = int32(bits >> j & 1)
			}
			for u := 1; u < 1<<r; u++ {
				want := int32(0)
				if u == bits {
					want = 1
				}
				if got := groupMessage(s, u); got != want {
					t.Errorf("groupMessage(%v, %d) = %d, want %d", s, u, got, want)
				}
			}
		}
	}
}

// TestGroupStepExact checks one grouped step against the same step in
// coefficient form: ACC + Σ_u (X^{e_u} − 1)·(BK_u ⊡ ACC) with naive
// external products, for groups of 2 and 3 bits, random and extreme keys
// and accumulators, patterns of zero and nonzero rotation amounts
// (vanishing terms included), and two plans.
func TestGroupStepExact(t *testing.T) {
	r := mrand.New(mrand.NewPCG(31, 32))
	for _, p := range []Params{toyParams, TFHELib128} {
		for g := 2; g <= MaxGrouping; g++ {
			t.Run(fmt.Sprintf("%s/g=%d", p.Name(), g), func(t *testing.T) {
				testGroupStepExact(t, r, p, g)
			})
		}
	}
}

func testGroupStepExact(t *testing.T, r *mrand.Rand, p Params, g int) {
	k, l, n := p.GLWEDimension(), p.BKLevels(), p.PolyDegree()
	def, err := smallntt.DefaultPlan(n)
	require.NoError(t, err)
	plans, trials := []*smallntt.Plan{butterfly(t, n), def}, []int{0, 1, 2, 3}
	if g == 3 {
		trials = append(trials, 4)
		if testing.Short() && p.Name() == TFHELib128.Name() {
			// Seven naive N = 1024 products per trial: the toy set runs
			// the rest.
			plans, trials = plans[1:], []int{3, 4}
		}
	}
	for pi, plan := range plans {
		for _, trial := range trials {
			// A 2^g − 1 sample grouped key (one group of g bits).
			bk := newBootstrappingKey(MustNewParams(ParamsLiteral{
				Name: "one-group", LWEDimension: g, PolyDegree: n, GLWEDimension: k,
				BKLevels: l, BKBaseLog: p.BKBaseLog(), KSLevels: 1, KSBaseLog: 1,
				LWEStdDev: 1e-9, BKStdDev: 1e-9,
			}), g)
			for i := range bk.data {
				bk.data[i] = torus.Torus32(r.Uint32())
				if trial == 3 {
					bk.data[i] = 1 << 31 // the extreme of TestExternalProductExact
				}
			}
			nk := bk.transform(plan)
			e := &Evaluator{params: p, plan: plan, bk: &NTTBootstrappingKey{params: p, plan: plan, d: nk}, mono: monomials(plan)}
			e.buf = e.newBuffers()
			abar := make([]int, g)
			for j := range abar {
				abar[j] = r.IntN(2 * n)
			}
			switch trial {
			case 1:
				abar[0] = 0
			case 2:
				abar[1] = n // e_3 = abar[0] + N
			case 3:
				for j := range abar {
					abar[j] = n // e_u = 2N ≡ 0 for two bits: vanishing terms
				}
			case 4: // g = 3
				abar[0], abar[g-1] = 5, 2*n-5 // e_u ≡ 0 for u = 1 + 2^(g−1)
			}
			acc := randTRLWE(r, k, n)
			if trial == 3 {
				for _, poly := range acc.Value {
					for i := range poly {
						poly[i] = torus.Torus32(-p.bkOffset) // every digit −Bg/2
					}
				}
			}
			want := NewTRLWE(k, n)
			for c := range acc.Value {
				copy(want.Value[c], acc.Value[c])
			}
			prod, rot := NewTRLWE(k, n), NewTRLWE(k, n)
			for u := 1; u < 1<<g; u++ {
				eu := 0
				for j, a := range abar {
					eu += u >> j & 1 * a
				}
				ExternalProductNaiveTo(p, prod, &bk.rows[u-1], acc)
				MulXaTRLWETo(rot, prod, eu%(2*n))
				SubTRLWETo(rot, rot, prod)
				AddTRLWETo(want, want, rot)
			}
			e.groupStep(acc, 0, abar, nil)
			if !equalTRLWE(acc, want) {
				t.Fatalf("plan %d trial %d (ā = %v): grouped step differs from the naive one", pi, trial, abar)
			}
		}
	}
}

// TestGroupedBootstrap bootstraps NAND gates with grouped keys of factor 2
// and 3 (n even and odd: last groups of every size), with and without key
// switching, on two plans that must agree bit for bit, and checks the
// measured noise against NoiseEstimateGrouped.
func TestGroupedBootstrap(t *testing.T) {
	sets := []Params{toyParams, toyOddParams}
	if !testing.Short() {
		sets = append(sets, TFHELib128)
	}
	for _, p := range sets {
		for g := 2; g <= MaxGrouping; g++ {
			t.Run(fmt.Sprintf("%s/g=%d", p.Name(), g), func(t *testing.T) { testGroupedBootstrap(t, p, g) })
		}
	}
}

func testGroupedBootstrap(t *testing.T, p Params, g int) {
	kp := keyCache(p, g)
	if kp.ck.Grouping() != g || kp.ck.BootstrappingKey().Len() != bkSamples(p.LWEDimension(), g) {
		t.Fatalf("grouped key: grouping %d, %d samples", kp.ck.Grouping(), kp.ck.BootstrappingKey().Len())
	}
	def, err := smallntt.DefaultPlan(p.PolyDegree())
	require.NoError(t, err)
	e1, err := NewEvaluator(p, butterfly(t, p.PolyDegree()), kp.ck)
	require.NoError(t, err)
	e2, err := NewEvaluator(p, def, kp.ck)
	require.NoError(t, err)
	enc := newEncryptor(t, kp.sk, 21)
	mu := torus.Encode(1, 8)
	count := 32
	if testing.Short() || p.Name() == TFHELib128.Name() {
		count = 12
	}
	var sum2 float64
	out1, out2 := NewTLWE(p.LWEDimension()), NewTLWE(p.LWEDimension())
	for i := range count {
		x, y := i&1 == 1, i&2 == 2
		c := NewTrivialTLWE(p.LWEDimension(), torus.Encode(1, 8))
		SubTLWETo(c, c, enc.EncryptBool(x))
		SubTLWETo(c, c, enc.EncryptBool(y))
		e1.BootstrapTo(out1, c, mu)
		e2.BootstrapTo(out2, c, mu)
		if !bytes.Equal(torusBytes(out1.Value), torusBytes(out2.Value)) {
			t.Fatalf("gate %d: plans %v and %v disagree", i, e1.Plan(), e2.Plan())
		}
		if got := kp.sk.DecryptBool(out1); got != !(x && y) {
			t.Fatalf("NAND(%v, %v) = %v", x, y, got)
		}
		want := mu
		if x && y {
			want = -mu
		}
		d := (kp.sk.PhaseTLWE(out1) - want).Float64()
		sum2 += d * d
		ext := NewTLWE(p.ExtractedLWEDimension())
		e1.BootstrapNoKeySwitchTo(ext, c, mu)
		if got := kp.sk.DecryptBool(ext); got != !(x && y) {
			t.Fatalf("NAND(%v, %v) without key switching = %v", x, y, got)
		}
	}
	sd := math.Sqrt(sum2 / float64(count))
	est := p.NoiseEstimateGrouped(g).BootstrapStdDev
	t.Logf("measured σ=%.3g over %d bootstraps, estimate %.3g (ratio %.2f)", sd, count, est, sd/est)
	if sd > 1.5*est || sd < 0.4*est {
		t.Errorf("measured σ=%.3g, estimate %.3g", sd, est)
	}
}

func torusBytes(v []torus.Torus32) []byte {
	b := make([]byte, 0, 4*len(v))
	for _, x := range v {
		b = append(b, byte(x), byte(x>>8), byte(x>>16), byte(x>>24))
	}
	return b
}

func TestGroupedKeys(t *testing.T) {
	p := toyOddParams
	sk, err := GenerateSecretKeyFromSeed(p, seedOf("grouped", 0))
	require.NoError(t, err)
	for _, g := range []int{0, -1, MaxGrouping + 1} {
		if _, err := GenerateCloudKeyFromSeed(sk, seedOf("grouped", 1), WithGrouping(g)); err == nil {
			t.Errorf("grouping %d accepted", g)
		}
	}
	for g := 2; g <= MaxGrouping; g++ {
		t.Run(fmt.Sprintf("g=%d", g), func(t *testing.T) { testGroupedCloudKey(t, sk, g) })
	}
	// A plain key keeps version 1; a version-2 header on other objects fails.
	plain := testKeys(toyParams).ck
	pb, err := plain.MarshalBinary()
	require.NoError(t, err)
	if pb[4] != marshalVersion {
		t.Fatalf("plain cloud key written as version %d", pb[4])
	}
	tb, _ := NewTLWE(4).MarshalBinary()
	tb[4] = marshalVersionGrouped
	if err := new(TLWE).UnmarshalBinary(tb); !errors.Is(err, ErrFormat) {
		t.Errorf("TLWE with version 2: err = %v", err)
	}
}

// testGroupedCloudKey checks a grouped cloud key of factor g for sk: its
// samples' messages and its serialization.
func testGroupedCloudKey(t *testing.T, sk *SecretKey, g int) {
	p := sk.params
	ck, err := GenerateCloudKeyFromSeed(sk, seedOf("grouped", 1), WithGrouping(g))
	require.NoError(t, err)
	// Deterministic, and each sample decrypts to its pattern's indicator:
	// the body of row c·l (level 1) of column c carries m·Bg^{-1}.
	again, err := GenerateCloudKeyFromSeed(sk, seedOf("grouped", 1), WithGrouping(g))
	require.NoError(t, err)
	if !bytes.Equal(torusBytes(ck.bk.data), torusBytes(again.bk.data)) {
		t.Fatal("grouped key generation is not deterministic")
	}
	gad := p.BKGadget()
	i := 0
	for first := 0; first < p.LWEDimension(); first += g {
		r := min(g, p.LWEDimension()-first)
		for u := 1; u < 1<<r; u++ {
			m := groupMessage(sk.lwe[first:first+r], u)
			row := &ck.bk.rows[i].Rows[p.GLWEDimension()*p.BKLevels()] // column k, level 1
			phase := sk.PhaseTRLWE(row)[0] - torus.Torus32(m)*gad.Factor(1)
			if math.Abs(phase.Float64()) > 1e-6 {
				t.Fatalf("sample %d (bits %v, u=%d): phase off by %g", i, sk.lwe[first:first+r], u, phase.Float64())
			}
			i++
		}
	}
	if i != ck.bk.Len() {
		t.Fatalf("%d samples, want %d", ck.bk.Len(), i)
	}

	// Serialization: version 2, round trip, and damaged groupings.
	b, err := ck.MarshalBinary()
	require.NoError(t, err)
	if v := b[4]; v != marshalVersionGrouped {
		t.Fatalf("grouped cloud key written as version %d", v)
	}
	var back CloudKey
	require.NoError(t, back.UnmarshalBinary(b))
	if back.Grouping() != g || !bytes.Equal(torusBytes(back.bk.data), torusBytes(ck.bk.data)) {
		t.Fatal("grouped cloud key does not round-trip")
	}
	off := headerSize + len(appendParams(nil, p))
	// 5 − g: the other grouping, whose key has another length.
	for _, bad := range []uint16{0, 1, uint16(5 - g), MaxGrouping + 1, 0xffff} {
		c := bytes.Clone(b)
		c[off], c[off+1] = byte(bad), byte(bad>>8)
		if err := back.UnmarshalBinary(c); !errors.Is(err, ErrFormat) {
			t.Errorf("grouping %d: err = %v, want ErrFormat", bad, err)
		}
	}
}

// TestNoiseEstimateGrouped: g = 1 is the plain estimate, the noise grows
// with g, and the gate failure probabilities are those WithGrouping's doc
// gives (log2, to 0.5).
func TestNoiseEstimateGrouped(t *testing.T) {
	want := map[string][MaxGrouping]float64{ // g = 1, 2, 3
		TFHELib128.Name():    {-420, -250, -188},
		TFHErsDefault.Name(): {-343, -333, -326},
		CuFHE80.Name():       {-371, -171, -119},
	}
	for _, p := range ParamSets() {
		plain := p.NoiseEstimate()
		if p.NoiseEstimateGrouped(1) != plain {
			t.Errorf("%s: NoiseEstimateGrouped(1) differs from NoiseEstimate", p.Name())
		}
		prev := plain
		for g := 1; g <= MaxGrouping; g++ {
			e := p.NoiseEstimateGrouped(g)
			if g > 1 && !(e.BlindRotationVar > prev.BlindRotationVar && e.Log2GateFailure > prev.Log2GateFailure) {
				t.Errorf("%s, g = %d: σ_BR %.3g (g − 1: %.3g), log2 p_fail %.1f (g − 1: %.1f)", p.Name(), g,
					math.Sqrt(e.BlindRotationVar), math.Sqrt(prev.BlindRotationVar), e.Log2GateFailure, prev.Log2GateFailure)
			}
			if w, ok := want[p.Name()]; ok && math.Abs(e.Log2GateFailure-w[g-1]) > 0.5 {
				t.Errorf("%s, g = %d: log2 p_fail %.1f, want %.0f", p.Name(), g, e.Log2GateFailure, w[g-1])
			}
			if e.Log2GateFailure > -100 {
				t.Errorf("%s, g = %d: log2 p_fail %.1f", p.Name(), g, e.Log2GateFailure)
			}
			t.Logf("%s g=%d: σ_out=%.3g log2 p_fail=%.1f", p.Name(), g, e.BootstrapStdDev, e.Log2GateFailure)
			prev = e
		}
	}
}

// TestCheckGrouping: every named set takes every grouping up to
// MaxGrouping within the exactness bound (2·(2^g − 1)·ExactnessBound <
// p/2), and a set whose grouped products could reach p/2 is refused with
// an error that says so, by key generation and by unmarshalling.
func TestCheckGrouping(t *testing.T) {
	for _, p := range ParamSets() {
		for g := 1; g <= MaxGrouping; g++ {
			assert.NoErrorf(t, checkGrouping(p, g), "%s, g = %d", p.Name(), g)
			t.Logf("%s g=%d: grouped product bound 2^%.2f", p.Name(), g, log2Big(groupedExactnessBound(p, g)))
		}
	}
	// ExactnessBound 2·2·4096·2^15·2^31 = 2^60: 6× is below p/2 ≈ 2^63,
	// 14× is not.
	edge := MustNewParams(ParamsLiteral{
		Name: "edge", LWEDimension: 6, PolyDegree: 4096, GLWEDimension: 1,
		BKLevels: 2, BKBaseLog: 16, KSLevels: 1, KSBaseLog: 1,
		LWEStdDev: 1e-9, BKStdDev: 1e-9, Note: "insecure, tests only",
	})
	assert.NoError(t, checkGrouping(edge, 2), "edge, g = 2")
	err := checkGrouping(edge, 3)
	if err == nil || !strings.Contains(err.Error(), "grouping 3") || !strings.Contains(err.Error(), "not below p/2") {
		t.Fatalf("edge, g = 3: %v", err)
	}
	sk, err := GenerateSecretKeyFromSeed(edge, seedOf("edge", 0))
	require.NoError(t, err)
	if _, err := GenerateCloudKeyFromSeed(sk, seedOf("edge", 1), WithGrouping(3)); err == nil || !strings.Contains(err.Error(), "not below p/2") {
		t.Errorf("GenerateCloudKey(edge, g = 3): %v", err)
	}
}
