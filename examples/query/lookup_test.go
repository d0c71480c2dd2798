package main

import (
	"math/rand/v2"
	"testing"

	"github.com/goldfhe/goldfhe/gates"
)

// TestLookupCircuit evaluates the lookup circuit in plaintext on every key
// of narrow tables (full ones, one record, odd widths) and on the records'
// keys and random keys of wide ones, against the table's lookup.
func TestLookupCircuit(t *testing.T) {
	for _, tc := range []struct{ n, kb, vb int }{
		{1, 1, 1}, {2, 1, 3}, {1, 4, 4}, {5, 3, 8}, {8, 3, 5}, {16, 4, 16},
		{32, 16, 16}, {40, 12, 32}, {64, 16, 64}, {3, 64, 64}, {20, 33, 7},
	} {
		tb, err := generateTable(tc.n, tc.kb, tc.vb, uint64(tc.n*100+tc.kb))
		if err != nil {
			t.Fatal(err)
		}
		c, err := lookupCircuit(tb)
		if err != nil {
			t.Fatalf("%v: %v", tc, err)
		}
		if got, want := c.Count(gates.OpAND), tc.n*(tc.kb-1); got > want {
			t.Errorf("%v: %d ANDs, more than a tree per record (%d)", tc, got, want)
		}
		keys := []uint64{}
		if tc.kb <= 8 {
			for k := range uint64(1) << tc.kb {
				keys = append(keys, k)
			}
		} else {
			r := rand.New(rand.NewPCG(1, 2))
			for _, rec := range tb.records {
				keys = append(keys, rec.key, rec.key^1, r.Uint64()&mask(tc.kb))
			}
		}
		for _, key := range keys {
			out, err := c.Eval(gates.Uint64Bits(key, tc.kb))
			if err != nil {
				t.Fatal(err)
			}
			if got, want := gates.BitsUint64(out[0]), valueOf(tb.lookup(key)); got != want {
				t.Fatalf("%v: key %x gives %x, the table %x", tc, key, got, want)
			}
		}
	}
}

// valueOf returns a lookup's value.
func valueOf(v uint64, _ int) uint64 { return v }
