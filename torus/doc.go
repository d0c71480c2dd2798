// Package torus implements the discretised real torus T = R/Z of TFHE as
// 32-bit integers (Torus32, value t/2^32), its encodings, modulus switching,
// sampling of uniform and Gaussian torus elements from a CSPRNG, and
// polynomials of T_N[X] = T[X]/(X^N+1) together with the naive negacyclic
// product used as test oracle for the NTT-based products of package tfhe.
//
// Conventions follow CGGI: a Torus32 t stands for t/2^32 ∈ [0, 1); read as an
// int32 it is the centered representative in [−1/2, 1/2). Addition and
// subtraction wrap modulo 2^32, which is exactly addition on T; the product of
// an integer and a torus element is the wrapping uint32 product.
//
// References:
//   - [CGGI16] I. Chillotti, N. Gama, M. Georgieva, M. Izabachène, "Faster
//     fully homomorphic encryption: bootstrapping in less than 0.1 seconds",
//     ASIACRYPT 2016.
//   - [CGGI20] I. Chillotti, N. Gama, M. Georgieva, M. Izabachène, "TFHE:
//     fast fully homomorphic encryption over the torus", J. Cryptology 33
//     (2020) 34–91. §2 defines T, T_N[X] and the Torus32 discretisation.
//   - [BM58] G. E. P. Box, M. E. Muller, "A note on the generation of random
//     normal deviates", Ann. Math. Statist. 29 (1958) 610–611: the
//     transform Sampler's Gaussian values use, evaluated in constant time
//     (normal.go).
//   - The TFHE library (https://github.com/tfhe/tfhe), whose
//     modSwitchToTorus32 / modSwitchFromTorus32 Encode and ModSwitch follow.
package torus
