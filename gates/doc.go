// Package gates is goldfhe's user API: boolean gates on encrypted bits and
// boolean circuits evaluated level by level.
//
// # Gates
//
// Gate bootstrapping follows Chillotti, Gama, Georgieva and Izabachène,
// "TFHE: Fast Fully Homomorphic Encryption over the Torus", J. Cryptology 33
// (2020) (CGGI20; first as "Faster Fully Homomorphic Encryption:
// Bootstrapping in less than 0.1 Seconds", ASIACRYPT 2016): a bit is a TLWE
// sample of ±1/8, a two-input gate is a linear combination of its inputs plus
// a constant followed by one bootstrap (CGGI20 §5.1, and the gate constants of
// the TFHE library), NOT is a free negation and MUX costs two bootstraps
// without key switching plus one key switch. MAJ, the majority of three
// bits, is one bootstrap of their plain sum, whose phase ±1/8 or ±3/8 has
// the majority's sign (OpenFHE's binary FHE has it as MAJORITY; the
// sum's three errors make it somewhat noisier than a two-input gate): a
// full adder's carry, which AddUint and AdderCircuit build on.
//
// An Evaluator wraps any bootstrap.Engine (the CPU engine, or the GPU
// engine): one-gate methods (NAND, XOR, MUX, …), and Batch, which sends a
// whole slice of gates of mixed kinds to the engine at once — the way to
// keep a GPU busy. EncryptBits, EncryptUint, DecryptBits and DecryptUint are
// the client-side helpers (integers little-endian: sample j is bit j).
//
// # Usage
//
// The client makes a secret key (tfhe.GenerateSecretKey) and from it the
// public cloud key (tfhe.GenerateCloudKey, tfhe.WithGrouping(3) for the
// fastest GPU bootstrapping); both save with MarshalBinary and load with
// UnmarshalBinary (keep the secret key's file private, mode 0600). The
// cloud key goes to the server smaller as a tfhe.CompressedCloudKey
// (tfhe.GenerateCompressedCloudKey: about a fifth of the bytes), which
// the server decodes, checks and expands (Expand). The client
// encrypts with a tfhe.Encryptor (EncryptBits, EncryptUint), one per
// goroutine, and sends the ciphertexts and the cloud key to the server.
//
// The server makes an engine from the cloud key alone: bootstrap.New picks
// the GPU when a usable one is present and the CPU otherwise, and its
// Reason says which and why (bootstrap.Options.Use forces either). It
// wraps the engine in an Evaluator (NewEvaluator), evaluates gates, Batch
// or circuits (Parse, EvalCircuit), and closes the engine when done
// (Close; later calls return bootstrap.ErrClosed). One Evaluator and its
// engine may be shared by any number of goroutines: concurrent calls to a
// GPU engine are merged into larger batches. The client decrypts the
// results with its secret key (DecryptBits, DecryptUint).
//
// # Circuits
//
// Parse reads netlists in Bristol Fashion (the format of the SCALE-MAMBA
// circuits, specified in the comment at the top of src/GC/Circuit.h of
// SCALE-MAMBA; see https://nigelsmart.github.io/MPC.html) and in the original Bristol
// format of Tillich and Smart. A program that computes its own circuit
// makes it gate by gate with a Builder, which numbers the wires and puts
// the inputs on the first and the outputs on the last, as Bristol Fashion
// has them (NewCircuit takes gates whose wires are numbered so already).
// A Circuit is validated and grouped into levels by bootstrap depth: all
// bootstrapped gates of a level go to the engine as one batch, and the free
// gates (INV, EQ, EQW) are folded into the level where their input appears. Circuit.Eval evaluates in plaintext, for checking;
// Evaluator.EvalCircuit under encryption, one engine batch per level, and
// Evaluator.EvalCircuits on many sets of inputs, each level of all sets
// one batch (what a GPU needs to run at its full rate).
//
// Under encryption XOR and XNOR gates cost no bootstrap by default
// (XORLinear, circuit_linear.go): a bootstrapped sample c of bit m gives
// 2·c + 1/4 of phase m/2, whose sums add bits modulo 2 exactly (the "free
// XOR" of garbled circuits, here on TLWE phases), and a sum is bootstrapped
// once where an AND-like gate or an output needs a single sample, or where
// its noise would pass a bound (CircuitOptions.MaxXORTerms,
// DefaultXORFailureLog2). Evaluator.PlanCircuit reports the schedule;
// XORBootstrapped bootstraps every gate as CGGI20 §5.1 does.
//
// Wire orders: in every Bristol Fashion circuit of SCALE-MAMBA, wire base+j
// carries bit j of the value (LSBFirst), and a byte string is read as a
// big-endian integer, so an AES block's first wire is the least significant
// bit of its last byte. The old AES-non-expanded circuit is MSBFirst. The
// helpers BytesBits and HexBits (and their inverses) take the order;
// Uint64Bits and BitsUint64 are least significant bit first.
//
// The package gates/circuits ships a few published circuits with their bit
// orders and known-answer vectors.
package gates
