package gates

import (
	"container/heap"
	"slices"
)

// XOR trees. The linear plan (buildLinearPlan) meets the gates one by one,
// and an XOR whose sum would pass MaxXORTerms refreshes one of its inputs
// then; how a long XOR is associated then decides its refreshes: 256 wires
// XORed as one balanced binary tree took 32 refreshes at 14 terms, where
// ⌈(256−1)/(14−1)⌉ = 20 (the output's included) are enough. So the plan
// takes a tree of XOR and XNOR gates whose inner wires are each read once,
// by the next XOR of the tree, and are no outputs, as one sum of its
// leaves (the wires it reads that are not inner wires) and a constant, and
// refreshes that sum's terms as a whole when it is made (xorTreePlanner).
//
// A leaf is a wire's sum: one sample (an input, a gate's output, a
// refresh) or a sum of several, of a wire that several gates read or a
// gate other than an XOR. Refreshing a leaf of several terms alone makes
// that wire one sample for every reader, as an XOR's refresh of its input
// does; refreshing several leaves together makes a sample of their sum
// that only this tree reads.

// innerXORWires returns, for each wire past the inputs (index w − nin) of
// c evaluated as gates (c's, or fuseMajorities'),
// whether it is an inner wire of an XOR tree that the plan sums as a
// whole: written by an XOR or XNOR, read exactly once, by an XOR or XNOR,
// no output, and in a tree whose leaves are all single samples
// (singleSample). A tree with a leaf that is a sum of several wires' XOR
// is planned gate by gate, as before trees were: its sum leaf's refresh
// is shared with the leaf's other readers, and summing such trees whole
// gave AES-128, SHA-256 and the multipliers up to 5% more bootstraps. Its
// memory is in the gates.
func innerXORWires(c *Circuit, gates []Gate, nin int) []bool {
	past := c.nwires - nin
	isXOR := func(op Op) bool { return op == OpXOR || op == OpXNOR }
	// reads[i]: 0 unread, 1 read once by an XOR, 2 otherwise.
	reads := make([]uint8, past)
	// single[i]: the wire is one sample, or its complement, or a
	// constant: an input, a bootstrapped gate's output (a MUX's
	// included), a constant, or a NOT or COPY of one. (A gate that
	// reads one sum twice may be a copy of it after all, for which the
	// tree's sum is merely not the fewest refreshes.)
	single := make([]bool, past)
	isSingle := func(w int) bool { return w < nin || single[w-nin] }
	writer := make([]int32, past) // the gate that writes the wire
	for gi, g := range gates {
		for k := range g.Op.Arity() {
			if i := g.In[k] - nin; i >= 0 {
				if reads[i] == 0 && isXOR(g.Op) {
					reads[i] = 1
				} else {
					reads[i] = 2
				}
			}
		}
		i := g.Out - nin
		writer[i] = int32(gi)
		switch g.Op {
		case OpXOR, OpXNOR:
		case OpNOT, OpCopy:
			single[i] = isSingle(g.In[0])
		default:
			single[i] = true
		}
	}
	inner := make([]bool, past)
	firstOutput := c.nwires - c.numOutputBits()
	for _, g := range gates {
		if i := g.Out - nin; isXOR(g.Op) && g.Out < firstOutput && reads[i] == 1 {
			inner[i] = true
		}
	}
	// Each tree from its root (an XOR whose output is not inner): its
	// inner wires stay inner only if its leaves are single samples.
	var stack, members []int
	for _, g := range gates {
		if !isXOR(g.Op) || inner[g.Out-nin] {
			continue
		}
		stack, members = append(stack[:0], g.In[0], g.In[1]), members[:0]
		ok := true
		for len(stack) > 0 {
			w := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			switch {
			case w >= nin && inner[w-nin]:
				members = append(members, w-nin)
				h := &gates[writer[w-nin]]
				stack = append(stack, h.In[0], h.In[1])
			case !isSingle(w):
				ok = false
			}
		}
		if !ok {
			for _, i := range members {
				inner[i] = false
			}
		}
	}
	return inner
}

// xorTree is a tree of XOR gates met so far whose root is an inner wire:
// its leaves' wires and their sums when the tree read them, the parity of
// its leaves' complements and XNORs, and its gates.
type xorTree struct {
	leaves []treeItem
	neg    bool
	gates  int
}

// treeItem is a term of a tree's sum: a leaf (wire ≥ 0) or a refresh the
// tree made (wire −1), its samples, the level at which they are all
// written and its weight (a MUX output counts two).
type treeItem struct {
	wire   int
	terms  []int32
	level  int32
	weight int
	seq    int // order of arrival: ties of level are taken in it
}

// merge adds u's leaves to t and returns the tree of both.
func (t *xorTree) merge(u *xorTree) *xorTree {
	if len(u.leaves) > len(t.leaves) {
		t, u = u, t
	}
	t.leaves = append(t.leaves, u.leaves...)
	t.neg = t.neg != u.neg
	t.gates += u.gates
	return t
}

// xorAll returns the sorted symmetric difference of the sorted sums of
// items.
func xorAll(items []treeItem) []int32 {
	n := 0
	for _, it := range items {
		n += len(it.terms)
	}
	all := make([]int32, 0, n)
	for _, it := range items {
		all = append(all, it.terms...)
	}
	slices.Sort(all)
	out := all[:0]
	for i := 0; i < len(all); {
		j := i + 1
		for j < len(all) && all[j] == all[i] {
			j++
		}
		if (j-i)%2 == 1 {
			out = append(out, all[i])
		}
		i = j
	}
	return out
}

// itemHeap orders a tree's terms by level, then arrival.
type itemHeap []treeItem

func (h itemHeap) Len() int { return len(h) }
func (h itemHeap) Less(i, j int) bool {
	return h[i].level < h[j].level || h[i].level == h[j].level && h[i].seq < h[j].seq
}
func (h itemHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *itemHeap) Push(x any)   { *h = append(*h, x.(treeItem)) }
func (h *itemHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// groupTerms brings the terms items (leaves, each of its own weight: a
// MUX output's is 2) down to a weight of at most m (≥ 2) and returns what
// is left of them: while their weight passes m it refreshes the earliest
// terms together, as many as fit m, the first group only as large as
// needed for every later one to be full, as the first merge of an m-ary
// Huffman code is. refresh refreshes a group and returns the term that
// replaces it. With terms of weight 1 this takes the fewest refreshes,
// ⌈(w−m)/(m−1)⌉ for a weight w, and readies the sum at the earliest level
// that any number of refreshes can (merging the m earliest first is
// optimal for the level of the last merge, as merging the m lightest is
// for a Huffman code's weighted length; TestGroupTermsOptimal). Two terms
// of one sample cancel, wherever they come from (two leaves of one gate
// output, a leaf and a refresh that an earlier one already made).
func groupTerms(items []treeItem, m int, refresh func(group []treeItem) treeItem) []treeItem {
	// live and dead count the heap's terms of one sample by sample: dead
	// ones cancelled out and are skipped when popped. A term of several
	// samples (a leaf that is a sum) is not counted.
	live, dead := map[int32]int{}, map[int32]int{}
	h := &itemHeap{}
	total := 0
	push := func(it treeItem) {
		heap.Push(h, it)
		total += it.weight
		if len(it.terms) != 1 {
			return
		}
		if s := it.terms[0]; live[s] > 0 {
			live[s]--
			dead[s] += 2
			total -= 2 * it.weight
		} else {
			live[s]++
		}
	}
	pop := func() (treeItem, bool) {
		for h.Len() > 0 {
			it := heap.Pop(h).(treeItem)
			if len(it.terms) == 1 {
				if s := it.terms[0]; dead[s] > 0 {
					dead[s]--
					continue
				} else {
					live[s]--
				}
			}
			total -= it.weight
			return it, true
		}
		return treeItem{}, false
	}
	for _, it := range items {
		if len(it.terms) > 0 {
			push(it)
		}
	}
	for total > m {
		d := total - m
		k := (d + m - 2) / (m - 1)
		cap := d - (k-1)*(m-1) + 1 // 2 … m
		var group []treeItem
		gw := 0
		for {
			it, ok := pop()
			if !ok {
				break
			}
			if gw+it.weight > cap {
				if gw >= 2 {
					push(it)
					break
				}
				if gw+it.weight <= m {
					cap = m
				} else if gw > 0 {
					// A term of weight 1 and one of m: the latter alone.
					push(group[0])
					group, gw = group[:0], 0
				}
			}
			group = append(group, it)
			gw += it.weight
			if gw >= cap {
				break
			}
		}
		push(refresh(group))
	}
	// The live terms only: a term that cancelled out may still be in the
	// heap, its partner popped (skipped) before it, which would count it
	// once in the sum.
	var left []treeItem
	for {
		it, ok := pop()
		if !ok {
			return left
		}
		left = append(left, it)
	}
}
