package smallntt

import (
	"math/rand/v2"
	"testing"
)

// naiveNTT returns the natural-order transform of x: out[k] = Σ_i x_i·w_k^i
// with w_k = ψ^{2k+1} (negacyclic) or ω^k = ψ^{2k} (cyclic), by Horner, O(N²).
func naiveNTT(x []uint64, cyclic bool) []uint64 {
	n := len(x)
	psi := Psi(n)
	out := make([]uint64, n)
	for k := 0; k < n; k++ {
		e := uint64(2*k + 1)
		if cyclic {
			e = uint64(2 * k)
		}
		w := Exp(psi, e)
		var s uint64
		for i := n - 1; i >= 0; i-- {
			s = Add(Mul(s, w), Reduce(x[i]))
		}
		out[k] = s
	}
	return out
}

func naiveNegacyclicNTT(x []uint64) []uint64 { return naiveNTT(x, false) }

// naiveSmall returns the natural-order small transform of kind, from its
// matrix entries ψ_128^{E(k, m)} computed by exponentiation (not by shifts).
func naiveSmall(kind SmallKind, x []uint64) []uint64 {
	n := len(x)
	out := make([]uint64, n)
	for k := 0; k < n; k++ {
		var s uint64
		for m := 0; m < n; m++ {
			var e int
			switch kind {
			case SmallCyclic:
				e = 128 / n * m * k
			case SmallTwisted:
				e = 64 / n * m * (2*k + 1)
			case SmallCyclicInverse:
				e = -128 / n * m * k
			case SmallTwistedInverse:
				e = -64 / n * k * (2*m + 1)
			}
			e = (e%128 + 128) % 128
			s = Add(s, Mul(Reduce(x[m]), Exp(Psi(64), uint64(e))))
		}
		out[k] = s
	}
	return out
}

// factorisations returns every ordered factorisation of n into {4, …, 64}.
func factorisations(n int) [][]int {
	if n == 1 {
		return [][]int{nil}
	}
	var out [][]int
	for _, f := range SmallSizes {
		if n%f != 0 {
			continue
		}
		for _, rest := range factorisations(n / f) {
			out = append(out, append([]int{f}, rest...))
		}
	}
	return out
}

// testVectors returns named inputs of length n: extremes and random values.
// Random values include non-canonical ones (≥ P), which every transform
// must read modulo P.
func testVectors(n int, rng *rand.Rand, random int) (names []string, vecs [][]uint64) {
	add := func(name string, f func(i int) uint64) {
		v := make([]uint64, n)
		for i := range v {
			v[i] = f(i)
		}
		names, vecs = append(names, name), append(vecs, v)
	}
	add("zero", func(int) uint64 { return 0 })
	add("one", func(i int) uint64 { return b2u(i == 0) })
	add("all p-1", func(int) uint64 { return P - 1 })
	add("all 2^64-1", func(int) uint64 { return ^uint64(0) })
	add("spike last p-1", func(i int) uint64 { return (P - 1) * b2u(i == n-1) })
	add("spike mid", func(i int) uint64 { return 12345 * b2u(i == n/2+1) })
	add("alternating", func(i int) uint64 { return []uint64{P - 1, ^uint64(0), 0, 1}[i%4] })
	for r := 0; r < random; r++ {
		add("random", func(int) uint64 { return rng.Uint64N(P) })
	}
	add("random any", func(int) uint64 { return rng.Uint64() })
	return
}

// equalTransforms checks that fast and slow give the same Forward,
// ForwardCyclic, Inverse and InverseCyclic of x (a and b are scratch of
// x's length).
func equalTransforms(t *testing.T, fast, slow *Plan, x, a, b []uint64) {
	t.Helper()
	fast.Forward(a, x)
	slow.Forward(b, x)
	equalAt(t, fast.String()+" Forward", a, b)
	fast.ForwardCyclic(a, x)
	slow.ForwardCyclic(b, x)
	equalAt(t, fast.String()+" ForwardCyclic", a, b)
	fast.Inverse(a, x)
	slow.Inverse(b, x)
	equalAt(t, fast.String()+" Inverse", a, b)
	fast.InverseCyclic(a, x)
	slow.InverseCyclic(b, x)
	equalAt(t, fast.String()+" InverseCyclic", a, b)
}

func equalAt(t *testing.T, what string, got, want []uint64) bool {
	t.Helper()
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%s: position %d = %d, want %d", what, i, got[i], want[i])
			return false
		}
	}
	return true
}
