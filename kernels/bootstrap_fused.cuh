// bootstrap_fused.cuh: the whole blind rotation of a TLWE sample in one
// kernel (CGGI20 Alg. 3; DESIGN.md sections 2 and 6): one thread block owns
// one sample from modulus switching to sample extraction, and its
// accumulator never leaves shared memory. Per CMux step the block does
//
//   A  one warp per TRGSW row r = c*l + i: the rotated difference
//      X^a * ACC_c - ACC_c + offset at N positions, its digit i (the same
//      integers goldfhe_bs_rotate_decompose writes) fed straight into the
//      registers of the first stage of the hybrid negacyclic NTT
//      (ntt_hybrid.cuh), the second stage in the warp's shared polynomial;
//   B  all threads: the NTT-domain multiply-accumulate of the rows against
//      BK_a (goldfhe_bs_mac), each position written back in place over the
//      first k+1 rows;
//   C  one warp per column c: the inverse NTT and ACC_c += its centred
//      value (goldfhe_bs_add_centered),
//
// separated by block barriers. A step whose rotation amount is 0 leaves ACC
// unchanged (all its digits are 0) and is skipped, as the CPU skips it. The
// arithmetic is that of the unfused kernels and of package tfhe, so the
// outputs are bit-identical; what changes is the traffic: the only global
// reads inside the loop are BK_a (reused from L2 by the blocks working on
// the same step) and the twiddle tables, and nothing is written until the
// extracted sample.
//
// Shared memory per block: (k+1)*l polynomials in the hybrid kernel's
// padded layout (F1 rows of F2 + 1 words; position p of the NTT-domain
// order at PITCH * (p / F2) + p % F2), then the accumulator, (k+1)*N
// 32-bit words: bsf_shared(F1, F2, K1, L) bytes.
#ifndef GOLDFHE_BOOTSTRAP_FUSED_CUH
#define GOLDFHE_BOOTSTRAP_FUSED_CUH

#include "bootstrap_step.cuh"

__host__ __device__ constexpr int bsf_shared(int f1, int f2, int k1, int l) {
    return k1 * l * f1 * (f2 + 1) * 8 + k1 * f1 * f2 * 4;
}

// bsf_run: samples blockIdx.x, blockIdx.x + gridDim.x, ... of in (dimension
// n, n + 1 words each) to ext (dimension k*N, k*N + 1 words each). bk is
// the NTT-domain bootstrapping key (n x K1*L x K1 x N), tw and twInv the
// hybrid plan's stage-1 tables T_1 and T'_1. blockDim.x = 32 * K1 * L.
template <int F1, int F2, int K1, int L>
__device__ __forceinline__ void bsf_run(const uint32_t* __restrict__ in, const uint64_t* __restrict__ bk,
                                        const uint64_t* __restrict__ tw, const uint64_t* __restrict__ twInv,
                                        uint32_t* __restrict__ ext, uint32_t n, uint32_t beta, uint32_t offset,
                                        uint32_t mu, uint32_t count) {
    constexpr int N = F1 * F2, LOGN = hyb_lg<N>::v, PITCH = F2 + 1, POLY = F1 * PITCH, ROWS = K1 * L;
    constexpr int THREADS = 32 * ROWS;
    extern __shared__ uint64_t bsf_sm[];
    uint64_t* S = bsf_sm;                                   // ROWS padded polynomials
    uint32_t* acc = reinterpret_cast<uint32_t*>(bsf_sm + ROWS * POLY); // K1 x N
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const uint64_t mask = (1ull << beta) - 1;               // beta <= 32
    const int64_t half = (int64_t)1 << (beta - 1);

    for (uint32_t s = blockIdx.x; s < count; s += gridDim.x) {
        const uint32_t* ct = in + (uint64_t)s * (n + 1);
        // ACC = (0, ..., 0, X^-bbar * mu * (1 + X + ... + X^(N-1))).
        bsf_init_acc<N, K1>(acc, bs_modswitch(ct[n], LOGN + 1), mu, THREADS);
        __syncthreads();

        for (uint32_t iter = 0; iter < n; iter++) {
            const uint32_t a = bs_modswitch(ct[iter], LOGN + 1);
            if (a == 0) {
                continue;  // the same for the whole block
            }
            // A: row `warp` = digit di of column c, forward NTT.
            {
                const int c = warp / L, di = warp % L;
                const uint32_t* p = acc + c * N;
                const uint32_t shift = 32 - (di + 1) * beta;
                uint64_t* W = S + warp * POLY;
#pragma unroll
                for (int it = 0; it < (F2 + 31) / 32; it++) {
                    const int col = lane + 32 * it;
                    if (col >= F2) break;
                    uint64_t r[F1];
#pragma unroll
                    for (int i = 0; i < F1; i++) r[i] = bsf_digit<N>(p, F2 * i + col, a, offset, shift, mask, half);
                    hyb_ct_lazy<F1, true>(r);  // lz_mul takes lazy operands
#pragma unroll
                    for (int j = 0; j < F1; j++) W[PITCH * j + col] = lz_mul(r[j], __ldg(tw + F2 * j + col));
                }
                __syncwarp();
                hyb_rows<F1, F2, false>(W, lane);
            }
            __syncthreads();
            // B: out_c = sum_r row_r * BK_a[r][c], in place over rows 0..K1-1
            // (each position read and written by one thread).
            {
                const uint64_t* key = bk + (uint64_t)iter * (ROWS * K1 * N);
                for (int pos = threadIdx.x; pos < N; pos += THREADS) {
                    const int off = PITCH * (pos / F2) + pos % F2;
                    uint64_t out[K1];
                    bsf_mac_at<N, K1, ROWS>(out, [&](int r) { return S + r * POLY; }, off, key, pos);
#pragma unroll
                    for (int c = 0; c < K1; c++) S[c * POLY + off] = out[c];
                }
            }
            __syncthreads();
            // C: column `warp` back to coefficients, added into ACC.
            if (warp < K1) {
                uint64_t* W = S + warp * POLY;
                uint32_t* p = acc + warp * N;
                hyb_rows<F1, F2, true>(W, lane);
                __syncwarp();
#pragma unroll
                for (int it = 0; it < (F2 + 31) / 32; it++) {
                    const int col = lane + 32 * it;
                    if (col >= F2) break;
                    uint64_t r[F1];
#pragma unroll
                    for (int j = 0; j < F1; j++) r[j] = lz_mul(W[PITCH * j + col], __ldg(twInv + F2 * j + col));
                    hyb_gs<F1, true>(r);
#pragma unroll
                    for (int i = 0; i < F1; i++) bsf_add_centered(p + F2 * i + col, r[i]);  // hyb_gs: canonical
                }
            }
            __syncthreads();
        }

        // Sample extraction of coefficient 0 (goldfhe_bs_extract).
        bsf_extract<N, K1>(acc, ext + (uint64_t)s * ((K1 - 1) * N + 1), THREADS);
        __syncthreads();  // acc is rewritten for the next sample
    }
}

// One kernel per supported (N = F1 x F2, k + 1, l): the named parameter sets
// (TFHELib128: 32x32, k = 1, l = 3; CuFHE80: 32x32, k = 1, l = 2;
// TFHErsDefault: 16x32, k = 3, l = 2). Other shapes use the unfused kernels.
// MINB is the blocks per SM that the shared memory allows (228 KiB per SM
// on sm_90, 1 KiB of it reserved per block; the Go side asks for the
// largest shared-memory carveout): the register cap that lets that many
// blocks run (ncu on an H200: without it the kernel ran 2 blocks of 6
// warps per SM, latency-bound at 27% of issue slots).
#define BSF_DEFINE(F1, F2, K, L, MINB)                                                                \
    extern "C" __global__ void __launch_bounds__(32 * (K + 1) * L, MINB)                              \
        goldfhe_bs_fused_##F1##x##F2##_k##K##_l##L(const uint32_t* in, const uint64_t* bk,             \
                                                    const uint64_t* tw, const uint64_t* twInv,         \
                                                    uint32_t* ext, uint32_t n, uint32_t beta,          \
                                                    uint32_t offset, uint32_t mu, uint32_t count) {    \
        bsf_run<F1, F2, K + 1, L>(in, bk, tw, twInv, ext, n, beta, offset, mu, count);                \
    }

BSF_DEFINE(32, 32, 1, 3, 3) // 58,880 B of shared memory per block
BSF_DEFINE(32, 32, 1, 2, 4) // 41,984 B
BSF_DEFINE(16, 32, 3, 2, 2) // 41,984 B, 8 warps

// ---------------------------------------------------------------------------
// The wide variant: the same blind rotation with a whole SM's worth of
// threads on one sample, for small batches, where one sample per block of
// 6 warps (above) leaves the SM waiting on its few warps' latencies. Each
// polynomial is transformed by N/8 threads through the three stages of a
// decomposed plan with factors (F1, F2, F3) (smallntt.Plan doc: stage 1
// twisted, columns c < N/F1 of the whole array; stage 2 cyclic, F1 blocks
// of F2*F3 positions, columns c < F3; stage 3 cyclic on F3 consecutive
// positions, no twiddle), each small transform in one thread's registers
// (ntt_hybrid.cuh's networks), block barriers between stages. The array sits
// in shared memory padded by one word after every F3 words (position p at
// p + p / F3), which keeps every stage's accesses free of bank conflicts.
//
// Tables (one buffer): T_1 (N words), T'_1 (N), T_2 (F2*F3), T'_2 (F2*F3):
// smallntt.Plan.StageTables()[0] and [1] of the Hybrid plan (F1, F2, F3);
// for G = 2 and 3, then psiPow (2N words: psi^i, psi = smallntt.Psi(N)).
// Shared memory: K1*L padded polynomials, then the K1 x N accumulator, and
// for G = 2 and 3 psiPow (bsg_pad layout). The twiddle products use lz_mul
// (ntt_lazy.cuh), which takes the lazy outputs of hyb_ct_lazy; what the
// multiply-accumulate reads (stage 3) and what hyb_gs reads are canonical,
// as they require.
//
// G is the grouping factor (bootstrap_step.cuh): 1, one CMux step per key
// bit (the key n TRGSW samples); 2, one grouped step per pair of key bits
// (the key 3*(n/2) + n%2 TRGSW samples, three per pair), whose A phase
// decomposes ACC unrotated and whose B phase sums three external products
// (bsf_mac_group_at); C is the same. 3, one grouped step per three key bits
// (seven TRGSW samples per group, 2^r - 1 for a last group of r = n mod 3
// bits), seven external products in B. G = 1 compiles to the code it was
// before G existed (every grouped difference is an `if constexpr`).

__host__ __device__ constexpr int bsw_shared(int f1, int f2, int f3, int k1, int l, int g = 1) {
    return k1 * l * (f1 * f2 * f3 + f1 * f2) * 8 + k1 * f1 * f2 * f3 * 4 +
           (g >= 2 ? bsg_psi_words(f1 * f2 * f3) * 8 : 0);
}


// bsw_bar_sync: named barrier id (1 to 15; 0 is __syncthreads) of COUNT
// threads, whole warps. The t64 kernels' are 1 + row (the TP threads of a
// row), ROWS + 1 + c (column c's inverse stages 2 and 1) and 15 (the
// threads of inverse stages 3 and 2). The host model
// (testdata/blindrotate_model.cpp) gives each block a std::barrier per id.
template <int COUNT>
__device__ __forceinline__ void bsw_bar_sync(uint32_t id) {
#ifdef __CUDA_ARCH__
    asm volatile("bar.sync %0, %1;" ::"r"(id), "n"(COUNT) : "memory");
#elif !defined(__CUDACC__)
    hm_bar_sync(id, COUNT);
#endif
}

// bsw_row_sync: the barrier between two forward stages that read only
// their own row: named barrier 1 + row of the row's TP threads (NAMED), the
// row's one warp (TP = 32), else the whole block.
template <int TP, bool NAMED>
__device__ __forceinline__ void bsw_row_sync(uint32_t row) {
    if constexpr (NAMED) {
        bsw_bar_sync<TP>(1 + row);
    } else if constexpr (TP == 32) {
        __syncwarp();
    } else {
        __syncthreads();
    }
}

// bsw_t64_fwd3: the stage-3 transform of thread tid < 64 of a row in the
// 8 x 8 x 16 plan on 64 threads a row, among those its own warp's stage 2
// wrote. Stage 2's thread tid takes transforms tid and tid + 64, of blocks
// tid / 16 and tid / 16 + 4 (F2 * F3 = 128 positions each), so warp w
// writes blocks 2w, 2w + 1, 2w + 4 and 2w + 5, whose stage-3 transforms
// (eight a block) are 16w .. 16w + 15 and 16w + 32 .. 16w + 47.
__device__ __forceinline__ uint32_t bsw_t64_fwd3(uint32_t tid) {
    const uint32_t lane = tid % 32;
    return 16 * (tid / 32) + (lane & 15) + 32 * (lane >> 4);
}

// bsw_mem: where the wide kernels' data live. tables (global): forward
// and inverse stage-1 twiddles (N words each), forward and inverse stage-2
// twiddles (F2 F3 each), then psiPow (2N words, grouped keys); shared
// memory: ROWS digit polynomials of N + N/F3 words (bsw_pad), ACC (K1 N
// 32-bit words), then psiPow for grouped keys, staged there by the kernel.
extern __shared__ uint64_t bsw_sm[];
template <int F1, int F2, int F3, int K1, int L>
struct bsw_mem {
    static constexpr int N = F1 * F2 * F3, S2 = F2 * F3, POLY = N + N / F3;
    const uint64_t* __restrict__ tw1;
    const uint64_t* __restrict__ twInv1;
    const uint64_t* __restrict__ tw2;
    const uint64_t* __restrict__ twInv2;
    const uint64_t* __restrict__ psiSrc;
    uint64_t* S;
    uint32_t* acc;
    uint64_t* psiPow;
    __device__ __forceinline__ explicit bsw_mem(const uint64_t* __restrict__ tables)
        : tw1(tables), twInv1(tables + N), tw2(tables + 2 * N), twInv2(tables + 2 * N + S2),
          psiSrc(tables + 2 * N + 2 * S2), S(bsw_sm), acc(reinterpret_cast<uint32_t*>(bsw_sm + K1 * L * POLY)),
          psiPow(bsw_sm + K1 * L * POLY + K1 * N / 2) {}
};

template <int F1, int F2, int F3, int K1, int L, int TP, int G = 1>
__device__ __forceinline__ void bsw_run(const uint32_t* __restrict__ in, const uint64_t* __restrict__ bk,
                                        const uint64_t* __restrict__ tables, uint32_t* __restrict__ ext,
                                        uint32_t n, uint32_t beta, uint32_t offset, uint32_t mu, uint32_t count) {
    static_assert(G >= 1 && G <= 3, "grouping factor 1, 2 or 3");
    constexpr int N = F1 * F2 * F3, LOGN = hyb_lg<N>::v, ROWS = K1 * L;
    constexpr int NT = bsg_terms(G);           // exponents per step (G >= 2: TRGSW samples per group)
    constexpr int POLY = N + N / F3;           // padded words per polynomial
    constexpr int THREADS = TP * ROWS;         // TP threads per polynomial
    // bsw_t64_fwd3's plan, but for CuFHE80's plain kernel (l = 2, G = 1),
    // which lost with it (H100, engine at 16,384 gates 39,646 / 39,884 ->
    // 38,662 / 38,772 gates/s; its grouped kernels gained: by 3 52,473 /
    // 52,665 -> 60,413 / 60,827, kernels/NOTES.md session 16).
    constexpr bool BSW_T64 = TP == 64 && F1 == 8 && F2 == 8 && F3 == 16 && !(G == 1 && L == 2);
    static_assert(!BSW_T64 || ROWS < 15, "a named barrier per row: ids 1 to 14");
    // The inverse stages behind named barriers (bsw_bar_sync) where they
    // leave warps idle: TFHELib128's t64 kernels (K1 F1 F3 = 256 of 384
    // threads), one transform per thread in stages 2 and 1 (N / F1 = F1 F3
    // in the 8 x 8 x 16 plan), stage 3 (N / F3 = 64 a column) on the same
    // threads, a barrier per column after the row ids.
    constexpr bool BSW_CSYNC = BSW_T64 && THREADS > K1 * (F1 * F3);
    static_assert(!BSW_CSYNC || ROWS + K1 < 15, "named barriers 1 + row and ROWS + 1 + c below 15");
    // Forward stage 1's loop unrolled, so that a thread's stage-1
    // transforms interleave (H200, engine at 16,384 gates: TFHELib128
    // grouped by 2 35,843 / 35,820 -> 35,949 / 35,951 gates/s,
    // TFHErsDefault plain 22,669 / 22,672 -> 22,816 / 22,804), but not in
    // CuFHE80's kernels (l = 2): plain 39,526 / 39,550 -> 38,738 / 38,712.
    // Both forward loops unrolled lost (t64_g2 at 3,960 samples 106.9 ->
    // 108.6 ms; kernels/NOTES.md session 17).
    constexpr int FWD1_UNROLL = L == 2 && F3 == 16 ? 1 : N / F1 / TP;
    const bsw_mem<F1, F2, F3, K1, L> mem(tables);
    uint64_t* S = mem.S;
    uint32_t* acc = mem.acc;
    const uint32_t row = threadIdx.x / TP, tid = threadIdx.x % TP;  // unsigned: cheap / and %
    // Digits of beta <= 15 bits (always, for L >= 3: l * beta <= 32,
    // tfhe.NewGadget) take the exact first level (hyb_ct_digits).
    const bool small = 32 / L <= 15 || beta <= 15;
    // G = 2, 3: psiPow in shared memory after acc (bsw_mem); published by
    // the barrier below.
    if constexpr (G >= 2) {
        bsg_stage_psi<LOGN>(mem.psiPow, mem.psiSrc, THREADS);
    }

    for (uint32_t s = blockIdx.x; s < count; s += gridDim.x) {
        const uint32_t* ct = in + (uint64_t)s * (n + 1);
        bsf_init_acc<N, K1>(acc, bs_modswitch(ct[n], LOGN + 1), mu, THREADS);
        __syncthreads();

        for (uint32_t iter = 0; iter < n; iter += G) {
            // The N/8-thread kernels (one block per SM: the engine runs them
            // for at most a sample per SM) ask L2 for the next step's key;
            // the mere presence of that code slows the N/16-thread kernels,
            // two blocks per SM, at large batches (bs_prefetch_next_key).
            if constexpr (TP * 8 == N) {
                if (threadIdx.x == 0) bs_prefetch_next_key<G, N, K1, ROWS>(bk, iter, n, blockIdx.x, gridDim.x);
            }
            // G = 1: e[0] is the rotation amount; G = 2, 3: e holds the
            // exponents of the group's terms (e[0] then goes to
            // bsw_fwd1_digits unused).
            uint32_t e[NT];
            if (!bs_step_exponents<G, LOGN>(e, ct, iter, n)) {
                continue;  // the same for the whole block
            }
            uint64_t* W = S + row * POLY;
            // A: digit (row % L) of column (row / L), three stages.
            const uint32_t* p = acc + (row / L) * N;
            const uint32_t shift = 32 - (row % L + 1) * beta;
#pragma unroll(FWD1_UNROLL)
            for (uint32_t t = tid; t < N / F1; t += TP) bsw_fwd1_digits<F1, F2, F3, G == 1>(W, p, t, e[0], offset, shift, beta, small, mem.tw1);
            // Stage 2 reads only its own row's polynomial; in the 8 x 8 x 16
            // plan on 64 threads a row, stage 3 reads only what its own
            // warp's stage 2 wrote (bsw_t64_fwd3). Those rows meet at a
            // named barrier of their 64 threads and the warps at
            // __syncwarp, not the whole block at two barriers (H100,
            // TFHELib128, t64_g2 at 3,960 samples 108.4 -> 107.4 ms, the
            // engine grouped by 2 1% faster; kernels/NOTES.md session 16).
            bsw_row_sync<TP, BSW_T64>(row);
            for (uint32_t t = tid; t < F1 * F3; t += TP) bsw_fwd2<F1, F2, F3>(W, t, mem.tw2);
            if constexpr (BSW_T64) {
                __syncwarp();
                bsw_fwd3<F3>(W, bsw_t64_fwd3(tid));
            } else {
                // With 32 threads a row (TFHErsDefault's t32 kernels) the
                // row is one warp, and stage 3 too reads only its row (H200,
                // engine at 16,384 gates, plain 22,314 / 22,327 -> 22,644 /
                // 22,670 gates/s, grouped by 2 30,193 / 30,210 -> 30,348 /
                // 30,381; kernels/NOTES.md session 16).
                bsw_row_sync<TP, false>(row);
                for (uint32_t t = tid; t < N / F3; t += TP) bsw_fwd3<F3>(W, t);
            }
            __syncthreads();
            // B: the multiply-accumulate, in place over rows 0..K1-1 (each
            // position read and written by one thread).
            if constexpr (G == 1) {
                const uint64_t* key = bk + (uint64_t)iter * (ROWS * K1 * N);
                for (uint32_t pos = threadIdx.x; pos < N; pos += THREADS) {
                    const uint32_t off = bsw_pad<F3>(pos);
                    uint64_t out[K1];
                    bsf_mac_at<N, K1, ROWS>(out, [&](int r) { return S + r * POLY; }, off, key, pos);
#pragma unroll
                    for (int c = 0; c < K1; c++) S[c * POLY + off] = out[c];
                }
            } else {
                // Group iter / G: TRGSW samples NT * (iter / G) .. + NT - 1
                // (NT = 2^G - 1; fewer for a last group of n % G bits).
                const uint64_t* key = bk + (uint64_t)(iter / G) * (NT * ROWS * K1 * N);
                if constexpr (G == 3) {
                    // The seven exponents again, from ct (three cached
                    // loads per thread and step), so that they need not be
                    // held in registers through the forward stages, where
                    // the _g2 kernels already use about all that the launch
                    // bounds allow (kernels/NOTES.md, session 4).
                    bs_step_exponents<G, LOGN>(e, ct, iter, n);
                }
                const uint64_t* psiPow = mem.psiPow;
                if constexpr (G == 3 && TP * 8 == N && K1 <= 2) {
                    // The N/8-thread kernels of two columns (one block per
                    // SM, no other block's work to hide a term's key loads):
                    // one (position, column) unit per thread, the next
                    // term's key loaded ahead (bsf_mac_group_pipe). The K1
                    // units of a position sit on neighbouring lanes of one
                    // warp, which all read the position's rows before any of
                    // them writes its column in place (the __syncwarp). With
                    // four columns (k = 3), each of a position's four units
                    // reading its eight rows, the per-term branches below are
                    // faster (H200, TFHErsDefault grouped by 3, engine: 132
                    // gates 6.84 / 6.81 -> 5.47 / 5.52 ms, 66 gates 6.56 /
                    // 6.55 -> 5.15 / 5.13; kernels/NOTES.md session 15).
                    for (uint32_t q = threadIdx.x; q < K1 * N; q += THREADS) {
                        const uint32_t pos = q / K1, c = q % K1, off = bsw_pad<F3>(pos);
                        const uint64_t v = bsf_mac_group_pipe<N, K1, ROWS, NT>(
                            [&](int r) { return S + r * POLY; }, off, key + c * N + pos, e, psiPow, pos);
                        __syncwarp();
                        S[c * POLY + off] = v;
                    }
                } else {
                    // bsf_mac_group_at picks the terms' branches
                    // (bsf_branch_free): none grouped by 2 on two columns
                    // (TFHELib128, CuFHE80), one per term grouped by 3 and
                    // on k = 3's four columns (TFHErsDefault). TFHELib128
                    // grouped by 3 loads each term's words during the
                    // previous term (AHEAD: 24 registers; H100, engine at
                    // 16,384 gates 35,754 -> 37,594 gates/s), and the next
                    // position's first term during this one's last (kio).
                    // CuFHE80's (l = 2) lost with AHEAD, 61,475 -> 52,044
                    // gates/s, and k = 3's four columns would need 64
                    // registers (kernels/NOTES.md session 19).
                    constexpr bool SKIP = !bsf_branch_free(NT, ROWS, K1);
                    constexpr bool AHEAD = SKIP && G == 3 && K1 == 2 && L == 3;
                    uint64_t kio[AHEAD ? ROWS : 1][K1];  // AHEAD: term 0's words of the next position
                    if constexpr (AHEAD) bsf_key_term0<N, K1, K1, ROWS>(kio, key, threadIdx.x);
                    for (uint32_t pos = threadIdx.x; pos < N; pos += THREADS) {
                        const uint32_t off = bsw_pad<F3>(pos);
                        uint64_t out[K1];
                        bsf_mac_group_at<N, K1, K1, ROWS, NT, SKIP, AHEAD>(
                            out, [&](int r) { return S + r * POLY; }, off, key, e, psiPow, pos,
                            AHEAD ? kio : nullptr, pos + THREADS);
#pragma unroll
                        for (int c = 0; c < K1; c++) S[c * POLY + off] = out[c];
                    }
                }
            }
            __syncthreads();
            // C: the inverse of rows 0..K1-1 (one per column), stages 3, 2, 1,
            // and the centred add into ACC. Only K1 of the ROWS polynomials
            // remain, so their transforms are spread over the whole block
            // (item x: polynomial x / count, transform x % count) rather
            // than over their own TP threads: a third of the wait at these
            // barriers for TFHELib128.
            for (uint32_t x = threadIdx.x; x < K1 * (N / F3); x += THREADS) {
                bsw_inv3<F3>(S + (x / (N / F3)) * POLY, x % (N / F3));
            }
            if constexpr (BSW_CSYNC) {
                // One stage-2 and one stage-1 transform per thread, column
                // c on threads c F1 F3 .. (c + 1) F1 F3 - 1 in both, and
                // stage 3 on threads below K1 F1 F3: those threads meet at
                // named barriers, the last warps of the block go straight
                // to the step's end (H100, TFHELib128, t64_g2 at 3,960
                // samples 107.48 -> 107.03 ms, the engine grouped by 2
                // 0.7% faster; kernels/NOTES.md session 16).
                constexpr uint32_t C2T = K1 * (F1 * F3);
                if (threadIdx.x < C2T) {
                    const uint32_t x = threadIdx.x, c = x / (F1 * F3);
                    bsw_bar_sync<C2T>(15);
                    bsw_inv2<F1, F2, F3>(S + c * POLY, x % (F1 * F3), mem.twInv2);
                    bsw_bar_sync<F1 * F3>(ROWS + 1 + c);
                    bsw_inv1_add<F1, F2, F3>(S + c * POLY, acc + c * N, x % (N / F1), mem.twInv1);
                }
            } else {
                __syncthreads();
                for (uint32_t x = threadIdx.x; x < K1 * (F1 * F3); x += THREADS) {
                    bsw_inv2<F1, F2, F3>(S + (x / (F1 * F3)) * POLY, x % (F1 * F3), mem.twInv2);
                }
                __syncthreads();
                for (uint32_t x = threadIdx.x; x < K1 * (N / F1); x += THREADS) {
                    const uint32_t c = x / (N / F1);
                    bsw_inv1_add<F1, F2, F3>(S + c * POLY, acc + c * N, x % (N / F1), mem.twInv1);
                }
            }
            __syncthreads();
        }

        bsf_extract<N, K1>(acc, ext + (uint64_t)s * ((K1 - 1) * N + 1), THREADS);
        __syncthreads();
    }
}

// One kernel per supported (F1 x F2 x F3, k, l, TP threads per polynomial);
// blockDim.x = TP * (k+1)*l. TP = N/8: one block per SM, every thread one
// small transform per stage (the last stage's 16-point transforms on half
// of them for N = 1024); TP = N/16: two transforms per thread and stage,
// two blocks per SM, whose barrier waits the other block's work fills.
// On an H200 (TFHELib128, kernels/NOTES.md) N/16 is the faster at every
// batch size, 1 sample included (fewer threads at each barrier, two
// independent transforms per thread); N/32 was slower (its dependent
// instructions stall), so it is not built.
#define BSW_DEFINE(F1, F2, F3, K, L, TP, MINB)                                                        \
    extern "C" __global__ void __launch_bounds__(TP * (K + 1) * L, MINB)                              \
        goldfhe_bs_wide_##F1##x##F2##x##F3##_k##K##_l##L##_t##TP(                                     \
            const uint32_t* in, const uint64_t* bk, const uint64_t* tables, uint32_t* ext, uint32_t n, \
            uint32_t beta, uint32_t offset, uint32_t mu, uint32_t count) {                             \
        bsw_run<F1, F2, F3, K + 1, L, TP>(in, bk, tables, ext, n, beta, offset, mu, count);           \
    }

BSW_DEFINE(8, 8, 16, 1, 3, 128, 1) // TFHELib128: 768 threads
BSW_DEFINE(8, 8, 16, 1, 3, 64, 2)  //             384 threads
BSW_DEFINE(8, 8, 16, 1, 2, 128, 1) // CuFHE80: 512 threads
BSW_DEFINE(8, 8, 16, 1, 2, 64, 2)  //          256 threads
BSW_DEFINE(8, 8, 8, 3, 2, 64, 1)   // TFHErsDefault: 512 threads
BSW_DEFINE(8, 8, 8, 3, 2, 32, 2)   //                256 threads

// The grouped kernels (G = 2 and 3, name suffix _g2, _g3): the same shapes
// and launch bounds, 16,512 (N = 1024) or 8,320 (N = 512) more bytes of
// shared memory per block for psiPow, which still lets MINB blocks run on
// an SM of sm_90 (TFHELib128 t64: 2 x 76,928 B); G = 3 takes seven terms
// per step.
#define BSW_DEFINE_G(G, F1, F2, F3, K, L, TP, MINB)                                                   \
    extern "C" __global__ void __launch_bounds__(TP * (K + 1) * L, MINB)                              \
        goldfhe_bs_wide_##F1##x##F2##x##F3##_k##K##_l##L##_t##TP##_g##G(                              \
            const uint32_t* in, const uint64_t* bk, const uint64_t* tables, uint32_t* ext, uint32_t n, \
            uint32_t beta, uint32_t offset, uint32_t mu, uint32_t count) {                             \
        bsw_run<F1, F2, F3, K + 1, L, TP, G>(in, bk, tables, ext, n, beta, offset, mu, count);        \
    }
#define BSW_DEFINE_GROUPED(F1, F2, F3, K, L, TP, MINB) \
    BSW_DEFINE_G(2, F1, F2, F3, K, L, TP, MINB)        \
    BSW_DEFINE_G(3, F1, F2, F3, K, L, TP, MINB)

BSW_DEFINE_GROUPED(8, 8, 16, 1, 3, 128, 1)
BSW_DEFINE_GROUPED(8, 8, 16, 1, 3, 64, 2)
BSW_DEFINE_GROUPED(8, 8, 16, 1, 2, 128, 1)
BSW_DEFINE_GROUPED(8, 8, 16, 1, 2, 64, 2)
BSW_DEFINE_GROUPED(8, 8, 8, 3, 2, 64, 1)
BSW_DEFINE_GROUPED(8, 8, 8, 3, 2, 32, 2)

// ---------------------------------------------------------------------------
// The flat grouped kernel (name infix _f<threads>): the same blind
// rotation with K1 * N / F1 threads per sample (256 for TFHELib128), so
// that three blocks share an SM where the t64 kernels' 384 threads fit
// two. Thread x owns accumulator column c = x / (N/F1) at the coefficients
// t + (N/F1) i of its stage-1 column t = x % (N/F1), and does that
// column's inverse stage 1 and, right after, the next step's forward
// stage 1 of all L digit rows of column c from the same words: the digits
// of a grouped step come from ACC unrotated, so no barrier separates the
// two, and the stage-1 twiddles of the L rows are the same. The other
// stages spread over all threads (A2: ROWS F1 F3 transforms, A3: ROWS N/F3,
// B: N positions, C3: K1 N/F3, C2: K1 F1 F3), block barriers between
// them. The multiply-accumulate writes column c's output over digit row
// c L (the row its own inverse stage 1 reads before stage 1 of the next
// step overwrites it, in the same thread). psiPow is staged unpadded
// (bsg_swz) and less 1 (the factors themselves: bsg_stage_psi), so shared
// memory is bsw_shared less 128 bytes: 76,800 bytes for TFHELib128, three
// blocks in an SM's 228 KiB (with the 1 KiB each reserves). The key comes
// in the paired layout (WideShape.PairedKey). Grouped keys only (a plain
// step's digits depend on its rotation, which the previous step does not
// know), and built for G = 3 only: TFHELib128 on an H100 at 3,960
// samples, f256_g3 99.6 ms against t64_g3 102.1 (both with AHEAD; 97.9
// since the paired key, session 20), but f256_g2 127.7 against t64_g2
// 104.9, where ptxas keeps the three terms' carries in register bits (LOP3
// 147 against 4 per position, nvcc 11.8; kernels/NOTES.md session 19).
__host__ __device__ constexpr int bsw_flat_shared(int f1, int f2, int f3, int k1, int l) {
    return k1 * l * (f1 * f2 * f3 + f1 * f2) * 8 + k1 * f1 * f2 * f3 * 4 + 2 * f1 * f2 * f3 * 8;
}

template <int F1, int F2, int F3, int K1, int L, int G>
__device__ __forceinline__ void bsw_run_flat(const uint32_t* __restrict__ in, const uint64_t* __restrict__ bk,
                                             const uint64_t* __restrict__ tables, uint32_t* __restrict__ ext,
                                             uint32_t n, uint32_t beta, uint32_t offset, uint32_t mu,
                                             uint32_t count) {
    static_assert(G == 2 || G == 3, "the flat kernels take grouped keys");
    constexpr int N = F1 * F2 * F3, LOGN = hyb_lg<N>::v, ROWS = K1 * L, NT = bsg_terms(G);
    constexpr int POLY = N + N / F3, T1 = N / F1;
    constexpr int THREADS = K1 * T1;
    static_assert(K1 * F1 * F3 == THREADS, "one inverse stage-2 transform per thread");
    // The launch's shared memory (bsw_flat_shared, WideShape.SharedBytes)
    // ends where bsw_mem's unpadded psiPow does, 128 bytes short of the
    // padded layout's.
    static_assert(bsw_flat_shared(F1, F2, F3, K1, L) == (ROWS * POLY + K1 * N / 2 + 2 * N) * 8 &&
                      bsw_flat_shared(F1, F2, F3, K1, L) == bsw_shared(F1, F2, F3, K1, L, G) - 128,
                  "bsw_flat_shared: digit rows, ACC and 2N psiPow words");
    const bsw_mem<F1, F2, F3, K1, L> mem(tables);
    uint64_t* S = mem.S;
    uint32_t* acc = mem.acc;
    uint64_t* psiPow = mem.psiPow;
    const bool small = 32 / L <= 15 || beta <= 15;
    bsg_stage_psi<LOGN, true>(psiPow, mem.psiSrc, THREADS);
    // Forward stage 1 of digit rows c L .. c L + L - 1, column t, from
    // this thread's words of ACC column c (c and t from threadIdx.x at
    // each use, not held through the step).
    auto fwd1 = [&]() {
        const uint32_t c = threadIdx.x / T1, t = threadIdx.x % T1;
        uint64_t* Wt = S + c * L * POLY + bsw_pad<F3>(t);
        const uint64_t* __restrict__ tw1t = mem.tw1 + t;
        const uint32_t* p = acc + c * N + t;
        uint32_t w[F1];
#pragma unroll
        for (int i = 0; i < F1; i++) w[i] = p[T1 * i] + offset;
#pragma unroll
        for (int di = 0; di < L; di++) {
            bsw_fwd1_digits_to<F1, F2, F3>([&](int i) { return w[i]; },
                                           [&](int j, uint64_t v) { Wt[di * POLY + (T1 + T1 / F3) * j] = v; },
                                           32 - (di + 1) * beta, beta, small,
                                           [&](int j) { return __ldg(tw1t + T1 * j); }, [](int) { return true; });
        }
    };

    for (uint32_t s = blockIdx.x; s < count; s += gridDim.x) {
        const uint32_t* ct = in + (uint64_t)s * (n + 1);
        bsf_init_acc<N, K1>(acc, bs_modswitch(ct[n], LOGN + 1), mu, THREADS);
        __syncthreads();  // ACC (and, the first time, psiPow)
        fwd1();
        for (uint32_t iter = 0; iter < n; iter += G) {
            uint32_t e[NT];
            if (!bs_step_exponents<G, LOGN>(e, ct, iter, n)) {
                continue;  // the same for the whole block; stage 1 stays valid (ACC unchanged)
            }
            __syncthreads();  // stage 1 of every row
            // Stage 2 unrolled: each thread's ROWS F1 F3 / THREADS
            // transforms interleave (H100, 3,960 samples: 99.61-99.67 ->
            // 99.37-99.42 ms; kernels/NOTES.md session 20).
            static_assert(ROWS * F1 * F3 % THREADS == 0, "whole stage-2 rounds");
#pragma unroll
            for (int k = 0; k < ROWS * F1 * F3 / THREADS; k++) {
                const uint32_t x = threadIdx.x + k * THREADS;
                bsw_fwd2<F1, F2, F3>(S + (x / (F1 * F3)) * POLY, x % (F1 * F3), mem.tw2);
            }
            __syncthreads();
            for (uint32_t x = threadIdx.x; x < ROWS * (N / F3); x += THREADS) {
                bsw_fwd3<F3>(S + (x / (N / F3)) * POLY, x % (N / F3));
            }
            __syncthreads();
            {
                const uint64_t* key = bk + (uint64_t)(iter / G) * (NT * ROWS * K1 * N);
                if constexpr (G == 3) {
                    bs_step_exponents<G, LOGN>(e, ct, iter, n);  // as bsw_run: not held through A
                }
                constexpr bool SKIP = !bsf_branch_free(NT, ROWS, K1);
                constexpr bool AHEAD = SKIP && G == 3 && K1 == 2 && L == 3;
                // The key in the paired layout (bsf_mac_group_at's PAIR,
                // WideShape.PairedKey): a row's two words of a position in
                // one 16-byte load, 42 loads a position where the t64
                // kernels issue 84.
                constexpr bool PAIR = AHEAD;
                uint64_t kio[AHEAD ? ROWS : 1][K1];
                if constexpr (AHEAD) bsf_key_term0<N, K1, K1, ROWS, PAIR>(kio, key, threadIdx.x);
#pragma unroll 1
                for (uint32_t pos = threadIdx.x; pos < N; pos += THREADS) {
                    const uint32_t off = bsw_pad<F3>(pos);
                    uint64_t out[K1];
                    bsf_mac_group_at<N, K1, K1, ROWS, NT, SKIP, AHEAD, true, PAIR>(
                        out, [&](int r) { return S + r * POLY; }, off, key, e, psiPow, pos, kio, pos + THREADS);
#pragma unroll
                    for (int cc = 0; cc < K1; cc++) S[cc * L * POLY + off] = out[cc];
                }
            }
            __syncthreads();
            for (uint32_t x = threadIdx.x; x < K1 * (N / F3); x += THREADS) {
                bsw_inv3<F3>(S + (x / (N / F3)) * L * POLY, x % (N / F3));
            }
            __syncthreads();
            {
                const uint32_t c = threadIdx.x / T1, t = threadIdx.x % T1;  // threadIdx.x = c F1 F3 + t
                bsw_inv2<F1, F2, F3>(S + c * L * POLY, t, mem.twInv2);
                __syncthreads();
                bsw_inv1_add<F1, F2, F3>(S + c * L * POLY, acc + c * N, t, mem.twInv1);
            }
            if (iter + G < n) fwd1();
        }
        __syncthreads();
        bsf_extract<N, K1>(acc, ext + (uint64_t)s * ((K1 - 1) * N + 1), THREADS);
        __syncthreads();
    }
}

#define BSW_DEFINE_FLAT(G, F1, F2, F3, K, L, MINB)                                                    \
    extern "C" __global__ void __launch_bounds__((K + 1) * F2 * F3, MINB)                             \
        goldfhe_bs_wide_##F1##x##F2##x##F3##_k##K##_l##L##_f256_g##G(                                  \
            const uint32_t* in, const uint64_t* bk, const uint64_t* tables, uint32_t* ext, uint32_t n, \
            uint32_t beta, uint32_t offset, uint32_t mu, uint32_t count) {                             \
        bsw_run_flat<F1, F2, F3, K + 1, L, G>(in, bk, tables, ext, n, beta, offset, mu, count);       \
    }

// The name's _f256 is the thread count of the one shape built.
BSW_DEFINE_FLAT(3, 8, 8, 16, 1, 3, 3) // TFHELib128: 256 threads, 76,800 B of shared memory

#endif // GOLDFHE_BOOTSTRAP_FUSED_CUH
