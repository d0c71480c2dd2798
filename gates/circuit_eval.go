package gates

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// Eval evaluates the circuit in plaintext, level by level as the encrypted
// evaluation does. It takes one bit slice per input value, of the value's
// width, and returns one per output value. Bit j of a value is on wire
// base+j; see the encoding helpers (Uint64Bits, HexBits, …) for the bit
// orders of the published circuits.
func (c *Circuit) Eval(inputs ...[]bool) ([][]bool, error) {
	if c == nil {
		return nil, errors.New("gates: Eval: nil circuit")
	}
	if err := checkValues("gates: ", c.inputs, len(inputs), func(i int) int { return len(inputs[i]) }); err != nil {
		return nil, err
	}
	wires := make([]bool, c.nwires)
	w := 0
	for _, v := range inputs {
		w += copy(wires[w:], v)
	}
	eval := func(g *Gate) {
		var a, b, cc bool
		switch g.Op.Arity() {
		case 3:
			cc = wires[g.In[2]]
			fallthrough
		case 2:
			b = wires[g.In[1]]
			fallthrough
		case 1:
			a = wires[g.In[0]]
		}
		wires[g.Out] = g.Op.Eval(a, b, cc)
	}
	for _, lv := range c.levels {
		for i := range lv.Bootstrapped {
			eval(&lv.Bootstrapped[i])
		}
		for i := range lv.Free {
			eval(&lv.Free[i])
		}
	}
	return splitOutputs(wires, c.outputs), nil
}

// checkValues checks n values against the widths; its errors start with
// prefix.
func checkValues(prefix string, widths []int, n int, width func(i int) int) error {
	if n != len(widths) {
		return fmt.Errorf("%sthe circuit takes %d input values, got %d", prefix, len(widths), n)
	}
	for i, want := range widths {
		if got := width(i); got != want {
			return fmt.Errorf("%sinput %d of the circuit has %d bits, got %d", prefix, i+1, want, got)
		}
	}
	return nil
}

// splitOutputs copies the output values out of the last wires.
func splitOutputs[T any](wires []T, widths []int) [][]T {
	total := 0
	for _, n := range widths {
		total += n
	}
	base := len(wires) - total
	out := make([][]T, len(widths))
	for i, n := range widths {
		out[i] = append([]T(nil), wires[base:base+n]...)
		base += n
	}
	return out
}

// WriteTo writes the circuit as a netlist in its Format, one gate per line,
// in netlist order (a MAND read by Parse is written as its ANDs). Parse reads
// the result back to an equal circuit. Gates outside the Bristol set (OR,
// NAND, MUX, MAJ, …) are written by their Op names.
func (c *Circuit) WriteTo(w io.Writer) (int64, error) {
	if c == nil {
		return 0, errors.New("gates: WriteTo: nil circuit")
	}
	bw := bufio.NewWriter(w)
	var n int64
	put := func(s string) {
		m, _ := bw.WriteString(s)
		n += int64(m)
	}
	list := func(v []int) string {
		s := strconv.Itoa(len(v))
		for _, x := range v {
			s += " " + strconv.Itoa(x)
		}
		return s
	}
	put(fmt.Sprintf("%d %d\n", len(c.gates), c.nwires))
	if c.format == BristolOld {
		put(fmt.Sprintf("%d %d %d\n\n", c.inputs[0], c.inputs[1], c.outputs[0]))
	} else {
		put(list(c.inputs) + "\n" + list(c.outputs) + "\n\n")
	}
	buf := make([]byte, 0, 64)
	for _, g := range c.gates {
		buf = buf[:0]
		name := g.Op.String()
		switch g.Op {
		case OpZero, OpOne:
			buf = append(buf, "1 1 "...)
			if g.Op == OpOne {
				buf = append(buf, '1')
			} else {
				buf = append(buf, '0')
			}
			name = "EQ"
		case OpCopy:
			name = "EQW"
		case OpNOT:
			name = "INV"
		}
		if !g.Op.Free() || g.Op == OpCopy || g.Op == OpNOT {
			ar := g.Op.Arity()
			buf = strconv.AppendInt(buf, int64(ar), 10)
			buf = append(buf, " 1"...)
			for k := range ar {
				buf = append(buf, ' ')
				buf = strconv.AppendInt(buf, int64(g.In[k]), 10)
			}
		}
		buf = append(buf, ' ')
		buf = strconv.AppendInt(buf, int64(g.Out), 10)
		buf = append(buf, ' ')
		buf = append(buf, name...)
		buf = append(buf, '\n')
		m, _ := bw.Write(buf)
		n += int64(m)
	}
	return n, bw.Flush()
}
