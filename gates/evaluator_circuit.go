package gates

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/goldfhe/goldfhe/tfhe"
)

// LevelStats reports one finished level of an encrypted circuit evaluation.
type LevelStats struct {
	Level      int           // index in Circuit.Levels()
	Levels     int           // len(Circuit.Levels())
	Gates      int           // bootstrapped gates of the level: one engine batch
	Free       int           // free gates of the level
	Bootstraps int           // gate bootstraps of the level (a MUX counts 2)
	Elapsed    time.Duration // wall time of the level
}

// EvalCircuit evaluates c on encrypted inputs, one slice of samples per input
// value (bit j of value i in inputs[i][j], in the circuit's wire order; see
// EncryptBits and the encoding helpers). Each level's bootstrapped gates go
// to the engine as one Batch; free gates follow without bootstrapping.
// progress, if not nil, is called after each level. ctx is checked between
// levels.
//
// Samples of wires that no later gate reads are recycled, so memory follows
// the circuit's width rather than its size. The inputs are not modified; the
// outputs are fresh samples.
func (ev *Evaluator) EvalCircuit(ctx context.Context, c *Circuit, inputs [][]*tfhe.TLWE, progress func(LevelStats)) ([][]*tfhe.TLWE, error) {
	if err := ev.ok(); err != nil {
		return nil, err
	}
	if c == nil {
		return nil, errors.New("gates: EvalCircuit: nil circuit")
	}
	if err := checkValues(c.inputs, len(inputs), func(i int) int { return len(inputs[i]) }); err != nil {
		return nil, err
	}
	wires := make([]*tfhe.TLWE, c.nwires)
	owned := make([]bool, c.nwires) // the sample was allocated here and may be recycled
	w := 0
	for i, v := range inputs {
		for j, x := range v {
			if err := checkSample(x, ev.n); err != nil {
				return nil, fmt.Errorf("gates: EvalCircuit: input %d bit %d %v", i+1, j, err)
			}
			wires[w] = x
			w++
		}
	}
	release := c.releaseSchedule()

	var (
		pool  []*tfhe.TLWE
		calls []Call
	)
	alloc := func(w int) *tfhe.TLWE {
		var x *tfhe.TLWE
		if k := len(pool); k > 0 {
			x, pool = pool[k-1], pool[:k-1]
		} else {
			x = tfhe.NewTLWE(ev.n)
		}
		wires[w], owned[w] = x, true
		return x
	}
	get := func(w int) *tfhe.TLWE {
		if w < 0 {
			return nil
		}
		return wires[w]
	}
	for l, lv := range c.levels {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("gates: EvalCircuit stopped before level %d of %d: %w", l, len(c.levels), err)
		}
		start := time.Now()
		calls = calls[:0]
		bs := 0
		for _, g := range lv.Bootstrapped {
			calls = append(calls, Call{Op: g.Op, A: get(g.In[0]), B: get(g.In[1]), C: get(g.In[2]), Out: alloc(g.Out)})
			bs += g.Op.Bootstraps()
		}
		if err := ev.Batch(calls); err != nil {
			return nil, fmt.Errorf("gates: EvalCircuit level %d: %w", l, err)
		}
		for _, g := range lv.Free {
			switch d := alloc(g.Out); g.Op {
			case OpZero, OpOne:
				d.SetTrivial(tfhe.EncodeBool(g.Op == OpOne))
			case OpCopy:
				d.CopyFrom(wires[g.In[0]])
			case OpNOT:
				tfhe.NegTLWETo(d, wires[g.In[0]])
			}
		}
		for _, w := range release[l] {
			if owned[w] {
				pool = append(pool, wires[w])
			}
			wires[w], owned[w] = nil, false
		}
		if progress != nil {
			progress(LevelStats{Level: l, Levels: len(c.levels), Gates: len(lv.Bootstrapped),
				Free: len(lv.Free), Bootstraps: bs, Elapsed: time.Since(start)})
		}
	}

	// Output wires are never released; those that are input wires are
	// copied, so that no caller memory is handed back.
	for w := c.nwires - c.numOutputBits(); w < c.nwires; w++ {
		if !owned[w] {
			wires[w] = wires[w].Copy()
		}
	}
	return splitOutputs(wires, c.outputs), nil
}

func (c *Circuit) numOutputBits() int {
	n := 0
	for _, w := range c.outputs {
		n += w
	}
	return n
}

// releaseSchedule returns, for each level, the wires whose sample is no
// longer needed once the level is done: wires read for the last time in that
// level (or never read, released when written). Output wires are never
// released.
func (c *Circuit) releaseSchedule() [][]int {
	last := make([]int32, c.nwires) // level of the last read; inputs start at 0
	for l, lv := range c.levels {
		for _, part := range [2][]Gate{lv.Bootstrapped, lv.Free} {
			for _, g := range part {
				last[g.Out] = max(last[g.Out], int32(l))
				for k := range g.Op.Arity() {
					last[g.In[k]] = max(last[g.In[k]], int32(l))
				}
			}
		}
	}
	for w := c.nwires - c.numOutputBits(); w < c.nwires; w++ {
		last[w] = math.MaxInt32
	}
	release := make([][]int, len(c.levels))
	for w, l := range last {
		if l != math.MaxInt32 {
			release[l] = append(release[l], w)
		}
	}
	return release
}
