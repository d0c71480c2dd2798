package main

import (
	"encoding/csv"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/goldfhe/goldfhe/examples/internal/benchio"
)

// Files written to -out: at most these four.
const (
	fileCSV     = "results.csv"
	fileSummary = "summary.txt"
	fileGates   = "gates_per_s.png"
	fileLatency = "latency.png"
)

// csvHeader are results.csv's columns.
var csvHeader = []string{"device", "engine", "set", "variant", "batch", "median_ms", "gates_per_s", "mj_per_gate"}

// writeCSV writes results.csv: one row per case and batch size.
func writeCSV(f io.Writer, m machine, rs []caseResult) error {
	w := csv.NewWriter(f)
	w.Write(csvHeader)
	for _, r := range rs {
		for _, x := range r.ms {
			mj := "" // not measured: a CPU case, or no energy counter
			if v, ok := x.mJPerGate(); ok {
				mj = strconv.FormatFloat(v, 'f', 3, 64)
			}
			w.Write([]string{
				m.deviceName(r.c.engine),
				r.c.engine,
				r.c.set.Name(),
				r.variant,
				strconv.Itoa(x.batch),
				strconv.FormatFloat(x.ms(), 'f', 4, 64),
				strconv.FormatFloat(x.gatesPerSecond(), 'f', 2, 64),
				mj,
			})
		}
	}
	w.Flush()
	return w.Error()
}

// latency returns the median time of batch 1, if it was measured.
func (r caseResult) latency() (measurement, bool) {
	for _, x := range r.ms {
		if x.batch == 1 {
			return x, true
		}
	}
	return measurement{}, false
}

// peak returns the measurement with the most gates per second.
func (r caseResult) peak() (measurement, bool) {
	if len(r.ms) == 0 {
		return measurement{}, false
	}
	best := r.ms[0]
	for _, x := range r.ms[1:] {
		if x.gatesPerSecond() > best.gatesPerSecond() {
			best = x
		}
	}
	return best, true
}

// writeSummary writes the table printed last: one row per case with its
// single-gate latency and its gates/s at each batch size, then the engines,
// notes and failures.
func writeSummary(w io.Writer, m machine, cfg config, rs []caseResult, notes []string, failed []error) {
	fmt.Fprintf(w, "goldfhe gate bootstrapping benchmark (examples/bench, DESIGN.md §6)\n")
	fmt.Fprintf(w, "device: %s\n", m.header())
	fmt.Fprintf(w, "method: wall time of Engine.Bootstrap (synchronous; on the GPU uploads, kernels and downloads included),\n"+
		"        median of up to %d run(s) after a warm-up (none for calls over %v; at most %d gates or ~%v per batch size); NAND-style inputs,\n"+
		"        every output decrypted and checked, engines and plans compared bit for bit\n",
		cfg.reps, warmupLimit, cfg.maxGates, timeCap)
	fmt.Fprintf(w, "latency = median time of one gate (batch 1); gates/s = batch / median time\n\n")

	var batches []int
	for _, r := range rs {
		for _, x := range r.ms {
			if !slices.Contains(batches, x.batch) {
				batches = append(batches, x.batch)
			}
		}
	}
	slices.Sort(batches)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := []string{"engine", "set", "variant", "latency ms", "peak gates/s"}
	for _, b := range batches {
		head = append(head, "b="+strconv.Itoa(b))
	}
	fmt.Fprintf(tw, "%s\t\n", strings.Join(head, "\t"))
	for _, r := range rs {
		row := []string{r.c.engine, setLabel(r.c.set), r.variant, "-", "-"}
		if x, ok := r.latency(); ok {
			row[3] = benchio.Sig(x.ms())
		}
		if x, ok := r.peak(); ok {
			row[4] = benchio.Sig(x.gatesPerSecond())
		}
		for _, b := range batches {
			cell := "-"
			for _, x := range r.ms {
				if x.batch == b {
					cell = benchio.Sig(x.gatesPerSecond())
				}
			}
			row = append(row, cell)
		}
		if r.err != nil {
			row[2] += " FAILED"
		}
		fmt.Fprintf(tw, "%s\t\n", strings.Join(row, "\t"))
	}
	tw.Flush()
	if len(rs) == 0 {
		fmt.Fprintf(w, "no case ran\n")
	}
	fmt.Fprintf(w, "(columns b=…: gates/s at that batch size)\n")
	writePower(w, m, rs)

	var engines []string
	for _, r := range rs {
		if r.engineName != "" && !slices.Contains(engines, r.engineName) {
			engines = append(engines, r.engineName)
		}
	}
	if len(engines) > 0 {
		fmt.Fprintf(w, "\nengines:\n")
		for _, e := range engines {
			fmt.Fprintf(w, "  %s\n", e)
		}
	}
	if len(notes) > 0 {
		fmt.Fprintf(w, "\nnotes:\n")
		for _, n := range notes {
			fmt.Fprintf(w, "  %s\n", n)
		}
	}
	if len(failed) > 0 {
		fmt.Fprintf(w, "\nFAILED (%d):\n", len(failed))
		for _, e := range failed {
			fmt.Fprintf(w, "  %v\n", e)
		}
	}
}

// writePower lists, for each GPU case, the GPU's clock and power during the
// timed runs of its largest batch size (machine.power), which tell whether
// the card ran at full clock or at its power cap, and the board's energy
// per gate over those runs (the output checks between the calls, with the
// GPU idle, included): a card held at its power limit of L watts runs about
// L over the energy per gate of its busy time.
func writePower(w io.Writer, m machine, rs []caseResult) {
	head := false
	for _, r := range rs {
		if r.c.engine != engGPU || len(r.ms) == 0 {
			continue
		}
		x := r.ms[len(r.ms)-1]
		s, ok, err := m.power(x)
		if !ok {
			return
		}
		if !head {
			fmt.Fprintf(w, "\nGPU clock and power (NVML, every %v) during the timed runs of each GPU case's largest batch:\n", monitorEvery)
			head = true
		}
		line := fmt.Sprintf("  %s %s %s b=%d: %v", r.c.engine, r.c.set.Name(), r.variant, x.batch, s)
		if mj, ok := x.mJPerGate(); ok {
			line += fmt.Sprintf("; %.2f mJ a gate (energy counter over the timed runs, Bootstrap calls %.1f%% of that time)",
				mj, 100*x.busy.Seconds()/max(x.to.Sub(x.from).Seconds(), 1e-9))
		}
		if err != nil {
			line += fmt.Sprintf(" (sampling stopped: %v)", err)
		}
		fmt.Fprintln(w, line)
	}
}
