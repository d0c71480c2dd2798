package gates

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestFuseMajorities: a garbled-circuit full adder's carry, ((a ⊕ c) ∧
// (b ⊕ c)) ⊕ c, becomes MAJ(a, b, c) in the linear plan, in any order of
// the gates' inputs; where the AND's output has another reader or is an
// output, x or y has a reader that needs it as one sample, x is y, the
// final gate is not an XOR with c, a, b and c are all sums, or x or y is
// a carry fused already (whose AND is the constant 0 then), nothing is
// fused. Each plan evaluates to the netlist's outputs and costs no more
// bootstraps than the netlist gate by gate.
func TestFuseMajorities(t *testing.T) {
	g := func(op Op, out int, in ...int) Gate {
		x := Gate{Op: op, Out: out, In: [3]int{-1, -1, -1}}
		copy(x.In[:], in)
		return x
	}
	// Inputs 0–4: a, b, c and two more. Gates from wire 5; the outputs are
	// the last wires, copies.
	for _, tc := range []struct {
		name  string
		gates []Gate
		fused int
		boots int // the fused plan's bootstraps at 4 terms
	}{
		{"full adder", []Gate{g(OpXOR, 5, 0, 2), g(OpXOR, 6, 1, 2), g(OpAND, 7, 5, 6), g(OpXOR, 8, 7, 2), g(OpCopy, 9, 8)}, 1, 1},
		{"inputs in other orders", []Gate{g(OpXOR, 5, 2, 0), g(OpXOR, 6, 1, 2), g(OpAND, 7, 6, 5), g(OpXOR, 8, 2, 7), g(OpCopy, 9, 8)}, 1, 1},
		{"c first in x and y", []Gate{g(OpXOR, 5, 2, 0), g(OpXOR, 6, 2, 1), g(OpAND, 7, 5, 6), g(OpXOR, 8, 7, 2), g(OpCopy, 9, 8)}, 1, 1},
		{"c first in x, second in y", []Gate{g(OpXOR, 5, 2, 0), g(OpXOR, 6, 1, 2), g(OpAND, 7, 5, 6), g(OpXOR, 8, 7, 2), g(OpCopy, 9, 8)}, 1, 1},
		{"c first in x and y, a and b read by others", []Gate{g(OpXOR, 5, 2, 0), g(OpXOR, 6, 2, 1), g(OpAND, 7, 5, 6), g(OpXOR, 8, 7, 2), g(OpAND, 9, 0, 3), g(OpOR, 10, 1, 4), g(OpCopy, 11, 8), g(OpCopy, 12, 9), g(OpCopy, 13, 10)}, 1, 3},
		// The carry of one adder, g′ ⊕ c, as x of the next: g′ is the
		// constant 0 once the first carry is fused, so the second may not
		// read it as a MAJ's input.
		{"a carry as x of the next carry", []Gate{g(OpXOR, 5, 0, 2), g(OpXOR, 6, 1, 2), g(OpAND, 7, 5, 6), g(OpXOR, 8, 7, 2), g(OpXOR, 9, 3, 2), g(OpAND, 10, 8, 9), g(OpXOR, 11, 10, 2), g(OpCopy, 12, 11)}, 1, 4},
		{"a carry as y of the next carry", []Gate{g(OpXOR, 5, 0, 2), g(OpXOR, 6, 1, 2), g(OpAND, 7, 5, 6), g(OpXOR, 8, 2, 7), g(OpXOR, 9, 2, 3), g(OpAND, 10, 9, 8), g(OpXOR, 11, 2, 10), g(OpCopy, 12, 11)}, 1, 4},
		{"with its sum bit", []Gate{g(OpXOR, 5, 0, 2), g(OpXOR, 6, 1, 2), g(OpAND, 7, 5, 6), g(OpXOR, 8, 7, 2), g(OpXOR, 9, 5, 1), g(OpCopy, 10, 8), g(OpCopy, 11, 9)}, 1, 2},
		{"the AND read twice", []Gate{g(OpXOR, 5, 0, 2), g(OpXOR, 6, 1, 2), g(OpAND, 7, 5, 6), g(OpXOR, 8, 7, 2), g(OpCopy, 9, 8), g(OpCopy, 10, 7)}, 0, 4},
		{"the AND read before its carry", []Gate{g(OpXOR, 5, 0, 2), g(OpXOR, 6, 1, 2), g(OpAND, 7, 5, 6), g(OpAND, 8, 7, 3), g(OpXOR, 9, 7, 2), g(OpCopy, 10, 9), g(OpCopy, 11, 8)}, 0, 5},
		{"the AND read twice by its carry", []Gate{g(OpXOR, 5, 0, 2), g(OpXOR, 6, 1, 2), g(OpAND, 7, 5, 6), g(OpXOR, 8, 7, 7), g(OpXOR, 9, 8, 2), g(OpCopy, 10, 9)}, 0, 3},
		{"x read by an AND", []Gate{g(OpXOR, 5, 0, 2), g(OpXOR, 6, 1, 2), g(OpAND, 7, 5, 6), g(OpXOR, 8, 7, 2), g(OpAND, 9, 5, 3), g(OpCopy, 10, 8), g(OpCopy, 11, 9)}, 0, 5},
		{"x read by a NOT", []Gate{g(OpXOR, 5, 0, 2), g(OpXOR, 6, 1, 2), g(OpAND, 7, 5, 6), g(OpXOR, 8, 7, 2), g(OpNOT, 9, 5), g(OpCopy, 10, 8), g(OpCopy, 11, 9)}, 0, 4},
		// (x ∧ x) ⊕ c is a: free.
		{"x is y", []Gate{g(OpXOR, 5, 0, 2), g(OpAND, 6, 5, 5), g(OpXOR, 7, 6, 2), g(OpCopy, 8, 7)}, 0, 0},
		{"x and y of the same inputs", []Gate{g(OpXOR, 5, 0, 2), g(OpXOR, 6, 2, 0), g(OpAND, 7, 5, 6), g(OpXOR, 8, 7, 2), g(OpCopy, 9, 8)}, 0, 0},
		{"XNOR at the end", []Gate{g(OpXOR, 5, 0, 2), g(OpXOR, 6, 1, 2), g(OpAND, 7, 5, 6), g(OpXNOR, 8, 7, 2), g(OpCopy, 9, 8)}, 0, 4},
		{"XOR with another wire at the end", []Gate{g(OpXOR, 5, 0, 2), g(OpXOR, 6, 1, 2), g(OpAND, 7, 5, 6), g(OpXOR, 8, 7, 3), g(OpCopy, 9, 8)}, 0, 4},
		{"XNOR in x", []Gate{g(OpXNOR, 5, 0, 2), g(OpXOR, 6, 1, 2), g(OpAND, 7, 5, 6), g(OpXOR, 8, 7, 2), g(OpCopy, 9, 8)}, 0, 4},
		// c and a sums: MAJ with two refreshes (3), no worse than the AND's 4.
		{"two sums", []Gate{g(OpXOR, 5, 3, 4), g(OpXOR, 6, 0, 3), g(OpXOR, 7, 6, 5), g(OpXOR, 8, 1, 5), g(OpAND, 9, 7, 8), g(OpXOR, 10, 9, 5), g(OpCopy, 11, 10)}, 1, 3},
		// a and c MUX outputs (c through a NOT): a MAJ would read them as
		// they are, noisier than the refreshes the AND reads.
		{"MUX outputs", []Gate{g(OpMUX, 5, 3, 0, 4), g(OpMUX, 6, 4, 2, 3), g(OpNOT, 7, 6), g(OpXOR, 8, 5, 7), g(OpXOR, 9, 1, 7), g(OpAND, 10, 8, 9), g(OpXOR, 11, 10, 7), g(OpCopy, 12, 11)}, 0, 8},
		// a, b and c sums: left as it is.
		{"three sums", []Gate{g(OpXOR, 5, 3, 4), g(OpXOR, 6, 0, 3), g(OpXOR, 7, 1, 4), g(OpNOT, 8, 6), g(OpXOR, 9, 8, 5), g(OpXOR, 10, 7, 5), g(OpAND, 11, 9, 10), g(OpXOR, 12, 11, 5), g(OpCopy, 13, 12)}, 0, 4},
	} {
		// Outputs: the trailing COPY gates.
		nout := 0
		for i := len(tc.gates) - 1; i >= 0 && tc.gates[i].Op == OpCopy; i-- {
			nout++
		}
		nw := 5 + len(tc.gates)
		c, err := NewCircuit(BristolFashion, nw, []int{5}, []int{nout}, tc.gates)
		require.NoErrorf(t, err, "%s", tc.name)
		gates, fused := fuseMajorities(c)
		majs := 0
		for i, x := range gates {
			if x.Op == OpMAJ {
				majs++
				if z := c.gates[i]; z.Op != OpXOR || x.Out != z.Out {
					t.Errorf("%s: gate %d %v became %v", tc.name, i, z, x)
				}
			}
		}
		if fused != tc.fused || majs != fused {
			t.Errorf("%s: %d carries fused, want %d", tc.name, fused, tc.fused)
		}
		for terms := 2; terms <= 5; terms++ {
			checkLinearPlan(t, c, terms, nil, 8, rand.New(rand.NewPCG(1, uint64(terms))))
			if p, old := buildPlan(c, terms, nil, true, true), buildPlan(c, terms, nil, true, false); p.bootstraps > old.bootstraps {
				t.Errorf("%s, %d terms: %d bootstraps fused, %d as the netlist has it", tc.name, terms, p.bootstraps, old.bootstraps)
			}
		}
		if p := buildLinearPlan(c, 4, nil); p.bootstraps != tc.boots {
			t.Errorf("%s: %d bootstraps, want %d", tc.name, p.bootstraps, tc.boots)
		}
		for terms := 2; terms <= 9; terms++ {
			if p := buildLinearPlan(c, terms, nil); p.noise.majMux != 0 {
				t.Errorf("%s, %d terms: a MAJ reads %d MUX outputs", tc.name, terms, p.noise.majMux)
			}
		}
	}

	// The AND's output among the circuit's outputs (wire 7 of outputs 6
	// and 7; the final XOR writes 6, reading 7).
	c, err := NewCircuit(BristolFashion, 8, []int{3}, []int{2}, []Gate{
		g(OpXOR, 3, 0, 2), g(OpXOR, 4, 1, 2), g(OpAND, 7, 3, 4), g(OpXOR, 6, 7, 2), g(OpXOR, 5, 3, 1),
	})
	require.NoError(t, err)
	if _, fused := fuseMajorities(c); fused != 0 {
		t.Error("an AND whose output is a circuit output fused")
	}
	checkLinearPlan(t, c, 3, nil, 8, rand.New(rand.NewPCG(2, 3)))
}

// adderRichCircuit is randomCircuitOf with full adders in the netlist
// form fuseMajorities finds (their carries, sum bits and inner wires read
// by later gates too, which keeps some from fusing), their XOR gates'
// inputs in either order, some reading an earlier carry g′ ⊕ c′ as x (with
// c′ as c), and some ANDs read by another gate before their carry.
func adderRichCircuit(rng *rand.Rand, nin, ngates int) *Circuit {
	var gs []Gate
	w := nin
	add := func(op Op, in ...int) int {
		x := Gate{Op: op, Out: w, In: [3]int{-1, -1, -1}}
		copy(x.In[:], in)
		gs = append(gs, x)
		w++
		return w - 1
	}
	pick := func() int { return rng.IntN(w) }
	xor := func(u, v int) int {
		if rng.IntN(2) == 0 {
			u, v = v, u
		}
		return add(OpXOR, u, v)
	}
	ops := append(slices.Clone(randomOps), OpMAJ)
	readers := []Op{OpXOR, OpAND, OpOR, OpNOT, OpMUX, OpMAJ}
	var carries [][2]int // the carries made: the wire of g ⊕ c, and c
	for len(gs) < ngates {
		if rng.IntN(3) == 0 {
			a, b, c := pick(), pick(), pick()
			var x int
			if k := len(carries); k > 0 && rng.IntN(4) == 0 {
				cr := carries[rng.IntN(k)]
				x, c = cr[0], cr[1]
			} else {
				x = xor(a, c)
			}
			y := xor(b, c)
			if rng.IntN(2) == 0 {
				x, y = y, x
			}
			g := add(OpAND, x, y)
			if rng.IntN(8) == 0 {
				op := readers[rng.IntN(len(readers))]
				in := make([]int, op.Arity())
				for k := range in {
					in[k] = pick()
				}
				in[rng.IntN(len(in))] = g
				add(op, in...)
			}
			carries = append(carries, [2]int{xor(g, c), c}) // the carry
			add(OpXOR, x, b)                                // the sum bit
			continue
		}
		op := ops[rng.IntN(len(ops))]
		in := make([]int, op.Arity())
		for k := range in {
			in[k] = pick()
		}
		add(op, in...)
	}
	nout := 1 + rng.IntN(6)
	for range nout {
		add(OpCopy, pick())
	}
	c, err := NewCircuit(BristolFashion, w, []int{nin}, []int{nout}, gs)
	if err != nil {
		panic(err)
	}
	return c
}

// TestFuseMajoritiesRandom: random circuits rich in full adders plan to
// their netlists' outputs with carries fused, at every sum bound, with
// and without tiers, and the plan buildLinearPlan keeps takes no more
// bootstraps than the netlist gate by gate, nor more levels for as many
// (it falls back to that plan where fusing took more, in about 1% of
// these plans).
func TestFuseMajoritiesRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	n := 200
	if testing.Short() {
		n = 50
	}
	fusedAny, worse, plans := 0, 0, 0
	for range n {
		c := adderRichCircuit(rng, 1+rng.IntN(6), 5+rng.IntN(60))
		if _, fused := fuseMajorities(c); fused > 0 {
			fusedAny++
		}
		for terms := 2; terms <= 5; terms++ {
			checkLinearPlan(t, c, terms, nil, 4, rng)
			checkLinearPlan(t, c, terms, []int{1 + rng.IntN(3), 4 + rng.IntN(4)}, 2, rng)
			plans++
			fused, old := buildPlan(c, terms, nil, true, true), buildPlan(c, terms, nil, true, false)
			if fused.bootstraps > old.bootstraps {
				worse++
			}
			if p := buildLinearPlan(c, terms, nil); p.bootstraps > old.bootstraps || p.bootstraps == old.bootstraps && len(p.levels) > len(old.levels) {
				var b bytes.Buffer
				_, _ = c.WriteTo(&b)
				t.Fatalf("terms %d: %d bootstraps in %d levels, the netlist gate by gate %d in %d:\n%s", terms, p.bootstraps, len(p.levels), old.bootstraps, len(old.levels), b.String())
			}
		}
	}
	if fusedAny < n/2 {
		t.Errorf("only %d of %d circuits fused a carry", fusedAny, n)
	}
	t.Logf("%d of %d circuits fused a carry; %d of %d plans took more bootstraps fused, and fell back", fusedAny, n, worse, plans)
}

// TestFuseMajoritiesShipped: the shipped circuits whose netlists add with
// one AND a bit, planned with carries as MAJ, take fewer bootstraps and
// levels than gate by gate (the figures README.md gives, 9 terms).
func TestFuseMajoritiesShipped(t *testing.T) {
	for _, tc := range []struct {
		name                string
		boots, levels       int
		oldBoots, oldLevels int
	}{
		{"adder64", 127, 64, 269, 133},
		{"mult64", 6002, 125, 10331, 199},
		{"sha256", 62049, 3412, 93984, 3755},
	} {
		c, err := ParseFile(filepath.Join("circuits", tc.name+".txt"))
		require.NoError(t, err)
		p, old := buildLinearPlan(c, 9, nil), buildPlan(c, 9, nil, true, false)
		got := fmt.Sprint(p.bootstraps, len(p.levels)-1, old.bootstraps, len(old.levels)-1)
		if want := fmt.Sprint(tc.boots, tc.levels, tc.oldBoots, tc.oldLevels); got != want {
			t.Errorf("%s: bootstraps and levels fused, then not: %s, want %s", tc.name, got, want)
		}
	}
}
