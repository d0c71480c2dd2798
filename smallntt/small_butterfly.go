package smallntt

// smallButterfly is the paper's baseline small transform: a plain radix-2
// network, one general modular multiplication per butterfly by a twiddle from
// a precomputed table (the powers of two are deliberately not exploited).
//
// Forward kinds: Cooley–Tukey, natural order in, bit-reversed order out. At
// level m = 1, 2, …, n/2, group g < m pairs a[j] and a[j+n/(2m)] for j in
// [g·n/m, g·n/m + n/(2m)) as (x + c·y, x − c·y), with c = ψ_128^{e}, e =
// (64/m)·brv_m(g) (cyclic: splits X^{n/m} − ω^{…} into two) or
// e = (32/m)·(2·brv_m(g) + 1) (twisted). The output is then permuted to
// natural order. Inverse kinds: input permuted to bit-reversed order, then
// Gentleman–Sande levels m = n/2, …, 1: (x, y) → (x + y, (x − y)·c^{−1}).
type smallButterfly struct {
	n, log  int
	inverse bool
	tw      []uint64 // tw[m+g] = c of level m, group g (inverted for inverses)
}

func newSmallButterfly(n int, kind SmallKind) *smallButterfly {
	b := &smallButterfly{n: n, log: brvLog(n), tw: make([]uint64, n)}
	twisted := kind == SmallTwisted || kind == SmallTwistedInverse
	b.inverse = kind == SmallCyclicInverse || kind == SmallTwistedInverse
	for m := 1; m < n; m *= 2 {
		for g := 0; g < m; g++ {
			var e int
			if twisted {
				e = (32 / m) * (2*brv(g, brvLog(m)) + 1)
			} else {
				e = (64 / m) * brv(g, brvLog(m))
			}
			if b.inverse {
				e = -e
			}
			b.tw[m+g] = Exp(psi128, uint64((e%128+128)%128))
		}
	}
	return b
}

func brvLog(n int) int {
	l := 0
	for 1<<l < n {
		l++
	}
	return l
}

// apply computes the transform of in[0:n] (any) into out[0:n] (canonical);
// out may alias in.
func (b *smallButterfly) apply(out, in []uint64) {
	switch {
	case b.n <= 8:
		var a [8]uint64
		b.run(a[:b.n], out, in)
	case b.n <= 32:
		var a [32]uint64
		b.run(a[:b.n], out, in)
	default:
		var a [64]uint64
		b.run(a[:b.n], out, in)
	}
}

func (b *smallButterfly) run(a, out, in []uint64) {
	n := b.n
	if !b.inverse {
		for i := 0; i < n; i++ {
			a[i] = Reduce(in[i])
		}
		for m, h := 1, n/2; m < n; m, h = 2*m, h/2 {
			for g := 0; g < m; g++ {
				c := b.tw[m+g]
				j0 := 2 * g * h
				for j := j0; j < j0+h; j++ {
					x, y := a[j], Mul(a[j+h], c)
					a[j], a[j+h] = Add(x, y), Sub(x, y)
				}
			}
		}
		for i := 0; i < n; i++ {
			out[brv(i, b.log)] = a[i]
		}
		return
	}
	for i := 0; i < n; i++ {
		a[brv(i, b.log)] = Reduce(in[i])
	}
	for m, h := n/2, 1; m >= 1; m, h = m/2, 2*h {
		for g := 0; g < m; g++ {
			c := b.tw[m+g]
			j0 := 2 * g * h
			for j := j0; j < j0+h; j++ {
				x, y := a[j], a[j+h]
				a[j], a[j+h] = Add(x, y), Mul(Sub(x, y), c)
			}
		}
	}
	copy(out[:n], a[:n])
}
