package benchio

import (
	"os"
	"path/filepath"
	"testing"
)

func TestSig(t *testing.T) {
	for x, want := range map[float64]string{74.77: "74.77", 0.5: "0.5000", 1539.2: "1539", 123456: "123456", 0: "0"} {
		if got := Sig(x); got != want {
			t.Errorf("Sig(%v) = %q, want %q", x, got, want)
		}
	}
}

func TestLogTicks(t *testing.T) {
	ticks := LogTicks{}.Ticks(3, 250)
	labels := map[float64]string{}
	for _, tk := range ticks {
		labels[tk.Value] = tk.Label
	}
	if labels[10] != "10" || labels[100] != "100" || labels[20] != "" || len(ticks) != 7+9+2 {
		t.Errorf("ticks %v", ticks)
	}
	if len((LogTicks{}).Ticks(0, 1)) != 0 {
		t.Error("ticks for a non-positive range")
	}
	if bt := BatchTicks([]int{1, 64}); len(bt) != 2 || bt[1].Label != "64" {
		t.Errorf("BatchTicks: %v", bt)
	}
	if CPUModel() == "" {
		t.Error("empty CPU model")
	}
}

// TestPrepareOut: the folder is made, an earlier run's listed files are
// removed and others kept, no probe file stays, and a folder that cannot
// be written to is an error before any work.
func TestPrepareOut(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	if err := PrepareOut(dir, "a.png"); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a.png", "keep.txt"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("old"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := PrepareOut(dir, "a.png", "b.png"); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != 1 || entries[0].Name() != "keep.txt" {
		t.Errorf("after PrepareOut: %v, %v; want keep.txt only", entries, err)
	}
	file := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := PrepareOut(filepath.Join(file, "sub")); err == nil {
		t.Error("an output folder under a file: no error")
	}
}
