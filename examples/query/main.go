// Command query is a private lookup: a server holds a plaintext table of
// records (key → value), a client encrypts a query key, and the server
// computes the encrypted value of the record with that key, or zero when
// no record has it, without learning the key or the answer; the client
// decrypts, and the program checks every answer against a plaintext
// lookup.
//
//	go run ./examples/query                           # 32 random records, 16-bit keys and values, 2 queries
//	go run ./examples/query -query 1a2b,0007          # these keys (hex)
//	go run ./examples/query -records 64 -value-bits 32 -table-seed 7
//	go run ./examples/query -table my.txt             # a table file: "KEY VALUE" in hex, a line each
//	go run ./examples/query -queries 64               # 64 queries in one evaluation (a GPU's rate)
//	go run ./examples/query -plain                    # the table, queries and circuit, no encryption
//
// The server turns its table into a boolean circuit (lookupCircuit): a
// record matches when every query bit equals its key bit, an AND tree of
// the query bits, each taken as is or negated for free as the key bit is 1
// or 0; output bit i is the XOR of the matches of the records whose value
// has bit i set. The XORs cost no bootstrap (gates.XORLinear): the library
// plans the evaluation, refreshing sums where their noise needs it (each
// output bit's XOR tree summed as a whole, about the fewest refreshes),
// and the program prints that plan. The circuit's gates depend on the
// table only, never on the query.
//
// Several queries (-queries N, or N keys in -query) are evaluated together
// by gates.EvalCircuits: every level of every query is one engine batch,
// which a GPU needs to run at its full rate.
//
// A table file holds one record a line, its key and its value in hex
// (0x and _ allowed), separated by spaces or tabs; # starts a comment.
// Keys are distinct and fit -key-bits, values fit -value-bits:
//
//	# key  value
//	0x1a2b 0x00ff
//	0007   1234
//
// Cost, measured on a 2-vCPU AMD EPYC (AVX-512) with the CPU engine,
// `go run ./examples/query -engine cpu`: the default table's circuit has
// 186 ANDs, and each query takes 226 bootstraps (those ANDs and 40
// refreshes of XOR sums, TFHELib128 with a key grouped by 2) in 6 levels:
// 4.1–4.4 s for the two queries, 9–10 ms a bootstrap (up to 7.7 s while
// other jobs shared the machine). A CPU gains nothing from batching:
// -queries 8 took 21.4 s, 2.7 s a query. -grouping 1 allows longer sums
// (16 terms, not 9) but bootstraps a little slower: 211 bootstraps a
// query, 4.3 s for two. The keys take a quarter of a second.
//
// On the GPU engine of an NVIDIA H100 80GB HBM3 (`query -engine gpu
// -queries N`, the default table, TFHELib128 grouped by 2;
// examples/bench/results/session44): one query in 18 ms, 64 in 437 ms and
// 1,024 in 6.81 s, 7 ms a query (231,424 bootstraps, about 34,000 a
// second); grouped by 3 (-grouping 3), one in 19 ms and 1,024 in 6.89 s.
//
// Exit status 0 when every answer matched the plaintext lookup, 1 otherwise
// or on an error (a table file that cannot be read included), 2 for bad
// flags.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/goldfhe/goldfhe/bootstrap"
	"github.com/goldfhe/goldfhe/examples/internal/enginecheck"
	"github.com/goldfhe/goldfhe/gates"
	"github.com/goldfhe/goldfhe/tfhe"
)

// maxQueries bounds -queries and -query: each query is a set of inputs
// held in memory with its circuit's live samples.
const maxQueries = 1 << 12

// shown is how many answers are printed; the rest are checked.
const shown = 8

func main() {
	log.SetFlags(0)
	log.SetPrefix("query: ")
	var (
		engFlag   = flag.String("engine", "auto", "auto (the GPU when one is usable, else the CPU), cpu or gpu")
		paramName = flag.String("params", "TFHELib128", "parameter set: TFHELib128, TFHErsDefault or CuFHE80 (about 80-bit security, for comparisons only)")
		grouping  = flag.Int("grouping", 2, "bootstrapping-key grouping (tfhe.WithGrouping): 1, 2 (faster) or 3 (fastest on a GPU, noisier)")
		tableFile = flag.String("table", "", "read the table from this file (\"KEY VALUE\" in hex, a line each) instead of generating it")
		records   = flag.Int("records", 32, "records of a generated table")
		tableSeed = flag.Uint64("table-seed", 1, "seed of a generated table and of -queries' keys")
		keyBits   = flag.Int("key-bits", 16, "bits of a key, 1 to 64")
		valueBits = flag.Int("value-bits", 16, "bits of a value, 1 to 64")
		queryFlag = flag.String("query", "", "query keys in hex, comma-separated (default: -queries keys, alternately in the table and not)")
		queries   = flag.Int("queries", 2, "without -query: how many keys to query, alternately one of the table and one not in it")
		plain     = flag.Bool("plain", false, "answer the queries with the circuit in plaintext only: no keys, no encryption")
	)
	flag.Parse()
	if flag.NArg() > 0 {
		badFlag("unexpected argument %q", flag.Arg(0))
	}

	// Every flag is checked before any key is made: the keys take seconds.
	if err := checkWidths(*keyBits, *valueBits); err != nil {
		badFlag("%v", err)
	}
	p, ok := tfhe.ParamSetByName(*paramName)
	if !ok {
		badFlag("unknown parameter set %q (want one of %s)", *paramName, strings.Join(tfhe.ParamSetNames(), ", "))
	}
	if *grouping < 1 || *grouping > tfhe.MaxGrouping {
		badFlag("-grouping must be 1 to %d, not %d", tfhe.MaxGrouping, *grouping)
	}
	use, err := bootstrap.ParseUse(*engFlag)
	if err != nil {
		badFlag("-engine: %v", err)
	}
	if *queryFlag == "" && (*queries < 1 || *queries > maxQueries) {
		badFlag("-queries must be 1 to %d, not %d", maxQueries, *queries)
	}
	var t *table
	if *tableFile != "" {
		t, err = readTable(*tableFile, *keyBits, *valueBits)
		if err != nil {
			log.Fatal(err) // a file's content, not a flag: exit 1
		}
		fmt.Printf("table    %d records of %d-bit keys and %d-bit values, from %s\n", len(t.records), t.keyBits, t.valueBits, *tableFile)
	} else {
		if t, err = generateTable(*records, *keyBits, *valueBits, *tableSeed); err != nil {
			badFlag("%v", err)
		}
		fmt.Printf("table    %d records of %d-bit keys and %d-bit values, generated from -table-seed %d\n", len(t.records), t.keyBits, t.valueBits, *tableSeed)
	}
	var keys []uint64
	if *queryFlag != "" {
		if keys, err = parseQueries(*queryFlag, t.keyBits); err != nil {
			badFlag("%v", err)
		}
	} else {
		keys = pickQueries(t, *queries, *tableSeed)
	}
	if !*plain {
		if err := checkQueryMemory(t, len(keys), p); err != nil {
			badFlag("%v", err)
		}
	}

	want := make([]uint64, len(keys))
	for k, key := range keys {
		v, i := t.lookup(key)
		want[k] = v
		where := "not in the table"
		if i >= 0 {
			where = fmt.Sprintf("record %d", i+1)
		}
		if k < shown {
			fmt.Printf("query %-3d key %s (%s)\n", k+1, hexWidth(key, t.keyBits), where)
		}
	}

	// The server's circuit, from its table alone.
	c, err := newCircuit(t)
	if err != nil {
		log.Fatal(err)
	}
	if *plain {
		// The circuit in plaintext, to check a table and its queries
		// without keys.
		ok := true
		for k, key := range keys {
			out, err := c.Eval(gates.Uint64Bits(key, t.keyBits))
			if err != nil {
				log.Fatal(err)
			}
			ok = answer(k, key, gates.BitsUint64(out[0]), want[k], t, "plaintext") && ok
		}
		summary(len(keys), ok)
		return
	}

	// -engine gpu on a machine without a GPU fails now rather than after
	// the keys (-plain, which makes neither keys nor engine, does not ask).
	if err := enginecheck.Require(use); err != nil {
		log.Fatal(err)
	}

	// The client: keys. The secret key stays here; the cloud key goes to
	// the server.
	start := time.Now()
	sk, err := tfhe.GenerateSecretKey(p)
	if err != nil {
		log.Fatal(err)
	}
	ck, err := tfhe.GenerateCloudKey(sk, tfhe.WithGrouping(*grouping))
	if err != nil {
		log.Fatal(err)
	}
	enc, err := tfhe.NewEncryptor(sk)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("keys     %s, grouping %d, made in %v\n", p.Name(), *grouping, time.Since(start).Round(time.Millisecond))

	// The server: an engine from the cloud key alone.
	start = time.Now()
	eng, err := bootstrap.New(ck, bootstrap.Options{Use: use})
	if err != nil {
		log.Fatal(err)
	}
	defer eng.Close()
	ev, err := gates.NewEvaluator(eng)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("engine   %s, ready in %v\n         %s\n", eng.Name(), time.Since(start).Round(time.Millisecond), eng.Reason())

	// The client encrypts each key: one set of circuit inputs a query.
	start = time.Now()
	sets := make([][][]*tfhe.TLWE, len(keys))
	for k, key := range keys {
		q, err := gates.EncryptUint(enc, key, t.keyBits)
		if err != nil {
			log.Fatal(err)
		}
		sets[k] = [][]*tfhe.TLWE{q}
	}
	fmt.Printf("encrypt  %s of %d samples, %d bytes each, in %v\n",
		count(len(keys), "query", "queries"), t.keyBits, t.keyBits*sampleBytes(p), time.Since(start).Round(time.Microsecond))

	// The server evaluates every query in one pass.
	var opts gates.CircuitOptions // XORLinear, the default noise bound
	plan, err := ev.PlanCircuits(c, len(keys), opts)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("plan     %d bootstraps for %s (%d refreshing XOR sums of up to %d samples) in %d levels, estimated failure 2^%.0f per bootstrap at most, 2^%.0f for the evaluation\n",
		plan.Bootstraps, count(plan.Instances, "query", "queries"), plan.Refreshes, plan.LargestSum, plan.Levels-1, plan.Log2Failure, plan.Log2EvalFailure())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	// The first Ctrl-C stops the evaluation between levels; then the
	// handler goes, so that a second one ends the program at once.
	go func() { <-ctx.Done(); stop() }()
	start = time.Now()
	outs, err := ev.EvalCircuits(ctx, c, sets, opts)
	if err != nil {
		log.Fatal(err)
	}
	el := time.Since(start)
	fmt.Printf("server   %s answered in %v (%d bootstraps in %d levels): %v a query, %v a bootstrap; an answer is %d bytes\n",
		count(len(keys), "query", "queries"), el.Round(time.Millisecond), plan.Bootstraps, plan.Levels-1,
		(el / time.Duration(len(keys))).Round(time.Millisecond), (el / time.Duration(max(plan.Bootstraps, 1))).Round(time.Microsecond),
		t.valueBits*sampleBytes(p))

	// The client decrypts its answers.
	ok = true
	for k, key := range keys {
		got, err := gates.DecryptUint(sk, outs[k][0])
		if err != nil {
			log.Fatal(err)
		}
		ok = answer(k, key, got, want[k], t, "decrypted") && ok
	}
	summary(len(keys), ok)
}

// newCircuit makes the lookup circuit of t and prints what it holds.
func newCircuit(t *table) (*gates.Circuit, error) {
	start := time.Now()
	c, err := lookupCircuit(t)
	if err != nil {
		return nil, err
	}
	shape := ""
	if c.Count(gates.OpZero) > 0 {
		shape = ", a ZERO for the value bits no record has" // one gate, copied to each
	}
	fmt.Printf("circuit  %d gates (%d AND, %d XOR, %d NOT, %d output copies%s), made in %v\n",
		c.NumGates(), c.Count(gates.OpAND), c.Count(gates.OpXOR), c.Count(gates.OpNOT), c.Count(gates.OpCopy),
		shape, time.Since(start).Round(time.Microsecond))
	fmt.Printf("cost     %d bootstraps in %d levels a query with every XOR bootstrapped\n", c.Bootstraps(), c.Depth())
	return c, nil
}

// readTable reads and parses a table file.
func readTable(name string, keyBits, valueBits int) (*table, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseTable(f, name, keyBits, valueBits)
}

// parseQueries reads -query: hex keys of at most keyBits bits,
// comma-separated. Its errors name a key by its place, not its digits (a
// query is the client's secret; gates.HexBits' errors are the same).
func parseQueries(s string, keyBits int) ([]uint64, error) {
	fields := strings.Split(s, ",")
	if len(fields) > maxQueries {
		return nil, fmt.Errorf("-query: %d keys, the most is %d", len(fields), maxQueries)
	}
	keys := make([]uint64, len(fields))
	for i, f := range fields {
		k, err := parseHex(strings.TrimSpace(f), keyBits)
		if err != nil {
			return nil, fmt.Errorf("-query: key %d: %v", i+1, err)
		}
		keys[i] = k
	}
	return keys, nil
}

// maxQueryBytes bounds the samples of one evaluation, as examples/circuit's
// maxSetBytes does: 1 TiB, more than any machine holds.
const maxQueryBytes = 1 << 40

// lookupWires is the most wires lookupCircuit makes for t, whatever the
// shape of its sums: the key's inputs and their NOTs, a tree of keyBits−1
// ANDs a record, an XOR a record and value bit, a ZERO and the output
// copies.
func lookupWires(t *table) int {
	k, v, r := t.keyBits, t.valueBits, len(t.records)
	return 2*k + r*(k-1) + r*v + 1 + v
}

// checkQueryMemory refuses a number of queries whose samples could not
// fit any machine's memory, before keys are made for them: an encrypted
// evaluation holds a sample of n+1 words (and a pointer) for each wire of
// each query at worst, and the largest table's circuit has millions.
func checkQueryMemory(t *table, queries int, p tfhe.Params) error {
	wires, sample := lookupWires(t), (p.LWEDimension()+1)*4
	if perQuery := float64(wires) * float64(sample); float64(queries)*perQuery > maxQueryBytes {
		return fmt.Errorf("%s of a table of %d records: up to %.3g GiB of samples (%d wires of %d bytes a query); the most is %d",
			count(queries, "query", "queries"), len(t.records), float64(queries)*perQuery/(1<<30), wires, sample, int(maxQueryBytes/perQuery))
	}
	return nil
}

// pickQueries returns n keys, alternately one of the table's and one that
// is not in it (while there is one), the same for the same seed.
func pickQueries(t *table, n int, seed uint64) []uint64 {
	r := rand.New(rand.NewPCG(seed, 1))
	in := make(map[uint64]bool, len(t.records))
	for _, rec := range t.records {
		in[rec.key] = true
	}
	full := t.keyBits < 64 && uint64(len(t.records)) == 1<<t.keyBits
	keys := make([]uint64, n)
	for k := range keys {
		if k%2 == 0 || full {
			keys[k] = t.records[r.IntN(len(t.records))].key
			continue
		}
		// The next free key from a random one: at most len(t.records)
		// steps.
		key := r.Uint64() & mask(t.keyBits)
		for in[key] {
			key = (key + 1) & mask(t.keyBits)
		}
		keys[k] = key
	}
	return keys
}

// answer prints the k-th answer (the first few) and reports whether it is
// the plaintext lookup's.
func answer(k int, key, got, want uint64, t *table, how string) bool {
	ok := got == want
	if k < shown || !ok {
		verdict := "matches the table"
		if !ok {
			verdict = "WRONG: the table gives " + hexWidth(want, t.valueBits)
		} else if _, i := t.lookup(key); i < 0 {
			verdict = "zero: no record has the key, as in the table"
		}
		fmt.Printf("answer %-3d key %s → %s  %s, %s\n", k+1, hexWidth(key, t.keyBits), hexWidth(got, t.valueBits), how, verdict)
	}
	return ok
}

// summary reports the outcome of n answers and exits 1 if one was wrong.
func summary(n int, ok bool) {
	if !ok {
		fmt.Println("Some answers were WRONG.")
		os.Exit(1)
	}
	fmt.Printf("answers  all %d match a plaintext lookup\n", n)
}

// sampleBytes is the size of one encoded TLWE sample of p (MarshalBinary):
// what a query costs on the wire, a sample a key bit.
func sampleBytes(p tfhe.Params) int {
	b, err := tfhe.NewTLWE(p.LWEDimension()).MarshalBinary()
	if err != nil {
		log.Fatal(err)
	}
	return len(b)
}

// badFlag reports a command-line mistake and exits with status 2, as the
// flag package does for one it finds.
func badFlag(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "query: "+format+"\n", args...)
	os.Exit(2)
}

// count returns "1 one" or "n many".
func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
