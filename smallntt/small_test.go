package smallntt

import (
	"fmt"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

var smallKinds = []SmallKind{SmallCyclic, SmallTwisted, SmallCyclicInverse, SmallTwistedInverse}

func TestSmallAgainstNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range SmallSizes {
		names, vecs := testVectors(n, rng, 4)
		for _, kind := range smallKinds {
			for _, v := range []Variant{Matrix, MatrixNoMerge, Butterfly} {
				s, err := NewSmall(n, kind, v)
				require.NoError(t, err)
				for i, x := range vecs {
					want := naiveSmall(kind, x)
					got := make([]uint64, n)
					s.Apply(got, x)
					equalAt(t, fmt.Sprintf("n=%d %v %v %s", n, kind, v, names[i]), got, want)
					// In place.
					y := append([]uint64(nil), x...)
					s.Apply(y, y)
					equalAt(t, fmt.Sprintf("n=%d %v %v %s in place", n, kind, v, names[i]), y, want)
				}
			}
		}
	}
}

// The unscaled inverses times n^{−1} undo the forward transforms.
func TestSmallRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range SmallSizes {
		for _, v := range []Variant{Matrix, MatrixNoMerge, Butterfly} {
			for _, pair := range [][2]SmallKind{{SmallCyclic, SmallCyclicInverse}, {SmallTwisted, SmallTwistedInverse}} {
				f, _ := NewSmall(n, pair[0], v)
				g, _ := NewSmall(n, pair[1], v)
				x := make([]uint64, n)
				for i := range x {
					x[i] = rng.Uint64N(P)
				}
				y := make([]uint64, n)
				f.Apply(y, x)
				g.Apply(y, y)
				nInv := Inv(uint64(n))
				for i := range y {
					if Mul(y[i], nInv) != x[i] {
						t.Fatalf("n=%d %v %v: round trip differs at %d", n, v, pair[0], i)
					}
				}
			}
		}
	}
}

// The matrix kernels use shifts only: check that every term's shift is
// < 96, its operand is a value or its negation, and that the term list of
// every output, evaluated with math/big, is the matrix row ψ_128^{E(k, ·)}
// applied to the merged operands (also evaluated with math/big).
func TestMatrixKernelTables(t *testing.T) {
	p := new(big.Int).SetUint64(P)
	rng := rand.New(rand.NewPCG(7, 8))
	for _, n := range SmallSizes {
		for _, kind := range smallKinds {
			for _, merge := range []bool{true, false} {
				mk := newMatrixKernel(n, kind, merge)
				vals := make([]*big.Int, mk.nvals)
				x := make([]uint64, n)
				for m := 0; m < n; m++ {
					x[m] = rng.Uint64N(P)
					vals[m] = new(big.Int).SetUint64(x[m])
				}
				for _, op := range mk.pre {
					if op.shift >= 192 { // mergeOp.apply's domain
						t.Fatalf("bad merge shift %d", op.shift)
					}
					v := new(big.Int).Lsh(vals[op.b], uint(op.shift))
					v.Add(v, vals[op.a])
					vals[op.dst] = v.Mod(v, p)
				}
				want := naiveSmall(kind, x)
				maxTerms := 0
				for k := 0; k < n; k++ {
					sum := new(big.Int)
					ts := mk.terms[mk.start[k]:mk.start[k+1]]
					maxTerms = max(maxTerms, len(ts))
					for _, tm := range ts {
						if tm.shift >= 96 {
							t.Fatalf("n=%d: shift %d ≥ 96", n, tm.shift)
						}
						v := new(big.Int).Set(vals[tm.idx])
						if tm.neg {
							v.Sub(p, v)
						}
						sum.Add(sum, v.Lsh(v, uint(tm.shift)))
					}
					if sum.BitLen() > 192 {
						t.Fatalf("n=%d: sum of %d bits", n, sum.BitLen())
					}
					if sum.Mod(sum, p).Uint64() != want[k] {
						t.Fatalf("n=%d %v merge=%v: output %d wrong", n, kind, merge, k)
					}
				}
				// Merged: even outputs have n/4 operands (two terms each for odd
				// powers of ψ_128), odd outputs n/2; unmerged: n.
				limit := n
				if merge {
					limit = n / 2
				}
				switch {
				case kind == SmallTwisted && n == 64:
					limit += limit / 2 // odd inputs m: ψ_128^{odd}
				case kind == SmallTwistedInverse && n == 64:
					limit *= 2 // odd outputs k: every entry ψ_128^{odd}
				}
				if maxTerms > limit {
					t.Errorf("n=%d %v merge=%v: %d terms for one output, want ≤ %d", n, kind, merge, maxTerms, limit)
				}
			}
		}
	}
}

// ψ_128 = 2^73 − 2^25 is Psi(64), squares to 8 and has order 128; the shift
// decomposition of every power of it is right (math/big).
func TestPsi128(t *testing.T) {
	p := new(big.Int).SetUint64(P)
	two := big.NewInt(2)
	v := new(big.Int).Sub(new(big.Int).Exp(two, big.NewInt(73), nil), new(big.Int).Exp(two, big.NewInt(25), nil))
	if v.Mod(v, p).Uint64() != psi128 || Psi(64) != psi128 {
		t.Fatalf("psi128 = %#x, 2^73−2^25 mod p = %#x, Psi(64) = %#x", psi128, v, Psi(64))
	}
	if Mul(psi128, psi128) != 8 || Exp(psi128, 64) != P-1 {
		t.Fatal("psi128 is not a square root of 8 of order 128")
	}
	for e := -130; e < 400; e++ {
		want := new(big.Int).Exp(v, big.NewInt(int64((e%128+128)%128)), p)
		s0, s1 := psiShifts(e)
		got := new(big.Int).Exp(two, big.NewInt(int64(s0)), p)
		if s1 >= 0 {
			got.Add(got, new(big.Int).Exp(two, big.NewInt(int64(s1)), p))
		}
		if got.Mod(got, p).Cmp(want) != 0 || s0 >= 192 || s1 >= 192 {
			t.Fatalf("psiShifts(%d) = %d, %d", e, s0, s1)
		}
	}
	// ω_n = 2^{192/n}, ψ_{2n} = 2^{96/n} (n ≤ 32), as DESIGN.md §3 lists.
	for _, n := range SmallSizes {
		if Exp(psi128, uint64(128/n)) != MulPow2(1, uint(192/n)) {
			t.Errorf("ω_%d ≠ 2^%d", n, 192/n)
		}
		if n <= 32 && Exp(psi128, uint64(64/n)) != MulPow2(1, uint(96/n)) {
			t.Errorf("ψ_%d ≠ 2^%d", 2*n, 96/n)
		}
	}
}

func TestNewSmallErrors(t *testing.T) {
	for _, n := range []int{0, 2, 3, 12, 128} {
		if _, err := NewSmall(n, SmallCyclic, Matrix); err == nil {
			t.Errorf("NewSmall(%d) accepted", n)
		}
	}
	if _, err := NewSmall(8, SmallKind(9), Matrix); err == nil {
		t.Error("bad kind accepted")
	}
	if _, err := NewSmall(8, SmallCyclic, Variant(42)); err == nil {
		t.Error("bad variant accepted")
	}
}
