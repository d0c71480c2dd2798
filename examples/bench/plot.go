package main

import (
	"fmt"
	"image/color"
	"math"
	"runtime"
	"slices"

	"github.com/goldfhe/goldfhe/examples/internal/benchio"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// writePlots draws the plots whose data was measured (gonum.org/v1/plot)
// with out: the throughput as one panel per parameter set, one above the
// other (28 lines in one panel, as make bench measures, could not be told
// apart), and the latencies.
func writePlots(out *benchio.Saver, m machine, rs []caseResult) {
	out.SaveColumn(fileGates, func() ([]*plot.Plot, vg.Length, vg.Length, error) {
		p, err := throughputPlots(rs, m)
		return p, 10 * vg.Inch, 7 * vg.Inch, err
	})
	out.Save(fileLatency, func() (*plot.Plot, vg.Length, vg.Length, error) { return latencyPlot(rs, m) })
}

// shortDevice names the machine in a plot title.
func (m machine) shortDevice() string {
	cpu := fmt.Sprintf("CPU %s (%d threads)", m.cpuModel, runtime.GOMAXPROCS(0))
	if m.gpu != nil {
		return m.gpu.Name + "; " + cpu
	}
	return cpu + "; no GPU"
}

// caseLabel names a case in the latency plot.
func caseLabel(r caseResult) string {
	return fmt.Sprintf("%s %s %s", r.c.engine, setLabel(r.c.set), r.variant)
}

// variantDashes gives each variant a dash pattern.
func variantDashes(v variantSpec) []vg.Length {
	switch v.name {
	case vButterfly:
		return []vg.Length{vg.Points(6), vg.Points(3)}
	case vMatrix:
		return []vg.Length{vg.Points(2), vg.Points(2)}
	case vDefault:
		return []vg.Length{vg.Points(8), vg.Points(3), vg.Points(2), vg.Points(3)}
	case vFused:
		return []vg.Length{vg.Points(1), vg.Points(3)}
	case vUnfused:
		return []vg.Length{vg.Points(10), vg.Points(4)}
	}
	return nil
}

// variantGlyph gives each variant a point shape, so that lines of one
// colour stay apart where they overlap.
func variantGlyph(v variantSpec) draw.GlyphDrawer {
	switch v.name {
	case vButterfly:
		return draw.SquareGlyph{}
	case vMatrix:
		return draw.CrossGlyph{}
	case vDefault:
		return draw.RingGlyph{}
	case vFused:
		return draw.BoxGlyph{}
	case vWide:
		return draw.PyramidGlyph{}
	case vUnfused:
		return draw.PlusGlyph{}
	case vGrouped, vGrouped3:
		return draw.TriangleGlyph{}
	}
	return draw.CircleGlyph{}
}

// throughputPlots draws gates/s against batch size (log-log), one plot
// per parameter set in the order the sets first appear in rs, one line per
// case in a colour of its own; every plot has the same axes, so that the
// sets compare at a glance. Nil when nothing was measured.
func throughputPlots(rs []caseResult, m machine) ([]*plot.Plot, error) {
	var (
		sets       []string
		bySet      = map[string][]caseResult{}
		batches    []int
		seenBatch  = map[int]bool{}
		minX, maxX = math.Inf(1), math.Inf(-1)
		minY, maxY = math.Inf(1), math.Inf(-1)
	)
	for _, r := range rs {
		if len(r.ms) == 0 {
			continue
		}
		name := r.c.set.Name()
		if _, ok := bySet[name]; !ok {
			sets = append(sets, name)
		}
		bySet[name] = append(bySet[name], r)
		for _, x := range r.ms {
			g := x.gatesPerSecond()
			minX, maxX = min(minX, float64(x.batch)), max(maxX, float64(x.batch))
			minY, maxY = min(minY, g), max(maxY, g)
			if !seenBatch[x.batch] {
				seenBatch[x.batch] = true
				batches = append(batches, x.batch)
			}
		}
	}
	if len(sets) == 0 {
		return nil, nil
	}
	slices.Sort(batches)
	var plots []*plot.Plot
	for i, name := range sets {
		cases := bySet[name]
		p := plot.New()
		p.Title.Text = "Gate bootstrapping throughput, " + setLabel(cases[0].c.set)
		if i == 0 {
			p.Title.Text += "\n" + m.shortDevice()
		}
		p.X.Label.Text = "batch size (gates per Engine.Bootstrap call)"
		p.Y.Label.Text = "gates per second (batch / median time)"
		p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
		p.Y.Tick.Marker = benchio.LogTicks{}
		p.X.Tick.Marker = benchio.BatchTicks(batches)
		p.Add(plotter.NewGrid())
		p.Legend.Top, p.Legend.Left = true, true
		p.Legend.TextStyle.Font.Size = vg.Points(9)
		for j, r := range cases {
			pts := make(plotter.XYs, len(r.ms))
			for k, x := range r.ms {
				pts[k] = plotter.XY{X: float64(x.batch), Y: x.gatesPerSecond()}
			}
			line, scatter, err := plotter.NewLinePoints(pts)
			if err != nil {
				return nil, err
			}
			col := plotutil.Color(j)
			line.Color, line.Dashes, line.Width = col, variantDashes(r.c.variant), vg.Points(1.5)
			scatter.Color, scatter.Radius = col, vg.Points(3)
			scatter.Shape = variantGlyph(r.c.variant)
			if r.c.engine == engCPU {
				scatter.Shape, line.Width = draw.TriangleGlyph{}, vg.Points(1)
			}
			p.Add(line, scatter)
			p.Legend.Add(r.c.engine+" "+r.variant, line, scatter)
		}
		// Explicit ranges: the log scales need positive, distinct ends.
		p.X.Min, p.X.Max = minX/1.5, maxX*1.5
		p.Y.Min, p.Y.Max = minY/2, maxY*3 // room for the legend above the lines
		plots = append(plots, p)
	}
	return plots, nil
}

// latencyPlot draws each case's single-gate latency (the median time of
// batch 1) as a horizontal bar; nil when batch 1 was not measured.
func latencyPlot(rs []caseResult, m machine) (*plot.Plot, vg.Length, vg.Length, error) {
	type bar struct {
		r  caseResult
		ms float64
	}
	var bars []bar
	for _, r := range rs {
		if x, ok := r.latency(); ok {
			bars = append(bars, bar{r, x.ms()})
		}
	}
	if len(bars) == 0 {
		return nil, 0, 0, nil
	}
	p := plot.New()
	p.Title.Text = "Single-gate latency (median time of a batch of 1)\n" + m.shortDevice()
	p.X.Label.Text = "ms per gate"
	p.Add(plotter.NewGrid())
	// Bars coloured by engine; the labels name it, so no legend.
	colours := map[string]color.Color{engGPU: plotutil.Color(0), engCPU: plotutil.Color(3)}
	labels := make([]string, len(bars))
	var vals plotter.XYLabels
	maxX := 0.0
	for i, b := range bars {
		y := len(bars) - 1 - i // first case on top
		labels[y] = caseLabel(b.r)
		bc, err := plotter.NewBarChart(plotter.Values{b.ms}, vg.Points(9))
		if err != nil {
			return nil, 0, 0, err
		}
		bc.Horizontal, bc.XMin = true, float64(y)
		bc.Color, bc.LineStyle.Width = colours[b.r.c.engine], 0
		p.Add(bc)
		vals.XYs = append(vals.XYs, plotter.XY{X: b.ms, Y: float64(y)})
		vals.Labels = append(vals.Labels, benchio.Sig(b.ms)+" ms")
		maxX = max(maxX, b.ms)
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
	p.NominalY(labels...)
	p.X.Min, p.X.Max = 0, max(maxX, 1e-3)*1.3 // room for the value labels
	h := vg.Length(len(bars))*vg.Points(16) + 1.5*vg.Inch
	return p, 9 * vg.Inch, max(h, 3*vg.Inch), nil
}
