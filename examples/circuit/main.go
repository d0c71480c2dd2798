// Command circuit evaluates a Bristol circuit on encrypted inputs: it makes
// keys, encrypts the inputs in the circuit's bit order, evaluates level by
// level (each level one engine batch), decrypts, and checks the outputs
// against a plaintext evaluation.
//
//	go run ./examples/circuit -list                       # shipped circuits and examples
//	go run ./examples/circuit -circuit add64              # 64-bit addition, example inputs
//	go run ./examples/circuit -circuit add64 -in 0123456789abcdef,fedcba9876543210
//	go run ./examples/circuit -circuit aes128             # AES-128, FIPS-197 vector
//	go run ./examples/circuit -circuit my.txt -in 0f,f0   # any Bristol file
//	go run ./examples/circuit -circuit sha256 -plain      # plaintext only
//	go run ./examples/circuit -circuit add64 -keys ~/.goldfhe   # keep the keys for later runs
//	go run ./examples/circuit -circuit aes128 -grouping 1 # one key bit per blind-rotation step
//	go run ./examples/circuit -circuit aes128 -xor bootstrapped  # bootstrap every XOR too
//	go run ./examples/circuit -circuit aes128 -instances 64      # 64 encryptions at once (GPU)
//	go run ./examples/circuit -circuit aes128 -instances 64 -concurrent  # ... in 64 goroutines
//
// XOR gates cost no bootstrap by default (-xor linear, gates.XORLinear):
// sums of bootstrapped samples are bootstrapped only where an AND-like gate
// or an output reads them, or where they would exceed -xor-terms terms
// (default: the most whose bootstrap fails with probability at most 2^-64
// under the key's noise).
//
// Inputs are hex numbers, one per input value, separated by commas: an
// integer as usual (0x optional), a byte string as its usual hex (for AES
// and SHA-256 blocks). The shipped circuits carry their documented bit order;
// for a file, -order says it (lsb: wire j = bit j, the Bristol Fashion
// convention; msb: the old AES-non-expanded.txt).
//
// -instances N evaluates N sets of inputs together (gates.EvalCircuits):
// the same values, encrypted afresh for each set, every level of all sets
// one engine batch. A GPU needs thousands of bootstraps a batch to run at
// full speed, and a circuit's levels are narrower, so N sets take far less
// than N times one set's time there; every set's outputs are checked.
// With -concurrent each set is evaluated by a goroutine of its own
// (EvalCircuitWith), as independent callers sharing an engine would: the
// GPU engine merges their small calls (bootstrap.GPU, Concurrency), and
// -no-merge turns that off for comparison.
//
// Exit status 0 when every output matched plaintext (and the documented
// answer, for an example's inputs), 1 otherwise or on an error, 2 for bad
// flags.
//
// The shipped circuits are published netlists under their own licenses; see
// -licenses.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"log"
	"os"
	"os/signal"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/goldfhe/goldfhe/bootstrap"
	"github.com/goldfhe/goldfhe/examples/internal/enginecheck"
	"github.com/goldfhe/goldfhe/gates"
	"github.com/goldfhe/goldfhe/gates/circuits"
	"github.com/goldfhe/goldfhe/tfhe"
)

// presets are the ready-made examples: a short name for a shipped circuit
// and its example inputs.
var presets = []struct{ name, circuit, what string }{
	{"add64", "adder64", "64-bit addition"},
	{"mul64", "mult64", "64-bit multiplication (low 64 bits)"},
	{"aes128", "aes_128", "AES-128 encryption, FIPS-197 Appendix C.1 vector"},
	{"sha256", "sha256", "one SHA-256 compression: the padded block of \"abc\" from the standard IV"},
}

func main() {
	log.SetFlags(0)
	log.SetPrefix("circuit: ")
	var (
		name       = flag.String("circuit", "", "shipped circuit or preset name (see -list), or a Bristol file")
		inFlag     = flag.String("in", "", "input values in hex, comma-separated, in the circuit's input order, byte strings with every digit (default: the example's)")
		orderFlag  = flag.String("order", "lsb", "bit order of a circuit file: lsb or msb")
		paramName  = flag.String("params", "TFHELib128", "parameter set: TFHELib128, TFHErsDefault or CuFHE80 (about 80-bit security, for comparisons only)")
		seedFlag   = flag.String("seed", "", "64 hex digits, or @FILE holding them (on the command line a seed shows in the process list): derive new keys from it\n(reproducible runs; it is as secret as the secret key); default random")
		keysDir    = flag.String("keys", "", "folder with secret.key and cloud.key: load them, or generate and save them there")
		plain      = flag.Bool("plain", false, "evaluate in plaintext only")
		verbose    = flag.Bool("v", false, "print every level")
		xorFlag    = flag.String("xor", "linear", "linear: XOR gates add samples without bootstrapping (gates.XORLinear); bootstrapped: every XOR is bootstrapped")
		xorTerms   = flag.Int("xor-terms", 0, "with -xor linear: the most bootstrapped samples a sum may hold (≥ 2); 0: the default for the key's noise")
		list       = flag.Bool("list", false, "list the shipped circuits and presets")
		cpuprof    = flag.String("cpuprofile", "", "write a CPU profile of the encrypted evaluation to this new file (go tool pprof)")
		licenses   = flag.Bool("licenses", false, "print the licenses of the shipped circuits")
		engFlag    = flag.String("engine", "auto", "auto (the GPU when one is usable, else the CPU), cpu or gpu")
		instances  = flag.Int("instances", 1, "sets of inputs to evaluate together: the inputs encrypted afresh for each (gates.EvalCircuits)")
		concurrent = flag.Bool("concurrent", false, "with -instances: one goroutine per set (EvalCircuitWith each) instead of one EvalCircuits call")
		gpusFlag   = flag.String("gpus", "1", "GPUs to spread each level over: 1 (GPU 0), n (GPUs 0 to n-1) or all (bootstrap.NewGPUs)")
		noMerge    = flag.Bool("no-merge", false, "GPU engine: run concurrent calls one after another (bootstrap.GPUOptions.NoMerge)")
		grouping   = flag.Int("grouping", 0, "bootstrapping-key grouping of new keys (tfhe.WithGrouping): 1 (one key bit per blind-rotation step),\n2 (two: about 1.5x faster on a GPU, a 1.5x key, failure ~2^-250) or 3 (three: the fastest single gate,\na 2.3x key, failure ~2^-188, fewer XOR terms per sum); 0: 2 for new keys, whatever the -keys folder holds")
	)
	flag.Parse()
	switch {
	case *list:
		printList()
		return
	case *licenses:
		b, _ := fs.ReadFile(circuits.FS(), "LICENSES.md")
		os.Stdout.Write(b)
		return
	case *name == "":
		flag.Usage()
		os.Exit(2)
	}

	if *orderFlag != "lsb" && *orderFlag != "msb" {
		badFlag("-order must be lsb or msb, not %q", *orderFlag)
	}
	c, info, err := load(*name, *orderFlag)
	if err != nil {
		log.Fatal(err)
	}
	inHex := info.Example.In
	if *inFlag != "" {
		inHex = strings.Split(*inFlag, ",")
	} else if inHex == nil {
		badFlag("%s: give the inputs with -in (%d values)", *name, len(c.Inputs()))
	}
	if *instances < 1 {
		badFlag("-instances must be at least 1, not %d", *instances)
	}
	// Checked before any key is made or loaded: the keys take seconds.
	if *xorTerms != 0 && *xorTerms < 2 {
		badFlag("-xor-terms must be 0 (the default for the key's noise) or at least 2, not %d", *xorTerms)
	}
	if *grouping < 0 || *grouping > tfhe.MaxGrouping {
		badFlag("-grouping must be 0 (the default) or 1 to %d, not %d", tfhe.MaxGrouping, *grouping)
	}
	if *concurrent && *instances == 1 {
		badFlag("-concurrent runs one goroutine per set: give it -instances 2 or more")
	}
	if len(inHex) != len(c.Inputs()) {
		badFlag("the circuit takes %d input values %v, got %d", len(c.Inputs()), c.Inputs(), len(inHex))
	}
	inBits := make([][]bool, len(inHex))
	for i, s := range inHex {
		s = strings.TrimSpace(s)
		// A byte string (an AES key, a SHA-256 block) is written in full:
		// HexBits reads a short one as an integer with leading zeros, so a
		// missing digit would shift the whole value silently.
		if w := c.Inputs()[i]; i < len(info.Inputs) && strings.Contains(info.Inputs[i], "bytes") {
			digits := strings.ReplaceAll(strings.TrimPrefix(strings.TrimPrefix(s, "0x"), "0X"), "_", "") // HexBits takes _ separators
			if d := len(digits); d != w/4 {
				badFlag("input %d (%s): %d hex digits, want %d", i+1, info.Inputs[i], d, w/4)
			}
		}
		if inBits[i], err = gates.HexBits(s, c.Inputs()[i], info.Order); err != nil {
			badFlag("input %d: %v", i+1, err)
		}
	}

	// The encrypted run's flags (all but -keys, which is read only for a
	// run that uses keys), checked with -plain too: a mistake in them
	// should not wait for the first encrypted run.
	p, ok := tfhe.ParamSetByName(*paramName)
	if !ok {
		badFlag("unknown parameter set %q (want one of %s)", *paramName, strings.Join(tfhe.ParamSetNames(), ", "))
	}
	opts := gates.CircuitOptions{MaxXORTerms: *xorTerms}
	switch *xorFlag {
	case "linear":
	case "bootstrapped":
		opts.XOR = gates.XORBootstrapped
	default:
		badFlag("-xor must be linear or bootstrapped, not %q", *xorFlag)
	}
	use, err := bootstrap.ParseUse(*engFlag)
	if err != nil {
		badFlag("-engine: %v", err)
	}
	if _, _, err := parseGPUs(*gpusFlag); err != nil {
		badFlag("%v", err)
	}
	if *seedFlag != "" {
		if _, err := readSeed(*seedFlag); err != nil {
			badFlag("%v", err)
		}
	}
	// Every set holds a sample of n+1 words for each of its wires at worst
	// (inputs, and wires alive between levels): refuse a count whose sets
	// could not fit any machine's memory before keys are made for it.
	const maxSetBytes = 1 << 40
	if perSet := float64(c.NumWires()) * float64(p.LWEDimension()+1) * 4; float64(*instances)*perSet > maxSetBytes {
		badFlag("-instances %d: up to %.3g GiB of samples (%d wires of %d bytes a set); the most is %d sets for 1 TiB",
			*instances, float64(*instances)*perSet/(1<<30), c.NumWires(), (p.LWEDimension()+1)*4, int(maxSetBytes/perSet))
	}

	fmt.Printf("circuit  %s: %s\n", info.Name, info.Summary)
	fmt.Printf("         %v, %d wires, %d gates (%d XOR, %d AND, %d free), bit order %v\n",
		c.Format(), c.NumWires(), c.NumGates(), c.Count(gates.OpXOR), c.Count(gates.OpAND), freeGates(c), info.Order)
	fmt.Printf("cost     %s in %s with every XOR bootstrapped\n", count(c.Bootstraps(), "bootstrap"), count(c.Depth(), "level"))
	for i, bits := range inBits {
		fmt.Printf("input %d  %s = %s\n", i+1, label(info.Inputs, i, c.Inputs()[i]), gates.BitsHex(bits, info.Order))
	}
	want, err := c.Eval(inBits...)
	if err != nil {
		log.Fatal(err)
	}
	example := *inFlag == ""
	if *plain {
		if !printOutputs(info, want, nil, example) {
			os.Exit(1)
		}
		return
	}

	devices, err := gpuDevices(*gpusFlag, use)
	if err != nil {
		log.Fatal(err)
	}
	// The profile's file before the keys and the engine, so that a path it
	// cannot take fails at once, and never over an existing file.
	var prof *os.File
	if *cpuprof != "" {
		if prof, err = os.OpenFile(*cpuprof, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644); err != nil {
			log.Fatalf("-cpuprofile: %v", err)
		}
		defer prof.Close()
	}
	sk, ev, closeEngine, err := setup(p, *seedFlag, *keysDir, *grouping,
		bootstrap.Options{Use: use, GPU: bootstrap.GPUOptions{NoMerge: *noMerge}, Devices: devices})
	if err != nil {
		log.Fatal(err)
	}
	defer closeEngine()

	enc, err := tfhe.NewEncryptor(sk)
	if err != nil {
		log.Fatal(err)
	}
	sets := make([][][]*tfhe.TLWE, *instances)
	for k := range sets {
		sets[k] = make([][]*tfhe.TLWE, len(inBits))
		for i, bits := range inBits {
			if sets[k][i], err = gates.EncryptBits(enc, bits); err != nil {
				log.Fatal(err)
			}
		}
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	// The first Ctrl-C stops the evaluation between levels; once it has
	// come, the handler goes, so that a second one ends the program at
	// once (a level of many sets can take minutes on a CPU).
	go func() { <-ctx.Done(); stop() }()
	plan, err := ev.PlanCircuits(c, *instances, opts)
	if err != nil {
		log.Fatal(err)
	}
	of := ""
	if plan.Instances > 1 {
		of = fmt.Sprintf(" for %d sets of inputs", plan.Instances)
	}
	if plan.XOR == gates.XORLinear {
		sums := "no XOR sum to refresh"
		if plan.Refreshes > 0 {
			sums = fmt.Sprintf("%d of them refreshing XOR sums of up to %d samples", plan.Refreshes, plan.LargestSum)
		}
		if plan.Majorities > 0 {
			sums += fmt.Sprintf(", %d carries as MAJ gates", plan.Majorities)
		}
		fmt.Printf("plan     XOR linear: %s%s (%s) in %s, estimated failure 2^%.0f per bootstrap at most, 2^%.0f for the evaluation\n",
			count(plan.Bootstraps, "bootstrap"), of, sums, count(plan.Levels-1, "level"), plan.Log2Failure, plan.Log2EvalFailure())
	} else {
		fmt.Printf("plan     XOR bootstrapped: %s%s in %s, estimated failure 2^%.0f per bootstrap at most, 2^%.0f for the evaluation\n",
			count(plan.Bootstraps, "bootstrap"), of, count(plan.Levels-1, "level"), plan.Log2Failure, plan.Log2EvalFailure())
	}
	if plan.Log2Failure > gates.DefaultXORFailureLog2 {
		// Log2Failure is per bootstrap; over the evaluation, the union
		// bound (plan.Log2EvalFailure) says how likely a wrong bit is.
		fmt.Printf("         WARNING: above the 2^%d a bootstrap that the defaults keep to: over %d bootstraps, a wrong bit with probability up to 2^%.0f (lower -xor-terms)\n",
			gates.DefaultXORFailureLog2, plan.Bootstraps, plan.Log2EvalFailure())
	}
	bar := newProgress(plan.Bootstraps)
	var stats []gates.LevelStats
	start := time.Now()
	opts.Progress = func(s gates.LevelStats) {
		stats = append(stats, s)
		bar.update(s)
	}
	if prof != nil {
		if err := pprof.StartCPUProfile(prof); err != nil {
			log.Fatal(err)
		}
	}
	var outs [][][]*tfhe.TLWE
	if *concurrent {
		outs, err = evalConcurrently(ctx, ev, c, sets, opts)
	} else {
		outs, err = ev.EvalCircuits(ctx, c, sets, opts)
	}
	if *cpuprof != "" {
		pprof.StopCPUProfile()
	}
	bar.finish()
	if err != nil {
		log.Fatal(err)
	}
	total := time.Since(start)

	// Set 1's outputs are printed; every other set's are checked.
	var got [][]bool
	wrong := 0
	for k, out := range outs {
		g := make([][]bool, len(out))
		for i := range out {
			if g[i], err = gates.DecryptBits(sk, out[i]); err != nil {
				log.Fatal(err)
			}
		}
		if k == 0 {
			got = g
		} else if !slices.EqualFunc(g, want, slices.Equal) {
			fmt.Printf("set %d    decrypted outputs WRONG\n", k+1)
			wrong++
		}
	}
	printLevels(stats, total, len(outs), *verbose)
	ok = printOutputs(info, want, got, example)
	if len(outs) > 1 && wrong == 0 {
		fmt.Printf("sets     the outputs of all %d sets decrypted and match plaintext\n", len(outs))
	}
	if !ok || wrong > 0 {
		os.Exit(1)
	}
}

// evalConcurrently evaluates each set in a goroutine of its own, as
// independent callers would; progress reports of a level arrive from every
// goroutine (opts.Progress is called under a lock), so the bar counts
// bootstraps, not levels.
func evalConcurrently(ctx context.Context, ev *gates.Evaluator, c *gates.Circuit, sets [][][]*tfhe.TLWE, opts gates.CircuitOptions) ([][][]*tfhe.TLWE, error) {
	outs := make([][][]*tfhe.TLWE, len(sets))
	errs := make([]error, len(sets))
	var mu sync.Mutex
	if p := opts.Progress; p != nil {
		opts.Progress = func(s gates.LevelStats) {
			mu.Lock()
			defer mu.Unlock()
			p(s)
		}
	}
	var wg sync.WaitGroup
	for k := range sets {
		wg.Go(func() { outs[k], errs[k] = ev.EvalCircuitWith(ctx, c, sets[k], opts) })
	}
	wg.Wait()
	return outs, errors.Join(errs...)
}

// load returns a shipped circuit (by preset or circuit name) or parses a file.
func load(name, order string) (*gates.Circuit, circuits.Info, error) {
	for _, pr := range presets {
		if strings.EqualFold(name, pr.name) {
			name = pr.circuit
		}
	}
	if info, ok := circuits.Lookup(name); ok {
		c, err := circuits.Load(info.Name)
		return c, info, err
	}
	if _, err := os.Stat(name); err != nil {
		return nil, circuits.Info{}, fmt.Errorf("%q is neither a shipped circuit (see -list) nor a readable file: %w", name, err)
	}
	c, err := gates.ParseFile(name)
	if err != nil {
		return nil, circuits.Info{}, err
	}
	info := circuits.Info{Name: name, Summary: "circuit file", File: name}
	switch order {
	case "lsb":
		info.Order = gates.LSBFirst
	case "msb":
		info.Order = gates.MSBFirst
	default:
		return nil, info, fmt.Errorf("-order must be lsb or msb, not %q", order)
	}
	return c, info, nil
}

// printOutputs prints the outputs, decrypted (got) next to plaintext
// (want), and with example set checks the documented answer too.
func printOutputs(info circuits.Info, want, got [][]bool, example bool) bool {
	ok := true
	for i := range want {
		w := gates.BitsHex(want[i], info.Order)
		line := fmt.Sprintf("output %d %s = ", i+1, label(info.Outputs, i, len(want[i])))
		switch {
		case got == nil:
			line += w + " (plaintext)"
		case slices.Equal(got[i], want[i]):
			line += gates.BitsHex(got[i], info.Order) + "  decrypted, matches plaintext"
		default:
			line += gates.BitsHex(got[i], info.Order) + "  decrypted, WRONG: plaintext gives " + w
			ok = false
		}
		if example && i < len(info.Example.Out) {
			if w == info.Example.Out[i] {
				line += " (the documented answer)"
			} else {
				line += " — the documented answer is " + info.Example.Out[i]
				ok = false
			}
		}
		fmt.Println(line)
	}
	return ok
}

func printLevels(stats []gates.LevelStats, total time.Duration, sets int, verbose bool) {
	var bs, gs int
	var slow gates.LevelStats
	for _, s := range stats {
		bs += s.Bootstraps
		gs += s.Gates
		if s.Elapsed > slow.Elapsed {
			slow = s
		}
		if verbose {
			fmt.Printf("level %4d  %5d gates  %5d refreshes  %4d free  %5d bootstraps  %v\n", s.Level, s.Gates, s.Refreshes, s.Free, s.Bootstraps, s.Elapsed.Round(time.Millisecond))
		}
	}
	levels := 0 // the circuit's levels with bootstraps (the first has none)
	if len(stats) > 0 {
		levels = stats[0].Levels - 1
	}
	fmt.Printf("time     %v for %s in %s: %v per level on average (slowest: level %d, %s, %v), %v per bootstrap\n",
		total.Round(time.Millisecond), count(bs, "bootstrap"), count(levels, "level"), (total / time.Duration(max(levels, 1))).Round(time.Millisecond),
		slow.Level, count(slow.Gates+slow.Refreshes, "gate"), slow.Elapsed.Round(time.Millisecond), (total / time.Duration(max(bs, 1))).Round(time.Microsecond))
	if sets > 1 {
		fmt.Printf("sets     %d sets of inputs: %v a set, %.0f bootstraps/s\n", sets, (total / time.Duration(sets)).Round(time.Millisecond), float64(bs)/total.Seconds())
	}
}

func printList() {
	fmt.Println("presets:")
	for _, pr := range presets {
		fmt.Printf("  %-8s %s (%s)\n", pr.name, pr.what, pr.circuit)
	}
	fmt.Println("\nshipped circuits (gates/circuits; provenance in SOURCES.md, licenses with -licenses),")
	fmt.Println("their cost with every XOR bootstrapped (-xor bootstrapped; the default, linear XOR, needs fewer):")
	for _, info := range circuits.List() {
		c, err := circuits.Load(info.Name)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("  %-17s %6d bootstraps %5d levels  %s\n", info.Name, c.Bootstraps(), c.Depth(), info.Summary)
		fmt.Printf("  %-17s inputs: %s; order %v\n", "", strings.Join(info.Inputs, ", "), info.Order)
	}
	fmt.Println("\nA bootstrap costs tens of milliseconds per CPU core: mult64, aes_128 and sha256 take")
	fmt.Println("minutes to hours on a laptop. Use -plain to check inputs first.")
}

func label(names []string, i, width int) string {
	if i < len(names) {
		return fmt.Sprintf("(%s)", names[i])
	}
	return "(" + count(width, "bit") + ")"
}

func freeGates(c *gates.Circuit) int {
	return c.Count(gates.OpNOT) + c.Count(gates.OpCopy) + c.Count(gates.OpZero) + c.Count(gates.OpOne)
}

// count returns "1 noun" or "n nouns".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// parseGPUs reads -gpus: a count n ≥ 1, or all.
func parseGPUs(flagValue string) (n int, all bool, err error) {
	v := strings.TrimSpace(flagValue)
	if strings.EqualFold(v, "all") {
		return 0, true, nil
	}
	if n, err = strconv.Atoi(v); err != nil || n < 1 {
		return 0, false, fmt.Errorf("-gpus %q: want a count of at least 1, or all", flagValue)
	}
	return n, false, nil
}

// badFlag reports a command-line mistake and exits with status 2, as the
// flag package does for one it finds (and as bench and nttbench do).
func badFlag(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "circuit: "+format+"\n", args...)
	os.Exit(2)
}

// gpuDevices reads -gpus: nil for 1 (GPU 0 alone, or the CPU engine),
// devices 0 to n-1 for n, every device for "all". More GPUs than the host
// has is an error; with no GPU at all, -engine auto takes the CPU engine
// (New says why) and -engine gpu fails here, before keys are made for it.
func gpuDevices(flagValue string, use bootstrap.Use) ([]int, error) {
	n, all, err := parseGPUs(flagValue)
	if err != nil {
		return nil, err
	}
	if use == bootstrap.UseCPU || (n == 1 && use == bootstrap.UseAuto) {
		return nil, nil
	}
	devices, err := bootstrap.GPUDevices()
	switch {
	case err != nil && use == bootstrap.UseGPU:
		return nil, enginecheck.NoGPU(err)
	case err != nil:
		return nil, nil // no GPU: New takes the CPU engine and says why
	case n == 1:
		return nil, nil
	case all:
		return devices, nil
	case n > len(devices):
		return nil, fmt.Errorf("-gpus %d: this machine has %d", n, len(devices))
	}
	return devices[:n], nil
}
