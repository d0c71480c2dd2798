package main

import (
	"bytes"
	"encoding/csv"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestRunCPU runs the whole program on the CPU plans in a tiny
// configuration and checks what it writes: a CSV with one numeric row per
// case and batch size, the plots and the summary.
func TestRunCPU(t *testing.T) {
	dir := t.TempDir()
	cfg, err := parseFlags([]string{"-cpu", "-out", dir, "-batches", "1,2", "-reps", "2", "-sizes", "8,512"}, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if err := run(cfg, &stdout, &stderr); err != nil {
		t.Fatalf("run: %v\nstderr:\n%s", err, stderr.String())
	}
	f, err := os.Open(filepath.Join(dir, "results.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
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
	if err != nil {
		t.Fatal(err)
	}
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
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(sum), "Table 1") || !strings.Contains(string(sum), "Table 2") || !strings.Contains(stdout.String(), "Table 2") {
		t.Errorf("summary or stdout lacks the tables:\n%s", sum)
	}
}

func TestParseFlagsErrors(t *testing.T) {
	for _, args := range [][]string{
		{"-batches", "0"},
		{"-batches", "x"},
		{"-sizes", "3"},
		{"-reps", "0"},
		{"-cpu", "-gpu"},
	} {
		if _, err := parseFlags(args, &bytes.Buffer{}); err == nil {
			t.Errorf("parseFlags(%q): no error", args)
		}
	}
}

// TestQuickCPUBatches checks that -quick on the CPU keeps to small batches
// (1 and 16), so a smoke run takes seconds, not minutes.
func TestQuickCPUBatches(t *testing.T) {
	dir := t.TempDir()
	cfg, err := parseFlags([]string{"-cpu", "-quick", "-out", dir, "-sizes", "4"}, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if err := run(cfg, &stdout, &stderr); err != nil {
		t.Fatalf("run: %v\nstderr:\n%s", err, stderr.String())
	}
	b, err := os.ReadFile(filepath.Join(dir, "results.csv"))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	batches := map[string]int{}
	for _, r := range rows[1:] {
		batches[r[5]]++
	}
	if len(rows) != 1+3*2 || batches["1"] != 3 || batches["16"] != 3 {
		t.Errorf("CPU -quick rows by batch %v (%d rows), want batches 1 and 16 for 3 variants", batches, len(rows)-1)
	}
}
