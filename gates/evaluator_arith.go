package gates

import (
	"context"
	"fmt"

	"github.com/goldfhe/goldfhe/bootstrap"
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
// of at most two bootstraps (with sums of 3 terms allowed,
// DefaultMaxXORTerms ≥ 3, as for every shipped parameter set), where the
// same adder of AND, OR and bootstrapped XOR gates takes 5w − 3
// bootstraps in 2w − 1 calls. Its noisiest bootstrap, the MAJ's, fails
// with probability tfhe.NoiseEstimate.Log2MajorityFailure(0) (TFHELib128
// grouped by 3: about 2^−131); PlanCircuit of ev.AddUintCircuit(w) gives
// the whole plan.
//
// On an engine whose time per call hardly grows with its batch, told by
// its batch tiers (bootstrap.BatchTiers: the GPU engine on its wide
// kernels, a Selected or a Multi of like GPUs of such engines; a wrapper
// of one's own must forward the method), from 8 bits on, it evaluates a
// carry-select adder of MAJ gates instead, in blocks of ⌈√w⌉ bits: about
// 2√w engine calls of at most about 2√w bootstraps, some 4w bootstraps in
// all, each failing no more often than the ripple's. 64 bits: 16 calls of
// at most 16, 240 bootstraps, 22–24 ms on an H100 against 55 ms for the
// ripple (TFHELib128 grouped by 3). Where an operand bit folds (below), it
// takes whichever of the two adders plans fewer engine calls, then fewer
// bootstraps.
//
// A bit of b that is the bit of a at the same position again (the same
// sample, a copy or a NOT made apart) and a bit that is a Constant are
// read as such, as Batch reads a gate's inputs: the circuit's input
// wires are taken for distinct samples, and a + a would otherwise
// bootstrap 2·a_i + carry, of twice a_i's error. What folds costs
// nothing: a + a and a + ¬a make no bootstrap.
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
	block := ev.adderBlock(w)
	c, folded, err := adderFor(a, b, block)
	if err != nil {
		return nil, fmt.Errorf("gates: AddUint: %w", err)
	}
	if block > 0 && folded {
		if c, err = ev.fewerCalls(c, a, b); err != nil {
			return nil, fmt.Errorf("gates: AddUint: %w", err)
		}
	}
	out, err := ev.evalCircuits(context.Background(), "AddUint", c, [][][]*tfhe.TLWE{{a, b}}, CircuitOptions{})
	if err != nil {
		return nil, err
	}
	return out[0][0], nil
}

// fewerCalls returns sel, the carry-select adder for a and b, or the
// ripple-carry adder for them where that plans fewer engine calls, or as
// many and fewer bootstraps. With a constant or repeated operand bit the
// ripple's carries fold (a carry that is a_i, a constant, the carry
// before), so that its chain may be as short as the carry-select adder's,
// which selects each carry with a MAJ after its block's carry in all the
// same (of a constant carry in, an AND or OR of c0 and c1): a + 16 of 8
// bits ripples in 3 calls against 5.
func (ev *Evaluator) fewerCalls(sel *Circuit, a, b []*tfhe.TLWE) (*Circuit, error) {
	rip, _, err := adderFor(a, b, 0)
	if err != nil {
		return nil, err
	}
	ps, err := ev.PlanCircuit(sel, CircuitOptions{})
	if err != nil {
		return nil, err
	}
	pr, err := ev.PlanCircuit(rip, CircuitOptions{})
	if err != nil {
		return nil, err
	}
	if pr.Levels < ps.Levels || pr.Levels == ps.Levels && pr.Bootstraps < ps.Bootstraps {
		return rip, nil
	}
	return sel, nil
}

// AddUintCircuit returns the circuit AddUint evaluates for two w-bit
// operands of distinct samples on this evaluator's engine: AdderCircuit(w),
// or, on an engine with batch tiers from 8 bits on, the carry-select adder
// of blocks of ⌈√w⌉ bits. PlanCircuit of it says what an addition costs
// (engine calls: its Levels − 1). Operands with a constant or repeated bit
// cost no more: AddUint reads those bits as such (and may take the ripple).
func (ev *Evaluator) AddUintCircuit(w int) (*Circuit, error) {
	if err := ev.ok(); err != nil {
		return nil, err
	}
	return adderCircuit(w, ev.adderBlock(w), nil)
}

// carrySelectMin is the narrowest addition AddUint makes with a
// carry-select adder on an engine with batch tiers: from 8 bits it was the
// faster on an H100 (TFHELib128 grouped by 3, BenchmarkAdder, session 46
// run D: 8 bits 5.8–6.2 ms against 6.8–7.1 for the ripple, 16 bits
// 7.7–7.9 against 13.6–14.6, 64 bits 21.9–24.3 against 54.9–55.7).
const carrySelectMin = 8

// adderBlock returns the block of the carry-select adder AddUint makes for
// w bits, ⌈√w⌉, which takes about the fewest levels (2√w), or 0 for the
// ripple-carry adder: on an engine whose time per call grows with every
// sample (the CPU engine: bootstrap.BatchTiers is nil), where the
// carry-select adder's twice the bootstraps cost twice the time, and
// below carrySelectMin bits.
func (ev *Evaluator) adderBlock(w int) int {
	if w < carrySelectMin || bootstrap.BatchTiers(ev.eng) == nil {
		return 0
	}
	k := 1
	for k*k < w {
		k++
	}
	return k
}

// AdderCircuit returns a ripple-carry adder of two w-bit values as a
// circuit: inputs a and b of w bits each, least significant first, and one
// output of w+1 bits, a + b. Carry i+1 is MAJ(a_i, b_i, carry i) (carry 1
// is AND(a_0, b_0)) and sum bit i is a_i ⊕ b_i ⊕ carry i: one bootstrap a
// carry and, under XORLinear, one refresh a sum bit. It is what AddUint
// evaluates on operands of distinct samples on an engine without batch
// tiers, or below 8 bits (AddUintCircuit), and a part for circuits a
// Builder makes (copy its gates, or evaluate it with EvalCircuits on many
// pairs at once). Like any circuit under XORLinear, it takes its input
// bits for distinct samples: given one sample for a_i and b_i, its MAJ
// bootstraps 2·a_i + carry, of twice a_i's error (AddUint reads them once).
func AdderCircuit(w int) (*Circuit, error) { return adderCircuit(w, 0, nil) }

// adderFor is the adder AddUint evaluates for a and b: AdderCircuit(w), or
// the carry-select adder of blocks of block bits where block is in [1, w),
// with bit i of b read from a's wire i, or its NOT, where it is a's sample
// i or its negation (sameSample), and a bit that is a Constant (of a or
// b) read from a ZERO or ONE gate. Build then evaluates each gate on its
// distinct samples (reduceRepeats): no bootstrap reads a sample twice.
// For operands of distinct samples it is that adder gate for gate, and
// folded is false.
func adderFor(a, b []*tfhe.TLWE, block int) (c *Circuit, folded bool, err error) {
	c, err = adderCircuit(len(a), block, func(bld *Builder, x, y []int, i int) (int, int) {
		bit := func(s *tfhe.TLWE, wire int) (int, bool) {
			if v, ok := constantOf(s); ok {
				folded = true
				if v {
					return bld.Gate(OpOne), true
				}
				return bld.Gate(OpZero), true
			}
			return wire, false
		}
		xi, ca := bit(a[i], x[i])
		yi, cb := bit(b[i], y[i])
		if !ca && !cb {
			if same, neg := sameSample(a[i], b[i]); same {
				folded = true
				yi = x[i]
				if neg {
					yi = bld.Gate(OpNOT, x[i])
				}
			}
		}
		return xi, yi
	})
	return c, folded, err
}

// adderCircuit is AdderCircuit, its operand bits i read from the wires
// operand(bld, x, y, i) returns where operand is not nil (x and y are the
// input wires of a and b), from x[i] and y[i] otherwise. With block in
// [1, w) it is a carry-select adder of blocks of block bits
// (carrySelect) in place of the ripple-carry one.
func adderCircuit(w, block int, operand func(bld *Builder, x, y []int, i int) (xi, yi int)) (*Circuit, error) {
	if w < 1 {
		return nil, &CircuitError{Msg: fmt.Sprintf("an adder of %d-bit values; want at least 1 bit", w)}
	}
	bld := NewBuilder(w, w)
	x, y := bld.Input(0), bld.Input(1)
	xs, ys := make([]int, w), make([]int, w)
	for i := range w {
		xs[i], ys[i] = x[i], y[i]
		if operand != nil {
			xs[i], ys[i] = operand(bld, x, y, i)
		}
	}
	// carryIn[i] is the carry into bit i (none into bit 0).
	carryIn := make([]int, w)
	var carry int
	if block < 1 || block >= w {
		carry = ripple(bld, xs, ys, carryIn)
	} else {
		carry = carrySelect(bld, xs, ys, carryIn, block)
	}
	sum := make([]int, w+1)
	for i := range w {
		sum[i] = bld.Gate(OpXOR, xs[i], ys[i])
		if i > 0 {
			sum[i] = bld.Gate(OpXOR, sum[i], carryIn[i])
		}
	}
	sum[w] = carry
	return bld.Build(sum)
}

// ripple adds the carries of x + y, bit by bit (carryIn[i] for i ≥ 1),
// and returns the carry out: w − 1 MAJ gates after one AND, in a chain.
func ripple(bld *Builder, x, y, carryIn []int) int {
	carry := bld.Gate(OpAND, x[0], y[0])
	for i := 1; i < len(x); i++ {
		carryIn[i] = carry
		carry = bld.Gate(OpMAJ, x[i], y[i], carry)
	}
	return carry
}

// carrySelect adds the carries of x + y as a carry-select adder and
// returns the carry out. The first block of block bits ripples. Every
// other block ripples twice at once, from a carry in of 0 (c0: an AND,
// then MAJ gates) and of 1 (c1: an OR, then MAJ gates), and once the
// carry into the block, C, is known, each carry is MAJ(C, c1, c0): c0 ≤
// c1, so the majority is c0 where they agree and C where they differ.
// The block's carry out, made so, is the next block's C. For w bits in
// blocks of k the carries take about k + w/k levels, where a ripple takes
// w, for about twice the bootstraps: each block's chains run beside the
// others', and only the carries between blocks wait on one another.
func carrySelect(bld *Builder, x, y, carryIn []int, block int) int {
	w := len(x)
	carry := ripple(bld, x[:block], y[:block], carryIn[:block])
	for start := block; start < w; start += block {
		end := min(start+block, w)
		c0, c1 := make([]int, end-start), make([]int, end-start)
		for i := start; i < end; i++ {
			j := i - start
			if j == 0 {
				c0[0], c1[0] = bld.Gate(OpAND, x[i], y[i]), bld.Gate(OpOR, x[i], y[i])
				continue
			}
			c0[j], c1[j] = bld.Gate(OpMAJ, x[i], y[i], c0[j-1]), bld.Gate(OpMAJ, x[i], y[i], c1[j-1])
		}
		carryIn[start] = carry
		for i := start + 1; i < end; i++ {
			carryIn[i] = bld.Gate(OpMAJ, carry, c1[i-1-start], c0[i-1-start])
		}
		carry = bld.Gate(OpMAJ, carry, c1[end-1-start], c0[end-1-start])
	}
	return carry
}
