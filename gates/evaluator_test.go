package gates_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/goldfhe/goldfhe/bootstrap"
	"github.com/goldfhe/goldfhe/gates"
	"github.com/goldfhe/goldfhe/gates/circuits"
	"github.com/goldfhe/goldfhe/tfhe"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var allOps = []gates.Op{
	gates.OpZero, gates.OpOne, gates.OpCopy, gates.OpNOT,
	gates.OpAND, gates.OpNAND, gates.OpOR, gates.OpNOR, gates.OpXOR, gates.OpXNOR,
	gates.OpANDNY, gates.OpANDYN, gates.OpORNY, gates.OpORYN, gates.OpMAJ, gates.OpMUX,
}

// truthTableCalls returns one call per op and input combination, with the
// expected results, on fresh encryptions.
func truthTableCalls(f *fixture, ops []gates.Op) ([]gates.Call, []bool, []string) {
	var (
		calls []gates.Call
		want  []bool
		names []string
	)
	for _, op := range ops {
		for x := range 1 << op.Arity() {
			in := make([]bool, 3)
			for k := range op.Arity() {
				in[k] = x>>k&1 == 1
			}
			cts := f.encrypt(in...)
			calls = append(calls, gates.Call{Op: op, A: cts[0], B: cts[1], C: cts[2], Out: tfhe.NewTLWE(f.p.LWEDimension())})
			want = append(want, op.Eval(in[0], in[1], in[2]))
			names = append(names, fmt.Sprintf("%v%v", op, in[:op.Arity()]))
		}
	}
	return calls, want, names
}

func checkCalls(t *testing.T, f *fixture, calls []gates.Call, want []bool, names []string) {
	t.Helper()
	for i, c := range calls {
		if got := f.decrypt(t, c.Out)[0]; got != want[i] {
			t.Errorf("%s = %v, want %v", names[i], got, want[i])
		}
	}
}

// TestBatchOracle checks the gate constants and the batching of every gate
// kind against the oracle engine: one Bootstrap call for the two-input and
// MAJ gates, one BootstrapNoKeySwitch and one KeySwitch for the MUX gates.
func TestBatchOracle(t *testing.T) {
	f := fixtures(tfhe.TFHELib128)
	o := newOracle(f)
	ev, err := gates.NewEvaluator(o)
	require.NoError(t, err)
	calls, want, names := truthTableCalls(f, allOps)
	rng := rand.New(rand.NewPCG(5, 6))
	rng.Shuffle(len(calls), func(i, j int) {
		calls[i], calls[j] = calls[j], calls[i]
		want[i], want[j] = want[j], want[i]
		names[i], names[j] = names[j], names[i]
	})
	require.NoError(t, ev.Batch(calls))
	checkCalls(t, f, calls, want, names)
	// 10 two-input gates × 4 combinations and MAJ's 8; MUX: 8
	// combinations × 2 halves.
	if got := o.log(); !slices.Equal(got, []string{"B:48", "N:16", "K:8"}) {
		t.Errorf("engine calls %v", got)
	}

	// Without MUX: exactly one engine call; free gates alone: none.
	calls, want, names = truthTableCalls(f, allOps[:len(allOps)-1])
	require.NoError(t, ev.Batch(calls))
	checkCalls(t, f, calls, want, names)
	if got := o.log(); !slices.Equal(got, []string{"B:48"}) {
		t.Errorf("engine calls %v", got)
	}
	calls, want, names = truthTableCalls(f, allOps[:4])
	require.NoError(t, ev.Batch(calls))
	checkCalls(t, f, calls, want, names)
	if got := o.log(); len(got) != 0 {
		t.Errorf("free gates called the engine: %v", got)
	}
	assert.NoError(t, ev.Batch(nil), "empty batch")
}

// TestOneGateOracle checks the named one-gate methods.
func TestOneGateOracle(t *testing.T) {
	f := fixtures(tfhe.TFHELib128)
	ev, _ := gates.NewEvaluator(newOracle(f))
	type g2 = func(a, b *tfhe.TLWE) (*tfhe.TLWE, error)
	for _, tc := range []struct {
		op gates.Op
		fn g2
	}{
		{gates.OpAND, ev.AND}, {gates.OpNAND, ev.NAND}, {gates.OpOR, ev.OR}, {gates.OpNOR, ev.NOR},
		{gates.OpXOR, ev.XOR}, {gates.OpXNOR, ev.XNOR}, {gates.OpANDNY, ev.ANDNY}, {gates.OpANDYN, ev.ANDYN},
		{gates.OpORNY, ev.ORNY}, {gates.OpORYN, ev.ORYN},
	} {
		for x := range 4 {
			a, b := x&1 == 1, x&2 != 0
			cts := f.encrypt(a, b)
			r, err := tc.fn(cts[0], cts[1])
			require.NoError(t, err)
			if got := f.decrypt(t, r)[0]; got != tc.op.Eval(a, b, false) {
				t.Errorf("%v(%v, %v) = %v", tc.op, a, b, got)
			}
		}
	}
	for x := range 8 {
		s, a, b := x&1 == 1, x&2 != 0, x&4 != 0
		cts := f.encrypt(s, a, b)
		r, err := ev.MUX(cts[0], cts[1], cts[2])
		require.NoError(t, err)
		want := b
		if s {
			want = a
		}
		if got := f.decrypt(t, r)[0]; got != want {
			t.Errorf("MUX(%v, %v, %v) = %v", s, a, b, got)
		}
		r, err = ev.MAJ(cts[0], cts[1], cts[2])
		require.NoError(t, err)
		if got, want := f.decrypt(t, r)[0], s && a || s && b || a && b; got != want {
			t.Errorf("MAJ(%v, %v, %v) = %v", s, a, b, got)
		}
	}
	for _, b := range []bool{false, true} {
		c, err := ev.Constant(b)
		require.NoError(t, err)
		n, err := ev.NOT(c)
		require.NoError(t, err)
		if got := f.decrypt(t, c, n); got[0] != b || got[1] != !b {
			t.Errorf("Constant(%v), NOT: %v", b, got)
		}
		if c.Value[0] != 0 {
			t.Errorf("Constant is not trivial")
		}
	}
}

// TestBatchAliasing uses outputs that are inputs of the same and of other
// calls.
func TestBatchAliasing(t *testing.T) {
	f := fixtures(tfhe.TFHELib128)
	ev, _ := gates.NewEvaluator(newOracle(f))
	for x := range 8 {
		a, b, c := x&1 == 1, x&2 != 0, x&4 != 0
		cts := f.encrypt(a, b, c)
		ca, cb, cc := cts[0], cts[1], cts[2]
		calls := []gates.Call{
			{Op: gates.OpXOR, A: ca, B: cb, Out: cb},        // writes b, read by the next calls
			{Op: gates.OpNOT, A: cb, Out: ca},               // writes a, read by calls 0 and 2
			{Op: gates.OpMUX, A: ca, B: cb, C: cc, Out: cc}, // reads all three, writes c
		}
		require.NoError(t, ev.Batch(calls))
		mux := c
		if a {
			mux = b
		}
		got := f.decrypt(t, ca, cb, cc)
		if want := []bool{!b, a != b, mux}; !slices.Equal(got, want) {
			t.Errorf("inputs %v %v %v: %v, want %v", a, b, c, got, want)
		}
	}
}

func TestEvaluatorErrors(t *testing.T) {
	f := fixtures(tfhe.TFHELib128)
	o := newOracle(f)
	ev, _ := gates.NewEvaluator(o)
	n := f.p.LWEDimension()
	ok := f.encrypt(true)[0]
	short := tfhe.NewTLWE(n - 1)
	for _, eng := range []bootstrap.Engine{(*bootstrap.Selected)(nil), &bootstrap.CPU{}} {
		if _, err := gates.NewEvaluator(eng); !errors.Is(err, bootstrap.ErrNotInitialized) {
			t.Errorf("NewEvaluator(%T zero): %v, want bootstrap.ErrNotInitialized", eng, err)
		}
	}
	if _, err := gates.NewEvaluator(nil); err == nil {
		t.Error("NewEvaluator(nil) succeeded")
	}
	var zero gates.Evaluator
	var nilEv *gates.Evaluator
	for name, e := range map[string]*gates.Evaluator{"zero": &zero, "nil": nilEv} {
		if _, err := e.AND(ok, ok); !errors.Is(err, gates.ErrNoEvaluator) {
			t.Errorf("%s evaluator: AND gave %v", name, err)
		}
		if err := e.Batch(nil); !errors.Is(err, gates.ErrNoEvaluator) {
			t.Errorf("%s evaluator: Batch gave %v", name, err)
		}
		if _, err := e.Constant(true); !errors.Is(err, gates.ErrNoEvaluator) {
			t.Errorf("%s evaluator: Constant gave %v", name, err)
		}
		if _, err := e.EvalCircuit(context.Background(), nil, nil, nil); !errors.Is(err, gates.ErrNoEvaluator) {
			t.Errorf("%s evaluator: EvalCircuit gave %v", name, err)
		}
		if !e.Params().IsZero() || e.Engine() != nil {
			t.Errorf("%s evaluator has params or an engine", name)
		}
	}
	for _, tc := range []struct {
		name string
		err  func() error
		msg  string
	}{
		{"nil input", func() error { _, err := ev.AND(ok, nil); return err }, "gates: AND: input B is nil"},
		{"nil MUX selector", func() error { _, err := ev.MUX(nil, ok, ok); return err }, "gates: MUX: input sel is nil"},
		{"short MUX input", func() error { _, err := ev.MUX(ok, ok, short); return err }, "gates: MUX: input b has dimension 629"},
		{"short input", func() error { _, err := ev.XOR(short, ok); return err }, "input A has dimension 629, want 630"},
		{"arity", func() error { _, err := ev.Gate(gates.OpAND, ok); return err }, "AND takes 2 inputs, got 1"},
		{"invalid", func() error { _, err := ev.Gate(gates.Op(0)); return err }, "invalid gate"},
		{"nil output", func() error { return ev.Batch([]gates.Call{{Op: gates.OpNOT, A: ok}}) }, "call 0 (NOT): output is nil"},
		{"bad output", func() error { return ev.Batch([]gates.Call{{Op: gates.OpNOT, A: ok, Out: short}}) }, "output has dimension"},
		{"bad op", func() error { return ev.Batch([]gates.Call{{Op: 200, A: ok, Out: ok}}) }, "invalid gate"},
		{"duplicate outputs", func() error {
			out := tfhe.NewTLWE(n)
			return ev.Batch([]gates.Call{{Op: gates.OpNOT, A: ok, Out: out}, {Op: gates.OpAND, A: ok, B: ok, Out: out}})
		}, "calls 0 and 1 write the same output"},
		// Two *TLWE over one array are one sample, as the engines count
		// them (bootstrap.Engine): the second write overwrote the first.
		{"outputs over one array", func() error {
			out := tfhe.NewTLWE(n)
			view := &tfhe.TLWE{Value: out.Value}
			return ev.Batch([]gates.Call{{Op: gates.OpNOT, A: ok, Out: out}, {Op: gates.OpCopy, A: ok, Out: view}})
		}, "calls 0 and 1 write the same output"},
		{"MUX input", func() error { _, err := ev.MUX(ok, ok, short); return err }, "input b has dimension"},
	} {
		err := tc.err()
		if err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: got %v, want %q", tc.name, err, tc.msg)
		}
	}
	if got := o.log(); len(got) != 0 {
		t.Errorf("the engine was called on bad input: %v", got)
	}

	// On error no output is written.
	out := f.encrypt(false)[0]
	before := out.Copy()
	err := ev.Batch([]gates.Call{{Op: gates.OpNOT, A: ok, Out: out}, {Op: gates.OpAND, A: ok, Out: tfhe.NewTLWE(n)}})
	if err == nil || !slices.Equal(out.Value, before.Value) {
		t.Errorf("a failing batch wrote an output (err %v)", err)
	}
	// Engine errors come back wrapped.
	o.Close()
	ok2 := ok.Copy() // another sample: AND(ok, ok) is a copy, with no bootstrap
	if _, err := ev.AND(ok, ok2); !errors.Is(err, bootstrap.ErrClosed) {
		t.Errorf("closed engine: %v", err)
	}
	if _, err := ev.MUX(ok, ok2, ok2.Copy()); !errors.Is(err, bootstrap.ErrClosed) {
		t.Errorf("closed engine: %v", err)
	}
	// So do gates that need no bootstrap: a closed engine fails them all.
	for name, call := range map[string]func() error{
		"NOT":        func() error { _, err := ev.NOT(ok); return err },
		"Constant":   func() error { _, err := ev.Constant(true); return err },
		"AND(a, a)":  func() error { _, err := ev.AND(ok, ok); return err },
		"MUX(s,a,a)": func() error { _, err := ev.MUX(ok, ok2, ok2); return err },
		"Batch(NOT)": func() error { return ev.Batch([]gates.Call{{Op: gates.OpNOT, A: ok, Out: tfhe.NewTLWE(n)}}) },
	} {
		if err := call(); !errors.Is(err, bootstrap.ErrClosed) {
			t.Errorf("%s, closed engine: %v", name, err)
		}
	}
}

// TestEncryptHelpersZeroValues checks that the client helpers return
// errors, not panics, for an Encryptor or SecretKey made without its
// constructor: EncryptBits and EncryptUint checked only for nil, and
// dereferenced a zero Encryptor's missing key.
func TestEncryptHelpersZeroValues(t *testing.T) {
	var nilEnc *tfhe.Encryptor
	if !(&tfhe.Encryptor{}).Params().IsZero() || !nilEnc.Params().IsZero() {
		t.Error("a zero or nil Encryptor's Params is not the zero Params")
	}
	noPanic := func(name string, f func() error) {
		t.Helper()
		defer func() {
			if r := recover(); r != nil {
				t.Errorf("%s panicked: %v", name, r)
			}
		}()
		if err := f(); err == nil || !strings.Contains(err.Error(), "not initialized") {
			t.Errorf("%s: %v, want an error saying it is not initialized", name, err)
		}
	}
	noPanic("EncryptBits(zero Encryptor)", func() error {
		_, err := gates.EncryptBits(&tfhe.Encryptor{}, []bool{true})
		return err
	})
	noPanic("EncryptBits(zero Encryptor, no bits)", func() error {
		_, err := gates.EncryptBits(&tfhe.Encryptor{}, nil)
		return err
	})
	noPanic("EncryptUint(zero Encryptor)", func() error {
		_, err := gates.EncryptUint(&tfhe.Encryptor{}, 5, 4)
		return err
	})
	// A sample of dimension 0 matched a zero key's n = 0 and was
	// "decrypted" to its body.
	noPanic("DecryptBits(zero SecretKey)", func() error {
		_, err := gates.DecryptBits(&tfhe.SecretKey{}, []*tfhe.TLWE{tfhe.NewTrivialTLWE(0, tfhe.EncodeBool(true))})
		return err
	})
	noPanic("DecryptUint(zero SecretKey)", func() error {
		_, err := gates.DecryptUint(&tfhe.SecretKey{}, nil)
		return err
	})
}

func TestEncryptHelpers(t *testing.T) {
	f := fixtures(tfhe.TFHELib128)
	for _, v := range []uint64{0, 1, 0xa5, 1<<63 | 5, ^uint64(0)} {
		cts := f.encryptUint(t, v, 64)
		got, err := gates.DecryptUint(f.sk, cts)
		if err != nil || got != v {
			t.Errorf("DecryptUint(EncryptUint(%#x)) = %#x, %v", v, got, err)
		}
	}
	cts := f.encryptUint(t, 0b1101, 4)
	if got := f.decrypt(t, cts...); !slices.Equal(got, []bool{true, false, true, true}) {
		t.Errorf("EncryptUint is not little-endian: %v", got)
	}
	if _, err := gates.EncryptUint(f.enc, 0x1d, 4); err == nil || strings.Contains(err.Error(), "1d") || strings.Contains(err.Error(), "29") {
		t.Errorf("EncryptUint(0x1d, 4 bits): %v, want an error without the value", err)
	}
	if _, err := gates.EncryptUint(nil, 1, 4); err == nil || !strings.Contains(err.Error(), "EncryptUint: nil Encryptor") {
		t.Errorf("EncryptUint(nil): %v", err)
	}
	if _, err := gates.EncryptUint(f.enc, 0, 65); err == nil {
		t.Error("EncryptUint with 65 bits succeeded")
	}
	if _, err := gates.EncryptBits(nil, []bool{true}); err == nil {
		t.Error("EncryptBits(nil) succeeded")
	}
	if _, err := gates.DecryptBits(nil, cts); err == nil {
		t.Error("DecryptBits(nil key) succeeded")
	}
	if _, err := gates.DecryptBits(f.sk, []*tfhe.TLWE{cts[0], nil}); err == nil || !strings.Contains(err.Error(), "sample 1 is nil") {
		t.Errorf("DecryptBits of a nil sample: %v", err)
	}
	other := fixtures(toyParams)
	if _, err := gates.DecryptBits(other.sk, cts); err == nil || !strings.Contains(err.Error(), "dimension") {
		t.Errorf("DecryptBits with another parameter set's key: %v", err)
	}
	if _, err := gates.DecryptUint(f.sk, make([]*tfhe.TLWE, 65)); err == nil {
		t.Error("DecryptUint of 65 samples succeeded")
	}
}

// encryptInputs encrypts hex inputs in a shipped circuit's documented order.
func encryptInputs(t *testing.T, f *fixture, info circuits.Info, c *gates.Circuit, in []string) ([][]*tfhe.TLWE, [][]bool) {
	t.Helper()
	cts := make([][]*tfhe.TLWE, len(in))
	plain := make([][]bool, len(in))
	for i, s := range in {
		bits, err := gates.HexBits(s, c.Inputs()[i], info.Order)
		require.NoError(t, err)
		plain[i], cts[i] = bits, f.encrypt(bits...)
	}
	return cts, plain
}

// TestEvalCircuitOracle evaluates shipped circuits with the oracle engine in
// both XOR modes and checks the results against plaintext, one engine call
// per level.
func TestEvalCircuitOracle(t *testing.T) {
	f := fixtures(tfhe.TFHELib128)
	names := []string{"adder64", "sub64", "neg64", "zero_equal", "int_gt64_size", "adder_32bit", "FP-lt", "aes_128"}
	if testing.Short() {
		names = names[:len(names)-1]
	}
	for _, cfg := range []struct {
		mode  gates.XORMode
		tiers []int
	}{{gates.XORBootstrapped, nil}, {gates.XORLinear, nil}, {gates.XORLinear, []int{3, 10, 40}}} {
		mode := cfg.mode
		for _, name := range names {
			o := newOracle(f)
			var eng bootstrap.Engine = o
			if cfg.tiers != nil {
				eng = tieredOracle{o, cfg.tiers}
			}
			ev, _ := gates.NewEvaluator(eng)
			info, _ := circuits.Lookup(name)
			c, err := circuits.Load(name)
			require.NoError(t, err)
			cts, plain := encryptInputs(t, f, info, c, info.Example.In)
			var stats []gates.LevelStats
			out, err := ev.EvalCircuitWith(context.Background(), c, cts, gates.CircuitOptions{XOR: mode,
				Progress: func(s gates.LevelStats) { stats = append(stats, s) }})
			require.NoError(t, err)
			want, _ := c.Eval(plain...)
			for i := range out {
				got := f.decrypt(t, out[i]...)
				if h := gates.BitsHex(got, info.Order); h != info.Example.Out[i] || !slices.Equal(got, want[i]) {
					t.Errorf("%v %s: output %d = %s, want %s", mode, name, i+1, h, info.Example.Out[i])
				}
			}
			// One Bootstrap call per level with bootstraps, of the level's
			// size, and progress reports that add up to the plan.
			plan, err := ev.PlanCircuit(c, gates.CircuitOptions{XOR: mode})
			require.NoError(t, err)
			var wantCalls []string
			bs, refreshes := 0, 0
			for l, s := range stats {
				if n := s.Gates + s.Refreshes; n > 0 {
					wantCalls = append(wantCalls, fmt.Sprintf("B:%d", n))
				}
				if s.Level != l || s.Levels != plan.Levels || s.Gates+s.Refreshes > plan.MaxBatch {
					t.Errorf("%v %s: level %d stats %+v, plan %+v", mode, name, l, s, plan)
				}
				bs += s.Bootstraps
				refreshes += s.Refreshes
			}
			if mode == gates.XORBootstrapped {
				for l, lv := range c.Levels() {
					if s := stats[l]; s.Gates != len(lv.Bootstrapped) || s.Free != len(lv.Free) || s.Refreshes != 0 {
						t.Errorf("%s: level %d stats %+v, circuit level of %d + %d gates", name, l, s, len(lv.Bootstrapped), len(lv.Free))
					}
				}
				if plan.Bootstraps != c.Bootstraps() || plan.Levels != len(c.Levels()) {
					t.Errorf("%s: plan %+v, circuit %d bootstraps in %d levels", name, plan, c.Bootstraps(), len(c.Levels()))
				}
			}
			if got := o.log(); !slices.Equal(got, wantCalls) {
				t.Errorf("%v %s: %d engine calls, want %d (one per level)", mode, name, len(got), len(wantCalls))
			}
			if len(stats) != plan.Levels || bs != plan.Bootstraps || refreshes != plan.Refreshes {
				t.Errorf("%v %s: %d progress reports, %d bootstraps, %d refreshes; plan %+v", mode, name, len(stats), bs, refreshes, plan)
			}
			// The inputs are untouched.
			for i := range cts {
				if got := f.decrypt(t, cts[i]...); !slices.Equal(got, plain[i]) {
					t.Errorf("%v %s: input %d changed", mode, name, i+1)
				}
			}
		}
	}
}

func TestEvalCircuitErrors(t *testing.T) {
	f := fixtures(tfhe.TFHELib128)
	ev, _ := gates.NewEvaluator(newOracle(f))
	c, _ := circuits.Load("adder64")
	a, b := f.encryptUint(t, 1, 64), f.encryptUint(t, 2, 64)
	ctx := context.Background()
	if _, err := ev.EvalCircuit(ctx, nil, nil, nil); err == nil {
		t.Error("nil circuit accepted")
	}
	if _, err := ev.EvalCircuit(ctx, c, [][]*tfhe.TLWE{a}, nil); err == nil {
		t.Error("one input value accepted")
	}
	if _, err := ev.EvalCircuit(ctx, c, [][]*tfhe.TLWE{a, b[:63]}, nil); err == nil {
		t.Error("63-bit input accepted")
	}
	bad := slices.Clone(b)
	bad[7] = tfhe.NewTLWE(3)
	if _, err := ev.EvalCircuit(ctx, c, [][]*tfhe.TLWE{a, bad}, nil); err == nil || !strings.Contains(err.Error(), "input 2 bit 7 has dimension 3") {
		t.Errorf("bad sample: %v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	levels := 0
	_, err := ev.EvalCircuit(cctx, c, [][]*tfhe.TLWE{a, b}, func(s gates.LevelStats) {
		if levels++; levels == 3 {
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) || levels != 3 {
		t.Errorf("cancelled after 3 levels: %v after %d levels", err, levels)
	}
}

// TestEvalCircuitPassThrough evaluates a circuit whose output is an input
// wire and one with constants: the outputs must be fresh samples.
func TestEvalCircuitPassThrough(t *testing.T) {
	f := fixtures(tfhe.TFHELib128)
	ev, _ := gates.NewEvaluator(newOracle(f))
	// Wires 0, 1 are inputs; 2 = ONE, 3 = w0 ∧ w2, 4 = ¬w3. The output is
	// the last four wires: 1 (an input wire), 2, 3, 4.
	c, err := gates.Parse(strings.NewReader("3 5\n1 2\n1 4\n\n1 1 1 2 EQ\n2 1 0 2 3 AND\n1 1 3 4 INV\n"))
	require.NoError(t, err)
	for x := range 4 {
		in := f.encrypt(x&1 == 1, x&2 != 0)
		out, err := ev.EvalCircuit(context.Background(), c, [][]*tfhe.TLWE{in}, nil)
		require.NoError(t, err)
		if out[0][0] == in[1] {
			t.Error("an input sample was returned as an output")
		}
		want := []bool{x&2 != 0, true, x&1 == 1, x&1 == 0}
		if got := f.decrypt(t, out[0]...); !slices.Equal(got, want) {
			t.Errorf("inputs %02b: %v, want %v", x, got, want)
		}
	}
}

// tieredOracle is the oracle engine reporting batch tiers, so that the
// evaluator fills levels to them and prepares each next level early.
type tieredOracle struct {
	*oracle
	tiers []int
}

func (o tieredOracle) BatchTiers() []int { return o.tiers }

// groupedOracle is the oracle engine saying its key has grouping g.
type groupedOracle struct {
	*oracle
	g int
}

func (o groupedOracle) Grouping() int { return o.g }

// TestDefaultMaxXORTerms checks the default sum size against the noise
// model for each key grouping, and that PlanCircuit reports it, on
// AES-128, whose sums reach the bound (adder64's, its carries MAJ gates,
// stay at three terms).
func TestDefaultMaxXORTerms(t *testing.T) {
	f := fixtures(tfhe.TFHELib128)
	c, err := circuits.Load("aes_128")
	require.NoError(t, err)
	for _, tc := range []struct {
		eng  bootstrap.Engine
		g    int // grouping the model should use
		want int // 0: whatever the model gives
	}{
		{groupedOracle{newOracle(f), 1}, 1, 16}, // 2^-71 at 16 terms: the cap
		{groupedOracle{newOracle(f), 2}, 2, 9},
		{newOracle(f), tfhe.MaxGrouping, 0}, // grouping unknown: the noisiest
		// An engine from outside saying a factor no key has: the noisiest
		// too (7 used to panic in the noise model).
		{groupedOracle{newOracle(f), 7}, tfhe.MaxGrouping, 0},
		{groupedOracle{newOracle(f), -1}, tfhe.MaxGrouping, 0},
	} {
		ev, _ := gates.NewEvaluator(tc.eng)
		w := ev.DefaultMaxXORTerms()
		e := tfhe.TFHELib128.NoiseEstimateGrouped(tc.g)
		if (tc.want != 0 && w != tc.want) || e.Log2XORSumFailure(w) > gates.DefaultXORFailureLog2 ||
			(w < 16 && e.Log2XORSumFailure(w+1) <= gates.DefaultXORFailureLog2) {
			t.Errorf("grouping %d: DefaultMaxXORTerms %d (failure 2^%.1f), want %d", tc.g, w, e.Log2XORSumFailure(w), tc.want)
		}
		plan, err := ev.PlanCircuit(c, gates.CircuitOptions{})
		if err != nil || plan.XOR != gates.XORLinear || plan.MaxXORTerms != w || plan.LargestSum != w || plan.Log2Failure != e.Log2XORSumFailure(w) {
			t.Errorf("grouping %d: PlanCircuit = %+v, %v", tc.g, plan, err)
		}
		classic, err := ev.PlanCircuit(c, gates.CircuitOptions{XOR: gates.XORBootstrapped})
		if err != nil || classic.Bootstraps != c.Bootstraps() || classic.Log2Failure != e.Log2GateFailure || plan.Bootstraps >= classic.Bootstraps {
			t.Errorf("grouping %d: XORBootstrapped plan %+v, linear %+v, %v", tc.g, classic, plan, err)
		}
	}
}

func TestEvalCircuitOptionErrors(t *testing.T) {
	f := fixtures(tfhe.TFHELib128)
	ev, _ := gates.NewEvaluator(newOracle(f))
	c, _ := circuits.Load("adder64")
	in := [][]*tfhe.TLWE{f.encryptUint(t, 1, 64), f.encryptUint(t, 2, 64)}
	ctx := context.Background()
	for _, opts := range []gates.CircuitOptions{{MaxXORTerms: 1}, {MaxXORTerms: -3}, {XOR: 7}} {
		if _, err := ev.EvalCircuitWith(ctx, c, in, opts); err == nil {
			t.Errorf("EvalCircuitWith accepted %+v", opts)
		}
		if _, err := ev.PlanCircuit(c, opts); err == nil {
			t.Errorf("PlanCircuit accepted %+v", opts)
		}
	}
	if _, err := ev.PlanCircuit(nil, gates.CircuitOptions{}); err == nil {
		t.Error("PlanCircuit accepted a nil circuit")
	}
	var zero gates.Evaluator
	if _, err := zero.PlanCircuit(c, gates.CircuitOptions{}); !errors.Is(err, gates.ErrNoEvaluator) || zero.DefaultMaxXORTerms() != 0 {
		t.Errorf("zero Evaluator: %v", err)
	}
	if s := gates.XORMode(7).String(); s != "XORMode(7)" || gates.XORLinear.String() != "linear" {
		t.Errorf("XORMode strings: %q", s)
	}
}

// TestEvalCircuitLinearAllOps evaluates, under encryption with the oracle
// engine, a circuit with every kind of gate — MUX and two-input gates on
// negated inputs, XOR sums and their complements, constants — for all 16
// inputs, with linear XOR (levels filled to tiers or not) and bootstrapped
// XOR, against plaintext.
func TestEvalCircuitLinearAllOps(t *testing.T) {
	f := fixtures(tfhe.TFHELib128)
	g := func(op gates.Op, out int, in ...int) gates.Gate {
		x := gates.Gate{Op: op, Out: out}
		copy(x.In[:], in)
		return x
	}
	// Inputs 0–3.
	gs := []gates.Gate{
		g(gates.OpXOR, 4, 0, 1), g(gates.OpNOT, 5, 2), g(gates.OpXNOR, 6, 4, 3), g(gates.OpOne, 7),
		g(gates.OpAND, 8, 4, 5), g(gates.OpMUX, 9, 6, 5, 4), g(gates.OpORYN, 10, 6, 7), g(gates.OpNAND, 11, 9, 10),
		g(gates.OpXOR, 12, 8, 11), g(gates.OpMUX, 13, 5, 12, 7), g(gates.OpANDNY, 14, 12, 6), g(gates.OpXOR, 15, 14, 13),
		g(gates.OpNOR, 16, 15, 5), g(gates.OpXOR, 17, 16, 16), g(gates.OpZero, 18),
		// Outputs 19–24.
		g(gates.OpCopy, 19, 15), g(gates.OpNOT, 20, 12), g(gates.OpCopy, 21, 16), g(gates.OpCopy, 22, 17),
		g(gates.OpCopy, 23, 1), g(gates.OpNOT, 24, 18),
	}
	c, err := gates.NewCircuit(gates.BristolFashion, 25, []int{4}, []int{6}, gs)
	require.NoError(t, err)
	for _, cfg := range []struct {
		opts  gates.CircuitOptions
		tiers []int
	}{{gates.CircuitOptions{}, nil}, {gates.CircuitOptions{}, []int{1, 2}}, {gates.CircuitOptions{MaxXORTerms: 2}, []int{2}},
		{gates.CircuitOptions{XOR: gates.XORBootstrapped}, nil}} {
		var eng bootstrap.Engine = newOracle(f)
		if cfg.tiers != nil {
			eng = tieredOracle{newOracle(f), cfg.tiers}
		}
		ev, _ := gates.NewEvaluator(eng)
		for x := range 16 {
			in := gates.Uint64Bits(uint64(x), 4)
			want, _ := c.Eval(in)
			out, err := ev.EvalCircuitWith(context.Background(), c, [][]*tfhe.TLWE{f.encrypt(in...)}, cfg.opts)
			require.NoError(t, err)
			if got := f.decrypt(t, out[0]...); !slices.Equal(got, want[0]) {
				t.Errorf("%+v tiers %v, input %04b: %v, want %v", cfg.opts, cfg.tiers, x, got, want[0])
			}
		}
	}
}

// TestPlanFailureOfItsSums: under XORLinear a plan's failure estimate is
// that of the largest sum it bootstraps, not of the bound on sums: a
// circuit without XOR sums (zero_equal) estimates a gate's failure at any
// bound, and one with sums (adder64) reports a largest sum within it, and
// the failure of that sum or of its MAJ gates (its carries, fuseMajorities),
// whichever is worse.
func TestPlanFailureOfItsSums(t *testing.T) {
	f := fixtures(tfhe.TFHELib128)
	ev, _ := gates.NewEvaluator(groupedOracle{newOracle(f), 2})
	e := tfhe.TFHELib128.NoiseEstimateGrouped(2)
	noXOR, _ := circuits.Load("zero_equal")
	for _, terms := range []int{2, 9, 40} {
		plan, err := ev.PlanCircuit(noXOR, gates.CircuitOptions{MaxXORTerms: terms})
		if err != nil || plan.LargestSum != 0 || plan.Log2Failure != e.Log2GateFailure {
			t.Errorf("zero_equal, at most %d terms: largest sum %d, failure 2^%.1f (%v); want 0 and a gate's 2^%.1f",
				terms, plan.LargestSum, plan.Log2Failure, err, e.Log2GateFailure)
		}
	}
	adder, _ := circuits.Load("adder64")
	for _, terms := range []int{2, 9, 40} {
		plan, err := ev.PlanCircuit(adder, gates.CircuitOptions{MaxXORTerms: terms})
		if err != nil || plan.LargestSum < 2 || plan.LargestSum > terms || plan.Log2Failure != max(e.Log2XORSumFailure(plan.LargestSum), e.Log2MajorityFailure(0)) {
			t.Errorf("adder64, at most %d terms: largest sum %d, failure 2^%.1f (%v)", terms, plan.LargestSum, plan.Log2Failure, err)
		}
		t.Logf("adder64, at most %d terms: largest sum %d, failure 2^%.1f", terms, plan.LargestSum, plan.Log2Failure)
	}
}

// TestGateOnOneSample: a gate whose inputs are one sample twice is the gate
// of that sample alone, with no bootstrap reading it twice (whose error
// would be twice the sample's): AND(a, a) is a copy of a, XOR(a, a) the
// constant 0, MUX(s, s, c) the OR of s and c, one bootstrap. The caller's
// calls stay as given.
func TestGateOnOneSample(t *testing.T) {
	f := fixtures(toyParams)
	o := newOracle(f)
	ev, err := gates.NewEvaluator(o)
	require.NoError(t, err)
	for _, a := range []bool{false, true} {
		ca := f.encrypt(a)[0]
		for _, op := range []gates.Op{gates.OpAND, gates.OpNAND, gates.OpOR, gates.OpNOR, gates.OpXOR, gates.OpXNOR,
			gates.OpANDNY, gates.OpANDYN, gates.OpORNY, gates.OpORYN} {
			out, err := ev.Gate(op, ca, ca)
			require.NoError(t, err)
			if got, want := f.decrypt(t, out)[0], op.Eval(a, a, false); got != want {
				t.Errorf("%v(%v, same sample) = %v, want %v", op, a, got, want)
			}
			if l := o.log(); len(l) != 0 {
				t.Errorf("%v(%v, same sample) called the engine: %v", op, a, l)
			}
		}
		for _, c := range []bool{false, true} {
			cc := f.encrypt(c)[0]
			calls := []gates.Call{{Op: gates.OpMUX, A: ca, B: ca, C: cc, Out: tfhe.NewTLWE(toyParams.LWEDimension())}}
			require.NoError(t, ev.Batch(calls))
			if got := f.decrypt(t, calls[0].Out)[0]; got != (a || c) {
				t.Errorf("MUX(%v, %v, %v) = %v", a, a, c, got)
			}
			if l := o.log(); !slices.Equal(l, []string{"B:1"}) {
				t.Errorf("MUX(s, s, c): engine calls %v, want one bootstrap (OR)", l)
			}
			if calls[0].Op != gates.OpMUX || calls[0].B != ca {
				t.Errorf("Batch changed the caller's call to %v", calls[0].Op)
			}
		}
	}
}

// TestGateOnCopies: copies made apart are one sample too. A copy, a NOT
// computed outside, a sample decoded twice, the outputs of one gate in two
// calls and an input equal to a Constant: each gate of them is the gate of
// its distinct samples, with no bootstrap reading a sample twice.
func TestGateOnCopies(t *testing.T) {
	f := fixtures(toyParams)
	o := newOracle(f)
	ev, err := gates.NewEvaluator(o)
	require.NoError(t, err)
	n := toyParams.LWEDimension()
	for _, a := range []bool{false, true} {
		ca, cb := f.encrypt(a)[0], f.encrypt(!a)[0]
		neg := tfhe.NewTLWE(n)
		tfhe.NegTLWETo(neg, ca)
		enc, _ := ca.MarshalBinary()
		decoded := new(tfhe.TLWE)
		require.NoError(t, decoded.UnmarshalBinary(enc))
		one, _ := ev.Constant(true)
		zero, _ := ev.Constant(false)
		o.log()
		for _, tc := range []struct {
			name    string
			op      gates.Op
			in      []*tfhe.TLWE
			want    bool
			engines []string // the engine calls it makes
		}{
			{"AND(a, copy of a)", gates.OpAND, []*tfhe.TLWE{ca, ca.Copy()}, a, nil},
			{"XOR(a, a decoded)", gates.OpXOR, []*tfhe.TLWE{ca, decoded}, false, nil},
			{"AND(a, ¬a made apart)", gates.OpAND, []*tfhe.TLWE{ca, neg}, false, nil},
			{"AND(a, true)", gates.OpAND, []*tfhe.TLWE{ca, one}, a, nil},
			{"OR(a, false)", gates.OpOR, []*tfhe.TLWE{ca, zero}, a, nil},
			{"MUX(true, a, b)", gates.OpMUX, []*tfhe.TLWE{one, ca, cb}, a, nil},
			{"MUX(s, a, copy of a)", gates.OpMUX, []*tfhe.TLWE{cb, ca, ca.Copy()}, a, nil},
			{"MUX(a, copy of a, b)", gates.OpMUX, []*tfhe.TLWE{ca, ca.Copy(), cb}, a || !a, []string{"B:1"}},
			{"MAJ(a, copy of a, b)", gates.OpMAJ, []*tfhe.TLWE{ca, ca.Copy(), cb}, a, nil},
			{"MAJ(a, b, ¬a made apart)", gates.OpMAJ, []*tfhe.TLWE{ca, cb, neg}, !a, nil},
			{"MAJ(a, b, true)", gates.OpMAJ, []*tfhe.TLWE{ca, cb, one}, a || !a, []string{"B:1"}},
			{"MAJ(false, a, b)", gates.OpMAJ, []*tfhe.TLWE{zero, ca, cb}, a && !a, []string{"B:1"}},
			{"MAJ(true, a, false)", gates.OpMAJ, []*tfhe.TLWE{one, ca, zero}, a, nil},
		} {
			out, err := ev.Gate(tc.op, tc.in...)
			require.NoError(t, err)
			if got := f.decrypt(t, out)[0]; got != tc.want {
				t.Errorf("%s, a = %v: %v, want %v", tc.name, a, got, tc.want)
			}
			if l := o.log(); !slices.Equal(l, tc.engines) {
				t.Errorf("%s: engine calls %v, want %v", tc.name, l, tc.engines)
			}
		}
	}
	// The outputs of one gate on the same samples in two calls, on a
	// deterministic engine, are one sample: their XNOR is the constant 1,
	// a noiseless sample.
	cpu := f.cpuEvaluator(t)
	in := f.encrypt(true, true)
	g1, _ := cpu.AND(in[0], in[1])
	g2, _ := cpu.AND(in[0], in[1])
	x, err := cpu.XNOR(g1, g2)
	if err != nil || !slices.Equal(g1.Value, g2.Value) {
		t.Fatalf("AND twice on the CPU engine: equal %v, %v", slices.Equal(g1.Value, g2.Value), err)
	}
	one, _ := cpu.Constant(true)
	if !slices.Equal(x.Value, one.Value) {
		t.Errorf("XNOR of one gate's two outputs is not the constant 1 (decrypts to %v)", f.decrypt(t, x)[0])
	}
}

// TestPlanEvalFailure: a plan's Log2EvalFailure is the union bound over
// its bootstraps, every instance's, of its per-bootstrap Log2Failure (the
// README's AES-128 figures: 2^−66 and 2^−52 grouped by 2).
func TestPlanEvalFailure(t *testing.T) {
	f := fixtures(tfhe.TFHELib128)
	ev, _ := gates.NewEvaluator(groupedOracle{newOracle(f), 2})
	aes, err := circuits.Load("aes_128")
	require.NoError(t, err)
	for _, instances := range []int{1, 64} {
		plan, err := ev.PlanCircuits(aes, instances, gates.CircuitOptions{})
		require.NoError(t, err)
		want := math.Log2(float64(plan.Bootstraps)) + plan.Log2Failure
		t.Logf("aes128, %d instances: %d bootstraps, 2^%.2f per bootstrap, 2^%.2f per evaluation", instances, plan.Bootstraps, plan.Log2Failure, plan.Log2EvalFailure())
		if got := plan.Log2EvalFailure(); math.Abs(got-want) > 1e-9 {
			t.Errorf("aes128, %d instances: Log2EvalFailure 2^%v, want 2^%v", instances, got, want)
		}
		if instances == 1 && (math.Round(plan.Log2Failure) != -66 || math.Round(plan.Log2EvalFailure()) != -52) {
			t.Errorf("aes128: 2^%.1f per bootstrap and 2^%.1f per block, README says 2^-66 and 2^-52", plan.Log2Failure, plan.Log2EvalFailure())
		}
	}
	if got := (gates.CircuitPlan{Log2Failure: -10}).Log2EvalFailure(); !math.IsInf(got, -1) {
		t.Errorf("no bootstraps: 2^%v, want 2^-Inf", got)
	}
	if got := (gates.CircuitPlan{Bootstraps: 1 << 20, Log2Failure: -10}).Log2EvalFailure(); got != 0 {
		t.Errorf("2^20 bootstraps at 2^-10: 2^%v, want at most 2^0", got)
	}
}
