// bootstrap_combine.cuh: the grouped key of every step of a pass of the
// split kernel summed into one TRGSW sample per step and sample, ahead of
// the blind rotation, on the SMs the split kernel leaves idle (Hopper,
// sm_90; DESIGN.md section 6).
//
// A grouped step (G = 2, 3: bootstrap_step.cuh) adds to ACC
//   sum_u (X^{e_u} - 1) (BK_u ⊡ ACC) = K' ⊡ ACC,  K' = sum_u (X^{e_u} - 1) BK_u,
// and K' depends on the sample's rotation amounts and the key only, not
// on ACC: every step's K' can be formed before the step runs. The split
// kernel's combiner threads formed it a step ahead on the sample's own 8
// SMs, where their seven products per word took issue slots from the
// step's transforms (about 1,200 of the 9,800 cycles of a step grouped by
// 3, TFHELib128, H200, kernels/NOTES.md session 8). Here a persistent grid
// of one block per SM forms every (step, sample) K' of the pass, step by
// step, while the split kernel runs: it is launched first and lets the
// split kernel start at once (griddepcontrol.launch_dependents:
// programmatic dependent launch, Launch with LaunchPDL on the Go side), and
// each block publishes a part of a step's K' by adding 1 to the step's
// flag (release, GPU scope). The split kernel's producer warp waits for
// the step's flag to reach its target (acquire) before fetching the step's
// K' slices (bss_run with PRE). Forming all of a pass's K' reads the key
// once (145 MB for TFHELib128 grouped by 3) and writes
// ROWS x K1 x N words per step and sample (20 MB per sample), so it runs
// far ahead of the blind rotation, which consumes a step every few
// microseconds.
//
// A step's flag reaches bsp_chunks(N, K1) in a pass; the split kernel
// zeroes the flags of its samples at its end, ready for the next pass.
// K' is the same value mod p as the combiners' (the same bsf_mac_by over
// the same products), and the multiply-accumulate against it the same as
// bsf_mac_group_by's: the same bits.
#ifndef GOLDFHE_BOOTSTRAP_COMBINE_CUH
#define GOLDFHE_BOOTSTRAP_COMBINE_CUH

#include "bootstrap_step.cuh"

// BSP_THREADS: the combine kernel's block size. Small, so that a combine
// block (at most 128 registers a thread: 16K of an SM's 64K) fits on an
// SM beside split blocks, which then start at once.
#define BSP_THREADS 128

// BSP_PSI_SHARED: the combine kernel's psiPow table (bsg_stage_psi), a
// static shared array. The host model (testdata/blindrotate_model.cpp),
// whose __shared__ is per thread, defines it as a pointer to its block's
// array.
#ifndef BSP_PSI_SHARED
#define BSP_PSI_SHARED(name, words) __shared__ uint64_t name[words]
#endif

// bsp_chunks: the parts one step's K' of one sample is formed in, each by
// one block (BSP_THREADS consecutive words of a row): the increments its
// flag gets per pass.
__host__ __device__ constexpr int bsp_chunks(int n, int k1) { return k1 * n / BSP_THREADS; }

// bsp_groups: the steps of a grouped blind rotation of n key bits.
__host__ __device__ constexpr uint32_t bsp_groups(uint32_t n, int g) { return (n + g - 1) / g; }

// bsp_publish: one more part of the step of this flag is written by this
// block (release at GPU scope: every thread's writes before the block
// barrier that precedes it are visible to whoever acquires the new value).
__device__ __forceinline__ void bsp_publish(uint32_t* flag) {
#ifdef __CUDA_ARCH__
    asm volatile("red.release.gpu.global.add.u32 [%0], 1;" ::"l"(flag) : "memory");
#elif !defined(__CUDACC__)
    __atomic_fetch_add(flag, 1u, __ATOMIC_RELEASE);
#endif
}

// bsp_wait_flag: until *flag reaches target; what the blocks that raised
// it wrote before is then visible to this thread (acquire), and to the
// bulk copies of the threads that meet it at a barrier and then fence the
// async proxy (bsp_proxy_fence).
__device__ __forceinline__ void bsp_wait_flag(const uint32_t* flag, uint32_t target) {
#ifdef __CUDA_ARCH__
    for (;;) {
        uint32_t v;
        asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(flag) : "memory");
        if (v >= target) break;
        __nanosleep(64);
    }
#elif !defined(__CUDACC__)
    while (__atomic_load_n(flag, __ATOMIC_ACQUIRE) < target) std::this_thread::yield();
#endif
}

// bsp_proxy_fence: this thread's view of global memory (what it acquired)
// is the one its next bulk copies (async proxy) read.
__device__ __forceinline__ void bsp_proxy_fence() {
#ifdef __CUDA_ARCH__
    asm volatile("fence.proxy.async.global;" ::: "memory");
#endif
}

// bsp_combine_run: for samples s < count of in ((n+1) words each), steps
// g < bsp_groups(n, G) and every row r, column c and NTT-domain position
// pos:
//   kp[((s groups + g) ROWS + r) K1 + c][pos] = sum_u m_u[pos] bk_u[r][c][pos],
// bk_u the group's TRGSW samples (bk in BlindRotateWide's layout), m_u the
// NTT-domain X^{e_u} - 1 (bsg_factor; 0 for a last group's missing
// samples, whose words are read from term 0), psiPow the 2N powers of psi
// (PsiPowers). Work items (step, sample, chunk) in step order, so that the
// first steps of every sample are ready first.
template <int N, int K1, int L, int G>
__device__ __forceinline__ void bsp_combine_run(const uint32_t* __restrict__ in, const uint64_t* __restrict__ bk,
                                                const uint64_t* __restrict__ psiPow, uint64_t* __restrict__ kp,
                                                uint32_t* __restrict__ flags, uint32_t n, uint32_t count) {
    static_assert(G == 2 || G == 3, "grouping factor 2 or 3");
    constexpr int LOGN = hyb_lg<N>::v, ROWS = K1 * L, NT = bsg_terms(G), CH = bsp_chunks(N, K1);
    static_assert(CH * BSP_THREADS == K1 * N, "BSP_THREADS must divide (k+1) N");
    constexpr uint64_t TRGSW = (uint64_t)ROWS * K1 * N;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    // The split kernel may start now: every block of this grid is running.
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
    BSP_PSI_SHARED(P, bsg_psi_words(N));
    bsg_stage_psi<LOGN>(P, psiPow, BSP_THREADS);
    __syncthreads();
    const uint32_t groups = bsp_groups(n, G);
    const uint64_t items = (uint64_t)groups * count * CH;
    for (uint64_t it = blockIdx.x; it < items; it += gridDim.x) {
        const uint32_t chunk = (uint32_t)(it % CH), s = (uint32_t)((it / CH) % count), g = (uint32_t)(it / CH / count);
        const uint32_t x = chunk * BSP_THREADS + threadIdx.x, c = x / N, pos = x % N;
        uint32_t e[NT];
        bs_step_exponents<G, LOGN>(e, in + (uint64_t)s * (n + 1), g * G, n);
        const uint32_t odd = bsg_odd<LOGN>(pos);
        uint64_t m[NT];
#pragma unroll
        for (int u = 0; u < NT; u++) m[u] = bsg_factor<LOGN>(P, e[u], odd);
        const uint32_t bits = n - g * G < (uint32_t)G ? n - g * G : (uint32_t)G, terms = (1u << bits) - 1;
        const uint64_t* key = bk + (uint64_t)g * NT * TRGSW + c * N + pos;
        uint64_t sum[ROWS];
        bsf_mac_by<ROWS, NT>(sum, [&](int u) { return m + u; }, 0u, [&](int u, int r) {
            return __ldg(key + ((uint32_t)u < terms ? (uint64_t)u : 0u) * TRGSW + (uint64_t)r * K1 * N);
        });
        uint64_t* dst = kp + ((uint64_t)s * groups + g) * TRGSW + c * N + pos;
#pragma unroll
        for (int r = 0; r < ROWS; r++) dst[(uint64_t)r * K1 * N] = sum[r];
        __syncthreads();  // the block's words written
        if (threadIdx.x == 0) bsp_publish(flags + (uint64_t)s * groups + g);
    }
}

// One kernel per (N, k, l, G) of a split kernel with PRE; at most 128
// registers a thread (two blocks per SM), so that a split block fits
// beside one.
#define BSP_DEFINE(N, K, L, G)                                                                                  \
    extern "C" __global__ void __launch_bounds__(BSP_THREADS, 4) goldfhe_bs_combine_n##N##_k##K##_l##L##_g##G(  \
        const uint32_t* in, const uint64_t* bk, const uint64_t* psiPow, uint64_t* kp, uint32_t* flags, uint32_t n, \
        uint32_t count) {                                                                                       \
        bsp_combine_run<N, K + 1, L, G>(in, bk, psiPow, kp, flags, n, count);                                   \
    }

#endif  // GOLDFHE_BOOTSTRAP_COMBINE_CUH
