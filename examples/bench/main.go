// Command bench measures gate bootstrapping (DESIGN.md §6): the latency of
// one gate and the throughput in gates per second against the batch size,
// for each parameter set (tfhe.TFHELib128, TFHErsDefault and CuFHE80, the
// last only to compare with cuFHE/nuFHE: about 80-bit security) and each
// NTT variant, on the GPU engine and on the CPU engine.
//
// Every case is one engine (bootstrap.NewGPU or bootstrap.NewCPU) with one
// NTT plan (-variants). On the GPU: the engine's own choice (default: for
// the named sets the wide family of blind-rotation kernels at every batch
// size, split or cluster kernels for small passes and the wide kernel
// beyond; bootstrap.BlindRotationAuto), two of them forced (the fused and
// wide kernels: "hybrid/32x32/fused", "wide"), the hybrid plan's step kernels ("hybrid/32x32/unfused"), the
// butterfly baseline and
// the paper's matrix NTT (8x8x16 for N = 1024, 8x8x8 for N = 512; Li, Pan,
// Li, Wang, Mathematics 12(3):458, 2024, Table 2), each given explicitly so
// that it runs at every batch size. On the CPU: smallntt.DefaultPlan
// (hybrid) and the butterfly. The variant "default" leaves the choice to
// the engine, as a nil Plan does; "grouped" does too, with a grouped
// bootstrapping key (tfhe.WithGrouping(2): two key bits per blind-rotation
// step, on both engines), and "grouped3" with three (tfhe.WithGrouping(3)),
// TFHELib128's fastest form on the GPU; both engines run both groupings by
// default. Keys are generated once per set from fixed seeds, so runs are
// reproducible; the outputs of a grouped key differ
// from a plain key's (another key, another algorithm), so each key has
// its own bit-for-bit reference.
//
// Method: for each batch size, a warm-up call (left out where the previous
// size's median says the call takes over half a second: the earlier sizes
// warmed the engine), then repeated calls of
// Engine.Bootstrap (synchronous: on the GPU the uploads, kernels and
// downloads are inside), each timed with time.Now; the time per batch is
// the median of -reps calls, fewer for large batches (at most -max-gates
// gates or about ten seconds per batch size). gates/s = batch / median
// time; the single-gate latency is the median time of batch 1. The inputs
// are NAND gates' linear combinations (0, 1/8) − c1 − c2 of fresh
// encryptions of random bits, as gates.Evaluator bootstraps them; every
// output of every call is decrypted with the secret key and checked, and
// all engines and plans of a set must agree bit for bit (DESIGN.md §3). A
// wrong result fails the run.
//
// -engine both (the default) runs the GPU engine on GPU 0 when one is
// usable (kernels.Devices), with MaxBatch the largest batch size so that
// each call is one device pass, and the CPU engine on every core; auto
// runs the GPU engine, or the CPU engine without a GPU; gpu and cpu run
// that one only (gpu fails without a GPU).
//
// The CPU is slow (tens of milliseconds per gate per core; README.md and
// BENCHMARKS.md give measured figures), so by default it runs
// TFHELib128 only, at batches up to 64; -cpu-all lifts both limits. When
// the CPU is the only engine that runs (-engine cpu, or no GPU) the -sets
// and -batches given are honoured as they are.
//
// With a GPU it samples the GPU's SM clock, board power, temperature and
// clock-event reasons through NVML every 250 ms (examples/internal/gpumon:
// the driver's libnvidia-ml.so.1, no cgo), and the summary ends with each
// GPU case's figures during the timed runs of its largest batch: whether
// the card ran at full clock or at its power cap, which moves large-batch
// throughput by a few percent from card to card (BENCHMARKS.md), and the
// energy per gate from NVML's energy counter, read before and after each
// batch size's timed runs (the output checks between the calls included):
// the power limit over it is what a card held at its cap can reach. Without
// NVML the summary's notes say why.
//
// It prints, last, a table headed by the device, and writes to -out:
// results.csv (device,engine,set,variant,batch,median_ms,gates_per_s,
// mj_per_gate: empty for the CPU and where not measured),
// summary.txt (the table), gates_per_s.png (throughput against batch size,
// log-log, one panel per set on common axes, one line per engine and
// variant) and latency.png (the single-gate latencies). Each file is
// written whole or not at all (benchio.WriteFile: a temporary file renamed
// into place), so a run that fails or is killed leaves no truncated one.
//
//	make bench                              # or: go run ./examples/bench
//	go run ./examples/bench -quick          # smoke run: one set, batches 1 and 4, one run each
//	go run ./examples/bench -engine gpu -sets TFHELib128 -variants hybrid -batches 1,1024,16384
//	go run ./examples/bench -engine cpu -cpu-all -batches 1,16,64
//
// On a GPU machine without Go, build it here (CGO_ENABLED=0 go build -o
// bench ./examples/bench) and run the binary there: the kernels are
// embedded. Exit status 0 when every case ran and every result was right,
// 1 otherwise (the cases that ran are still reported), 2 for bad flags.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/goldfhe/goldfhe/examples/internal/benchio"
	"github.com/goldfhe/goldfhe/tfhe"
)

// defaultBatches are the batch sizes timed by default.
var defaultBatches = []int{1, 4, 16, 64, 256, 1024, 4096, 16384}

const (
	defaultReps = 5
	// defaultMaxGates bounds the gates timed per case and batch size: the
	// largest default batch, 16,384, gets five runs (about 0.4–0.7 s each
	// for TFHELib128 on an H100). With 1 << 15 it got two, whose median
	// varied by up to 1.5% between rounds on one machine (BENCHMARKS.md
	// session 21, run B); timeCap still ends slow cases.
	defaultMaxGates = 1 << 17
	// cpuMaxBatch bounds the CPU's default batch sizes (without -cpu-all).
	cpuMaxBatch = 64
	// maxBatchFlag bounds -batches: 2^20 TFHErsDefault samples are 3 GiB
	// of inputs and outputs on the host alone.
	maxBatchFlag = 1 << 20
)

// quickBatches are -quick's batch sizes (one run each).
var quickBatches = []int{1, 4}

// config is what the flags ask for.
type config struct {
	out      string
	batches  []int // ascending, no duplicates
	reps     int
	maxGates int
	sets     []tfhe.Params
	variants []variantSpec // nil: the defaults of each engine
	engine   string        // auto, cpu, gpu or both
	cpuAll   bool
	quick    bool
	gpus     int // GPUs a GPU case spreads its batches over; allGPUs: every one
	// Which of batches and sets the command line gave (the CPU limits
	// apply to the defaults only, or always when the GPU runs too).
	batchesSet, setsSet bool
}

func main() {
	cfg, err := parseFlags(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(2)
	}
	if err := run(cfg, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintf(os.Stderr, "bench: FAILED: %v\n", err)
		os.Exit(1)
	}
}

// parseFlags reads the command line; usage and flag errors go to stderr.
func parseFlags(args []string, stderr io.Writer) (config, error) {
	cfg := config{reps: defaultReps, maxGates: defaultMaxGates}
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: bench [flags]\n\n"+
			"Times gate bootstrapping (latency, gates/s against batch size) for each parameter\n"+
			"set and NTT variant on the GPU engine and the CPU engine, checks every output, and\n"+
			"writes results.csv, summary.txt and two plots to -out. Flags:\n")
		fs.PrintDefaults()
	}
	fs.StringVar(&cfg.out, "out", "bench-out", "folder for results.csv, summary.txt and the plots (created if needed)")
	batches := fs.String("batches", benchio.JoinInts(defaultBatches), "comma-separated batch sizes (on the CPU only those up to "+
		strconv.Itoa(cpuMaxBatch)+" unless -cpu-all, or the CPU runs alone and -batches is given)")
	fs.IntVar(&cfg.reps, "reps", defaultReps, "timed runs per batch size (the median is reported); fewer for large batches, see -max-gates")
	fs.IntVar(&cfg.maxGates, "max-gates", defaultMaxGates, "at most this many gates timed per case and batch size (at least one run)")
	sets := fs.String("sets", strings.Join(tfhe.ParamSetNames(), ","), "comma-separated parameter sets (CuFHE80: ~80-bit, comparison only; the CPU runs "+
		tfhe.TFHELib128.Name()+" only unless -cpu-all, or the CPU runs alone and -sets is given)")
	variants := fs.String("variants", "", "comma-separated variants: default (the engine's own choice), grouped and grouped3 (the same with a key grouped by 2 or 3), butterfly, hybrid or matrix,\n"+
		"the last two optionally with a factorisation (matrix:4x4x4x4x4, hybrid:32x32); on the GPU also fused,\n"+
		"wide and unfused (the hybrid plan with those blind-rotation kernels forced, bootstrap.BlindRotation;\n"+
		"fused and unfused take a factorisation too);\n"+
		"default: "+variantList(gpuVariants)+" on the GPU and "+variantList(cpuVariants)+" on the CPU")
	fs.StringVar(&cfg.engine, "engine", "both", "auto (the GPU when usable, else the CPU), cpu, gpu, or both (the GPU when usable, plus the CPU)")
	gpus := fs.String("gpus", "1", "GPUs each GPU case spreads its batches over: 1 (GPU 0), n (GPUs 0 to n-1: bootstrap.NewGPUs) or all;\n"+
		"with more than one, clock and power are GPU 0's, the energy per gate all of theirs")
	fs.BoolVar(&cfg.cpuAll, "cpu-all", false, "on the CPU too, run every set and batch size")
	fs.BoolVar(&cfg.quick, "quick", false, "smoke run: one set ("+tfhe.TFHELib128.Name()+" or the first of -sets), batches "+
		benchio.JoinInts(quickBatches)+", one run each")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	cfg.batchesSet, cfg.setsSet = given["batches"], given["sets"]

	if cfg.out == "" {
		return cfg, errors.New("-out is empty")
	}
	switch cfg.engine = strings.ToLower(strings.TrimSpace(cfg.engine)); cfg.engine {
	case "auto", "cpu", "gpu", "both":
	default:
		return cfg, fmt.Errorf("-engine %q: want auto, cpu, gpu or both", cfg.engine)
	}
	var err error
	if cfg.gpus, err = parseGPUs(*gpus); err != nil {
		return cfg, fmt.Errorf("-gpus: %w", err)
	}
	if cfg.batches, err = benchio.ParseInts(*batches); err != nil {
		return cfg, fmt.Errorf("-batches: %w", err)
	}
	for _, b := range cfg.batches {
		if b < 1 || b > maxBatchFlag {
			return cfg, fmt.Errorf("-batches: %d is not in [1, %d]", b, maxBatchFlag)
		}
	}
	if cfg.sets, err = parseSets(*sets); err != nil {
		return cfg, fmt.Errorf("-sets: %w", err)
	}
	if *variants != "" {
		if cfg.variants, err = parseVariants(*variants); err != nil {
			return cfg, fmt.Errorf("-variants: %w", err)
		}
	}
	if cfg.quick {
		if !cfg.setsSet {
			cfg.sets = []tfhe.Params{tfhe.TFHELib128}
		}
		cfg.sets = cfg.sets[:1]
		if !cfg.batchesSet {
			cfg.batches = quickBatches
		}
		if !given["reps"] {
			cfg.reps = 1
		}
	}
	// A factorisation that makes no plan for a set's N is a flag error:
	// found here, it costs no key generation and leaves -out as it was.
	for _, v := range cfg.variants {
		if len(v.factors) == 0 {
			continue
		}
		for _, p := range cfg.sets {
			if _, err := v.plan(p.PolyDegree(), engCPU); err != nil {
				return cfg, fmt.Errorf("-variants %v for %s (N=%d): %w", v, p.Name(), p.PolyDegree(), err)
			}
		}
	}
	if cfg.reps < 1 || cfg.reps > 10000 {
		return cfg, fmt.Errorf("-reps %d: want 1 to 10000", cfg.reps)
	}
	if cfg.maxGates < 1 {
		return cfg, fmt.Errorf("-max-gates %d: want at least 1", cfg.maxGates)
	}
	return cfg, nil
}

// allGPUs is config.gpus for -gpus all.
const allGPUs = -1

// parseGPUs reads -gpus: a count of at least 1, or "all".
func parseGPUs(s string) (int, error) {
	s = strings.TrimSpace(s)
	if strings.EqualFold(s, "all") {
		return allGPUs, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%q: want a count of at least 1, or all", s)
	}
	return n, nil
}

// parseSets reads a comma-separated list of named parameter sets (any case).
func parseSets(s string) ([]tfhe.Params, error) {
	var out []tfhe.Params
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		p, ok := tfhe.ParamSetByName(f)
		if !ok {
			return nil, fmt.Errorf("unknown parameter set %q (have %s)", f, strings.Join(tfhe.ParamSetNames(), ", "))
		}
		if !slices.ContainsFunc(out, p.Equal) {
			out = append(out, p)
		}
	}
	return out, nil
}
