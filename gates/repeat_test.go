package gates

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/goldfhe/goldfhe/tfhe"
	"github.com/goldfhe/goldfhe/torus"
	"github.com/stretchr/testify/require"
)

// TestReduceRepeats: for every gate that bootstraps and every way its
// inputs can repeat a sample (with either sign) or be constants, the
// reduced gate has the same truth table, reads no sample twice, and costs
// no more bootstraps; a two-input gate on one sample costs none.
func TestReduceRepeats(t *testing.T) {
	for _, op := range []Op{OpAND, OpNAND, OpOR, OpNOR, OpXOR, OpXNOR, OpANDNY, OpANDYN, OpORNY, OpORYN, OpMUX, OpMAJ} {
		ar := op.Arity()
		// Every assignment of samples 0..2 or a constant (−1) to the
		// inputs, and every sign (a constant's value).
		for code := range pow4(ar) {
			var id [3]int
			for k := range ar {
				id[k] = code/pow4(k)%4 - 1
			}
			for signs := range 1 << ar {
				var neg [3]bool
				for k := range ar {
					neg[k] = signs>>k&1 == 1
				}
				var constant [3]bool
				for k := range ar {
					constant[k] = id[k] < 0
				}
				r, ok := reduceRepeats(op, id, constant, neg)
				distinct := map[int]int{} // sample → its number in order of appearance
				constants := false
				for k := range ar {
					if id[k] < 0 {
						constants = true
					} else if _, seen := distinct[id[k]]; !seen {
						distinct[id[k]] = len(distinct)
					}
				}
				if ok != (len(distinct) < ar) {
					t.Fatalf("%v on %v: reduced %v, with %d distinct samples of %d inputs (constants %v)", op, id[:ar], ok, len(distinct), ar, constants)
				}
				if !ok {
					continue
				}
				for k := range r.op.Arity() {
					if r.src[k] >= ar || id[r.src[k]] < 0 || k == 1 && id[r.src[0]] == id[r.src[1]] {
						t.Fatalf("%v on %v: reduced to %v reading inputs %v", op, id[:ar], r.op, r.src)
					}
				}
				if r.op.Bootstraps() > op.Bootstraps() || ar == 2 && !r.op.Free() {
					t.Fatalf("%v on %v: reduced to %v, no cheaper", op, id[:ar], r.op)
				}
				for v := range 1 << len(distinct) {
					bit := func(j int) bool { return v>>j&1 == 1 }
					var in [3]bool
					for k := range ar {
						in[k] = neg[k]
						if id[k] >= 0 {
							in[k] = bit(distinct[id[k]]) != neg[k]
						}
					}
					sample := func(j int) bool { // the sample at input r.src[j], not complemented
						if j >= r.op.Arity() {
							return false
						}
						return bit(distinct[id[r.src[j]]])
					}
					if got, want := r.op.Eval(sample(0), sample(1), false), op.Eval(in[0], in[1], in[2]); got != want {
						t.Fatalf("%v on %v, signs %v: reduced to %v%v, which gives %v where the gate gives %v",
							op, id[:ar], neg[:ar], r.op, r.src, got, want)
					}
				}
			}
		}
	}
}

func pow4(n int) int { return 1 << (2 * n) }

// TestRepeatsCostNothing: circuits whose gates read one sample twice — a
// wire with itself, with its copy, one refresh of two equal sums, a MUX's
// selector as its data — are planned with no bootstrap reading a sample
// twice, in both XOR modes, and the plans give the netlist's outputs.
func TestRepeatsCostNothing(t *testing.T) {
	for _, tc := range []struct {
		name, src   string
		bootstraps  int // XORBootstrapped
		linearBoots int // XORLinear, 2 terms
	}{
		{"AND of a wire with itself", "2 4\n2 1 1\n1 1\n\n2 1 0 1 2 AND\n2 1 2 2 3 AND\n", 1, 1},
		{"AND of a wire and its copy", "3 5\n2 1 1\n1 1\n\n2 1 0 1 2 AND\n1 1 2 3 EQW\n2 1 2 3 4 AND\n", 1, 1},
		{"NAND of a wire and its copy", "3 5\n2 1 1\n1 1\n\n2 1 0 1 2 AND\n1 1 2 3 EQW\n2 1 2 3 4 NAND\n", 1, 1},
		{"AND of a wire and its complement", "3 5\n2 1 1\n1 1\n\n2 1 0 1 2 AND\n1 1 2 3 INV\n2 1 2 3 4 AND\n", 1, 1},
		{"XOR of a wire with itself", "1 3\n2 1 1\n1 1\n\n2 1 0 0 2 XOR\n", 0, 0},
		{"AND of two equal XOR sums", "3 5\n2 1 1\n1 1\n\n2 1 0 1 2 XOR\n2 1 1 0 3 XOR\n2 1 2 3 4 AND\n", 1, 1},
		{"MUX with its selector as data", "2 5\n3 1 1 1\n1 1\n\n3 1 0 0 1 3 MUX\n1 1 3 4 EQW\n", 1, 1},
		// MUX(a, b, ¬b) is XNOR(a, b): one bootstrap, or a free sum under
		// XORLinear, which as an output is refreshed once.
		{"MUX of a wire and its complement", "3 5\n2 1 1\n1 1\n\n1 1 1 2 INV\n3 1 0 1 2 3 MUX\n1 1 3 4 EQW\n", 1, 1},
		// Under XORLinear a sum read twice refreshes nothing when the
		// result is free: OR(s, ¬s) is 1, AND(s, s) is s.
		{"OR of a sum and its complement", "4 6\n1 2\n1 1\n\n2 1 0 1 2 XOR\n1 1 2 3 INV\n2 1 2 3 4 OR\n1 1 4 5 EQW\n", 1, 0},
		// (2 terms: the 3-term sum refreshes one of its parts, and the
		// output sum is refreshed; AND(s, s) itself costs nothing.)
		{"AND of a sum with itself, then XOR", "4 7\n1 3\n1 1\n\n2 1 0 1 3 XOR\n2 1 3 3 4 AND\n2 1 4 2 5 XOR\n1 1 5 6 EQW\n", 2, 2},
		// Gates whose engine input is one (engineInputOf): ANDYN(b, a) is
		// ANDNY(a, b), MUX(¬s, c, b) is MUX(s, b, c), so the AND of the two
		// reads one sample: a copy.
		{"ANDNY and ANDYN swapped", "3 5\n2 1 1\n1 1\n\n2 1 0 1 2 ANDNY\n2 1 1 0 3 ANDYN\n2 1 2 3 4 AND\n", 1, 1},
		{"MUX and its mirror", "4 7\n3 1 1 1\n1 1\n\n1 1 0 3 INV\n3 1 0 1 2 4 MUX\n3 1 3 2 1 5 MUX\n2 1 4 5 6 AND\n", 2, 2},
		// A sum refreshed for one gate and read again through a copy made
		// before: one sample, not two (AND(c, s) with c a copy of s).
		{"a refreshed sum and its earlier copy", "4 7\n3 1 1 1\n1 2\n\n2 1 1 2 3 XOR\n1 1 3 4 EQW\n2 1 0 3 5 AND\n2 1 4 3 6 AND\n", 2, 2},
		// MAJ: one engine input in any order of its terms (a copy), MAJ is
		// self-dual (MAJ(¬a, ¬b, ¬c) is the NOT of MAJ(a, b, c), and their
		// AND the constant 0), MAJ(a, a, b) is a, MAJ(a, b, 1) is OR(a, b).
		{"MAJ with its terms permuted", "3 6\n1 3\n1 1\n\n3 1 0 1 2 3 MAJ\n3 1 2 0 1 4 MAJ\n2 1 3 4 5 AND\n", 1, 1},
		{"MAJ of the complements", "6 9\n1 3\n1 1\n\n1 1 0 3 INV\n1 1 1 4 INV\n1 1 2 5 INV\n3 1 0 1 2 6 MAJ\n3 1 3 4 5 7 MAJ\n2 1 6 7 8 AND\n", 1, 1},
		{"MAJ of a wire twice", "2 4\n1 2\n1 1\n\n3 1 0 0 1 2 MAJ\n2 1 2 1 3 AND\n", 1, 1},
		{"MAJ with a constant", "2 4\n1 2\n1 1\n\n1 1 1 2 EQ\n3 1 0 1 2 3 MAJ\n", 1, 1},
		// Constants fold: AND(z, z) and MUX(a, z, z) are 0, AND(a, 1) is a.
		{"constants", "6 8\n1 2\n1 3\n\n1 1 0 2 EQ\n1 1 1 3 EQ\n2 1 2 2 4 AND\n3 1 0 2 2 5 MUX\n2 1 0 3 7 AND\n1 1 4 6 EQW\n", 0, 0},
	} {
		c, err := Parse(strings.NewReader(tc.src))
		require.NoErrorf(t, err, "%s", tc.name)
		checkSchedule(t, c)
		if c.Bootstraps() != tc.bootstraps {
			t.Errorf("%s: %d bootstraps with every XOR bootstrapped, want %d", tc.name, c.Bootstraps(), tc.bootstraps)
		}
		p, err := c.linearPlan(2, nil)
		require.NoError(t, err)
		if p.bootstraps != tc.linearBoots {
			t.Errorf("%s: %d bootstraps with XOR linear, want %d", tc.name, p.bootstraps, tc.linearBoots)
		}
		checkLinearPlan(t, c, 2, nil, 4, rand.New(rand.NewPCG(7, 8)))
	}
}

// TestEngineInputOf: two gates of one engineInput give the engine the same
// samples to bootstrap (a two-input gate's or MAJ's sum, a MUX's two
// halves in either order), so their outputs are one sample; and gates of different
// engine inputs differ, on random samples. Gates reading a sample twice are
// left out: reduceRepeats takes them out before any key is made.
func TestEngineInputOf(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	const n = 16
	sample := func() *tfhe.TLWE {
		x := tfhe.NewTLWE(n)
		for i := range x.Value {
			x.Value[i] = torus.Torus32(rng.Uint32())
		}
		return x
	}
	base := [3]*tfhe.TLWE{sample(), sample(), sample()}
	signed := func(s int, neg bool) *tfhe.TLWE {
		if !neg {
			return base[s]
		}
		x := tfhe.NewTLWE(n)
		tfhe.NegTLWETo(x, base[s])
		return x
	}
	type gate struct {
		op  Op
		id  [3]int32
		neg [3]bool
	}
	// What the engine bootstraps: the sums, sorted (a MUX's two halves).
	inputs := func(g gate) []string {
		var in [3]*tfhe.TLWE
		for k := range g.op.Arity() {
			in[k] = signed(int(g.id[k]), g.neg[k])
		}
		out := []*tfhe.TLWE{tfhe.NewTLWE(n), tfhe.NewTLWE(n)}
		if g.op == OpMUX {
			linear(out[0], 1, in[0], 1, in[1], nmu8)
			linear(out[1], -1, in[0], 1, in[2], nmu8)
		} else {
			gateInput(out[0], g.op, in, [3]bool{})
			out = out[:1]
		}
		var s []string
		for _, x := range out {
			s = append(s, fmt.Sprint(x.Value))
		}
		slices.Sort(s)
		return s
	}
	var gs []gate
	perms := [][3]int32{{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}}
	for _, op := range []Op{OpAND, OpNAND, OpOR, OpNOR, OpXOR, OpXNOR, OpANDNY, OpANDYN, OpORNY, OpORYN} {
		for _, id := range perms {
			for signs := range 4 {
				gs = append(gs, gate{op, [3]int32{id[0], id[1]}, [3]bool{signs&1 == 1, signs&2 != 0}})
			}
		}
	}
	for _, op := range []Op{OpMUX, OpMAJ} {
		for _, id := range perms {
			for signs := range 8 {
				gs = append(gs, gate{op, id, [3]bool{signs&1 == 1, signs&2 != 0, signs&4 != 0}})
			}
		}
	}
	// negInputs is inputs(g) negated: what the complement gate bootstraps.
	negInputs := func(g gate) []string {
		if g.op == OpMUX {
			return nil
		}
		var in [3]*tfhe.TLWE
		for k := range g.op.Arity() {
			in[k] = signed(int(g.id[k]), g.neg[k])
		}
		out := tfhe.NewTLWE(n)
		gateInput(out, g.op, in, [3]bool{})
		tfhe.NegTLWETo(out, out)
		return []string{fmt.Sprint(out.Value)}
	}
	for i, a := range gs {
		for _, b := range gs[i+1:] {
			ka, kb := engineInputOf(a.op, a.id, a.neg), engineInputOf(b.op, b.id, b.neg)
			if eq := slices.Equal(inputs(a), inputs(b)); (ka == kb) != eq {
				t.Errorf("%v%v%v and %v%v%v: one engine input %v, the same bootstraps %v", a.op, a.id, a.neg, b.op, b.id, b.neg, ka == kb, eq)
			}
			nk, ok := ka.negated()
			if eq := a.op != OpMUX && slices.Equal(negInputs(a), inputs(b)); (ok && nk == kb) != eq {
				t.Errorf("%v%v%v and %v%v%v: negated engine inputs %v, negated bootstraps %v", a.op, a.id, a.neg, b.op, b.id, b.neg, ok && nk == kb, eq)
			}
		}
	}
}

// TestRepeatFailureDocumented pins the figures Op's doc gives for a
// bootstrap of a sample added to itself (TFHELib128 grouped by 3): twice
// the error of a gate output, against the margin and one tail of
// tfhe.NoiseEstimate.Log2GateFailure, beside the gate's own figure.
func TestRepeatFailureDocumented(t *testing.T) {
	p := tfhe.TFHELib128
	e := p.NoiseEstimateGrouped(3)
	sd := math.Sqrt(4*e.BootstrapStdDev*e.BootstrapStdDev + e.ModSwitchVar)
	margin := 1.0/8 - 1/(4*float64(p.PolyDegree()))
	doubled := math.Log2(math.Erfc(margin/(math.Sqrt2*sd)) / 2)
	t.Logf("a sample added to itself: 2^%.2f; a gate: 2^%.2f", doubled, e.Log2GateFailure)
	if math.Round(doubled) != -101 || math.Round(e.Log2GateFailure) != -188 {
		t.Errorf("2^%.2f for a sample added to itself and 2^%.2f for a gate; op.go says 2^−101 and 2^−188", doubled, e.Log2GateFailure)
	}
}
