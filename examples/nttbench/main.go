// Command nttbench reproduces the NTT tables of Li, Pan, Li and Wang,
// "Parallel Accelerating Number Theoretic Transform for Bootstrapping on a
// Graphics Processing Unit", Mathematics 12(3):458, 2024 (DESIGN.md §4),
// side by side on the machine at hand:
//
//   - Table 1: batches of small n-point cyclic transforms (n = 4, 8, 16, 32
//     and 64) in natural order: the shift-based matrix NTT with merging
//     preprocessing ("matrix"), without it ("nomerge"), and the radix-2
//     butterfly network with general multiplications ("butterfly").
//   - Table 2: batches of N-point negacyclic transforms for N = 512, 1024
//     and 2048: the decomposed matrix NTT of the paper's eq. (9) for each
//     factorisation (4x4x4x4x4, 8x8x16, 16x16x4, 32x32, … with and without
//     merging), the butterfly baseline, and our tuned two-stage "hybrid"
//     kernels (kernels.HybridShapes).
//
// On a GPU (gpuntt, kernels) every batch size from 1 to 65,536 polynomials
// is timed with CUDA events after a warm-up and a check of the kernel's
// output against the CPU plan; the time per batch is the median over many
// runs. Launches cycle through disjoint windows of a device buffer of at
// least twice the L2 cache filled with random canonical values, so large
// batches stream from device memory, and short kernels are measured
// back to back behind a filler of longer launches, so the GPU never waits
// for the host and the events time the kernels alone. Without a usable GPU
// (or with -cpu) the smallntt plans are timed instead, on one goroutine,
// for batches up to 256 (16 with -quick) unless -batches says otherwise.
//
// It prints, last, one row per (table, size, variant, factorisation) with
// the time at the largest batch, transforms per second and the speed-up over
// the butterfly of the same size (butterfly time / variant time), next to
// the paper's times and ratio where it reports them (its absolute times,
// measured on an RTX 2080 Ti, are not comparable; its ratios are). In the
// -out folder it writes results.csv (every batch size), summary.txt (the
// printed table) and three PNG plots: time vs batch size for N = 1024 and
// for the small transforms (log-log), and the speed-ups at the largest batch.
// Each file is written whole or not at all (benchio.WriteFile: a temporary
// file renamed into place), so a run that fails or is killed leaves no
// truncated one.
//
//	make bench-ntt                           # or: go run ./examples/nttbench
//	go run ./examples/nttbench -quick        # a smoke run of a few seconds
//	go run ./examples/nttbench -sizes 1024 -batches 1,256,65536 -reps 100
//	go run ./examples/nttbench -cpu -out /tmp/ntt
//
// On a GPU machine without Go, build it here (CGO_ENABLED=0 go build -o
// nttbench ./examples/nttbench) and run the binary there; the kernels are
// embedded. Exit status 0 when every case ran, 1 when any failed (its error
// is printed after "FAILED" and the other cases are still reported), 2 for
// bad flags, found before anything in -out is touched.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/goldfhe/goldfhe/examples/internal/benchio"
)

// defaultBatches are the batch sizes timed on a GPU.
var defaultBatches = []int{1, 4, 16, 64, 256, 1024, 4096, 16384, 65536}

// quickBatches and quickReps are -quick's.
var quickBatches = []int{1, 256, 4096}

const (
	quickReps = 5
	// cpuMaxBatch and cpuQuickMaxBatch bound the default batch sizes on the
	// CPU, where the time per transform hardly depends on the batch and
	// large batches only take long (a matrix N = 2048 transform takes about
	// a millisecond).
	cpuMaxBatch      = 256
	cpuQuickMaxBatch = 16
	// maxBatchFlag bounds -batches: 2^20 polynomials of 2048 coefficients
	// are 16 GiB.
	maxBatchFlag = 1 << 20
)

// config is what the flags ask for.
type config struct {
	out        string
	batches    []int // nil: the defaults for the device
	reps       int
	cpu        bool // force the CPU
	requireGPU bool // fail rather than fall back to the CPU
	quick      bool
	sizes      map[int]bool // nil: every size
}

func main() {
	cfg, err := parseFlags(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "nttbench:", err)
		os.Exit(2)
	}
	if err := run(cfg, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintf(os.Stderr, "nttbench: FAILED: %v\n", err)
		os.Exit(1)
	}
}

// parseFlags reads the command line; usage and flag errors go to stderr.
func parseFlags(args []string, stderr io.Writer) (config, error) {
	var cfg config
	fs := flag.NewFlagSet("nttbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: nttbench [flags]\n\n"+
			"Times the small-point (Table 1) and N-point (Table 2) NTTs of Li et al. 2024\n"+
			"on GPU 0, or on the CPU without one, and writes results.csv, summary.txt and\n"+
			"plots to -out. Flags:\n")
		fs.PrintDefaults()
	}
	fs.StringVar(&cfg.out, "out", "nttbench-out", "folder for results.csv, summary.txt and the plots (created if needed)")
	batches := fs.String("batches", "", "comma-separated batch sizes (default "+benchio.JoinInts(defaultBatches)+
		" on a GPU, those up to "+strconv.Itoa(cpuMaxBatch)+" on the CPU)")
	fs.IntVar(&cfg.reps, "reps", 50, "timed runs per batch size (the median is reported); fewer for batches that take long")
	fs.BoolVar(&cfg.cpu, "cpu", false, "time the CPU plans even if a GPU is usable")
	fs.BoolVar(&cfg.requireGPU, "gpu", false, "fail if no GPU is usable instead of falling back to the CPU")
	fs.BoolVar(&cfg.quick, "quick", false, "smoke run: batches "+benchio.JoinInts(quickBatches)+" (on the CPU: up to "+
		strconv.Itoa(cpuQuickMaxBatch)+"), "+strconv.Itoa(quickReps)+" runs each")
	sizes := fs.String("sizes", "", "comma-separated sizes to time: n of Table 1 ("+benchio.JoinInts(table1Sizes)+
		") and N of Table 2 (512, 1024, 2048); default all")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if cfg.cpu && cfg.requireGPU {
		return cfg, errors.New("-cpu and -gpu contradict each other")
	}
	if cfg.out == "" {
		return cfg, errors.New("-out is empty")
	}
	repsSet := false
	fs.Visit(func(f *flag.Flag) { repsSet = repsSet || f.Name == "reps" })
	if cfg.quick && !repsSet {
		cfg.reps = quickReps
	}
	if cfg.reps < 1 || cfg.reps > 100000 {
		return cfg, fmt.Errorf("-reps %d: want 1 to 100000", cfg.reps)
	}
	if *batches != "" {
		b, err := benchio.ParseInts(*batches)
		if err != nil {
			return cfg, fmt.Errorf("-batches: %w", err)
		}
		for _, x := range b {
			if x < 1 || x > maxBatchFlag {
				return cfg, fmt.Errorf("-batches: %d is not in [1, %d]", x, maxBatchFlag)
			}
		}
		cfg.batches = b
	}
	if *sizes != "" {
		s, err := benchio.ParseInts(*sizes)
		if err != nil {
			return cfg, fmt.Errorf("-sizes: %w", err)
		}
		cfg.sizes = map[int]bool{}
		for _, x := range s {
			if !slices.Contains(allSizes(), x) {
				return cfg, fmt.Errorf("-sizes: no table has size %d (have %s)", x, benchio.JoinInts(allSizes()))
			}
			cfg.sizes[x] = true
		}
	}
	return cfg, nil
}

// run times every selected case on the GPU or the CPU, then writes the CSV,
// the plots and the summary (printed last to stdout). Progress, warnings and
// per-case errors go to stderr. It returns an error if anything failed; the
// cases that ran are reported all the same.
func run(cfg config, stdout, stderr io.Writer) (err error) {
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(stderr, "%s", debug.Stack())
			err = fmt.Errorf("internal error: %v", r)
		}
	}()
	cases := selectCases(cfg.sizes)
	if len(cases) == 0 {
		return errors.New("no case selected")
	}
	maxN := 0
	for _, c := range cases {
		maxN = max(maxN, c.n)
	}
	var (
		r      runner
		reason string
	)
	if cfg.cpu {
		reason = "-cpu"
	} else {
		g, gerr := openGPU(cfg, stderr)
		if gerr != nil {
			if cfg.requireGPU {
				return fmt.Errorf("no usable GPU: %w", gerr)
			}
			reason = gerr.Error()
			fmt.Fprintf(stderr, "nttbench: no usable GPU, timing the CPU plans: %v\n", gerr)
		} else {
			r = g
		}
	}
	if r == nil {
		r = newCPU(cfg, reason)
	}
	defer func() {
		if cerr := r.close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	dev := r.device()
	batches := cfg.batches
	if batches == nil {
		batches = defaultBatches
		limit := cpuMaxBatch
		if cfg.quick {
			batches, limit = quickBatches, cpuQuickMaxBatch
		}
		if !dev.gpu {
			batches = append(slices.DeleteFunc(slices.Clone(batches), func(b int) bool { return b > limit }), limit)
			slices.Sort(batches)
			batches = slices.Compact(batches)
			fmt.Fprintf(stderr, "nttbench: on the CPU, batches %s (set -batches for others)\n", benchio.JoinInts(batches))
		}
	}
	if err := benchio.PrepareOut(cfg.out, "results.csv", "summary.txt", plotTime1024, plotTimeSmall, plotSpeedup); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "nttbench: %s\nnttbench: %d cases × batches %s, up to %d runs each\n",
		dev.header, len(cases), benchio.JoinInts(batches), cfg.reps)

	var (
		results []result
		errs    []error
	)
	for i, c := range cases {
		t0 := time.Now()
		ms, merr := r.measure(c, batches)
		for _, m := range ms {
			results = append(results, result{c: c, m: m})
		}
		if merr != nil {
			merr = fmt.Errorf("%v: %w", c, merr)
			fmt.Fprintf(stderr, "nttbench: [%d/%d] %v\n", i+1, len(cases), merr)
			errs = append(errs, merr)
			if r.fatal(merr) {
				errs = append(errs, errors.New("the GPU context is unusable: the remaining cases were not run"))
				break
			}
			continue
		}
		last := ms[len(ms)-1]
		fmt.Fprintf(stderr, "nttbench: [%d/%d] %v: batch %d, %s µs, %s Mtransforms/s (%s)\n",
			i+1, len(cases), c, last.batch, benchio.Sig(last.micros), benchio.Sig(float64(last.batch)/last.micros), time.Since(t0).Round(time.Millisecond))
	}
	speedups(results)
	out := benchio.Saver{Dir: cfg.out}
	if len(results) > 0 {
		out.Write("results.csv", func(w io.Writer) error { return writeCSV(w, dev, results) })
		writePlots(&out, dev, results)
	}
	var sum strings.Builder
	writeSummary(&sum, dev, results, append(slices.Clone(errs), out.Errs...))
	out.WriteString("summary.txt", sum.String())
	fmt.Fprintf(stdout, "\n%s\nwritten to %s: %s\n", sum.String(), cfg.out, strings.Join(out.Written, ", "))
	return errors.Join(append(errs, out.Errs...)...)
}
