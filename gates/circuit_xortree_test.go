package gates

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// xorTreeCircuit returns a circuit whose one output is the XOR of n AND
// gates' outputs (of distinct input pairs, all written at level 1) as one
// balanced binary tree, the shape that planning gate by gate refreshed
// worst; with second, the tree's first inner wire is also read by an AND
// and is then no inner wire.
func xorTreeCircuit(n int, second bool) (*Circuit, int) {
	b := NewBuilder(n + 1)
	in := b.Input(0)
	ws := make([]int, n)
	for i := range ws {
		ws[i] = b.Gate(OpAND, in[i], in[i+1])
	}
	shared := -1
	for len(ws) > 1 {
		next := ws[:0]
		for i := 0; i+1 < len(ws); i += 2 {
			w := b.Gate(OpXOR, ws[i], ws[i+1])
			if shared < 0 {
				shared = w
			}
			next = append(next, w)
		}
		if len(ws)%2 == 1 {
			next = append(next, ws[len(ws)-1])
		}
		ws = next
	}
	out := []int{ws[0]}
	if second {
		out = append(out, b.Gate(OpAND, shared, in[0]))
	}
	c, err := b.Build(out)
	if err != nil {
		panic(err)
	}
	return c, shared
}

// TestXORTreeFewest: a balanced XOR tree of n gate outputs is planned as
// one sum, with the fewest refreshes, ⌈(n−1)/(m−1)⌉ with the output's,
// in the fewest levels, the output's refresh at level ⌈log_m n⌉ + 1;
// planned gate by gate it took up to a third more (256 terms at 14: 32).
func TestXORTreeFewest(t *testing.T) {
	for _, n := range []int{2, 3, 5, 16, 17, 50, 128, 256, 1000} {
		c, _ := xorTreeCircuit(n, false)
		for _, m := range []int{2, 3, 5, 6, 9, 14, 16} {
			p := buildLinearPlan(c, m, nil)
			old := buildPlan(c, m, nil, false)
			want := (n - 1 + m - 2) / (m - 1)
			depth := 1
			for pw := m; pw < n; pw *= m {
				depth++
			}
			if p.refreshes != want || len(p.levels) != depth+2 {
				t.Errorf("n %d, m %d: %d refreshes in %d levels, want %d in %d (gate by gate %d in %d)",
					n, m, p.refreshes, len(p.levels), want, depth+2, old.refreshes, len(old.levels))
			}
			if old.refreshes < p.refreshes || len(old.levels) < len(p.levels) {
				t.Errorf("n %d, m %d: %d refreshes in %d levels, gate by gate %d in %d", n, m,
					p.refreshes, len(p.levels), old.refreshes, len(old.levels))
			}
			if n == 256 && m == 14 && old.refreshes != 32 {
				t.Errorf("256 terms at 14, gate by gate: %d refreshes, want 32", old.refreshes)
			}
			checkLinearPlan(t, c, m, nil, 2, rand.New(rand.NewPCG(uint64(n), uint64(m))))
		}
	}
}

// TestXORTreeSecondReader: a tree's wire that something else also reads
// (an AND) is not inner: the subtree below it is a tree of its own, and
// the tree above, which has that sum for a leaf, is planned gate by gate,
// as before trees were.
func TestXORTreeSecondReader(t *testing.T) {
	for _, n := range []int{4, 16, 40} {
		c, shared := xorTreeCircuit(n, true)
		nin := c.numInputBits()
		inner := innerXORWires(c, nin)
		if inner[shared-nin] {
			t.Fatalf("n %d: wire %d, read by an XOR and an AND, is inner", n, shared)
		}
		for _, g := range c.gates {
			if (g.Op == OpXOR) && g.Out > shared && inner[g.Out-nin] {
				t.Errorf("n %d: wire %d of the tree above the shared sum is inner", n, g.Out)
			}
		}
		for _, m := range []int{2, 3, 9} {
			p, old := buildLinearPlan(c, m, nil), buildPlan(c, m, nil, false)
			if p.refreshes > old.refreshes || len(p.levels) > len(old.levels) {
				t.Errorf("n %d, m %d: %d refreshes in %d levels, gate by gate %d in %d", n, m,
					p.refreshes, len(p.levels), old.refreshes, len(old.levels))
			}
			checkLinearPlan(t, c, m, nil, 2, rand.New(rand.NewPCG(uint64(n), uint64(m))))
		}
	}
	// Nor is an XOR's output that an output's copy also reads.
	b := NewBuilder(4)
	in := b.Input(0)
	x := b.Gate(OpXOR, in[0], in[1])
	y := b.Gate(OpXOR, x, in[2])
	c, err := b.Build([]int{x, y})
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range innerXORWires(c, 4) {
		if v {
			t.Errorf("wire %d is inner; the XORs' outputs are read by the output copies", 4+i)
		}
	}
}

// TestGroupTermsOptimal: for terms of weight 1 ready at random levels,
// groupTerms takes the fewest refreshes, ⌈(n−m)/(m−1)⌉, and readies the
// sum at the earliest level any tree of refreshes can: the least T with
// Σ m^(r_i − T) ≤ m (Kraft's inequality for an m-ary tree whose leaf i is
// at most T − r_i refreshes below a root of m terms).
func TestGroupTermsOptimal(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 3000 {
		m := 2 + rng.IntN(8)
		n := 1 + rng.IntN(60)
		items := make([]treeItem, n)
		for i := range items {
			items[i] = treeItem{wire: -1, terms: []int32{int32(i)}, level: int32(rng.IntN(5)), weight: 1, seq: i}
		}
		levels := make([]int32, n)
		for i := range items {
			levels[i] = items[i].level
		}
		next, refreshes := int32(n), 0
		left := groupTerms(slices.Clone(items), m, func(group []treeItem) treeItem {
			refreshes++
			lv := int32(0)
			for _, it := range group {
				lv = max(lv, it.level)
			}
			if len(group) < 2 || len(group) > m {
				t.Fatalf("a group of %d terms, m %d", len(group), m)
			}
			next++
			return treeItem{wire: -1, terms: []int32{next}, level: lv + 1, weight: 1, seq: int(next)}
		})
		want := 0
		if n > m {
			want = (n - m + m - 2) / (m - 1)
		}
		ready := int32(0)
		for _, it := range left {
			ready = max(ready, it.level)
		}
		best := slices.Max(levels)
		for {
			s := 0.0
			for _, r := range levels {
				s += math.Pow(float64(m), float64(r-best))
			}
			if s <= float64(m)+1e-9 {
				break
			}
			best++
		}
		if len(left) > m || refreshes != want || ready != best {
			t.Fatalf("m %d, levels %v: %d terms left, %d refreshes, ready at %d; want at most %d, %d, %d",
				m, levels, len(left), refreshes, ready, m, want, best)
		}
	}
}

// TestXORTreeRepeatedLeaf: a tree whose leaves hold one sample twice, a
// ⊕ b ⊕ c ⊕ a ⊕ d ⊕ e, all ready at one level. The two a cancel; at 3
// terms groupTerms popped the first a (skipped as cancelled) and refreshed
// b ⊕ c, and returned the heap with the second a still in it, which the
// tree's sum then counted once: a ⊕ d ⊕ e ⊕ r, the wrong bit and 4 terms.
func TestXORTreeRepeatedLeaf(t *testing.T) {
	b := NewBuilder(12)
	in := b.Input(0)
	and := func(i int) int { return b.Gate(OpAND, in[2*i], in[2*i+1]) }
	a, bb, c, d, e := and(0), and(1), and(2), and(3), and(4)
	s := a
	for _, w := range []int{bb, c, a, d, e} {
		s = b.Gate(OpXOR, s, w)
	}
	circ, err := b.Build([]int{s})
	if err != nil {
		t.Fatal(err)
	}
	for m := 2; m <= 6; m++ {
		checkLinearPlan(t, circ, m, nil, 8, rand.New(rand.NewPCG(1, uint64(m))))
	}
	// The same at the level of groupTerms: what it returns sums to the
	// items' sum.
	items := make([]treeItem, 6)
	for i, s := range []int32{0, 1, 2, 0, 3, 4} {
		items[i] = treeItem{wire: -1, terms: []int32{s}, level: 1, weight: 1, seq: i}
	}
	next := int32(100)
	sums := map[int32][]int32{}
	left := groupTerms(items, 3, func(group []treeItem) treeItem {
		next++
		sums[next] = xorAll(group)
		return treeItem{wire: -1, terms: []int32{next}, level: 2, weight: 1, seq: int(next)}
	})
	var got []int32
	for _, it := range left {
		for _, id := range it.terms {
			if s, ok := sums[id]; ok {
				got = append(got, s...)
			} else {
				got = append(got, id)
			}
		}
	}
	slices.Sort(got)
	if len(left) > 3 || !slices.Equal(got, []int32{1, 2, 3, 4}) {
		t.Errorf("groupTerms of a b c a d e at 3 terms: %d terms left, of samples %v; want at most 3, of b c d e", len(left), got)
	}
}
