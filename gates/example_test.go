package gates_test

import (
	"context"
	"fmt"
	"log"
	"strings"

	"github.com/goldfhe/goldfhe/bootstrap"
	"github.com/goldfhe/goldfhe/gates"
	"github.com/goldfhe/goldfhe/gates/circuits"
	"github.com/goldfhe/goldfhe/tfhe"
)

// The README's first program: keys, two encrypted bits, three gates.
func Example() {
	// The client makes the keys; the secret key never leaves it.
	sk, err := tfhe.GenerateSecretKey(tfhe.TFHELib128)
	if err != nil {
		log.Fatal(err)
	}
	// Public: the server's evaluation key. tfhe.GenerateCloudKey(sk,
	// tfhe.WithGrouping(2)) or WithGrouping(3) makes one that bootstraps
	// about 1.5× faster on a GPU (README: "Grouped bootstrapping keys").
	ck, err := tfhe.GenerateCloudKey(sk)
	if err != nil {
		log.Fatal(err)
	}
	enc, err := tfhe.NewEncryptor(sk)
	if err != nil {
		log.Fatal(err)
	}
	a, b := enc.EncryptBool(true), enc.EncryptBool(false)

	// The server computes on ciphertexts with the cloud key only.
	eng, err := bootstrap.NewCPU(ck, bootstrap.CPUOptions{})
	if err != nil {
		log.Fatal(err)
	}
	defer eng.Close()
	ev, err := gates.NewEvaluator(eng)
	if err != nil {
		log.Fatal(err)
	}
	nand, err := ev.NAND(a, b) // one bootstrap
	if err != nil {
		log.Fatal(err)
	}
	xor, err := ev.XOR(a, b)
	if err != nil {
		log.Fatal(err)
	}
	mux, err := ev.MUX(b, nand, xor) // b ? nand : xor
	if err != nil {
		log.Fatal(err)
	}

	// Back on the client.
	fmt.Println("NAND:", sk.DecryptBool(nand))
	fmt.Println("XOR: ", sk.DecryptBool(xor))
	fmt.Println("MUX: ", sk.DecryptBool(mux))
	// Output:
	// NAND: true
	// XOR:  true
	// MUX:  true
}

// Keys and ciphertexts between a client and a server, as bytes: the client
// sends the cloud key once and encrypted bits with each request; the server
// decodes them, computes, and sends encrypted bits back. The secret key and
// the key-generation seeds never leave the client.
func Example_clientAndServer() {
	// Client: keys, and what goes over the wire.
	sk, err := tfhe.GenerateSecretKey(tfhe.TFHELib128)
	if err != nil {
		log.Fatal(err)
	}
	// The cloud key in its compressed form, to send: its masks are a
	// seed's streams, which the server regenerates.
	cck, err := tfhe.GenerateCompressedCloudKey(sk)
	if err != nil {
		log.Fatal(err)
	}
	ckBytes, err := cck.MarshalBinary() // about 15.5 MB for TFHELib128, where the whole key is 72 MB
	if err != nil {
		log.Fatal(err)
	}
	enc, err := tfhe.NewEncryptor(sk)
	if err != nil {
		log.Fatal(err)
	}
	request := make([][]byte, 2)
	for i, bit := range []bool{true, true} {
		if request[i], err = enc.EncryptBool(bit).MarshalBinary(); err != nil {
			log.Fatal(err)
		}
	}

	// Server: decodes (every decoder checks its input and returns an error
	// wrapping tfhe.ErrFormat for bytes that are not what it expects),
	// checks that the key is for a set it serves (a compressed key's
	// parameters decide how large it expands), and expands it.
	var received tfhe.CompressedCloudKey
	if err := received.UnmarshalBinary(ckBytes); err != nil {
		log.Fatal(err)
	}
	if !received.Params().Equal(tfhe.TFHELib128) {
		log.Fatalf("a cloud key for %v: this server serves TFHELib128", received.Params())
	}
	serverKey, err := received.Expand()
	if err != nil {
		log.Fatal(err)
	}
	eng, err := bootstrap.New(serverKey, bootstrap.Options{}) // the GPU when one is usable
	if err != nil {
		log.Fatal(err)
	}
	defer eng.Close()
	ev, err := gates.NewEvaluator(eng)
	if err != nil {
		log.Fatal(err)
	}
	in := make([]*tfhe.TLWE, len(request))
	for i, b := range request {
		in[i] = new(tfhe.TLWE)
		if err := in[i].UnmarshalBinary(b); err != nil {
			log.Fatal(err)
		}
	}
	and, err := ev.AND(in[0], in[1])
	if err != nil {
		log.Fatal(err)
	}
	reply, err := and.MarshalBinary()
	if err != nil {
		log.Fatal(err)
	}

	// Client: decodes and decrypts.
	var out tfhe.TLWE
	if err := out.UnmarshalBinary(reply); err != nil {
		log.Fatal(err)
	}
	fmt.Println("AND:", sk.DecryptBool(&out))
	// Output:
	// AND: true
}

// adder2 is a 2-bit adder in Bristol Fashion: inputs a (wires 0–1) and b
// (2–3), outputs the sum (9–10, least significant bit first) and the carry
// (11).
const adder2 = `8 12
2 2 2
2 2 1

2 1 0 2 4 XOR
2 1 0 2 5 AND
2 1 1 3 6 XOR
2 1 1 3 7 AND
2 1 6 5 8 AND
1 1 4 9 EQW
2 1 6 5 10 XOR
2 1 7 8 11 XOR
`

// A circuit under encryption: a 2-bit adder written in Bristol Fashion,
// evaluated level by level, each level one engine batch. XOR gates cost no
// bootstrap (XORLinear); the sums that an AND or an output reads are
// bootstrapped ("refreshed") in the batches.
func ExampleEvaluator_EvalCircuit() {
	c, err := gates.Parse(strings.NewReader(adder2))
	if err != nil {
		log.Fatal(err)
	}
	sk, _ := tfhe.GenerateSecretKey(tfhe.TFHELib128)
	ck, _ := tfhe.GenerateCloudKey(sk)
	enc, _ := tfhe.NewEncryptor(sk)
	eng, err := bootstrap.NewCPU(ck, bootstrap.CPUOptions{})
	if err != nil {
		log.Fatal(err)
	}
	defer eng.Close()
	ev, _ := gates.NewEvaluator(eng)

	a, _ := gates.EncryptUint(enc, 3, 2) // wires 0–1, least significant bit first
	b, _ := gates.EncryptUint(enc, 2, 2) // wires 2–3
	out, err := ev.EvalCircuit(context.Background(), c, [][]*tfhe.TLWE{a, b}, func(s gates.LevelStats) {
		fmt.Printf("level %d: %d gates and %d refreshes bootstrapped, %d free\n", s.Level, s.Gates, s.Refreshes, s.Free)
	})
	if err != nil {
		log.Fatal(err)
	}
	sum, _ := gates.DecryptUint(sk, out[0])
	carry, _ := gates.DecryptUint(sk, out[1])
	fmt.Println("3 + 2 =", sum+carry<<2)
	// Output:
	// level 0: 0 gates and 0 refreshes bootstrapped, 3 free
	// level 1: 2 gates and 2 refreshes bootstrapped, 1 free
	// level 2: 1 gates and 1 refreshes bootstrapped, 1 free
	// level 3: 0 gates and 1 refreshes bootstrapped, 0 free
	// 3 + 2 = 5
}

// One circuit on several sets of inputs at once: each level of every set is
// one engine batch, which is how a GPU gets batches large enough to run at
// its full rate (README, "Many sets of inputs at once").
func ExampleEvaluator_EvalCircuits() {
	c, err := gates.Parse(strings.NewReader(adder2))
	if err != nil {
		log.Fatal(err)
	}
	sk, _ := tfhe.GenerateSecretKey(tfhe.TFHELib128)
	ck, _ := tfhe.GenerateCloudKey(sk)
	enc, _ := tfhe.NewEncryptor(sk)
	eng, err := bootstrap.New(ck, bootstrap.Options{}) // the GPU when one is usable
	if err != nil {
		log.Fatal(err)
	}
	defer eng.Close()
	ev, _ := gates.NewEvaluator(eng)

	pairs := [][2]uint64{{3, 2}, {1, 1}, {2, 3}}
	sets := make([][][]*tfhe.TLWE, len(pairs))
	for k, p := range pairs {
		a, _ := gates.EncryptUint(enc, p[0], 2)
		b, _ := gates.EncryptUint(enc, p[1], 2)
		sets[k] = [][]*tfhe.TLWE{a, b}
	}
	plan, _ := ev.PlanCircuits(c, len(sets), gates.CircuitOptions{})
	fmt.Printf("%d sets: %d bootstraps in %d engine batches\n", plan.Instances, plan.Bootstraps, plan.Levels-1)
	outs, err := ev.EvalCircuits(context.Background(), c, sets, gates.CircuitOptions{})
	if err != nil {
		log.Fatal(err)
	}
	for k, out := range outs {
		sum, _ := gates.DecryptUint(sk, out[0])
		carry, _ := gates.DecryptUint(sk, out[1])
		fmt.Printf("%d + %d = %d\n", pairs[k][0], pairs[k][1], sum+carry<<2)
	}
	// Output:
	// 3 sets: 21 bootstraps in 3 engine batches
	// 3 + 2 = 5
	// 1 + 1 = 2
	// 2 + 3 = 5
}

// Plaintext evaluation of a shipped circuit, for checking: AES-128 on the
// FIPS-197 vector. Byte strings are big-endian integers, least significant
// bit on the first wire.
func ExampleCircuit_Eval() {
	c, err := circuits.Load("aes_128")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(c)
	key, _ := gates.HexBits("000102030405060708090a0b0c0d0e0f", 128, gates.LSBFirst)
	pt, _ := gates.HexBits("00112233445566778899aabbccddeeff", 128, gates.LSBFirst)
	out, err := c.Eval(key, pt) // aes_128 takes the key first
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(gates.BitsHex(out[0], gates.LSBFirst))
	// Output:
	// Bristol Fashion circuit: inputs [128 128], outputs [128], 36919 wires, 36663 gates, 34576 bootstraps in 291 levels
	// 69c4e0d86a7b0430d8cdb78070b4c55a
}

// A circuit made by a program: a 2-bit adder, whose 3-bit sum is its one
// output value, evaluated in plaintext. Build puts the inputs on the first
// wires and copies the outputs to the last, as Bristol Fashion has them.
// README's "Circuits of your own" shows its first lines.
func ExampleBuilder() {
	b := gates.NewBuilder(2, 2) // x and y, least significant bit first
	x, y := b.Input(0), b.Input(1)
	s0 := b.Gate(gates.OpXOR, x[0], y[0])
	c0 := b.Gate(gates.OpAND, x[0], y[0])
	t := b.Gate(gates.OpXOR, x[1], y[1])
	s1 := b.Gate(gates.OpXOR, t, c0)
	c1 := b.Gate(gates.OpOR, b.Gate(gates.OpAND, x[1], y[1]), b.Gate(gates.OpAND, t, c0))
	c, err := b.Build([]int{s0, s1, c1}) // any wires: inputs, repeats, a ZERO gate's
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(c)
	for _, v := range [][2]uint64{{3, 2}, {1, 1}, {3, 3}} {
		out, err := c.Eval(gates.Uint64Bits(v[0], 2), gates.Uint64Bits(v[1], 2))
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%d + %d = %d\n", v[0], v[1], gates.BitsUint64(out[0]))
	}
	// Output:
	// Bristol Fashion circuit: inputs [2 2], outputs [3], 14 wires, 10 gates, 7 bootstraps in 3 levels
	// 3 + 2 = 5
	// 1 + 1 = 2
	// 3 + 3 = 6
}

// Errors name the netlist line.
func ExampleParse() {
	_, err := gates.Parse(strings.NewReader("2 4\n1 2\n1 1\n\n2 1 0 3 2 XOR\n2 1 0 1 3 AND\n"))
	fmt.Println(err)
	// Output:
	// gates: circuit line 5: XOR gate reads wire 3 before it is written
}
