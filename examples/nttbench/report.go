package main

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"

	"github.com/goldfhe/goldfhe/examples/internal/benchio"
)

// result is one case at one batch size.
type result struct {
	c       benchCase
	m       measurement
	speedup float64 // the same-size butterfly's time at this batch over this one; 0 if unknown
}

// transformsPerSecond is the batch over its time.
func (r result) transformsPerSecond() float64 { return float64(r.m.batch) / r.m.micros * 1e6 }

// speedups fills in each result's speed-up over the butterfly of the same
// table and size at the same batch.
func speedups(rs []result) {
	bf := map[string]float64{}
	at := func(key string, batch int) string { return key + "@" + strconv.Itoa(batch) }
	for _, r := range rs {
		if r.c.variant == vButterfly {
			bf[at(r.c.key(), r.m.batch)] = r.m.micros
		}
	}
	for i := range rs {
		if t, ok := bf[at(rs[i].c.butterflyKey(), rs[i].m.batch)]; ok && rs[i].m.micros > 0 {
			rs[i].speedup = t / rs[i].m.micros
		}
	}
}

// csvHeader are results.csv's columns.
var csvHeader = []string{"device", "table", "n", "variant", "factors", "batch", "median_us", "transforms_per_s", "speedup_vs_butterfly"}

// writeCSV writes results.csv: every result.
func writeCSV(f io.Writer, dev deviceDesc, rs []result) error {
	w := csv.NewWriter(f)
	w.Write(csvHeader)
	for _, r := range rs {
		sp := ""
		if r.speedup > 0 {
			sp = strconv.FormatFloat(r.speedup, 'f', 4, 64)
		}
		w.Write([]string{
			dev.name,
			strconv.Itoa(r.c.table),
			strconv.Itoa(r.c.n),
			r.c.variant,
			r.c.factorString(),
			strconv.Itoa(r.m.batch),
			strconv.FormatFloat(r.m.micros, 'f', 4, 64),
			strconv.FormatFloat(r.transformsPerSecond(), 'g', 6, 64),
			sp,
		})
	}
	w.Flush()
	return w.Error()
}

// largest returns, per case in order, its result at its largest batch.
func largest(rs []result) []result {
	var out []result
	idx := map[string]int{}
	for _, r := range rs {
		i, ok := idx[r.c.key()]
		if !ok {
			idx[r.c.key()] = len(out)
			out = append(out, r)
			continue
		}
		if r.m.batch > out[i].m.batch {
			out[i] = r
		}
	}
	return out
}

// writeSummary writes the table printed at the end: one row per case at
// its largest batch, next to the paper's figures, then the failures.
func writeSummary(w io.Writer, dev deviceDesc, rs []result, failed []error) {
	fmt.Fprintf(w, "NTT benchmark: Li, Pan, Li, Wang, Mathematics 12(3):458 (2024), Tables 1 and 2, side by side\n")
	fmt.Fprintf(w, "device: %s\n", dev.header)
	fmt.Fprintf(w, "timing: %s\n", dev.timing)
	fmt.Fprintf(w, "speed-up = butterfly time / variant time, same size and batch; "+
		"paper = its RTX 2080 Ti times (ms, 10,000 runs) and their ratio\n")
	rows := largest(rs)
	for _, table := range []int{1, 2} {
		var tr []result
		for _, r := range rows {
			if r.c.table == table {
				tr = append(tr, r)
			}
		}
		if len(tr) == 0 {
			continue
		}
		if table == 1 {
			fmt.Fprintf(w, "\nTable 1: small n-point cyclic transforms (natural order)\n")
		} else {
			fmt.Fprintf(w, "\nTable 2: N-point negacyclic transforms (eq. 9 decompositions; hybrid = our tuned kernel)\n")
		}
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		size := "n"
		if table == 2 {
			size = "N"
		}
		fmt.Fprintf(tw, "%s\tvariant\tfactors\tbatch\tµs/batch\tMtransforms/s\tspeed-up\tpaper ms\tpaper speed-up\n", size)
		prev := 0
		for _, r := range tr {
			if prev != 0 && r.c.n != prev {
				fmt.Fprintf(tw, "\t\t\t\t\t\t\t\t\n")
			}
			prev = r.c.n
			sp, pms, psp := "-", "-", "-"
			if r.speedup > 0 {
				sp = fmt.Sprintf("%.2f", r.speedup)
			}
			if t, ok := paperMS[r.c.key()]; ok {
				pms = fmt.Sprintf("%.2f", t)
			}
			if s, ok := paperSpeedup(r.c); ok {
				psp = fmt.Sprintf("%.2f", s)
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\n", r.c.n, r.c.variant, r.c.factorString(),
				r.m.batch, benchio.Sig(r.m.micros), benchio.Sig(r.transformsPerSecond()/1e6), sp, pms, psp)
		}
		tw.Flush()
	}
	if len(rows) == 0 {
		fmt.Fprintf(w, "\nno case was timed\n")
	}
	if len(failed) > 0 {
		fmt.Fprintf(w, "\n%d failed:\n", len(failed))
		for _, e := range failed {
			fmt.Fprintf(w, "  %v\n", e)
		}
	}
}
