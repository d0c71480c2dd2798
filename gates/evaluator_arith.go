package gates

import (
	"context"
	"fmt"

	"github.com/goldfhe/goldfhe/tfhe"
)

// AddUint adds two little-endian encrypted unsigned integers of the same
// width w ≥ 1 (as EncryptUint makes them) and returns the w+1 bits of the
// sum (the last is the carry). For w = 64 the sum does not fit
// DecryptUint's 64 bits: decrypt sum[:64] with it and the carry, sum[64],
// with DecryptBool. The inputs are not modified.
//
// It evaluates AdderCircuit(w) as EvalCircuit does: each carry is one MAJ
// of two input bits and the carry before, each sum bit the XOR of the same
// three, a sum bootstrapped once. That is 2w bootstraps in w engine calls
// of at most two gates, where the same adder of AND, OR and bootstrapped
// XOR gates takes 5w − 3 bootstraps in 2w − 1 calls. Its noisiest
// bootstrap, the MAJ's, fails with probability
// tfhe.NoiseEstimate.Log2MajorityFailure(0) (TFHELib128 grouped by 3:
// about 2^−131); PlanCircuit of AdderCircuit(w) gives the whole plan.
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
	c, err := AdderCircuit(w)
	if err != nil {
		return nil, fmt.Errorf("gates: AddUint: %w", err)
	}
	out, err := ev.evalCircuits(context.Background(), "AddUint", c, [][][]*tfhe.TLWE{{a, b}}, CircuitOptions{})
	if err != nil {
		return nil, err
	}
	return out[0][0], nil
}

// AdderCircuit returns a ripple-carry adder of two w-bit values as a
// circuit: inputs a and b of w bits each, least significant first, and one
// output of w+1 bits, a + b. Carry i+1 is MAJ(a_i, b_i, carry i) (carry 1
// is AND(a_0, b_0)) and sum bit i is a_i ⊕ b_i ⊕ carry i: one bootstrap a
// carry and, under XORLinear, one refresh a sum bit. It is what AddUint
// evaluates, and a part for circuits a Builder makes (copy its gates, or
// evaluate it with EvalCircuits on many pairs at once).
func AdderCircuit(w int) (*Circuit, error) {
	if w < 1 {
		return nil, &CircuitError{Msg: fmt.Sprintf("an adder of %d-bit values; want at least 1 bit", w)}
	}
	bld := NewBuilder(w, w)
	x, y := bld.Input(0), bld.Input(1)
	sum := make([]int, w+1)
	carry := -1
	for i := range w {
		p := bld.Gate(OpXOR, x[i], y[i])
		if i == 0 {
			sum[0], carry = p, bld.Gate(OpAND, x[0], y[0])
			continue
		}
		sum[i] = bld.Gate(OpXOR, p, carry)
		carry = bld.Gate(OpMAJ, x[i], y[i], carry)
	}
	sum[w] = carry
	return bld.Build(sum)
}
