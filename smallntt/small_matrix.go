package smallntt

import (
	"fmt"
	"math/bits"
)

// The matrix small transform of Li et al. 2024, §2.2: every output computed
// on its own as a sum of shifted operands.
//
// Operands: the inputs x_0..x_{n−1} (values 0..n−1) followed by the merged
// operands built by pre (values n..). The sign of a shift s ≥ 96 (2^96 ≡ −1)
// is folded into the operand: a term reads either v or P − v, shifted by
// s − 96. Every term is then v·2^s with v < 2^64 and s < 96, i.e. < 2^160; an
// output sums at most 128 of them (the odd outputs of the unmerged twisted
// inverse 64-point transform, whose entries are all odd powers of ψ_128) in
// three 64-bit limbs w, y, z with explicit carries (< 2^167, no overflow) and
// is reduced once by Reduce192.
//
// Merging (DESIGN.md §4): for the pair of inputs m, m+n/2 the exponent
// difference d(k) = E(k, m+n/2) − E(k, m) does not depend on m, so
// u_m = x_m + ψ_128^{d}·x_{m+n/2} (a shift: d is even) serves every output
// with that d: 0/64 (±1) for the cyclic and inverse kinds, 32/96 (±2^48) for
// SmallTwisted, the two classes being the even and the odd outputs. The
// class of output 0 (the even outputs) is split once more with n/4, as in the
// paper. Merged operands are reduced (canonical) when built.
type matrixKernel struct {
	n     int
	nvals int
	pre   []mergeOp
	start []int32 // terms of output k: terms[start[k]:start[k+1]]
	terms []term
	// The same terms split by shift class for evaluation: for output k,
	// lo[loStart[k]:loStart[k+1]] have shift < 64, hi[…] shift ≥ 64.
	lo, hi           []evalTerm
	loStart, hiStart []int32
}

// evalTerm is a term ready for evaluation: ref indexes the value array
// (2·idx + neg, see term.ref) and s is the shift (mod 64 for hi terms).
type evalTerm struct {
	ref uint16
	s   uint8
}

// mergeOp sets value dst = value a + 2^shift·value b (shift ∈ [0, 192)).
type mergeOp struct {
	dst, a, b int32
	shift     uint32
}

// apply returns a + 2^shift·b mod P for canonical a, b.
func (op mergeOp) apply(a, b uint64) uint64 {
	s := uint(op.shift)
	if s >= 96 {
		return Sub(a, Reduce(shlLazy(b, s-96)))
	}
	return Add(a, Reduce(shlLazy(b, s)))
}

// term is value idx (or P − value idx when neg) times 2^shift, shift < 96.
type term struct {
	idx   int32
	neg   bool
	shift uint8
}

// ref returns the index in the evaluation array: values at even, negations
// at odd indices.
func (t term) ref() int { return 2*int(t.idx) + int(b2u(t.neg)) }

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

func newMatrixKernel(n int, kind SmallKind, merge bool) *matrixKernel {
	mk := &matrixKernel{n: n, nvals: n}
	E := func(k, m int) int { return smallExp(kind, n, k, m) }
	// operand[k] lists, for output k, the value index of the operand that
	// multiplies ψ_128^{E(k, m)} for m < width[k].
	operand := make([][]int32, n)
	for k := range operand {
		operand[k] = make([]int32, n)
		for m := range operand[k] {
			operand[k][m] = int32(m)
		}
	}
	width := make([]int, n)
	for k := range width {
		width[k] = n
	}
	if merge {
		all := make([]int, n)
		for k := range all {
			all[k] = k
		}
		groups := mk.mergeLevel(all, n/2, E, operand, width)
		if len(groups) > 0 {
			mk.mergeLevel(groups[0], n/4, E, operand, width)
		}
	}
	mk.start = make([]int32, n+1)
	for k := 0; k < n; k++ {
		var lo, hi []term
		for m := 0; m < width[k]; m++ {
			s0, s1 := psiShifts(E(k, m))
			for _, s := range []int{s0, s1} {
				if s < 0 {
					continue
				}
				t := term{idx: operand[k][m], neg: s >= 96, shift: uint8(s % 96)}
				if t.shift < 64 {
					lo = append(lo, t)
				} else {
					hi = append(hi, t)
				}
			}
		}
		mk.terms = append(mk.terms, lo...)
		mk.terms = append(mk.terms, hi...)
		mk.start[k+1] = int32(len(mk.terms))
	}
	mk.loStart = make([]int32, n+1)
	mk.hiStart = make([]int32, n+1)
	for k := 0; k < n; k++ {
		for _, t := range mk.terms[mk.start[k]:mk.start[k+1]] {
			e := evalTerm{ref: uint16(t.ref()), s: t.shift % 64}
			if t.shift < 64 {
				mk.lo = append(mk.lo, e)
			} else {
				mk.hi = append(mk.hi, e)
			}
		}
		mk.loStart[k+1] = int32(len(mk.lo))
		mk.hiStart[k+1] = int32(len(mk.hi))
	}
	return mk
}

// mergeLevel merges operand m with operand m+h for the outputs ks (all of
// which currently use width 2h) and returns them grouped by exponent
// difference, the group of ks[0] first.
func (mk *matrixKernel) mergeLevel(ks []int, h int, E func(k, m int) int, operand [][]int32, width []int) [][]int {
	var groups [][]int
	base := map[int]int32{}
	var order []int
	for _, k := range ks {
		if width[k] != 2*h {
			panic("smallntt: merge of outputs with different widths")
		}
		d := (E(k, h) - E(k, 0) + 128) % 128
		for m := 1; m < h; m++ {
			if (E(k, m+h)-E(k, m)+128)%128 != d {
				panic(fmt.Sprintf("smallntt: n=%d: merge difference depends on m", mk.n))
			}
		}
		b, ok := base[d]
		if !ok {
			s0, s1 := psiShifts(d)
			if s1 >= 0 {
				panic("smallntt: odd merge exponent")
			}
			b = int32(mk.nvals)
			base[d] = b
			for m := 0; m < h; m++ {
				mk.pre = append(mk.pre, mergeOp{dst: b + int32(m), a: operand[k][m], b: operand[k][m+h], shift: uint32(s0)})
			}
			mk.nvals += h
			order = append(order, d)
			groups = append(groups, nil)
		}
		for i, od := range order {
			if od == d {
				groups[i] = append(groups[i], k)
			}
		}
	}
	for i, d := range order {
		for _, k := range groups[i] {
			for m := 0; m < h; m++ {
				operand[k][m] = base[d] + int32(m)
			}
			width[k] = h
		}
	}
	return groups
}

// apply computes out[k] for k < n from in[0:n] (any); outputs canonical.
// out may alias in (all inputs are read first).
// The value array is sized by n (2 × at most 2.5n values), so that small
// transforms do not pay for clearing a large one.
func (mk *matrixKernel) apply(out, in []uint64) {
	switch {
	case mk.n <= 8:
		var vals [40]uint64
		mk.eval(vals[:], out, in)
	case mk.n == 16:
		var vals [80]uint64
		mk.eval(vals[:], out, in)
	case mk.n == 32:
		var vals [160]uint64
		mk.eval(vals[:], out, in)
	default:
		var vals [320]uint64
		mk.eval(vals[:], out, in)
	}
}

func (mk *matrixKernel) eval(vals []uint64, out, in []uint64) {
	n := mk.n
	in, out = in[:n], out[:n]
	for m := 0; m < n; m++ {
		v := Reduce(in[m])
		vals[2*m], vals[2*m+1] = v, P-v
	}
	for _, op := range mk.pre {
		v := op.apply(vals[2*op.a], vals[2*op.b])
		vals[2*op.dst], vals[2*op.dst+1] = v, P-v
	}
	lo, hi := mk.lo, mk.hi
	for k := 0; k < n; k++ {
		var w, y, z, c uint64
		for _, t := range lo[mk.loStart[k]:mk.loStart[k+1]] {
			v, s := vals[t.ref], uint(t.s)
			z, c = bits.Add64(z, v<<s, 0)
			y, c = bits.Add64(y, v>>1>>(63-s), c) // v >> (64−s), 0 for s = 0
			w += c
		}
		for _, t := range hi[mk.hiStart[k]:mk.hiStart[k+1]] {
			v, s := vals[t.ref], uint(t.s)
			y, c = bits.Add64(y, v<<s, 0)
			w += v>>1>>(63-s) + c
		}
		out[k] = Reduce192(w, y, z)
	}
}
