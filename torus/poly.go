package torus

import "fmt"

// Poly is a polynomial of T_N[X] = T[X]/(X^N+1): coefficient i is the torus
// coefficient of X^i. N is len(Poly).
//
// The functions below write into dst and allocate nothing. Unless a function
// says otherwise, dst may be the same slice as any input (exact aliasing);
// partially overlapping slices are not allowed. All slices must have the
// same length; a length mismatch is a programming error and panics.
type Poly []Torus32

// NewPoly returns the zero polynomial of degree bound n.
func NewPoly(n int) Poly { return make(Poly, n) }

func checkLen(op string, n int, ls ...int) {
	for _, l := range ls {
		if l != n {
			panic(fmt.Sprintf("torus: %s: polynomial lengths differ (%d vs %d)", op, l, n))
		}
	}
}

// AddTo sets dst = a + b.
func AddTo(dst, a, b Poly) {
	checkLen("AddTo", len(dst), len(a), len(b))
	a, b = a[:len(dst)], b[:len(dst)]
	for i := range dst {
		dst[i] = a[i] + b[i]
	}
}

// SubTo sets dst = a − b.
func SubTo(dst, a, b Poly) {
	checkLen("SubTo", len(dst), len(a), len(b))
	a, b = a[:len(dst)], b[:len(dst)]
	for i := range dst {
		dst[i] = a[i] - b[i]
	}
}

// NegTo sets dst = −a.
func NegTo(dst, a Poly) {
	checkLen("NegTo", len(dst), len(a))
	a = a[:len(dst)]
	for i := range dst {
		dst[i] = -a[i]
	}
}

// MulXaTo sets dst = X^a·p mod X^N+1 for any integer a (taken mod 2N;
// X^N = −1). dst must not alias p: it panics if dst is p.
func MulXaTo(dst, p Poly, a int) {
	n := len(p)
	checkLen("MulXaTo", n, len(dst))
	checkNoAlias("MulXaTo", dst, p)
	a = mod2N(a, n)
	if a < n {
		// dst[i] = −p[i−a+N] for i < a, p[i−a] for i ≥ a.
		for i := 0; i < a; i++ {
			dst[i] = -p[i-a+n]
		}
		copy(dst[a:], p[:n-a])
		return
	}
	a -= n // X^a = −X^{a−N}
	for i := 0; i < a; i++ {
		dst[i] = p[i-a+n]
	}
	for i := a; i < n; i++ {
		dst[i] = -p[i-a]
	}
}

// MulXaMinusOneTo sets dst = X^a·p − p mod X^N+1 in one pass (the operand of
// the CMux of blind rotation, CGGI20 Alg. 3 line 4). dst must not alias p:
// it panics if dst is p.
func MulXaMinusOneTo(dst, p Poly, a int) {
	n := len(p)
	checkLen("MulXaMinusOneTo", n, len(dst))
	checkNoAlias("MulXaMinusOneTo", dst, p)
	a = mod2N(a, n)
	if a < n {
		for i := 0; i < a; i++ {
			dst[i] = -p[i-a+n] - p[i]
		}
		for i := a; i < n; i++ {
			dst[i] = p[i-a] - p[i]
		}
		return
	}
	a -= n
	for i := 0; i < a; i++ {
		dst[i] = p[i-a+n] - p[i]
	}
	for i := a; i < n; i++ {
		dst[i] = -p[i-a] - p[i]
	}
}

// checkNoAlias panics when dst is p (exact aliasing), which the functions
// that read p while they write dst cannot take: they returned a wrong
// result, silently (MulNaiveTo cleared its input first). Partial
// overlaps, which no function allows, are not detected.
func checkNoAlias(op string, dst, p Poly) {
	if len(dst) > 0 && len(p) > 0 && &dst[0] == &p[0] {
		panic(fmt.Sprintf("torus: %s: dst is the input polynomial it must not alias", op))
	}
}

func mod2N(a, n int) int {
	if n == 0 {
		return 0 // empty polynomials: nothing to rotate
	}
	a %= 2 * n
	if a < 0 {
		a += 2 * n
	}
	return a
}

// MulNaiveTo sets dst = a·b mod X^N+1 for an integer polynomial a and a
// torus polynomial b, by the schoolbook O(N²) negacyclic product with
// wrapping 32-bit arithmetic. It is the oracle the NTT products are checked
// against. dst must not alias b: it panics if dst is b.
func MulNaiveTo(dst Poly, a []int32, b Poly) {
	n := len(dst)
	checkLen("MulNaiveTo", n, len(a), len(b))
	checkNoAlias("MulNaiveTo", dst, b)
	clear(dst)
	MulAddNaive(dst, a, b)
}

// MulAddNaive sets dst += a·b mod X^N+1 (schoolbook, as MulNaiveTo).
// dst must not alias b: it panics if dst is b.
func MulAddNaive(dst Poly, a []int32, b Poly) {
	n := len(dst)
	checkLen("MulAddNaive", n, len(a), len(b))
	checkNoAlias("MulAddNaive", dst, b)
	for i, ai := range a[:n] {
		if ai == 0 {
			continue
		}
		c := Torus32(ai)
		// X^i·b: coefficient j ≥ i gets b[j−i], j < i gets −b[j−i+N].
		for j := 0; j < i; j++ {
			dst[j] -= c * b[j-i+n]
		}
		bb := b[:n-i]
		dd := dst[i:n]
		for j := range bb {
			dd[j] += c * bb[j]
		}
	}
}
