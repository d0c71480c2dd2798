package gates

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A 2-bit adder in Bristol Fashion: a on wires 0–1, b on 2–3; output 1 is
// the 2-bit sum (wires 9–10), output 2 the carry (wire 11).
const add2 = `8 12
2 2 2
2 2 1

2 1 0 2 4 XOR
2 1 0 2 5 AND
2 1 1 3 6 XOR
2 1 1 3 7 AND
2 1 6 5 8 AND
1 1 4 9 EQW
2 1 6 5 10 XOR
2 1 7 8 11 XOR
`

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		line      int
		msg       string
	}{
		{"empty", "", 1, "empty circuit file"},
		{"blank", "\n\n  \n", 4, "empty circuit file"},
		{"first line", "1 2 3\n1 1\n1 1\n", 1, "first line"},
		{"not a number", "1 x\n1 1\n1 1\n", 1, `"x" is not a number`},
		{"negative", "1 -2\n1 1\n1 1\n", 1, `"-2" is not a number`},
		{"huge", "1 99999999999\n1 1\n1 1\n", 1, "is not a number"},
		// Ten digits past 2^31 or 2^32 wrapped an int on 32-bit builds.
		{"2^31 gates", "2147483648 3\n1 1\n1 1\n", 1, `"2147483648" is not a number`},
		{"2^32+3 wires", "1 4294967299\n1 1\n1 1\n", 1, `"4294967299" is not a number`},
		{"2^31 wire", "1 3\n1 2\n1 1\n\n2 1 0 2147483649 2 XOR\n", 5, `"2147483649" is not a number`},
		{"too many wires", "1 20000000\n1 1\n1 1\n", 1, "wires exceed the limit"},
		{"header ends", "1 2\n", 2, "inside the header"},
		{"input count", "1 3\n2 1\n1 1\n\n1 1 0 2 INV\n", 2, "announces 2 values but gives 1 widths"},
		{"output count", "1 3\n1 1\n3 1 1\n\n1 1 0 2 INV\n", 3, "announces 3 values but gives 2 widths"},
		{"zero width", "1 3\n2 1 0\n1 1\n\n1 1 0 2 INV\n", 2, "input 2 has width 0"},
		{"inputs exceed wires", "0 3\n2 2 2\n1 1\n", 2, "more than the 3 wires"},
		{"outputs exceed wires", "0 3\n1 1\n1 4\n", 3, "outside [0, 3]"},
		{"old header", "1 3\n1 1\n\n1 1 0 2 INV\n", 2, "old format"},
		{"old header not a number", "1 3\n1 1 z\n\n1 1 0 2 INV\n", 2, `"z" is not a number`},
		{"truncated", "3 5\n1 2\n1 1\n\n1 1 0 2 INV\n1 1 1 3 INV\n", 6, "file ends after 2 of 3 gates"},
		{"truncated old", "2 4\n1 1 1\n\n2 1 0 1 2 AND\n", 4, "file ends after 1 of 2 gates"},
		{"extra gates", "1 3\n1 2\n1 1\n\n1 1 0 2 INV\n1 1 1 2 INV\n", 6, "more gate lines than the 1"},
		{"short gate", "1 3\n1 2\n1 1\n\n1 1 INV\n", 5, "at least 4"},
		{"wire count mismatch", "1 3\n1 2\n1 1\n\n2 1 0 2 XOR\n", 5, "announces 2 inputs and 1 outputs but lists 2 wires"},
		{"unknown gate", "1 3\n1 2\n1 1\n\n2 1 0 1 2 FOO\n", 5, `unknown gate "FOO"`},
		{"lower-case gate", "1 3\n1 2\n1 1\n\n2 1 0 1 2 xor\n", 5, `unknown gate "xor"`},
		{"trailing comment", "1 3\n1 2\n1 1\n\n2 1 0 1 2 XOR # sum\n", 5, `unknown gate "sum": a gate line ends with its operation`},
		{"no gate name", "1 3\n1 2\n1 1\n\n2 1 0 1 2\n", 5, `unknown gate "2"`},
		{"bad wire field", "1 3\n1 2\n1 1\n\n2 1 0 b 2 XOR\n", 5, `"b" is not a number`},
		{"arity", "1 4\n1 3\n1 1\n\n3 1 0 1 2 3 XOR\n", 5, "XOR gate needs 2 inputs and 1 output, has 3 and 1"},
		{"two outputs", "1 4\n1 2\n1 2\n\n2 2 0 1 2 3 AND\n", 5, "AND gate needs 2 inputs and 1 output, has 2 and 2"},
		{"INV arity", "1 4\n1 2\n1 1\n\n2 1 0 1 3 INV\n", 5, "INV gate needs 1 inputs"},
		{"EQ arity", "1 4\n1 2\n1 1\n\n2 1 0 1 3 EQ\n", 5, "EQ gate needs 1 input"},
		{"EQ constant", "1 3\n1 2\n1 1\n\n1 1 2 2 EQ\n", 5, "constant must be 0 or 1, is 2"},
		{"EQ out of range", "1 3\n1 2\n1 1\n\n1 1 1 3 EQ\n", 5, "writes wire 3, outside [0, 3)"},
		{"MAND shape", "1 5\n1 2\n1 1\n\n3 1 0 1 0 4 MAND\n", 5, "MAND gate needs 2n inputs"},
		{"MAND own output", "2 6\n1 4\n1 2\n\n4 2 0 1 4 3 4 5 MAND\n", 5, "reads wire 4, one of its own outputs"},
		{"MAND range", "1 6\n1 4\n1 2\n\n4 2 0 1 2 9 4 5 MAND\n", 5, "MAND gate reads wire 9"},
		{"read out of range", "1 3\n1 2\n1 1\n\n2 1 0 7 2 XOR\n", 5, "reads wire 7, outside [0, 3)"},
		{"write out of range", "1 3\n1 2\n1 1\n\n2 1 0 1 3 XOR\n", 5, "writes wire 3, outside [0, 3)"},
		{"read before write", "2 4\n1 2\n1 1\n\n2 1 0 3 2 XOR\n2 1 0 1 3 AND\n", 5, "reads wire 3 before it is written"},
		{"read own output", "1 3\n1 2\n1 1\n\n2 1 0 2 2 XOR\n", 5, "reads wire 2 before it is written"},
		{"written twice", "3 4\n1 2\n1 1\n\n2 1 0 1 2 XOR\n1 1 2 3 INV\n2 1 0 1 2 AND\n", 7, "already written on line 5"},
		{"writes an input", "1 3\n1 2\n1 1\n\n2 1 0 1 1 XOR\n", 5, "wire 1, which is a circuit input"},
		{"output not written", "1 4\n1 2\n1 1\n\n2 1 0 1 2 XOR\n", 3, "output wire 3 (output 1, bit 0) is never written"},
		{"old output not written", "1 4\n1 1 1\n\n2 1 0 1 2 XOR\n", 2, "output wire 3"},
		{"long line", "1 3\n1 2\n1 1\n\n" + strings.Repeat(" ", 70000) + "\n", 5, "longer than"},
		// 40 bytes declaring 2^24 wires for one gate: planning and
		// evaluation took about 0.5–1 GB for it.
		{"sparse wires", "1 16777216\n1 2\n1 1\n2 1 0 1 16777215 AND\n", 1, "16777213 are never written (wire 2 first)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse(strings.NewReader(tc.src))
			require.Errorf(t, err, "Parse succeeded: %v", c)
			var ce *CircuitError
			if !errors.As(err, &ce) {
				t.Fatalf("error %v (%T) is not a *CircuitError", err, err)
			}
			if ce.Line != tc.line || !strings.Contains(ce.Msg, tc.msg) {
				t.Errorf("got %q (line %d), want line %d and %q", err, ce.Line, tc.line, tc.msg)
			}
			if !strings.Contains(err.Error(), fmt.Sprintf("line %d:", tc.line)) {
				t.Errorf("%q does not name line %d", err, tc.line)
			}
		})
	}
}

func TestParseAdder(t *testing.T) {
	c, err := Parse(strings.NewReader(strings.ReplaceAll(add2, "\n", "\r\n")))
	require.NoError(t, err)
	if c.Format() != BristolFashion || c.NumWires() != 12 || c.NumGates() != 8 || c.Depth() != 3 || c.Bootstraps() != 7 {
		t.Fatalf("%v: depth %d", c, c.Depth())
	}
	for a := range uint64(4) {
		for b := range uint64(4) {
			out, err := c.Eval(Uint64Bits(a, 2), Uint64Bits(b, 2))
			require.NoError(t, err)
			// The sum is a 2-bit value then a carry bit.
			got := BitsUint64(out[0]) | BitsUint64(out[1])<<2
			if got != a+b {
				t.Errorf("%d+%d = %d", a, b, got)
			}
		}
	}
	// Level 1: the half adders and the free copy of the low sum bit; level
	// 2: the second half adder; level 3: the carry.
	var sb strings.Builder
	for l, lv := range c.Levels() {
		fmt.Fprintf(&sb, "%d:", l)
		for _, g := range lv.Bootstrapped {
			fmt.Fprintf(&sb, " %v%d", g.Op, g.Out)
		}
		sb.WriteString(" |")
		for _, g := range lv.Free {
			fmt.Fprintf(&sb, " %v%d", g.Op, g.Out)
		}
		sb.WriteString(";")
	}
	if want := "0: |;1: XOR4 AND5 XOR6 AND7 | COPY9;2: AND8 XOR10 |;3: XOR11 |;"; sb.String() != want {
		t.Errorf("levels %s, want %s", sb.String(), want)
	}
	if _, err := c.Eval(Uint64Bits(1, 2)); err == nil {
		t.Error("Eval with one input value succeeded")
	}
	if _, err := c.Eval(Uint64Bits(1, 2), Uint64Bits(1, 3)); err == nil {
		t.Error("Eval with a 3-bit value for a 2-bit input succeeded")
	}
	var nilc *Circuit
	if _, err := nilc.Eval(Uint64Bits(1, 2), Uint64Bits(1, 2)); err == nil {
		t.Error("Eval of a nil circuit succeeded")
	}
	if _, err := nilc.WriteTo(io.Discard); err == nil {
		t.Error("WriteTo of a nil circuit succeeded")
	}
	if s := fmt.Sprint(nilc); s != "<nil circuit>" {
		t.Errorf("a nil circuit prints as %q", s)
	}
}

// TestParseGates covers the gates a published file does not contain and the
// old format's quirks.
func TestParseGates(t *testing.T) {
	src := `9 13
2 2 1
1 3

1 1 0 3 EQ
1 1 1 4 EQ
1 1 2 5 NOT
4 2 0 1 2 0 6 7 MAND
2 1 6 6 8 OR
1 1 8 9 INV
3 1 0 1 2 10 MUX
2 1 9 9 11 XOR
2 1 10 11 12 NAND
`
	c, err := Parse(strings.NewReader(src))
	require.NoError(t, err)
	// MAND expands into two ANDs, so 10 gates; output wires 10, 11, 12.
	if c.NumGates() != 10 || c.Count(OpAND) != 2 || c.Count(OpZero) != 1 || c.Count(OpOne) != 1 {
		t.Fatalf("%v", c)
	}
	for x := range uint64(8) {
		a, b, cc := x&1 == 1, x&2 != 0, x&4 != 0
		out, err := c.Eval([]bool{a, b}, []bool{cc})
		require.NoError(t, err)
		mux := cc
		if a {
			mux = b
		}
		// w10 = MUX, w11 = w9⊕w9 = 0, w12 = ¬(w10 ∧ 0) = 1.
		if got := fmt.Sprint(out); got != fmt.Sprint([][]bool{{mux, false, true}}) {
			t.Errorf("inputs %v %v %v: got %v", a, b, cc, got)
		}
	}

	old := "2 5\n2 1 2\n\n2 1 0 0 3 XOR\n1 1 3 4 INV\n"
	c, err = Parse(strings.NewReader(old))
	require.NoError(t, err)
	if c.Format() != BristolOld || fmt.Sprint(c.Inputs(), c.Outputs()) != "[2 1] [2]" {
		t.Fatalf("%v", c)
	}
	out, _ := c.Eval([]bool{true, false}, []bool{true})
	if fmt.Sprint(out) != "[[false true]]" {
		t.Errorf("old: %v", out)
	}
	// An old-format circuit without gates, and one with a blank-free header.
	for _, src := range []string{"0 2\n1 1 1\n", "1 2\n1 0 1\n1 1 0 1 INV\n"} {
		if _, err := Parse(strings.NewReader(src)); err != nil {
			t.Errorf("%q: %v", src, err)
		}
	}
}

func TestWriteToRoundTrip(t *testing.T) {
	for _, src := range []string{
		add2,
		"2 5\n2 1 2\n\n2 1 0 0 3 XOR\n1 1 3 4 INV\n",
		"3 6\n1 3\n1 2\n\n1 1 1 3 EQ\n3 1 0 1 2 4 MUX\n2 1 3 4 5 ANDNY\n",
	} {
		checkRoundTrip(t, src)
	}
}

func checkRoundTrip(t *testing.T, src string) {
	t.Helper()
	c, err := Parse(strings.NewReader(src))
	require.NoError(t, err)
	checkWriteRead(t, c)
}

// checkWriteRead checks that Parse reads what c.WriteTo writes back to c.
func checkWriteRead(t *testing.T, c *Circuit) {
	t.Helper()
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	c2, err := Parse(bytes.NewReader(buf.Bytes()))
	require.NoErrorf(t, err, "re-reading %q", buf.String())
	if !sameCircuit(c, c2) {
		t.Fatalf("round trip changed the circuit:\n%s\n%v\n%v", buf.String(), c, c2)
	}
}

func sameCircuit(a, b *Circuit) bool {
	if a.String() != b.String() || len(a.gates) != len(b.gates) {
		return false
	}
	for i := range a.gates {
		ga, gb := a.gates[i], b.gates[i]
		ga.Line, gb.Line = 0, 0
		if ga != gb {
			return false
		}
	}
	return true
}

func TestNewCircuit(t *testing.T) {
	g := func(op Op, out int, in ...int) Gate {
		gt := Gate{Op: op, Out: out}
		copy(gt.In[:], in)
		return gt
	}
	for _, tc := range []struct {
		name   string
		format Format
		nwires int
		in     []int
		gates  []Gate
		msg    string
	}{
		{"ok", BristolFashion, 4, []int{2}, []Gate{g(OpNAND, 2, 0, 1), g(OpNOT, 3, 2)}, ""},
		{"bad op", BristolFashion, 3, []int{2}, []Gate{g(Op(99), 2, 0, 1)}, "invalid op"},
		{"zero op", BristolFashion, 3, []int{2}, []Gate{{Out: 2}}, "invalid op"},
		{"negative wire", BristolFashion, 3, []int{2}, []Gate{g(OpAND, 2, 0, -1)}, "gate 0 (AND) reads wire -1"},
		{"written twice", BristolFashion, 4, []int{2}, []Gate{g(OpAND, 3, 0, 1), g(OpOR, 3, 0, 1)}, "already written by gate 0"},
		{"format", Format(7), 4, []int{2}, nil, "unknown format"},
		{"old shape", BristolOld, 4, []int{2}, nil, "2 inputs and 1 output"},
		{"negative wires", BristolFashion, -1, nil, nil, "wire count -1"},
		{"negative width", BristolFashion, 4, []int{-1}, nil, "width -1"},
		// Parse refuses width 0 in a Bristol Fashion header, so WriteTo
		// could not round-trip it; the old format takes it.
		{"width 0", BristolFashion, 4, []int{2, 0}, []Gate{g(OpNAND, 3, 0, 1)}, "input 2 has width 0"},
		{"old width 0", BristolOld, 3, []int{2, 0}, []Gate{g(OpNAND, 2, 0, 1)}, ""},
		// Every wire an input or a gate's output: wire 2 is neither.
		{"unused wire", BristolFashion, 4, []int{2}, []Gate{g(OpNAND, 3, 0, 1)}, "1 are never written (wire 2 first)"},
	} {
		c, err := NewCircuit(tc.format, tc.nwires, tc.in, []int{1}, tc.gates)
		if tc.msg == "" {
			assert.NoErrorf(t, err, "%s", tc.name)
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: got %v, %v; want an error with %q", tc.name, c, err, tc.msg)
		}
	}
	if _, err := NewCircuit(BristolFashion, 4, []int{2}, []int{0, 1}, []Gate{g(OpNAND, 3, 0, 1)}); err == nil || !strings.Contains(err.Error(), "output 1 has width 0") {
		t.Errorf("a Bristol Fashion output of width 0: %v", err)
	}
	if _, err := Parse(nil); err == nil {
		t.Error("Parse(nil) succeeded")
	}
	// NewCircuit copies its arguments and the accessors return copies.
	in := []int{2}
	gs := []Gate{g(OpNAND, 2, 0, 1), g(OpNOT, 3, 2)}
	c, err := NewCircuit(BristolFashion, 4, in, []int{1}, gs)
	require.NoError(t, err)
	in[0], gs[0].Op = 5, OpAND
	c.Inputs()[0] = 7
	c.Gates()[0].Op = OpOR
	c.Levels()[1].Bootstrapped[0].Op = OpOR
	if c.Inputs()[0] != 2 || c.Gates()[0].Op != OpNAND || c.Levels()[1].Bootstrapped[0].Op != OpNAND {
		t.Error("a Circuit shares memory with its arguments or results")
	}
	if got := c.Gates()[1].In; got != [3]int{2, -1, -1} {
		t.Errorf("unused inputs not normalised to -1: %v", got)
	}
}

// TestLevelsInvariant checks, on every netlist of the seed corpus, that the
// schedule respects data dependencies and matches evaluation in file order.
func TestLevelsInvariant(t *testing.T) {
	for _, src := range seedCorpus(t) {
		c, err := Parse(bytes.NewReader(src))
		if err != nil {
			continue
		}
		checkSchedule(t, c)
	}
}

// checkSchedule verifies that each level's bootstrapped gates read only wires
// ready before the level, that free gates read ready wires, that the
// bootstrapped gates of level l could not run earlier, and that Eval agrees
// with a line-by-line evaluation on a pseudo-random input.
func checkSchedule(t *testing.T, c *Circuit) {
	t.Helper()
	nin := 0
	for _, n := range c.inputs {
		nin += n
	}
	ready := make([]int32, c.nwires) // level at which the wire is ready; −1 not yet
	for w := range ready {
		ready[w] = -1
		if w < nin {
			ready[w] = 0
		}
	}
	count := 0
	for l, lv := range c.Levels() {
		for _, g := range lv.Bootstrapped {
			// Ready before the level, and at least one input from the level
			// just before (else the gate would belong to an earlier level).
			deepest := int32(0)
			for k := range g.Op.Arity() {
				r := ready[g.In[k]]
				if r < 0 || r >= int32(l) {
					t.Fatalf("level %d: %v on line %d reads wire %d ready at %d", l, g.Op, g.Line, g.In[k], r)
				}
				deepest = max(deepest, r)
			}
			if deepest != int32(l-1) {
				t.Fatalf("level %d: %v on line %d could run at level %d", l, g.Op, g.Line, deepest+1)
			}
		}
		for _, g := range lv.Bootstrapped {
			ready[g.Out] = int32(l)
		}
		for _, g := range lv.Free {
			for k := range g.Op.Arity() {
				if r := ready[g.In[k]]; r < 0 || r > int32(l) {
					t.Fatalf("level %d: free %v on line %d reads wire %d ready at %d", l, g.Op, g.Line, g.In[k], r)
				}
			}
			ready[g.Out] = int32(l)
		}
		count += len(lv.Bootstrapped) + len(lv.Free)
	}
	if count != c.NumGates() {
		t.Fatalf("levels hold %d gates, the circuit %d", count, c.NumGates())
	}

	// Line-by-line evaluation.
	inputs := make([][]bool, len(c.inputs))
	wires := make([]bool, c.nwires)
	x := uint64(0x9e3779b97f4a7c15)
	w := 0
	for i, n := range c.inputs {
		inputs[i] = make([]bool, n)
		for j := range n {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
			inputs[i][j] = x&1 == 1
			wires[w] = inputs[i][j]
			w++
		}
	}
	for _, g := range c.gates {
		var v [3]bool
		for k := range g.Op.Arity() {
			v[k] = wires[g.In[k]]
		}
		wires[g.Out] = g.Op.Eval(v[0], v[1], v[2])
	}
	got, err := c.Eval(inputs...)
	require.NoError(t, err)
	want := splitOutputs(wires, c.outputs)
	for i := range want {
		if !slices.Equal(got[i], want[i]) {
			t.Fatalf("output %d: level-order Eval differs from file order", i+1)
		}
	}

	// The schedule's own gates, level by level, give the same outputs, and
	// none of its bootstraps reads one sample twice or a constant, or
	// repeats another (rep: the wire whose sample a wire is, through copies
	// and NOTs; −1 a constant).
	sw := slices.Clone(wires[:nin])
	sw = append(sw, make([]bool, c.nwires-nin)...)
	rep := make([]int, c.nwires)
	sgn := make([]bool, c.nwires)
	for w := range rep {
		rep[w] = w
	}
	done := map[engineInput]int{}
	for l, lv := range c.Levels() {
		for _, g := range lv.Bootstrapped {
			var v [3]bool
			var id [3]int32
			var ng [3]bool
			for k := range g.Op.Arity() {
				v[k] = sw[g.In[k]]
				id[k], ng[k] = int32(rep[g.In[k]]), sgn[g.In[k]]
				if rep[g.In[k]] < 0 {
					t.Fatalf("level %d: %v on line %d bootstraps a constant", l, g.Op, g.Line)
				}
				for j := range k {
					if r := rep[g.In[k]]; r == rep[g.In[j]] {
						t.Fatalf("level %d: %v on line %d reads the sample of wire %d twice", l, g.Op, g.Line, r)
					}
				}
			}
			key := engineInputOf(g.Op, id, ng)
			if w, ok := done[key]; ok {
				t.Fatalf("level %d: %v on line %d computes wire %d's sample again", l, g.Op, g.Line, w)
			}
			if nk, ok := key.negated(); ok {
				if w, ok := done[nk]; ok {
					t.Fatalf("level %d: %v on line %d bootstraps the negation of wire %d's input (its NOT is free)", l, g.Op, g.Line, w)
				}
			}
			done[key] = g.Out
			sw[g.Out] = g.Op.Eval(v[0], v[1], v[2])
		}
		for _, g := range lv.Free {
			var v [3]bool
			for k := range g.Op.Arity() {
				v[k] = sw[g.In[k]]
			}
			sw[g.Out] = g.Op.Eval(v[0], v[1], v[2])
			switch g.Op {
			case OpCopy, OpNOT:
				rep[g.Out], sgn[g.Out] = rep[g.In[0]], sgn[g.In[0]] != (g.Op == OpNOT)
			default:
				rep[g.Out] = -1
			}
		}
	}
	for i, o := range splitOutputs(sw, c.outputs) {
		if !slices.Equal(o, want[i]) {
			t.Fatalf("output %d: the schedule's gates give %v, the netlist %v", i+1, o, want[i])
		}
	}
}

func seedCorpus(t testing.TB) [][]byte {
	seeds := [][]byte{
		[]byte(add2),
		[]byte(strings.Replace(add2, "7 8 11 XOR", "7 8 12 XOR", 1)),
		[]byte("2 5\n2 1 2\n\n2 1 0 0 3 XOR\n1 1 3 4 INV\n"),
		[]byte("3 6\n1 3\n1 2\n\n1 1 1 3 EQ\n3 1 0 1 2 4 MUX\n2 1 3 4 5 ANDNY\n"),
		[]byte("3 6\n1 3\n1 2\n\n3 1 0 1 2 3 MAJ\n3 1 3 3 1 4 MAJ\n2 1 4 0 5 XOR\n"), // the second MAJ a copy of the first
		[]byte("2 6\n1 4\n1 2\n\n4 2 0 1 2 3 4 5 MAND\n"),
		[]byte("1 3\n1 2\n1 1\n\n2 1 0 2 2 XOR\n"),
		[]byte("0 3\n1 1 1\n"),
		[]byte(""),
	}
	// XOR trees summed whole: a ⊕ b ⊕ c ⊕ a ⊕ d ⊕ e of AND outputs, whose
	// repeated a left a cancelled term in the sum at 3 terms
	// (TestXORTreeRepeatedLeaf), and random circuits rich in them.
	seeds = append(seeds, []byte("11 23\n1 12\n1 1\n\n2 1 0 1 12 AND\n2 1 2 3 13 AND\n2 1 4 5 14 AND\n"+
		"2 1 6 7 15 AND\n2 1 8 9 16 AND\n2 1 12 13 17 XOR\n2 1 17 14 18 XOR\n2 1 18 12 19 XOR\n"+
		"2 1 19 15 20 XOR\n2 1 20 16 21 XOR\n1 1 21 22 EQW\n"))
	for i := range 4 {
		var b bytes.Buffer
		if _, err := RandomXORTreeCircuit(rand.New(rand.NewPCG(uint64(i), 99))).WriteTo(&b); err != nil {
			t.Fatal(err)
		}
		seeds = append(seeds, b.Bytes())
	}
	// The small published circuits.
	for _, name := range []string{"zero_equal.txt", "neg64.txt", "adder64.txt", "adder_32bit.txt", "int_gt64_size.bristol"} {
		data, err := os.ReadFile(filepath.Join("circuits", name))
		require.NoError(t, err)
		seeds = append(seeds, data)
	}
	return seeds
}

// FuzzParse checks that Parse never panics, that whatever it accepts has a
// valid schedule and evaluates like a line-by-line interpreter, that its
// linear-XOR plan is valid and evaluates like Eval, and that WriteTo and
// Parse round-trip. Of a header announcing more than 2^16 wires it checks
// instead that Parse takes memory in the file's length, not in the
// header's numbers, and the round trip.
func FuzzParse(f *testing.F) {
	for _, s := range seedCorpus(f) {
		f.Add(s)
	}
	// Ten-digit fields, which wrapped an int on 32-bit builds.
	f.Add([]byte("2147483648 3\n1 1\n1 1\n"))
	f.Add([]byte("1 3\n1 2\n1 1\n\n2 1 0 4294967297 2 XOR\n"))
	// 2^24 wires, nearly all input bits, in a few bytes: build made
	// tables of them all (168 MB), the file valid or not.
	f.Add([]byte("0 16777216\n1 16777216\n1 1\n"))
	f.Add([]byte("1 16777216\n1 16777216\n1 1\n\n2 1 0 1 5 XOR\n"))
	f.Add([]byte("1 16777216\n1 16777215\n1 1\n\n2 1 0 16777214 16777215 AND\n"))
	f.Add([]byte("1 16777216\n8388607 8388608 1\n\n2 1 0 16777214 16777215 AND\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		// Headers announcing millions of wires can be valid, but Eval and
		// the plaintext evaluations of checkSchedule and checkLinearPlan
		// take memory a wire (tens of milliseconds each, which stalls the
		// fuzzer). FuzzPlan plans them.
		wide := false
		for line := range bytes.Lines(data) {
			f := bytes.Fields(line)
			if len(f) == 0 {
				continue // Parse skips blank lines
			}
			n, ok := number(f[len(f)-1])
			wide = len(f) == 2 && ok && n > 1<<16
			break
		}
		var before, after runtime.MemStats
		if wide {
			runtime.ReadMemStats(&before)
		}
		c, err := Parse(bytes.NewReader(data))
		if wide {
			// The largest published circuits take about 30 bytes a byte
			// of netlist (SHA-256: 109 MB); a table of the declared wires
			// would take 12 bytes a wire.
			runtime.ReadMemStats(&after)
			if got, limit := after.TotalAlloc-before.TotalAlloc, uint64(1<<20+1024*len(data)); got > limit {
				t.Fatalf("Parse of %d bytes allocated %d bytes (limit %d): %v, %v", len(data), got, limit, c, err)
			}
		}
		if err != nil {
			var ce *CircuitError
			if !errors.As(err, &ce) {
				t.Fatalf("error %v is not a *CircuitError", err)
			}
			return
		}
		if wide {
			checkWriteRead(t, c)
			return
		}
		checkSchedule(t, c)
		if c.NumGates() <= 1<<12 {
			rng := rand.New(rand.NewPCG(uint64(len(data)), 0))
			checkLinearPlan(t, c, 2+len(data)%3, nil, 1, rng)
			checkLinearPlan(t, c, 2+len(data)%3, []int{1 + len(data)%4, 8}, 1, rng)
		}
		checkWriteRead(t, c)
	})
}

// TestParseWideMAND: a MAND line of thousands of ANDs (the longest a line
// allows) parses into one AND each, and the same line reading one of its
// own outputs, its last, is refused.
func TestParseWideMAND(t *testing.T) {
	const n = 3000 // 2n inputs, n outputs: about 45 KB of line
	build := func(lastIn int) string {
		var b strings.Builder
		fmt.Fprintf(&b, "1 %d\n1 %d\n1 %d\n\n%d %d", 3*n, 2*n, n, 2*n, n)
		for i := range 2 * n {
			w := i
			if i == 2*n-1 {
				w = lastIn
			}
			fmt.Fprintf(&b, " %d", w)
		}
		for j := range n {
			fmt.Fprintf(&b, " %d", 2*n+j)
		}
		b.WriteString(" MAND\n")
		return b.String()
	}
	c, err := Parse(strings.NewReader(build(2*n - 1)))
	require.NoError(t, err)
	if got := len(c.Gates()); got != n {
		t.Fatalf("%d gates, want %d", got, n)
	}
	if g := c.Gates()[n-1]; g.Op != OpAND || g.In[0] != n-1 || g.In[1] != 2*n-1 || g.Out != 3*n-1 {
		t.Errorf("last AND %+v", g)
	}
	_, err = Parse(strings.NewReader(build(3*n - 1)))
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("reads wire %d, one of its own outputs", 3*n-1)) {
		t.Errorf("a MAND reading its last output: %v", err)
	}
}

// TestParseHostileHeaderMemory: a header that declares many wires for a
// few gates is refused before tables as large as its wire count are made,
// one that declares many input bits (valid or not) makes no table of them
// (build's took 10 bytes a wire, 168 MB for 2^24, before wireFacts), and a
// gate count of 65,536 in a few bytes reserves little.
func TestParseHostileHeaderMemory(t *testing.T) {
	const limit = 1 << 20
	for _, tc := range []struct {
		src   string
		valid bool
	}{
		{"0 16777216\n1 1\n1 1\n", false},
		{"1 16777216\n1 1\n1 1\n\n2 1 0 0 16777215 XOR\n", false},
		{"65536 3\n1 1\n1 1\n", false},
		// 2^24 input bits: a gate that writes one, a gate after the
		// inputs, no gate at all, the old format.
		{"1 16777216\n1 16777216\n1 1\n\n2 1 0 1 5 XOR\n", false},
		{"1 16777216\n1 16777215\n1 1\n\n2 1 0 16777214 16777215 AND\n", true},
		{"0 16777216\n1 16777216\n1 1\n", true},
		{"1 16777216\n8388607 8388608 1\n\n2 1 0 16777214 16777215 AND\n", true},
	} {
		var (
			c   *Circuit
			err error
		)
		got := allocated(func() { c, err = Parse(strings.NewReader(tc.src)) })
		if (err == nil) != tc.valid {
			t.Fatalf("%q: got %v, %v; want valid %v", tc.src, c, err, tc.valid)
		}
		if got > limit {
			t.Errorf("%q: %d bytes allocated for %v, %v", tc.src, got, c, err)
		}
	}
	got := allocated(func() {
		if _, err := NewCircuit(BristolFashion, MaxWires, []int{MaxWires}, []int{1}, nil); err != nil {
			t.Fatal(err)
		}
	})
	if got > limit {
		t.Errorf("NewCircuit of %d input bits and no gate: %d bytes allocated", MaxWires, got)
	}
}

// allocated returns the bytes the program allocated while f ran.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}
