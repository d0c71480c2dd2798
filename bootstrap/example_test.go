package bootstrap_test

import (
	"fmt"

	"github.com/goldfhe/goldfhe/bootstrap"
	"github.com/goldfhe/goldfhe/tfhe"
	"github.com/goldfhe/goldfhe/torus"
)

// A NAND gate on encrypted bits with the default parameter set: the linear
// combination (0, 1/8) − c1 − c2, then one gate bootstrap (DESIGN.md §2).
func ExampleNewCPU() {
	// Fixed seeds keep the example reproducible; real keys use
	// tfhe.GenerateSecretKey and tfhe.GenerateCloudKey (crypto/rand).
	sk, _ := tfhe.GenerateSecretKeyFromSeed(tfhe.TFHELib128, [32]byte{1})
	ck, _ := tfhe.GenerateCloudKeyFromSeed(sk, [32]byte{2})
	enc, _ := tfhe.NewEncryptorFromSeed(sk, [32]byte{3})

	engine, err := bootstrap.NewCPU(ck, bootstrap.CPUOptions{})
	if err != nil {
		panic(err)
	}
	defer engine.Close()

	n := tfhe.TFHELib128.LWEDimension()
	var in, out []*tfhe.TLWE
	for _, xy := range [][2]bool{{false, false}, {false, true}, {true, false}, {true, true}} {
		c := tfhe.NewTrivialTLWE(n, torus.Encode(1, 8))
		tfhe.SubTLWETo(c, c, enc.EncryptBool(xy[0]))
		tfhe.SubTLWETo(c, c, enc.EncryptBool(xy[1]))
		in = append(in, c)
		out = append(out, tfhe.NewTLWE(n))
	}
	if err := engine.Bootstrap(out, in, torus.Encode(1, 8)); err != nil {
		panic(err)
	}
	for _, c := range out {
		fmt.Print(sk.DecryptBool(c), " ")
	}
	fmt.Println()
	// Output: true true true false
}

// Every GPU of the host, each bootstrapping a share of every call; without
// a GPU, New falls back to the CPU engine and Reason says why.
func ExampleGPUDevices() {
	sk, _ := tfhe.GenerateSecretKeyFromSeed(tfhe.TFHELib128, [32]byte{1})
	ck, _ := tfhe.GenerateCloudKeyFromSeed(sk, [32]byte{2}, tfhe.WithGrouping(3))

	devices, _ := bootstrap.GPUDevices() // nil without a GPU
	engine, err := bootstrap.New(ck, bootstrap.Options{Devices: devices})
	if err != nil {
		panic(err)
	}
	defer engine.Close()
	fmt.Println(engine.Reason()) // "GPU: 2 devices, N=1024/32x32/hybrid: 0: NVIDIA H200 (…); 1: NVIDIA H200 (…)"
}
