package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/goldfhe/goldfhe/bootstrap"
	"github.com/goldfhe/goldfhe/kernels"
	"github.com/goldfhe/goldfhe/smallntt"
	"github.com/goldfhe/goldfhe/tfhe"
)

// Engine kinds, as the CSV names them.
const (
	engGPU = "gpu"
	engCPU = "cpu"
)

// Variant names of -variants.
const (
	vHybrid    = "hybrid"
	vButterfly = "butterfly"
	vMatrix    = "matrix"
	// vFused, vWide and vUnfused are the GPU engine's hybrid plan with its
	// blind-rotation kernels forced (bootstrap.GPUOptions.BlindRotation):
	// one block of (k+1)·l warps per sample, one block of N/8·(k+1)·l
	// threads per sample, or the step kernels; vDefault lets it choose.
	vFused   = "fused"
	vWide    = "wide"
	vUnfused = "unfused"
	// vDefault is the engine's own choice (a nil Plan in its options).
	vDefault = "default"
	// vGrouped is the engine's own choice with a grouped bootstrapping key
	// (tfhe.WithGrouping(2): two key bits per blind-rotation step);
	// vGrouped3 with tfhe.WithGrouping(3), three key bits per step.
	vGrouped  = "grouped"
	vGrouped3 = "grouped3"
)

// variantSpec is one NTT variant of -variants: a name and, optionally, a
// factorisation (nil: the default for the engine and N).
type variantSpec struct {
	name    string
	factors []int
}

func (v variantSpec) String() string {
	if len(v.factors) == 0 {
		return v.name
	}
	return v.name + ":" + smallntt.FactorString(v.factors)
}

// The default variants of each engine: the GPU adds its forced kernels and
// the paper's matrix NTT. Both include the keys grouped by 2 and 3, since
// grouped by 3 is TFHELib128's fastest form on the GPU (BENCHMARKS.md) and
// a benchmark that left it out would not show what to expect.
var (
	gpuVariants = []variantSpec{{name: vDefault}, {name: vGrouped}, {name: vGrouped3}, {name: vFused}, {name: vWide}, {name: vUnfused}, {name: vButterfly}, {name: vMatrix}}
	cpuVariants = []variantSpec{{name: vHybrid}, {name: vGrouped}, {name: vGrouped3}, {name: vButterfly}}
)

// variantList is vs as -variants spells it.
func variantList(vs []variantSpec) string {
	names := make([]string, len(vs))
	for i, v := range vs {
		names[i] = v.String()
	}
	return strings.Join(names, ",")
}

// matrixFactors are the factorisations of the matrix variant when -variants
// gives none: for N = 1024 the paper's fastest (its Table 2, 8x8x16), and
// for the other sizes the fastest on our GPU (kernels/NOTES.md).
var matrixFactors = map[int][]int{512: {8, 8, 8}, 1024: {8, 8, 16}, 2048: {8, 16, 16}}

// parseVariants reads "hybrid,butterfly,matrix:8x8x16".
func parseVariants(s string) ([]variantSpec, error) {
	var out []variantSpec
	for _, f := range strings.Split(s, ",") {
		f = strings.ToLower(strings.TrimSpace(f))
		name, fac, hasFac := strings.Cut(f, ":")
		v := variantSpec{name: name}
		switch name {
		case vHybrid, vMatrix, vUnfused, vFused:
		case vButterfly, vDefault, vWide, vGrouped, vGrouped3:
			if hasFac {
				return nil, fmt.Errorf("%q: %s takes no factorisation", f, name)
			}
		default:
			return nil, fmt.Errorf("unknown variant %q (want default, grouped, grouped3, hybrid, fused, wide, unfused, butterfly or matrix, e.g. matrix:8x8x16)", f)
		}
		if hasFac {
			for _, x := range strings.Split(fac, "x") {
				n, err := strconv.Atoi(x)
				if err != nil || n < 1 {
					return nil, fmt.Errorf("%q: bad factorisation %q (want e.g. 8x8x16)", f, fac)
				}
				v.factors = append(v.factors, n)
			}
		}
		if !slices.ContainsFunc(out, func(w variantSpec) bool { return w.String() == v.String() }) {
			out = append(out, v)
		}
	}
	return out, nil
}

// gpuOnly reports whether v names GPU engine kernels (no CPU case).
func (v variantSpec) gpuOnly() bool {
	return v.name == vFused || v.name == vWide || v.name == vUnfused
}

// grouping is the bootstrapping key's grouping factor v runs with.
func (v variantSpec) grouping() int {
	switch v.name {
	case vGrouped:
		return 2
	case vGrouped3:
		return 3
	}
	return 1
}

// blindRotation is the GPU engine's BlindRotation option for v.
func (v variantSpec) blindRotation() bootstrap.BlindRotation {
	switch v.name {
	case vFused:
		return bootstrap.BlindRotationFused
	case vWide:
		return bootstrap.BlindRotationWide
	case vUnfused:
		return bootstrap.BlindRotationUnfused
	}
	return bootstrap.BlindRotationAuto
}

// plan returns the plan of v for size n on an engine kind; nil selects the
// engine's default plan. The hybrid variant without a factorisation is, on
// the GPU, the hybrid kernel the GPU engine defaults to (16x32 for N = 512,
// 32x32 for N = 1024), given explicitly so that it is used for every batch
// size, and on the CPU smallntt.DefaultPlan (a hybrid plan).
func (v variantSpec) plan(n int, engine string) (*smallntt.Plan, error) {
	switch {
	case v.name == vDefault, v.name == vWide:
		return nil, nil
	case v.grouping() > 1 && engine == engGPU:
		return nil, nil
	case v.name == vButterfly:
		return smallntt.NewPlan(n, smallntt.Butterfly)
	case len(v.factors) > 0:
		variant := smallntt.Matrix
		if v.name == vHybrid || v.name == vUnfused || v.name == vFused {
			variant = smallntt.Hybrid
		}
		return smallntt.NewPlan(n, variant, v.factors...)
	case v.name == vMatrix:
		f, ok := matrixFactors[n]
		if !ok {
			return nil, fmt.Errorf("no default matrix factorisation for N=%d: give one, e.g. matrix:8x8x16", n)
		}
		return smallntt.NewPlan(n, smallntt.Matrix, f...)
	case engine == engCPU:
		return smallntt.DefaultPlan(n)
	}
	// The GPU engine's rule (bootstrap.NewGPU): the hybrid shape F1×F2 = N
	// with F1 ≤ F2.
	for _, s := range kernels.HybridShapes() {
		if s[0]*s[1] == n && s[0] <= s[1] {
			return smallntt.NewPlan(n, smallntt.Hybrid, s[0], s[1])
		}
	}
	return nil, fmt.Errorf("no GPU hybrid kernel for N=%d (have %v): use butterfly or matrix", n, kernels.HybridShapes())
}

// planLabel names a plan as the CSV's variant column does, e.g.
// "hybrid/32x32", "matrix/8x8x16" or "butterfly".
func planLabel(p *smallntt.Plan) string {
	if p.Variant() == smallntt.Butterfly {
		return p.Variant().String()
	}
	return p.Variant().String() + "/" + smallntt.FactorString(p.Factors())
}

// isWeak reports whether p is a comparison-only set (CuFHE80).
func isWeak(p tfhe.Params) bool { return p.SecurityBits() < 100 }

// setLabel is the set's name, marked when it is CuFHE80's weak set.
func setLabel(p tfhe.Params) string {
	if isWeak(p) {
		return p.Name() + " (~" + strconv.Itoa(p.SecurityBits()) + "-bit, comparison only)"
	}
	return p.Name()
}

// benchCase is one engine with one plan on one parameter set, timed at
// each of its batch sizes.
type benchCase struct {
	engine  string // engGPU or engCPU
	set     tfhe.Params
	variant variantSpec
	batches []int // ascending
	gpus    int   // GPU cases: the GPUs a batch is spread over (NewGPUs when > 1)
}

func (c benchCase) String() string {
	return fmt.Sprintf("%s %s %v", c.engine, c.set.Name(), c.variant)
}

// planCases lists the cases of cfg for the engines that run, grouped by set
// (keys are generated once per set), GPU before CPU. notes says what the
// CPU limits left out.
func planCases(cfg config, gpu, cpu bool) (cases []benchCase, notes []string) {
	cpuAlone := cpu && !gpu
	cpuSets := cfg.sets
	if !cfg.cpuAll && !cfg.quick && !(cpuAlone && cfg.setsSet) {
		cpuSets = slices.DeleteFunc(slices.Clone(cfg.sets), func(p tfhe.Params) bool { return !p.Equal(tfhe.TFHELib128) })
		if cpu && len(cpuSets) < len(cfg.sets) {
			notes = append(notes, "the CPU runs "+tfhe.TFHELib128.Name()+" only (-cpu-all runs every set)")
		}
	}
	cpuBatches := cfg.batches
	if !cfg.cpuAll && !(cpuAlone && cfg.batchesSet) {
		cpuBatches = slices.DeleteFunc(slices.Clone(cfg.batches), func(b int) bool { return b > cpuMaxBatch })
		if cpu && len(cpuBatches) < len(cfg.batches) {
			notes = append(notes, fmt.Sprintf("the CPU runs batches up to %d only (-cpu-all runs every batch size)", cpuMaxBatch))
		}
	}
	if cpu && !gpu && cfg.variants != nil {
		var only []string
		for _, v := range cfg.variants {
			if v.gpuOnly() {
				only = append(only, v.String())
			}
		}
		if len(only) > 0 {
			notes = append(notes, fmt.Sprintf("-variants %s run on the GPU only", strings.Join(only, ",")))
		}
	}
	for _, p := range cfg.sets {
		if gpu {
			for _, v := range orDefault(cfg.variants, gpuVariants) {
				cases = append(cases, benchCase{engine: engGPU, set: p, variant: v, batches: cfg.batches})
			}
		}
		if cpu && slices.ContainsFunc(cpuSets, p.Equal) && len(cpuBatches) > 0 {
			for _, v := range orDefault(cfg.variants, cpuVariants) {
				if v.gpuOnly() {
					continue
				}
				cases = append(cases, benchCase{engine: engCPU, set: p, variant: v, batches: cpuBatches})
			}
		}
	}
	return cases, notes
}

func orDefault[T any](xs, def []T) []T {
	if xs == nil {
		return def
	}
	return xs
}
