// Package benchio holds what the benchmark programs (examples/bench,
// examples/nttbench) share: the host CPU's name, number formatting for
// their tables, the log-scale tick markers of their plots, and the
// preparation of their output folder.
package benchio

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// PrepareOut makes the output folder dir, checks that a file can be
// written there, and removes the given files an earlier run may have left
// in it. Before any case runs: a folder that cannot be written loses a whole
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
	for _, name := range files {
		if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("removing an earlier run's %s: %w", name, err)
		}
	}
	return nil
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

// PlotSaver saves plots as image files in Dir (the format from each name's
// extension), collecting the names written and the errors. A plot that
// draws nothing (nil) is skipped; gonum panics on some degenerate inputs,
// which Save recovers into errors.
type PlotSaver struct {
	Dir     string
	Written []string
	Errs    []error
}

// Save draws one plot of width w and height h and saves it as Dir/name.
func (s *PlotSaver) Save(name string, mk func() (p *plot.Plot, w, h vg.Length, err error)) {
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
func (s *PlotSaver) SaveColumn(name string, mk func() (ps []*plot.Plot, w, h vg.Length, err error)) {
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
// extension, as plot.Plot.Save does for one.
func saveColumn(rows [][]*plot.Plot, w, h vg.Length, file string) (err error) {
	if len(rows) == 1 {
		return rows[0][0].Save(w, h, file)
	}
	format := strings.ToLower(strings.TrimPrefix(filepath.Ext(file), "."))
	c, err := draw.NewFormattedCanvas(w, h*vg.Length(len(rows)), format)
	if err != nil {
		return err
	}
	tiles := draw.Tiles{Rows: len(rows), Cols: 1, PadY: vg.Points(12), PadTop: vg.Points(4), PadBottom: vg.Points(4),
		PadLeft: vg.Points(4), PadRight: vg.Points(8)}
	canvases := plot.Align(rows, tiles, draw.New(c))
	for i, r := range rows {
		r[0].Draw(canvases[i][0])
	}
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	defer func() {
		if e := f.Close(); err == nil {
			err = e
		}
	}()
	_, err = c.WriteTo(f)
	return err
}
