package smallntt

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestTiming prints, for each plan named in $SMALLNTT_TIMING (comma-separated
// "N/factors/variant" or "N/butterfly"), the minimum over many rounds of the
// mean time of one forward and one inverse transform. The minimum is robust on
// a shared, noisy machine; it is how DefaultPlan's choice was made. With
// $SMALLNTT_NOASM set the plans use the Go kernels only, with
// $SMALLNTT_NOAVX512 no AVX-512 kernels.
func TestTiming(t *testing.T) {
	spec := os.Getenv("SMALLNTT_TIMING")
	if spec == "" {
		t.Skip("set SMALLNTT_TIMING to a comma-separated list of plans")
	}
	if os.Getenv("SMALLNTT_NOASM") != "" {
		useAVX2 = false // the Go kernels only
		defer func() { useAVX2 = haveAVX2 }()
	}
	if os.Getenv("SMALLNTT_NOAVX512") != "" {
		useAVX512 = false // AVX2 and Go kernels only
		defer func() { useAVX512 = haveAVX512 }()
	}
	var plans []*Plan
	for _, s := range strings.Split(spec, ",") {
		p, err := parsePlan(s)
		require.NoError(t, err)
		plans = append(plans, p)
	}
	fw := make([]time.Duration, len(plans))
	iv := make([]time.Duration, len(plans))
	for i := range fw {
		fw[i], iv[i] = time.Hour, time.Hour
	}
	const reps = 100
	for round := 0; round < 60; round++ {
		for i, p := range plans {
			x := randomVec(p.N(), 3)
			y := make([]uint64, p.N())
			t0 := time.Now()
			for r := 0; r < reps; r++ {
				p.Forward(y, x)
			}
			t1 := time.Now()
			for r := 0; r < reps; r++ {
				p.Inverse(x, y)
			}
			t2 := time.Now()
			fw[i] = min(fw[i], t1.Sub(t0)/reps)
			iv[i] = min(iv[i], t2.Sub(t1)/reps)
		}
	}
	for i, p := range plans {
		t.Logf("%-28v forward %8.2f µs  inverse %8.2f µs", p, float64(fw[i].Nanoseconds())/1e3, float64(iv[i].Nanoseconds())/1e3)
	}
}

// parsePlan reads a plan name as Plan.String writes it, with or without "N=".
func parsePlan(s string) (*Plan, error) {
	var n int
	parts := strings.Split(strings.TrimPrefix(strings.TrimSpace(s), "N="), "/")
	if _, err := fmtSscan(parts[0], &n); err != nil {
		return nil, err
	}
	if len(parts) == 2 && parts[1] == "butterfly" {
		return NewPlan(n, Butterfly)
	}
	if len(parts) != 3 {
		return nil, errBadName(s)
	}
	var fs []int
	for _, f := range strings.Split(parts[1], "x") {
		var v int
		if _, err := fmtSscan(f, &v); err != nil {
			return nil, err
		}
		fs = append(fs, v)
	}
	for _, v := range []Variant{Matrix, MatrixNoMerge, Butterfly, Hybrid} {
		if v.String() == parts[2] {
			return NewPlan(n, v, fs...)
		}
	}
	return nil, errBadName(s)
}

func fmtSscan(s string, v *int) (int, error) { return fmt.Sscan(s, v) }

func errBadName(s string) error { return fmt.Errorf("bad plan name %q", s) }
