package torus

import (
	"math"
	"math/big"
	"math/bits"
	mrand "math/rand/v2"
	"testing"
)

func TestEncodeDecode(t *testing.T) {
	if got := Encode(1, 8); got != 1<<29 {
		t.Fatalf("Encode(1, 8) = %#x, want 2^29", got)
	}
	if got := Encode(-1, 8); got != 7<<29 {
		t.Fatalf("Encode(−1, 8) = %#x, want −2^29", got)
	}
	if got := Encode(1, 3); got != 0x5555_5555 {
		t.Fatalf("Encode(1, 3) = %#x, want 0x55555555", got)
	}
	if got := Encode(2, 3); got != 0xAAAA_AAAB {
		t.Fatalf("Encode(2, 3) = %#x, want 0xAAAAAAAB", got)
	}
	for _, m := range []int64{1, 2, 3, 4, 7, 8, 16, 1000, 1 << 20, 1 << 31} {
		for _, mu := range []int64{0, 1, 2, m - 1, m / 2, -1, 5 * m, 12345} {
			want := ((mu % m) + m) % m
			enc := Encode(mu, m)
			if got := Decode(enc, m); got != want {
				t.Fatalf("Decode(Encode(%d, %d)) = %d, want %d", mu, m, got, want)
			}
			// Reference: round(want·2^32/m) with math/big.
			num := new(big.Int).Lsh(big.NewInt(want), 33)
			num.Add(num, big.NewInt(m))
			num.Div(num, big.NewInt(2*m))
			ref := Torus32(new(big.Int).Mod(num, new(big.Int).Lsh(big.NewInt(1), 32)).Uint64())
			if enc != ref {
				t.Fatalf("Encode(%d, %d) = %#x, want %#x", mu, m, enc, ref)
			}
			// A small error still decodes to the same message.
			if m <= 1<<20 {
				e := Torus32(int32(math.MaxUint32/uint64(m)/4)) - 1
				if got := Decode(enc+e, m); got != want {
					t.Fatalf("Decode(Encode(%d, %d)+δ) = %d", mu, m, got)
				}
				if got := Decode(enc-e, m); got != want {
					t.Fatalf("Decode(Encode(%d, %d)−δ) = %d", mu, m, got)
				}
			}
		}
	}
}

func TestFloat64(t *testing.T) {
	cases := []struct {
		x    float64
		want Torus32
	}{
		{0, 0}, {0.5, 1 << 31}, {-0.5, 1 << 31}, {0.25, 1 << 30}, {-0.25, 3 << 30},
		{1, 0}, {-1, 0}, {3.125, 1 << 29}, {1.0 / (1 << 33), 1}, {-1.0 / (1 << 34), 0},
		{math.NaN(), 0}, {math.Inf(1), 0}, {-1e-300, 0}, {0.999999999999, 0},
	}
	for _, c := range cases {
		if got := FromFloat64(c.x); got != c.want {
			t.Errorf("FromFloat64(%v) = %#x, want %#x", c.x, got, c.want)
		}
	}
	r := mrand.New(mrand.NewPCG(1, 2))
	for range 10000 {
		v := Torus32(r.Uint32())
		f := v.Float64()
		if f < -0.5 || f >= 0.5 {
			t.Fatalf("%#x.Float64() = %v out of [−1/2, 1/2)", v, f)
		}
		if FromFloat64(f) != v || FromFloat64(f+7) != v || FromFloat64(f-3) != v {
			t.Fatalf("FromFloat64(%#x.Float64()) round trip failed", v)
		}
		if int64(v.Signed()) != int64(math.Round(f*(1<<32))) {
			t.Fatalf("Signed(%#x) = %d", v, v.Signed())
		}
	}
}

func TestModSwitch(t *testing.T) {
	r := mrand.New(mrand.NewPCG(3, 4))
	vals := []Torus32{0, 1, 1 << 31, 1<<31 - 1, math.MaxUint32, 1 << 21, 1<<21 - 1, 3 << 20}
	for range 2000 {
		vals = append(vals, Torus32(r.Uint32()))
	}
	for logM := uint(1); logM <= 31; logM++ {
		m := uint64(1) << logM
		for _, v := range vals {
			// Reference: floor((v·m + 2^31)/2^32) mod m, in math/big.
			x := new(big.Int).Mul(big.NewInt(int64(v)), new(big.Int).SetUint64(m))
			x.Add(x, big.NewInt(1<<31))
			x.Rsh(x, 32)
			x.Mod(x, new(big.Int).SetUint64(m))
			want := x.Uint64()
			if got := ModSwitch(v, m); got != want {
				t.Fatalf("ModSwitch(%#x, 2^%d) = %d, want %d", v, logM, got, want)
			}
			if got := ModSwitchPow2(v, logM); uint64(got) != want {
				t.Fatalf("ModSwitchPow2(%#x, %d) = %d, want %d", v, logM, got, want)
			}
		}
	}
	// Non-powers of two, through the float definition.
	for _, m := range []uint64{3, 5, 1000, 2047} {
		for _, v := range vals[:200] {
			want := uint64(math.Floor(float64(v)*float64(m)/(1<<32)+0.5)) % m
			if got := ModSwitch(v, m); got != want {
				t.Fatalf("ModSwitch(%#x, %d) = %d, want %d", v, m, got, want)
			}
		}
	}
	if ModSwitch(12345, 1<<32) != 12345 {
		t.Fatal("ModSwitch with m = 2^32 must be the identity")
	}
}

// modSwitchDiv is ModSwitch's formula before it lost its division (kept
// as the reference of TestModSwitchNoDivision): m in [1, 2^32 − 1].
func modSwitchDiv(t Torus32, m uint64) uint64 {
	return ((uint64(t)*m + 1<<31) >> 32) % m
}

// modSwitchRoundCopy keeps a standalone copy of modSwitchRound, which is
// otherwise only inlined, in this package's test binary, where tfhe's
// TestConstantTimeCode reads it.
var modSwitchRoundCopy = modSwitchRound

// TestModSwitchNoDivision: ModSwitch without its division gives the
// division's result, for every modulus up to 2^12 and some large ones, at
// every decision boundary (the t where ⌊(t·m + 2^31)/2^32⌋ steps, and
// its neighbours: v = m among them), the ends, and random t.
func TestModSwitchNoDivision(t *testing.T) {
	rng := mrand.New(mrand.NewPCG(21, 22))
	ms := []uint64{1<<31 - 1, 1 << 31, 1<<31 + 1, 1<<32 - 2, 1<<32 - 1, 3 << 30, 1000003}
	for m := uint64(1); m <= 1<<12; m++ {
		ms = append(ms, m)
	}
	for range 100 {
		ms = append(ms, rng.Uint64N(1<<32-1)+1)
	}
	check := func(v Torus32, m uint64) {
		want := modSwitchDiv(v, m)
		if got := ModSwitch(v, m); got != want {
			t.Fatalf("ModSwitch(%#x, %d) = %d, the division gives %d", v, m, got, want)
		}
		if got := modSwitchRoundCopy(v, m); got != want {
			t.Fatalf("modSwitchRound(%#x, %d) = %d, the division gives %d", v, m, got, want)
		}
	}
	for _, m := range ms {
		for _, v := range []Torus32{0, 1, 1<<31 - 1, 1 << 31, 1<<31 + 1, math.MaxUint32 - 1, math.MaxUint32} {
			check(v, m)
		}
		// v steps to k where t·m + 2^31 reaches k·2^32: t = ⌈(k·2^32 −
		// 2^31)/m⌉. All k for small m, and k near 0, m/2 and m.
		ks := []uint64{1, 2, m / 2, m/2 + 1, m - 1, m}
		if m <= 1<<8 {
			ks = ks[:0]
			for k := uint64(1); k <= m; k++ {
				ks = append(ks, k)
			}
		}
		for _, k := range ks {
			if k == 0 {
				continue
			}
			b := (k<<32 - 1<<31 + m - 1) / m
			for _, d := range []uint64{0, 1, 2} {
				if b >= d && b-d <= math.MaxUint32 {
					check(Torus32(b-d), m)
				}
				if b+d <= math.MaxUint32 {
					check(Torus32(b+d), m)
				}
			}
		}
		for range 200 {
			check(Torus32(rng.Uint32()), m)
		}
	}
}

func TestSamplerDeterminism(t *testing.T) {
	seed := [SeedSize]byte{1, 2, 3}
	a, b := NewSamplerFromSeed(seed), NewSamplerFromSeed(seed)
	x, y := make([]Torus32, 101), make([]Torus32, 101)
	a.UniformSlice(x)
	b.UniformSlice(y)
	for i := range x {
		if x[i] != y[i] {
			t.Fatal("same seed, different uniform values")
		}
	}
	if a.Gaussian(1e-3) != b.Gaussian(1e-3) {
		t.Fatal("same seed, different Gaussian values")
	}
	c1 := a.Derive("x", 7)
	a.Uniform() // the parent's position does not matter
	c2 := NewSamplerFromSeed(seed).Derive("x", 7)
	if c1.Uniform() != c2.Uniform() {
		t.Fatal("Derive depends on the parent's stream position")
	}
	if NewSamplerFromSeed(seed).Derive("x", 8).Uniform() == NewSamplerFromSeed(seed).Derive("x", 7).Uniform() {
		t.Fatal("Derive ignores the index (or a 2^−32 coincidence)")
	}
	if DeriveSeed(seed, "ab", 1) == DeriveSeed(seed, "a", 1) {
		t.Fatal("DeriveSeed ignores the label")
	}
	if NewSampler().Uniform() == NewSampler().Uniform() && NewSampler().Uniform() == NewSampler().Uniform() {
		t.Fatal("crypto/rand seeding gives equal streams")
	}
}

func TestSamplerDistributions(t *testing.T) {
	s := NewSamplerFromSeed([SeedSize]byte{9})
	const count = 200000
	for _, sigma := range []float64{math.Ldexp(1, -15), math.Ldexp(1, -25), 1e-3} {
		var sum, sum2 float64
		for range count {
			f := s.Gaussian(sigma).Float64()
			sum += f
			sum2 += f * f
		}
		mean := sum / count
		sd := math.Sqrt(sum2/count - mean*mean)
		// Rounding to 2^−32 adds variance 1/12 ulp²: negligible except at 2^−25.
		wantSD := math.Sqrt(sigma*sigma + math.Ldexp(1, -64)/12)
		if math.Abs(sd/wantSD-1) > 0.01 || math.Abs(mean) > 5*sigma/math.Sqrt(count) {
			t.Errorf("Gaussian(%g): mean %g, sd %g (want sd %g)", sigma, mean, sd, wantSD)
		}
	}
	bits := make([]int32, 100003)
	s.BinarySlice(bits)
	ones := 0
	for _, b := range bits {
		if b != 0 && b != 1 {
			t.Fatalf("BinarySlice produced %d", b)
		}
		ones += int(b)
	}
	if math.Abs(float64(ones)-float64(len(bits))/2) > 5*math.Sqrt(float64(len(bits))/4) {
		t.Errorf("BinarySlice: %d ones of %d", ones, len(bits))
	}
	u := make([]Torus32, count)
	s.UniformSlice(u)
	var top int
	for _, v := range u {
		top += int(v >> 31)
	}
	if math.Abs(float64(top)-count/2) > 5*math.Sqrt(count/4) {
		t.Errorf("UniformSlice: %d of %d with the top bit set", top, count)
	}
}

// encodeBig is Encode by big integers: round((mu mod msgSpace)·2^32 /
// msgSpace) mod 2^32, ties up.
func encodeBig(mu, msgSpace int64) Torus32 {
	m := new(big.Int).Mod(big.NewInt(mu), big.NewInt(msgSpace))
	num := new(big.Int).Lsh(m, 33) // 2·m·2^32 + msgSpace, over 2·msgSpace: ties up
	num.Add(num, big.NewInt(msgSpace))
	q := num.Quo(num, new(big.Int).Lsh(big.NewInt(msgSpace), 1))
	return Torus32(q.Uint64())
}

// encodeDiv is Encode's formula for message spaces that are not powers of
// two before it lost its divisions (kept as the reference of
// TestEncodeMatchesDivision).
func encodeDiv(mu int64, msgSpace int64) Torus32 {
	m := mu % msgSpace
	if m < 0 {
		m += msgSpace
	}
	q, r := bits.Div64(uint64(m)>>32, uint64(m)<<32, uint64(msgSpace))
	if r >= uint64(msgSpace)-r {
		q++
	}
	return Torus32(q)
}

// TestEncodeMatchesDivision: Encode by a reciprocal (encodeMod) gives the
// bits of the division it replaced: for every message space up to 2^10
// (2^12 without -short), every message in [−2y, 2y) and the ends of int64;
// for spaces near powers of two and random ones up to 2^63 − 1, messages
// near 0, the multiples of the space, the rounding ties and the ends, and
// random ones. Powers of two go through encodeMod too (Encode shifts
// those up to 2^32), since it must hold for them past 2^32.
func TestEncodeMatchesDivision(t *testing.T) {
	check := func(mu, y int64) {
		dv := newDivisor(uint64(y))
		_, c := dv.divRem(1, 0)
		want := encodeDiv(mu, y)
		if got := encodeMod(mu, &dv, c); got != want {
			t.Fatalf("encodeMod(%d, %d) = %#x, the division gives %#x", mu, y, got, want)
		}
		if got := Encode(mu, y); got != want {
			t.Fatalf("Encode(%d, %d) = %#x, the division gives %#x", mu, y, got, want)
		}
	}
	maxSmall := int64(1) << 12
	if testing.Short() {
		maxSmall = 1 << 10
	}
	for y := int64(2); y <= maxSmall; y++ {
		for mu := -2 * y; mu < 2*y; mu++ {
			check(mu, y)
		}
		for _, mu := range []int64{math.MinInt64, math.MinInt64 + 1, math.MaxInt64, math.MaxInt64 - 1} {
			check(mu, y)
		}
	}
	rng := mrand.New(mrand.NewPCG(23, 24))
	var ys []int64
	for k := 2; k <= 62; k++ {
		ys = append(ys, 1<<k-1, 1<<k, 1<<k+1, 3<<(k-1))
	}
	ys = append(ys, math.MaxInt64, math.MaxInt64-1, 1<<32-1, 1<<32+1, 1<<53+1)
	for range 300 {
		ys = append(ys, rng.Int64N(math.MaxInt64-2)+3, rng.Int64N(1<<40)+3, rng.Int64N(1<<20)+3)
	}
	for _, y := range ys {
		mus := []int64{0, 1, -1, 2, -2, y - 1, y, y + 1, -y, -y + 1, -y - 1, y / 2, y/2 + 1, -y / 2, -y/2 - 1,
			math.MinInt64, math.MinInt64 + 1, math.MaxInt64, math.MaxInt64 - 1}
		// The ties of round(m·2^32/y): m·2^33 near an odd multiple of y.
		for range 8 {
			j := rng.Uint64N(1 << 32)
			if m, ok := tieMessage(2*j+1, uint64(y)); ok {
				mus = append(mus, int64(m), int64(m)-1, int64(m)+1, int64(m)-y)
			}
		}
		for range 40 {
			mus = append(mus, rng.Int64(), -rng.Int64(), rng.Int64N(y), -rng.Int64N(y), rng.Int64N(y)*(rng.Int64N(1<<20)-1<<19))
		}
		for _, mu := range mus {
			check(mu, y)
		}
	}
}

// tieMessage returns ⌈k·y/2^33⌉, the message m whose m·2^32/y is nearest
// above the odd half-multiple k/2 of units, when it is below y.
func tieMessage(k, y uint64) (uint64, bool) {
	hi, lo := bits.Mul64(k, y)
	lo, c := bits.Add64(lo, 1<<33-1, 0)
	hi += c
	m := hi<<31 | lo>>33
	return m, m < y && m < math.MaxInt64
}

// TestDivRem: the reciprocal division against bits.Div64, at the ends of
// the divisor's range (y = 1, where it shifts by 63, and y ≥ 2^63, where
// it does not shift) and of the dividend's (x1 = y − 1), and at random.
func TestDivRem(t *testing.T) {
	rng := mrand.New(mrand.NewPCG(25, 26))
	ys := []uint64{1, 2, 3, 1<<63 - 1, 1 << 63, 1<<63 + 1, math.MaxUint64, math.MaxUint64 - 1, 1 << 32, 1<<32 - 1}
	for range 200 {
		ys = append(ys, rng.Uint64(), rng.Uint64()>>rng.UintN(64)|1)
	}
	for _, y := range ys {
		dv := newDivisor(y)
		for range 200 {
			x1s := []uint64{0, y - 1, rng.Uint64N(y), (y - 1) >> rng.UintN(64)}
			x0s := []uint64{0, math.MaxUint64, rng.Uint64()}
			for _, x1 := range x1s {
				for _, x0 := range x0s {
					q, r := dv.divRem(x1, x0)
					wq, wr := bits.Div64(x1, x0, y)
					if q != wq || r != wr {
						t.Fatalf("divRem(%#x, %#x) by %#x = (%#x, %#x), want (%#x, %#x)", x1, x0, y, q, r, wq, wr)
					}
				}
			}
		}
	}
}

// TestEncodePowerOfTwo: the shift Encode takes for a power-of-two message
// space gives the exact quotient for every such space up to 2^32.
func TestEncodePowerOfTwo(t *testing.T) {
	rng := mrand.New(mrand.NewPCG(11, 12))
	for k := range 33 {
		space := int64(1) << k
		for _, mu := range []int64{0, 1, -1, space - 1, space, -space, space/2 + 1, math.MaxInt64, math.MinInt64, rng.Int64(), -rng.Int64()} {
			if got, want := Encode(mu, space), encodeBig(mu, space); got != want {
				t.Fatalf("Encode(%d, 2^%d) = %d, exactly %d", mu, k, got, want)
			}
		}
	}
}

// TestEncodeLargeSpaces: Encode is exact for every positive message space,
// those past 2^53 included, where a float quotient lost the message's low
// bits (2^61 + 2^29 − 1 over 2^62 is 2^31 − 2^−31 units: 2^31, not
// 2^31 + 1).
func TestEncodeLargeSpaces(t *testing.T) {
	if got := Encode(1<<61+1<<29-1, 1<<62); got != 1<<31 {
		t.Errorf("Encode(2^61 + 2^29 − 1, 2^62) = %d, want 2^31", got)
	}
	rng := mrand.New(mrand.NewPCG(13, 14))
	spaces := []int64{3, 1<<32 - 1, 1<<32 + 1, 1 << 33, 1<<53 + 1, 1 << 62, math.MaxInt64, math.MaxInt64 - 1}
	for range 200 {
		spaces = append(spaces, rng.Int64N(math.MaxInt64)+1, rng.Int64N(1<<40)+1)
	}
	for _, space := range spaces {
		for _, mu := range []int64{0, 1, -1, space - 1, space / 2, space/2 + 1, -space / 2, math.MaxInt64, math.MinInt64, rng.Int64(), -rng.Int64()} {
			if got, want := Encode(mu, space), encodeBig(mu, space); got != want {
				t.Fatalf("Encode(%d, %d) = %d, exactly %d", mu, space, got, want)
			}
		}
	}
}

// TestFromFloat64Exact: FromFloat64 rounds x·2^32 mod 2^32 exactly, ties
// up, near ties and for negative x too (−2^−33 − 2^−60 is −1/2 − 2^−28
// units: −1, where x − ⌊x⌋ at scale 1 made it a tie and 0).
func TestFromFloat64Exact(t *testing.T) {
	ref := func(x float64) Torus32 {
		y := new(big.Float).SetPrec(2000).SetFloat64(x)
		y.Mul(y, new(big.Float).SetFloat64(1<<32))
		y.Add(y, big.NewFloat(0.5))
		i, acc := y.Int(nil)  // truncates toward zero
		if acc == big.Above { // y was negative and not whole: floor is one less
			i.Sub(i, big.NewInt(1))
		}
		return Torus32(new(big.Int).And(i, big.NewInt(1<<32-1)).Uint64())
	}
	if got := FromFloat64(-0x1p-33 - 0x1p-60); got != 0xFFFFFFFF {
		t.Errorf("FromFloat64(−2^−33 − 2^−60) = %#x, want 0xffffffff", got)
	}
	rng := mrand.New(mrand.NewPCG(15, 16))
	xs := []float64{0, -0.0, 0.5, -0.5, 0x1p-33, -0x1p-33, -1.5 * 0x1p-32, 0.9999999999999999, -0.9999999999999999, 1e300, -1e300, 0x1p-1074, -0x1p-1074, 12345.678}
	for range 2000 {
		// Near a tie: k + 1/2 units, nudged by a few ulps, at scales from
		// tiny to large.
		tie := (float64(rng.Int64N(1<<33)-1<<32) + 0.5) * 0x1p-32
		xs = append(xs, tie, math.Nextafter(tie, 0), math.Nextafter(tie, 2), rng.NormFloat64()*math.Exp2(float64(rng.IntN(80)-60)))
	}
	for _, x := range xs {
		if got, want := FromFloat64(x), ref(x); got != want {
			t.Fatalf("FromFloat64(%g) = %d, exactly %d", x, got, want)
		}
	}
}
