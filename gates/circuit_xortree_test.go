package gates

import (
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
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
			old := buildPlan(c, m, nil, false, true)
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
		inner := innerXORWires(c, c.gates, nin)
		if inner[shared-nin] {
			t.Fatalf("n %d: wire %d, read by an XOR and an AND, is inner", n, shared)
		}
		for _, g := range c.gates {
			if (g.Op == OpXOR) && g.Out > shared && inner[g.Out-nin] {
				t.Errorf("n %d: wire %d of the tree above the shared sum is inner", n, g.Out)
			}
		}
		for _, m := range []int{2, 3, 9} {
			p, old := buildLinearPlan(c, m, nil), buildPlan(c, m, nil, false, true)
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
	require.NoError(t, err)
	for i, v := range innerXORWires(c, c.gates, 4) {
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
	require.NoError(t, err)
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

// RandomXORTreeCircuit returns a random circuit rich in XOR trees: deep,
// wide, chains and random shapes, XNORs, leaves that are inputs, gate and
// MUX outputs (2 terms), NOTs and copies, constants, gates that read one
// wire twice (copies, NOTs, constants, XORs of two sums), repeated leaves,
// trees whose leaves are sums, and inner wires also read by an AND, a NOT,
// a copy, a later tree or an output; output wires are written anywhere in
// the gates. It is exported for the encrypted tests of gates_test
// (TestXORTreeRandomOracle, TestXORTreeRandomCPU).
func RandomXORTreeCircuit(rng *rand.Rand) *Circuit {
	nin := 2 + rng.IntN(10)
	var gs []Gate
	next := nin
	gate := func(op Op, in ...int) int {
		g := Gate{Op: op, Out: next, In: [3]int{-1, -1, -1}}
		copy(g.In[:], in)
		gs = append(gs, g)
		next++
		return next - 1
	}
	pool := make([]int, nin) // wires to draw leaves from
	for i := range pool {
		pool[i] = i
	}
	var all []int                // every wire a gate writes
	single := slices.Clone(pool) // wires that are one sample (no XOR's)
	pure := false                // the tree being made draws from single
	pick := func() int {
		p := pool
		if pure {
			p = single
		}
		if rng.IntN(3) == 0 && len(p) > 4 {
			return p[len(p)-1-rng.IntN(4)] // recent ones: repeated leaves
		}
		return p[rng.IntN(len(p))]
	}
	binOps := []Op{OpAND, OpNAND, OpOR, OpNOR, OpANDNY, OpANDYN, OpORNY, OpORYN}
	leaf := func() int {
		switch r := rng.IntN(20); {
		case r < 4:
			return pick()
		case r < 9:
			return gate(binOps[rng.IntN(len(binOps))], pick(), pick())
		case r < 12:
			return gate(OpMUX, pick(), pick(), pick())
		case r < 14:
			return gate(OpNOT, pick())
		case r < 15:
			return gate(OpCopy, pick())
		case r < 16:
			return gate([]Op{OpZero, OpOne}[rng.IntN(2)])
		case r < 17:
			x := pick()
			return gate(binOps[rng.IntN(len(binOps))], x, x) // a copy, a NOT or a constant
		case r < 18:
			x := pick()
			return gate(OpMUX, pick(), x, gate(OpNOT, x)) // an XOR of two sums
		case r < 19:
			return gate(OpAND, pick(), gate(OpOne)) // a copy of a wire
		default:
			if pure {
				return gate(OpAND, pick(), pick())
			}
			return gate(OpXOR, pick(), pick())
		}
	}
	trees := 1 + rng.IntN(6)
	for range trees {
		pure = rng.IntN(3) > 0
		n := 1 + rng.IntN(24)
		if rng.IntN(4) == 0 {
			n += rng.IntN(60)
		}
		ls := make([]int, n)
		for i := range ls {
			ls[i] = leaf()
			if i > 0 && rng.IntN(6) == 0 {
				ls[i] = ls[rng.IntN(i)] // a repeated leaf
			}
		}
		for _, w := range ls {
			if w >= nin {
				pool = append(pool, w)
				if pure && gs[w-nin].Op != OpXOR {
					single = append(single, w)
				}
			}
		}
		chain := rng.IntN(3) == 0
		for len(ls) > 1 {
			i, j := 0, 1
			if !chain {
				i = rng.IntN(len(ls))
				j = rng.IntN(len(ls) - 1)
				if j >= i {
					j++
				}
			}
			op := OpXOR
			if rng.IntN(4) == 0 {
				op = OpXNOR
			}
			w := gate(op, ls[i], ls[j])
			switch rng.IntN(30) {
			case 0:
				gate(OpAND, w, pick()) // an inner wire read twice
			case 1:
				gate(OpNOT, w)
			case 2:
				gate(OpCopy, w)
			case 3:
				pool = append(pool, w) // maybe read by a later tree
			}
			if i > j {
				i, j = j, i
			}
			ls = slices.Delete(ls, j, j+1)
			ls[i] = w
		}
		pool = append(pool, ls[0])
		if rng.IntN(3) == 0 {
			w := gate(OpAND, ls[0], pick())
			pool, single = append(pool, w), append(single, w)
		}
	}
	if next == nin {
		gate(OpAND, pick(), pick())
	}
	for w := nin; w < next; w++ {
		all = append(all, w)
	}
	// Outputs: distinct written wires, the tree roots' more often, some
	// inner wires; they take the last wire numbers, written anywhere.
	nout := 1 + rng.IntN(min(8, len(all)))
	outs := []int{next - 1}
	if w := pool[len(pool)-1]; w >= nin {
		outs[0] = w
	}
	for len(outs) < nout {
		w := all[rng.IntN(len(all))]
		if rng.IntN(2) == 0 {
			w = pool[rng.IntN(len(pool))]
		}
		if w >= nin && !slices.Contains(outs, w) {
			outs = append(outs, w)
		}
	}
	nout = len(outs)
	phys := make([]int, next)
	for i := range nin {
		phys[i] = i
	}
	k := nin
	for w := nin; w < next; w++ {
		if j := slices.Index(outs, w); j >= 0 {
			phys[w] = next - nout + j
		} else {
			phys[w] = k
			k++
		}
	}
	for i := range gs {
		g := &gs[i]
		for a := range g.Op.Arity() {
			g.In[a] = phys[g.In[a]]
		}
		g.Out = phys[g.Out]
	}
	c, err := NewCircuit(BristolFashion, next, []int{nin}, []int{nout}, gs)
	if err != nil {
		panic(err)
	}
	return c
}

// checkTreePlan checks c's plans: shape and plaintext evaluation
// (checkLinearPlan), with and without tiers, the same when built again,
// every gate counted once (free or bootstrapped), and the gate-by-gate
// plan's evaluation too.
func checkTreePlan(t *testing.T, c *Circuit, rng *rand.Rand) {
	t.Helper()
	for _, m := range []int{2, 3, 4, 5, 9, 14, 16} {
		checkLinearPlan(t, c, m, nil, 3, rng)
		checkLinearPlan(t, c, m, []int{1 + rng.IntN(4), 8 + rng.IntN(8)}, 1, rng)
		p := buildLinearPlan(c, m, nil)
		if q := buildLinearPlan(c, m, nil); !reflect.DeepEqual(p, q) {
			t.Fatalf("terms %d: two builds of the plan differ", m)
		}
		n := 0
		for _, l := range p.levels {
			n += l.free
			for _, o := range l.ops {
				if !o.refresh() {
					n++
				}
			}
		}
		if n != len(c.gates) {
			t.Fatalf("terms %d: %d gates counted in the levels, the circuit has %d", m, n, len(c.gates))
		}
		old := buildPlan(c, m, nil, false, true)
		checkPlanShape(t, c, old)
	}
}

// TestXORTreeRandom checks the plans of random circuits rich in XOR trees
// (RandomXORTreeCircuit) at 2 … 16 terms: every refresh within the bound,
// by weight; the plaintext evaluation against Eval; identical when built
// again.
func TestXORTreeRandom(t *testing.T) {
	n := 3000
	if testing.Short() {
		n = 300
	}
	for i := range n {
		rng := rand.New(rand.NewPCG(uint64(i), 77))
		c := RandomXORTreeCircuit(rng)
		checkSchedule(t, c)
		checkTreePlan(t, c, rng)
	}
}

// TestGroupTermsSum: for random terms (samples of weight 1 or 2, a MUX
// output's, repeated samples, sums of several samples), every group that
// groupTerms refreshes weighs at most m, a group of one is a leaf of weight
// 2 or more, and what it returns weighs at most m and sums, its refreshes
// expanded, to the terms' sum. Refreshes of a sum made before are reused,
// as the plan's refreshed map does.
func TestGroupTermsSum(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	n := 200000
	if testing.Short() {
		n = 20000
	}
	const samples = 30
	for iter := range n {
		m := 2 + rng.IntN(8)
		var mux [samples]bool
		var level [samples]int32
		for s := range samples {
			mux[s], level[s] = rng.IntN(4) == 0, int32(rng.IntN(4))
		}
		sums := map[int32][]int32{} // a refresh's samples
		weight := func(terms []int32) int {
			w := len(terms)
			for _, id := range terms {
				if id < samples && mux[id] {
					w++
				}
			}
			return w
		}
		expand := func(items []treeItem) []int32 {
			var all []treeItem
			for _, it := range items {
				for _, id := range it.terms {
					if s, ok := sums[id]; ok {
						all = append(all, treeItem{terms: s})
					} else {
						all = append(all, treeItem{terms: []int32{id}})
					}
				}
			}
			return xorAll(all)
		}
		items := make([]treeItem, 1+rng.IntN(40))
		for i := range items {
			terms := []int32{int32(rng.IntN(samples))}
			if rng.IntN(6) == 0 { // a leaf that is a sum within the bound
				for range 1 + rng.IntN(3) {
					terms = append(terms, int32(rng.IntN(samples)))
				}
				slices.Sort(terms)
				if terms = slices.Compact(terms); weight(terms) > m {
					terms = terms[:1]
				}
			}
			lv := int32(0)
			for _, id := range terms {
				lv = max(lv, level[id])
			}
			items[i] = treeItem{wire: i, terms: terms, level: lv, weight: weight(terms), seq: i}
		}
		want := xorAll(items)
		if weight(want) <= m {
			continue
		}
		next := int32(samples)
		made := map[string]int32{}
		left := groupTerms(slices.Clone(items), m, func(group []treeItem) treeItem {
			s := xorAll(group)
			if w := weight(s); w > m || len(group) == 1 && (group[0].wire < 0 || w < 2) {
				t.Fatalf("iter %d, m %d: a refresh of %v (weight %d)", iter, m, group, w)
			}
			lv := int32(0)
			for _, it := range group {
				lv = max(lv, it.level)
			}
			if weight(s) < 2 {
				return treeItem{wire: -1, terms: s, level: lv, weight: weight(s), seq: 1 << 20}
			}
			e := expand(group)
			id, ok := made[sumKey(e)]
			if !ok {
				id = next
				next++
				made[sumKey(e)], sums[id] = id, e
			}
			return treeItem{wire: -1, terms: []int32{id}, level: lv + 1, weight: 1, seq: int(id)}
		})
		w := 0
		for _, it := range left {
			w += it.weight
		}
		if got := expand(left); w > m || !slices.Equal(got, want) {
			t.Fatalf("iter %d, m %d: %v left, of weight %d, summing to %v; want at most %d, %v", iter, m, left, w, got, m, want)
		}
	}
}
