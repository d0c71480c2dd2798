package gates

import (
	"errors"
	"fmt"
	"slices"

	"github.com/goldfhe/goldfhe/tfhe"
	"github.com/goldfhe/goldfhe/torus"
)

// batchScratch holds the samples one Batch works on, so that outputs may
// alias inputs and the engine never sees caller memory. Buffers only grow;
// Evaluator keeps them in a sync.Pool.
type batchScratch struct {
	small []*tfhe.TLWE // dimension n: linear combinations, MUX halves, MUX and free results
	big   []*tfhe.TLWE // dimension k·N: MUX halves after BootstrapNoKeySwitch
	view  []*tfhe.TLWE // a strided view of big (the MUX sums) for KeySwitch
	all   []*tfhe.TLWE // the gate inputs of small, then the extra samples of batch
	// distinctInputs: per blind rotation of a batch (gate inputs, extra,
	// MUX halves), its input's fingerprint and whether it is bootstrapped
	// negated; and the inputs of a Batch call's blind rotations.
	keys   []uint64
	flip   []bool
	seen   rotationSet
	muxAt  []int  // the index in calls of each MUX of a batch
	altMux []bool // per MUX: its halves are those of MUX(s, ¬b, ¬c) (distinctInputs)
}

func (ev *Evaluator) scratch(nsmall, nbig int) *batchScratch {
	s, _ := ev.pool.Get().(*batchScratch)
	if s == nil {
		s = new(batchScratch)
	}
	for len(s.small) < nsmall {
		s.small = append(s.small, tfhe.NewTLWE(ev.n))
	}
	for len(s.big) < nbig {
		s.big = append(s.big, tfhe.NewTLWE(ev.ext))
	}
	return s
}

// linear sets dst = ca·a + cb·b + (0, off): the input of a gate bootstrap.
func linear(dst *tfhe.TLWE, ca int32, a *tfhe.TLWE, cb int32, b *tfhe.TLWE, off torus.Torus32) {
	d, x, y := dst.Value, a.Value[:len(dst.Value)], b.Value[:len(dst.Value)]
	p, q := torus.Torus32(ca), torus.Torus32(cb)
	for i := range d {
		d[i] = p*x[i] + q*y[i]
	}
	d[len(d)-1] += off
}

// linear3 sets dst = Σ coef[k]·in[k] + (0, off) over three samples: a
// majority gate's bootstrap input.
func linear3(dst *tfhe.TLWE, coef [3]int32, in [3]*tfhe.TLWE, off torus.Torus32) {
	d := dst.Value
	x, y, z := in[0].Value[:len(d)], in[1].Value[:len(d)], in[2].Value[:len(d)]
	p, q, r := torus.Torus32(coef[0]), torus.Torus32(coef[1]), torus.Torus32(coef[2])
	for i := range d {
		d[i] = p*x[i] + q*y[i] + r*z[i]
	}
	d[len(d)-1] += off
}

// gateCoefficients returns the linear combination Σ coef[k]·input k +
// (0, off) that a gate other than MUX bootstraps with μ = 1/8: for a
// two-input gate the TFHE library's bootsAND, bootsNAND, … (coef[2] is
// 0; XOR doubles its inputs so that a ⊕ b maps to ±1/4 + 1/4), for MAJ
// the plain sum a + b + c, whose phase ±1/8 or ±3/8 is positive exactly
// when most of the three are true.
func gateCoefficients(op Op) (coef [3]int32, off torus.Torus32) {
	switch op {
	case OpAND:
		return [3]int32{1, 1}, nmu8
	case OpNAND:
		return [3]int32{-1, -1}, mu8
	case OpOR:
		return [3]int32{1, 1}, mu8
	case OpNOR:
		return [3]int32{-1, -1}, nmu8
	case OpXOR:
		return [3]int32{2, 2}, mu4
	case OpXNOR:
		return [3]int32{-2, -2}, nmu4
	case OpANDNY:
		return [3]int32{-1, 1}, nmu8
	case OpANDYN:
		return [3]int32{1, -1}, nmu8
	case OpORNY:
		return [3]int32{-1, 1}, mu8
	case OpORYN:
		return [3]int32{1, -1}, mu8
	case OpMAJ:
		return [3]int32{1, 1, 1}, 0
	}
	panic(fmt.Sprintf("gates: no linear combination for %v", op))
}

// gateInput sets dst to what the engine bootstraps for gate op (not MUX,
// nor a free gate) of inputs in[:op.Arity()], input k negated where
// neg[k] (a negated input negates its coefficient).
func gateInput(dst *tfhe.TLWE, op Op, in [3]*tfhe.TLWE, neg [3]bool) {
	coef, off := gateCoefficients(op)
	for k := range coef {
		if neg[k] {
			coef[k] = -coef[k]
		}
	}
	if op.Arity() == 3 {
		linear3(dst, coef, in, off)
		return
	}
	linear(dst, coef[0], in[0], coef[1], in[1], off)
}

// engineInput is what the engine bootstraps for a gate, by its inputs'
// samples (id) and signs: for a two-input gate or MAJ the sum Σ coef·x +
// off (gateCoefficients, the signs in the coefficients, terms in order),
// for a MUX its selector and data with the selector's sign taken out
// (MUX(¬s, b, c) is MUX(s, c, b): the same two halves). The engines are
// deterministic, so two gates of one engineInput give one sample bit for
// bit: AND(¬a, b) and ANDNY(a, b) alike, MAJ(a, b, c) and MAJ(c, a, b).
type engineInput struct {
	mux  bool
	off  torus.Torus32
	id   [3]int32
	coef [3]int32
}

// negated returns the engine input of the gate that bootstraps −k, the
// complement of k's gate (a gate bootstrap maps −x to the negation of
// x's result: NAND(a, b) is NOT AND(a, b)), and false for a MUX, whose
// complement has other halves.
func (k engineInput) negated() (engineInput, bool) {
	if k.mux {
		return engineInput{}, false
	}
	n := k
	n.off = -k.off
	for i := range n.coef {
		n.coef[i] = -k.coef[i]
	}
	return n, true
}

func engineInputOf(op Op, id [3]int32, neg [3]bool) engineInput {
	sign := func(b bool) int32 {
		if b {
			return -1
		}
		return 1
	}
	if op == OpMUX {
		if neg[0] {
			id[1], id[2], neg[1], neg[2] = id[2], id[1], neg[2], neg[1]
		}
		return engineInput{mux: true, id: id, coef: [3]int32{1, sign(neg[1]), sign(neg[2])}}
	}
	coef, off := gateCoefficients(op)
	ar := op.Arity()
	k := engineInput{off: off, id: [3]int32{-1, -1, -1}}
	for i := range ar {
		k.id[i], k.coef[i] = id[i], coef[i]*sign(neg[i])
	}
	// The terms in order (an insertion sort of two or three).
	for i := 1; i < ar; i++ {
		for j := i; j > 0 && (k.id[j] < k.id[j-1] || k.id[j] == k.id[j-1] && k.coef[j] < k.coef[j-1]); j-- {
			k.id[j], k.id[j-1], k.coef[j], k.coef[j-1] = k.id[j-1], k.id[j], k.coef[j-1], k.coef[j]
		}
	}
	return k
}

// checkSample reports whether c is a usable sample of dimension n.
func checkSample(c *tfhe.TLWE, n int) error {
	switch {
	case c == nil:
		return fmt.Errorf("is nil")
	case c.Dim() != n:
		return fmt.Errorf("has dimension %d, want %d (wrong parameter set?)", c.Dim(), n)
	}
	return nil
}

// Batch evaluates every call: *calls[i].Out = calls[i].Op(inputs). Gates of
// every kind may be mixed. All two-input gates and MAJ gates go to the
// engine in one Bootstrap call; MUX gates add one BootstrapNoKeySwitch and
// one KeySwitch call for all of them; free gates cost nothing.
//
// Every input is read before any output is written, so an output may be the
// same sample as any input, of the same call or of another. Outputs must be
// distinct, non-nil samples of dimension n (two *TLWE over one array are
// one sample, as for the engines); their previous content is ignored. On
// error no output is written.
//
// A call given one sample for two inputs is the gate of its distinct
// samples: AND(a, a) is a copy of a and costs no bootstrap, MUX(s, s, c) is
// OR(s, c). A bootstrap of a sample added to itself would have twice its
// error, where the noise estimates count independent inputs. One sample is
// one *TLWE, or two equal bit for bit or negated (a copy or NOT made
// apart, a sample decoded twice, the outputs of one gate on the same
// samples in two Batch calls), and an input equal to a Constant is that
// constant: AND(a, Constant(true)) is a copy of a.
//
// Within one Batch, gates that bootstrap one sum (AND(s, b) and the first
// half of MUX(s, b, c), two MUX gates with a half in common, a gate given
// twice) blind-rotate it once as it is and once negated, so that their
// outputs' errors are unrelated and a later gate may read both. A MUX
// that would be a third takes the halves of MUX(s, ¬b, ¬c), other sums,
// and negates its result; any other third gate of one sum, up to sign,
// shares a blind rotation with one of the first two.
// Gates of one sum in different Batch calls share theirs: AND(s, b) in one
// call and MUX(s, b, c) in another give outputs of correlated errors, which
// one later gate should not read together. Circuits keep every level's
// blind rotations apart (EvalCircuit).
func (ev *Evaluator) Batch(calls []Call) error {
	if err := ev.ok(); err != nil {
		return err
	}
	for i := range calls {
		c := &calls[i]
		if !c.Op.Valid() {
			return fmt.Errorf("gates: Batch: call %d: invalid gate %v", i, c.Op)
		}
		if err := checkSample(c.Out, ev.n); err != nil {
			return fmt.Errorf("gates: Batch: call %d (%v): output %v", i, c.Op, err)
		}
		for k := range c.Op.Arity() {
			if err := checkSample(c.input(k), ev.n); err != nil {
				return fmt.Errorf("gates: Batch: call %d (%v): input %c %v", i, c.Op, 'A'+k, err)
			}
		}
	}
	if len(calls) > 1 {
		// A sample is known by its first word, as the engines know it
		// (bootstrap.Engine): two *TLWE over one array are one output.
		seen := make(map[*torus.Torus32]int, len(calls))
		for i := range calls {
			w := &calls[i].Out.Value[0]
			if j, dup := seen[w]; dup {
				return fmt.Errorf("gates: Batch: calls %d and %d write the same output", j, i)
			}
			seen[w] = i
		}
	}
	if err := ev.batch(calls, nil, nil, nil); err != nil {
		return fmt.Errorf("gates: %w", err)
	}
	return nil
}

// batch is Batch on valid calls, and bootstraps the samples extra (inputs
// already formed, μ = 1/8) in place in the same engine call as the
// two-input and MAJ gates. Its blind rotations' inputs are kept distinct from one
// another and from those in seen, where not nil (distinctInputs): a
// circuit with MUX gates passes one set for all its levels
// (rotationsFor). Its errors are the engine's
// as they are: each caller adds "gates: " and its own context once.
//
// salt, when not nil, has one word for each call and then each sample of
// extra, mixed into its blind rotations' fingerprints: a circuit gives each
// set of inputs its own (setSalt), so that sets sharing samples keep no
// rotations apart from one another's, and each set's outputs are those it
// would have alone.
func (ev *Evaluator) batch(calls []Call, extra []*tfhe.TLWE, seen *rotationSet, salt []uint64) error {
	// Calls whose inputs repeat a sample are rare: batchOnce finds them
	// as it reads each call's inputs anyway, before any engine call, and
	// the batch starts again on their reduced gates. A pass of its own
	// would read every input sample once more, out of cache in a large
	// batch (about 10 ms for 65,536 gates, BenchmarkReduceCalls).
	err := ev.batchOnce(calls, extra, seen, salt, false)
	if err == errRepeats {
		// reduceCalls keeps the calls' order: salt still lines up.
		err = ev.batchOnce(reduceCalls(calls), extra, seen, salt, true)
	}
	return err
}

// errRepeats is batchOnce's word that a call's inputs repeat a sample.
var errRepeats = errors.New("gates: a call's inputs repeat a sample")

// batchOnce is batch on calls, reduced (none repeats a sample) or not yet,
// in which case it returns errRepeats, having called no engine and written
// nothing but scratch, where a call's inputs repeat a sample.
func (ev *Evaluator) batchOnce(calls []Call, extra []*tfhe.TLWE, seen *rotationSet, salt []uint64, reduced bool) error {
	saltOf := func(i int) uint64 {
		if salt == nil {
			return 0
		}
		return salt[i]
	}
	var nb, nm, nf int
	for i := range calls {
		switch op := calls[i].Op; {
		case op.Free():
			nf++
		case op == OpMUX:
			nm++
		default:
			nb++
		}
	}
	if nb+nm+len(extra) == 0 {
		// Free gates alone need no engine, but an engine that is closed
		// or has failed must say so here as for any other gate: an empty
		// call returns its state (bootstrap.ErrClosed, a device fault).
		if err := ev.eng.Bootstrap(nil, nil, mu8); err != nil {
			return err
		}
	}
	// small: [0, nb) gate inputs bootstrapped in place; [nb, nb+2nm) MUX
	// halves; then nm MUX results, then nf free results.
	s := ev.scratch(nb+3*nm+nf, 2*nm)
	defer func() {
		// extra is the caller's (a circuit level's samples): the pooled
		// scratch must not keep them reachable.
		clear(s.all)
		s.all = s.all[:0]
		ev.pool.Put(s)
	}()
	pre := s.small[:nb]
	half := s.small[nb : nb+2*nm]
	// Fingerprints are taken as each input is formed, while it is in cache:
	// gate inputs, then extra (the caller's), then MUX halves.
	keys := s.sites(nb + len(extra) + 2*nm)
	keyPre, keyExtra, keyHalf := keys[:nb], keys[nb:nb+len(extra)], keys[nb+len(extra):]
	muxOut := s.small[nb+2*nm : nb+3*nm]
	free := s.small[nb+3*nm : nb+3*nm+nf]
	s.muxAt = s.muxAt[:0]
	ib, im, iff := 0, 0, 0
	for i := range calls {
		c := &calls[i]
		if !reduced && !c.Op.Free() {
			if _, _, _, repeats := sampleKeys([3]*tfhe.TLWE{c.A, c.B, c.C}, c.Op.Arity()); repeats {
				return errRepeats
			}
		}
		switch {
		case c.Op == OpMUX:
			// a ? b : c = (a ∧ b) + (¬a ∧ c) + 1/8 after the two halves
			// are bootstrapped to ±1/8 without key switching.
			linear(half[2*im], 1, c.A, 1, c.B, nmu8)
			linear(half[2*im+1], -1, c.A, 1, c.C, nmu8)
			keyHalf[2*im] = inputFingerprint(half[2*im].Value) ^ saltOf(i)
			keyHalf[2*im+1] = inputFingerprint(half[2*im+1].Value) ^ saltOf(i)
			s.muxAt = append(s.muxAt, i)
			im++
		case c.Op.Free():
			d := free[iff]
			switch c.Op {
			case OpZero, OpOne:
				d.SetTrivial(tfhe.EncodeBool(c.Op == OpOne))
			case OpCopy:
				d.CopyFrom(c.A)
			case OpNOT:
				tfhe.NegTLWETo(d, c.A)
			}
			iff++
		default:
			gateInput(pre[ib], c.Op, [3]*tfhe.TLWE{c.A, c.B, c.C}, [3]bool{})
			keyPre[ib] = inputFingerprint(pre[ib].Value) ^ saltOf(i)
			ib++
		}
	}
	all := pre
	if len(extra) > 0 {
		s.all = append(append(s.all[:0], pre...), extra...)
		all = s.all
	}
	for i, x := range extra {
		keyExtra[i] = inputFingerprint(x.Value) ^ saltOf(len(calls)+i)
	}
	// MUX j's halves, formed again in place as those of MUX(s, b, c) or,
	// alt, of MUX(s, ¬b, ¬c), whose sum is the complement.
	halves := func(j int, alt bool) (k1, k2 uint64) {
		c := &calls[s.muxAt[j]]
		sign := int32(1)
		if alt {
			sign = -1
		}
		linear(half[2*j], 1, c.A, sign, c.B, nmu8)
		linear(half[2*j+1], -1, c.A, sign, c.C, nmu8)
		salt := saltOf(s.muxAt[j])
		return inputFingerprint(half[2*j].Value) ^ salt, inputFingerprint(half[2*j+1].Value) ^ salt
	}
	flipAll, flipHalf, altMux := s.distinctInputs(all, half, seen, halves)
	if len(all) > 0 {
		if err := ev.eng.Bootstrap(all, all, mu8); err != nil {
			unflip(all, flipAll) // extra is the caller's
			return err
		}
		unflip(all, flipAll)
	}
	if nm > 0 {
		ext := s.big[:2*nm]
		if err := ev.eng.BootstrapNoKeySwitch(ext, half, mu8); err != nil {
			return err
		}
		unflip(ext, flipHalf)
		s.view = s.view[:0]
		for j := range nm {
			u := ext[2*j]
			tfhe.AddTLWETo(u, u, ext[2*j+1])
			u.SetB(u.B() + mu8)
			if altMux[j] {
				tfhe.NegTLWETo(u, u) // ¬MUX(s, ¬b, ¬c)
			}
			s.view = append(s.view, u)
		}
		if err := ev.eng.KeySwitch(muxOut, s.view); err != nil {
			return err
		}
	}
	ib, im, iff = 0, 0, 0
	for i := range calls {
		c := &calls[i]
		switch {
		case c.Op == OpMUX:
			c.Out.CopyFrom(muxOut[im])
			im++
		case c.Op.Free():
			c.Out.CopyFrom(free[iff])
			iff++
		default:
			c.Out.CopyFrom(pre[ib])
			ib++
		}
	}
	return nil
}

// sites readies s.keys and s.flip for n blind rotations and returns keys.
func (s *batchScratch) sites(n int) []uint64 {
	if cap(s.keys) < n {
		s.keys, s.flip = make([]uint64, n), make([]bool, n)
	}
	s.keys, s.flip = s.keys[:n], s.flip[:n]
	return s.keys
}

// distinctInputs gives the blind rotations of one batch distinct inputs
// where it can, and distinct from those of seen (a circuit's earlier
// levels), or of this batch alone where seen is nil. all holds gate
// inputs, then extra; half the MUX halves, two a MUX; their fingerprints
// are in s.keys in that order. It negates the inputs it changes and
// returns which, for unflip, and which MUX it gave the halves of
// MUX(s, ¬b, ¬c) (halves re-forms MUX j's halves either way and returns
// their fingerprints).
//
// Why: the engines are deterministic, so two blind rotations of one input
// give one output, error included, and outputs that share it are
// correlated. AND(s, b) bootstraps s + b − 1/8, and so does the first half
// of MUX(s, b, c); MUX(s, b, d) has that half too, a level after MUX(s, b,
// c) where d is its output. A gate that reads two such outputs would have
// up to twice the error variance of that blind rotation, where every
// failure figure (tfhe.NoiseEstimate) counts independent errors; with
// grouped keys the blind rotation is most of a bootstrap's error. A gate
// bootstrap of −x gives the negated bit of x's (the test vector is odd),
// through other rotations whose errors are unrelated to x's, so a second
// site of one input bootstraps its negation and the result is negated
// back. A MUX whose half would be a third site takes the halves of
// MUX(s, ¬b, ¬c), other sums, where they are free, and its result is
// negated. Otherwise a third site of one input, up to sign, stays shared.
//
// A false match of fingerprints only negates a site, or takes a MUX's
// other halves, which is always correct.
func (s *batchScratch) distinctInputs(all, half []*tfhe.TLWE, seen *rotationSet,
	halves func(j int, alt bool) (k1, k2 uint64)) (flipAll, flipHalf, altMux []bool) {
	n := len(all) + len(half)
	flip := s.flip[:n]
	clear(flip)
	flipAll, flipHalf = flip[:len(all)], flip[len(all):]
	nm := len(half) / 2
	if cap(s.altMux) < nm {
		s.altMux = make([]bool, nm)
	}
	altMux = s.altMux[:nm]
	clear(altMux)
	if seen == nil {
		if n < 2 {
			return flipAll, flipHalf, altMux
		}
		seen = &s.seen
		seen.reset()
	}
	site := func(i int, key uint64) {
		if !seen.add(key) {
			return
		}
		flip[i] = true
		x := half
		if i < len(all) {
			x = all
		} else {
			i -= len(all)
		}
		tfhe.NegTLWETo(x[i], x[i])
	}
	keys := s.keys[:n]
	for i := range all {
		site(i, keys[i])
	}
	for j := range nm {
		i := len(all) + 2*j
		if !seen.placeable(keys[i]) || !seen.placeable(keys[i+1]) {
			if k1, k2 := halves(j, true); seen.placeable(k1) && seen.placeable(k2) && k1>>1 != k2>>1 {
				keys[i], keys[i+1], altMux[j] = k1, k2, true
			} else {
				halves(j, false)
			}
		}
		site(i, keys[i])
		site(i+1, keys[i+1])
	}
	return flipAll, flipHalf, altMux
}

// rotationSet is the set of blind-rotation inputs of a batch or a circuit
// evaluation, by fingerprint (inputFingerprint), with the forms used of
// each: as is, negated. An open-addressing table: cleared, not freed.
type rotationSet struct {
	table []uint64 // fingerprint without its sign bit <<2 | forms used (1, 2); 0 is empty
	count int
}

func (r *rotationSet) reset() {
	clear(r.table)
	r.count = 0
}

// add records a blind rotation of the input of fingerprint key and
// reports whether it should be of the input's negation: the input as it is
// was used and its negation not yet.
func (r *rotationSet) add(key uint64) (negate bool) {
	if 2*(r.count+1) > len(r.table) {
		r.grow()
	}
	class, own := key>>1<<2, uint64(1)<<(key&1)
	other := 3 ^ own
	j := r.slot(class)
	switch used := r.table[j] & 3; {
	case r.table[j] == 0:
		r.table[j] = class | own
		r.count++
	case used&own == 0:
		r.table[j] |= own
	case used&other == 0:
		r.table[j] |= other
		return true
	}
	return false
}

// placeable reports whether a blind rotation of the input of fingerprint
// key can still take a form (as is, or negated) that none has taken.
func (r *rotationSet) placeable(key uint64) bool {
	if len(r.table) == 0 {
		return true
	}
	e := r.table[r.slot(key>>1<<2)]
	return e&3 != 3
}

// slot returns the index of class's entry, or of the empty slot where it
// goes.
func (r *rotationSet) slot(class uint64) uint64 {
	mask := uint64(len(r.table) - 1)
	j := class * 0x9e3779b97f4a7c15 >> 32 & mask
	for r.table[j] != 0 && r.table[j]&^3 != class {
		j = (j + 1) & mask
	}
	return j
}

func (r *rotationSet) grow() {
	old := r.table
	r.table = make([]uint64, max(64, 2*len(old)))
	for _, e := range old {
		if e != 0 {
			r.table[r.slot(e&^3)] = e
		}
	}
}

// unflip negates the samples that distinctInputs negated (their gate
// bootstraps are the negated bits, or they are the caller's samples).
func unflip(xs []*tfhe.TLWE, flip []bool) {
	for i, f := range flip {
		if f {
			tfhe.NegTLWETo(xs[i], xs[i])
		}
	}
}

// setSalt is the salt of batch for the k-th set of inputs of a circuit
// evaluation: 0 for the first (as for one set alone), and its low bit, the
// fingerprints' sign, clear.
func setSalt(k int) uint64 { return uint64(k) * 0x9e3779b97f4a7c15 &^ 1 }

// inputFingerprint hashes the body and first mask coefficients of a
// sample v and of −v, and returns the smaller hash with its low bit set to
// which one it is (0: v's, 1: −v's): v and −v share the other 63 bits.
func inputFingerprint(v []torus.Torus32) uint64 {
	const prime = 0x100000001b3 // FNV-1a's 64-bit prime
	pos, neg := uint64(0xcbf29ce484222325), uint64(0xcbf29ce484222325)
	mix := func(w torus.Torus32) {
		pos = (pos ^ uint64(uint32(w))) * prime
		neg = (neg ^ uint64(uint32(-w))) * prime
	}
	mix(v[len(v)-1])
	for _, w := range v[:min(4, len(v)-1)] {
		mix(w)
	}
	pos, neg = pos&^1, neg&^1
	if neg < pos {
		return neg | 1
	}
	return pos
}

// reduceCalls returns calls with every call whose inputs repeat a sample
// replaced by the gate of its distinct samples (reduceRepeats: AND(a, a)
// is a copy of a), in a copy of the slice when there is one, so that the
// caller's calls stay as given. It allocates only then. A sample repeats
// where two inputs are one *TLWE, or equal or negated bit for bit (a copy
// or NOT made apart, a sample decoded twice, the outputs of one gate on
// the same samples in two calls); an input equal to Constant's is that
// constant.
func reduceCalls(calls []Call) []Call {
	cloned := false
	for i := range calls {
		c := &calls[i]
		if c.Op.Free() || !c.Op.Valid() {
			continue
		}
		in := [3]*tfhe.TLWE{c.A, c.B, c.C}
		key, constant, neg, repeats := sampleKeys(in, c.Op.Arity())
		if !repeats {
			continue // the common case
		}
		r, _ := reduceRepeats(c.Op, key, constant, neg)
		if !cloned {
			calls, cloned = slices.Clone(calls), true
			c = &calls[i]
		}
		*c = Call{Op: r.op, Out: c.Out}
		for k := range r.op.Arity() {
			c.in(k, in[r.src[k]])
		}
	}
	return calls
}

// sampleKeys describes the first ar inputs of a call for reduceRepeats:
// input k is sample key[k] (the first input that holds it), negated when
// neg[k], or the constant neg[k] when constant[k]. repeats reports whether
// any input repeats another or is a constant.
func sampleKeys(in [3]*tfhe.TLWE, ar int) (key [3]int, constant, neg [3]bool, repeats bool) {
	for k := range ar {
		key[k] = k
		if b, ok := constantOf(in[k]); ok {
			constant[k], neg[k], repeats = true, b, true
			continue
		}
		for j := range k {
			if constant[j] || key[j] != j {
				continue
			}
			if same, n := sameSample(in[j], in[k]); same {
				key[k], neg[k], repeats = j, n, true
				break
			}
		}
	}
	return key, constant, neg, repeats
}

// sameSample reports whether y is x, or equal to x bit for bit, or to −x
// (negated): a copy or NOT of x however it was made. The first mask word
// decides almost always; a match is confirmed on every word.
func sameSample(x, y *tfhe.TLWE) (same, negated bool) {
	if x == y {
		return true, false
	}
	a, b := x.Value, y.Value
	if len(a) != len(b) {
		return false, false
	}
	if a[0] == b[0] && slices.Equal(a, b) {
		return true, false
	}
	if a[0] == -b[0] {
		for i := range a {
			if a[i] != -b[i] {
				return false, false
			}
		}
		return true, true
	}
	return false, false
}

// constantOf reports whether x is a constant as Constant makes it (a zero
// mask and a body of ±1/8), and which.
func constantOf(x *tfhe.TLWE) (bit, ok bool) {
	v := x.Value
	if v[0] != 0 { // a random mask word is 0 once in 2^32
		return false, false
	}
	if b := v[len(v)-1]; b != mu8 && b != nmu8 {
		return false, false
	}
	for _, w := range v[:len(v)-1] {
		if w != 0 {
			return false, false
		}
	}
	return v[len(v)-1] == mu8, true
}
