package gates_test

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/goldfhe/goldfhe/gates"
	"github.com/stretchr/testify/require"
)

// addCompare builds, on two n-bit inputs a and b (least significant bit
// first), a + b (n+1 bits: a ripple-carry adder whose carry is a MUX) and
// a < b (from the least significant bit up: where a_j = b_j the lower
// bits' answer, else ¬a_j ∧ b_j; a ZERO gate below bit 0), and returns
// the builder and the wires of the two results.
func addCompare(n int) (b *gates.Builder, sum []int, lt int) {
	b = gates.NewBuilder(n, n)
	x, y := b.Input(0), b.Input(1)
	sum = make([]int, n+1)
	carry := -1
	lt = b.Gate(gates.OpZero)
	for j := range n {
		d := b.Gate(gates.OpXOR, x[j], y[j])
		if carry < 0 {
			sum[j], carry = d, b.Gate(gates.OpAND, x[j], y[j])
		} else {
			sum[j], carry = b.Gate(gates.OpXOR, d, carry), b.Gate(gates.OpMUX, d, carry, x[j])
		}
		lt = b.Gate(gates.OpMUX, b.Gate(gates.OpXNOR, x[j], y[j]), lt, b.Gate(gates.OpANDNY, x[j], y[j]))
	}
	sum[n] = carry
	return b, sum, lt
}

// TestBuilderAddCompare: a circuit made by the Builder gives, in
// plaintext, what Go's + and < give: every pair of 4-bit values, and
// random pairs of 13- and 64-bit ones.
func TestBuilderAddCompare(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 4, 13, 64} {
		b, sum, lt := addCompare(n)
		c, err := b.Build(sum, []int{lt})
		require.NoErrorf(t, err, "%d bits", n)
		if got, want := c.Inputs(), []int{n, n}; !slices.Equal(got, want) {
			t.Fatalf("%d bits: inputs %v, want %v", n, got, want)
		}
		if got, want := c.Outputs(), []int{n + 1, 1}; !slices.Equal(got, want) {
			t.Fatalf("%d bits: outputs %v, want %v", n, got, want)
		}
		mask := uint64(1)<<n - 1
		if n == 64 {
			mask = ^uint64(0)
		}
		var pairs [][2]uint64
		if n <= 4 {
			for x := range uint64(1) << n {
				for y := range uint64(1) << n {
					pairs = append(pairs, [2]uint64{x, y})
				}
			}
		} else {
			pairs = [][2]uint64{{0, 0}, {mask, mask}, {mask, 1}, {1, mask}}
			for range 200 {
				pairs = append(pairs, [2]uint64{r.Uint64() & mask, r.Uint64() & mask})
			}
		}
		for _, p := range pairs {
			out, err := c.Eval(gates.Uint64Bits(p[0], n), gates.Uint64Bits(p[1], n))
			require.NoError(t, err)
			lo, hi := p[0]+p[1], uint64(0) // the n+1-bit sum: low n bits, carry
			if n == 64 && lo < p[0] || n < 64 && lo>>n == 1 {
				hi = 1
			}
			if got := gates.BitsUint64(out[0][:n]); got != lo&mask || out[0][n] != (hi == 1) {
				t.Fatalf("%d bits: %#x + %#x gave %#x and carry %v", n, p[0], p[1], got, out[0][n])
			}
			if got := out[1][0]; got != (p[0] < p[1]) {
				t.Fatalf("%d bits: %#x < %#x gave %v", n, p[0], p[1], got)
			}
		}
	}
}

// TestBuilderLayout: the builder numbers wires as NewCircuit needs, the
// inputs first, then the gates in the order they were made, then one
// COPY a bit of the outputs.
func TestBuilderLayout(t *testing.T) {
	b := gates.NewBuilder(3, 1)
	x, y := b.Input(0), b.Input(1)
	if !slices.Equal(x, []int{0, 1, 2}) || !slices.Equal(y, []int{3}) {
		t.Fatalf("inputs on wires %v and %v, want [0 1 2] and [3]", x, y)
	}
	x[0] = 99 // the caller's copy
	if got := b.Input(0); got[0] != 0 {
		t.Fatalf("Input returned the builder's own slice: %v", got)
	}
	w1 := b.Gate(gates.OpNAND, 0, 3)
	w2 := b.Gate(gates.OpNOT, w1)
	w3 := b.Gate(gates.OpMUX, w2, 1, 2)
	if w1 != 4 || w2 != 5 || w3 != 6 {
		t.Fatalf("gates write wires %d, %d, %d, want 4, 5, 6", w1, w2, w3)
	}
	c, err := b.Build([]int{w3, w1})
	require.NoError(t, err)
	want := []gates.Gate{
		{Op: gates.OpNAND, In: [3]int{0, 3, -1}, Out: 4},
		{Op: gates.OpNOT, In: [3]int{4, -1, -1}, Out: 5},
		{Op: gates.OpMUX, In: [3]int{5, 1, 2}, Out: 6},
		{Op: gates.OpCopy, In: [3]int{6, -1, -1}, Out: 7},
		{Op: gates.OpCopy, In: [3]int{4, -1, -1}, Out: 8},
	}
	if got := c.Gates(); !slices.Equal(got, want) {
		t.Fatalf("gates\n%v\nwant\n%v", got, want)
	}
	if c.NumWires() != 9 || c.Format() != gates.BristolFashion {
		t.Fatalf("%v, want 9 wires in Bristol Fashion", c)
	}
}

// TestBuilderOutputs: an output may be any wire, in any order: an input,
// a wire twice, in two values, a constant; a circuit without inputs.
func TestBuilderOutputs(t *testing.T) {
	b := gates.NewBuilder(2, 1)
	x, y := b.Input(0), b.Input(1)
	and := b.Gate(gates.OpAND, x[0], y[0])
	one := b.Gate(gates.OpOne)
	zero := b.Gate(gates.OpZero)
	c, err := b.Build(
		[]int{y[0], x[1], x[0]},      // inputs, out of order
		[]int{and, and, zero, and},   // a wire repeated, a constant
		[]int{one},                   // a constant alone
		[]int{x[1], and, x[1], y[0]}, // wires of the other values again
	)
	require.NoError(t, err)
	for v := range 8 {
		x0, x1, y0 := v&1 == 1, v&2 == 2, v&4 == 4
		out, err := c.Eval([]bool{x0, x1}, []bool{y0})
		require.NoError(t, err)
		a := x0 && y0
		want := [][]bool{{y0, x1, x0}, {a, a, false, a}, {true}, {x1, a, x1, y0}}
		for i := range want {
			if !slices.Equal(out[i], want[i]) {
				t.Fatalf("x = %v%v, y = %v: output %d is %v, want %v", x1, x0, y0, i+1, out[i], want[i])
			}
		}
	}
	if got := c.Count(gates.OpCopy); got != 12 {
		t.Errorf("%d COPY gates, want one an output bit (12)", got)
	}

	// No inputs: constants only.
	b = gates.NewBuilder()
	one = b.Gate(gates.OpOne)
	c, err = b.Build([]int{one, b.Gate(gates.OpNOT, one)})
	require.NoError(t, err)
	if out, err := c.Eval(); err != nil || !slices.Equal(out[0], []bool{true, false}) {
		t.Fatalf("constants: %v, %v; want [true false]", out, err)
	}
}

// TestBuilderErrors: every mistake is an error from Build, a
// *CircuitError naming the gate and its op, and the first one is kept:
// later calls do nothing, and Gate returns −1.
func TestBuilderErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		build func() (*gates.Circuit, error)
		want  string
	}{
		{"negative width", func() (*gates.Circuit, error) {
			return gates.NewBuilder(3, -1).Build()
		}, "gates: circuit: input 2 has width -1; a value has at least 1 bit"},
		{"zero width", func() (*gates.Circuit, error) {
			return gates.NewBuilder(0).Build()
		}, "input 1 has width 0"},
		{"too many input bits", func() (*gates.Circuit, error) {
			return gates.NewBuilder(gates.MaxWires, 1).Build()
		}, "the inputs have more than 16777216 bits (MaxWires)"},
		{"inputs wider than an int holds", func() (*gates.Circuit, error) {
			b := gates.NewBuilder(1, math.MaxInt)
			b.Input(1)
			return b.Build()
		}, "the inputs have more than 16777216 bits (MaxWires)"},
		{"input index", func() (*gates.Circuit, error) {
			b := gates.NewBuilder(2)
			b.Input(1)
			return b.Build([]int{0})
		}, "Input(1): the circuit has 1 input values"},
		{"negative input index", func() (*gates.Circuit, error) {
			b := gates.NewBuilder(2)
			b.Input(-1)
			return b.Build([]int{0})
		}, "Input(-1)"},
		{"invalid op", func() (*gates.Circuit, error) {
			b := gates.NewBuilder(2)
			b.Gate(gates.OpAND, 0, 1)
			b.Gate(gates.Op(0), 0, 1)
			return b.Build([]int{2})
		}, "gates: circuit: gate 1 has an invalid op, Op(0)"},
		{"unknown op", func() (*gates.Circuit, error) {
			b := gates.NewBuilder(2)
			b.Gate(gates.Op(200), 0, 1)
			return b.Build([]int{0})
		}, "gate 0 has an invalid op, Op(200)"},
		{"too few inputs", func() (*gates.Circuit, error) {
			b := gates.NewBuilder(2)
			b.Gate(gates.OpAND, 0)
			return b.Build([]int{0})
		}, "gates: circuit: gate 0 (AND) has 1 inputs; AND takes 2"},
		{"too many inputs", func() (*gates.Circuit, error) {
			b := gates.NewBuilder(2)
			b.Gate(gates.OpMUX, 0, 1, 0, 1)
			return b.Build([]int{0})
		}, "gate 0 (MUX) has 4 inputs; MUX takes 3"},
		{"input to a constant", func() (*gates.Circuit, error) {
			b := gates.NewBuilder(2)
			b.Gate(gates.OpZero, 0)
			return b.Build([]int{0})
		}, "gate 0 (ZERO) has 1 inputs; ZERO takes 0"},
		{"wire not yet written", func() (*gates.Circuit, error) {
			b := gates.NewBuilder(2)
			w := b.Gate(gates.OpXOR, 0, 1)
			b.Gate(gates.OpAND, w, w+1)
			return b.Build([]int{w})
		}, "gates: circuit: gate 1 (AND) reads wire 3 before it is written"},
		{"a gate reads its own output", func() (*gates.Circuit, error) {
			b := gates.NewBuilder(2)
			b.Gate(gates.OpNOT, 2)
			return b.Build([]int{0})
		}, "gate 0 (NOT) reads wire 2 before it is written"},
		{"negative wire", func() (*gates.Circuit, error) {
			b := gates.NewBuilder(2)
			b.Gate(gates.OpMUX, 0, 1, -1)
			return b.Build([]int{0})
		}, "gate 0 (MUX) reads wire -1, outside [0, 2)"},
		{"the result of a failed Input", func() (*gates.Circuit, error) {
			b := gates.NewBuilder(2)
			x := b.Input(3)
			b.Gate(gates.OpAND, 0, 1) // does nothing: the error is Input's
			return b.Build(x)
		}, "Input(3): the circuit has 1 input values"},
		{"the first error is kept", func() (*gates.Circuit, error) {
			b := gates.NewBuilder(2)
			w := b.Gate(gates.OpAND, 0, 9)
			if w != -1 {
				t.Errorf("Gate after an error returned %d, want -1", w)
			}
			if w := b.Gate(gates.OpAND, 0, 1); w != -1 {
				t.Errorf("a valid Gate after an error returned %d, want -1", w)
			}
			b.Gate(gates.OpNOT)
			return b.Build([]int{0})
		}, "gate 0 (AND) reads wire 9 before it is written"},
		{"empty output", func() (*gates.Circuit, error) {
			b := gates.NewBuilder(2)
			return b.Build([]int{0}, nil)
		}, "gates: circuit: output 2 has no wires"},
		{"output not written", func() (*gates.Circuit, error) {
			b := gates.NewBuilder(2)
			w := b.Gate(gates.OpOR, 0, 1)
			return b.Build([]int{w, w + 1})
		}, "output 1, bit 1 is wire 3, outside the 3 wires written"},
		{"negative output wire", func() (*gates.Circuit, error) {
			b := gates.NewBuilder(2)
			return b.Build([]int{0}, []int{1, -1})
		}, "output 2, bit 1 is wire -1, outside the 2 wires written"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := tc.build()
			require.Errorf(t, err, "no error; built %v", c)
			if c != nil {
				t.Errorf("a circuit (%v) with the error", c)
			}
			var ce *gates.CircuitError
			if !errors.As(err, &ce) || ce.Line != 0 {
				t.Errorf("error %T %v is not a *CircuitError of line 0", err, err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q, want %q", err, tc.want)
			}
		})
	}
}

// TestBuilderManyInputs: Input takes the same time whatever its index, so
// that a circuit of a million one-bit input values (MaxWires allows
// sixteen) is built in well under a second, not hours.
func TestBuilderManyInputs(t *testing.T) {
	widths := make([]int, 1<<20)
	for i := range widths {
		widths[i] = 1
	}
	b := gates.NewBuilder(widths...)
	start := time.Now()
	for i := range widths {
		if w := b.Input(i); len(w) != 1 || w[0] != i {
			t.Fatalf("Input(%d) = %v, want [%d]", i, w, i)
		}
		if i%4096 == 0 && time.Since(start) > 20*time.Second {
			t.Fatalf("Input of %d values of %d took %v", i, len(widths), time.Since(start))
		}
	}
	if _, err := b.Build(b.Input(len(widths) - 1)); err != nil {
		t.Fatal(err)
	}
}

// TestBuilderBuildTwice: Build leaves the builder as it was: building the
// same outputs again gives the same circuit, a builder goes on after
// Build, and its next circuit does not change the first.
func TestBuilderBuildTwice(t *testing.T) {
	b, sum, lt := addCompare(8)
	c1, err := b.Build(sum)
	require.NoError(t, err)
	text1 := netlist(t, c1)
	gates1 := c1.Gates()
	c2, err := b.Build(sum)
	require.NoError(t, err)
	if text2 := netlist(t, c2); text2 != text1 {
		t.Fatalf("the same outputs built twice give two circuits:\n%s\n%s", text1, text2)
	}
	// More gates after Build: a ≥ b as ¬(a < b), and a circuit of both.
	ge := b.Gate(gates.OpNOT, lt)
	c3, err := b.Build([]int{lt}, []int{ge})
	require.NoError(t, err)
	if c3.NumGates() != c1.NumGates()-len(sum)+1+2 {
		t.Errorf("%d gates after one more and two output copies, from %d with %d copies", c3.NumGates(), c1.NumGates(), len(sum))
	}
	if !slices.Equal(c1.Gates(), gates1) || netlist(t, c1) != text1 {
		t.Fatal("building again changed the first circuit")
	}
	for _, p := range [][2]uint64{{3, 200}, {200, 3}, {7, 7}} {
		out, err := c3.Eval(gates.Uint64Bits(p[0], 8), gates.Uint64Bits(p[1], 8))
		require.NoError(t, err)
		if out[0][0] != (p[0] < p[1]) || out[1][0] != (p[0] >= p[1]) {
			t.Errorf("%d, %d: < %v, ≥ %v", p[0], p[1], out[0][0], out[1][0])
		}
		out, err = c1.Eval(gates.Uint64Bits(p[0], 8), gates.Uint64Bits(p[1], 8))
		require.NoError(t, err)
		if got := gates.BitsUint64(out[0]); got != p[0]+p[1] {
			t.Errorf("first circuit: %d + %d = %d", p[0], p[1], got)
		}
	}
	// An error after a Build fails the next Build, not the circuits made.
	b.Gate(gates.OpAND, ge)
	if _, err := b.Build([]int{ge}); err == nil {
		t.Fatal("Build after a bad Gate gave no error")
	}
	if netlist(t, c1) != text1 {
		t.Fatal("a later error changed the first circuit")
	}
}

// TestBuilderRoundTrip: a built circuit written as Bristol Fashion
// (WriteTo) reads back (Parse) to the same netlist, and evaluates the
// same.
func TestBuilderRoundTrip(t *testing.T) {
	b, sum, lt := addCompare(16)
	c, err := b.Build([]int{lt}, sum, []int{b.Input(1)[3], lt})
	require.NoError(t, err)
	text := netlist(t, c)
	p, err := gates.Parse(strings.NewReader(text))
	if err != nil {
		t.Fatalf("Parse of the built circuit: %v\n%s", err, text)
	}
	if got := netlist(t, p); got != text {
		t.Fatalf("round trip changed the netlist:\n%s\n%s", text, got)
	}
	if p.String() != c.String() || p.Depth() != c.Depth() || p.Bootstraps() != c.Bootstraps() {
		t.Fatalf("round trip: %v, was %v", p, c)
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 50 {
		x, y := gates.Uint64Bits(r.Uint64N(1<<16), 16), gates.Uint64Bits(r.Uint64N(1<<16), 16)
		want, err := c.Eval(x, y)
		require.NoError(t, err)
		got, err := p.Eval(x, y)
		require.NoError(t, err)
		if !slices.EqualFunc(got, want, slices.Equal) {
			t.Fatalf("parsed circuit gives %v, built %v", got, want)
		}
	}
}

// netlist returns c as Bristol Fashion text.
func netlist(t *testing.T, c *gates.Circuit) string {
	t.Helper()
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}
