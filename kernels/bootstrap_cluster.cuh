// bootstrap_cluster.cuh: the blind rotation of one sample spread over a
// thread-block cluster of k+1 blocks, one per TRLWE column, each on its own
// SM (Hopper, sm_90; DESIGN.md section 6): the lowest latency per sample.
//
// Block c of a cluster owns column c of the accumulator and the l gadget
// digit rows taken from it, so that a CMux step needs only one exchange:
//
//   A  (local) the l digits of X^a * ACC_c - ACC_c + offset through the
//      three stages of the hybrid plan (F1, F2, F3), T threads per row, as
//      the wide kernel (bootstrap_fused.cuh) does;
//   -- cluster barrier: every block's rows are ready;
//   B  output column c at every NTT-domain position: the sum over all
//      (k+1)*l rows, the other blocks' rows read from their shared memory
//      (distributed shared memory), times BK_a[row][c];
//   -- cluster barrier: nobody reads a block's rows any more;
//   C  (local) the inverse transform of column c, added into ACC_c.
//
// Same arithmetic as the other kernels, so the same bits. Shared memory per
// block: l + 1 padded polynomials (the rows, the output column) and ACC_c,
// and for the grouped kernels (G = 2 or 3, bootstrap_step.cuh and bsw_run)
// the psiPow table: one step per group of G key bits, A on ACC_c unrotated,
// B the sum of the 2^G - 1 terms' external products, each with its
// X^(e_u) - 1, still one exchange per step, so 1/G as many per key bit.
#ifndef GOLDFHE_BOOTSTRAP_CLUSTER_CUH
#define GOLDFHE_BOOTSTRAP_CLUSTER_CUH

#include "bootstrap_fused.cuh"
#include "bootstrap_step.cuh"

#include <cooperative_groups.h>

// Clusters exist from sm_90 on: for older targets the kernels below are
// left out of the fatbin, and the Go side finds none (an engine then runs
// the wide kernel).
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
#define GOLDFHE_HAVE_CLUSTERS 1
#endif

#ifdef GOLDFHE_HAVE_CLUSTERS

__host__ __device__ constexpr int bsc_shared(int f1, int f2, int f3, int l, int g = 1) {
    return (l + 1) * (f1 * f2 * f3 + f1 * f2) * 8 + f1 * f2 * f3 * 4 +
           (g >= 2 ? bsg_psi_words(f1 * f2 * f3) * 8 : 0);
}

// bsc_run: samples blockIdx.x / K1, + gridDim.x / K1, ... (gridDim.x a
// multiple of K1, clusters of K1 consecutive blocks); tables as for the
// wide kernel (psiPow after T'_2 for G = 2, 3). blockDim.x = TP * L.
template <int F1, int F2, int F3, int K1, int L, int TP, int G = 1>
__device__ __forceinline__ void bsc_run(const uint32_t* __restrict__ in, const uint64_t* __restrict__ bk,
                                        const uint64_t* __restrict__ tables, uint32_t* __restrict__ ext,
                                        uint32_t n, uint32_t beta, uint32_t offset, uint32_t mu, uint32_t count) {
    namespace cg = cooperative_groups;
    static_assert(G >= 1 && G <= 3, "grouping factor 1, 2 or 3");
    constexpr int N = F1 * F2 * F3, LOGN = hyb_lg<N>::v, ROWS = K1 * L;
    constexpr int NT = bsg_terms(G);  // exponents per step (G >= 2: TRGSW samples per group)
    constexpr int POLY = N + N / F3;
    constexpr int THREADS = TP * L;
    constexpr int S2 = F2 * F3;
    const uint64_t* __restrict__ tw1 = tables;
    const uint64_t* __restrict__ twInv1 = tables + N;
    const uint64_t* __restrict__ tw2 = tables + 2 * N;
    const uint64_t* __restrict__ twInv2 = tables + 2 * N + S2;
    extern __shared__ uint64_t bsc_sm[];
    uint64_t* S = bsc_sm;             // L rows
    uint64_t* O = bsc_sm + L * POLY;  // the output column
    uint32_t* acc = reinterpret_cast<uint32_t*>(bsc_sm + (L + 1) * POLY);  // ACC_c
    cg::cluster_group cluster = cg::this_cluster();
    const int col = (int)cluster.block_rank();
    const uint64_t* rows[K1];  // every block's rows, this one's included
#pragma unroll
    for (int q = 0; q < K1; q++) rows[q] = cluster.map_shared_rank(S, q);
    const uint32_t row = threadIdx.x / TP, tid = threadIdx.x % TP;
    const bool small = 32 / L <= 15 || beta <= 15;  // bsw_fwd1_digits
    // G = 2, 3: psiPow in shared memory after ACC_c (N 32-bit words), at
    // bsc_sm + (L + 1) * POLY + N / 2; published by the barrier below.
    if constexpr (G >= 2) {
        bsg_stage_psi<LOGN>(bsc_sm + (L + 1) * POLY + N / 2, tables + 2 * N + 2 * S2, THREADS);
    }

    for (uint32_t s = blockIdx.x / K1; s < count; s += gridDim.x / K1) {
        const uint32_t* ct = in + (uint64_t)s * (n + 1);
        bsf_init_column<N>(acc, col == K1 - 1, bs_modswitch(ct[n], LOGN + 1), mu, THREADS);
        __syncthreads();

        for (uint32_t iter = 0; iter < n; iter += G) {
            if (threadIdx.x == 0) bs_prefetch_next_key<G, N, K1, ROWS>(bk, iter, n, blockIdx.x, gridDim.x);
            // e as in bsw_run: the rotation amount at e[0] (G = 1), or the
            // group's exponents (G = 2, 3).
            uint32_t e[NT];
            if (!bs_step_exponents<G, LOGN>(e, ct, iter, n)) {
                continue;  // the same for the whole cluster
            }
            // A: digit `row` of this column, three stages.
            uint64_t* W = S + row * POLY;
            const uint32_t shift = 32 - (row + 1) * beta;
            for (uint32_t t = tid; t < N / F1; t += TP) bsw_fwd1_digits<F1, F2, F3, G == 1>(W, acc, t, e[0], offset, shift, beta, small, tw1);
            __syncthreads();
            for (uint32_t t = tid; t < F1 * F3; t += TP) bsw_fwd2<F1, F2, F3>(W, t, tw2);
            __syncthreads();
            for (uint32_t t = tid; t < N / F3; t += TP) bsw_fwd3<F3>(W, t);
            cluster.sync();
            // B: output column `col` from every block's rows.
            if constexpr (G == 1) {
                const uint64_t* key = bk + (uint64_t)iter * (ROWS * K1 * N) + col * N;
                for (uint32_t pos = threadIdx.x; pos < N; pos += THREADS) {
                    const uint32_t off = bsw_pad<F3>(pos);
                    uint64_t out[1];
                    // Row r of the key's rows for this column is at key +
                    // r * K1 * N: bsf_mac_at's layout with one column.
                    bsf_mac_at<N * K1, 1, ROWS>(out, [&](int r) { return rows[r / L] + (r % L) * POLY; }, off, key, pos);
                    O[off] = out[0];
                }
            } else {
                // Group iter / G (TRGSW samples NT * (iter / G) .. + NT - 1),
                // column col of each: bsf_mac_group_at with NC = 1, key
                // offset to it.
                const uint64_t* key = bk + (uint64_t)(iter / G) * (NT * ROWS * K1 * N) + col * N;
                if constexpr (G == 3) {
                    // The seven exponents again, from ct (three cached
                    // loads per thread and step), so that they need not be
                    // held in registers through the forward stages, where
                    // the _g2 kernels already use about all that the launch
                    // bounds allow (kernels/NOTES.md, session 4).
                    bs_step_exponents<G, LOGN>(e, ct, iter, n);
                }
                const uint64_t* psiPow = bsc_sm + (L + 1) * POLY + N / 2;
                for (uint32_t pos = threadIdx.x; pos < N; pos += THREADS) {
                    const uint32_t off = bsw_pad<F3>(pos);
                    uint64_t out[1];
                    bsf_mac_group_at<N, K1, 1, ROWS>(out, [&](int r) { return rows[r / L] + (r % L) * POLY; }, off, key, e,
                                                     psiPow, pos);
                    O[off] = out[0];
                }
            }
            cluster.sync();
            // C: the inverse of the output column over the whole block, stages
            // 3, 2, 1, and the centred add into ACC_c.
            for (uint32_t t = threadIdx.x; t < N / F3; t += THREADS) bsw_inv3<F3>(O, t);
            __syncthreads();
            for (uint32_t t = threadIdx.x; t < F1 * F3; t += THREADS) bsw_inv2<F1, F2, F3>(O, t, twInv2);
            __syncthreads();
            for (uint32_t t = threadIdx.x; t < N / F1; t += THREADS) bsw_inv1_add<F1, F2, F3>(O, acc, t, twInv1);
            __syncthreads();
        }

        bsf_extract_column<N>(acc, ext + (uint64_t)s * ((K1 - 1) * N + 1), col, K1 - 1, THREADS);
        __syncthreads();  // acc is rewritten for the next sample
    }
}

// One kernel per supported (F1 x F2 x F3, k, l, T threads per digit row);
// clusters of k + 1 blocks of T * l threads, fixed at compile time so that
// a plain launch (grid a multiple of k + 1) forms them.
#define BSC_DEFINE(F1, F2, F3, K, L, TP, MINB)                                                        \
    extern "C" __global__ void __cluster_dims__(K + 1, 1, 1) __launch_bounds__(TP * L, MINB)          \
        goldfhe_bs_cluster_##F1##x##F2##x##F3##_k##K##_l##L##_t##TP(                                  \
            const uint32_t* in, const uint64_t* bk, const uint64_t* tables, uint32_t* ext, uint32_t n, \
            uint32_t beta, uint32_t offset, uint32_t mu, uint32_t count) {                             \
        bsc_run<F1, F2, F3, K + 1, L, TP>(in, bk, tables, ext, n, beta, offset, mu, count);           \
    }

BSC_DEFINE(8, 8, 16, 1, 3, 128, 2) // TFHELib128: clusters of 2 blocks of 384 threads
BSC_DEFINE(8, 8, 16, 1, 2, 128, 2) // CuFHE80: 2 x 256 threads
BSC_DEFINE(8, 8, 8, 3, 2, 64, 4)   // TFHErsDefault: 4 x 128 threads
// N/8 threads per digit row: on an H200 one TFHELib128 sample took 6.8 ms
// with them and 8.0 ms with N/16 (kernels BenchmarkBlindRotate).

// The grouped kernels (G = 2 and 3, suffix _g2, _g3), same clusters and
// launch bounds; psiPow adds 16,512 B (N = 1024) or 8,320 B (N = 512) of
// shared memory per block (TFHELib128: 2 x 55,424 B per SM); G = 3 takes
// seven terms per step.
#define BSC_DEFINE_G(G, F1, F2, F3, K, L, TP, MINB)                                                   \
    extern "C" __global__ void __cluster_dims__(K + 1, 1, 1) __launch_bounds__(TP * L, MINB)          \
        goldfhe_bs_cluster_##F1##x##F2##x##F3##_k##K##_l##L##_t##TP##_g##G(                           \
            const uint32_t* in, const uint64_t* bk, const uint64_t* tables, uint32_t* ext, uint32_t n, \
            uint32_t beta, uint32_t offset, uint32_t mu, uint32_t count) {                             \
        bsc_run<F1, F2, F3, K + 1, L, TP, G>(in, bk, tables, ext, n, beta, offset, mu, count);        \
    }
#define BSC_DEFINE_GROUPED(F1, F2, F3, K, L, TP, MINB) \
    BSC_DEFINE_G(2, F1, F2, F3, K, L, TP, MINB)        \
    BSC_DEFINE_G(3, F1, F2, F3, K, L, TP, MINB)

BSC_DEFINE_GROUPED(8, 8, 16, 1, 3, 128, 2)
BSC_DEFINE_GROUPED(8, 8, 16, 1, 2, 128, 2)
BSC_DEFINE_GROUPED(8, 8, 8, 3, 2, 64, 4)

#endif // GOLDFHE_HAVE_CLUSTERS

#endif // GOLDFHE_BOOTSTRAP_CLUSTER_CUH
