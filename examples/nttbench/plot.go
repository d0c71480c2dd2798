package main

import (
	"fmt"
	"image/color"
	"math"
	"strconv"

	"github.com/goldfhe/goldfhe/examples/internal/benchio"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// The plots, written with gonum.org/v1/plot.
const (
	plotTime1024  = "time_vs_batch_N1024.png"
	plotTimeSmall = "time_vs_batch_small.png"
	plotSpeedup   = "speedup.png"
)

// writePlots draws the plots whose data was measured and saves them with
// out.
func writePlots(out *benchio.Saver, dev deviceDesc, rs []result) {
	out.Save(plotTime1024, func() (*plot.Plot, vg.Length, vg.Length, error) {
		p, err := timePlot(rs, func(c benchCase) bool { return c.table == 2 && c.n == 1024 },
			"N = 1024 negacyclic NTT: time per batch", dev)
		return p, 10 * vg.Inch, 7 * vg.Inch, err
	})
	out.Save(plotTimeSmall, func() (*plot.Plot, vg.Length, vg.Length, error) {
		p, err := timePlot(rs, func(c benchCase) bool { return c.table == 1 },
			"Small n-point cyclic NTTs (Table 1): time per batch", dev)
		return p, 10 * vg.Inch, 7 * vg.Inch, err
	})
	out.Save(plotSpeedup, func() (*plot.Plot, vg.Length, vg.Length, error) { return speedupPlot(rs, dev) })
}

// variantStyle gives each variant a dash pattern and a glyph.
func variantStyle(v string) (dashes []vg.Length, glyph draw.GlyphDrawer) {
	switch v {
	case vMatrix:
		return nil, draw.TriangleGlyph{}
	case vNoMerge:
		return []vg.Length{vg.Points(6), vg.Points(3)}, draw.BoxGlyph{}
	case vHybrid:
		return []vg.Length{vg.Points(2), vg.Points(2)}, draw.CrossGlyph{}
	}
	return []vg.Length{vg.Points(8), vg.Points(3), vg.Points(2), vg.Points(3)}, draw.CircleGlyph{}
}

// timePlot draws time per batch against batch size (log-log), one line per
// case accepted by keep; nil when there is nothing to draw.
func timePlot(rs []result, keep func(benchCase) bool, title string, dev deviceDesc) (*plot.Plot, error) {
	var (
		order  []benchCase
		pts    = map[string]plotter.XYs{}
		groups = map[string]int{} // line colour by n (Table 1) or factorisation
		batchT []int
		minY   = math.Inf(1)
		maxY   = math.Inf(-1)
	)
	seenB := map[int]bool{}
	for _, r := range rs {
		if !keep(r.c) || r.m.micros <= 0 {
			continue
		}
		k := r.c.key()
		if _, ok := pts[k]; !ok {
			order = append(order, r.c)
		}
		pts[k] = append(pts[k], plotter.XY{X: float64(r.m.batch), Y: r.m.micros})
		minY, maxY = min(minY, r.m.micros), max(maxY, r.m.micros)
		if !seenB[r.m.batch] {
			seenB[r.m.batch] = true
			batchT = append(batchT, r.m.batch)
		}
	}
	if len(order) == 0 {
		return nil, nil
	}
	p := plot.New()
	p.Title.Text = title + "\n" + dev.name
	p.X.Label.Text = "batch size (transforms per launch)"
	p.Y.Label.Text = "median time per batch (µs)"
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker = benchio.BatchTicks(batchT)
	p.Y.Tick.Marker = benchio.LogTicks{}
	p.Add(plotter.NewGrid())
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.XOffs, p.Legend.YOffs = vg.Points(45), -vg.Points(5)
	for _, c := range order {
		line, scatter, err := plotter.NewLinePoints(pts[c.key()])
		if err != nil {
			return nil, err
		}
		label := c.variant
		group := strconv.Itoa(c.n)
		if c.table == 1 {
			label = fmt.Sprintf("n=%d %s", c.n, c.variant)
		} else if len(c.factors) > 0 {
			group = c.factorString()
			label = c.factorString() + " " + c.variant
		}
		if _, ok := groups[group]; !ok {
			groups[group] = len(groups)
		}
		col := plotutil.Color(groups[group])
		if c.table == 2 && c.variant == vButterfly {
			col = color.Black
		}
		dashes, glyph := variantStyle(c.variant)
		line.Color, line.Dashes, line.Width = col, dashes, vg.Points(1.5)
		scatter.Color, scatter.Shape, scatter.Radius = col, glyph, vg.Points(3)
		p.Add(line, scatter)
		p.Legend.Add(label, line, scatter)
	}
	// Explicit ranges: the log scales need positive, distinct ends.
	bmin, bmax := float64(batchT[0]), float64(batchT[0])
	for _, b := range batchT {
		bmin, bmax = min(bmin, float64(b)), max(bmax, float64(b))
	}
	p.X.Min, p.X.Max = bmin/1.5, bmax*1.5
	p.Y.Min, p.Y.Max = minY/1.5, maxY*1.5
	return p, nil
}

// speedupPlot draws, as horizontal bars, each non-butterfly case's speed-up
// over the butterfly of the same size at its largest batch.
func speedupPlot(rs []result, dev deviceDesc) (*plot.Plot, vg.Length, vg.Length, error) {
	var bars []result
	batch := map[int]bool{}
	for _, r := range largest(rs) {
		if r.c.variant != vButterfly && r.speedup > 0 {
			bars = append(bars, r)
			batch[r.m.batch] = true
		}
	}
	if len(bars) == 0 {
		return nil, 0, 0, nil
	}
	at := "the largest batch"
	if len(batch) == 1 {
		at = fmt.Sprintf("batch %d", bars[0].m.batch)
	}
	p := plot.New()
	p.Title.Text = fmt.Sprintf("Speed-up over the butterfly of the same size at %s\n%s", at, dev.name)
	p.X.Label.Text = "butterfly time / variant time"
	p.Add(plotter.NewGrid())
	colours := map[string]color.Color{vMatrix: plotutil.Color(2), vNoMerge: plotutil.Color(3), vHybrid: plotutil.Color(1)}
	legend := map[string]bool{}
	labels := make([]string, len(bars))
	var vals plotter.XYLabels
	maxX := 1.0
	for i, r := range bars {
		y := len(bars) - 1 - i // first case on top
		if r.c.table == 1 {
			labels[y] = fmt.Sprintf("T1 n=%d %s", r.c.n, r.c.variant)
		} else {
			labels[y] = fmt.Sprintf("N=%d %s %s", r.c.n, r.c.factorString(), r.c.variant)
		}
		bc, err := plotter.NewBarChart(plotter.Values{r.speedup}, vg.Points(9))
		if err != nil {
			return nil, 0, 0, err
		}
		bc.Horizontal, bc.XMin = true, float64(y)
		bc.Color, bc.LineStyle.Width = colours[r.c.variant], 0
		p.Add(bc)
		if !legend[r.c.variant] {
			legend[r.c.variant] = true
			p.Legend.Add(r.c.variant, bc)
		}
		vals.XYs = append(vals.XYs, plotter.XY{X: r.speedup, Y: float64(y)})
		vals.Labels = append(vals.Labels, fmt.Sprintf("%.2f", r.speedup))
		maxX = max(maxX, r.speedup)
	}
	lbl, err := plotter.NewLabels(vals)
	if err != nil {
		return nil, 0, 0, err
	}
	lbl.Offset = vg.Point{X: vg.Points(3), Y: -vg.Points(4)}
	for i := range lbl.TextStyle {
		lbl.TextStyle[i].Font.Size = vg.Points(8)
	}
	p.Add(lbl)
	one, err := plotter.NewLine(plotter.XYs{{X: 1, Y: -0.5}, {X: 1, Y: float64(len(bars)) - 0.5}})
	if err != nil {
		return nil, 0, 0, err
	}
	one.Color, one.Dashes = color.Gray{Y: 80}, []vg.Length{vg.Points(4), vg.Points(3)}
	p.Add(one)
	p.NominalY(labels...)
	p.X.Min, p.X.Max = 0, maxX*1.15
	p.Legend.XOffs, p.Legend.YOffs = -vg.Points(15), vg.Points(45)
	h := vg.Length(len(bars))*vg.Points(16) + 1.5*vg.Inch
	return p, 9 * vg.Inch, max(h, 3*vg.Inch), nil
}
