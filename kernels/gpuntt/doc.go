// Package gpuntt runs batched negacyclic NTTs over the Goldilocks prime on
// polynomials resident on an NVIDIA GPU, each transform bit for bit the one
// of a smallntt.Plan (same size, variant, factorisation and NTT-domain
// layout) on canonical words, below p, which is what the kernels take, and
// falls back to the smallntt CPU plans when no GPU is usable.
//
// Variants (DESIGN.md §4; Li, Pan, Li, Wang, Mathematics 12(3):458, 2024):
//   - smallntt.Matrix, smallntt.MatrixNoMerge: the decomposed NTT of the
//     paper's eq. (9) with every small transform in the matrix style of its
//     §2.2, one thread per output, shifted terms summed in 192 bits and one
//     reduction per output, with and without merging preprocessing. The
//     kernels merge one level (inputs m and m + f/2: every output sums f/2
//     operands), not the second split of the even outputs by f/4 that
//     smallntt.Matrix makes (and, per DESIGN.md §4, the paper), and compute
//     each term's shift at run time (one kernel for every factorisation).
//   - smallntt.Butterfly: the radix-2 baseline (Cooley–Tukey forward,
//     Gentleman–Sande inverse), one block per polynomial.
//   - smallntt.Hybrid: the same two-stage decomposition with each small
//     transform an in-register radix-2 network whose twiddles are shifts,
//     one warp per polynomial (kernels/ntt_hybrid.cuh); for the shapes of
//     kernels.HybridShapes.
//
// Device (a GPU with goldfhe's kernels loaded), Plan (tables on that GPU)
// and Polys (a device-resident batch) are safe for concurrent use; launches
// on one stream run in order. Transformer wraps either a GPU Plan or the CPU
// plan behind host-memory calls and says which, and why; it takes any
// words, as the CPU plans do, and runs plans without a GPU kernel of their
// own as DefaultPlan of their size.
package gpuntt
