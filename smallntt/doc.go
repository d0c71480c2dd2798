// Package smallntt implements exact number-theoretic transforms over the
// Goldilocks prime p = 2^64 − 2^32 + 1: the field, shift-based small-point
// "matrix" NTTs (n = 4..64) with and without merging preprocessing, the
// decomposed N-point NTT built from them (eq. 9 of Li, Pan, Li, Wang,
// "Efficient GPU implementation of NTT via decomposition and small-point
// matrix NTTs", Mathematics 12(3):458, 2024), and the radix-2 butterfly
// baseline. It is the CPU reference for every transform the GPU computes.
package smallntt
