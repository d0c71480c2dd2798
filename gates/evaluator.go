package gates

import (
	"errors"
	"fmt"
	"sync"

	"github.com/goldfhe/goldfhe/bootstrap"
	"github.com/goldfhe/goldfhe/tfhe"
	"github.com/goldfhe/goldfhe/torus"
)

// Evaluator evaluates gates on encrypted bits with a bootstrap.Engine. An
// encrypted bit is a *tfhe.TLWE of dimension n (Params().LWEDimension())
// under the TLWE key, of phase +1/8 for true and −1/8 for false
// (tfhe.EncodeBool).
//
// The one-gate methods (AND, NAND, …) allocate their result. Batch evaluates
// a whole slice of gates, of any mix of kinds, with one engine call for its
// two-input and MAJ gates and two more for its MUX gates, and writes into
// caller-owned outputs.
//
// An Evaluator is safe for concurrent use by multiple goroutines; its
// scratch buffers come from a pool. It does not own the engine: closing the
// engine is the caller's business.
type Evaluator struct {
	eng    bootstrap.Engine
	params tfhe.Params
	n, ext int // TLWE dimension n and extracted dimension k·N

	pool    sync.Pool            // *batchScratch
	figures func() *noiseFigures // computeFigures, once
}

// ErrNoEvaluator is returned by the methods of a nil or zero-value Evaluator.
var ErrNoEvaluator = errors.New("gates: Evaluator not initialized (use NewEvaluator)")

// Gate constants (CGGI20 §5.1 and the TFHE library's bootsGATE functions):
// every bootstrap uses μ = 1/8, and the linear combination before it adds
// one of these offsets to the body.
var (
	mu8  = torus.Encode(1, 8) // 1/8
	mu4  = torus.Encode(1, 4) // 1/4
	nmu8 = -mu8               // −1/8
	nmu4 = -mu4               // −1/4
)

// NewEvaluator returns an Evaluator that bootstraps with eng.
func NewEvaluator(eng bootstrap.Engine) (*Evaluator, error) {
	if eng == nil {
		return nil, errors.New("gates: NewEvaluator: nil engine")
	}
	p := eng.Params()
	if p.IsZero() {
		// A nil *Selected or a zero CPU: not made by its constructor.
		return nil, fmt.Errorf("gates: NewEvaluator: the engine has zero parameters: %w", bootstrap.ErrNotInitialized)
	}
	ev := &Evaluator{eng: eng, params: p, n: p.LWEDimension(), ext: p.ExtractedLWEDimension()}
	ev.figures = sync.OnceValue(ev.computeFigures)
	return ev, nil
}

// Params returns the parameter set of the evaluator's engine.
func (ev *Evaluator) Params() tfhe.Params {
	if ev == nil {
		return tfhe.Params{}
	}
	return ev.params
}

// Engine returns the engine the evaluator bootstraps with.
func (ev *Evaluator) Engine() bootstrap.Engine {
	if ev == nil {
		return nil
	}
	return ev.eng
}

func (ev *Evaluator) ok() error {
	if ev == nil || ev.eng == nil {
		return ErrNoEvaluator
	}
	return nil
}

// Constant returns a noiseless encryption of b, valid under every key of the
// evaluator's parameter set. It costs no bootstrap, but fails like every
// gate once the engine is closed.
func (ev *Evaluator) Constant(b bool) (*tfhe.TLWE, error) {
	if err := ev.ok(); err != nil {
		return nil, err
	}
	if err := ev.eng.Bootstrap(nil, nil, mu8); err != nil {
		return nil, fmt.Errorf("gates: Constant: %w", err)
	}
	return tfhe.NewTrivialTLWE(ev.n, tfhe.EncodeBool(b)), nil
}

// NOT returns ¬a: a negation, no bootstrap.
func (ev *Evaluator) NOT(a *tfhe.TLWE) (*tfhe.TLWE, error) { return ev.Gate(OpNOT, a) }

// AND returns a ∧ b (one bootstrap).
func (ev *Evaluator) AND(a, b *tfhe.TLWE) (*tfhe.TLWE, error) { return ev.Gate(OpAND, a, b) }

// NAND returns ¬(a ∧ b) (one bootstrap).
func (ev *Evaluator) NAND(a, b *tfhe.TLWE) (*tfhe.TLWE, error) { return ev.Gate(OpNAND, a, b) }

// OR returns a ∨ b (one bootstrap).
func (ev *Evaluator) OR(a, b *tfhe.TLWE) (*tfhe.TLWE, error) { return ev.Gate(OpOR, a, b) }

// NOR returns ¬(a ∨ b) (one bootstrap).
func (ev *Evaluator) NOR(a, b *tfhe.TLWE) (*tfhe.TLWE, error) { return ev.Gate(OpNOR, a, b) }

// XOR returns a ⊕ b (one bootstrap).
func (ev *Evaluator) XOR(a, b *tfhe.TLWE) (*tfhe.TLWE, error) { return ev.Gate(OpXOR, a, b) }

// XNOR returns ¬(a ⊕ b) (one bootstrap).
func (ev *Evaluator) XNOR(a, b *tfhe.TLWE) (*tfhe.TLWE, error) { return ev.Gate(OpXNOR, a, b) }

// ANDNY returns ¬a ∧ b (one bootstrap).
func (ev *Evaluator) ANDNY(a, b *tfhe.TLWE) (*tfhe.TLWE, error) { return ev.Gate(OpANDNY, a, b) }

// ANDYN returns a ∧ ¬b (one bootstrap).
func (ev *Evaluator) ANDYN(a, b *tfhe.TLWE) (*tfhe.TLWE, error) { return ev.Gate(OpANDYN, a, b) }

// ORNY returns ¬a ∨ b (one bootstrap).
func (ev *Evaluator) ORNY(a, b *tfhe.TLWE) (*tfhe.TLWE, error) { return ev.Gate(OpORNY, a, b) }

// ORYN returns a ∨ ¬b (one bootstrap).
func (ev *Evaluator) ORYN(a, b *tfhe.TLWE) (*tfhe.TLWE, error) { return ev.Gate(OpORYN, a, b) }

// MUX returns sel ? a : b: two bootstraps without key switching and one key
// switch (the TFHE library's bootsMUX). Its output is noisier than other
// gates' (tfhe.NoiseEstimate.MuxStdDev), so a gate that reads it fails
// more often (Log2GateFailureMux).
func (ev *Evaluator) MUX(sel, a, b *tfhe.TLWE) (*tfhe.TLWE, error) { return ev.Gate(OpMUX, sel, a, b) }

// MAJ returns the majority of a, b and c, (a ∧ b) ∨ (a ∧ c) ∨ (b ∧ c): one
// bootstrap of a + b + c, whose phase is ±1/8 or ±3/8 and positive exactly
// when two or three inputs are true. It is a full adder's carry (AddUint).
// Its bootstrap reads three errors where a two-input gate's reads two, so
// it fails more often (tfhe.NoiseEstimate.Log2MajorityFailure): TFHELib128
// about 2^−305 against 2^−420 with a plain key, 2^−131 against 2^−188
// grouped by 3; more again where its inputs are MUX outputs.
func (ev *Evaluator) MAJ(a, b, c *tfhe.TLWE) (*tfhe.TLWE, error) { return ev.Gate(OpMAJ, a, b, c) }

// Gate returns op applied to the inputs, which must number op.Arity(). One
// sample given for two inputs is as in Batch: AND(a, a) returns a copy of a
// without a bootstrap.
func (ev *Evaluator) Gate(op Op, in ...*tfhe.TLWE) (*tfhe.TLWE, error) {
	if err := ev.ok(); err != nil {
		return nil, err
	}
	if !op.Valid() {
		return nil, fmt.Errorf("gates: invalid gate %v", op)
	}
	if len(in) != op.Arity() {
		return nil, fmt.Errorf("gates: %v takes %d inputs, got %d", op, op.Arity(), len(in))
	}
	c := Call{Op: op, Out: tfhe.NewTLWE(ev.n)}
	for k, x := range in {
		if err := checkSample(x, ev.n); err != nil {
			name := string(rune('A' + k))
			if op == OpMUX {
				name = [...]string{"sel", "a", "b"}[k] // MUX(sel, a, b)'s names
			}
			return nil, fmt.Errorf("gates: %v: input %s %v", op, name, err)
		}
		c.in(k, x)
	}
	if err := ev.batch([]Call{c}, nil, nil, nil); err != nil {
		return nil, fmt.Errorf("gates: %v: %w", op, err)
	}
	return c.Out, nil
}

// Call is one gate of a batch: *Out = Op(A, B, C). Inputs past Op.Arity()
// are ignored (MUX: A selects, B if true, C if false).
type Call struct {
	Op      Op
	Out     *tfhe.TLWE
	A, B, C *tfhe.TLWE
}

func (c *Call) in(k int, x *tfhe.TLWE) {
	switch k {
	case 0:
		c.A = x
	case 1:
		c.B = x
	case 2:
		c.C = x
	}
}

func (c *Call) input(k int) *tfhe.TLWE {
	switch k {
	case 0:
		return c.A
	case 1:
		return c.B
	}
	return c.C
}
