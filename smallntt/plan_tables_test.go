package smallntt

import (
	"math/big"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// bigExp returns base^e mod P for any integer e (negative: of the inverse).
func bigExp(base uint64, e int) uint64 {
	b := bu(base)
	if e < 0 {
		b.ModInverse(b, bigP)
		e = -e
	}
	return new(big.Int).Exp(b, big.NewInt(int64(e)), bigP).Uint64()
}

func bigMul(a, b uint64) uint64 { return bmod(new(big.Int).Mul(bu(a), bu(b))) }

// ψ is a primitive 2N-th root with ψ^{N/32} = 8, and the ψ form a tower.
func TestPsiTable(t *testing.T) {
	for n := 32; n <= 1<<16; n *= 2 {
		psi := Psi(n)
		if bigExp(psi, 2*n) != 1 || bigExp(psi, n) != P-1 || bigExp(psi, n/32) != 8 {
			t.Errorf("Psi(%d) = %d is not a primitive 2N-th root with ψ^{N/32} = 8", n, psi)
		}
		if bigExp(Psi(2*n), 2) != psi {
			t.Errorf("Psi(2·%d)² ≠ Psi(%d)", n, n)
		}
		if n >= 64 && bigExp(psi, n/64) != psi128 {
			t.Errorf("Psi(%d)^{N/64} ≠ ψ_128", n)
		}
	}
	for e := 0; e < 128; e++ {
		if Exp(psi128, uint64(e)) != bigExp(psi128, e) {
			t.Fatalf("ψ_128^%d", e)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("Psi(48) did not panic")
		}
	}()
	Psi(48)
}

// Psi over its whole documented domain, up to 2^31 (2^30 where int has 32
// bits): 2·N must not be computed in int, where it wraps on 32-bit
// platforms (Psi(2^30) then searched for a power of 8 that never came).
func TestPsiWholeDomain(t *testing.T) {
	for n := 1 << 17; n > 0 && int64(n) <= 1<<31; n *= 2 {
		done := make(chan uint64, 1)
		go func() { done <- Psi(n) }()
		var psi uint64
		select {
		case psi = <-done:
		case <-time.After(30 * time.Second):
			t.Fatalf("Psi(%d) did not return", n)
		}
		if bigExp(psi, n) != P-1 || bigExp(psi, n/32) != 8 || bigExp(psi, n/64) != psi128 {
			t.Errorf("Psi(%d) = %d is not a primitive 2N-th root with ψ^{N/32} = 8", n, psi)
		}
		if n > 1<<17 && bigExp(psi, 2) != Psi(n/2) {
			t.Errorf("Psi(%d)² ≠ Psi(%d)", n, n/2)
		}
	}
}

// The butterfly tables (initButterfly's comment) re-derived with math/big.
func TestButterflyTables(t *testing.T) {
	for _, n := range Sizes {
		p, _ := NewPlan(n, Butterfly)
		nInv := bigExp(uint64(n), -1)
		for m := 1; m < n; m *= 2 {
			for g := 0; g < m; g++ {
				b := brv(g, brvLog(m))
				eNeg := n / (2 * m) * (2*b + 1)
				eCyc := n / m * b
				wantNeg, wantCyc := bigExp(p.psi, eNeg), bigExp(p.psi, eCyc)
				wantNegInv, wantCycInv := bigExp(p.psi, -eNeg), bigExp(p.psi, -eCyc)
				if m == 1 {
					wantNegInv, wantCycInv = bigMul(wantNegInv, nInv), bigMul(wantCycInv, nInv)
				}
				if p.bfNeg[m+g] != wantNeg || p.bfCyc[m+g] != wantCyc || p.bfNegInv[m+g] != wantNegInv || p.bfCycInv[m+g] != wantCycInv {
					t.Fatalf("N=%d: butterfly tables wrong at m=%d g=%d", n, m, g)
				}
				// The classic ψ_rev: ψ^{brv_L(m+g)}.
				if p.bfNeg[m+g] != bigExp(p.psi, brv(m+g, p.logN)) {
					t.Fatalf("N=%d: bfNeg[%d] ≠ ψ^brv", n, m+g)
				}
			}
		}
		if p.bfNegInv[0] != nInv || p.bfCycInv[0] != nInv {
			t.Fatalf("N=%d: N^{-1}", n)
		}
	}
}

// The stage twiddle tables T_s, T'_s of the Plan doc, re-derived.
func TestStageTables(t *testing.T) {
	for _, n := range Sizes {
		for _, fs := range factorisations(n) {
			p, err := NewPlan(n, Matrix, fs...)
			require.NoError(t, err)
			nInv := bigExp(uint64(n), -1)
			size := n
			for si, st := range p.stages {
				f, tt := fs[si], size/fs[si]
				if st.f != f || st.size != size || st.t != tt {
					t.Fatalf("%v stage %d: f=%d size=%d t=%d", p, si, st.f, st.size, st.t)
				}
				if tt == 1 {
					if st.tw != nil || si != len(fs)-1 {
						t.Fatalf("%v: stage %d has t = 1", p, si)
					}
					continue
				}
				for r := 0; r < f; r++ {
					b := brv(r, brvLog(f))
					for c := 0; c < tt; c++ {
						pos := tt*r + c
						if si == 0 {
							e := c * (2*b + 1)
							ok := st.tw[pos] == bigExp(p.psi, e) &&
								st.twInv[pos] == bigMul(bigExp(p.psi, -e), nInv) &&
								st.twCyc[pos] == bigExp(p.psi, 2*c*b) &&
								st.twCycInv[pos] == bigMul(bigExp(p.psi, -2*c*b), nInv)
							if !ok {
								t.Fatalf("%v: T_1 wrong at %d", p, pos)
							}
						} else {
							wS := bigExp(p.psi, 2*n/size) // ω_{N_s}
							if st.tw[pos] != bigExp(wS, c*b) || st.twInv[pos] != bigExp(wS, -c*b) {
								t.Fatalf("%v: T_%d wrong at %d", p, si+1, pos)
							}
						}
					}
				}
				size = tt
			}
			if testing.Short() && n > 1024 {
				break
			}
		}
	}
}

// The small butterfly's general twiddles, re-derived.
func TestSmallButterflyTables(t *testing.T) {
	for _, n := range SmallSizes {
		for _, kind := range smallKinds {
			b := newSmallButterfly(n, kind)
			for m := 1; m < n; m *= 2 {
				for g := 0; g < m; g++ {
					bg := brv(g, brvLog(m))
					e := 64 / m * bg
					if kind == SmallTwisted || kind == SmallTwistedInverse {
						e = 32 / m * (2*bg + 1)
					}
					if kind == SmallCyclicInverse || kind == SmallTwistedInverse {
						e = -e
					}
					if b.tw[m+g] != bigExp(psi128, e) {
						t.Fatalf("n=%d %v: tw[%d]", n, kind, m+g)
					}
				}
			}
		}
	}
}
