package main

import (
	"bytes"
	"encoding/csv"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goldfhe/goldfhe/smallntt"
	"github.com/goldfhe/goldfhe/tfhe"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestQuickCPU runs the program's main logic as `bench -engine cpu -quick
// -sets CuFHE80` (the fastest named set) and checks what it wrote.
func TestQuickCPU(t *testing.T) {
	dir := t.TempDir()
	cfg, err := parseFlags([]string{"-engine", "cpu", "-quick", "-sets", "CuFHE80", "-out", dir}, io.Discard)
	require.NoError(t, err)
	var stdout, stderr bytes.Buffer
	if err := run(cfg, &stdout, &stderr); err != nil {
		t.Fatalf("run: %v\nstderr:\n%s", err, stderr.String())
	}
	out := stdout.String()
	t.Logf("stdout:\n%s", out)
	for _, want := range []string{"device: CPU: ", "no GPU: not used (-engine cpu)", "CuFHE80 (~80-bit, comparison only)", "hybrid/", "butterfly"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q", want)
		}
	}

	f, err := os.Open(filepath.Join(dir, fileCSV))
	require.NoError(t, err)
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err)
	if len(rows) == 0 || !slices.Equal(rows[0], csvHeader) {
		t.Fatalf("CSV header %q, want %q", rows[0], csvHeader)
	}
	// Four CPU variants (hybrid, grouped by 2 and 3, butterfly) × batches 1 and 4.
	if len(rows) != 1+4*2 {
		t.Fatalf("%d CSV rows, want 9:\n%q", len(rows), rows)
	}
	variants := map[string]bool{}
	for _, r := range rows[1:] {
		if r[1] != engCPU || r[2] != "CuFHE80" || !strings.HasPrefix(r[0], "CPU ") {
			t.Errorf("row %q: want device CPU …, engine cpu, set CuFHE80", r)
		}
		variants[r[3]] = true
		b, err1 := strconv.Atoi(r[4])
		ms, err2 := strconv.ParseFloat(r[5], 64)
		gps, err3 := strconv.ParseFloat(r[6], 64)
		if err := errors.Join(err1, err2, err3); err != nil || (b != 1 && b != 4) || ms <= 0 || gps <= 0 {
			t.Errorf("row %q: bad numbers (%v)", r, err)
			continue
		}
		if got := float64(b) / (ms / 1e3); got < gps*0.99 || got > gps*1.01 {
			t.Errorf("row %q: gates/s %v, batch/time gives %v", r, gps, got)
		}
	}
	// The hybrid plan the CPU engine picks depends on the architecture
	// (32x32 on amd64, 8x8x16 on 386); its grouped variants follow it.
	hybrid := ""
	for v := range variants {
		if strings.HasPrefix(v, "hybrid/") && !strings.Contains(v, "/grouped") {
			hybrid = v
		}
	}
	if hybrid == "" || !variants["butterfly"] || !variants[hybrid+"/grouped"] || !variants[hybrid+"/grouped3"] || len(variants) != 4 {
		t.Errorf("variants %v, want a hybrid plan, it with keys grouped by 2 and 3, and the butterfly", variants)
	}

	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	if len(entries) > 4 {
		t.Errorf("%d files written, want at most 4", len(entries))
	}
	for _, name := range []string{fileGates, fileLatency} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Error(err)
		} else if !bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) {
			t.Errorf("%s is not a PNG", name)
		}
	}
	for _, e := range entries {
		for _, c := range e.Name() {
			if !strings.ContainsRune("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-", c) {
				t.Errorf("file name %q has %q", e.Name(), c)
			}
		}
	}
	sum, err := os.ReadFile(filepath.Join(dir, fileSummary))
	require.NoError(t, err)
	if !strings.Contains(out, string(sum)) {
		t.Error("summary.txt differs from the printed summary")
	}
}

// TestCheckFails makes sure wrong outputs are caught: outputs the engine did
// not write, and outputs that differ from the set's reference.
func TestCheckFails(t *testing.T) {
	fx, err := newFixture(tfhe.CuFHE80, 32)
	require.NoError(t, err)
	fx.poison(32)
	k := fx.keys[1]
	if err := fx.check(32, "test", k); err == nil || !strings.Contains(err.Error(), "32 of 32 outputs decrypt wrongly") {
		t.Errorf("poisoned outputs: %v", err)
	}
	// Trivial samples of the right answers decrypt right, but differ from
	// the reference bit for bit.
	for i, o := range fx.out {
		o.SetTrivial(tfhe.EncodeBool(fx.want[i]))
	}
	require.NoError(t, fx.check(4, "first", k), "first check")
	if len(k.sums) != 4 {
		t.Fatalf("%d reference samples, want 4", len(k.sums))
	}
	fx.out[2].Value[0]++
	if err := fx.check(8, "second", k); err == nil || !strings.Contains(err.Error(), "output 2 differs from the one first computed") {
		t.Errorf("changed output: %v", err)
	}
	// The NAND inputs: both kinds of answers occur.
	if !slices.Contains(fx.want, true) || !slices.Contains(fx.want, false) {
		t.Errorf("inputs want %v: all equal", fx.want)
	}
}

func TestParseFlags(t *testing.T) {
	cfg, err := parseFlags(nil, io.Discard)
	require.NoError(t, err)
	if !slices.Equal(cfg.batches, defaultBatches) || cfg.reps != defaultReps || len(cfg.sets) != 3 || cfg.engine != "both" || cfg.out != "bench-out" || cfg.gpus != 1 {
		t.Errorf("defaults: %+v", cfg)
	}
	cfg, err = parseFlags([]string{"-quick", "-sets", "tfhersdefault,cufhe80", "-variants", "matrix:8x8x8,butterfly", "-engine", "GPU"}, io.Discard)
	require.NoError(t, err)
	if !slices.Equal(cfg.batches, quickBatches) || cfg.reps != 1 || len(cfg.sets) != 1 || !cfg.sets[0].Equal(tfhe.TFHErsDefault) || cfg.engine != "gpu" {
		t.Errorf("-quick: %+v", cfg)
	}
	if len(cfg.variants) != 2 || cfg.variants[0].String() != "matrix:8x8x8" || cfg.variants[1].String() != "butterfly" {
		t.Errorf("-variants: %v", cfg.variants)
	}
	for arg, want := range map[string]int{"2": 2, "ALL": allGPUs, " all ": allGPUs} {
		if cfg, err := parseFlags([]string{"-gpus", arg}, io.Discard); err != nil || cfg.gpus != want {
			t.Errorf("-gpus %q: %d, %v; want %d", arg, cfg.gpus, err, want)
		}
	}
	for _, args := range [][]string{
		{"-engine", "tpu"},
		{"-batches", "0"},
		{"-batches", "1,x"},
		{"-reps", "0"},
		{"-max-gates", "0"},
		{"-sets", "TFHELib256"},
		{"-variants", "radix4"},
		{"-variants", "butterfly:32x32"},
		{"-variants", "default:32x32"},
		{"-variants", "matrix:8x"},
		// Factorisations that make no plan for a selected set's N.
		{"-variants", "matrix:7x7"},
		{"-sets", "TFHELib128", "-variants", "matrix:8x8x8"},
		{"-sets", "TFHELib128,TFHErsDefault", "-variants", "hybrid:32x32"},
		{"-out", ""},
		{"-gpus", "0"},
		{"-gpus", "some"},
		{"stray"},
	} {
		if _, err := parseFlags(args, io.Discard); err == nil {
			t.Errorf("%q: no error", args)
		}
	}
}

func TestPlanCases(t *testing.T) {
	cfg, err := parseFlags(nil, io.Discard)
	require.NoError(t, err)
	count := func(cs []benchCase, engine string) (n int, sets map[string]bool, maxB int) {
		sets = map[string]bool{}
		for _, c := range cs {
			if c.engine == engine {
				n++
				sets[c.set.Name()] = true
				maxB = max(maxB, c.batches[len(c.batches)-1])
			}
		}
		return n, sets, maxB
	}
	// GPU and CPU: 3 sets × the GPU variants; the CPU TFHELib128 only, ≤ 64.
	cs, notes := planCases(cfg, true, true)
	nGPU, nCPU := len(gpuVariants), len(cpuVariants)
	for _, vs := range [][]variantSpec{gpuVariants, cpuVariants} {
		if !slices.ContainsFunc(vs, func(v variantSpec) bool { return v.grouping() == 3 }) {
			t.Errorf("default variants %s lack a key grouped by 3 (TFHELib128's fastest form)", variantList(vs))
		}
	}
	if n, _, maxB := count(cs, engGPU); n != 3*nGPU || maxB != 16384 {
		t.Errorf("GPU: %d cases up to batch %d, want %d up to 16384", n, maxB, 3*nGPU)
	}
	if n, sets, maxB := count(cs, engCPU); n != nCPU || len(sets) != 1 || !sets["TFHELib128"] || maxB != cpuMaxBatch {
		t.Errorf("CPU: %d cases, sets %v, up to batch %d", n, sets, maxB)
	}
	if len(notes) != 2 {
		t.Errorf("notes %q", notes)
	}
	// The CPU alone honours -sets and -batches as given, not the defaults.
	cfg.setsSet, cfg.batchesSet = true, true
	cs, _ = planCases(cfg, false, true)
	if n, sets, maxB := count(cs, engCPU); n != 3*nCPU || len(sets) != 3 || maxB != 16384 {
		t.Errorf("CPU alone, explicit flags: %d cases, sets %v, up to batch %d", n, sets, maxB)
	}
	cfg.setsSet, cfg.batchesSet = false, false
	cs, _ = planCases(cfg, false, true)
	if n, sets, maxB := count(cs, engCPU); n != nCPU || len(sets) != 1 || maxB != cpuMaxBatch {
		t.Errorf("CPU alone, defaults: %d cases, sets %v, up to batch %d", n, sets, maxB)
	}
	cfg.cpuAll = true
	cs, _ = planCases(cfg, true, true)
	if n, sets, maxB := count(cs, engCPU); n != 3*nCPU || len(sets) != 3 || maxB != 16384 {
		t.Errorf("-cpu-all: %d cases, sets %v, up to batch %d", n, sets, maxB)
	}
	// GPU-only variants on the CPU: nothing to run, and a note that says why.
	gcfg, err := parseFlags([]string{"-variants", "fused,wide"}, io.Discard)
	require.NoError(t, err)
	cs, notes = planCases(gcfg, false, true)
	if len(cs) != 0 || !slices.ContainsFunc(notes, func(n string) bool { return strings.Contains(n, "fused,wide run on the GPU only") }) {
		t.Errorf("GPU-only variants on the CPU: %d cases, notes %q", len(cs), notes)
	}
}

func TestVariantPlans(t *testing.T) {
	cpuDefault, err := smallntt.DefaultPlan(1024)
	require.NoError(t, err)
	for _, tc := range []struct {
		v, engine string
		n         int
		want      string // planLabel, "" for a nil plan (the engine's choice)
	}{
		{"hybrid", engGPU, 1024, "hybrid/32x32"},
		{"hybrid", engGPU, 512, "hybrid/16x32"},
		{"hybrid", engCPU, 1024, planLabel(cpuDefault)},
		{"default", engGPU, 1024, ""},
		{"default", engCPU, 512, ""},
		{"butterfly", engGPU, 512, "butterfly"},
		{"matrix", engGPU, 1024, "matrix/8x8x16"},
		{"matrix", engCPU, 512, "matrix/8x8x8"},
		{"hybrid:16x64", engCPU, 1024, "hybrid/16x64"},
		{"matrix:4x4x4x4x4", engGPU, 1024, "matrix/4x4x4x4x4"},
	} {
		vs, err := parseVariants(tc.v)
		require.NoError(t, err)
		p, err := vs[0].plan(tc.n, tc.engine)
		require.NoErrorf(t, err, "%s %s N=%d", tc.v, tc.engine, tc.n)
		got := ""
		if p != nil {
			got = planLabel(p)
		}
		if got != tc.want {
			t.Errorf("%s %s N=%d: %q, want %q", tc.v, tc.engine, tc.n, got, tc.want)
		}
	}
	vs, _ := parseVariants("matrix:8x8x8")
	if _, err := vs[0].plan(1024, engGPU); err == nil {
		t.Error("matrix 8x8x8 for N=1024: no error")
	}
}

func TestMedian(t *testing.T) {
	ms := func(x ...int) []time.Duration {
		var d []time.Duration
		for _, v := range x {
			d = append(d, time.Duration(v)*time.Millisecond)
		}
		return d
	}
	for _, tc := range []struct {
		in   []time.Duration
		want time.Duration
	}{
		{ms(7), 7 * time.Millisecond},
		{ms(9, 1, 5), 5 * time.Millisecond},
		{ms(4, 1, 3, 100), 3500 * time.Microsecond},
	} {
		if got := median(tc.in); got != tc.want {
			t.Errorf("median(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

// TestNoGPU checks -engine gpu fails clearly where no GPU is usable.
func TestNoGPU(t *testing.T) {
	if _, err := probeGPU(); err == nil {
		t.Skip("a GPU is usable here")
	}
	cfg, err := parseFlags([]string{"-engine", "gpu", "-quick", "-out", t.TempDir()}, io.Discard)
	require.NoError(t, err)
	err = run(cfg, io.Discard, io.Discard)
	if !errors.Is(err, errNoGPU) {
		t.Errorf("run: %v, want errNoGPU", err)
	}
}

// TestCPULabels checks that every CPU variant's CSV label is its own: on the
// CPU, default and hybrid run the same plan, and two rows of one label
// could not be told apart in the CSV or the plot's legend.
func TestCPULabels(t *testing.T) {
	p := tfhe.CuFHE80
	fx, err := newFixture(p, 1)
	require.NoError(t, err)
	seen := map[string]string{}
	for _, name := range []string{vDefault, vHybrid, vButterfly, vGrouped, vGrouped3, "matrix:8x8x16", "hybrid:16x64"} {
		vs, err := parseVariants(name)
		require.NoError(t, err)
		key, err := fx.key(vs[0].grouping())
		require.NoError(t, err)
		e, label, err := newEngine(benchCase{engine: engCPU, set: p, variant: vs[0], batches: []int{1}}, fx, key.ck)
		require.NoError(t, err)
		require.NoError(t, e.Close())
		if prev, ok := seen[label]; ok {
			t.Errorf("variants %s and %s both labelled %q", prev, name, label)
		}
		seen[label] = name
	}
	t.Log(seen)
}

// TestWindowEnergy checks when a batch size's energy is reported: only over
// windows of at least minEnergyWindow, from a counter that read and moved.
func TestWindowEnergy(t *testing.T) {
	counter := func(v float64, err error) (func() (float64, error), *int) {
		calls := new(int)
		return func() (float64, error) { *calls++; return v, err }, calls
	}
	for _, tc := range []struct {
		name   string
		window time.Duration
		e0, e1 float64
		err    error
		want   float64
		reads  int
	}{
		{"long window", 2 * time.Second, 100, 130.5, nil, 30.5, 1},
		{"exactly the minimum", minEnergyWindow, 10, 20, nil, 10, 1},
		{"short window, counter not read", minEnergyWindow - time.Millisecond, 10, 20, nil, 0, 0},
		{"read fails", 2 * time.Second, 10, 20, errors.New("nvml: GPU is lost"), 0, 1},
		{"counter did not move", 2 * time.Second, 10, 10, nil, 0, 1},
		{"counter went back (reset)", 2 * time.Second, 10, 5, nil, 0, 1},
	} {
		read, calls := counter(tc.e1, tc.err)
		if got := windowEnergy(tc.window, tc.e0, read); got != tc.want || *calls != tc.reads {
			t.Errorf("%s: %v J after %d reads, want %v J after %d", tc.name, got, *calls, tc.want, tc.reads)
		}
	}
	m := measurement{gates: 1000}
	if _, ok := m.mJPerGate(); ok {
		t.Error("mJPerGate reported a figure for an unmeasured window")
	}
	m.joules = 17.5
	if mj, ok := m.mJPerGate(); !ok || mj != 17.5 {
		t.Errorf("mJPerGate = %v, %v; want 17.5 mJ a gate", mj, ok)
	}
}

// TestCheckComparesEveryOutput makes sure outputs past the first few dozen
// of a call are compared bit for bit too: on the GPU a large call's last
// samples run on other kernels (tailPasses) than its first ones, and every
// kernel must give the CPU engine's bits (DESIGN.md §6).
func TestCheckComparesEveryOutput(t *testing.T) {
	const b = 192
	// rightOutputs is a fixture whose b outputs are the right bits, as
	// noiseless samples, and its plain key.
	rightOutputs := func() (*fixture, *fixtureKey) {
		fx, err := newFixture(tfhe.CuFHE80, b)
		require.NoError(t, err)
		for i, o := range fx.out {
			o.SetTrivial(tfhe.EncodeBool(fx.want[i]))
		}
		return fx, fx.keys[1]
	}
	fx, k := rightOutputs()
	require.NoError(t, fx.check(b, "first", k), "first check")
	// A change of one mask coefficient by 2^-32 leaves the decryption
	// right; it must still be caught, wherever it is in the call.
	last := b - 1
	fx.out[last].Value[0]++
	if err := fx.check(b, "second", k); err == nil || !strings.Contains(err.Error(), "output "+strconv.Itoa(last)+" differs from the one first computed") {
		t.Errorf("output %d changed: %v", last, err)
	}
	fx.out[last].Value[0]--
	assert.NoError(t, fx.check(b, "third", k), "outputs restored")
	// A later, larger call extends the reference, and a smaller one is
	// compared with what the larger one computed.
	fx2, k2 := rightOutputs()
	require.NoError(t, fx2.check(2, "small", k2))
	require.NoError(t, fx2.check(b, "large", k2))
	fx2.out[b/2].Value[1]++
	if err := fx2.check(b, "again", k2); err == nil || !strings.Contains(err.Error(), "output "+strconv.Itoa(b/2)+" differs from the one large computed") {
		t.Errorf("output %d changed: %v", b/2, err)
	}
}
