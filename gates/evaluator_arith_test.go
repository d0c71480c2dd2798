package gates_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/goldfhe/goldfhe/gates"
	"github.com/goldfhe/goldfhe/tfhe"
	"github.com/stretchr/testify/require"
)

// TestAddUintOracle checks the adder's logic on every pair of 4-bit values
// with the oracle engine (the CPU engine runs it in TestAdder8CPU).
func TestAddUintOracle(t *testing.T) {
	f := fixtures(tfhe.TFHELib128)
	ev, _ := gates.NewEvaluator(newOracle(f))
	for x := uint64(0); x < 16; x++ {
		for y := uint64(0); y < 16; y++ {
			sum, err := ev.AddUint(f.encryptUint(t, x, 4), f.encryptUint(t, y, 4))
			require.NoError(t, err)
			got, err := gates.DecryptUint(f.sk, sum)
			require.NoError(t, err)
			if got != x+y || len(sum) != 5 {
				t.Fatalf("%d + %d = %d in %d bits, want %d in 5", x, y, got, len(sum), x+y)
			}
		}
	}
}

func TestAddUintErrors(t *testing.T) {
	var zero gates.Evaluator
	if _, err := zero.AddUint(nil, nil); !errors.Is(err, gates.ErrNoEvaluator) {
		t.Errorf("zero Evaluator: err = %v, want ErrNoEvaluator", err)
	}
	f := fixtures(tfhe.TFHELib128)
	ev, _ := gates.NewEvaluator(newOracle(f))
	a := f.encrypt(true, false)
	for _, c := range []struct{ a, b []*tfhe.TLWE }{{nil, nil}, {a, a[:1]}, {a[:1], a}} {
		if _, err := ev.AddUint(c.a, c.b); err == nil {
			t.Errorf("AddUint(%d bits, %d bits): no error", len(c.a), len(c.b))
		}
	}
	// A missing or foreign bit is named by operand and position.
	other := fixtures(toyParams)
	for _, c := range []struct {
		a, b []*tfhe.TLWE
		want string
	}{
		{[]*tfhe.TLWE{a[0], nil}, a, "AddUint: bit 1 of a is nil"},
		{a, []*tfhe.TLWE{a[0], other.encrypt(true)[0]}, "AddUint: bit 1 of b has dimension"},
	} {
		if _, err := ev.AddUint(c.a, c.b); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("AddUint: %v, want %q", err, c.want)
		}
	}
}
