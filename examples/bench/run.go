package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/goldfhe/goldfhe/examples/internal/benchio"
)

// run times every case of cfg, then writes the CSV, the plots and the
// summary, which it prints last to stdout. Progress, notes and per-case
// errors go to stderr. It returns an error if anything failed (a wrong
// result above all); the cases that ran are reported all the same.
func run(cfg config, stdout, stderr io.Writer) (err error) {
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(stderr, "%s", debug.Stack())
			err = fmt.Errorf("internal error: %v", r)
		}
	}()
	m := machine{cpuModel: benchio.CPUModel()}
	var useGPU, useCPU bool
	if cfg.engine == "cpu" {
		useCPU, m.noGPU = true, "not used (-engine cpu)"
	} else {
		devs, gerr := probeGPU()
		if gerr == nil {
			m.gpu, useGPU = &devs[0], true
			switch m.gpus = cfg.gpus; {
			case m.gpus == allGPUs:
				m.gpus = len(devs)
			case m.gpus > len(devs):
				return fmt.Errorf("-gpus %d: this machine has %d", m.gpus, len(devs))
			}
			m.others = devs[1:m.gpus]
		} else {
			m.noGPU = gerr.Error()
		}
		switch cfg.engine {
		case "gpu":
			if !useGPU {
				return fmt.Errorf("-engine gpu: %w: %v", errNoGPU, gerr)
			}
		case "auto":
			useCPU = !useGPU
		case "both":
			useCPU = true
		}
		if !useGPU {
			fmt.Fprintf(stderr, "bench: no usable GPU (%v): CPU engine only\n", gerr)
		}
	}
	cases, notes := planCases(cfg, useGPU, useCPU)
	for i := range cases {
		if cases[i].engine == engGPU {
			cases[i].gpus = m.gpus
		}
	}
	if m.gpus > 1 {
		notes = append(notes, fmt.Sprintf("each GPU case on %d GPUs (bootstrap.NewGPUs); clock and power are GPU 0's, the energy per gate is all %d GPUs'", m.gpus, m.gpus))
	}
	for _, n := range notes {
		fmt.Fprintf(stderr, "bench: %s\n", n)
	}
	for _, p := range cfg.sets {
		if isWeak(p) && slices.ContainsFunc(cases, func(c benchCase) bool { return c.set.Equal(p) }) {
			notes = append(notes, fmt.Sprintf("%s: %s; never use it to protect data", p.Name(), p.Note()))
		}
	}
	if len(cases) == 0 {
		return errors.New("nothing to run: " + strings.Join(notes, "; "))
	}
	if err := benchio.PrepareOut(cfg.out, fileCSV, fileSummary, fileGates, fileLatency); err != nil {
		return err
	}
	if useGPU {
		defer m.startMonitor()()
		if m.noMon != "" {
			notes = append(notes, "GPU clock and power not sampled: "+m.noMon)
			fmt.Fprintf(stderr, "bench: GPU clock and power not sampled: %s\n", m.noMon)
		} else {
			fmt.Fprintf(stderr, "bench: sampling %s's clock and power through NVML every %v\n", m.mon.Device, monitorEvery)
		}
		if m.noOthers != "" {
			notes = append(notes, "no energy per gate: the other GPUs' counters: "+m.noOthers)
			fmt.Fprintf(stderr, "bench: no energy per gate: the other GPUs' counters: %s\n", m.noOthers)
		}
	}
	fmt.Fprintf(stderr, "bench: %s\nbench: %d cases; up to %d runs per batch size\n", m.header(), len(cases), cfg.reps)

	// Ctrl-C ends the run after the case in progress and still writes the
	// finished cases' results; a second Ctrl-C ends the program at once.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	go func() { <-ctx.Done(); stop() }()

	var (
		results []caseResult
		errs    []error
	)
	done := 0
sets:
	for _, p := range cfg.sets {
		if ctx.Err() != nil {
			break
		}
		var setCases []benchCase
		maxB := 0
		for _, c := range cases {
			if c.set.Equal(p) {
				setCases = append(setCases, c)
				maxB = max(maxB, c.batches[len(c.batches)-1])
			}
		}
		if len(setCases) == 0 {
			continue
		}
		t0 := time.Now()
		fx, ferr := newFixture(p, maxB)
		if ferr != nil {
			for _, c := range setCases {
				done++
				e := fmt.Errorf("%v: keys and inputs: %w", c, ferr)
				fmt.Fprintf(stderr, "bench: [%d/%d] %v\n", done, len(cases), e)
				results = append(results, caseResult{c: c, variant: c.variant.String(), err: ferr})
				errs = append(errs, e)
			}
			continue
		}
		fmt.Fprintf(stderr, "bench: %s: keys and %d NAND inputs in %v\n", setLabel(p), maxB, roundDur(time.Since(t0)))
		for _, c := range setCases {
			if ctx.Err() != nil {
				break sets
			}
			done++
			tag := fmt.Sprintf("[%d/%d]", done, len(cases))
			r := runCase(c, fx, cfg.reps, cfg.maxGates, stderr, tag, m.energyMeter())
			results = append(results, r)
			if r.err != nil {
				e := fmt.Errorf("%s %s %s: %w", c.engine, c.set.Name(), r.variant, r.err)
				fmt.Fprintf(stderr, "bench: %s %v\n", tag, e)
				errs = append(errs, e)
			}
		}
	}

	if ctx.Err() != nil && len(results) < len(cases) {
		e := fmt.Errorf("interrupted (Ctrl-C) after %d of %d cases: the results are the finished cases'", len(results), len(cases))
		fmt.Fprintf(stderr, "bench: %v\n", e)
		notes = append(notes, e.Error())
		errs = append(errs, e)
	}
	out := benchio.Saver{Dir: cfg.out}
	out.Write(fileCSV, func(w io.Writer) error { return writeCSV(w, m, results) })
	writePlots(&out, m, results)
	var sum strings.Builder
	writeSummary(&sum, m, cfg, results, notes, append(slices.Clone(errs), out.Errs...))
	out.WriteString(fileSummary, sum.String())
	fmt.Fprintf(stderr, "bench: written to %s: %s\n", cfg.out, strings.Join(out.Written, ", "))
	fmt.Fprintf(stdout, "\n%s", sum.String())
	return errors.Join(append(errs, out.Errs...)...)
}
