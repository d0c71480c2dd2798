package smallntt

// Precomputed tables. Every table here is re-derived with math/big in
// plan_tables_test.go (STYLE §8).

// initButterfly fills the four butterfly tables. Level m (1, 2, …, N/2),
// group g < m uses index m+g:
//
//	bfNeg[m+g]    = ψ^{(N/2m)·(2·brv_m(g)+1)}  (= ψ^{brv_L(m+g)}, the classic ψ_rev)
//	bfCyc[m+g]    = ω^{(N/2m)·brv_m(g)}          (ω = ψ²)
//
// bfNegInv and bfCycInv hold their inverses; index 1 (level m = 1, the last
// level of the inverse) also carries the factor N^{−1}, and index 0 holds
// N^{−1} alone (see plan_butterfly.go).
func (p *Plan) initButterfly() {
	n := p.n
	pw := psiPowers(p.psi, n)
	p.bfNeg = make([]uint64, n)
	p.bfNegInv = make([]uint64, n)
	p.bfCyc = make([]uint64, n)
	p.bfCycInv = make([]uint64, n)
	for m := 1; m < n; m *= 2 {
		lm := brvLog(m)
		for g := 0; g < m; g++ {
			b := brv(g, lm)
			e := n / (2 * m) * (2*b + 1) // exponent of ψ
			p.bfNeg[m+g], p.bfNegInv[m+g] = pw.at(e), pw.at(-e)
			e = n / m * b // ω^{(N/2m)·b} = ψ^{(N/m)·b}
			p.bfCyc[m+g], p.bfCycInv[m+g] = pw.at(e), pw.at(-e)
		}
	}
	p.bfNegInv[0], p.bfCycInv[0] = p.nInv, p.nInv
	p.bfNegInv[1] = Mul(p.bfNegInv[1], p.nInv)
	p.bfCycInv[1] = Mul(p.bfCycInv[1], p.nInv)
}

// powers holds ψ^e for e < 2N (ψ has order 2N).
type powers []uint64

func psiPowers(psi uint64, n int) powers {
	pw := make(powers, 2*n)
	pw[0] = 1
	for i := 1; i < len(pw); i++ {
		pw[i] = Mul(pw[i-1], psi)
	}
	return pw
}

// at returns ψ^e for any integer e.
func (pw powers) at(e int) uint64 {
	m := len(pw)
	return pw[(e%m+m)%m]
}

// initStages fills the stages of a decomposed plan: sizes, the twiddle
// tables T_s and T'_s of the Plan doc, and the small transforms R_s.
func (p *Plan) initStages() {
	n := p.n
	pw := psiPowers(p.psi, n)
	size := n
	for si, f := range p.factors {
		st := stage{f: f, logf: brvLog(f), size: size, t: size / f}
		t := st.t
		if t > 1 {
			st.tw = make([]uint64, size)
			st.twInv = make([]uint64, size)
			if si == 0 {
				st.twCyc = make([]uint64, size)
				st.twCycInv = make([]uint64, size)
			}
			for r := 0; r < f; r++ {
				br := brv(r, st.logf)
				for c := 0; c < t; c++ {
					pos := t*r + c
					if si == 0 {
						e := c * (2*br + 1) // ψ^{c(2·brv(r)+1)}
						st.tw[pos] = pw.at(e)
						st.twInv[pos] = Mul(pw.at(-e), p.nInv)
						e = 2 * c * br // ω^{c·brv(r)}
						st.twCyc[pos] = pw.at(e)
						st.twCycInv[pos] = Mul(pw.at(-e), p.nInv)
					} else {
						e := 2 * n / size * c * br // ω_{N_s} = ψ^{2N/N_s}
						st.tw[pos], st.twInv[pos] = pw.at(e), pw.at(-e)
					}
				}
			}
		}
		if p.variant == Hybrid {
			st.hy = newHybridStage(&st, si == 0, si == len(p.factors)-1)
		} else {
			v := p.variant
			fwd, inv := SmallCyclic, SmallCyclicInverse
			if si == 0 {
				fwd, inv = SmallTwisted, SmallTwistedInverse
				st.kCycFwd = mustSmall(f, SmallCyclic, v)
				st.kCycInv = mustSmall(f, SmallCyclicInverse, v)
			}
			st.kFwd = mustSmall(f, fwd, v)
			st.kInv = mustSmall(f, inv, v)
		}
		p.stages = append(p.stages, st)
		size = st.t
	}
}

func mustSmall(n int, kind SmallKind, v Variant) *Small {
	s, err := NewSmall(n, kind, v)
	if err != nil {
		panic(err)
	}
	return s
}
