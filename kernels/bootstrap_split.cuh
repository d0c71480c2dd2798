// bootstrap_split.cuh: the blind rotation of one sample spread over a
// thread-block cluster of C blocks (C = 8, each on its own SM;
// Hopper, sm_90; DESIGN.md section 6), split by NTT index rather than by
// TRLWE column as in bootstrap_cluster.cuh: the lowest latency per sample,
// for passes of a few samples (a single gate, the narrow levels of a
// circuit).
//
// The three-stage plan (F1, F2, F3) (smallntt.Plan doc; N = F1 F2 F3, M =
// F2 F3) lets the split follow the transform's own structure (eq. (9) of
// Li et al. 2024, applied twice):
//   - stage 1 is M independent F1-point transforms, column t reading and
//     writing the coefficients and positions t + M i (i < F1);
//   - stages 2 and 3 are F1 independent M-point transforms on the
//     contiguous blocks of M positions.
// Block `rank` of a cluster owns the TC = M/C stage-1 columns t in [rank
// TC, (rank+1) TC), that is the coefficients t + M i, and the B = F1/C
// stage-2 blocks rank B .. rank B + B-1, that is the P = N/C consecutive
// NTT-domain positions [rank P, (rank+1) P). A CMux step (or a grouped
// step, G = 2 or 3) is then
//
//   A  (owned columns) the digits of every row from the owned coefficients,
//      stage 1 of each (bsw_fwd1_digits_to), output j of column t written
//      straight into the shared memory of the owner of position t + M j
//      (distributed shared memory);
//   -- exchange 1: every block's positions are complete;
//   B  (owned positions) stages 2 and 3 of every row, the multiply-
//      accumulate against the key at those positions (one thread per
//      position and output column) and, in the same threads, the inverse
//      stage 3 of each column (by warp shuffles), then the inverse stage 2,
//      each result written into the shared memory of the owner of its
//      stage-1 column;
//   -- exchange 2: every block's columns are complete;
//   C  (owned columns) the inverse stage 1 and the centred add into ACC.
//
// A grouped step decomposes ACC unrotated, so each block keeps only its
// own coefficients of ACC, and two exchanges per step are all there is.
// Each is point to point (bss_st_async): the values go out with st.async,
// each counting its bytes on the receiving block's mbarrier (one for X,
// one for Z), and a block waits on its own mbarrier for the bytes of the
// step. A cluster barrier in their place (cluster.sync) costs a
// GPU-scope memory fence (MEMBAR.ALL.GPU) and an L1 invalidation in every
// thread, twice per step: one sample's blind rotation took 1.466 ms with
// them and 1.376 ms with a barrier that orders nothing (TFHELib128 grouped
// by 3, H200, kernels/NOTES.md, session 7). A plain CMux step (G = 1)
// decomposes X^a ACC - ACC, which needs every coefficient: each block
// keeps all of ACC, and after C writes its coefficients' new values into
// every other block's copy (then a cluster barrier). Everything else is
// the arithmetic of the wide kernel, so the same bits come out.
//
// The key. A grouped kernel's block has a producer warp after its
// compute threads: it walks the sample's steps and, as soon as a key
// buffer is empty (an mbarrier that thread 0 arrives on after the
// multiply-accumulate), fetches the next step's key slices into it with
// bulk copies (cp.async.bulk, one per 1 KiB slice), whose bytes count on
// the buffer's full mbarrier; the compute threads wait on that before the
// multiply-accumulate, and meet at a named barrier (bss_sync) that the
// producer never joins. When the compute threads issued 16-byte cp.async
// themselves, their issue took about 1,300 of the 11,500 cycles of a
// grouped-by-3 step, and the step's amounts, read from global memory,
// about 700 more; the sample's amounts are now in shared memory too (16
// bits each, bss_amounts). One sample grouped by 3: 1.205 -> 1.110 ms,
// by 2 1.490 -> 1.376 ms (H200, kernels/NOTES.md session 8). A plain
// kernel (G = 1) joins a cluster barrier every step, with every thread of
// the cluster, so its compute threads still fetch the key. Grouped by 3,
// combiner threads (bss_combiner) read the key instead of the compute
// threads: a step ahead they sum its seven terms into one key, K', and
// the multiply-accumulate reads K' as a plain step reads its key (one
// sample 1.116 -> 0.995 ms, same notes). Then the combiners release the
// key buffer, and thread 0 releases K'.
//
// Each phase is a few dozen small transforms per block, so its time is the
// length of each thread's dependent chain: two or four threads share each
// transform (bss_for_roles), each computing some of its outputs with the
// rest of the network pruned. The inverse stages 2 and 1 run as
// decimation-in-frequency networks (hyb_ct_inv_lazy; stage 1 with its
// twist applied to the outputs), which prune that way. The inverse stage 3
// runs where the multiply-accumulate leaves its outputs, one per thread:
// the F3 lanes of a transform exchange values by warp shuffles, no shared
// memory and no block barrier in between (one sample grouped by 3: 1.29 ->
// 1.19 ms, H200, kernels/NOTES.md session 7; the same for the forward
// stage 3, six rows and a barrier per pair of warps, was slower: 1.36 ms).
// The inverse stages 3 and 2 apply the next stage's twiddles (T'_2, T'_1)
// to their outputs.
//
// Shared memory per block, 8-byte words (bss_shared): X and X2, ROWS rows
// of the P owned positions each, padded after every F3 words (bsw_pad:
// conflict-free stages); Y2, K1 such columns (the inverse stage 3's
// outputs); Z, the K1 x F1 x TC values that the inverse stage 1 of the
// owned columns reads (Z[c][j][tl], conflict-free for consecutive tl);
// for G = 2, 3 the psiPow table
// (bsg_stage_psi); the twiddles; two key buffers (the step's and the
// next's), or one where two do not fit (bss_key_bufs: G = 3 with k = 3);
// then ACC, 32-bit words: the K1 x F1 x TC owned coefficients (G = 2, 3;
// ACC[c][i][tl] is coefficient t + M i of column c, t = rank TC + tl), or
// all K1 x N (G = 1); six mbarriers (the two exchanges', each key
// buffer's full and empty); last the sample's amounts (BSS_CT_WORDS
// 16-bit words).
#ifndef GOLDFHE_BOOTSTRAP_SPLIT_CUH
#define GOLDFHE_BOOTSTRAP_SPLIT_CUH

#include "bootstrap_cluster.cuh"
#include "bootstrap_combine.cuh"

#ifdef GOLDFHE_HAVE_CLUSTERS

// 16-byte asynchronous copies from global to shared memory (cp.async,
// sm_80 and later), with which the threads of a plain (G = 1) split
// kernel fetch the next step's key while this step runs. The host models
// (testdata) copy at once.
__device__ __forceinline__ void bss_cp16(uint64_t* dst, const uint64_t* src) {
#ifdef __CUDA_ARCH__
    const unsigned d = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(d), "l"(src) : "memory");
#else
    dst[0] = src[0];
    dst[1] = src[1];
#endif
}
__device__ __forceinline__ void bss_cp_commit() {
#ifdef __CUDA_ARCH__
    asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}
// bss_cp_wait: this thread's copies are complete, all but the newest group
// when pending is true.
__device__ __forceinline__ void bss_cp_wait(bool pending) {
#ifdef __CUDA_ARCH__
    if (pending) {
        asm volatile("cp.async.wait_group 1;\n" ::: "memory");
    } else {
        asm volatile("cp.async.wait_group 0;\n" ::: "memory");
    }
#endif
}

// The exchanges between the blocks of a cluster: mbarriers (mbarrier.*,
// sm_90) that count the bytes st.async writes into a block's shared
// memory. The host models (testdata) keep each mbarrier's state in its
// 64-bit word (bit 63 the phase, 48-62 the arrivals per phase, 32-47 the
// arrivals pending, 0-31 the signed byte count) and update it atomically.
#if !defined(__CUDA_ARCH__) && !defined(__CUDACC__)
static inline void bss_hm_mbar(uint64_t* bar, int32_t bytes, uint32_t arrivals) {
    uint64_t old = __atomic_load_n(bar, __ATOMIC_ACQUIRE), now;
    do {
        const int32_t tx = (int32_t)(uint32_t)old + bytes;
        const uint32_t expected = (uint32_t)(old >> 48) & 0x7FFF;
        uint32_t pending = ((uint32_t)(old >> 32) & 0xFFFF) - arrivals, phase = (uint32_t)(old >> 63);
        if (pending == 0 && tx == 0) {
            phase ^= 1;
            pending = expected;
        }
        now = (uint64_t)(uint32_t)tx | (uint64_t)pending << 32 | (uint64_t)expected << 48 | (uint64_t)phase << 63;
    } while (!__atomic_compare_exchange_n(bar, &old, now, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE));
}
#endif

__device__ __forceinline__ uint32_t bss_smem_addr(const void* p) {
#ifdef __CUDA_ARCH__
    return (uint32_t)__cvta_generic_to_shared(p);
#else
    return 0;
#endif
}

// bss_mbar_init: an mbarrier of `arrivals` arrivals per phase, phase 0.
__device__ __forceinline__ void bss_mbar_init(uint64_t* bar, uint32_t arrivals) {
#ifdef __CUDA_ARCH__
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bss_smem_addr(bar)), "r"(arrivals) : "memory");
#elif !defined(__CUDACC__)
    __atomic_store_n(bar, (uint64_t)arrivals << 48 | (uint64_t)arrivals << 32, __ATOMIC_RELEASE);
#endif
}

// bss_mbar_init_fence: the mbarriers initialised by this thread are seen
// initialised by the cluster's other blocks after the next cluster barrier.
__device__ __forceinline__ void bss_mbar_init_fence() {
#ifdef __CUDA_ARCH__
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
#endif
}

// bss_mbar_expect: one arrival on bar, whose current phase is to receive
// `bytes` more.
__device__ __forceinline__ void bss_mbar_expect(uint64_t* bar, uint32_t bytes) {
#ifdef __CUDA_ARCH__
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bss_smem_addr(bar)), "r"(bytes)
                 : "memory");
#elif !defined(__CUDACC__)
    bss_hm_mbar(bar, (int32_t)bytes, 1);
#endif
}

// bss_mbar_wait: until the phase of bar with this parity is complete;
// what was written into this block's shared memory to complete it is then
// visible to the thread (acquire, cluster scope).
__device__ __forceinline__ void bss_mbar_wait(uint64_t* bar, uint32_t parity) {
#ifdef __CUDA_ARCH__
    const uint32_t a = bss_smem_addr(bar);
    uint32_t done;
    do {
        asm volatile(
            "{.reg .pred p;\n\t"
            "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], %2;\n\t"
            "selp.u32 %0, 1, 0, p;}"
            : "=r"(done)
            : "r"(a), "r"(parity)
            : "memory");
    } while (!done);
#elif !defined(__CUDACC__)
    while ((uint32_t)(__atomic_load_n(bar, __ATOMIC_ACQUIRE) >> 63) == parity) std::this_thread::yield();
#endif
}

// bss_mbar_arrive: one arrival on bar (release, CTA scope).
__device__ __forceinline__ void bss_mbar_arrive(uint64_t* bar) {
#ifdef __CUDA_ARCH__
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bss_smem_addr(bar)) : "memory");
#elif !defined(__CUDACC__)
    bss_hm_mbar(bar, 0, 1);
#endif
}

// bss_sync: a barrier of the block's first THREADS threads (named barrier
// 1), which the producer warp of a grouped split kernel never joins. The
// host model (testdata) gives each block a std::barrier of THREADS.
template <int THREADS>
__device__ __forceinline__ void bss_sync() {
#ifdef __CUDA_ARCH__
    asm volatile("bar.sync 1, %0;" ::"n"(THREADS) : "memory");
#elif !defined(__CUDACC__)
    hm_compute_bar->arrive_and_wait();
#endif
}

// bss_st_async: v into block rank's word at the offset of p (a pointer
// into this block's shared memory), its 8 bytes counted on block rank's
// mbarrier at the offset of bar (st.async: the write and the count are
// one operation, released at cluster scope).
template <class Cluster>
__device__ __forceinline__ void bss_st_async(const Cluster& cluster, uint64_t* p, uint32_t rank, uint64_t v,
                                             uint64_t* bar) {
#ifdef __CUDA_ARCH__
    uint32_t rp, rb;
    asm("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(rp) : "r"(bss_smem_addr(p)), "r"(rank));
    asm("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(rb) : "r"(bss_smem_addr(bar)), "r"(rank));
    asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.b64 [%0], %1, [%2];" ::"r"(rp), "l"(v),
                 "r"(rb)
                 : "memory");
#elif !defined(__CUDACC__)
    *cluster.map_shared_rank(p, (int)rank) = v;
    bss_hm_mbar(cluster.map_shared_rank(bar, (int)rank), -8, 0);
#endif
}

// bss_bulk: `bytes` (a multiple of 16) from global src into this block's
// shared dst, copied by the tensor memory accelerator (cp.async.bulk,
// sm_90) and counted on this block's mbarrier bar. The split kernel
// fetches each step's key slices this way, one instruction per 1 KiB
// slice from one warp: the 16-byte cp.async of every thread it replaces
// cost about 1,300 cycles of a grouped-by-3 step's 11,500 (TFHELib128,
// H200, kernels/NOTES.md session 8).
__device__ __forceinline__ void bss_bulk(uint64_t* dst, const uint64_t* src, uint32_t bytes, uint64_t* bar) {
#ifdef __CUDA_ARCH__
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                     bss_smem_addr(dst)),
                 "l"(src), "r"(bytes), "r"(bss_smem_addr(bar))
                 : "memory");
#elif !defined(__CUDACC__)
    memcpy(dst, src, bytes);
    bss_hm_mbar(bar, -(int32_t)bytes, 0);
#endif
}

// Per-phase cycle counts of block 0, thread BSS_PROF_T, printed at its end
// ("pre": from the end of a step to the start of the next one's A): build
// with -DGOLDFHE_BSS_PROFILE (a development aid; never in the committed
// fatbin).
#ifdef GOLDFHE_BSS_PROFILE
#define BSS_MARK(i)                                        \
    do {                                                   \
        if (bss_prof) {                                    \
            const long long bss_now = clock64();           \
            bss_pr[i] += bss_now - bss_pt;                 \
            bss_pt = bss_now;                              \
        }                                                  \
    } while (0)
#else
#define BSS_MARK(i) \
    do {            \
    } while (0)
#endif

// bss_key_words: the key words one block reads per step: its P positions
// of every row and column, for each of the step's TRGSW samples (G = 2:
// three; G = 3: seven).
__host__ __device__ constexpr int bss_key_words(int n, int k1, int l, int c, int g) {
    return (g == 3 ? 7 : g == 2 ? 3 : 1) * k1 * l * k1 * (n / c);
}

// BSS_CT_WORDS: the largest n the split kernels take. They keep the
// sample's n amounts in shared memory (bss_amounts), where the step's
// exponents and the next step are read at the start of every step: from
// global memory the loads' latency was on every step's critical path.
#define BSS_CT_WORDS 1024

// bss_amounts: the sample's amounts as kept in shared memory, the upper 16
// bits of each word: h[i] << 16 modulus-switches (bs_modswitch, 2N <=
// 2^15) as word i does, since the rounding bit is bit 31 - log2(2N) >= 16.
struct bss_amounts {
    const uint16_t* h;
    __device__ __forceinline__ uint32_t operator[](uint32_t i) const { return (uint32_t)h[i] << 16; }
};

// bss_producer: whether the split kernel of grouping factor G has a
// producer warp (G >= 2): one more warp per block, which only fetches the
// key slices of the sample's steps, each into a free key buffer, with bulk
// copies (bss_bulk). The block's other threads compute and meet at named
// barrier 1 (bss_sync). A plain kernel (G = 1) keeps its cluster barrier
// per step, which every thread of the cluster must join, so its compute
// threads fetch the key themselves (bss_cp16).
__host__ __device__ constexpr bool bss_producer(int g) { return g >= 2; }

// bss_combiner: whether the split kernel of grouping factor G has
// combiner threads (G = 3): as many as compute threads, between them and
// the producer warp. Combiner (c, q) sums the step's terms into one key,
// K'[r][c][q] = sum_u m_u[pos] key_u[r][c][q] (bsf_mac_group_by's m_u), in
// shared memory, a step ahead, so that the compute threads' multiply-
// accumulate is sum_r X_r[q] K'[r][c][q], as in a plain step. The same
// value mod p as bsf_mac_group_by's sum_u m_u (sum_r X_r key_u[r]), so the
// same bits; the seven terms' products leave the step's critical path.
__host__ __device__ constexpr bool bss_combiner(int g) { return g == 3; }

// bss_block: the block size of a split kernel with `compute` compute
// threads (WideShape.Threads).
__host__ __device__ constexpr int bss_block(int compute, int g, bool pre = false) {
    return compute * (bss_combiner(g) && !pre ? 2 : 1) + (bss_producer(g) ? 32 : 0);
}

// bss_shared_bufs: bss_shared with `bufs` key buffers.
__host__ __device__ constexpr int bss_shared_bufs(int f1, int f2, int f3, int k1, int l, int c, int g, int bufs,
                                                bool pre = false) {
    // 2 k1 l + k1 padded position rows (X, X2, Y2), Z, psiPow (not with
    // pre), the twiddles, the key buffers (one TRGSW's words each with
    // pre: the step's K'), K' (G = 3 without pre), ACC, eight mbarriers
    // (the two exchanges', each key buffer's full and empty, K''s full and
    // empty), then the sample's amounts.
    return ((2 * k1 * l + k1) * (f1 * f2 * f3 / c + f1 * f2 / c) + k1 * (f1 * f2 * f3 / c) +
            (g >= 2 && !pre ? bsg_psi_words(f1 * f2 * f3) : 0) + 2 * (f1 * f2 * f3 / c) + 2 * f2 * f3 +
            bufs * bss_key_words(f1 * f2 * f3, k1, l, c, pre ? 1 : g) +
            (bss_combiner(g) && !pre ? k1 * l * k1 * (f1 * f2 * f3 / c) : 0)) *
               8 +
           (g >= 2 ? k1 * (f1 * f2 * f3 / c) : k1 * f1 * f2 * f3) * 4 + 8 * 8 + BSS_CT_WORDS * 2;
}

// BSS_MAX_SHARED: the most dynamic shared memory a block of sm_90 may have
// (227 KiB).
#define BSS_MAX_SHARED (227 * 1024)

// bss_key_bufs: the key buffers of the split kernel: two (the step's key
// fetched while the step before runs), except for G = 3 where two do not
// fit in BSS_MAX_SHARED (TFHErsDefault's k = 3: 2 x 112 KiB): one, the
// next step's key then fetched once the combiners have read this step's
// (the rest of the step still hides the copy).
__host__ __device__ constexpr int bss_key_bufs(int f1, int f2, int f3, int k1, int l, int c, int g, bool pre = false) {
    return g < 3 || pre || bss_shared_bufs(f1, f2, f3, k1, l, c, g, 2) <= BSS_MAX_SHARED ? 2 : 1;
}

__host__ __device__ constexpr int bss_shared(int f1, int f2, int f3, int k1, int l, int c, int g, bool pre = false) {
    return bss_shared_bufs(f1, f2, f3, k1, l, c, g, bss_key_bufs(f1, f2, f3, k1, l, c, g, pre), pre);
}

// bss_next: the first step at or after `iter` that changes ACC (n when
// none does): the steps bs_step_exponents skips are skipped here too, so
// that the key fetched ahead is the one the next step reads.
template <int G, int LOGN>
__device__ __forceinline__ uint32_t bss_next(const bss_amounts& ct, uint32_t iter, uint32_t n) {
    uint32_t e[bsg_terms(G)];
    while (iter < n && !bs_step_exponents<G, LOGN>(e, ct, iter, n)) iter += G;
    return iter;
}

// Threads per small transform in each phase (bss_for_roles), a divisor of
// the transform's size each: stage 1 (A), stages 2 and 3, the inverse
// stages 2 and 1. The fastest of six choices on an H200, within 7 % of
// each other (kernels/NOTES.md, session 5); -D overrides them for
// profiling runs.
#ifndef BSS_R_A
#define BSS_R_A 2
#endif

#ifndef BSS_R_2
#define BSS_R_2 2
#endif
#ifndef BSS_R_3
#define BSS_R_3 2
#endif
#ifndef BSS_R_I2
#define BSS_R_I2 4
#endif
#ifndef BSS_R_I1
#define BSS_R_I1 4
#endif

// bss_for_roles: fn(role, item) for every item < items and role < R, as
// std::integral_constant roles: R threads share each item (one small
// transform), each computing the outputs of its role only. Roles are
// warp-uniform (warp w takes role w mod R of 32 items), so no warp runs
// two roles' code. Why: a phase of the split kernel is a few dozen small
// transforms per block, whose per-thread dependent chains (not the SM's
// issue rate) set its time; R threads per transform, each with a pruned
// network (hyb_ct_lazy, hyb_ct_inv_lazy: an output needs only the
// butterflies of its own blocks), shorten them.
template <int R, int THREADS, class Fn>
__device__ __forceinline__ void bss_for_roles(uint32_t items, Fn fn) {
    for (uint32_t x = threadIdx.x; x < R * 32 * ((items + 31) / 32); x += THREADS) {
        const uint32_t role = (x / 32) % R, item = (x / (32 * R)) * 32 + x % 32;
        if (item < items) {
            hyb_for<R>([&](auto rc) {
                if (role == decltype(rc)::value) fn(rc, item);
            });
        }
    }
}

// bss_run: samples blockIdx.x / C, + gridDim.x / C, ... (clusters of C
// consecutive blocks, gridDim.x a multiple of C); tables as for the wide
// kernel (psiPow after T'_2 for G = 2, 3). blockDim.x = K1 N / C compute
// threads (the multiply-accumulate has one per owned position and column),
// and for G >= 2 a producer warp after them (bss_producer); n <=
// BSS_CT_WORDS.
//
// With PRE (G = 2, 3) bk is the pass's K' instead of the key: the step's
// terms summed by the combine kernel (bootstrap_combine.cuh), one TRGSW's
// words per step and sample (kp[(s groups + g) ROWS K1 N ...]), step g of
// sample s complete once flags[s groups + g] reaches bsp_chunks(N, K1);
// the producer waits for that before fetching it, and rank 0 of the
// cluster, once every block of the cluster is done, waits for the flags
// of the steps it skipped too and zeroes all of its samples' (so every
// pass finds them zero). The multiply-accumulate reads
// K' as a plain step reads its key, and the block has no combiners and
// no psiPow table.
template <int F1, int F2, int F3, int K1, int L, int C, int G, bool PRE = false>
__device__ __forceinline__ void bss_run(const uint32_t* __restrict__ in, const uint64_t* __restrict__ bk,
                                        const uint64_t* __restrict__ tables, uint32_t* __restrict__ ext,
                                        uint32_t n, uint32_t beta, uint32_t offset, uint32_t mu, uint32_t count,
                                        uint32_t* __restrict__ flags = nullptr) {
    namespace cg = cooperative_groups;
    static_assert(G >= 1 && G <= 3, "grouping factor 1, 2 or 3");
    static_assert(!PRE || G >= 2, "PRE: a grouped key's K'");
    constexpr int N = F1 * F2 * F3, LOGN = hyb_lg<N>::v, ROWS = K1 * L;
    constexpr int M = F2 * F3;  // a stage-2 block
    static_assert(F1 % C == 0 && M % C == 0, "C must divide F1 and F2 * F3");
    constexpr int B = F1 / C;        // stage-2 blocks per cluster block
    constexpr int P = N / C;         // owned NTT-domain positions
    constexpr int PP = P + P / F3;   // padded
    constexpr int TC = M / C;        // owned stage-1 columns
    constexpr int THREADS = K1 * P;  // compute threads
    constexpr bool PRODUCER = bss_producer(G), COMBINER = bss_combiner(G) && !PRE, PSI = G >= 2 && !PRE;
    constexpr int PBASE = COMBINER ? 2 * THREADS : THREADS;  // the producer warp's first thread
    static_assert(LOGN <= 14, "bss_amounts: 2N <= 2^15");
    constexpr int NT = bsg_terms(G);      // exponents per step (G >= 2: TRGSW samples per group)
    constexpr int KW = bss_key_words(N, K1, L, C, PRE ? 1 : G);
    constexpr int NBUF = bss_key_bufs(F1, F2, F3, K1, L, C, G, PRE);
    static_assert((G == 3 && !PRE) || NBUF == 2, "G = 1, 2 and PRE: two key buffers");
    constexpr int TRGSW = ROWS * K1 * N;  // words of one TRGSW sample of the key
    extern __shared__ uint64_t bss_sm[];
    // X: stage-1 outputs, then stage 3's; X2: stage 2's (the threads of a
    // transform read all its inputs and write some outputs, so no stage
    // works in place); Y2: the inverse stage 3's.
    uint64_t* X = bss_sm;           // ROWS x PP
    uint64_t* X2 = X + ROWS * PP;   // ROWS x PP
    uint64_t* Y2 = X2 + ROWS * PP;  // K1 x PP
    uint64_t* Z = Y2 + K1 * PP;     // K1 x F1 x TC
    uint64_t* psiPow = Z + K1 * P;  // G = 2, 3 without PRE only
    // The twiddles this block uses: T_1 of the owned columns (tw1[j * TC
    // + tl] = T_1[M j + t]), T'_1 of the owned positions (twInv1[q] =
    // T'_1[rank P + q]: the inverse stage 2 applies it), all of T_2 and
    // T'_2.
    uint64_t* tw1 = psiPow + (PSI ? bsg_psi_words(N) : 0);
    uint64_t* twInv1 = tw1 + P;
    uint64_t* tw2 = twInv1 + P;
    uint64_t* twInv2 = tw2 + M;
    uint64_t* keyBuf = twInv2 + M;  // NBUF buffers of KW words
    uint64_t* KP = keyBuf + NBUF * KW;  // K'[r][c][q], G = 3: ROWS x K1 x P
    uint32_t* acc = reinterpret_cast<uint32_t*>(KP + (COMBINER ? ROWS * K1 * P : 0));
    // The mbarriers of the two exchanges: X's (the stage-1 outputs, ROWS x
    // P words per step from the cluster) and Z's (the inverse stage 2's, K1
    // x P words).
    uint64_t* mbarX = reinterpret_cast<uint64_t*>(acc + (G >= 2 ? K1 * P : K1 * N));
    uint64_t* mbarZ = mbarX + 1;
    // Key buffer b is full (its bulk copies are in: mbarK[b]) and empty
    // (the multiply-accumulate that read it is done: mbarE[b]).
    uint64_t* mbarK = mbarZ + 1;
    uint64_t* mbarE = mbarK + 2;
    // K' is full (every combiner's words are in: mbarPF) and empty (the
    // multiply-accumulate that read it is done: mbarPE).
    uint64_t* mbarPF = mbarE + 2;
    uint64_t* mbarPE = mbarPF + 1;
    uint16_t* amounts = reinterpret_cast<uint16_t*>(mbarPE + 1);  // BSS_CT_WORDS
    const bss_amounts ct{amounts};
    constexpr uint32_t XBYTES = ROWS * P * 8, ZBYTES = K1 * P * 8;
    cg::cluster_group cluster = cg::this_cluster();
    const uint32_t rank = cluster.block_rank();
    const bool small = 32 / L <= 15 || beta <= 15;  // bsw_fwd1_digits_to
    const bool producer = PRODUCER && threadIdx.x >= PBASE;
    const bool combiner = COMBINER && threadIdx.x >= THREADS && threadIdx.x < PBASE;
    if (PSI && threadIdx.x < THREADS) {
        bsg_stage_psi<LOGN>(psiPow, tables + 2 * N + 2 * M, THREADS);
    }
    for (uint32_t x = threadIdx.x; x < P; x += THREADS) {
        tw1[x] = __ldg(tables + M * (x / TC) + rank * TC + x % TC);
        twInv1[x] = __ldg(tables + N + rank * P + x);
    }
    for (uint32_t x = threadIdx.x; x < M; x += THREADS) {
        tw2[x] = __ldg(tables + 2 * N + x);
        twInv2[x] = __ldg(tables + 2 * N + M + x);
    }
    if (threadIdx.x == 0) {
        // One arrival per phase, this thread's, which also says how many
        // bytes the phase takes: armed here for the first step, and by
        // this thread again once a step's phase is complete.
        bss_mbar_init(mbarX, 1);
        bss_mbar_init(mbarZ, 1);
        for (int b = 0; b < 2; b++) {
            bss_mbar_init(mbarK + b, 1);  // armed by each fetch
            // Thread 0 after the multiply-accumulate, or every combiner
            // once it has read the buffer.
            bss_mbar_init(mbarE + b, COMBINER ? THREADS : 1);
        }
        bss_mbar_init(mbarPF, THREADS);  // every combiner
        bss_mbar_init(mbarPE, 1);        // thread 0 after the multiply-accumulate
        bss_mbar_expect(mbarX, XBYTES);
        bss_mbar_expect(mbarZ, ZBYTES);
        bss_mbar_init_fence();
    }
    // Every block of the cluster runs before anyone touches another's
    // shared memory (and the tables and mbarriers are published).
    cluster.sync();
    // Why one phase at a time is enough: a block writes into another's X
    // for step i + 1 only after it has received every block's Z of step
    // i, which each block sends after its own X of step i is complete and
    // read (and likewise for Z): so no block's writes of the next step
    // reach an mbarrier before its current phase is complete, nor a buffer
    // before its owner has read it.
    uint32_t parityX = 0, parityZ = 0;
    // Bit b: the parity of key buffer b's next full (parityK) or empty
    // (parityE) phase to wait for. The producer's first wait for an empty
    // buffer is for parity 1, the phase before an mbarrier's first, which
    // counts as complete.
    uint32_t parityK = 0, parityE = 3;
    uint32_t parityPF = 0, parityPE = 1;  // K''s: the same for one buffer
    // exchanged: every byte of the step is in this block's X (or Z); the
    // mbarrier armed for the next step.
    auto exchanged = [&](uint64_t* bar, uint32_t& parity, uint32_t bytes) {
        bss_mbar_wait(bar, parity);
        if (threadIdx.x == 0) bss_mbar_expect(bar, bytes);
        parity ^= 1;
    };

    // owned(x) for x < K1 * P: column c, index i, local column tl of the
    // owned coefficient number x, and that coefficient's index.
    auto owned = [&](uint32_t x, uint32_t& c, uint32_t& idx) {
        c = x / P;
        const uint32_t i = (x % P) / TC, tl = x % TC;
        idx = rank * TC + tl + M * i;
    };
    // fetch(iter, buf): start copying this block's key words of the step
    // at iter into key buffer buf (keyBuf[buf][chunk * P + q], chunk = (u
    // ROWS + r) K1 + c): one TRGSW for G = 1, three for a pair and one for
    // the last bit of an odd n for G = 2, seven for a group of three and
    // 2^r - 1 for a last group of r = n - iter < 3 bits for G = 3. For G
    // >= 2 the producer warp asks for each chunk's P contiguous words with
    // one bulk copy, counted on mbarK[buf], which its lane 0 arms with the
    // step's bytes (in either order: the phase completes when both are
    // in); for G = 1 every compute thread copies 16-byte pieces (cp.async).
    //
    // With PRE the step's K' of sample s is one TRGSW's words at (s groups
    // + iter / G) TRGSW (kpStep = s groups), fetched once the combine
    // kernel's flag of the step says it is complete.
    const uint32_t groups = bsp_groups(n, G);
    uint64_t kpStep = 0;
    auto fetch = [&](uint32_t iter, uint32_t buf) {
        const uint64_t* src = bk + rank * P +
                              (PRE       ? (kpStep + iter / G) * TRGSW
                               : G >= 2 ? (uint64_t)(iter / G) * NT * TRGSW
                                        : (uint64_t)iter * TRGSW);
        uint64_t* dst = keyBuf + buf * KW;
        if constexpr (PRODUCER) {
            const uint32_t lane = threadIdx.x - PBASE;
            uint32_t chunks;
            if constexpr (PRE) {
                chunks = ROWS * K1;
                if (lane == 0) bsp_wait_flag(flags + kpStep + iter / G, bsp_chunks(N, K1));
                __syncwarp();
                bsp_proxy_fence();
            } else if constexpr (G == 3) {
                chunks = ROWS * K1 * (n - iter >= 3 ? 7u : n - iter == 2 ? 3u : 1u);
            } else {
                chunks = (iter + 1 >= n ? KW / 3 : KW) / P;
            }
            if (lane == 0) bss_mbar_expect(mbarK + buf, chunks * P * 8);
            // From every lane: one lane issuing them all was slower (one
            // sample grouped by 3: 1.110 -> 1.222 ms, H200, kernels/NOTES.md
            // session 8).
            for (uint32_t y = lane; y < chunks; y += 32) bss_bulk(dst + y * P, src + (uint64_t)y * N, P * 8, mbarK + buf);
        } else {
            for (uint32_t y = threadIdx.x; y < KW / 2; y += THREADS) {
                const uint32_t chunk = y / (P / 2), w = 2 * (y % (P / 2));
                bss_cp16(dst + chunk * P + w, src + (uint64_t)chunk * N + w);
            }
            bss_cp_commit();
        }
    };
    // key_in(buf, pending): this step's key, in key buffer buf, is
    // complete and visible to this thread (G = 1: this thread's copies are,
    // all but the newest group when the next step's are pending; the
    // barrier after it publishes everyone's).
    auto key_in = [&](uint32_t buf, bool pending) {
        if constexpr (PRODUCER) {
            bss_mbar_wait(mbarK + buf, (parityK >> buf) & 1);
            parityK ^= 1u << buf;
        } else {
            bss_cp_wait(pending);
        }
    };
#ifdef GOLDFHE_BSS_PROFILE
#ifndef BSS_PROF_T
#define BSS_PROF_T 0  // the profiled thread of block 0: -DBSS_PROF_T=32 for warp 1
#endif
    const bool bss_prof = blockIdx.x == 0 && threadIdx.x == BSS_PROF_T;
    long long bss_pr[10] = {}, bss_pt = clock64();
    uint32_t bss_steps = 0;
#endif

    // The twiddles of the inverse stage 3, which runs in the multiply-
    // accumulate's warps, for this thread's lane p = q mod F3 of its
    // transform (the lanes of a transform are consecutive threads of one
    // warp): level s multiplies by omega_F3^-(j F3 / 2^(s+1)), j = p mod
    // 2^s (omega_F3 = 2^(192 / F3), DESIGN.md section 4).
    constexpr int LG3 = hyb_lg<F3>::v;
    static_assert(P % 32 == 0 && 32 % F3 == 0, "a transform's F3 lanes in one warp");
    uint64_t w3[LG3];
#pragma unroll
    for (int lv = 0; lv < LG3; lv++) {
        const uint32_t e = (192 / F3) * ((threadIdx.x % F3) % (1u << lv)) * (F3 >> (lv + 1));
        w3[lv] = gl_mul_pow2(1, (192 - e) % 192);
    }
    for (uint32_t s = blockIdx.x / C; s < count; s += gridDim.x / C) {
        const uint32_t* sample = in + (uint64_t)s * (n + 1);
        kpStep = (uint64_t)s * groups;
        if (threadIdx.x < THREADS) {
            for (uint32_t x = threadIdx.x; x < n; x += THREADS) amounts[x] = (uint16_t)(sample[x] >> 16);
            const uint32_t bbar = bs_modswitch(sample[n], LOGN + 1);
            if constexpr (G >= 2) {
                // The owned coefficients of ACC = (0, ..., 0, X^-bbar v).
                for (uint32_t x = threadIdx.x; x < K1 * P; x += THREADS) {
                    uint32_t c, idx;
                    owned(x, c, idx);
                    const uint32_t u = idx + bbar;
                    acc[x] = c == K1 - 1 ? ((u < N || u >= 2 * N) ? mu : 0u - mu) : 0u;
                }
            } else {
                bsf_init_acc<N, K1>(acc, bbar, mu, THREADS);
            }
        }
        __syncthreads();  // ACC and the amounts in place (the producer's threads too)
        if (producer) {
            // The key slices of the sample's steps, in the order in which
            // the compute threads take them, each into the next key buffer
            // once the multiply-accumulate that last read it is done: a
            // step ahead with two buffers, with one (NBUF = 1) during the
            // inverse stages and the next step's forward ones.
            uint32_t buf = 0;
            for (uint32_t it = bss_next<G, LOGN>(ct, 0, n); it < n; it = bss_next<G, LOGN>(ct, it + G, n)) {
                bss_mbar_wait(mbarE + buf, (parityE >> buf) & 1);
                parityE ^= 1u << buf;
                // Every lane past its wait before lane 0 arms the next fill:
                // a step of fewer than 32 copies leaves lanes that issue
                // none, and such a lane still waiting when the buffer is
                // filled, read and released again would wait on a phase
                // that may never come (a sample's last steps: the block
                // hangs). The Pre path's fetch syncs the warp before that.
                __syncwarp();
                fetch(it, buf);
                if constexpr (NBUF == 2) buf ^= 1;
            }
            __syncthreads();  // the compute threads' end of the sample
            continue;
        }
        if (combiner) {
            // K' of the sample's steps, in order: each from the step's key
            // buffer once it is full (releasing it), into K' once the
            // multiply-accumulate of the step before is done with it.
            const uint32_t c = (threadIdx.x - THREADS) / P, q = (threadIdx.x - THREADS) % P, pos = rank * P + q;
            const uint32_t odd = bsg_odd<LOGN>(pos);
            uint32_t buf = 0;
            for (uint32_t it = bss_next<G, LOGN>(ct, 0, n); it < n; it = bss_next<G, LOGN>(ct, it + G, n)) {
                uint32_t e[NT];
                bs_step_exponents<G, LOGN>(e, ct, it, n);
                uint64_t m[NT];
#pragma unroll
                for (int u = 0; u < NT; u++) m[u] = bsg_factor<LOGN>(psiPow, e[u], odd);
                key_in(buf, false);
                const uint64_t* key = keyBuf + buf * KW;
                // A term of a last group's missing TRGSW has m_u = 0, and
                // its words in the buffer are an older step's.
                uint64_t kp[ROWS];
                bsf_mac_by<ROWS, NT>(kp, [&](int u) { return m + u; }, 0u,
                                     [&](int u, int r) { return key[((u * ROWS + r) * K1 + c) * P + q]; });
                bss_mbar_arrive(mbarE + buf);
                bss_mbar_wait(mbarPE, parityPE);
                parityPE ^= 1;
#pragma unroll
                for (int r = 0; r < ROWS; r++) KP[(r * K1 + c) * P + q] = kp[r];
                bss_mbar_arrive(mbarPF);
                if constexpr (NBUF == 2) buf ^= 1;
            }
            __syncthreads();  // the compute threads' end of the sample
            continue;
        }
        uint32_t iter = bss_next<G, LOGN>(ct, 0, n), buf = 0;
        if constexpr (!PRODUCER) {
            if (iter < n) fetch(iter, 0);
        }

        while (iter < n) {
            uint32_t e[NT];  // the combiners' for G = 3, the combine kernel's for PRE
            if constexpr (!COMBINER && !PRE) bs_step_exponents<G, LOGN>(e, ct, iter, n);  // true: bss_next
            const uint32_t next = bss_next<G, LOGN>(ct, iter + G, n);
            if constexpr (!PRODUCER) {
                if (next < n) fetch(next, buf ^ 1);
            }
            const uint64_t* key = keyBuf + buf * KW;
            BSS_MARK(0);
            // A: stage 1 of row r, owned column t, into the owners' X;
            // BSS_R_A threads per column, each some of its outputs.
            bss_for_roles<BSS_R_A, THREADS>(ROWS * TC, [&](auto rc, uint32_t x) {
                constexpr int S = decltype(rc)::value;
                const uint32_t r = x / TC, tl = x % TC, t = rank * TC + tl;
                const uint32_t c = r / L, shift = 32 - (r % L + 1) * beta;
                auto store = [&](int j, uint64_t v) {
                    const int dst = j / B, q = (int)t + M * (j - dst * B);
                    bss_st_async(cluster, X + r * PP + bsw_pad<F3>(q), (uint32_t)dst, v, mbarX);
                };
                auto tw = [&](int j) { return tw1[j * TC + tl]; };
                auto keep = [](int j) { return j / (F1 / BSS_R_A) == S; };
                if constexpr (G >= 2) {
                    const uint32_t* a = acc + c * P + tl;
                    bsw_fwd1_digits_to<F1, F2, F3>([&](int i) { return a[i * TC] + offset; }, store, shift, beta,
                                                   small, tw, keep);
                } else {
                    const uint32_t* p = acc + c * N;
                    bsw_fwd1_digits_to<F1, F2, F3>([&](int i) { return bsf_rotdiff<N>(p, t + M * i, e[0], offset); },
                                                   store, shift, beta, small, tw, keep);
                }
            });
            BSS_MARK(1);
            exchanged(mbarX, parityX, XBYTES);
            BSS_MARK(2);
            // B: stages 2 and 3 of the owned positions (local indices: the
            // owned stage-2 blocks are consecutive), X to X2 to X.
            bss_for_roles<BSS_R_2, THREADS>(ROWS * B * F3, [&](auto rc, uint32_t x) {
                constexpr int S = decltype(rc)::value, H = F2 / BSS_R_2;
                const uint32_t r = x / (B * F3), t2 = x % (B * F3), c3 = t2 % F3;
                // bsw_fwd2's transform: positions base + F3 i, padded.
                const uint32_t o = r * PP + bsw_pad<F3>((t2 / F3) * M + c3);
                uint64_t v[F2];
#pragma unroll
                for (int i = 0; i < F2; i++) v[i] = X[o + (F3 + 1) * i];
                hyb_ct_lazy<F2, false, 0, false, true>(v);  // canonical in: stage 1's lz_mul
#pragma unroll
                for (int j = S * H; j < S * H + H; j++)
                    X2[o + (F3 + 1) * j] = bsw_tw2(v[j], j, [&] { return tw2[F3 * j + c3]; });
            });
            bss_sync<THREADS>();
            bss_for_roles<BSS_R_3, THREADS>(ROWS * (P / F3), [&](auto rc, uint32_t x) {
                constexpr int S = decltype(rc)::value, H = F3 / BSS_R_3;
                const uint32_t o = (x / (P / F3)) * PP + (x % (P / F3)) * (F3 + 1);  // bsw_fwd3's transform
                uint64_t v[F3];
#pragma unroll
                for (int i = 0; i < F3; i++) v[i] = X2[o + i];
                // canonical in (stage 2's lz_mul); lazy outputs: the multiply-accumulate takes them
                hyb_ct_lazy<F3, false, 0, false, true>(v);
#pragma unroll
                for (int j = S * H; j < S * H + H; j++) X[o + j] = v[j];
            });
            if constexpr (COMBINER) {
                bss_mbar_wait(mbarPF, parityPF);  // the step's K'
                parityPF ^= 1;
            } else {
                key_in(buf, next < n);
            }
            bss_sync<THREADS>();
            BSS_MARK(3);
            {
                const uint32_t c = threadIdx.x / P, q = threadIdx.x % P, pos = rank * P + q;
                const uint32_t off = bsw_pad<F3>(q);
                auto row = [&](int r) { return X + r * PP; };
                uint64_t out[1];
                if constexpr (G == 1 || PRE) {
                    bsf_mac_by<1, ROWS>(out, row, off, [&](int r, int) { return key[(r * K1 + c) * P + q]; });
                } else if constexpr (COMBINER) {
                    bsf_mac_by<1, ROWS>(out, row, off, [&](int r, int) { return KP[(r * K1 + c) * P + q]; });
                } else {
                    // No per-term branches (SKIP false; the key buffer
                    // holds every term's words, read and multiplied by 0
                    // for a missing one): the seven terms' chains then
                    // interleave. One sample grouped by 3: 1.369 -> 1.302 ms
                    // (H200, kernels/NOTES.md session 7).
                    bsf_mac_group_by<N, K1, 1, ROWS, NT, false>(
                        out, row, off, [&](int u, int r, int) { return key[((u * ROWS + r) * K1 + c) * P + q]; }, e,
                        psiPow, pos);
                }
                // The inverse stage 3 where the multiply-accumulate left
                // its outputs, in registers: lane p = q mod F3 of the F3
                // lanes of a transform holds its input brv(p) (positions
                // hold the forward transform's outputs in bit-reversed
                // order), so a Cooley-Tukey network on bit-reversed input
                // gives output p in lane p (hyb_ct_inv_lazy's map): level
                // s joins lanes p and p ^ 2^s, the upper one's value times
                // w3[s]. Then times T'_2 into Y2.
                uint64_t a = out[0];
#pragma unroll
                for (int lv = 0; lv < LG3; lv++) {
                    const uint64_t b = __shfl_xor_sync(0xFFFFFFFFu, a, 1 << lv);
                    const bool upper = (q >> lv) & 1;
                    const uint64_t t = lz_mul(upper ? a : b, w3[lv]);
                    a = upper ? lz_sub(b, t) : lz_add(a, t);
                }
                Y2[c * PP + off] = lz_mul(a, twInv2[q % M]);
            }
            bss_sync<THREADS>();
            if constexpr (COMBINER) {
                if (threadIdx.x == 0) bss_mbar_arrive(mbarPE);  // nobody reads K' any more
            } else if constexpr (PRODUCER) {
                if (threadIdx.x == 0) bss_mbar_arrive(mbarE + buf);  // nobody reads it any more
            }
            BSS_MARK(4);
            // The inverse stage 2, times T'_1, sent to the owners of the
            // stage-1 columns.
            bss_for_roles<BSS_R_I2, THREADS>(K1 * B * F3, [&](auto rc, uint32_t x) {
                constexpr int S = decltype(rc)::value, H = F2 / BSS_R_I2, LG = hyb_lg<F2>::v;
                const uint32_t c = x / (B * F3), t2 = x % (B * F3), c3 = t2 % F3;
                const uint32_t base = (t2 / F3) * M + c3;  // local position of input 0
                const uint64_t* V = Y2 + c * PP;
                uint64_t v[F2];
                hyb_for<F2>([&](auto kc) {
                    constexpr int k = decltype(kc)::value;
                    v[k] = V[bsw_pad<F3>(base + F3 * hyb_brv(k, LG))];
                });
                hyb_ct_inv_lazy<F2>(v);
                hyb_for<H>([&](auto jc) {
                    constexpr int j = S * H + decltype(jc)::value;
                    const uint32_t q = base + F3 * hyb_brv(j, LG), p = rank * P + q, jj = p / M, t = p % M;
                    bss_st_async(cluster, Z + c * P + jj * TC + t % TC, t / TC, lz_mul(v[j], twInv1[q]), mbarZ);
                });
            });
            BSS_MARK(5);
            exchanged(mbarZ, parityZ, ZBYTES);
            BSS_MARK(6);
            // C: the inverse stage 1 of the owned columns (its inputs
            // already times T'_1), into ACC: hyb_gs<F1, true>'s map as a
            // decimation-in-frequency network, F * x_m = psi_2F^-m sum_k X_k
            // omega^-mk, whose outputs prune like the other stages'.
            bss_for_roles<BSS_R_I1, THREADS>(K1 * TC, [&](auto rc, uint32_t x) {
                constexpr int S = decltype(rc)::value, H = F1 / BSS_R_I1, LG = hyb_lg<F1>::v;
                const uint32_t c = x / TC, tl = x % TC, t = rank * TC + tl;
                uint64_t v[F1];
                hyb_for<F1>([&](auto kc) {
                    constexpr int k = decltype(kc)::value;
                    v[k] = Z[c * P + hyb_brv(k, LG) * TC + tl];
                });
                hyb_ct_inv_lazy<F1>(v);
                hyb_for<H>([&](auto jc) {
                    constexpr int j = S * H + decltype(jc)::value, m = hyb_brv(j, LG);
                    constexpr int E = (128 - (64 / F1) * m) & 127;  // psi_2F^-m in units of psi_128
                    uint64_t y = hyb_tw<E>(v[j]);                   // canonical
                    if constexpr (hyb_negates<E>()) y = gl_neg(y);
                    bsf_add_centered(G >= 2 ? acc + c * P + m * TC + tl : acc + c * N + t + M * m, y);
                });
            });
            BSS_MARK(7);
            if constexpr (G == 1) {
                // Every block's copy of ACC gets the owned coefficients.
                bss_sync<THREADS>();
                for (uint32_t x = threadIdx.x; x < K1 * P; x += THREADS) {
                    uint32_t c, idx;
                    owned(x, c, idx);
                    const uint32_t v = acc[c * N + idx];
#pragma unroll
                    for (int q = 1; q < C; q++) cluster.map_shared_rank(acc, (rank + q) % C)[c * N + idx] = v;
                }
                BSS_MARK(8);
                cluster.sync();
            } else {
                bss_sync<THREADS>();
            }
            BSS_MARK(9);
#ifdef GOLDFHE_BSS_PROFILE
            bss_steps++;
#endif
            iter = next;
            if constexpr (NBUF == 2) buf ^= 1;
        }

        // Sample extraction of the owned coefficients (bsf_extract).
        uint32_t* out = ext + (uint64_t)s * ((K1 - 1) * N + 1);
        for (uint32_t x = threadIdx.x; x < K1 * P; x += THREADS) {
            uint32_t c, idx;
            owned(x, c, idx);
            const uint32_t v = G >= 2 ? acc[x] : acc[c * N + idx];
            if (c < K1 - 1) {
                out[c * N + ((N - idx) & (N - 1))] = idx == 0 ? v : 0u - v;
            } else if (idx == 0) {
                out[(K1 - 1) * N] = v;
            }
        }
        __syncthreads();  // ACC and the amounts are rewritten for the next sample
    }
#ifdef GOLDFHE_BSS_PROFILE
    if (bss_prof) {
        printf("bss pre %lld C=%d G=%d steps %u cycles/step: A %lld s1 %lld B23 %lld mac %lld inv32 %lld s2 %lld inv1 %lld bc %lld s3 %lld\n",
               bss_pr[0] / bss_steps, C, G, bss_steps, bss_pr[1] / bss_steps, bss_pr[2] / bss_steps, bss_pr[3] / bss_steps,
               bss_pr[4] / bss_steps, bss_pr[5] / bss_steps, bss_pr[6] / bss_steps, bss_pr[7] / bss_steps,
               bss_pr[8] / bss_steps, bss_pr[9] / bss_steps);
    }
#endif
    // Nobody leaves while another block may still write into its shared
    // memory.
    cluster.sync();
    if constexpr (PRE) {
        // Every block of the cluster has waited for the flags of its
        // samples' steps, but for those of the steps it skipped
        // (bss_next), which the combine kernel raises all the same,
        // possibly later: rank 0 waits for those too, then zeroes every
        // flag of its samples (each raised to its target only) for the
        // next pass.
        if (rank == 0) {
            for (uint32_t s = blockIdx.x / C; s < count; s += gridDim.x / C) {
                for (uint32_t x = threadIdx.x; x < groups; x += blockDim.x) {
                    uint32_t* f = flags + (uint64_t)s * groups + x;
                    bsp_wait_flag(f, bsp_chunks(N, K1));
                    *f = 0;
                }
            }
        }
    }
}

// One kernel per supported (F1 x F2 x F3, k, l, C) and grouping; clusters
// of C blocks of (k+1) N / C threads, fixed at compile time so that a plain
// launch (grid a multiple of C) forms them.
#define BSS_DEFINE_AS(SUFFIX, G, F1, F2, F3, K, L, C, MINB)                                             \
    extern "C" __global__ void __cluster_dims__(C, 1, 1)                                               \
        __launch_bounds__(bss_block((K + 1) * F1 * F2 * F3 / C, G), MINB)                               \
            goldfhe_bs_split_##F1##x##F2##x##F3##_k##K##_l##L##_c##C##SUFFIX(                          \
                const uint32_t* in, const uint64_t* bk, const uint64_t* tables, uint32_t* ext,          \
                uint32_t n, uint32_t beta, uint32_t offset, uint32_t mu, uint32_t count) {              \
        bss_run<F1, F2, F3, K + 1, L, C, G>(in, bk, tables, ext, n, beta, offset, mu, count);          \
    }
#define BSS_DEFINE(F1, F2, F3, K, L, C, MINB)                  \
    BSS_DEFINE_AS(, 1, F1, F2, F3, K, L, C, MINB)               \
    BSS_DEFINE_AS(_g2, 2, F1, F2, F3, K, L, C, MINB)

// The split kernels that take K' from the combine kernel (PRE; suffix
// _g2p, _g3p) and their combine kernels: kp in place of bk, then the
// steps' flags. MINB 1, as for the combiners' kernels: without them the
// block needs 64 registers a thread (H100, ptxas) and about 48 KB of
// shared memory, so several fit on an SM, and a lone cluster still gets
// an SM per block (WideShape.SharedBytes, kernels/NOTES.md session 9).
#define BSS_DEFINE_PRE(G, F1, F2, F3, K, L, C)                                                         \
    extern "C" __global__ void __cluster_dims__(C, 1, 1)                                               \
        __launch_bounds__(bss_block((K + 1) * F1 * F2 * F3 / C, G, true), 1)                            \
            goldfhe_bs_split_##F1##x##F2##x##F3##_k##K##_l##L##_c##C##_g##G##p(                        \
                const uint32_t* in, const uint64_t* kp, const uint64_t* tables, uint32_t* ext,          \
                uint32_t* flags, uint32_t n, uint32_t beta, uint32_t offset, uint32_t mu, uint32_t count) { \
        bss_run<F1, F2, F3, K + 1, L, C, G, true>(in, kp, tables, ext, n, beta, offset, mu, count, flags); \
    }

// Clusters of 8: on an H200 (TFHELib128, kernels/NOTES.md) clusters of 4
// blocks of 512 threads were slower at every batch size: one sample
// 2.53 ms grouped against 2.21, and at 33 samples slower than the cluster
// kernel (4.77 against 4.16 ms). The time of a step is the latency of each
// phase's few long per-thread chains, which a smaller cluster does not
// shorten.
BSS_DEFINE(8, 8, 16, 1, 3, 8, 2) // TFHELib128: clusters of 8 blocks of 256 threads
BSS_DEFINE(8, 8, 16, 1, 2, 8, 2) // CuFHE80
BSS_DEFINE(8, 8, 8, 3, 2, 8, 2)  // TFHErsDefault

// Grouping factor 3 (suffix _g3): seven TRGSW samples per step, so seven
// key slices per block and step (bss_key_words) and one block per SM
// (MINB 1): TFHELib128 213,120 B of shared memory per block (two key
// buffers of 86,016 B), CuFHE80 151,424 B (two of 57,344 B),
// TFHErsDefault 141,952 B (one key buffer of 114,688 B: bss_key_bufs).
BSS_DEFINE_AS(_g3, 3, 8, 8, 16, 1, 3, 8, 1) // TFHELib128
BSS_DEFINE_AS(_g3, 3, 8, 8, 16, 1, 2, 8, 1) // CuFHE80
BSS_DEFINE_AS(_g3, 3, 8, 8, 8, 3, 2, 8, 1)  // TFHErsDefault

// K' formed by the combine kernel (bootstrap_combine.cuh), grouped by 2
// and by 3.
BSS_DEFINE_PRE(2, 8, 8, 16, 1, 3, 8)  // TFHELib128
BSS_DEFINE_PRE(2, 8, 8, 16, 1, 2, 8)  // CuFHE80
BSS_DEFINE_PRE(2, 8, 8, 8, 3, 2, 8)   // TFHErsDefault
BSS_DEFINE_PRE(3, 8, 8, 16, 1, 3, 8)
BSS_DEFINE_PRE(3, 8, 8, 16, 1, 2, 8)
BSS_DEFINE_PRE(3, 8, 8, 8, 3, 2, 8)
BSP_DEFINE(1024, 1, 3, 2)
BSP_DEFINE(1024, 1, 2, 2)
BSP_DEFINE(512, 3, 2, 2)
BSP_DEFINE(1024, 1, 3, 3)
BSP_DEFINE(1024, 1, 2, 3)
BSP_DEFINE(512, 3, 2, 3)

#endif // GOLDFHE_HAVE_CLUSTERS

#endif // GOLDFHE_BOOTSTRAP_SPLIT_CUH
