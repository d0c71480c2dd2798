// bootstrap_step.cuh: the pieces of a CMux step and of its start and end
// that the one-launch blind-rotation kernels (bootstrap_fused.cuh,
// bootstrap_cluster.cuh) share, each the same computation as one of the
// step kernels of bootstrap.cuh (named with each), so that every kernel
// gives the CPU engine's bits. `threads` threads of a block take part;
// accumulators are 32-bit torus words in shared memory.
#ifndef GOLDFHE_BOOTSTRAP_STEP_CUH
#define GOLDFHE_BOOTSTRAP_STEP_CUH

#include "bootstrap.cuh"

// One block per sample, `threads` threads,
// the accumulator acc (K1 x N 32-bit words) in shared memory.

// bsf_init_acc: ACC = (0, ..., 0, X^-bbar * mu * (1 + X + ... + X^(N-1)))
// (goldfhe_bs_init).
template <int N, int K1>
__device__ __forceinline__ void bsf_init_acc(uint32_t* acc, uint32_t bbar, uint32_t mu, int threads) {
    for (int q = threadIdx.x; q < K1 * N; q += threads) {
        uint32_t v = 0;
        if (q >= (K1 - 1) * N) {
            const uint32_t idx = (uint32_t)(q - (K1 - 1) * N) + bbar;
            v = (idx < N || idx >= 2 * N) ? mu : 0u - mu;
        }
        acc[q] = v;
    }
}

// bsf_digit: the gadget digit at `shift` of (X^a * p - p + offset)[j], as
// a Goldilocks element (goldfhe_bs_rotate_decompose).
template <int N>
__device__ __forceinline__ uint64_t bsf_digit(const uint32_t* p, uint32_t j, uint32_t a, uint32_t offset,
                                              uint32_t shift, uint64_t mask, int64_t half) {
    const uint32_t u = (j - a) & (2 * N - 1);
    const uint32_t rot = u < N ? p[u] : 0u - p[u - N];
    const uint32_t w = rot - p[j] + offset;
    const int64_t v = (int64_t)(((uint64_t)w >> shift) & mask) - half;
    return (uint64_t)v + (GL_P & (uint64_t)(v >> 63));
}

// bsf_mac: out_c = sum_r row_r * key[r][c] at every NTT-domain position,
// written in place over rows 0..K1-1 (goldfhe_bs_mac); off(pos) is the
// shared-memory word of position pos in each row of POLY words. Each
// position is read and written by one thread only.
template <int N, int K1, int ROWS, int POLY, class Off>
__device__ __forceinline__ void bsf_mac(uint64_t* S, const uint64_t* __restrict__ key, int threads, Off off) {
    for (int pos = threadIdx.x; pos < N; pos += threads) {
        const int o = off(pos);
        uint64_t lo[K1], hi[K1], top[K1];
#pragma unroll
        for (int c = 0; c < K1; c++) lo[c] = hi[c] = top[c] = 0;
#pragma unroll
        for (int r = 0; r < ROWS; r++) {
            const uint64_t x = S[r * POLY + o];
#pragma unroll
            for (int c = 0; c < K1; c++) {
                bs_mac_acc(lo[c], hi[c], top[c], x, __ldg(key + (r * K1 + c) * N + pos));
            }
        }
#pragma unroll
        for (int c = 0; c < K1; c++) S[c * POLY + o] = gl_reduce192(lo[c], hi[c], top[c]);
    }
}

// bsf_add_centered: *p += the centred representative of v mod 2^32
// (goldfhe_bs_add_centered).
__device__ __forceinline__ void bsf_add_centered(uint32_t* p, uint64_t v) {
    v = gl_canon(v);
    *p += (uint32_t)v - (v > GL_P / 2 ? 1u : 0u);
}

// bsf_extract: sample extraction of coefficient 0 of acc into e, K1-1
// columns of N words then the body (goldfhe_bs_extract).
template <int N, int K1>
__device__ __forceinline__ void bsf_extract(const uint32_t* acc, uint32_t* e, int threads) {
    constexpr int KN = (K1 - 1) * N;
    for (int x = threadIdx.x; x <= KN; x += threads) {
        uint32_t v;
        if (x == KN) {
            v = acc[KN];
        } else {
            const int i = x & (N - 1);
            const uint32_t* col = acc + (x - i);
            v = i == 0 ? col[0] : 0u - col[N - i];
        }
        e[x] = v;
    }
}


// bsf_init_column: column c of ACC (N words): the body column K1 - 1 is
// X^-bbar * mu * (1 + X + ... + X^(N-1)), the others 0 (goldfhe_bs_init).
template <int N>
__device__ __forceinline__ void bsf_init_column(uint32_t* col, bool body, uint32_t bbar, uint32_t mu, int threads) {
    for (int j = threadIdx.x; j < N; j += threads) {
        const uint32_t idx = (uint32_t)j + bbar;
        col[j] = body ? ((idx < N || idx >= 2 * N) ? mu : 0u - mu) : 0u;
    }
}

// bsf_extract_column: the part of the sample extraction of coefficient 0
// that column c of ACC gives: e[c*N .. c*N + N-1] for a mask column
// c < K, the body e[K*N] for c = K (goldfhe_bs_extract).
template <int N>
__device__ __forceinline__ void bsf_extract_column(const uint32_t* col, uint32_t* e, int c, int k, int threads) {
    if (c == k) {
        if (threadIdx.x == 0) e[k * N] = col[0];
        return;
    }
    for (int i = threadIdx.x; i < N; i += threads) e[c * N + i] = i == 0 ? col[0] : 0u - col[N - i];
}

#endif // GOLDFHE_BOOTSTRAP_STEP_CUH
