// Package tfhe implements the TFHE scheme of Chillotti, Gama, Georgieva and
// Izabachène over the 32-bit discretised torus: parameter sets, secret and
// cloud keys, TLWE/TRLWE/TRGSW encryption, the signed gadget decomposition,
// the external product and CMux computed exactly through the Goldilocks NTT
// of package smallntt, blind rotation, sample extraction and key switching.
// Package bootstrap assembles these into gate-bootstrapping engines.
// Package gates' doc ("Usage") walks through the whole workflow: keys,
// encryption, an engine, gates and circuits, decryption.
//
// Notation follows CGGI20 and DESIGN.md §2: n is the TLWE dimension, N the
// polynomial degree, k the TRLWE dimension, l and Bg = 2^β the gadget of the
// bootstrapping key, t and basebit the key-switching decomposition.
//
// Exactness. Polynomial products Σ_rows digit·row are computed as integer
// products mod p = 2^64 − 2^32 + 1 whose coefficients are bounded by
// (k+1)·l·N·(Bg/2)·2^31 < p/2 (NewParams checks it), mapped back to signed
// integers and reduced mod 2^32. The result is therefore bit-identical to the
// naive polynomial product (ExternalProductNaiveTo), whatever NTT plan is used.
//
// Grouped bootstrapping keys (WithGrouping, grouped.go) take two or three
// key bits per blind-rotation step: a half or a third of the transforms per
// bit, for a 1.5× or 7/3× key and more noise (NoiseEstimateGrouped).
//
// Compressed cloud keys (CompressedCloudKey, compressed.go) are what a
// client sends: every sample's body and a public seed of its masks (the
// seeded-mask form of TFHE-rs's compressed server keys), about a fifth of
// the whole key for TFHELib128; the server expands them once.
//
// References:
//   - [CGGI16] I. Chillotti, N. Gama, M. Georgieva, M. Izabachène, "Faster
//     fully homomorphic encryption: bootstrapping in less than 0.1 seconds",
//     ASIACRYPT 2016.
//   - [CGGI20] I. Chillotti, N. Gama, M. Georgieva, M. Izabachène, "TFHE:
//     fast fully homomorphic encryption over the torus", J. Cryptology 33
//     (2020) 34–91: Def. 3.1 (TLWE/TRLWE), §3.2 (TGSW, gadget decomposition,
//     Def. 3.12), Thm. 3.14 and Alg. 3 (external product, CMux, blind rotation,
//     gate bootstrapping), Alg. 1–2 (key switching), Thm 4.3 (noise).
//   - The TFHE library, https://github.com/tfhe/tfhe (parameter set
//     TFHELib128, table-driven key switching).
//   - TFHE-rs, https://github.com/zama-ai/tfhe-rs (TFHErsDefault).
//   - cuFHE, https://github.com/vernamlab/cuFHE (CuFHE80).
//   - L. Li, Y. Pan, J. Li, Y. Wang, Mathematics 12(3):458, 2024 (the NTT).
//   - T. Zhou, X. Yang, L. Liu, W. Zhang, N. Li, "Faster bootstrapping with
//     multiple addends", IEEE Access 6 (2018); F. Bourse, M. Minelli, M.
//     Minihold, P. Paillier, "Fast homomorphic evaluation of deep
//     discretized neural networks", CRYPTO 2018 (grouped keys).
package tfhe
