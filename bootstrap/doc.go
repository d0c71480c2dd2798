// Package bootstrap runs TFHE gate bootstrapping (CGGI20 Alg. 3: modulus
// switching, blind rotation, sample extraction, key switching) on batches of
// TLWE samples. Engine is the interface every implementation satisfies; CPU
// is the pure-Go engine, which spreads a batch over all cores and serves as
// the correctness oracle of the GPU engine; GPU runs the whole bootstrap on
// an NVIDIA GPU (package kernels: the blind rotation of a batch in one
// launch, DESIGN.md §6); Multi spreads each call over several engines of
// one key, one GPU engine per device of a host (NewGPUs); New picks the GPU
// when one is usable and says why. Thanks to the exact Goldilocks NTT (DESIGN.md §3) every engine and
// every NTT plan gives bit-identical outputs for the same keys and inputs.
//
// References: CGGI20 (see package tfhe); DESIGN.md §2 for the algorithm as
// implemented here.
package bootstrap
