// bootstrap_step.cuh: the pieces of a CMux step and of its start and end
// that the one-launch blind-rotation kernels (bootstrap_fused.cuh,
// bootstrap_cluster.cuh) share, each the same computation as one of the
// step kernels of bootstrap.cuh (named with each), so that every kernel
// gives the CPU engine's bits. `threads` threads of a block take part;
// accumulators are 32-bit torus words in shared memory.
//
// Grouped steps (the kernels' template parameter G = 2 or 3; "grouping
// factor G"): G key bits per step with 2^G - 1 TRGSW samples per group,
// the addends of Zhou et al. 2018 ("Faster bootstrapping with multiple
// addends"), the bootstrapping-key unrolling of Bourse et al. 2018, TFHE-rs'
// multi-bit PBS. For G = 2, with a, b the rotation amounts of key bits s, t
// and BK_1, BK_2, BK_3 encrypting s(1-t), (1-s)t and st,
//   ACC += sum_u (X^(e_u) - 1) * (BK_u [.] ACC),  e = (a, b, a + b mod 2N),
// which is the two CMux steps' X^(a s + b t) * ACC (up to noise); for G =
// 3, with amounts a, b, c of bits s, t, v, seven terms BK_u = TRGSW([(s, t,
// v) = bits of u]) and e_u the sum of the amounts picked by the bits of u
// (bit 0: a, bit 1: b, bit 2: c) mod 2N: e = (a, b, a+b, c, a+c, b+c,
// a+b+c). Every term's external product decomposes the same ACC,
// unrotated, so a group costs (k+1)*l forward and k+1 inverse transforms,
// as one CMux step does: 1/G of the transforms per key bit, for (2^G -
// 1)/G times the key. X^e - 1 is applied in the NTT domain: position pos
// holds the value at psi^(2 brv(pos) + 1), so it is psi^(e (2 brv(pos) +
// 1)) - 1 there, read from the table psiPow[i] = psi^i (i < 2N). The last
// group of an n that G does not divide has r = n mod G bits and 2^r - 1
// TRGSWs (u < 2^r): the exponents of the other terms are set to 0, terms
// that are never read.
#ifndef GOLDFHE_BOOTSTRAP_STEP_CUH
#define GOLDFHE_BOOTSTRAP_STEP_CUH

#include "bootstrap.cuh"
#include "ntt_hybrid.cuh"

// The accumulator and the digits (all kernels)
// ----------------------------------------------

// bsf_init_acc: ACC = (0, ..., 0, X^-bbar * mu * (1 + X + ... + X^(N-1))),
// K1 columns of N words (goldfhe_bs_init).
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

// bsf_init_column: one column of ACC: the body column is
// X^-bbar * mu * (1 + X + ... + X^(N-1)), the others 0 (goldfhe_bs_init).
template <int N>
__device__ __forceinline__ void bsf_init_column(uint32_t* col, bool body, uint32_t bbar, uint32_t mu, int threads) {
    for (int j = threadIdx.x; j < N; j += threads) {
        const uint32_t idx = (uint32_t)j + bbar;
        col[j] = body ? ((idx < N || idx >= 2 * N) ? mu : 0u - mu) : 0u;
    }
}

// bsf_rotdiff: (X^a * p - p + offset)[j] mod 2^32 for one column p.
template <int N>
__device__ __forceinline__ uint32_t bsf_rotdiff(const uint32_t* p, uint32_t j, uint32_t a, uint32_t offset) {
    const uint32_t u = (j - a) & (2 * N - 1);
    const uint32_t rot = u < N ? p[u] : 0u - p[u - N];
    return rot - p[j] + offset;
}

// bsf_word: the word a step decomposes at position j of column p: the
// rotated difference bsf_rotdiff for a CMux step (ROT), p[j] + offset for
// a grouped step, whose external products all take ACC unrotated (a is
// then unused).
template <int N, bool ROT>
__device__ __forceinline__ uint32_t bsf_word(const uint32_t* p, uint32_t j, uint32_t a, uint32_t offset) {
    if constexpr (ROT) {
        return bsf_rotdiff<N>(p, j, a, offset);
    } else {
        return p[j] + offset;
    }
}

// bsf_digit_of: the gadget digit at `shift` of the word w, as a
// Goldilocks element (goldfhe_bs_rotate_decompose).
__device__ __forceinline__ uint64_t bsf_digit_of(uint32_t w, uint32_t shift, uint64_t mask, int64_t half) {
    return hyb_gl_of((int64_t)(((uint64_t)w >> shift) & mask) - half);
}

// bsf_digit: bsf_digit_of the word bsf_word.
template <int N, bool ROT = true>
__device__ __forceinline__ uint64_t bsf_digit(const uint32_t* p, uint32_t j, uint32_t a, uint32_t offset,
                                              uint32_t shift, uint64_t mask, int64_t half) {
    return bsf_digit_of(bsf_word<N, ROT>(p, j, a, offset), shift, mask, half);
}

// bsf_mac_by: out_c = sum_r row(r)[o] * keyAt(r, c) mod p, canonical, for
// the K1 output columns c (goldfhe_bs_mac); row(r) points at row r's words
// (lazy or canonical: lz_mac takes any operand), keyAt(r, c) is key row r,
// column c at this position.
template <int K1, int ROWS, class Row, class Key>
__device__ __forceinline__ void bsf_mac_by(uint64_t (&out)[K1], Row row, uint32_t o, Key keyAt) {
    lz_acc sum[K1];
#pragma unroll
    for (int c = 0; c < K1; c++) lz_acc_zero(sum[c]);
#pragma unroll
    for (int r = 0; r < ROWS; r++) {
        const uint64_t x = row(r)[o];
#pragma unroll
        for (int c = 0; c < K1; c++) lz_mac(sum[c], x, keyAt(r, c));
    }
#pragma unroll
    for (int c = 0; c < K1; c++) out[c] = lz_acc_reduce(sum[c]);
}

// bsf_mac_at: bsf_mac_by with key[r][c][pos] from global memory (key
// layout ROWS x K1 x N).
template <int N, int K1, int ROWS, class Row>
__device__ __forceinline__ void bsf_mac_at(uint64_t (&out)[K1], Row row, uint32_t o, const uint64_t* __restrict__ key,
                                           uint32_t pos) {
    bsf_mac_by<K1, ROWS>(out, row, o, [&](int r, int c) { return __ldg(key + (r * K1 + c) * N + pos); });
}

// bsg_terms: the number of exponents (the e arrays) of a step of a kernel
// with grouping factor G: 2^G - 1 for G = 3, and 3 for G = 1 and 2 (G = 1
// uses e[0] only).
__host__ __device__ constexpr int bsg_terms(int g) { return g == 3 ? 7 : 3; }

// bsg_exponents: the exponents e_u of the group whose first key bit is
// `first` (even) of the sample ct (dimension n), at e[u - 1]: e = (a, b,
// a + b mod 2N) for a pair, with a and b the modulus-switched ct[first]
// and ct[first + 1]; (a, 0, 0) for the last, single key bit of an odd n (its
// group has one TRGSW: a zero exponent is a term that is never read).
// Returns false when the step leaves ACC unchanged (a = b = 0), a value the
// same for the whole block, or cluster.
template <int LOGN, class CT>
__device__ __forceinline__ bool bsg_exponents(uint32_t (&e)[3], const CT& ct, uint32_t first, uint32_t n) {
    const bool pair = first + 1 < n;
    const uint32_t a = bs_modswitch(ct[first], LOGN + 1);
    const uint32_t b = pair ? bs_modswitch(ct[first + 1], LOGN + 1) : 0u;
    e[0] = a;
    e[1] = b;
    e[2] = pair ? (a + b) & ((2u << LOGN) - 1) : 0u;
    return (a | b) != 0;
}

// bsg_exponents3: bsg_exponents for G = 3, the group of key bits first,
// first + 1, first + 2 (first a multiple of 3), with amounts a, b, c:
// e[u - 1] = the sum of the amounts picked by the bits of u, mod 2N (e =
// (a, b, a+b, c, a+c, b+c, a+b+c)), for the 2^r - 1 terms of a group of r
// = min(3, n - first) bits, and 0 for the others (a last group of one or
// two bits: terms that are never read). Returns false when the step leaves
// ACC unchanged (a = b = c = 0), the same for the whole block or cluster.
template <int LOGN, class CT>
__device__ __forceinline__ bool bsg_exponents3(uint32_t (&e)[7], const CT& ct, uint32_t first, uint32_t n) {
    const uint32_t r = n - first < 3 ? n - first : 3u, mask = (2u << LOGN) - 1;
    const uint32_t a = bs_modswitch(ct[first], LOGN + 1);
    const uint32_t b = r > 1 ? bs_modswitch(ct[first + 1], LOGN + 1) : 0u;
    const uint32_t c = r > 2 ? bs_modswitch(ct[first + 2], LOGN + 1) : 0u;
#pragma unroll
    for (uint32_t u = 1; u < 8; u++) {
        const uint32_t sum = ((u & 1) ? a : 0u) + ((u & 2) ? b : 0u) + ((u & 4) ? c : 0u);
        e[u - 1] = u < (1u << r) ? sum & mask : 0u;
    }
    return (a | b | c) != 0;
}

// bs_step_exponents: what the blind-rotation step at key bit `first` of
// the sample ct rotates by, and whether it runs: for G = 1 e[0] = the
// modulus-switched ct[first] (0: the step leaves ACC unchanged and is
// skipped, as the CPU skips it); for G = 2 and 3 the group's exponents
// (bsg_exponents, bsg_exponents3). The answer is the same for the whole
// block or cluster. ct is the sample's words: a pointer, or anything
// whose ct[i] is word i (bss_amounts).
template <int G, int LOGN, class CT>
__device__ __forceinline__ bool bs_step_exponents(uint32_t (&e)[bsg_terms(G)], const CT& ct, uint32_t first,
                                                  uint32_t n) {
    static_assert(G >= 1 && G <= 3, "grouping factor 1, 2 or 3");
    if constexpr (G == 1) {
        e[0] = bs_modswitch(ct[first], LOGN + 1);
        return e[0] != 0;
    } else if constexpr (G == 2) {
        return bsg_exponents<LOGN>(e, ct, first, n);
    } else {
        return bsg_exponents3<LOGN>(e, ct, first, n);
    }
}

// bs_prefetch_next_key: asks L2 for the key of the step after the one at
// key bit `iter` (Hopper's cp.async.bulk.prefetch.L2; nothing before sm_90
// and on the host models). The wide and cluster kernels read each step's
// key straight from global memory in the multiply-accumulate, and a key
// larger than L2 (TFHELib128 grouped by 2: 93 MB, 60 MB of L2 on an H200)
// comes from DRAM for whichever block asks first, whose warps then wait for
// it. The blocks, in near lockstep on the same steps, share the request: the
// slice is cut into 16 KiB parts and block b asks for parts b, b + blocks, …
// Only grids of at most one block per SM ask: with two blocks per SM the
// other block's warps hide that wait. On an H200 (kernels
// BenchmarkBlindRotate, TFHELib128, one run, without / with): cluster
// grouped by 2, 1 sample 4.28 / 3.77 ms, 66: 4.09 / 3.77; by 3, 66: 4.23 /
// 3.62; wide t64 grouped by 2, 132 samples 5.52 / 5.26, by 3, 6.12 / 5.56.
// But in the wide t64 kernels the code alone, even skipped, cost 3.6 and
// 8.6% at 4,224 samples (two blocks per SM), so only the cluster and the
// N/8-thread wide kernels have it.
template <int G, int N, int K1, int ROWS>
__device__ __forceinline__ void bs_prefetch_next_key(const uint64_t* bk, uint32_t iter, uint32_t n, uint32_t block,
                                                     uint32_t blocks) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900 && !defined(GOLDFHE_NO_KEY_PREFETCH)
    uint32_t sms;
    asm("mov.u32 %0, %%nsmid;" : "=r"(sms));
    const uint32_t next = iter + G;
    if (next >= n || blocks > sms) return;
    constexpr uint64_t TRGSW = (uint64_t)ROWS * K1 * N;  // words of one TRGSW sample
    // The next group's samples: 2^r - 1 for its r = min(G, n - next) bits
    // (one for G = 1), after (next / G) full groups of 2^G - 1.
    const uint32_t r = min((uint32_t)G, n - next);
    const uint64_t first = G == 1 ? next : (uint64_t)(next / G) * ((1u << G) - 1);
    const uint64_t bytes = (G == 1 ? 1 : ((1u << r) - 1)) * TRGSW * 8;
    const char* src = reinterpret_cast<const char*>(bk + first * TRGSW);
    constexpr uint32_t PART = 16384;
    const uint32_t parts = (uint32_t)((bytes + PART - 1) / PART);
    for (uint32_t p = block; p < parts; p += blocks) {
        const uint32_t size = (uint32_t)min((uint64_t)PART, bytes - (uint64_t)p * PART);
        asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(src + (uint64_t)p * PART), "r"(size) : "memory");
    }
#endif
}

// The psiPow table staged in shared memory: word i (< 2N) at bsg_pad(i) =
// i + (i >> (LOGN-3)), bsg_psi_words(N) words. Why shared memory, and why
// the padding: in the multiply-accumulate lane j of a warp takes position
// pos = 32q + j, so brv(pos) = brv(32q) + 2^(LOGN-5) brv_5(j) and the
// index e (2 brv(pos) + 1) mod 2N of its factor is i_j = c + 2^(LOGN-4) t_j
// with c < 2^(LOGN-4) and t_j = (h + e brv_5(j)) mod 32 (c, h the same for
// every lane): the lanes' indices differ only in their top five bits. Read
// through L1 (__ldg) that is up to 32 cache lines per warp load, and in an
// unpadded shared table every lane's word sits in the same bank pair (for
// N >= 256). With the padding the bank pair is (c + (t_j >> 1)) mod 16,
// and on the lanes of a half-warp (brv_5(j) = 2m all even, or 2m + 1 all
// odd) t_j >> 1 = (h' >> 1) + e m mod 16 (h' = h, or h + e) takes a
// different value for every different index: no bank conflicts inside a
// half-warp (lanes 0-15, 16-31; a warp's 64-bit load is at least two
// shared-memory wavefronts anyway), whatever e. The table is 16 KiB for
// N = 1024, loaded once per block; these kernels run with the largest
// shared-memory carveout, which leaves L1 little room for it next to the
// key and the twiddle tables. (Only the speed depends on the lane layout;
// any thread may read any position.)
template <int LOGN>
__device__ __forceinline__ uint32_t bsg_pad(uint32_t i) {
    static_assert(LOGN >= 3, "bsg_pad needs N >= 8");
    return i + (i >> (LOGN - 3));
}

__host__ __device__ constexpr int bsg_psi_words(int n) { return 2 * n + 16; }

// bsg_swz: the unpadded, swizzled layout of the same table (SWZ below):
// word i at i ^ ((i >> (LOGN-3)) & 15), 2N words. The lanes of a
// half-warp read indices c + 2^(LOGN-4) t_j (above), so (i >> (LOGN-3)) &
// 15 = (t_j >> 1) & 15, which differs for every different index, and XOR
// with the common low bits of c gives each a different bank pair, as the
// padding does. It saves the padding's 16 words (128 bytes), which is
// what three blocks of the flat TFHELib128 kernels need to share an SM
// (bsw_run_flat). LOGN >= 7: the swizzle's bits (0-3) and the bits it
// reads (LOGN-3 and up) are disjoint, so it is a permutation of [0, 2N).
template <int LOGN>
__device__ __forceinline__ uint32_t bsg_swz(uint32_t i) {
    static_assert(LOGN >= 7, "bsg_swz needs N >= 128");
    return i ^ ((i >> (LOGN - 3)) & 15u);
}

// bsg_psi_at: where word i of psiPow sits in shared memory, padded
// (bsg_pad) or swizzled (SWZ: bsg_swz).
template <int LOGN, bool SWZ>
__device__ __forceinline__ uint32_t bsg_psi_at(uint32_t i) {
    if constexpr (SWZ) {
        return bsg_swz<LOGN>(i);
    } else {
        return bsg_pad<LOGN>(i);
    }
}

// bsg_stage_psi: P[bsg_psi_at(i)] = psiPow[i] for i < 2N, or for SWZ (the
// flat kernels' table) psiPow[i] - 1, the factor bsg_factor returns, so
// that its seven lookups a position skip the subtraction (psi^i is in [1,
// p): minus 1 is canonical, no wrap); the caller's next block barrier
// publishes it.
template <int LOGN, bool SWZ = false>
__device__ __forceinline__ void bsg_stage_psi(uint64_t* P, const uint64_t* __restrict__ psiPow, int threads) {
    for (uint32_t i = threadIdx.x; i < (2u << LOGN); i += threads) {
        P[bsg_psi_at<LOGN, SWZ>(i)] = __ldg(psiPow + i) - (SWZ ? 1 : 0);
    }
}

// bsg_odd: 2 brv(pos) + 1, the exponent of psi at NTT-domain position pos:
// X^e is psi^(e bsg_odd(pos)) there.
template <int LOGN>
__device__ __forceinline__ uint32_t bsg_odd(uint32_t pos) {
    return 2 * (__brev(pos) >> (32 - LOGN)) + 1;
}

// bsg_factor: m = psi^(e odd) - 1, X^e - 1 in the NTT domain at the
// position of odd = bsg_odd(pos), from P (bsg_pad layout, or for SWZ
// bsg_swz's, holding psi^i - 1: bsg_stage_psi). psi^i is in [1, p): minus
// 1 is canonical, no wrap (psi^0 - 1 = 0 for e = 0). e odd < 2^28.
template <int LOGN, bool SWZ = false>
__device__ __forceinline__ uint64_t bsg_factor(const uint64_t* P, uint32_t e, uint32_t odd) {
    return P[bsg_psi_at<LOGN, SWZ>((e * odd) & ((2u << LOGN) - 1))] - (SWZ ? 0 : 1);
}

// bsf_mac_group_by: the multiply-accumulate of a grouped step, for NC
// output columns c:
//   out_c = sum_u m_u[pos] * (sum_r row(r)[o] * keyAt(u, r, c)) mod p,
// canonical, over the terms u with e[u] != 0, where keyAt(u, r, c) is term
// u's key row r, column c at this position (the group's TRGSW samples one
// after another, each in bsf_mac_at's layout) and m_u[pos] = psi^(e_u (2 brv(pos)
// + 1)) - 1, the NTT-domain X^(e_u) - 1, from P (bsg_pad layout); NT terms
// (3 for G = 2, 7 for G = 3: bsg_terms). A term with e_u = 0 has m_u = 0
// and is skipped (the same branch for the whole block or cluster), so a
// last group of fewer than G key bits never reads past its TRGSWs. The
// rows are read once into registers (the cluster kernel reads them from
// other blocks' shared memory) and serve all the terms; each term's inner
// sum is reduced before its product with m_u, so every accumulator holds
// at most ROWS (resp. NT) products, to a lazy value (lz_acc_reduce_lazy:
// lz_mac takes any operand; kernels/NOTES.md session 18: 0.7-0.9% off
// the TFHELib128 wide kernels grouped by 2 and 3). With SKIP false no
// term is skipped (a term of e_u = 0 is a product with m_u = 0), so that
// the terms have no branches between them and their chains interleave;
// keyAt must then read, for the terms of a last group's missing TRGSW
// samples, any word within bounds (the split kernel's key buffer). In the
// wide kernels its time goes to the FMA pipe, four quarter-rate IMAD.WIDE
// per product, not to the key loads (kernels/NOTES.md, session 11: the
// wide t64 kernel with no key loads at all was no faster).
//
// AHEAD (with SKIP): term u + 1's ROWS x NC key words are loaded into
// registers inside term u's branch, right after its products and before
// its reductions (keyAt(u + 1, r, c, dep) with dep a false dependency on
// the products, 0 at run time, so that ptxas issues them there and not
// earlier, where they would need as many registers again), or in the
// branch of a skipped term u; term 0's before the loop. A term's loads
// then wait out the previous term's reductions instead of stalling its
// own products. keyAt must read, for a term of e_u = 0, any word within
// bounds (its skipped products never use it). The words live in the
// caller's kio across calls: it holds term 0's on entry (bsf_key_term0
// for a first position), and the last term loads into it the words
// keyAt(NT, r, c, dep) gives, term 0 of the caller's next position, when
// nextpos < N, so that those too arrive during a term of their own
// (t64_g3 as above: 102.8 -> 102.1 ms). Without AHEAD kio is unused.
// TFHELib128's wide t64 kernel grouped by 3 (seven terms of 12 words, one
// branch each), 3,960 samples on an H100: 108.2 -> 102.8 ms. Grouped by 2,
// whose branch-free terms issue all 36 loads at once, per-term branches
// with AHEAD lost: 104.9 -> 106.1 (kernels/NOTES.md session 19).
// SWZ: P in the bsg_swz layout, holding psi^i - 1 (bsg_stage_psi).
// keyPair (AHEAD, NC = 2 only; bsf_mac_group_at's PAIR): keyPair(u, r,
// dep) is the 16-byte-aligned address of row r's two words of term u
// (u = NT: the next position's term 0), whose one 16-byte load replaces
// keyAt's two 8-byte loads.
template <int N, int K1, int NC, int ROWS, int NT, bool SKIP = true, bool AHEAD = false, bool SWZ = false, class Row,
          class Key, class KeyPair = std::nullptr_t>
__device__ __forceinline__ void bsf_mac_group_by(uint64_t (&out)[NC], Row row, uint32_t o, Key keyAt,
                                                 const uint32_t (&e)[NT], const uint64_t* P, uint32_t pos,
                                                 uint64_t (*kio)[NC] = nullptr, uint32_t nextpos = N,
                                                 KeyPair keyPair = nullptr) {
    constexpr bool PAIR = !std::is_same_v<KeyPair, std::nullptr_t>;
    static_assert(!PAIR || (AHEAD && NC == 2), "paired key loads: AHEAD, two columns");
    static_assert(SKIP || !AHEAD, "AHEAD loads within the terms' branches");
    constexpr int LOGN = hyb_lg<N>::v;
    uint64_t x[ROWS];
#pragma unroll
    for (int r = 0; r < ROWS; r++) x[r] = row(r)[o];
    const uint32_t odd = bsg_odd<LOGN>(pos);
    lz_acc total[NC];
#pragma unroll
    for (int c = 0; c < NC; c++) lz_acc_zero(total[c]);
    auto load = [&](int u, uint32_t dep) {  // AHEAD: term u's words into kio
        if constexpr (PAIR) {
#pragma unroll
            for (int r = 0; r < ROWS; r++) {
                const ulonglong2 v = __ldg(reinterpret_cast<const ulonglong2*>(keyPair(u, r, dep)));
                kio[r][0] = v.x;
                kio[r][1] = v.y;
            }
        } else if constexpr (AHEAD) {
#pragma unroll
            for (int r = 0; r < ROWS; r++)
#pragma unroll
                for (int c = 0; c < NC; c++) kio[r][c] = keyAt(u, r, c, dep);
        }
    };
#pragma unroll
    for (int u = 0; u < NT; u++) {
        const bool next = AHEAD && (u + 1 < NT || nextpos < N);
        if (SKIP && e[u] == 0) {
            if (next) load(u + 1, 0);
            continue;
        }
        // m_u: AHEAD reads it after the next term's loads (fewer registers
        // held through the products), else first (the other kernels' SASS
        // depends on that order).
        uint64_t m = AHEAD ? 0 : bsg_factor<LOGN, SWZ>(P, e[u], odd);
        lz_acc sum[NC];
#pragma unroll
        for (int c = 0; c < NC; c++) lz_acc_zero(sum[c]);
#pragma unroll
        for (int r = 0; r < ROWS; r++) {
#pragma unroll
            for (int c = 0; c < NC; c++) {
                if constexpr (AHEAD) {
                    lz_mac(sum[c], x[r], kio[r][c]);
                } else {
                    lz_mac(sum[c], x[r], keyAt(u, r, c));
                }
            }
        }
        if constexpr (AHEAD) {
            if (next) load(u + 1, sum[NC - 1].top >> 31);  // top < ROWS: dep = 0
            m = bsg_factor<LOGN, SWZ>(P, e[u], odd);
        }
#pragma unroll
        for (int c = 0; c < NC; c++) lz_mac(total[c], lz_acc_reduce_lazy(sum[c]), m);
    }
#pragma unroll
    for (int c = 0; c < NC; c++) out[c] = lz_acc_reduce(total[c]);
}

// bsf_branch_free: whether a grouped step's NT terms run without branches
// (bsf_mac_group_by's SKIP false), which pays only while a position's key
// loads for all terms, NT * ROWS * NC, stay few enough for ptxas to issue
// them ahead of their products. Grouped by 2 on two columns (36 loads) the
// branch-free terms are faster (H200, TFHELib128, kernels/NOTES.md
// session 7: cluster kernel 66 samples 3.78 -> 3.51 ms, wide t64 4,224
// samples 130.8 -> 129.5 ms). Grouped by 3 the seven terms at once are
// much slower (wide t64, 4,224 samples: 128 -> 225 ms), and so are
// k = 3's four columns grouped by 2 (96 loads: wide t32 at 1,056 samples
// 80.7 against 37.1 ms with branches, kernels/NOTES.md session 15): ptxas
// then places most loads just before their products.
__host__ __device__ constexpr bool bsf_branch_free(int nt, int rows, int nc) {
    return nt == 3 && nt * rows * nc <= 36;
}

// bsf_mac_group_at: bsf_mac_group_by with key[u][r][c] at key + ((u * ROWS
// + r) * K1 + c) * N + pos in global memory. With SKIP false or AHEAD a
// term of e_u = 0 reads term 0's key (which every group has) instead of
// its own, which a last group may lack. SKIP's default is
// bsf_branch_free's answer.
template <int N, int K1, int NC, int ROWS, int NT, bool SKIP = !bsf_branch_free(NT, ROWS, NC), bool AHEAD = false,
          bool SWZ = false, bool PAIR = false, class Row>
__device__ __forceinline__ void bsf_mac_group_at(uint64_t (&out)[NC], Row row, uint32_t o,
                                                 const uint64_t* __restrict__ key, const uint32_t (&e)[NT],
                                                 const uint64_t* P, uint32_t pos, uint64_t (*kio)[NC] = nullptr,
                                                 uint32_t nextpos = N) {
    constexpr uint64_t TERM = (uint64_t)ROWS * K1 * N;
    // AHEAD: term u's offset as a 32-bit word count (a select of two
    // 64-bit pointers per term, as below, cost TFHELib128's t64_g3 16
    // bytes of spill, nvcc 11.8; the other kernels keep that form, and
    // their SASS), term 0's for e_u = 0; u = NT: term 0 at nextpos (kio).
    auto termAt = [&](int u) { return u < NT && e[u < NT ? u : 0] != 0 ? (uint32_t)(u * TERM) : 0u; };  // < 2^32
    auto posAt = [&](int u) { return u < NT ? pos : nextpos; };
    auto keyAt = [&](int u, int r, int c, uint32_t dep = 0) {
        if constexpr (AHEAD) {
            return __ldg(key + posAt(u) + dep + termAt(u) + (r * K1 + c) * N);
        } else {
            const uint64_t* k = SKIP || e[u] != 0 ? key + u * TERM : key;
            return __ldg(k + (r * K1 + c) * N + pos);
        }
    };
    if constexpr (PAIR) {
        // key[u][r][pos][c] at key + u TERM + (r N + pos) K1 + c: the K1 =
        // 2 words of a position side by side, one 16-byte load.
        auto keyPair = [&](int u, int r, uint32_t dep) {
            return key + posAt(u) * K1 + dep + termAt(u) + r * N * K1;  // pointer sums: r's an immediate
        };
        bsf_mac_group_by<N, K1, NC, ROWS, NT, SKIP, AHEAD, SWZ>(out, row, o, keyAt, e, P, pos, kio, nextpos, keyPair);
    } else {
        bsf_mac_group_by<N, K1, NC, ROWS, NT, SKIP, AHEAD, SWZ>(out, row, o, keyAt, e, P, pos, kio, nextpos);
    }
}

// bsf_key_term0: kio[r][c] = key[0][r][c] at position pos (bsf_mac_group_at's
// layout), the words a first call of bsf_mac_group_at with kio takes.
template <int N, int K1, int NC, int ROWS, bool PAIR = false>
__device__ __forceinline__ void bsf_key_term0(uint64_t (&kio)[ROWS][NC], const uint64_t* __restrict__ key,
                                              uint32_t pos) {
#pragma unroll
    for (int r = 0; r < ROWS; r++)
#pragma unroll
        for (int c = 0; c < NC; c++) kio[r][c] = PAIR ? __ldg(key + (r * N + pos) * K1 + c) : __ldg(key + pos + (r * K1 + c) * N);
}

// bsf_mac_group_pipe: one output column c of bsf_mac_group_by (out =
// sum_u m_u[pos] sum_r row(r)[o] key_u[r][c][pos]) for a grouped step of
// NT terms, every term computed (a term of e_u = 0 reads term 0's key
// words and has m_u = 0: no branch between the terms), the next term's
// ROWS key words loaded before this term's products. kc points at term 0's
// row 0, column c, position pos of the step's key (bsf_mac_group_at's
// layout: row r at kc + r K1 N, term u at + u ROWS K1 N). A false
// dependency (a canonical sum is never 2^64 - 1) keeps the loads one term
// ahead, so that ptxas does not hoist all of them (kernels/NOTES.md,
// session 11: the one-block-per-SM t128 kernel grouped by 3, 132 samples
// 5.04 -> 4.59 ms on an H100; the two-block t64 kernels lose).
template <int N, int K1, int ROWS, int NT, class Row>
__device__ __forceinline__ uint64_t bsf_mac_group_pipe(Row row, uint32_t o, const uint64_t* __restrict__ kc,
                                                       const uint32_t (&e)[NT], const uint64_t* P, uint32_t pos) {
    constexpr int LOGN = hyb_lg<N>::v;
    constexpr uint64_t TERM = (uint64_t)ROWS * K1 * N;
    uint64_t x[ROWS];
#pragma unroll
    for (int r = 0; r < ROWS; r++) x[r] = row(r)[o];
    const uint32_t odd = bsg_odd<LOGN>(pos);
    lz_acc total;
    lz_acc_zero(total);
    uint64_t k[ROWS];
#pragma unroll
    for (int r = 0; r < ROWS; r++) k[r] = __ldg(kc + r * K1 * N);
    uint32_t dep = 0;
#pragma unroll
    for (int u = 0; u < NT; u++) {
        uint64_t kn[ROWS];
        if (u + 1 < NT) {
            const uint64_t* kt = kc + (e[u + 1] != 0 ? (uint64_t)(u + 1) * TERM : 0) + dep;
#pragma unroll
            for (int r = 0; r < ROWS; r++) kn[r] = __ldg(kt + r * K1 * N);
        }
        const uint64_t m = bsg_factor<LOGN>(P, e[u], odd);
        lz_acc sum;
        lz_acc_zero(sum);
#pragma unroll
        for (int r = 0; r < ROWS; r++) lz_mac(sum, x[r], k[r]);
        const uint64_t v = lz_acc_reduce(sum);
        dep = v == ~0ull ? 1u : 0u;
        lz_mac(total, v, m);
        if (u + 1 < NT) {
#pragma unroll
            for (int r = 0; r < ROWS; r++) k[r] = kn[r];
        }
    }
    return lz_acc_reduce(total);
}

// bsf_add_centered: *p += the centred representative of v mod 2^32, v
// canonical (goldfhe_bs_add_centered).
__device__ __forceinline__ void bsf_add_centered(uint32_t* p, uint64_t v) {
    *p += (uint32_t)v - (v > GL_P / 2 ? 1u : 0u);
}

// bsf_extract: sample extraction of coefficient 0 of acc (K1 columns) into
// e, K1-1 columns of N words then the body (goldfhe_bs_extract).
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

// bsf_extract_column: the part of the sample extraction that column c of
// ACC gives: e[c*N .. c*N + N-1] for a mask column c < k, the body e[k*N]
// for c = k (goldfhe_bs_extract).
template <int N>
__device__ __forceinline__ void bsf_extract_column(const uint32_t* col, uint32_t* e, int c, int k, int threads) {
    if (c == k) {
        if (threadIdx.x == 0) e[k * N] = col[0];
        return;
    }
    for (int i = threadIdx.x; i < N; i += threads) e[c * N + i] = i == 0 ? col[0] : 0u - col[N - i];
}

// The three-stage transform of the wide and cluster kernels
// ---------------------------------------------------------
// N = F1 * F2 * F3, the stages of the hybrid plan (F1, F2, F3) (smallntt.Plan
// doc), on one polynomial W in shared memory padded by one word after every
// F3 (position p at bsw_pad(p)); each call is one small transform, t its
// index in the stage. tables: T_1, T'_1 (N words), T_2, T'_2 (F2 * F3).

template <int F3>
__device__ __forceinline__ uint32_t bsw_pad(uint32_t p) { return p + p / F3; }

// The stages below address position q + F3 m (m a compile-time constant)
// as bsw_pad(q) + (F3 + 1) m, and a table word at k + c as (table + c)[k]:
// the same words, but ptxas, which cannot rule out the 32-bit wrap of q +
// F3 m, otherwise recomputed every padded index and every 64-bit table
// address (LOP3, LEA.HI, IMAD, IMAD.WIDE per word: 9% of stage 2's
// instructions in the wide kernels, kernels/NOTES.md session 14).

// bsw_fwd1_digits_to: stage 1 (twisted) of one column t of a digit row:
// the digit at `shift` of word(i), the word at coefficient t + (N/F1) * i
// (i < F1), through the F1-point transform and the twiddle tw(j) = T_1[t +
// (N/F1) j], each output j for which keep(j) holds handed to store(j,
// value) (keep(j) constant after unrolling: the outputs not kept, and the
// butterflies only they need, are never computed). Digits of beta <= 15 bits
// take the exact first level (hyb_ct_digits); small is that condition.
template <int F1, int F2, int F3, class Word, class Store, class Tw, class Keep>
__device__ __forceinline__ void bsw_fwd1_digits_to(Word word, Store store, uint32_t shift, uint32_t beta, bool small,
                                                   Tw tw, Keep keep) {
    uint64_t r[F1];
    if (small) {
        const uint32_t mask32 = (1u << beta) - 1, half32 = 1u << (beta - 1);
        int32_t d[F1];
#pragma unroll
        for (int i = 0; i < F1; i++) d[i] = (int32_t)((word(i) >> shift) & mask32) - (int32_t)half32;
        hyb_ct_digits<F1>(d, r);
    } else {
        const uint64_t mask = (1ull << beta) - 1;
        const int64_t half = (int64_t)1 << (beta - 1);
#pragma unroll
        for (int i = 0; i < F1; i++) r[i] = bsf_digit_of(word(i), shift, mask, half);
        hyb_ct_lazy<F1, true>(r);
    }
#pragma unroll
    for (int j = 0; j < F1; j++) {
        if (keep(j)) store(j, lz_mul(r[j], tw(j)));
    }
}

// bsw_fwd1_digits: bsw_fwd1_digits_to for column p of ACC rotated by a
// (ROT: bsf_word), column t < N/F1, into the padded row W.
template <int F1, int F2, int F3, bool ROT = true>
__device__ __forceinline__ void bsw_fwd1_digits(uint64_t* W, const uint32_t* p, uint32_t t, uint32_t a, uint32_t offset,
                                                uint32_t shift, uint32_t beta, bool small,
                                                const uint64_t* __restrict__ tw1) {
    constexpr uint32_t N = F1 * F2 * F3, T1 = N / F1;
    uint64_t* Wt = W + bsw_pad<F3>(t);  // T1 is a multiple of F3
    const uint64_t* __restrict__ tw1t = tw1 + t;
    bsw_fwd1_digits_to<F1, F2, F3>([&](int i) { return bsf_word<N, ROT>(p, t + T1 * i, a, offset); },
                                   [&](int j, uint64_t v) { Wt[(T1 + T1 / F3) * j] = v; }, shift, beta, small,
                                   [&](int j) { return __ldg(tw1t + T1 * j); }, [](int) { return true; });
}

// bsw_tw2: x times the stage-2 twiddle of output j (T_2 or T'_2 at F3 j +
// c, read as tw() only for j > 0), canonical, x any. Row 0 of T_2 and
// T'_2 is omega^(0 c) = 1 (smallntt.Plan.StageTables: T_s[t r + c] =
// omega^(brv(r) c)), so output 0 needs only x's canonical value:
// lz_canon's four ALU instructions in place of lz_mul's product and
// reduction, on 1/F2 of the stage's outputs.
template <class Tw>
__device__ __forceinline__ uint64_t bsw_tw2(uint64_t x, int j, Tw tw) {
    return j == 0 ? lz_canon(x) : lz_mul(x, tw());
}

// bsw_fwd2_by: stage 2, transform t < F1 * F3 (block t / F3, column t %
// F3), the twiddle T_2[F3 j + c] of output j read as tw(c, j) (j > 0:
// bsw_tw2). Its inputs are stage 1's lz_mul products, canonical
// (hyb_ct_lazy's CANON_IN).
template <int F1, int F2, int F3, class Tw>
__device__ __forceinline__ void bsw_fwd2_by(uint64_t* W, uint32_t t, Tw tw) {
    const uint32_t c = t % F3, base = (t / F3) * (F2 * F3) + c;
    uint64_t* Wb = W + bsw_pad<F3>(base);
    uint64_t r[F2];
#pragma unroll
    for (int i = 0; i < F2; i++) r[i] = Wb[(F3 + 1) * i];
    hyb_ct_lazy<F2, false, 0, false, true>(r);
#pragma unroll
    for (int j = 0; j < F2; j++) Wb[(F3 + 1) * j] = bsw_tw2(r[j], j, [&] { return tw(c, j); });
}

// bsw_fwd2: bsw_fwd2_by with T_2 in global memory.
template <int F1, int F2, int F3>
__device__ __forceinline__ void bsw_fwd2(uint64_t* W, uint32_t t, const uint64_t* __restrict__ tw2) {
    bsw_fwd2_by<F1, F2, F3>(W, t, [&](uint32_t c, int j) { return __ldg(tw2 + c + F3 * j); });
}

// bsw_fwd3: stage 3 on F3 consecutive positions, transform t < N / F3;
// canonical inputs (stage 2's lz_mul products), lazy outputs (the
// multiply-accumulate takes them).
template <int F3>
__device__ __forceinline__ void bsw_fwd3(uint64_t* W, uint32_t t) {
    uint64_t r[F3];
#pragma unroll
    for (int i = 0; i < F3; i++) r[i] = W[t * (F3 + 1) + i];
    hyb_ct_lazy<F3, false, 0, false, true>(r);
#pragma unroll
    for (int j = 0; j < F3; j++) W[t * (F3 + 1) + j] = r[j];
}

// bsw_inv3: the inverse of stage 3, lazy outputs (the next lz_mul takes
// them); canonical inputs (the multiply-accumulate's lz_acc_reduce).
template <int F3>
__device__ __forceinline__ void bsw_inv3(uint64_t* V, uint32_t t) {
    uint64_t r[F3];
#pragma unroll
    for (int i = 0; i < F3; i++) r[i] = V[t * (F3 + 1) + i];
    hyb_gs_ct_lazy<F3, true>(r);
#pragma unroll
    for (int j = 0; j < F3; j++) V[t * (F3 + 1) + j] = r[j];
}

// bsw_inv2: the inverse of stage 2, transform t < F1 * F3.
template <int F1, int F2, int F3>
__device__ __forceinline__ void bsw_inv2(uint64_t* V, uint32_t t, const uint64_t* __restrict__ twInv2) {
    const uint32_t c = t % F3, base = (t / F3) * (F2 * F3) + c;
    uint64_t* Vb = V + bsw_pad<F3>(base);
    const uint64_t* __restrict__ twc = twInv2 + c;
    uint64_t r[F2];
#pragma unroll
    for (int j = 0; j < F2; j++) r[j] = bsw_tw2(Vb[(F3 + 1) * j], j, [&] { return __ldg(twc + F3 * j); });
    hyb_gs_ct_lazy<F2, true>(r);  // canonical in: bsw_tw2
#pragma unroll
    for (int i = 0; i < F2; i++) Vb[(F3 + 1) * i] = r[i];
}

// bsw_inv1_add: the inverse of stage 1 (with T'_1's scaling), column t <
// N / F1, each coefficient's centred value added into the ACC column p.
template <int F1, int F2, int F3>
__device__ __forceinline__ void bsw_inv1_add(const uint64_t* V, uint32_t* p, uint32_t t,
                                             const uint64_t* __restrict__ twInv1) {
    constexpr uint32_t T1 = F2 * F3;
    const uint64_t* Vt = V + bsw_pad<F3>(t);
    const uint64_t* __restrict__ twt = twInv1 + t;
    uint32_t* pt = p + t;
    uint64_t r[F1];
#pragma unroll
    for (int j = 0; j < F1; j++) r[j] = lz_mul(Vt[(T1 + T1 / F3) * j], __ldg(twt + T1 * j));
    hyb_gs<F1, true>(r);  // canonical in (lz_mul), canonical out
#pragma unroll
    for (int i = 0; i < F1; i++) bsf_add_centered(pt + T1 * i, r[i]);
}

#endif // GOLDFHE_BOOTSTRAP_STEP_CUH
