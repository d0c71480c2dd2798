package main

import (
	"bytes"
	"encoding/csv"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/goldfhe/goldfhe/examples/internal/selfexec"
	"github.com/stretchr/testify/require"
)

// TestRunCPU runs the whole program on the CPU plans in a tiny
// configuration and checks what it writes: a CSV with one numeric row per
// case and batch size, the plots and the summary.
func TestRunCPU(t *testing.T) {
	dir := t.TempDir()
	cfg, err := parseFlags([]string{"-cpu", "-out", dir, "-batches", "1,2", "-reps", "2", "-sizes", "8,512"}, os.Stderr)
	require.NoError(t, err)
	var stdout, stderr bytes.Buffer
	if err := run(cfg, &stdout, &stderr); err != nil {
		t.Fatalf("run: %v\nstderr:\n%s", err, stderr.String())
	}
	f, err := os.Open(filepath.Join(dir, "results.csv"))
	require.NoError(t, err)
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err)
	if len(rows) < 2 {
		t.Fatalf("results.csv has %d rows", len(rows))
	}
	head := rows[0]
	col := map[string]int{}
	for i, h := range head {
		col[h] = i
	}
	for _, name := range []string{"device", "table", "n", "variant", "factors", "batch", "median_us", "transforms_per_s", "speedup_vs_butterfly"} {
		if _, ok := col[name]; !ok {
			t.Fatalf("results.csv lacks column %q (have %v)", name, head)
		}
	}
	variants := map[string]bool{}
	sizes := map[string]bool{}
	for _, r := range rows[1:] {
		for _, name := range []string{"n", "batch", "median_us", "transforms_per_s"} {
			v, err := strconv.ParseFloat(r[col[name]], 64)
			if err != nil || v <= 0 {
				t.Errorf("row %v: %s = %q is not a positive number", r, name, r[col[name]])
			}
		}
		if b := r[col["batch"]]; b != "1" && b != "2" {
			t.Errorf("row %v: batch %s not asked for", r, b)
		}
		variants[r[col["variant"]]] = true
		sizes[r[col["n"]]] = true
	}
	for _, v := range []string{"matrix", "nomerge", "butterfly"} {
		if !variants[v] {
			t.Errorf("no %s rows (have %v)", v, variants)
		}
	}
	if !sizes["8"] || !sizes["512"] || len(sizes) != 2 {
		t.Errorf("sizes %v, want 8 and 512 only", sizes)
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		switch e.Name() {
		case "results.csv", "summary.txt", plotTime1024, plotTimeSmall, plotSpeedup:
		default:
			t.Errorf("-out holds %s, not a file of the program's (a temporary file left?)", e.Name())
		}
	}
	pngs, _ := filepath.Glob(filepath.Join(dir, "*.png"))
	if len(pngs) == 0 {
		t.Error("no plot written")
	}
	for _, p := range pngs {
		if st, err := os.Stat(p); err != nil || st.Size() < 1000 {
			t.Errorf("plot %s: %v, %d bytes", p, err, st.Size())
		}
	}
	sum, err := os.ReadFile(filepath.Join(dir, "summary.txt"))
	require.NoError(t, err)
	if !strings.Contains(string(sum), "Table 1") || !strings.Contains(string(sum), "Table 2") || !strings.Contains(stdout.String(), "Table 2") {
		t.Errorf("summary or stdout lacks the tables:\n%s", sum)
	}
}

// badFlags are command lines parseFlags refuses, with what it says.
var badFlags = []struct {
	args []string
	msg  string
}{
	{[]string{"-batches", "0"}, "-batches: 0 is not in"},
	{[]string{"-batches", "2000000"}, "-batches: 2000000 is not in"},
	{[]string{"-batches", "x"}, `-batches: "x" is not an integer`},
	{[]string{"-batches", "1,,4"}, `-batches: "" is not an integer`},
	{[]string{"-sizes", "3"}, "-sizes: no table has size 3"},
	{[]string{"-sizes", "8,x"}, `-sizes: "x" is not an integer`},
	{[]string{"-reps", "0"}, "-reps 0"},
	{[]string{"-reps", "100001"}, "-reps 100001"},
	{[]string{"-cpu", "-gpu"}, "contradict"},
	{[]string{"-out", ""}, "-out is empty"},
	// nttbench times GPU 0 only: bench's -gpus is not one of its flags.
	{[]string{"-gpus", "2"}, "flag provided but not defined: -gpus"},
	{[]string{"stray"}, "unexpected arguments"},
}

func TestParseFlagsErrors(t *testing.T) {
	for _, tc := range badFlags {
		if _, err := parseFlags(tc.args, io.Discard); err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("parseFlags(%q): %v, want %q", tc.args, err, tc.msg)
		}
	}
}

// TestMain runs the program itself when the test binary is started with
// GOLDFHE_NTTBENCH_MAIN set (TestCommandLine), so that its exit status and
// what it leaves in -out can be checked.
func TestMain(m *testing.M) { selfexec.Main(m, "GOLDFHE_NTTBENCH_MAIN", main) }

// TestCommandLine: every bad flag exits with status 2, says why and
// leaves -out as an earlier run left it; a failure of the run exits with
// 1, and a run that succeeds with 0, its results in -out.
func TestCommandLine(t *testing.T) {
	run := func(args ...string) (int, string) {
		t.Helper()
		return selfexec.Run(t, "GOLDFHE_NTTBENCH_MAIN", args...)
	}
	const earlier = "an earlier run's results\n"
	outDir := func() string {
		dir := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(dir, "results.csv"), []byte(earlier), 0o644))
		return dir
	}
	for _, tc := range badFlags {
		dir := outDir()
		args := append([]string{"-cpu", "-out", dir, "-sizes", "4", "-reps", "1"}, tc.args...)
		code, out := run(args...)
		if code != 2 || !strings.Contains(out, tc.msg) || strings.Contains(out, "FAILED") {
			t.Errorf("%q: exit %d, output\n%s\nwant exit 2 and %q", tc.args, code, out, tc.msg)
		}
		entries, err := os.ReadDir(dir)
		b, _ := os.ReadFile(filepath.Join(dir, "results.csv"))
		if err != nil || len(entries) != 1 || string(b) != earlier {
			t.Errorf("%q: -out holds %v (%v), results.csv %q; want the earlier results.csv only", tc.args, entries, err, b)
		}
	}

	// A folder that cannot be made: a failure of the run, not of a flag.
	file := filepath.Join(t.TempDir(), "a-file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	if code, out := run("-cpu", "-out", filepath.Join(file, "out"), "-sizes", "4", "-reps", "1"); code != 1 || !strings.Contains(out, "nttbench: FAILED: ") {
		t.Errorf("-out under a file: exit %d, output\n%s\nwant exit 1 and FAILED", code, out)
	}

	dir := outDir()
	if code, out := run("-cpu", "-out", dir, "-sizes", "4", "-batches", "1", "-reps", "1"); code != 0 {
		t.Errorf("a run on the CPU: exit %d, output\n%s", code, out)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "results.csv")); err != nil || !strings.HasPrefix(string(b), "device,") {
		t.Errorf("after a run, results.csv: %.40q, %v", b, err)
	}
}

// TestQuickCPUBatches checks that -quick on the CPU keeps to small batches
// (1 and 16), so a smoke run takes seconds, not minutes.
func TestQuickCPUBatches(t *testing.T) {
	dir := t.TempDir()
	cfg, err := parseFlags([]string{"-cpu", "-quick", "-out", dir, "-sizes", "4"}, os.Stderr)
	require.NoError(t, err)
	var stdout, stderr bytes.Buffer
	if err := run(cfg, &stdout, &stderr); err != nil {
		t.Fatalf("run: %v\nstderr:\n%s", err, stderr.String())
	}
	b, err := os.ReadFile(filepath.Join(dir, "results.csv"))
	require.NoError(t, err)
	rows, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	require.NoError(t, err)
	batches := map[string]int{}
	for _, r := range rows[1:] {
		batches[r[5]]++
	}
	if len(rows) != 1+3*2 || batches["1"] != 3 || batches["16"] != 3 {
		t.Errorf("CPU -quick rows by batch %v (%d rows), want batches 1 and 16 for 3 variants", batches, len(rows)-1)
	}
}
