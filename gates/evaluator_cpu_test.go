package gates_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/goldfhe/goldfhe/gates"
	"github.com/goldfhe/goldfhe/gates/circuits"
	"github.com/goldfhe/goldfhe/tfhe"
	"github.com/stretchr/testify/require"
)

// TestGatesCPU checks the truth table of every gate under encryption on the
// CPU engine, all gates of a set in one mixed batch, then once more on the
// results (bootstrapped samples as inputs).
func TestGatesCPU(t *testing.T) {
	for _, p := range heavySets(t) {
		t.Run(p.Name(), func(t *testing.T) {
			f := fixtures(p)
			ev := f.cpuEvaluator(t)
			calls, want, names := truthTableCalls(f, allOps)
			start := time.Now()
			require.NoError(t, ev.Batch(calls))
			t.Logf("%s: %d gates in one batch, %v", ev.Engine().Name(), len(calls), time.Since(start))
			checkCalls(t, f, calls, want, names)

			// Second round: XOR and MUX of first-round outputs.
			var next []gates.Call
			var nwant []bool
			var nnames []string
			for i := 0; i+2 < len(calls); i += 3 {
				a, b, c := calls[i].Out, calls[i+1].Out, calls[i+2].Out
				next = append(next,
					gates.Call{Op: gates.OpXOR, A: a, B: b, Out: tfhe.NewTLWE(p.LWEDimension())},
					gates.Call{Op: gates.OpMUX, A: a, B: b, C: c, Out: tfhe.NewTLWE(p.LWEDimension())})
				nwant = append(nwant, want[i] != want[i+1], gates.OpMUX.Eval(want[i], want[i+1], want[i+2]))
				nnames = append(nnames, fmt.Sprintf("XOR(%s, %s)", names[i], names[i+1]),
					fmt.Sprintf("MUX(%s, %s, %s)", names[i], names[i+1], names[i+2]))
				if testing.Short() && len(next) >= 8 {
					break
				}
			}
			require.NoError(t, ev.Batch(next))
			checkCalls(t, f, next, nwant, nnames)
		})
	}
}

// TestGatesCPUGrouped checks the truth table of every gate on the CPU
// engine with a grouped bootstrapping key (tfhe.WithGrouping(2)).
func TestGatesCPUGrouped(t *testing.T) {
	for _, p := range heavySets(t) {
		t.Run(p.Name(), func(t *testing.T) {
			f := fixtures(p)
			ev := f.cpuGroupedEvaluator(t)
			calls, want, names := truthTableCalls(f, allOps)
			require.NoError(t, ev.Batch(calls))
			checkCalls(t, f, calls, want, names)
		})
	}
}

// TestAdder8CPU runs an encrypted 8-bit adder built from gates and compares
// with plaintext addition.
func TestAdder8CPU(t *testing.T) {
	p := heavySets(t)[0]
	f := fixtures(p)
	ev := f.cpuEvaluator(t)
	rng := rand.New(rand.NewPCG(7, 8))
	pairs := [][2]uint64{{rng.Uint64N(256), rng.Uint64N(256)}}
	if !testing.Short() {
		pairs = append(pairs, [2]uint64{255, 1}, [2]uint64{255, 255})
	}
	for _, pr := range pairs {
		start := time.Now()
		sum, err := ev.AddUint(f.encryptUint(t, pr[0], 8), f.encryptUint(t, pr[1], 8))
		require.NoError(t, err)
		got, err := gates.DecryptUint(f.sk, sum)
		require.NoError(t, err)
		t.Logf("%s: %d + %d = %d (16 bootstraps, %v)", p.Name(), pr[0], pr[1], got, time.Since(start))
		if got != pr[0]+pr[1] {
			t.Errorf("%d + %d = %d under encryption", pr[0], pr[1], got)
		}
	}
}

// TestCircuitsCPU evaluates Bristol circuits under encryption on the CPU
// engine (a bootstrap costs tens of milliseconds per core): zero_equal once
// under -short, and adder64, sub64, neg64, zero_equal and the signed
// comparator on random and edge inputs otherwise (1,469 bootstraps with
// XOR linear and the adders' carries as MAJ gates).
func TestCircuitsCPU(t *testing.T) {
	p := heavySets(t)[0]
	f := fixtures(p)
	ev := f.cpuEvaluator(t)
	rng := rand.New(rand.NewPCG(9, 10))
	r := rng.Uint64
	type vec []uint64
	cases := []struct {
		name string
		in   []vec
	}{
		{"zero_equal", []vec{{0}, {r()}}},
		{"neg64", []vec{{0}, {r()}}},
		{"adder64", []vec{{^uint64(0), 1}, {r(), r()}}},
		{"sub64", []vec{{0, 1}, {r(), r()}}},
		{"int_gt64_size", []vec{{1 << 63, 1<<63 - 1}, {7, 7}, {r(), r()}}},
	}
	if testing.Short() {
		cases = cases[:1]
		cases[0].in = cases[0].in[1:]
	}
	for _, tc := range cases {
		c, err := circuits.Load(tc.name)
		require.NoError(t, err)
		for _, in := range tc.in {
			cts := make([][]*tfhe.TLWE, len(in))
			plain := make([][]bool, len(in))
			for i, v := range in {
				plain[i] = gates.Uint64Bits(v, c.Inputs()[i])
				cts[i] = f.encrypt(plain[i]...)
			}
			start := time.Now()
			out, err := ev.EvalCircuit(context.Background(), c, cts, nil)
			require.NoError(t, err)
			el := time.Since(start)
			want, _ := c.Eval(plain...)
			got := f.decrypt(t, out[0]...)
			plan, _ := ev.PlanCircuit(c, gates.CircuitOptions{})
			t.Logf("%s %s(%#x) = %#x: %d levels, %d bootstraps (%d refreshes), %v", p.Name(), tc.name, in, gates.BitsUint64(got), plan.Levels-1, plan.Bootstraps, plan.Refreshes, el)
			if !slices.Equal(got, want[0]) {
				t.Errorf("%s(%#x) = %#x under encryption, %#x in plaintext", tc.name, in, gates.BitsUint64(got), gates.BitsUint64(want[0]))
			}
		}
	}
}

// xorTreeCircuit is a circuit whose XOR sums hold many bootstrapped
// samples: inputs a and b of 8 bits; g_i = a_i ∧ b_i; s = g_0 ⊕ … ⊕ g_7;
// u = (s ⊕ a_0) ∧ b_1; outputs s, ¬s, u and a_2 ⊕ b_3 (a sum of inputs).
func xorTreeCircuit(t testing.TB) *gates.Circuit {
	var gs []gates.Gate
	w := 16
	gate := func(op gates.Op, in ...int) int {
		g := gates.Gate{Op: op, Out: w}
		copy(g.In[:], in)
		gs = append(gs, g)
		w++
		return w - 1
	}
	var and [8]int
	for i := range and {
		and[i] = gate(gates.OpAND, i, 8+i)
	}
	s := and[0]
	for _, x := range and[1:] {
		s = gate(gates.OpXOR, s, x)
	}
	u := gate(gates.OpAND, gate(gates.OpXOR, s, 0), 9)
	x := gate(gates.OpXNOR, 2, 11)
	gate(gates.OpCopy, s)
	gate(gates.OpNOT, s)
	gate(gates.OpCopy, u)
	gate(gates.OpNOT, x)
	c, err := gates.NewCircuit(gates.BristolFashion, w, []int{8, 8}, []int{4}, gs)
	require.NoError(t, err)
	return c
}

// TestLinearXORCPU evaluates sums of up to 8 bootstrapped samples on the CPU
// engine, with the default MaxXORTerms, with 3 (sums refreshed on the way)
// and with every XOR bootstrapped: the same bits as in plaintext.
func TestLinearXORCPU(t *testing.T) {
	f := fixtures(heavySets(t)[0])
	ev := f.cpuEvaluator(t)
	c := xorTreeCircuit(t)
	rng := rand.New(rand.NewPCG(11, 12))
	rounds := 3
	if testing.Short() {
		rounds = 1
	}
	for _, opts := range []gates.CircuitOptions{{}, {MaxXORTerms: 3}, {XOR: gates.XORBootstrapped}} {
		plan, err := ev.PlanCircuit(c, opts)
		require.NoError(t, err)
		for range rounds {
			a, b := rng.Uint64()&0xff, rng.Uint64()&0xff
			in := [][]bool{gates.Uint64Bits(a, 8), gates.Uint64Bits(b, 8)}
			want, _ := c.Eval(in...)
			start := time.Now()
			out, err := ev.EvalCircuitWith(context.Background(), c, [][]*tfhe.TLWE{f.encrypt(in[0]...), f.encrypt(in[1]...)}, opts)
			require.NoError(t, err)
			t.Logf("%v, %d terms: %d bootstraps (%d refreshes) in %d levels, %v", opts.XOR, plan.MaxXORTerms, plan.Bootstraps, plan.Refreshes, plan.Levels, time.Since(start))
			if got := f.decrypt(t, out[0]...); !slices.Equal(got, want[0]) {
				t.Errorf("%+v: a=%#x b=%#x: %v under encryption, %v in plaintext", opts, a, b, got, want[0])
			}
		}
	}
}
