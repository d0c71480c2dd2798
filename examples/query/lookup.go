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
//     or the constant 0 when no record has it. Under gates.XORLinear these
//     XORs cost no bootstrap but the refreshes that the plan inserts where
//     a sum would pass maxTerms terms, and one at each output. The planner
//     sums a tree of XORs as a whole, so grouped by maxTerms (xorSum) or as
//     one balanced tree (maxTerms 0) they take about the fewest
//     (TestLookupRefreshes); planned gate by gate, balanced trees took up to
//     30% more with a key grouped by 3.
func lookupCircuit(t *table, maxTerms int) (*gates.Circuit, error) {
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
		if out[i] = b.xorSum(terms, maxTerms); out[i] < 0 {
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

// xorSum returns the XOR of the wires ws (−1 for none) as a tree whose
// nodes XOR at most maxTerms children, each a balanced tree. XORLinear
// refreshes a sum where it would pass maxTerms terms, as it meets the
// gates; in this shape it refreshes about the fewest sums,
// ⌈(len(ws)−1)/(maxTerms−1)⌉ with the output's, in about
// log(len(ws))/log(maxTerms) levels. maxTerms < 2 gives one balanced
// tree, which the planner, summing an XOR tree as a whole, now refreshes
// as few times; planned gate by gate it took up to a third more
// (TestLookupRefreshes). ws is overwritten.
func (b *lookupBuilder) xorSum(ws []int, maxTerms int) int {
	if maxTerms < 2 || len(ws) <= maxTerms {
		return b.tree(gates.OpXOR, ws)
	}
	var sums []int
	for len(ws) > 0 {
		k := min(maxTerms, len(ws))
		sums = append(sums, b.tree(gates.OpXOR, ws[:k]))
		ws = ws[k:]
	}
	return b.xorSum(sums, maxTerms)
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
