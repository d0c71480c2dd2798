// Package benchio holds what the benchmark programs (examples/bench,
// examples/nttbench) share: the parsing of their list flags, the host
// CPU's name, number formatting for their tables, the log-scale tick markers of their plots, and the
// preparation of their output folder and the writing of its files.
package benchio

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// PrepareOut makes the output folder dir, checks that a file can be
// written there, and removes the given files an earlier run may have left
// in it, with the temporary files of WriteFile that a killed run left for
// them. Before any case runs: a folder that cannot be written loses a whole
// benchmark's results at its end, and a stale plot beside fresh results
// passes for one of them.
func PrepareOut(dir string, files ...string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".write-check-*")
	if err != nil {
		return fmt.Errorf("cannot write to the output folder: %w", err)
	}
	f.Close()
	os.Remove(f.Name())
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		for _, name := range files {
			if e.Name() == name || strings.HasPrefix(e.Name(), tempPrefix(name)) {
				if err := os.Remove(filepath.Join(dir, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
					return fmt.Errorf("removing an earlier run's %s: %w", e.Name(), err)
				}
				break
			}
		}
	}
	return nil
}

// tempPrefix begins the names of WriteFile's temporary files for name.
func tempPrefix(name string) string { return "." + name + ".tmp-" }

// WriteFile writes the file name with write, whole or not at all: write
// fills a temporary file in the same folder, which is flushed, made
// readable by all (0644), synced and closed, every error checked, and then
// renamed over name. A run that fails or is killed midway leaves no
// truncated file that passes for results: name is the earlier file or
// none, and a killed run leaves at most a hidden temporary file, which
// PrepareOut removes.
func WriteFile(name string, write func(w io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(name), tempPrefix(filepath.Base(name))+"*")
	if err != nil {
		return err
	}
	renamed := false
	defer func() {
		if !renamed { // an error, or a panic of write
			f.Close() // closed already where the rename failed
			os.Remove(f.Name())
		}
	}()
	bw := bufio.NewWriter(f)
	if err := write(bw); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if err := f.Chmod(0o644); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(f.Name(), name); err != nil {
		return err
	}
	renamed = true
	return nil
}

// ParseInts reads a comma-separated list of integers, "1,4,16" (spaces
// around each allowed), into an ascending list without duplicates: the
// list flags of the benchmark programs.
func ParseInts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		x, err := strconv.Atoi(f)
		if err != nil {
			return nil, fmt.Errorf("%q is not an integer", f)
		}
		out = append(out, x)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// JoinInts writes xs as ParseInts reads them.
func JoinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}

// CPUModel returns the first "model name" of /proc/cpuinfo, or the
// architecture where there is none.
func CPUModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == "model name" && strings.TrimSpace(v) != "" {
			return strings.TrimSpace(v)
		}
	}
	return runtime.GOARCH
}

// Sig formats x with about 4 significant digits and no exponent.
func Sig(x float64) string {
	if x <= 0 || math.IsInf(x, 0) || math.IsNaN(x) {
		return strconv.FormatFloat(x, 'g', 4, 64)
	}
	d := 3 - int(math.Floor(math.Log10(x)))
	return strconv.FormatFloat(x, 'f', max(d, 0), 64)
}

// BatchTicks labels the measured batch sizes on a log axis.
func BatchTicks(bs []int) plot.ConstantTicks {
	var t plot.ConstantTicks
	for _, b := range bs {
		t = append(t, plot.Tick{Value: float64(b), Label: strconv.Itoa(b)})
	}
	return t
}

// LogTicks labels the powers of ten of a log axis and marks 2…9 times them.
type LogTicks struct{}

// Ticks implements plot.Ticker.
func (LogTicks) Ticks(lo, hi float64) []plot.Tick {
	var t []plot.Tick
	if lo <= 0 || hi <= lo {
		return t
	}
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		v := math.Pow(10, e)
		for i := 1; i < 10; i++ {
			x := v * float64(i)
			if x < lo || x > hi {
				continue
			}
			label := ""
			if i == 1 {
				label = strconv.FormatFloat(x, 'g', -1, 64)
			}
			t = append(t, plot.Tick{Value: x, Label: label})
		}
	}
	return t
}

// Saver writes a run's files into Dir through WriteFile, collecting the
// names written and the errors. Plots are saved as image files, the format
// from each name's extension. A plot that draws nothing (nil) is skipped;
// gonum panics on some degenerate inputs, which Save recovers into errors,
// leaving no file.
type Saver struct {
	Dir     string
	Written []string
	Errs    []error
}

// Write writes Dir/name with write.
func (s *Saver) Write(name string, write func(w io.Writer) error) {
	if err := WriteFile(filepath.Join(s.Dir, name), write); err != nil {
		s.Errs = append(s.Errs, fmt.Errorf("writing %s: %w", name, err))
		return
	}
	s.Written = append(s.Written, name)
}

// WriteString writes Dir/name holding text.
func (s *Saver) WriteString(name, text string) {
	s.Write(name, func(w io.Writer) error {
		_, err := io.WriteString(w, text)
		return err
	})
}

// Save draws one plot of width w and height h and saves it as Dir/name.
func (s *Saver) Save(name string, mk func() (p *plot.Plot, w, h vg.Length, err error)) {
	s.SaveColumn(name, func() ([]*plot.Plot, vg.Length, vg.Length, error) {
		p, w, h, err := mk()
		if p == nil {
			return nil, w, h, err
		}
		return []*plot.Plot{p}, w, h, err
	})
}

// SaveColumn draws plots one above the other, each of width w and height
// h, their axes aligned (plot.Align), and saves them as one image
// Dir/name. Nil entries are skipped; nothing is written when none is left.
func (s *Saver) SaveColumn(name string, mk func() (ps []*plot.Plot, w, h vg.Length, err error)) {
	err := func() (err error) {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("%v", r)
			}
		}()
		ps, w, h, err := mk()
		if err != nil {
			return err
		}
		var rows [][]*plot.Plot
		for _, p := range ps {
			if p != nil {
				rows = append(rows, []*plot.Plot{p})
			}
		}
		if len(rows) == 0 {
			return nil
		}
		if err := saveColumn(rows, w, h, filepath.Join(s.Dir, name)); err != nil {
			return err
		}
		s.Written = append(s.Written, name)
		return nil
	}()
	if err != nil {
		s.Errs = append(s.Errs, fmt.Errorf("plot %s: %w", name, err))
	}
}

// saveColumn writes rows (one plot each) to file, the format from its
// extension, as plot.Plot.Save does for one, but through WriteFile and
// drawn before the file is made: Save creates the file first, so a
// drawing that panicked or failed left it empty.
func saveColumn(rows [][]*plot.Plot, w, h vg.Length, file string) error {
	img, err := drawColumn(rows, w, h, strings.ToLower(strings.TrimPrefix(filepath.Ext(file), ".")))
	if err != nil {
		return err
	}
	return WriteFile(file, func(w io.Writer) error {
		_, err := img.WriteTo(w)
		return err
	})
}

// drawColumn draws rows one above the other, their axes aligned, as an
// image of the format.
func drawColumn(rows [][]*plot.Plot, w, h vg.Length, format string) (io.WriterTo, error) {
	if len(rows) == 1 {
		return rows[0][0].WriterTo(w, h, format)
	}
	c, err := draw.NewFormattedCanvas(w, h*vg.Length(len(rows)), format)
	if err != nil {
		return nil, err
	}
	tiles := draw.Tiles{Rows: len(rows), Cols: 1, PadY: vg.Points(12), PadTop: vg.Points(4), PadBottom: vg.Points(4),
		PadLeft: vg.Points(4), PadRight: vg.Points(8)}
	canvases := plot.Align(rows, tiles, draw.New(c))
	for i, r := range rows {
		r[0].Draw(canvases[i][0])
	}
	return c, nil
}
