package gates

import (
	"fmt"

	"github.com/goldfhe/goldfhe/tfhe"
)

// AddUint adds two little-endian encrypted unsigned integers of the same
// width w ≥ 1 (as EncryptUint makes them) with a ripple-carry adder built
// from gates, and returns the w+1 bits of the sum (the last is the carry).
// For w = 64 the sum does not fit DecryptUint's 64 bits: decrypt sum[:64]
// with it and the carry, sum[64], with DecryptBool.
// It costs 2w + 3(w−1) bootstraps in 1 + 2(w−1) engine calls: every
// propagate and generate bit in one batch, then two batches per carry step.
// The inputs are not modified.
func (ev *Evaluator) AddUint(a, b []*tfhe.TLWE) ([]*tfhe.TLWE, error) {
	if err := ev.ok(); err != nil {
		return nil, err
	}
	w := len(a)
	if w == 0 || len(b) != w {
		return nil, fmt.Errorf("gates: AddUint: operands of %d and %d bits, want the same width ≥ 1", len(a), len(b))
	}
	n := ev.Params().LWEDimension()
	for i := range w {
		for _, op := range [2]struct {
			name string
			c    *tfhe.TLWE
		}{{"a", a[i]}, {"b", b[i]}} {
			if err := checkSample(op.c, n); err != nil {
				return nil, fmt.Errorf("gates: AddUint: bit %d of %s %v", i, op.name, err)
			}
		}
	}
	p, g := make([]*tfhe.TLWE, w), make([]*tfhe.TLWE, w)
	calls := make([]Call, 0, 2*w)
	for i := range w {
		p[i], g[i] = tfhe.NewTLWE(n), tfhe.NewTLWE(n)
		calls = append(calls,
			Call{Op: OpXOR, A: a[i], B: b[i], Out: p[i]},
			Call{Op: OpAND, A: a[i], B: b[i], Out: g[i]})
	}
	if err := ev.Batch(calls); err != nil {
		return nil, err
	}
	sum := make([]*tfhe.TLWE, w+1)
	sum[0] = p[0]
	carry := g[0]
	for i := 1; i < w; i++ {
		s, t := tfhe.NewTLWE(n), tfhe.NewTLWE(n)
		if err := ev.Batch([]Call{
			{Op: OpXOR, A: p[i], B: carry, Out: s},
			{Op: OpAND, A: p[i], B: carry, Out: t},
		}); err != nil {
			return nil, err
		}
		c, err := ev.OR(g[i], t)
		if err != nil {
			return nil, err
		}
		sum[i], carry = s, c
	}
	sum[w] = carry
	return sum, nil
}
