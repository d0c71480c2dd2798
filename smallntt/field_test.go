package smallntt

import (
	"math/big"
	"math/rand/v2"
	"testing"
)

var bigP = new(big.Int).SetUint64(P)

func bu(x uint64) *big.Int { return new(big.Int).SetUint64(x) }

func bmod(x *big.Int) uint64 { return new(big.Int).Mod(x, bigP).Uint64() }

// edge values: around 0, 2^32, P, 2^63 and 2^64, plus random ones.
func edgeValues(rng *rand.Rand, random int) []uint64 {
	v := []uint64{0, 1, 2, epsilon - 1, epsilon, epsilon + 1, 1 << 32, 1<<32 + 1,
		P/2 - 1, P / 2, P/2 + 1, P - 2, P - 1, P, P + 1, P + 1<<31,
		1<<63 - 1, 1 << 63, 1<<63 + 1, ^uint64(0) - 1, ^uint64(0)}
	for i := 0; i < random; i++ {
		v = append(v, rng.Uint64(), rng.Uint64N(P))
	}
	return v
}

func canonical(x uint64) bool { return x < P }

// Each function, on every pair of values in its documented input range,
// returns the documented range and the right residue (math/big).
func TestFieldAgainstBig(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	vals := edgeValues(rng, 20)
	for _, a := range vals {
		if r := Reduce(a); r != bmod(bu(a)) {
			t.Errorf("Reduce(%d) = %d", a, r)
		}
		if canonical(a) {
			if r := Neg(a); r != bmod(new(big.Int).Neg(bu(a))) || !canonical(r) {
				t.Errorf("Neg(%d) = %d", a, r)
			}
		}
		for _, b := range vals {
			sum := bmod(new(big.Int).Add(bu(a), bu(b)))
			diff := bmod(new(big.Int).Sub(bu(a), bu(b)))
			prod := bmod(new(big.Int).Mul(bu(a), bu(b)))
			if canonical(a) && canonical(b) {
				if r := Add(a, b); r != sum {
					t.Errorf("Add(%d, %d) = %d", a, b, r)
				}
			}
			if canonical(b) {
				r := Sub(a, b)
				if bmod(bu(r)) != diff || (canonical(a) && r != diff) {
					t.Errorf("Sub(%d, %d) = %d", a, b, r)
				}
			}
			if b <= P {
				if r := addT(a, b); bmod(bu(r)) != sum {
					t.Errorf("addT(%d, %d) = %d", a, b, r)
				}
				if r := subT(a, b); bmod(bu(r)) != diff {
					t.Errorf("subT(%d, %d) = %d", a, b, r)
				}
			}
			if r := addLazy(a, b); bmod(bu(r)) != sum {
				t.Errorf("addLazy(%d, %d) = %d", a, b, r)
			}
			if r := subLazy(a, b); bmod(bu(r)) != diff {
				t.Errorf("subLazy(%d, %d) = %d", a, b, r)
			}
			if r := Mul(a, b); r != prod {
				t.Errorf("Mul(%d, %d) = %d", a, b, r)
			}
			if r := mulLazy(a, b); bmod(bu(r)) != prod {
				t.Errorf("mulLazy(%d, %d) = %d", a, b, r)
			}
			x := new(big.Int).Lsh(bu(a), 64)
			if r := Reduce128(a, b); r != bmod(x.Add(x, bu(b))) {
				t.Errorf("Reduce128(%d, %d) = %d", a, b, r)
			}
			for _, c := range []uint64{0, 1, 1<<32 - 1, 1 << 32, b ^ a, ^uint64(0)} {
				x := new(big.Int).Lsh(bu(c), 128)
				x.Add(x, new(big.Int).Lsh(bu(a), 64))
				x.Add(x, bu(b))
				if r := Reduce192(c, a, b); r != bmod(x) {
					t.Errorf("Reduce192(%d, %d, %d) = %d", c, a, b, r)
				}
			}
		}
	}
}

func TestShifts(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 34))
	for _, a := range edgeValues(rng, 10) {
		for s := uint(0); s < 400; s++ {
			x := new(big.Int).Lsh(bu(a), s)
			want := bmod(x)
			if r := MulPow2(a, s); r != want {
				t.Fatalf("MulPow2(%d, %d) = %d, want %d", a, s, r, want)
			}
			if s >= 96 {
				continue
			}
			if r := shlLazy(a, s); bmod(bu(r)) != want {
				t.Fatalf("shlLazy(%d, %d) = %d", a, s, r)
			}
			switch {
			case s <= 32:
				if r := shlLoC(a, s); r != want {
					t.Fatalf("shlLoC(%d, %d) = %d", a, s, r)
				}
			case s < 64:
				if r := shlMidC(a, s); r != want {
					t.Fatalf("shlMidC(%d, %d) = %d", a, s, r)
				}
			default:
				if r := shlHi(a, s); r != want { // canonical by construction
					t.Fatalf("shlHi(%d, %d) = %d", a, s, r)
				}
			}
		}
	}
	// 2 has order 192 and 2^96 = −1 (DESIGN.md §3).
	if MulPow2(1, 96) != P-1 || MulPow2(1, 192) != 1 || Exp(2, 192) != 1 || Exp(2, 96) != P-1 {
		t.Fatal("2^96 ≠ −1 or 2^192 ≠ 1")
	}
}

func TestExpInvInt64(t *testing.T) {
	rng := rand.New(rand.NewPCG(35, 36))
	for _, a := range edgeValues(rng, 10) {
		for _, e := range []uint64{0, 1, 2, 3, 63, 64, P - 2, P - 1, rng.Uint64()} {
			if r := Exp(a, e); r != new(big.Int).Exp(bu(a), bu(e), bigP).Uint64() {
				t.Errorf("Exp(%d, %d) = %d", a, e, r)
			}
		}
		if Reduce(a) != 0 && Mul(Inv(a), a) != 1 {
			t.Errorf("Inv(%d)", a)
		}
		if Reduce(a) == 0 && Inv(a) != 0 {
			t.Errorf("Inv(%d) ≠ 0", a)
		}
		if Pow(a, 12345) != Exp(a, 12345) {
			t.Error("Pow ≠ Exp")
		}
	}
	// 7 generates Z_p^* (DESIGN.md §3): 7^((p−1)/q) ≠ 1 for every prime q | p−1.
	for _, q := range []uint64{2, 3, 5, 17, 257, 65537} {
		if (P-1)%q != 0 || Exp(7, (P-1)/q) == 1 {
			t.Errorf("7 is not a generator (q = %d)", q)
		}
	}
	for _, x := range []int64{0, 1, -1, 42, -42, 1<<63 - 1, -1 << 63, -(1<<63 - 1)} {
		u := FromInt64(x)
		if !canonical(u) || u != bmod(big.NewInt(x)) {
			t.Errorf("FromInt64(%d) = %d", x, u)
		}
		if y := ToInt64Centered(u); y != x && MaxAbs([]int64{x}) <= (P-1)/2 {
			t.Errorf("ToInt64Centered(FromInt64(%d)) = %d", x, y)
		}
	}
	half := int64((P - 1) / 2)
	if ToInt64Centered(FromInt64(half)) != half || ToInt64Centered(FromInt64(-half)) != -half {
		t.Error("ToInt64Centered at ±(P−1)/2")
	}
	if ToInt64Centered(P+5) != 5 || ToInt64Centered(P-5) != -5 {
		t.Error("ToInt64Centered of non-canonical input")
	}
}

// fieldCopies are the field operations as function values: standalone
// copies, not inlined, which tfhe.TestConstantTimeCode reads for branches
// in this package's test binary (where they are inlined, it reads the
// functions they are inlined into). TestFieldCopies checks that they
// compute what the inlined code does.
var fieldCopies = struct {
	reduce, neg                                                                    func(uint64) uint64
	fromInt64                                                                      func(int64) uint64
	toInt64Centered                                                                func(uint64) int64
	add, sub, mul, mulLazy, addLazy, subLazy, addT, subT, reduce128, reduce128Lazy func(a, b uint64) uint64
	reduce192                                                                      func(w, y, z uint64) uint64
	shlLo, shlMid, shlHi, shlLoC, shlMidC                                          func(uint64, uint) uint64
}{Reduce, Neg, FromInt64, ToInt64Centered, Add, Sub, Mul, mulLazy, addLazy, subLazy, addT, subT, Reduce128, reduce128Lazy,
	Reduce192, shlLo, shlMid, shlHi, shlLoC, shlMidC}

func TestFieldCopies(t *testing.T) {
	c := fieldCopies
	rng := rand.New(rand.NewPCG(37, 38))
	vals := edgeValues(rng, 10)
	for _, a := range vals {
		if c.reduce(a) != Reduce(a) || c.neg(a) != Neg(a) || c.fromInt64(int64(a)) != FromInt64(int64(a)) ||
			c.toInt64Centered(a) != ToInt64Centered(a) {
			t.Errorf("Reduce, Neg, FromInt64 or ToInt64Centered of %d: copy ≠ inlined", a)
		}
		for s := uint(0); s < 96; s++ {
			var got, want uint64
			switch {
			case s <= 32:
				got, want = c.shlLo(a, s)^c.shlLoC(a, s), shlLo(a, s)^shlLoC(a, s)
			case s < 64:
				got, want = c.shlMid(a, s)^c.shlMidC(a, s), shlMid(a, s)^shlMidC(a, s)
			default:
				got, want = c.shlHi(a, s), shlHi(a, s)
			}
			if got != want {
				t.Errorf("shifts of %d by %d: copy ≠ inlined", a, s)
			}
		}
		for _, b := range vals {
			for i, f := range []struct{ copy, inl uint64 }{
				{c.add(a, b), Add(a, b)}, {c.sub(a, b), Sub(a, b)}, {c.mul(a, b), Mul(a, b)},
				{c.mulLazy(a, b), mulLazy(a, b)}, {c.addLazy(a, b), addLazy(a, b)}, {c.subLazy(a, b), subLazy(a, b)},
				{c.addT(a, b), addT(a, b)}, {c.subT(a, b), subT(a, b)}, {c.reduce128(a, b), Reduce128(a, b)},
				{c.reduce128Lazy(a, b), reduce128Lazy(a, b)}, {c.reduce192(a^b, a, b), Reduce192(a^b, a, b)},
			} {
				if f.copy != f.inl {
					t.Errorf("operation %d of (%d, %d): copy %d ≠ inlined %d", i, a, b, f.copy, f.inl)
				}
			}
		}
	}
}
