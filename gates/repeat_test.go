package gates

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestReduceRepeats: for every gate that bootstraps and every way its
// inputs can repeat a sample (with either sign), the reduced gate has the
// same truth table, reads no sample twice, and costs no more bootstraps;
// a two-input gate on one sample costs none.
func TestReduceRepeats(t *testing.T) {
	for _, op := range []Op{OpAND, OpNAND, OpOR, OpNOR, OpXOR, OpXNOR, OpANDNY, OpANDYN, OpORNY, OpORYN, OpMUX} {
		ar := op.Arity()
		// Every assignment of samples 0..ar−1 to the inputs, up to renaming,
		// and every sign.
		for code := range 27 {
			id := [3]int{code % 3, code / 3 % 3, code / 9}
			for k := ar; k < 3; k++ {
				id[k] = 0
			}
			if code >= pow3(ar) {
				break
			}
			for signs := range 1 << ar {
				var neg [3]bool
				for k := range ar {
					neg[k] = signs>>k&1 == 1
				}
				r, ok := reduceRepeats(op, id, neg)
				distinct := map[int]int{} // sample → its number in order of appearance
				for k := range ar {
					if _, seen := distinct[id[k]]; !seen {
						distinct[id[k]] = len(distinct)
					}
				}
				if ok != (len(distinct) < ar) {
					t.Fatalf("%v on samples %v: reduced %v, but %d of %d inputs are distinct", op, id[:ar], ok, len(distinct), ar)
				}
				if !ok {
					continue
				}
				if r.op.Arity() > len(distinct) || r.op.Arity() == 2 && r.src[0] == r.src[1] {
					t.Fatalf("%v on samples %v: reduced to %v reading %v", op, id[:ar], r.op, r.src)
				}
				if r.op.Bootstraps() > op.Bootstraps() || ar == 2 && !r.op.Free() {
					t.Fatalf("%v on samples %v: reduced to %v, no cheaper", op, id[:ar], r.op)
				}
				for v := range 1 << len(distinct) {
					bit := func(j int) bool { return v>>j&1 == 1 }
					var in [3]bool
					for k := range ar {
						in[k] = bit(distinct[id[k]]) != neg[k]
					}
					if got, want := r.op.Eval(bit(r.src[0]), bit(r.src[1]), false), op.Eval(in[0], in[1], in[2]); got != want {
						t.Fatalf("%v on samples %v, signs %v: reduced to %v%v, which gives %v where the gate gives %v",
							op, id[:ar], neg[:ar], r.op, r.src, got, want)
					}
				}
			}
		}
	}
}

func pow3(n int) int {
	p := 1
	for range n {
		p *= 3
	}
	return p
}

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
		{"AND of two equal XOR sums", "3 5\n2 1 1\n1 1\n\n2 1 0 1 2 XOR\n2 1 1 0 3 XOR\n2 1 2 3 4 AND\n", 3, 1},
		{"MUX with its selector as data", "2 5\n3 1 1 1\n1 1\n\n3 1 0 0 1 3 MUX\n1 1 3 4 EQW\n", 1, 1},
		// MUX(a, b, ¬b) is XNOR(a, b): one bootstrap, or a free sum under
		// XORLinear, which as an output is refreshed once.
		{"MUX of a wire and its complement", "3 5\n2 1 1\n1 1\n\n1 1 1 2 INV\n3 1 0 1 2 3 MUX\n1 1 3 4 EQW\n", 1, 1},
	} {
		c, err := Parse(strings.NewReader(tc.src))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		checkSchedule(t, c)
		if c.Bootstraps() != tc.bootstraps {
			t.Errorf("%s: %d bootstraps with every XOR bootstrapped, want %d", tc.name, c.Bootstraps(), tc.bootstraps)
		}
		p, err := c.linearPlan(2, nil)
		if err != nil {
			t.Fatal(err)
		}
		if p.bootstraps != tc.linearBoots {
			t.Errorf("%s: %d bootstraps with XOR linear, want %d", tc.name, p.bootstraps, tc.linearBoots)
		}
		checkLinearPlan(t, c, 2, nil, 4, rand.New(rand.NewPCG(7, 8)))
	}
}
