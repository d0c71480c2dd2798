package main

import (
	"math/rand/v2"
	"testing"

	"github.com/goldfhe/goldfhe/bootstrap"
	"github.com/goldfhe/goldfhe/gates"
	"github.com/goldfhe/goldfhe/tfhe"
	"github.com/stretchr/testify/require"
)

// TestLookupCircuit evaluates the lookup circuit in plaintext against the
// table's lookup, for narrow tables (full ones, one record, odd widths) and
// wide ones, and XOR sums shaped for several bounds.
func TestLookupCircuit(t *testing.T) {
	for _, tc := range []struct{ n, kb, vb int }{
		{1, 1, 1}, {2, 1, 3}, {1, 4, 4}, {5, 3, 8}, {8, 3, 5}, {16, 4, 16},
		{32, 16, 16}, {40, 12, 32}, {64, 16, 64}, {3, 64, 64}, {20, 33, 7},
	} {
		tb, err := generateTable(tc.n, tc.kb, tc.vb, uint64(tc.n*100+tc.kb))
		require.NoError(t, err)
		c, err := lookupCircuit(tb)
		require.NoErrorf(t, err, "%v", tc)
		if got, most := c.Count(gates.OpAND), tc.n*(tc.kb-1); got > most {
			t.Errorf("%v: %d ANDs, more than a tree per record (%d)", tc, got, most)
		}
		checkLookup(t, tb, c)
		if got, most := c.NumWires(), lookupWires(tb); got > most {
			t.Errorf("%v: %d wires, more than lookupWires' %d", tc, got, most)
		}
	}
}

// checkLookup fails t unless c gives tb's lookup on every key of a narrow
// table, and on the records' keys, their neighbours and random keys of a
// wide one.
func checkLookup(t *testing.T, tb *table, c *gates.Circuit) {
	t.Helper()
	var keys []uint64
	if tb.keyBits <= 8 {
		for k := range uint64(1) << tb.keyBits {
			keys = append(keys, k)
		}
	} else {
		r := rand.New(rand.NewPCG(1, 2))
		for _, rec := range tb.records {
			keys = append(keys, rec.key, rec.key^1, r.Uint64()&mask(tb.keyBits))
		}
	}
	for _, key := range keys {
		out, err := c.Eval(gates.Uint64Bits(key, tb.keyBits))
		require.NoError(t, err)
		if got, want := gates.BitsUint64(out[0]), valueOf(tb.lookup(key)); got != want {
			t.Fatalf("%d records of %d → %d bits: key %x gives %x, the table %x",
				len(tb.records), tb.keyBits, tb.valueBits, key, got, want)
		}
	}
}

// valueOf returns a lookup's value.
func valueOf(v uint64, _ int) uint64 { return v }

// TestLookupRefreshes: the plan refreshes the circuit's balanced XOR
// trees at most 2% more than ⌈(T−1)/(m−1)⌉ for each output bit of T > 1
// terms, the fewest without sums shared between bits, m being the
// evaluator's bound (DefaultMaxXORTerms): the planner sums an XOR tree as a
// whole, whatever its shape. For CuFHE80 keys of each grouping (so each
// bound), which are quick to make.
func TestLookupRefreshes(t *testing.T) {
	sk, err := tfhe.GenerateSecretKey(tfhe.CuFHE80)
	require.NoError(t, err)
	tb, err := generateTable(256, 16, 16, 1)
	require.NoError(t, err)
	for g := 1; g <= tfhe.MaxGrouping; g++ {
		ck, err := tfhe.GenerateCloudKey(sk, tfhe.WithGrouping(g))
		require.NoError(t, err)
		eng, err := bootstrap.NewCPU(ck, bootstrap.CPUOptions{Workers: 1})
		require.NoError(t, err)
		defer eng.Close()
		ev, err := gates.NewEvaluator(eng)
		require.NoError(t, err)
		m := ev.DefaultMaxXORTerms()
		fewest := 0
		for i := range tb.valueBits {
			terms := 0
			for _, r := range tb.records {
				terms += int(r.value >> i & 1)
			}
			if terms > 1 {
				fewest += (terms - 2 + m - 1) / (m - 1)
			}
		}
		c, err := lookupCircuit(tb)
		require.NoError(t, err)
		plan, err := ev.PlanCircuit(c, gates.CircuitOptions{})
		require.NoError(t, err)
		t.Logf("grouping %d, %d terms: %d refreshes, %d at least", g, m, plan.Refreshes, fewest)
		if plan.Refreshes > fewest*102/100 {
			t.Errorf("grouping %d, %d terms: %d refreshes, more than 2%% above %d", g, m, plan.Refreshes, fewest)
		}
	}
}
