package main

import (
	"fmt"

	"github.com/goldfhe/goldfhe/smallntt"
)

// Variant names as they appear in the CSV and the tables (smallntt's).
const (
	vMatrix    = "matrix"    // shift-based matrix NTT with merging preprocessing
	vNoMerge   = "nomerge"   // the same without merging
	vButterfly = "butterfly" // the radix-2 baseline
	vHybrid    = "hybrid"    // our tuned two-stage kernel (N-point only)
)

// benchCase is one row of the paper's tables: a transform size, a variant
// and, for the decomposed N-point variants, a factorisation.
type benchCase struct {
	table   int // 1: n-point cyclic transforms; 2: N-point negacyclic
	n       int
	variant string
	factors []int // nil for the butterfly and for every Table 1 row
}

// factorString is the CSV's factors column: "8x8x16", or "-" for none.
func (c benchCase) factorString() string {
	if len(c.factors) == 0 {
		return "-"
	}
	return smallntt.FactorString(c.factors)
}

// String names the case in progress lines and errors.
func (c benchCase) String() string {
	if c.table == 1 {
		return fmt.Sprintf("Table 1 n=%d %s", c.n, c.variant)
	}
	if len(c.factors) == 0 {
		return fmt.Sprintf("Table 2 N=%d %s", c.n, c.variant)
	}
	return fmt.Sprintf("Table 2 N=%d %s %s", c.n, c.factorString(), c.variant)
}

// key identifies the case (without the device or batch).
func (c benchCase) key() string {
	return fmt.Sprintf("%d/%d/%s/%s", c.table, c.n, c.variant, c.factorString())
}

// butterflyKey is the key of the butterfly of the same table and size.
func (c benchCase) butterflyKey() string {
	return benchCase{table: c.table, n: c.n, variant: vButterfly}.key()
}

// smallVariant maps a variant name to smallntt's Variant.
func smallVariant(v string) (smallntt.Variant, error) {
	switch v {
	case vMatrix:
		return smallntt.Matrix, nil
	case vNoMerge:
		return smallntt.MatrixNoMerge, nil
	case vButterfly:
		return smallntt.Butterfly, nil
	case vHybrid:
		return smallntt.Hybrid, nil
	}
	return 0, fmt.Errorf("unknown variant %q", v)
}

// table1Sizes are the small transforms of the paper's Table 1 (4 to 32)
// and the 64-point one our decompositions also use.
var table1Sizes = []int{4, 8, 16, 32, 64}

// table2 lists, per N, the factorisations timed for Matrix and
// MatrixNoMerge and the Hybrid shapes (those of kernels.HybridShapes).
// N = 1024 holds the paper's four (4x4x4x4x4, 8x8x16, 16x16x4, 32x32) and
// two with a 64-point stage.
var table2 = []struct {
	n       int
	factors [][]int
	hybrid  [][]int
}{
	{512, [][]int{{8, 8, 8}, {16, 32}, {32, 16}}, [][]int{{16, 32}, {32, 16}}},
	{1024, [][]int{{4, 4, 4, 4, 4}, {8, 8, 16}, {16, 16, 4}, {32, 32}, {64, 16}, {16, 64}}, [][]int{{32, 32}}},
	{2048, [][]int{{8, 16, 16}, {32, 64}, {64, 32}}, [][]int{{32, 64}, {64, 32}}},
}

// allSizes lists every size a -sizes flag may name.
func allSizes() []int {
	s := append([]int(nil), table1Sizes...)
	for _, t := range table2 {
		s = append(s, t.n)
	}
	return s
}

// selectCases returns the cases of the sizes in keep (nil: all), Table 1
// first, each size's butterfly first.
func selectCases(keep map[int]bool) []benchCase {
	var cs []benchCase
	for _, n := range table1Sizes {
		if keep != nil && !keep[n] {
			continue
		}
		cs = append(cs,
			benchCase{table: 1, n: n, variant: vButterfly},
			benchCase{table: 1, n: n, variant: vMatrix},
			benchCase{table: 1, n: n, variant: vNoMerge})
	}
	for _, t := range table2 {
		if keep != nil && !keep[t.n] {
			continue
		}
		cs = append(cs, benchCase{table: 2, n: t.n, variant: vButterfly})
		for _, f := range t.factors {
			cs = append(cs, benchCase{table: 2, n: t.n, variant: vMatrix, factors: f})
		}
		for _, f := range t.factors {
			cs = append(cs, benchCase{table: 2, n: t.n, variant: vNoMerge, factors: f})
		}
		for _, f := range t.hybrid {
			cs = append(cs, benchCase{table: 2, n: t.n, variant: vHybrid, factors: f})
		}
	}
	return cs
}

// paperMS holds the times the paper reports (ms for 10,000 runs on an
// RTX 2080 Ti; DESIGN.md §4, "What the paper reports"), by case key. Only
// their ratios are comparable with ours. The paper's Table 2 times are of
// its matrix NTT with merging.
var paperMS = map[string]float64{
	"1/4/matrix/-": 0.72, "1/8/matrix/-": 1.37, "1/16/matrix/-": 2.93, "1/32/matrix/-": 5.28,
	"1/4/nomerge/-": 1.18, "1/8/nomerge/-": 2.33, "1/16/nomerge/-": 4.78, "1/32/nomerge/-": 9.42,
	"1/4/butterfly/-": 0.98, "1/8/butterfly/-": 2.49, "1/16/butterfly/-": 7.11, "1/32/butterfly/-": 19.52,
	"2/1024/matrix/4x4x4x4x4": 7.60, "2/1024/matrix/8x8x16": 6.03, "2/1024/matrix/16x16x4": 7.24,
	"2/1024/matrix/32x32": 11.45, "2/1024/butterfly/-": 15.01,
}

// paperSpeedup returns the paper's butterfly time over its time for c.
func paperSpeedup(c benchCase) (float64, bool) {
	t, ok := paperMS[c.key()]
	b, okb := paperMS[c.butterflyKey()]
	if !ok || !okb {
		return 0, false
	}
	return b / t, true
}
