package main

import (
	"github.com/goldfhe/goldfhe/gates"
)

// lookupCircuit returns the circuit of a lookup in t. Its one input value is
// the query key (t.keyBits wires, least significant bit first), its one
// output value the value of the record whose key equals the query, or zero
// when none does (t.valueBits wires, least significant bit first).
//
// The circuit is the server's, made from its plaintext table alone; its
// gates do not depend on the query, so evaluating it under encryption
// tells the server nothing of the key or of the answer.
//
//   - Record r matches when every query bit q_j equals its key bit k_j:
//     q_j XNOR k_j is q_j or NOT q_j, a free gate, since k_j is plaintext,
//     and the match is the AND of those literals, a balanced tree of
//     keyBits−1 ANDs in ⌈log2(keyBits)⌉ levels. The trees pair bits the
//     same way for every record, so records whose keys share a group of
//     bits share that group's AND: one gate per distinct (left, right).
//   - Output bit i is the XOR of the matches of the records whose value
//     has bit i set (at most one record matches, so the XOR is their OR),
//     or the constant 0 when no record has it: one balanced tree of XORs.
//     Under gates.XORLinear these XORs cost no bootstrap but the refreshes
//     the plan inserts where a sum would pass the evaluator's bound on its
//     terms, and one at each output; the planner sums a tree of XORs over
//     gate outputs as a whole, so this shape takes about the fewest
//     (TestLookupRefreshes).
func lookupCircuit(t *table) (*gates.Circuit, error) {
	b := &lookupBuilder{Builder: gates.NewBuilder(t.keyBits), ands: map[[2]int]int{}}
	q := b.Input(0)
	not := make([]int, t.keyBits) // wire of NOT q_j, made when first needed
	for j := range not {
		not[j] = -1
	}
	literal := func(j int, bit bool) int {
		if bit {
			return q[j]
		}
		if not[j] < 0 {
			not[j] = b.Gate(gates.OpNOT, q[j])
		}
		return not[j]
	}
	matches := make([]int, len(t.records))
	lits := make([]int, t.keyBits)
	for r, rec := range t.records {
		for j := range lits {
			lits[j] = literal(j, rec.key>>j&1 == 1)
		}
		matches[r] = b.tree(gates.OpAND, lits)
	}
	out := make([]int, t.valueBits)
	zero := -1 // the constant 0, made when first needed
	var terms []int
	for i := range out {
		terms = terms[:0]
		for r, rec := range t.records {
			if rec.value>>i&1 == 1 {
				terms = append(terms, matches[r])
			}
		}
		if out[i] = b.tree(gates.OpXOR, terms); out[i] < 0 {
			if zero < 0 {
				zero = b.Gate(gates.OpZero)
			}
			out[i] = zero
		}
	}
	// Build copies the output value onto the circuit's last wires.
	return b.Build(out)
}

// lookupBuilder is a gates.Builder that makes an AND of the same two wires
// once.
type lookupBuilder struct {
	*gates.Builder
	ands map[[2]int]int // the wire of AND(a, b) by {a, b}, a < b
}

// tree combines the wires ws with op (AND or XOR) as a balanced binary tree,
// pairing neighbours level by level, and returns its root: ws[0] itself
// for one wire, −1 for none. ANDs of the same two wires are made once.
// ws is overwritten.
func (b *lookupBuilder) tree(op gates.Op, ws []int) int {
	if len(ws) == 0 {
		return -1
	}
	for len(ws) > 1 {
		next := ws[:0]
		for i := 0; i+1 < len(ws); i += 2 {
			next = append(next, b.pair(op, ws[i], ws[i+1]))
		}
		if len(ws)%2 == 1 {
			next = append(next, ws[len(ws)-1])
		}
		ws = next
	}
	return ws[0]
}

// pair returns op(x, y), reusing an AND of the same wires.
func (b *lookupBuilder) pair(op gates.Op, x, y int) int {
	if op != gates.OpAND {
		return b.Gate(op, x, y)
	}
	k := [2]int{min(x, y), max(x, y)}
	if w, ok := b.ands[k]; ok {
		return w
	}
	w := b.Gate(op, x, y)
	b.ands[k] = w
	return w
}
