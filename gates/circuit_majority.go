package gates

// Full adders as majority gates. Netlists made for garbled circuits, where
// XOR is free and AND is not, compute a full adder's carry with one AND:
// carry' = ((a ⊕ c) ∧ (b ⊕ c)) ⊕ c, which is MAJ(a, b, c) (c = 0 leaves
// a ∧ b, c = 1 leaves a ∨ b). SHA-256's and the multipliers' shipped
// netlists are made of them (18,128 of SHA-256's 22,573 ANDs, of which
// the plan fuses 16,176: the rest would read three sums). Under
// XORLinear that AND reads two sums, each refreshed first, and carry' is a
// sum again: three bootstraps in two levels a bit of the carry chain,
// where MAJ(a, b, c) is one bootstrap in one level (its inputs' refreshes,
// where a and b are sums, come off the chain, since they do not wait for
// c). The linear plan evaluates each such carry as a MAJ (fuseMajorities);
// Circuit.Levels and XORBootstrapped, which bootstrap the netlist gate by
// gate, do not.

// fuseMajorities returns c's gates, in netlist order, with each full
// adder's carry written as a MAJ: where an AND g reads x = a ⊕ c and
// y = b ⊕ c (XOR gates sharing exactly the input c, neither a carry fused
// already, which is a MAJ now), its output is read
// once, by z = g ⊕ c, and is no circuit output, and x and y have no other
// reader but XOR and XNOR gates, z becomes MAJ(a, b, c) and g the constant
// 0, which nothing then reads (a free gate). x and y stay as they are, for
// their other readers. So that the MAJ costs no more bootstraps than the
// AND it takes the place of (the AND and two refreshes of x and y), at
// most two of a, b and c may be sums (written by XOR or XNOR, directly or
// through NOT and COPY), each of which the MAJ has refreshed. None of a,
// b and c may be a MUX output (directly or through NOT and COPY), which the
// MAJ would read as it is where the AND read refreshes: a MAJ of k MUX
// outputs fails as Log2MajorityFailure(k), CuFHE80 grouped by 3 2^−53 for
// two against 2^−84 for the refreshes of three terms of the netlist's
// plan, past the 2^−64 of DefaultXORFailureLog2. It returns the gates and
// the number of carries fused: c.gates itself and 0 where there is no
// such carry.
func fuseMajorities(c *Circuit) ([]Gate, int) {
	nin := c.numInputBits()
	past := c.nwires - nin
	firstOutput := c.nwires - c.numOutputBits()
	isXOR := func(op Op) bool { return op == OpXOR || op == OpXNOR }
	writer := make([]int32, past)      // the gate that writes each wire past the inputs
	reads := make([]uint8, past)       // reads by gates: 0, 1, or 2 for more
	reader := make([]int32, past)      // the last gate that reads it
	nonXORReads := make([]uint8, past) // reads by gates other than XOR and XNOR: 0, 1, or 2 for more
	for gi, g := range c.gates {
		for k := range g.Op.Arity() {
			if i := g.In[k] - nin; i >= 0 {
				reads[i] = min(reads[i]+1, 2)
				reader[i] = int32(gi)
				if !isXOR(g.Op) {
					nonXORReads[i] = min(nonXORReads[i]+1, 2)
				}
			}
		}
		writer[g.Out-nin] = int32(gi)
	}
	var out []Gate // a copy of c.gates once a carry is fused
	// xorOf returns the inputs of the XOR gate writing w, or false, in the
	// gates as fused so far: a carry fused before is a MAJ, no longer
	// g′ ⊕ c′, since g′ is now the constant 0 (an AND reading that carry
	// and c′ ⊕ b would otherwise become MAJ(g′, b, c′) of a g′ that
	// nothing computes any more).
	xorOf := func(w int) (int, int, bool) {
		if w < nin {
			return 0, 0, false
		}
		h := c.gates[writer[w-nin]]
		if out != nil {
			h = out[writer[w-nin]]
		}
		return h.In[0], h.In[1], h.Op == OpXOR
	}
	fused := 0
	sum := make([]bool, past) // the wire is a sum in the fused gates (XOR-written, through NOT and COPY)
	isSum := func(w int) bool { return w >= nin && sum[w-nin] }
	mux := make([]bool, past) // the wire is a MUX output (through NOT and COPY)
	isMux := func(w int) bool { return w >= nin && mux[w-nin] }
	for gi, g := range c.gates {
		if out != nil {
			g = out[gi] // z may have become a MAJ
		}
		switch g.Op {
		case OpXOR, OpXNOR:
			sum[g.Out-nin] = true
		case OpMUX:
			mux[g.Out-nin] = true
		case OpNOT, OpCopy:
			sum[g.Out-nin] = isSum(g.In[0])
			mux[g.Out-nin] = isMux(g.In[0])
		}
		if g.Op != OpAND {
			continue
		}
		x, y := g.In[0], g.In[1]
		x0, x1, okx := xorOf(x)
		y0, y1, oky := xorOf(y)
		if !okx || !oky || x == y || nonXORReads[x-nin] != 1 || nonXORReads[y-nin] != 1 {
			continue
		}
		// The one input x and y share, c, and their others, a and b.
		var a, b, cw int
		switch {
		case x0 == y0 && x1 != y1:
			cw, a, b = x0, x1, y1
		case x0 == y1 && x1 != y0:
			cw, a, b = x0, x1, y0
		case x1 == y0 && x0 != y1:
			cw, a, b = x1, x0, y1
		case x1 == y1 && x0 != y0:
			cw, a, b = x1, x0, y0
		default:
			continue
		}
		if a == cw || b == cw {
			continue // x or y is XOR(c, c)
		}
		o := g.Out - nin
		if g.Out >= firstOutput || reads[o] != 1 {
			continue
		}
		z := c.gates[reader[o]]
		if z.Op != OpXOR || !(z.In[0] == g.Out && z.In[1] == cw || z.In[1] == g.Out && z.In[0] == cw) {
			continue
		}
		sums, muxes := 0, false
		for _, w := range [3]int{a, b, cw} {
			if isSum(w) {
				sums++
			}
			muxes = muxes || isMux(w)
		}
		if sums == 3 || muxes {
			continue
		}
		if out == nil {
			out = append([]Gate(nil), c.gates...)
		}
		out[gi] = Gate{Op: OpZero, In: [3]int{-1, -1, -1}, Out: g.Out, Line: g.Line}
		out[reader[o]] = Gate{Op: OpMAJ, In: [3]int{a, b, cw}, Out: z.Out, Line: z.Line}
		fused++
	}
	if out == nil {
		return c.gates, 0
	}
	return out, fused
}
