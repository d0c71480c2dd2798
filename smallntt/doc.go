// Package smallntt implements exact number-theoretic transforms over the
// Goldilocks prime p = 2^64 − 2^32 + 1: the field, shift-based small-point
// "matrix" NTTs (n = 4..64) with and without merging preprocessing, the
// decomposed N-point NTT built from them (eq. 9 of Li, Pan, Li, Wang,
// "Parallel Accelerating Number Theoretic Transform for Bootstrapping on a
// Graphics Processing Unit", Mathematics 12(3):458, 2024), and the radix-2
// butterfly baseline. It is the CPU reference for every transform the GPU
// computes.
//
// # Field
//
// Field elements are uint64. Every function documents the range it accepts
// and returns: "canonical" is [0, P), "any" is any uint64 read modulo P.
// Exported functions return canonical values; the transforms accept any
// input. 2 has order 192 (2^96 ≡ −1), which is what turns the roots of unity
// of order dividing 64 into shifts (MulPow2, DESIGN.md §3).
//
// # Transforms
//
// A Plan is one N-point transform (N = 256 … 4096) of one Variant:
//
//   - Matrix, MatrixNoMerge: the paper's method — small transforms with every
//     output computed on its own as a sum of shifted inputs, three 64-bit
//     limbs, one 192-bit reduction per output (small_matrix.go) — joined by
//     stage twiddles;
//   - Butterfly: the textbook radix-2 negacyclic NTT, the paper's baseline;
//   - Hybrid: the decomposition of Matrix with each small transform computed
//     by an unrolled butterfly network whose twiddles are constant shifts
//     (and, on amd64 with AVX2, four columns at a time in assembly; with
//     AVX-512, eight for the stage sizes 8 to 32). It is the fastest on a
//     CPU; DefaultPlan returns the fastest factorisation.
//
// All plans of one size share one NTT-domain layout (bit-reversed order, see
// Plan), so values from different variants and factorisations may be mixed
// and every variant gives bit-identical results. Small exposes the
// small-point transforms themselves.
//
// Plans are immutable and safe for concurrent use; Forward, Inverse,
// ForwardCyclic, InverseCyclic, MulAdd and MulTo allocate nothing (they
// write into a caller's dst, which may alias src). ForwardDigits transforms
// the signed digit polynomials of a gadget decomposition without writing
// the digits out (ForwardDigitsPrefetch also brings memory the caller reads
// next into the cache as it computes), and MulSum is the external
// product's multiply-accumulate over several rows with one reduction per
// output (AVX-512 IFMA where the CPU has it); all allocate nothing.
// Following the Op/OpTo convention, MulInt64 allocates its result and
// MulInt64To writes into dst with a per-goroutine Workspace and allocates
// nothing.
//
// # Exact integer products
//
// MulInt64 computes a negacyclic product of signed integer polynomials
// exactly when max|a|·max|b|·N ≤ (P−1)/2 (DESIGN.md §3) and returns an error
// wrapping ErrBound otherwise.
//
// # Constant time
//
// The client computes with its secret key through this package (the key's
// transform, its products with the masks of its ciphertexts and their
// inverse transforms: tfhe's key generation, encryption and decryption,
// DESIGN.md §2), so what that uses takes no branch and no memory address
// from the values, on amd64, arm64 and 386: the field operations, Forward
// and Inverse of Hybrid plans (every DefaultPlan; the Go kernels and the
// AVX2 and AVX-512 assembly) and MulAdd. Their loops and cases depend on N
// and the plan only. tfhe.TestConstantTimeCode reads the compiled Go code
// and TestAssemblyConstantTime the assembly (MulSum's too). Not read, and
// not on the client's path (the server's data are public): the Matrix and
// Butterfly plans, ForwardDigits, MulSum's Go code, MulTo, MulInt64 (its
// bound check, MaxAbs, branches on the values), Exp, Inv and Pow (they
// loop over the exponent's bits) and MulPow2 (it branches on the shift).
//
// # Generated files and build tags
//
// hybrid_kernels.go (Go), hybrid_amd64.s and hybrid_avx2_amd64.go (AVX2),
// hybrid_avx512_amd64.s and hybrid_avx512_amd64.go (AVX-512) are generated
// by tests in this package; `go generate ./smallntt` rewrites them and
// TestHybridKernelsGenerated / TestAVX2KernelsGenerated /
// TestAVX512KernelsGenerated fail when they are stale. The AVX-512 kernels
// are picked at run time (golang.org/x/sys/cpu) and fall back to AVX2, then
// Go; GODEBUG=cpu.avx512f=off (or cpu.avx2=off) makes a program take the
// fallback on a CPU that has the instructions. Build with -tags purego to leave out all assembly; the results do not
// change (TestAVX2AgainstGeneric, TestAVX512AgainstGeneric).
package smallntt
