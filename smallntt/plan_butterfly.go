package smallntt

// The radix-2 baseline over the whole array (DESIGN.md §4, "The butterfly
// baseline"): the textbook negacyclic Cooley–Tukey forward with the merged,
// bit-reversed ψ table, and the Gentleman–Sande inverse. Level m = 1, 2, …,
// N/2; group g < m pairs the chunks a[2g·h : 2g·h+h] and a[2g·h+h : 2(g+1)·h]
// (h = N/2m) with the twiddle c = table[m+g] of initButterfly:
//
//	forward: (x, y) → (x + c·y, x − c·y)
//	inverse: (x, y) → (x + y, (x − y)·c^{−1}), levels in reverse order
//
// The result lands in bit-reversed order, which is the Plan layout. One
// general multiplication per butterfly; values are kept lazily in [0, 2^64)
// between levels (the same lazy helpers as Hybrid, so the comparison measures
// the algorithms) and made canonical at the end. The inverse folds N^{−1}
// into its last level (m = 1) instead of a scaling pass.

func (p *Plan) forwardButterfly(a, src []uint64, cyclic bool) {
	tab := p.bfNeg
	if cyclic {
		tab = p.bfCyc
	}
	n := p.n
	a = a[:n]
	copy(a, src)
	for m, h := 1, n/2; m < n; m, h = 2*m, h/2 {
		for g := 0; g < m; g++ {
			c := tab[m+g]
			x := a[2*g*h : 2*g*h+h]
			y := a[2*g*h+h : 2*g*h+2*h]
			y = y[:len(x)]
			for j := range x {
				u, v := x[j], Mul(y[j], c)
				x[j], y[j] = addT(u, v), subT(u, v)
			}
		}
	}
	for j := range a {
		a[j] = Reduce(a[j])
	}
}

func (p *Plan) inverseButterfly(a, src []uint64, cyclic bool) {
	tab := p.bfNegInv
	if cyclic {
		tab = p.bfCycInv
	}
	n := p.n
	a = a[:n]
	copy(a, src)
	for m, h := n/2, 1; m > 1; m, h = m/2, 2*h {
		for g := 0; g < m; g++ {
			c := tab[m+g]
			x := a[2*g*h : 2*g*h+h]
			y := a[2*g*h+h : 2*g*h+2*h]
			y = y[:len(x)]
			for j := range x {
				u, v := x[j], y[j]
				x[j], y[j] = addLazy(u, v), mulLazy(subLazy(u, v), c)
			}
		}
	}
	// Last level (m = 1): N^{−1} and c^{−1}·N^{−1}.
	s0, s1 := tab[0], tab[1]
	x, y := a[:n/2], a[n/2:]
	y = y[:len(x)]
	for j := range x {
		u, v := x[j], y[j]
		x[j], y[j] = Reduce(mulLazy(addLazy(u, v), s0)), Reduce(mulLazy(subLazy(u, v), s1))
	}
}
