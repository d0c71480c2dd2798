package bootstrap

import (
	"strings"
	"testing"

	"github.com/goldfhe/goldfhe/tfhe"
	"github.com/stretchr/testify/assert"
)

// TestCheckAliases: every way a batch can use one sample twice is found,
// at batch sizes on both sides of smallAliasBatch and at either end of the
// batch, and the in-place form (out[i] = in[i]) and disjoint samples pass.
func TestCheckAliases(t *testing.T) {
	const dim = 3
	for _, n := range []int{2, 5, smallAliasBatch, smallAliasBatch + 1, 64, 1000} {
		fresh := func() ([]*tfhe.TLWE, []*tfhe.TLWE) { return newTLWEs(n, dim), newTLWEs(n, dim) }
		out, in := fresh()
		assert.NoErrorf(t, checkAliases(out, in, true), "n=%d: disjoint samples", n)
		assert.NoErrorf(t, checkAliases(in, in, true), "n=%d: in place", n)
		for _, pair := range [][2]int{{0, 1}, {0, n - 1}, {n / 2, n - 1}, {n - 2, n - 1}} {
			i, j := pair[0], pair[1]
			if i == j {
				continue
			}
			out, in := fresh()
			out[j] = out[i]
			if err := checkAliases(out, in, true); err == nil || !strings.Contains(err.Error(), "are one sample") {
				t.Errorf("n=%d: outputs %d and %d one *TLWE: %v", n, i, j, err)
			}
			out, in = fresh()
			out[j] = &tfhe.TLWE{Value: out[i].Value} // another header, one array
			if err := checkAliases(out, in, true); err == nil {
				t.Errorf("n=%d: outputs %d and %d over one array: no error", n, i, j)
			}
			out, in = fresh()
			out[i] = in[j]
			if err := checkAliases(out, in, true); err == nil || !strings.Contains(err.Error(), "is the sample of input") {
				t.Errorf("n=%d: output %d is input %d: %v", n, i, j, err)
			}
			out, in = fresh()
			out[j] = in[i]
			if err := checkAliases(out, in, true); err == nil {
				t.Errorf("n=%d: output %d is input %d: no error", n, j, i)
			}
			out, in = fresh()
			in[j] = in[i] // one input read twice: allowed
			assert.NoErrorf(t, checkAliases(out, in, true), "n=%d: inputs %d and %d one sample", n, i, j)
		}
		// Without in-place (the key-switching calls): not even out[i] over
		// in[i]'s array.
		out, in = fresh()
		assert.NoErrorf(t, checkAliases(out, in, false), "n=%d, not in place: disjoint samples", n)
		out[n-1] = &tfhe.TLWE{Value: in[n-1].Value[:2]}
		if err := checkAliases(out, in, false); err == nil || !strings.Contains(err.Error(), "is the sample of input") {
			t.Errorf("n=%d, not in place: output %d over input %d's array: %v", n, n-1, n-1, err)
		}
		// A swap: each output the other's input.
		out, in = fresh()
		copy(out, in)
		out[0], out[n-1] = in[n-1], in[0]
		if err := checkAliases(out, in, true); err == nil {
			t.Errorf("n=%d: swapped in place: no error", n)
		}
	}
}

// TestCheckAliasesOne: a batch of one is in place or not.
func TestCheckAliasesOne(t *testing.T) {
	in := newTLWEs(1, 3)
	assert.NoError(t, checkAliases(in, in, true), "one sample in place")
	if err := checkAliases(in, in, false); err == nil {
		t.Error("one sample in place where it may not be: no error")
	}
}

// TestEnginesRefuseAliases: the CPU engine and a Multi refuse a batch that
// breaks the aliasing rule before writing anything (these used to run it,
// with workers writing one sample at once).
func TestEnginesRefuseAliases(t *testing.T) {
	kp := testKeys(toyParams, 0)
	n := toyParams.LWEDimension()
	for name, e := range map[string]Engine{
		"cpu":   newCPU(t, kp.ck, CPUOptions{Workers: 4}),
		"multi": newCPUMulti(t, kp.ck, 2, 2),
	} {
		in := newTLWEs(8, n)
		out := make([]*tfhe.TLWE, 8)
		for i := range out {
			out[i] = in[0] // every output the first input's sample
		}
		if err := e.Bootstrap(out, in, mu8); err == nil {
			t.Errorf("%s: eight outputs into one sample: no error", name)
		}
		swapped := []*tfhe.TLWE{in[1], in[0]}
		if err := e.Bootstrap(swapped, in[:2], mu8); err == nil {
			t.Errorf("%s: outputs swapped with the inputs: no error", name)
		}
		for _, c := range in {
			for _, v := range c.Value {
				if v != 0 {
					t.Fatalf("%s: a refused call wrote a sample", name)
				}
			}
		}
		assert.NoErrorf(t, e.Bootstrap(in, in, mu8), "%s: in place", name)
		// Key switching into a view of its own input's array.
		ext := newTLWEs(1, toyParams.ExtractedLWEDimension())
		view := []*tfhe.TLWE{{Value: ext[0].Value[:n+1]}}
		if err := e.KeySwitch(view, ext); err == nil {
			t.Errorf("%s: KeySwitch into its input's array: no error", name)
		}
	}
}

// BenchmarkCheckAliases: the check's cost a sample at a GPU-sized batch,
// against a bootstrap's tens of microseconds on a GPU.
func BenchmarkCheckAliases(b *testing.B) {
	const n = 65536
	out, in := newTLWEs(n, 630), newTLWEs(n, 630)
	b.ReportAllocs()
	for b.Loop() {
		if err := checkAliases(out, in, true); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/sample")
}
