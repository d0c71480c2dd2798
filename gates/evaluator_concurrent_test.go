package gates_test

import (
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/goldfhe/goldfhe/gates"
)

// TestEvaluatorConcurrentBatch: one Evaluator, documented as safe for
// concurrent use, shared by goroutines whose Batch calls mix every kind of
// gate and write their outputs over their own inputs (other calls' too);
// every bit decrypts to the plain evaluation. Run under -race by make test.
// (From a review of the concurrency claims, which found none tested here.)
func TestEvaluatorConcurrentBatch(t *testing.T) {
	f := fixtures(toyParams)
	ev := f.cpuEvaluator(t)
	ops := []gates.Op{gates.OpAND, gates.OpNAND, gates.OpOR, gates.OpNOR, gates.OpXOR, gates.OpXNOR,
		gates.OpANDNY, gates.OpANDYN, gates.OpORNY, gates.OpORYN, gates.OpMUX, gates.OpMAJ,
		gates.OpNOT, gates.OpCopy, gates.OpZero, gates.OpOne}
	workers, rounds := 6, 12
	if testing.Short() {
		rounds = 6
	}
	var wg sync.WaitGroup
	for w := range workers {
		rng := rand.New(rand.NewPCG(uint64(w), 77))
		bits := make([]bool, 8)
		for i := range bits {
			bits[i] = rng.IntN(2) == 1
		}
		cts := f.encrypt(bits...)
		wg.Go(func() {
			for round := range rounds {
				perm := rng.Perm(len(cts)) // distinct outputs
				calls := make([]gates.Call, 1+rng.IntN(5))
				want := append([]bool(nil), bits...)
				for i := range calls {
					op := ops[rng.IntN(len(ops))]
					a, b, c := rng.IntN(len(cts)), rng.IntN(len(cts)), rng.IntN(len(cts))
					calls[i] = gates.Call{Op: op, Out: cts[perm[i]], A: cts[a], B: cts[b], C: cts[c]}
					want[perm[i]] = op.Eval(bits[a], bits[b], bits[c])
				}
				if err := ev.Batch(calls); err != nil {
					t.Errorf("worker %d, round %d: %v", w, round, err)
					return
				}
				bits = want
				for i, got := range f.decrypt(t, cts...) {
					if got != bits[i] {
						t.Errorf("worker %d, round %d: bit %d is %v, want %v", w, round, i, got, bits[i])
						return
					}
				}
			}
		})
	}
	wg.Wait()
}
