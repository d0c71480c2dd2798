// Command demo is goldfhe's first tour: it generates keys, evaluates a few
// gates on encrypted bits and adds two encrypted bytes with an 8-bit adder
// built from gates, checking every result against plaintext.
//
//	go run ./examples/demo              # or: make demo
//	go run ./examples/demo -params CuFHE80 -a 200 -b 99
//
// Exit status 0 when every result matched plaintext, 1 otherwise, 2 for
// bad flags.
package main

import (
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"strings"
	"time"

	"github.com/goldfhe/goldfhe/bootstrap"
	"github.com/goldfhe/goldfhe/examples/internal/enginecheck"
	"github.com/goldfhe/goldfhe/gates"
	"github.com/goldfhe/goldfhe/tfhe"
)

func main() {
	log.SetFlags(0)
	log.SetPrefix("demo: ")
	engFlag := flag.String("engine", "auto", "auto (the GPU when one is usable, else the CPU), cpu or gpu")
	paramName := flag.String("params", "TFHELib128", "parameter set: TFHELib128, TFHErsDefault or CuFHE80 (about 80-bit security, for comparisons only)")
	a := flag.Int("a", -1, "first byte to add, 0–255, or -1 for a random one")
	b := flag.Int("b", -1, "second byte to add, 0–255, or -1 for a random one")
	flag.Parse()
	for _, v := range []*int{a, b} {
		switch {
		case *v == -1:
			*v = rand.IntN(256)
		case *v < 0 || *v > 255:
			badFlag("-a and -b must be bytes (0–255)")
		}
	}
	p, ok := tfhe.ParamSetByName(*paramName)
	if !ok {
		badFlag("unknown parameter set %q (want one of %s)", *paramName, strings.Join(tfhe.ParamSetNames(), ", "))
	}
	use, err := bootstrap.ParseUse(*engFlag) // before the keys are made
	if err != nil {
		badFlag("-engine: %v", err)
	}
	// -engine gpu on a machine without a GPU fails now rather than after
	// the keys.
	if err := enginecheck.Require(use); err != nil {
		log.Fatal(err)
	}
	fmt.Println("goldfhe demo:", p)
	failed := false
	check := func(ok bool) string {
		if ok {
			return "ok"
		}
		failed = true
		return "WRONG"
	}

	// 1. Keys. The client keeps the secret key; the cloud key (bootstrapping
	// and key-switching keys) goes to whoever computes.
	fmt.Println("\n1. Key generation")
	start := time.Now()
	sk, err := tfhe.GenerateSecretKey(p)
	if err != nil {
		log.Fatal(err)
	}
	// The cloud key as a client sends it: compressed (its masks are a
	// public seed's streams), about a fifth of the whole key's bytes;
	// the server decodes it, checks its set and expands it.
	wire, err := withProgress("   cloud key (compressed, to send)", func() ([]byte, error) {
		cck, err := tfhe.GenerateCompressedCloudKey(sk)
		if err != nil {
			return nil, err
		}
		return cck.MarshalBinary()
	})
	if err != nil {
		log.Fatal(err)
	}
	ck, err := withProgress(fmt.Sprintf("   server: key received (%.1f MB), expanded", float64(len(wire))/1e6),
		func() (*tfhe.CloudKey, error) {
			var received tfhe.CompressedCloudKey
			if err := received.UnmarshalBinary(wire); err != nil {
				return nil, err
			}
			if !received.Params().Equal(p) {
				return nil, fmt.Errorf("a cloud key for %v, not %v", received.Params(), p)
			}
			return received.Expand()
		})
	if err != nil {
		log.Fatal(err)
	}
	eng, err := withProgress("   engine (bootstrapping key to the NTT domain)", func() (*bootstrap.Selected, error) {
		return bootstrap.New(ck, bootstrap.Options{Use: use})
	})
	if err != nil {
		log.Fatal(err)
	}
	defer eng.Close()
	ev, err := gates.NewEvaluator(eng)
	if err != nil {
		log.Fatal(err)
	}
	enc, err := tfhe.NewEncryptor(sk)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("   keys and engine ready in %v (engine %s)\n   %s\n", round(time.Since(start)), eng.Name(), eng.Reason())

	// 2. Gates on encrypted bits: one bootstrap each, NOT is free, MUX two.
	fmt.Println("\n2. Gates on encrypted bits")
	x, y := true, false
	cx, cy := enc.EncryptBool(x), enc.EncryptBool(y)
	fmt.Printf("   x = %v, y = %v (encrypted: %d torus values each)\n", x, y, len(cx.Value))
	for _, g := range []struct {
		name string
		op   gates.Op
		want bool
	}{
		{"NAND(x, y)", gates.OpNAND, !(x && y)},
		{"XOR(x, y) ", gates.OpXOR, x != y},
		{"OR(x, y)  ", gates.OpOR, x || y},
		{"NOT(x)    ", gates.OpNOT, !x},
		{"MUX(x,y,x)", gates.OpMUX, y}, // x ? y : x
	} {
		in := []*tfhe.TLWE{cx, cy, cx}[:g.op.Arity()]
		t0 := time.Now()
		r, err := ev.Gate(g.op, in...)
		if err != nil {
			log.Fatal(err)
		}
		got := sk.DecryptBool(r)
		fmt.Printf("   %s = %-5v %-5s %d bootstrap(s), %v\n", g.name, got, check(got == g.want), g.op.Bootstraps(), round(time.Since(t0)))
	}

	// The same gates on every input pair at once: one engine batch.
	var calls []gates.Call
	var want []bool
	for _, op := range []gates.Op{gates.OpAND, gates.OpNAND, gates.OpOR, gates.OpXOR, gates.OpXNOR, gates.OpNOR} {
		for i := range 4 {
			u, v := i&1 == 1, i&2 != 0
			calls = append(calls, gates.Call{Op: op, A: enc.EncryptBool(u), B: enc.EncryptBool(v), Out: tfhe.NewTLWE(p.LWEDimension())})
			want = append(want, op.Eval(u, v, false))
		}
	}
	t0 := time.Now()
	if err := ev.Batch(calls); err != nil {
		log.Fatal(err)
	}
	el := time.Since(t0)
	ok = true
	for i, c := range calls {
		ok = ok && sk.DecryptBool(c.Out) == want[i]
	}
	fmt.Printf("   truth tables of AND, NAND, OR, XOR, XNOR, NOR in one batch: %s, %d bootstraps in %v (%v each)\n",
		check(ok), len(calls), round(el), round(el/time.Duration(len(calls))))

	// 3. An 8-bit adder from gates.
	fmt.Println("\n3. Encrypted 8-bit adder built from gates")
	ca, err := gates.EncryptUint(enc, uint64(*a), 8)
	if err != nil {
		log.Fatal(err)
	}
	cb, err := gates.EncryptUint(enc, uint64(*b), 8)
	if err != nil {
		log.Fatal(err)
	}
	t0 = time.Now()
	sum, err := ev.AddUint(ca, cb)
	if err != nil {
		log.Fatal(err)
	}
	el = time.Since(t0)
	got, err := gates.DecryptUint(sk, sum)
	if err != nil {
		log.Fatal(err)
	}
	// AddUint evaluates this circuit on this engine; its plan says what
	// the add cost.
	adder, err := ev.AddUintCircuit(8)
	if err != nil {
		log.Fatal(err)
	}
	plan, err := ev.PlanCircuit(adder, gates.CircuitOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("   %d + %d = %d %s (9-bit result; %d bootstraps in %d engine calls, %v)\n", *a, *b, got, check(got == uint64(*a+*b)),
		plan.Bootstraps, plan.Levels-1, round(el))

	if failed {
		fmt.Println("\nSome results were WRONG.")
		os.Exit(1)
	}
	fmt.Println("\nAll results match plaintext. Next: go run ./examples/circuit -list")
}

// withProgress runs f while showing elapsed time on a terminal (dots
// otherwise), then reports how long it took.
func withProgress[T any](what string, f func() (T, error)) (T, error) {
	done := make(chan struct{})
	start := time.Now()
	tty := isTerminal(os.Stdout)
	go func() {
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				if tty {
					fmt.Printf("\r%s … %v", what, round(time.Since(start)))
				}
			}
		}
	}()
	if !tty {
		fmt.Printf("%s …", what)
	}
	v, err := f()
	close(done)
	outcome := "done"
	if err != nil {
		outcome = "failed"
	}
	if tty {
		fmt.Printf("\r%s … %s in %v   \n", what, outcome, round(time.Since(start)))
	} else {
		fmt.Printf(" %s in %v\n", outcome, round(time.Since(start)))
	}
	return v, err
}

func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func round(d time.Duration) time.Duration {
	switch {
	case d > time.Second:
		return d.Round(10 * time.Millisecond)
	case d > time.Millisecond:
		return d.Round(10 * time.Microsecond)
	}
	return d
}

// badFlag reports a command-line mistake and exits with status 2, as the
// flag package does for one it finds.
func badFlag(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "demo: "+format+"\n", args...)
	os.Exit(2)
}
