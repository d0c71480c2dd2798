package benchio

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

func TestParseInts(t *testing.T) {
	if got, err := ParseInts(" 16,1, 4,16 "); err != nil || !slices.Equal(got, []int{1, 4, 16}) || JoinInts(got) != "1,4,16" {
		t.Errorf("ParseInts: %v, %v; want [1 4 16]", got, err)
	}
	for _, s := range []string{"", "1,,4", "1,x", "1e3", "4,"} {
		if got, err := ParseInts(s); err == nil {
			t.Errorf("ParseInts(%q) = %v, no error", s, got)
		}
	}
}

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
// removed with the temporary files a killed WriteFile left for them and
// others kept, no probe file stays, and a folder that cannot be written
// to is an error before any work.
func TestPrepareOut(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	require.NoError(t, PrepareOut(dir, "a.png"))
	for _, name := range []string{"a.png", ".a.png.tmp-123", "keep.txt", ".keep.txt.tmp-123"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte("old"), 0o644))
	}
	require.NoError(t, PrepareOut(dir, "a.png", "b.png"))
	if got := names(t, dir); !slices.Equal(got, []string{".keep.txt.tmp-123", "keep.txt"}) {
		t.Errorf("after PrepareOut: %q; want keep.txt and its temporary file only", got)
	}
	file := filepath.Join(t.TempDir(), "a-file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	if err := PrepareOut(filepath.Join(file, "sub")); err == nil {
		t.Error("an output folder under a file: no error")
	}
}

// names lists dir's entries.
func names(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

// TestWriteFile: a file is replaced whole, readable by all; a write that
// fails or panics midway leaves the earlier file as it was and no other,
// and so does a folder that does not exist.
func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "results.csv")
	require.NoError(t, os.WriteFile(name, []byte("old"), 0o600))
	write := func(s string) func(io.Writer) error {
		return func(w io.Writer) error {
			_, err := io.WriteString(w, s)
			return err
		}
	}
	require.NoError(t, WriteFile(name, write("new")))
	check := func(when, want string) {
		t.Helper()
		if b, err := os.ReadFile(name); err != nil || string(b) != want {
			t.Errorf("%s: %d bytes %.16q, %v; want %q", when, len(b), b, err, want)
		}
		if got := names(t, dir); !slices.Equal(got, []string{"results.csv"}) {
			t.Errorf("%s: the folder holds %q", when, got)
		}
	}
	check("written", "new")
	if st, err := os.Stat(name); err != nil || st.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, %v; want 0644", st.Mode(), err)
	}

	errMidway := errors.New("midway")
	err := WriteFile(name, func(w io.Writer) error {
		// More than a buffer's worth, so that part reaches the file.
		if _, err := w.Write(make([]byte, 1<<16)); err != nil {
			return err
		}
		return errMidway
	})
	if !errors.Is(err, errMidway) {
		t.Errorf("a failed write: %v", err)
	}
	check("after a failed write", "new")

	func() {
		defer func() { recover() }()
		WriteFile(name, func(w io.Writer) error { panic("midway") })
	}()
	check("after a write that panicked", "new")

	if err := WriteFile(filepath.Join(dir, "none", "results.csv"), write("new")); err == nil {
		t.Error("a file in a missing folder: no error")
	}
	check("after a missing folder", "new")
}

// panicPlotter panics when drawn, as gonum does on some degenerate inputs.
type panicPlotter struct{}

func (panicPlotter) Plot(draw.Canvas, *plot.Plot) { panic("degenerate input") }

// TestSaverPlotFailure: a plot whose drawing panics, or of an unknown
// format, is an error and leaves no file (plot.Save, used for one plot,
// created the file before drawing, and an empty PNG stayed beside the
// results); the good plot beside it is written.
func TestSaverPlotFailure(t *testing.T) {
	mk := func(bad bool) func() (*plot.Plot, vg.Length, vg.Length, error) {
		return func() (*plot.Plot, vg.Length, vg.Length, error) {
			p := plot.New()
			if bad {
				p.Add(panicPlotter{})
			}
			return p, 2 * vg.Inch, 2 * vg.Inch, nil
		}
	}
	s := Saver{Dir: t.TempDir()}
	s.Save("panics.png", mk(true))
	s.Save("format.bogus", mk(false))
	s.SaveColumn("column.png", func() ([]*plot.Plot, vg.Length, vg.Length, error) {
		p, w, h, _ := mk(false)()
		q, _, _, _ := mk(true)()
		return []*plot.Plot{p, q}, w, h, nil
	})
	s.Save("good.png", mk(false))
	if len(s.Errs) != 3 || !slices.Equal(s.Written, []string{"good.png"}) {
		t.Errorf("errors %v, written %q; want 3 errors and good.png", s.Errs, s.Written)
	}
	if got := names(t, s.Dir); !slices.Equal(got, []string{"good.png"}) {
		t.Errorf("the folder holds %q, want good.png only", got)
	}
}
