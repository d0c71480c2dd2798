package gates_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/goldfhe/goldfhe/gates"
	"github.com/goldfhe/goldfhe/tfhe"
	"github.com/stretchr/testify/require"
)

// evalXORTrees evaluates random circuits rich in XOR trees
// (gates.RandomXORTreeCircuit) on ev at each of terms (0: the default) on
// random inputs: the decryptions are Eval's bits.
func evalXORTrees(t *testing.T, f *fixture, ev *gates.Evaluator, circuits, sets int, terms []int, seed uint64) {
	t.Helper()
	for i := range circuits {
		rng := rand.New(rand.NewPCG(seed, uint64(i)))
		c := gates.RandomXORTreeCircuit(rng)
		for _, m := range terms {
			opts := gates.CircuitOptions{MaxXORTerms: m}
			tag := fmt.Sprintf("circuit %d (%v), %d terms", i, c, m)
			cts, plain := randomSets(f, c, sets, rng)
			out, err := ev.EvalCircuits(context.Background(), c, cts, opts)
			require.NoErrorf(t, err, "%s", tag)
			for k := range sets {
				want, _ := c.Eval(plain[k]...)
				for j := range want {
					if got := f.decrypt(t, out[k][j]...); !slices.Equal(got, want[j]) {
						t.Fatalf("%s: set %d output %d = %v, want %v", tag, k+1, j+1, got, want[j])
					}
				}
			}
		}
	}
}

// TestXORTreeRandomOracle: random circuits rich in XOR trees on the oracle
// engine, which refuses a phase near 0 or 1/2 (a refresh's constant wrong
// for its terms).
func TestXORTreeRandomOracle(t *testing.T) {
	f := fixtures(tfhe.TFHELib128)
	ev, _ := gates.NewEvaluator(newOracle(f))
	n := 200
	if testing.Short() {
		n = 40
	}
	evalXORTrees(t, f, ev, n, 3, []int{2, 3, 5, 9, 16}, 31)
}

// TestXORTreeRandomCPU: a few random circuits rich in XOR trees on the CPU
// engine (the toy set under -race -short), at the default bound and at 3.
func TestXORTreeRandomCPU(t *testing.T) {
	f := fixtures(heavySets(t)[0])
	n := 12
	if testing.Short() {
		n = 4
	}
	evalXORTrees(t, f, f.cpuEvaluator(t), n, 2, []int{0, 3}, 41)
}
