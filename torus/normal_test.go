package torus

import (
	"math"
	mrand "math/rand/v2"
	"slices"
	"testing"
)

// ulpsApart is |a − b| in units of the last place of b (b ≠ 0).
func ulpsApart(a, b float64) float64 {
	return math.Abs(a-b) / (math.Nextafter(math.Abs(b), math.Inf(1)) - math.Abs(b))
}

func TestLnUnit(t *testing.T) {
	rng := mrand.New(mrand.NewPCG(1, 2))
	check := func(u float64) {
		t.Helper()
		got, want := lnUnit(u), math.Log(u)
		if ulpsApart(got, want) > 1 {
			t.Fatalf("lnUnit(%v) = %v, math.Log %v (%.1f ulp)", u, got, want, ulpsApart(got, want))
		}
	}
	// The ends of normalPair's range, the fold at √2, powers of two.
	for _, u := range []float64{0x1p-53, 1 - 0x1p-53, 0.5, 0.25, 0x1p-52,
		math.Sqrt2 / 2, math.Nextafter(math.Sqrt2/2, 0), math.Nextafter(math.Sqrt2/2, 1),
		math.Sqrt2 / 4, math.Nextafter(math.Sqrt2/4, 1), 1 - 0x1p-40, 0.999, 1e-10} {
		check(u)
	}
	for range 200000 {
		check(float64(int64(rng.Uint64()>>11|1)) * 0x1p-53)
		check(math.Ldexp(1+rng.Float64(), -1-rng.IntN(60)))
	}
}

func TestSqrtPos(t *testing.T) {
	rng := mrand.New(mrand.NewPCG(3, 4))
	check := func(w float64) {
		t.Helper()
		if got, want := sqrtPos(w), math.Sqrt(w); ulpsApart(got, want) > 1 {
			t.Fatalf("sqrtPos(%v) = %v, math.Sqrt %v", w, got, want)
		}
	}
	for _, w := range []float64{0x1p-52, 1, 2, 4, 73.5, 106 * math.Ln2, 0.5, math.Nextafter(1, 0), math.Nextafter(4, 0), 1e-300, 1e300} {
		check(w)
	}
	for range 200000 {
		check(rng.Float64() * 80)
		check(math.Ldexp(1+rng.Float64(), rng.IntN(200)-100))
	}
}

func TestCosSinQuarter(t *testing.T) {
	rng := mrand.New(mrand.NewPCG(5, 6))
	check := func(a float64) {
		t.Helper()
		c, s := cosSinQuarter(a)
		ws, wc := math.Sincos(a)
		// Absolute error: normalPair multiplies by r ≤ 8.6 and rounds far
		// above these bits.
		if math.Abs(c-wc) > 4e-16 || math.Abs(s-ws) > 4e-16 {
			t.Fatalf("cosSinQuarter(%v) = %v, %v; math.Sincos %v, %v", a, c, s, wc, ws)
		}
	}
	for _, a := range []float64{0, 1e-300, 0x1p-51 * math.Pi / 2, math.Pi / 4, math.Nextafter(math.Pi/2, 0)} {
		check(a)
	}
	for range 200000 {
		check(rng.Float64() * math.Pi / 2)
	}
}

// refNormalPair is normalPair through package math.
func refNormalPair(x, y uint64) (float64, float64) {
	u := float64(x>>11|1) * 0x1p-53
	r := math.Sqrt(-2 * math.Log(u))
	theta := (float64(y>>62) + float64(y>>11&(1<<51-1))*0x1p-51) * (math.Pi / 2)
	s, c := math.Sincos(theta)
	return r * c, r * s
}

func TestNormalPairMatchesMath(t *testing.T) {
	rng := mrand.New(mrand.NewPCG(7, 8))
	check := func(x, y uint64) {
		t.Helper()
		z0, z1 := normalPair(x, y)
		w0, w1 := refNormalPair(x, y)
		// math.Sincos reduces θ up to 2π; a few ulp of θ at 8.6 are 1e-14.
		if math.Abs(z0-w0) > 1e-14 || math.Abs(z1-w1) > 1e-14 {
			t.Fatalf("normalPair(%#x, %#x) = %v, %v; math %v, %v", x, y, z0, z1, w0, w1)
		}
	}
	// The extremes of u and of each quarter's angle.
	for _, x := range []uint64{0, 1 << 11, math.MaxUint64, math.MaxUint64 >> 1, 1 << 63} {
		for q := range uint64(4) {
			for _, t := range []uint64{0, 1 << 11, 1<<62 - 1, 1 << 61} {
				check(x, q<<62|t)
			}
		}
	}
	for range 300000 {
		check(rng.Uint64(), rng.Uint64())
	}
	// The largest value: u = 2^−53 gives r = √(106 ln 2), at angle 0.
	if z0, _ := normalPair(0, 0); math.Abs(z0-math.Sqrt(106*math.Ln2)) > 1e-14 {
		t.Errorf("normalPair(0, 0) = %v, want √(106 ln 2) = %v", z0, math.Sqrt(106*math.Ln2))
	}
}

// TestNormalDistribution checks the values of the Sampler's stream against
// the standard normal distribution: the Kolmogorov–Smirnov statistic, the
// moments up to the fourth, the correlation of a pair's two values and of
// consecutive pairs.
func TestNormalDistribution(t *testing.T) {
	n := 1 << 21
	if testing.Short() {
		n = 1 << 19
	}
	s := NewSamplerFromSeed([SeedSize]byte{11})
	z := make([]float64, n)
	for i := range z {
		z[i] = s.normal()
	}
	var m1, m2, m3, m4, pairCorr, nextCorr float64
	for i, v := range z {
		m1 += v
		m2 += v * v
		m3 += v * v * v
		m4 += v * v * v * v
		if i%2 == 1 {
			pairCorr += v * z[i-1]
		}
		if i >= 2 {
			nextCorr += v * z[i-2]
		}
	}
	fn := float64(n)
	m1, m2, m3, m4 = m1/fn, m2/fn, m3/fn, m4/fn
	pairCorr /= fn / 2
	nextCorr /= fn - 2
	// Standard errors of the sample moments of N(0,1): √(μ_2k − μ_k²)/√n.
	se := func(v float64) float64 { return math.Sqrt(v / fn) }
	for _, c := range []struct {
		name     string
		got, sd  float64
		expected float64
	}{
		{"mean", m1, se(1), 0},
		{"E[z²]", m2, se(2), 1},
		{"E[z³]", m3, se(15), 0},
		{"E[z⁴]", m4, se(96), 3},
		{"E[z₀z₁] of a pair", pairCorr, se(2), 0},
		{"E[z_i z_(i+2)]", nextCorr, se(1), 0},
	} {
		if dev := math.Abs(c.got-c.expected) / c.sd; dev > 5 {
			t.Errorf("%s = %.5f, want %g (%.1f standard errors off)", c.name, c.got, c.expected, dev)
		}
	}
	slices.Sort(z)
	var d float64
	for i, v := range z {
		phi := 0.5 * math.Erfc(-v/math.Sqrt2)
		d = max(d, math.Abs(phi-float64(i)/fn), math.Abs(phi-float64(i+1)/fn))
	}
	// P(√n·D > 1.95) ≈ 0.001 for a sample of the distribution.
	if d*math.Sqrt(fn) > 1.95 {
		t.Errorf("Kolmogorov–Smirnov: √n·D = %.3f over %d values, want ≤ 1.95", d*math.Sqrt(fn), n)
	}
	if z[0] < -8.58 || z[n-1] > 8.58 {
		t.Errorf("values %v … %v beyond ±√(106 ln 2)", z[0], z[n-1])
	}
}

func TestGaussianTorus(t *testing.T) {
	rng := mrand.New(mrand.NewPCG(9, 10))
	check := func(y float64) {
		t.Helper()
		got := gaussianTorus(y*0x1p-32, 1) // z·σ·2^32 = y, exactly
		want := Torus32(int64(math.RoundToEven(y)))
		if got != want {
			t.Fatalf("gaussianTorus(%v·2^−32, 1) = %d, want %d", y, got, want)
		}
		// Away from ties it is FromFloat64's rounding.
		if y-math.Floor(y) != 0.5 && got != FromFloat64(y*0x1p-32) {
			t.Fatalf("gaussianTorus(%v·2^−32, 1) = %d, FromFloat64 %d", y, got, FromFloat64(y*0x1p-32))
		}
	}
	for _, y := range []float64{0, math.Copysign(0, -1), 0.5, 1.5, -0.5, -1.5, 2.5, 0.49999999999999994,
		-0.49999999999999994, 1<<31 - 0.5, 1 << 32, -(1 << 32), 1<<51 - 1, -(1<<51 - 1), 1<<51 - 0.5,
		-(1<<51 - 0.5), 1<<50 + 0.5, 12345.678, -12345.678} {
		check(y)
	}
	for range 100000 {
		check(rng.NormFloat64() * 0x1p17)
		check((rng.Float64()*2 - 1) * 0x1p51)
	}
	// σ scales z before rounding: 3·2^−31 is 6 units.
	if g := gaussianTorus(3, 0x1p-31); g != 6 {
		t.Errorf("gaussianTorus(3, 2^−31) = %d, want 6", g)
	}
	if g := gaussianTorus(-3, 0x1p-31); g != -6&(1<<32-1) {
		t.Errorf("gaussianTorus(−3, 2^−31) = %d, want −6", g)
	}
}

func TestGaussianSigmaRange(t *testing.T) {
	// Beyond maxRoundSigma, and for NaN and ±Inf, FromFloat64 rounds; the
	// stream moves on the same way.
	for _, sigma := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if g := NewSamplerFromSeed([SeedSize]byte{1}).Gaussian(sigma); g != 0 {
			t.Errorf("Gaussian(%v) = %d, want 0", sigma, g)
		}
	}
	a, b := NewSamplerFromSeed([SeedSize]byte{2}), NewSamplerFromSeed([SeedSize]byte{2})
	for _, sigma := range []float64{maxRoundSigma, -maxRoundSigma, 1e-3, -1e-3} {
		z := b.normal()
		if got, want := a.Gaussian(sigma), FromFloat64(z*sigma); got != want && math.Abs(float64(int32(got-want))) > 1 {
			t.Errorf("Gaussian(%v) = %d, want %d", sigma, got, want)
		}
	}
	big := 3.0 * maxRoundSigma
	z := b.normal()
	if got, want := a.Gaussian(big), FromFloat64(z*big); got != want {
		t.Errorf("Gaussian(%v) = %d, want %d", big, got, want)
	}
	dst := make([]Torus32, 3)
	a.AddGaussian(dst, big)
	for i := range dst {
		if want := FromFloat64(b.normal() * big); dst[i] != want {
			t.Errorf("AddGaussian(%v)[%d] = %d, want %d", big, i, dst[i], want)
		}
	}
}

// TestSamplerCopiesShareSpare: a copy of a Sampler shares its stream and
// its spare normal value, so copies never both return one value.
func TestSamplerCopiesShareSpare(t *testing.T) {
	a := NewSamplerFromSeed([SeedSize]byte{3})
	a.Gaussian(1e-3) // leaves a spare
	b := *a
	if x, y := a.Gaussian(1e-3), b.Gaussian(1e-3); x == y {
		t.Errorf("a Sampler and its copy drew the same value %d", x)
	}
}

// TestGaussianKnownAnswers pins the first values of a seeded stream:
// seeded keys and the digests of bootstrap's tests follow from them.
func TestGaussianKnownAnswers(t *testing.T) {
	s := NewSamplerFromSeed([SeedSize]byte{'k', 'a', 't'})
	var got []int32
	for range 5 {
		got = append(got, s.Gaussian(0x1p-15).Signed())
	}
	dst := make([]Torus32, 3)
	s.AddGaussian(dst, 0x1p-25)
	for _, v := range dst {
		got = append(got, v.Signed())
	}
	want := []int32{209606, 122990, 99445, 24500, 171504, -197, 94, -189}
	if !slices.Equal(got, want) {
		t.Errorf("got %d, want %d", got, want)
	}
}

// TestAddGaussianIsGaussian: AddGaussian, which takes its values a pair
// at a time, adds what as many calls of Gaussian would return, and leaves
// the stream and the spare value where they leave them: two samplers of
// one seed, one filling slices of every length from 0 to 9 and some
// longer by AddGaussian, the other by Gaussian, with single Gaussian and
// Uniform draws between them (a spare or none at each call), for sigmas
// rounded in constant time and by FromFloat64.
func TestAddGaussianIsGaussian(t *testing.T) {
	rng := mrand.New(mrand.NewPCG(31, 32))
	lens := []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 17, 1023, 1024}
	sigmas := []float64{0x1p-15, 0x1p-25, 9.32e-10, 0x1p-32, 0.3, maxRoundSigma, 2 * maxRoundSigma, math.Inf(1), math.NaN()}
	for _, sigma := range sigmas {
		seed := [SeedSize]byte{7, byte(rng.Uint32())}
		a, b := NewSamplerFromSeed(seed), NewSamplerFromSeed(seed)
		for range 60 {
			n := lens[rng.IntN(len(lens))]
			got, want := make([]Torus32, n), make([]Torus32, n)
			for j := range got {
				got[j] = Torus32(rng.Uint32())
				want[j] = got[j]
			}
			a.AddGaussian(got, sigma)
			for j := range want {
				want[j] += b.Gaussian(sigma)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("sigma %v, %d values: AddGaussian added %v, Gaussian %v", sigma, n, got, want)
			}
			switch rng.IntN(3) {
			case 0:
				if x, y := a.Gaussian(sigma), b.Gaussian(sigma); x != y {
					t.Fatalf("sigma %v: the next Gaussian %#x and %#x", sigma, x, y)
				}
			case 1:
				if x, y := a.Uniform(), b.Uniform(); x != y {
					t.Fatalf("sigma %v: the next Uniform %#x and %#x", sigma, x, y)
				}
			}
		}
	}
}

// BenchmarkGaussian times a Gaussian value of the Sampler (constant time)
// beside math/rand's ziggurat on the same ChaCha8 stream, which it
// replaced.
func BenchmarkGaussian(b *testing.B) {
	dst := make([]Torus32, 1024)
	b.Run("Sampler", func(b *testing.B) {
		s := NewSamplerFromSeed([SeedSize]byte{1})
		for b.Loop() {
			s.AddGaussian(dst, 0x1p-15)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(dst)), "ns/value")
	})
	b.Run("ziggurat", func(b *testing.B) {
		rng := mrand.New(mrand.NewChaCha8([SeedSize]byte{1}))
		for b.Loop() {
			for i := range dst {
				dst[i] += FromFloat64(rng.NormFloat64() * 0x1p-15)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(dst)), "ns/value")
	})
}
