// bootstrap.cuh: the gate-bootstrapping kernels of the GPU engine
// (DESIGN.md sections 2 and 6; CGGI20 Alg. 3), first version: every step
// of a batch runs on the GPU, one kernel per step, with the polynomial
// transforms done by the NTT kernels (ntt.cuh, ntt_hybrid.cuh) between them.
// Each kernel computes exactly what the CPU engine (package tfhe) computes,
// so the two engines give bit-identical outputs:
//
//   goldfhe_bs_init              modulus switching of a batch of TLWE samples
//                                (torus.ModSwitchPow2) and the accumulator
//                                X^-b * (0, ..., 0, mu * (1 + X + ... + X^(N-1)))
//                                (tfhe initAccumulator)
//   goldfhe_bs_rotate_decompose  X^a * ACC - ACC per column plus the gadget
//                                offset, split into l signed digits as
//                                Goldilocks elements (tfhe cmuxRotate and
//                                decomposeColumn)
//   goldfhe_bs_mac               sum over the (k+1)*l rows of digit * BK_i row
//                                in the NTT domain, per output column (tfhe
//                                mulAccRows)
//   goldfhe_bs_add_centered      ACC += the centred value mod 2^32 of each
//                                inverse-transformed coefficient (tfhe
//                                productTo, smallntt.ToInt64Centered)
//   goldfhe_bs_extract           sample extraction of coefficient 0 (tfhe
//                                SampleExtractTo)
//   goldfhe_bs_keyswitch         table-driven key switching (tfhe keySwitch)
//   goldfhe_bs_keyswitch_s16_b*  the same, samples tiled (basebit 2 and 3)
//   goldfhe_bs_keyswitch_mma_b2  the same on the tensor cores (basebit 2, t <= 8)
//   goldfhe_bs_keyswitch_mma_b3  the same on the tensor cores (basebit 3)
//   goldfhe_bs_keyswitch_packed_b2  the same, its table packed for the tensor
//                                cores (kernels.PackKSTable; basebit 2, t <= 8)
//
// Layouts (all arrays of one batch of `count` ciphertexts, ciphertext after
// ciphertext, 32-bit torus values as uint32_t):
//   TLWE sample      (a_0 .. a_{dim-1}, b): dim + 1 words
//   abar             count x n rotation amounts in [0, 2N)
//   acc              count x (k+1) x N: the accumulator TRLWE, column c is
//                    a_c for c < k and b for c = k
//   dec              count x (k+1) x l x N digits, row c*l+i = digit i of
//                    column c (tfhe evaluatorBuffers.dec)
//   prod             count x (k+1) x N Goldilocks values
//   bk               n x (k+1)*l x (k+1) x N: tfhe NTTBootstrappingKey.Data()
//   table            the key-switching table, entry ((i*t + j-1)*base/2 +
//                    m-1)*(n+1) + coordinate (tfhe KeySwitchingKey)
// N is a power of two passed as logN. The flat kernels take any grid of
// one-dimensional blocks and stride over their index space.
#ifndef GOLDFHE_BOOTSTRAP_CUH
#define GOLDFHE_BOOTSTRAP_CUH

#include "goldilocks.cuh"

// GOLDFHE_FAULT_POINT: nothing in goldfhe.fatbin. A build with
// -DGOLDFHE_FAULT_AFTER=n (`make fault-fatbin`, for bootstrap's
// TestGPUFault) makes the n-th launch of any key-switching kernel trap,
// counted per loaded module: the CUDA context is then unusable, as after
// any kernel fault, which no call of the library can otherwise cause.
#ifdef GOLDFHE_FAULT_AFTER
__device__ unsigned int goldfhe_fault_launches;
#define GOLDFHE_FAULT_POINT()                                                                            \
    do {                                                                                                 \
        if (blockIdx.x == 0 && blockIdx.y == 0 && blockIdx.z == 0 && threadIdx.x == 0 &&                \
            threadIdx.y == 0 && atomicAdd(&goldfhe_fault_launches, 1u) + 1 == (GOLDFHE_FAULT_AFTER)) { \
            __trap();                                                                                    \
        }                                                                                                \
    } while (0)
#else
#define GOLDFHE_FAULT_POINT() \
    do {                      \
    } while (0)
#endif

// bs_modswitch is torus.ModSwitchPow2: t rounded to a multiple of
// 2^(32 - logm), as an integer mod 2^logm (1 <= logm <= 31).
__device__ __forceinline__ uint32_t bs_modswitch(uint32_t t, uint32_t logm) {
    return (uint32_t)(((((uint64_t)t) >> (31 - logm)) + 1) >> 1) & ((1u << logm) - 1);
}

__device__ __forceinline__ uint64_t bs_first() {
    return (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ uint64_t bs_stride() {
    return (uint64_t)gridDim.x * blockDim.x;
}

// goldfhe_bs_init: for each sample s of in (dimension n), abar[s][i] =
// ModSwitchPow2(a_i, logN + 1) and acc[s] = (0, ..., 0, X^-bbar * v) with
// bbar = ModSwitchPow2(b, logN + 1), v = mu * (1 + X + ... + X^(N-1)):
// coefficient j of X^-bbar * v is mu when j + bbar < N or j + bbar >= 2N,
// -mu otherwise.
extern "C" __global__ void goldfhe_bs_init(const uint32_t* __restrict__ in, uint32_t* __restrict__ abar,
                                           uint32_t* __restrict__ acc, uint32_t n, uint32_t logN,
                                           uint32_t k, uint32_t mu, uint32_t count) {
    const uint32_t N = 1u << logN;
    const uint64_t accPer = (uint64_t)(k + 1) << logN;
    const uint64_t per = n + accPer;
    const uint64_t total = per * count;
    for (uint64_t x = bs_first(); x < total; x += bs_stride()) {
        const uint64_t s = x / per;
        const uint64_t r = x - s * per;
        const uint32_t* ct = in + s * (n + 1);
        if (r < n) {
            abar[s * n + r] = bs_modswitch(ct[r], logN + 1);
            continue;
        }
        const uint64_t q = r - n;          // position in acc[s]
        const uint32_t col = (uint32_t)(q >> logN);
        const uint32_t j = (uint32_t)q & (N - 1);
        uint32_t v = 0;
        if (col == k) {
            const uint32_t idx = j + bs_modswitch(ct[n], logN + 1);
            v = (idx < N || idx >= 2 * N) ? mu : 0u - mu;
        }
        acc[s * accPer + q] = v;
    }
}

// goldfhe_bs_rotate_decompose: for each sample s, column c and position j,
// with a = abar[s][iter] and p = acc[s][c]:
//   w = (X^a * p)[j] - p[j] + offset  (mod 2^32),
// (X^a * p)[j] = p[t] if t = (j - a) mod 2N < N, else -p[t - N]; then the
// l digits x_i = ((w >> (32 - (i+1)*beta)) mod 2^beta) - 2^(beta-1), each
// written as a Goldilocks element (x + p for x < 0) to dec row c*l + i.
// a = 0 gives all-zero digits (the CPU skips that step; both leave ACC
// unchanged).
extern "C" __global__ void goldfhe_bs_rotate_decompose(const uint32_t* __restrict__ acc,
                                                       const uint32_t* __restrict__ abar,
                                                       uint64_t* __restrict__ dec, uint32_t iter,
                                                       uint32_t n, uint32_t logN, uint32_t k, uint32_t l,
                                                       uint32_t beta, uint32_t offset, uint32_t count) {
    const uint32_t N = 1u << logN;
    const uint64_t mask = (beta >= 64) ? ~0ull : ((1ull << beta) - 1);
    const int64_t half = (int64_t)1 << (beta - 1);
    const uint64_t total = ((uint64_t)count * (k + 1)) << logN;
    for (uint64_t x = bs_first(); x < total; x += bs_stride()) {
        const uint64_t poly = x >> logN;   // s * (k+1) + c
        const uint32_t j = (uint32_t)x & (N - 1);
        const uint64_t s = poly / (k + 1);
        const uint32_t a = abar[s * n + iter];
        const uint32_t* p = acc + (poly << logN);
        const uint32_t t = (j - a) & (2 * N - 1);
        const uint32_t rot = t < N ? p[t] : 0u - p[t - N];
        const uint32_t w = rot - p[j] + offset;
        uint64_t* d = dec + ((poly * l) << logN) + j;
        for (uint32_t i = 0; i < l; i++) {
            const uint32_t shift = 32 - (i + 1) * beta;
            const int64_t v = (int64_t)(((uint64_t)w >> shift) & mask) - half;
            d[(uint64_t)i << logN] = (uint64_t)v + (GL_P & (uint64_t)(v >> 63));
        }
    }
}

// bs_mac_acc adds x * y (128 bits) to the 192-bit (lo, hi, top). x, y < p,
// so the product's high word is at most 2^64 - 2 and hi's carry-in fits.
__device__ __forceinline__ void bs_mac_acc(uint64_t& lo, uint64_t& hi, uint64_t& top, uint64_t x, uint64_t y) {
    const uint64_t pl = x * y;
    const uint64_t ph = __umul64hi(x, y);
    lo += pl;
    const uint64_t h = ph + (lo < pl ? 1 : 0);
    hi += h;
    top += hi < h ? 1 : 0;
}

// bs_mac_cols computes out[c] = sum_r d[r] * key[r][c] mod p for K1 = k + 1
// columns known at compile time: per column three limbs in registers, one
// 192-bit reduction (gl_reduce192; top < rows) per output.
template <int K1>
__device__ __forceinline__ void bs_mac_cols(const uint64_t* __restrict__ d, const uint64_t* __restrict__ key,
                                            uint64_t* __restrict__ out, uint32_t rows, uint32_t logN) {
    uint64_t lo[K1], hi[K1], top[K1];
#pragma unroll
    for (int c = 0; c < K1; c++) lo[c] = hi[c] = top[c] = 0;
    for (uint32_t r = 0; r < rows; r++) {
        const uint64_t x = d[(uint64_t)r << logN];
#pragma unroll
        for (int c = 0; c < K1; c++) {
            bs_mac_acc(lo[c], hi[c], top[c], x, key[((uint64_t)r * K1 + c) << logN]);
        }
    }
#pragma unroll
    for (int c = 0; c < K1; c++) out[(uint64_t)c << logN] = gl_reduce192(lo[c], hi[c], top[c]);
}

// bs_mac_any is bs_mac_cols for any k + 1, one column at a time.
__device__ __forceinline__ void bs_mac_any(const uint64_t* __restrict__ d, const uint64_t* __restrict__ key,
                                           uint64_t* __restrict__ out, uint32_t rows, uint32_t k1, uint32_t logN) {
    for (uint32_t c = 0; c < k1; c++) {
        uint64_t lo = 0, hi = 0, top = 0;
        for (uint32_t r = 0; r < rows; r++) {
            bs_mac_acc(lo, hi, top, d[(uint64_t)r << logN], key[((uint64_t)r * k1 + c) << logN]);
        }
        out[(uint64_t)c << logN] = gl_reduce192(lo, hi, top);
    }
}

// goldfhe_bs_mac: prod[s][c][j] = sum_{r < (k+1)l} dec[s][r][j] * BK_iter[r][c][j]
// mod p, canonical, for NTT-domain position j. dec and bk canonical.
extern "C" __global__ void goldfhe_bs_mac(const uint64_t* __restrict__ dec, const uint64_t* __restrict__ bk,
                                          uint64_t* __restrict__ prod, uint32_t iter, uint32_t logN,
                                          uint32_t k, uint32_t l, uint32_t count) {
    const uint32_t N = 1u << logN;
    const uint32_t k1 = k + 1, rows = k1 * l;
    const uint64_t* key = bk + (((uint64_t)iter * rows * k1) << logN);
    const uint64_t total = (uint64_t)count << logN;
    for (uint64_t x = bs_first(); x < total; x += bs_stride()) {
        const uint64_t s = x >> logN;
        const uint32_t j = (uint32_t)x & (N - 1);
        const uint64_t* d = dec + ((s * rows) << logN) + j;
        uint64_t* out = prod + ((s * k1) << logN) + j;
        switch (k1) {
        case 2: bs_mac_cols<2>(d, key + j, out, rows, logN); break;
        case 3: bs_mac_cols<3>(d, key + j, out, rows, logN); break;
        case 4: bs_mac_cols<4>(d, key + j, out, rows, logN); break;
        default: bs_mac_any(d, key + j, out, rows, k1, logN); break;
        }
    }
}

// goldfhe_bs_add_centered: acc[x] += the representative of prod[x] in
// [-(p-1)/2, (p-1)/2], mod 2^32: for v <= (p-1)/2 that is v mod 2^32, and
// for v > (p-1)/2 it is v - p = v - 1 (mod 2^32), since p = 1 (mod 2^32).
// prod any (reduced first, as smallntt.ToInt64Centered does).
extern "C" __global__ void goldfhe_bs_add_centered(uint32_t* __restrict__ acc, const uint64_t* __restrict__ prod,
                                                   uint64_t total) {
    for (uint64_t x = bs_first(); x < total; x += bs_stride()) {
        const uint64_t v = gl_canon(prod[x]);
        acc[x] += (uint32_t)v - (v > GL_P / 2 ? 1u : 0u);
    }
}

// goldfhe_bs_extract: ext[s] (dimension k*N) = the sample extraction of
// coefficient 0 of acc[s]: ext[c*N] = a_c[0], ext[c*N + i] = -a_c[N - i] for
// 0 < i < N, and the body b[0].
extern "C" __global__ void goldfhe_bs_extract(const uint32_t* __restrict__ acc, uint32_t* __restrict__ ext,
                                              uint32_t logN, uint32_t k, uint32_t count) {
    const uint32_t N = 1u << logN;
    const uint64_t kn = (uint64_t)k << logN;
    const uint64_t per = kn + 1;
    const uint64_t total = per * count;
    for (uint64_t x = bs_first(); x < total; x += bs_stride()) {
        const uint64_t s = x / per;
        const uint64_t r = x - s * per;
        const uint32_t* a = acc + s * (kn + N);
        uint32_t v;
        if (r == kn) {
            v = a[kn];
        } else {
            const uint32_t i = (uint32_t)r & (N - 1);
            const uint32_t* col = a + (r - i);
            v = i == 0 ? col[0] : 0u - col[N - i];
        }
        ext[x] = v;
    }
}

// bs_ks_sign: key switching's sign choice for input word x, all ones
// (decompose -x and negate every term) when x is odd, else 0, and
// bs_ks_signed: x or -x by it. Every key-switching kernel, the CPU engine
// (tfhe keySwitch) and the Go reference (kernels' refKeySwitch) make the
// same choice. For uniform inputs the word decomposed, x or -x, is
// uniform over its parity class, whose bits 1..31 plus the offset are
// uniform either way, and the digits read no lower bit (t * basebit <=
// 31): even and odd words give digits of one distribution, and each table
// row of digit magnitude 2^(basebit-1) is added as often as it is
// subtracted: no error mean shared by a key's outputs.
__device__ __forceinline__ uint32_t bs_ks_sign(uint32_t x) { return 0u - (x & 1u); }
__device__ __forceinline__ uint32_t bs_ks_signed(uint32_t x, uint32_t sg) { return (x ^ sg) - sg; }

// goldfhe_bs_keyswitch: out[s] (dimension n) = (0, ..., 0, b) - sum over
// input coordinates i < kn and levels j = 1..t of the table row of the
// signed digit d = sg * (((sg * a_i + offset) >> (32 - j*basebit)) mod
// 2^basebit - 2^(basebit-1)), sg = -1 for an odd a_i and +1 for an even
// one (bs_ks_sign; tfhe keySwitch says why): subtracted for d > 0 (entry
// d), added for d < 0 (entry -d), nothing for d = 0. Blocks of KS_TX x
// KS_TY threads; each thread sums cpt <= KS_CPT output coordinates m =
// blockIdx.x * KS_TX * cpt + threadIdx.x + KS_TX * q (q < cpt) <= n; the
// KS_TY warps are spb samples (blockIdx.y * spb + threadIdx.y / c, groups
// of samples along blockIdx.y in steps of gridDim.y) times c = KS_TY / spb
// input-coordinate classes (i = threadIdx.y mod c), whose partial sums are
// added in shared memory.
// Why this shape:
// - every thread of a warp reads the same a_i, so its digits and their
//   branches are uniform (a zero digit loads nothing) and its table reads
//   coalesced; a digit costs about as much as a load, so each thread
//   serves cpt = KS_CPT coordinates with it, except for a handful of
//   samples, where cpt = 1 gives each sample four times the warps
//   (latency: one TFHELib128 sample took 314 us with 4, 184 with 1);
// - the classes and the unrolled levels keep several independent loads in
//   flight per thread (one thread walking all kn*t terms alone took
//   milliseconds per sample, a chain of dependent L2 round trips);
// - the warps of one class walk the same (i, j) sequence for their samples,
//   and a digit selects one of only 2^(basebit-1) rows per (i, j), so the
//   rows one warp fetches are mostly L1 hits for the others: large batches
//   take spb = 8, a few samples spb = 1, whose eight classes give each
//   sample the most warps (latency);
// - for a handful of samples even that leaves most SMs idle (one
//   TFHELib128 sample: 20 blocks, 217 us), so the input coordinates are
//   also split between gridDim.z blocks (block z takes the coordinates i
//   = cls + classes * (z + gridDim.z * m)), which add their partial sums
//   into out with atomicAdd: out must then be zero before the launch, and
//   block z = 0 adds the body b.
// Wrapping 32-bit sums commute: the result does not depend on the order.
#define KS_TX 32
#define KS_TY 8
#define KS_CPT 4
extern "C" __global__ void __launch_bounds__(KS_TX * KS_TY)
    goldfhe_bs_keyswitch(uint32_t* __restrict__ out, const uint32_t* __restrict__ in,
                         const uint32_t* __restrict__ table, uint32_t n, uint32_t kn, uint32_t t,
                         uint32_t basebit, uint32_t offset, uint32_t count, uint32_t spb, uint32_t cpt) {
    GOLDFHE_FAULT_POINT();
    __shared__ uint32_t part[KS_TY][KS_TX * KS_CPT];
    const uint32_t m0 = blockIdx.x * (KS_TX * cpt) + threadIdx.x;
    const uint32_t half = 1u << (basebit - 1), mask = (1u << basebit) - 1;
    const uint32_t classes = KS_TY / spb, cls = threadIdx.y % classes;
    const uint64_t w = (uint64_t)n + 1;
    const uint64_t perI = (uint64_t)t * half * w; // table words per input coordinate
    const uint32_t chunks = gridDim.z;
    for (uint32_t g = blockIdx.y; g * spb < count; g += gridDim.y) {
        const uint32_t s = g * spb + threadIdx.y / classes;
        const uint32_t* a = in + (uint64_t)s * (kn + 1);
        uint32_t r[KS_CPT] = {};
        if (s < count && m0 <= n) {
            for (uint32_t i = cls + classes * blockIdx.z; i < kn; i += classes * chunks) {
                const uint32_t sg = bs_ks_sign(a[i]);
                const uint32_t v = bs_ks_signed(a[i], sg) + offset;
                const uint32_t* row = table + (uint64_t)i * perI + m0;
#pragma unroll 8
                for (uint32_t j = 1; j <= t; j++) {
                    const int32_t raw = (int32_t)((v >> (32 - j * basebit)) & mask) - (int32_t)half;
                    if (raw == 0) continue;  // the same for the whole warp
                    const int32_t d = sg ? -raw : raw;
                    const uint64_t lv = (uint64_t)(j - 1) * half;
                    const uint32_t* e = row + (lv + (uint32_t)(d > 0 ? d : -d) - 1) * w;
#pragma unroll
                    for (uint32_t q = 0; q < KS_CPT; q++) {
                        if (q < cpt && m0 + KS_TX * q <= n) {
                            const uint32_t x = e[KS_TX * q];
                            r[q] += d > 0 ? 0u - x : x;
                        }
                    }
                }
            }
        }
#pragma unroll
        for (uint32_t q = 0; q < KS_CPT; q++) part[threadIdx.y][threadIdx.x + KS_TX * q] = r[q];
        __syncthreads();
        if (cls == 0 && s < count) {
#pragma unroll
            for (uint32_t q = 0; q < KS_CPT; q++) {
                const uint32_t m = m0 + KS_TX * q;
                if (q >= cpt || m > n) break;
                uint32_t sum = m == n && blockIdx.z == 0 ? a[kn] : 0;
                for (uint32_t y = 0; y < classes; y++) sum += part[threadIdx.y + y][threadIdx.x + KS_TX * q];
                if (chunks == 1) {
                    out[(uint64_t)s * w + m] = sum;
                } else {
                    atomicAdd(out + (uint64_t)s * w + m, sum);
                }
            }
        }
        __syncthreads();
    }
}

// goldfhe_bs_keyswitch_s<ST>_b<BB>: goldfhe_bs_keyswitch's sum for basebit
// BB with the samples tiled. goldfhe_bs_keyswitch loads one table word per
// sample and nonzero digit, and its time is that walk through L2 (2.2 to
// 2.5 us per TFHELib128 sample at every batch size on an H200); here each
// thread keeps ST samples' partial sums of one output coordinate, so every
// word it loads serves ST samples. Blocks of KST_W warps; warp wp of block
// x sums the 32 output coordinates m = (x * KST_W + wp) * 32 + lane <= n of
// the samples blockIdx.y * ST + q (q < ST; then in steps of gridDim.y * ST)
// over the input coordinates i = blockIdx.z + gridDim.z * u. With gridDim.z
// > 1 the blocks add into out, which must be zero, with atomicAdd, and
// block z = 0 adds the body. A sample past count takes the input word whose
// digits are all zero, so the tile's loop has no sample branches (its
// sum, whatever its sign choice, is not stored).
// The digit d = raw - HALF of raw = (v >> (32 - j BB)) mod 2^BB selects row
// |d| - 1 of level j, subtracted for d > 0 and added for d < 0: for BB = 2
// that is d = -2 -> +row 2, -1 -> +row 1, 0 -> 0, 1 -> -row 1, i.e.
// raw == 0 ? row2 : (2 - raw) * row1, one multiply-add and one select.
// v is the input word or its negation (bs_ks_sign), and the term is
// negated with it: a few more operations per term.
#define KST_W 4
template <int ST, int BB>
__device__ __forceinline__ void bs_keyswitch_tiled(uint32_t* __restrict__ out, const uint32_t* __restrict__ in,
                                                   const uint32_t* __restrict__ table, uint32_t n, uint32_t kn,
                                                   uint32_t t, uint32_t offset, uint32_t count) {
    constexpr uint32_t HALF = 1u << (BB - 1), MASK = (1u << BB) - 1;
    const uint32_t lane = threadIdx.x % 32, wp = threadIdx.x / 32;
    const uint32_t m = (blockIdx.x * KST_W + wp) * 32 + lane;
    const bool live = m <= n;
    const uint64_t w = (uint64_t)n + 1, stride = (uint64_t)kn + 1;
    const uint64_t perI = (uint64_t)t * HALF * w;
    uint32_t zero = 0; // the input word whose t digits are all zero, less offset
    for (uint32_t j = 1; j <= t; j++) zero += HALF << (32 - j * BB);
    zero -= offset;
    // BB >= 3: each thread's table of the 2^BB digit values' contributions
    // (its own column: no barrier).
    static __shared__ uint32_t c[BB >= 3 ? 1u << BB : 1][KST_W * 32];
    if constexpr (BB >= 3) c[HALF][threadIdx.x] = 0;
    for (uint32_t s0 = blockIdx.y * ST; s0 < count; s0 += gridDim.y * ST) {
        const uint32_t* a = in + (uint64_t)s0 * stride;
        uint32_t acc[ST];
#pragma unroll
        for (int q = 0; q < ST; q++) acc[q] = 0;
        for (uint32_t i = blockIdx.z; i < kn; i += gridDim.z) {
            uint32_t v[ST], negs = 0;  // negs: bit q = sample q's sign choice (bs_ks_sign)
#pragma unroll
            for (int q = 0; q < ST; q++) {
                const uint32_t x = s0 + q < count ? a[q * stride + i] : zero;
                const uint32_t sg = bs_ks_sign(x);
                negs |= (sg & 1u) << q;
                v[q] = bs_ks_signed(x, sg) + offset;
            }
            const uint32_t* row = table + (uint64_t)i * perI + m;
#pragma unroll 2
            for (uint32_t j = 1; j <= t; j++) {
                const uint32_t* e = row + (uint64_t)(j - 1) * HALF * w;
                uint32_t r[HALF];
#pragma unroll
                for (uint32_t h = 0; h < HALF; h++) r[h] = live ? e[h * w] : 0u;
                const uint32_t sh = 32 - j * BB;
                if constexpr (BB >= 3) {
                    // The contribution of each raw digit, c[raw][thread]:
                    // d = raw - HALF < 0 adds row -d - 1, d > 0 subtracts
                    // row d - 1, d = 0 (c[HALF], set above) nothing. raw is
                    // the same for every lane of a warp (one sample, one
                    // level), so each sample's read below is one
                    // conflict-free LDS in place of a HALF-way select: half
                    // the loop's instructions (nvcc 11.8's SASS), and
                    // TFHErsDefault's engine at 16,384 gates 15-19% faster
                    // (H200, kernels/NOTES.md session 15).
#pragma unroll
                    for (uint32_t h = 0; h < HALF; h++) {
                        c[HALF - 1 - h][threadIdx.x] = r[h];
                        if (h + 1 < HALF) c[HALF + 1 + h][threadIdx.x] = 0u - r[h];
                    }
                }
#pragma unroll
                for (int q = 0; q < ST; q++) {
                    const uint32_t raw = (v[q] >> sh) & MASK, sg = 0u - ((negs >> q) & 1u);
                    uint32_t y;
                    if constexpr (BB == 2) {
                        y = raw == 0 ? r[1] : (2u - raw) * r[0];
                    } else {
                        y = c[raw][threadIdx.x];
                    }
                    acc[q] += bs_ks_signed(y, sg);
                }
            }
        }
        if (live) {
#pragma unroll
            for (int q = 0; q < ST; q++) {
                if (s0 + q >= count) break;
                const uint32_t sum = acc[q] + (m == n && blockIdx.z == 0 ? a[q * stride + kn] : 0u);
                if (gridDim.z == 1) {
                    out[(uint64_t)(s0 + q) * w + m] = sum;
                } else {
                    atomicAdd(out + (uint64_t)(s0 + q) * w + m, sum);
                }
            }
        }
    }
}

#define KST_DEFINE(ST, BB)                                                                                   \
    extern "C" __global__ void __launch_bounds__(KST_W * 32) goldfhe_bs_keyswitch_s##ST##_b##BB(             \
        uint32_t* __restrict__ out, const uint32_t* __restrict__ in, const uint32_t* __restrict__ table,   \
        uint32_t n, uint32_t kn, uint32_t t, uint32_t offset, uint32_t count) {                            \
        GOLDFHE_FAULT_POINT();                                                                              \
        bs_keyswitch_tiled<ST, BB>(out, in, table, n, kn, t, offset, count);                                \
    }
KST_DEFINE(16, 2)
KST_DEFINE(16, 3)

// goldfhe_bs_keyswitch_mma_b2: goldfhe_bs_keyswitch's sum for basebit 2
// and t <= 8 as an integer matrix product on the tensor cores (mma.sync
// m16n8k32, s8 x u8 -> s32, sm_80 and later). The sum of a sample is
// sum over (i, j) of c1 * row1[i][j] + c2 * row2[i][j], c1 = 2 - raw in
// {1, 0, -1} for raw != 0 and c2 = [raw == 0] (bs_keyswitch_tiled), both
// negated for an odd input word (bs_ks_sign, bs_ksm_neg): a row
// of A per sample (the coefficients c1, c2 of every (i, j), signed bytes),
// a column of B per byte b of an output word (byte b of the table words,
// unsigned), so that C[s][(m, b)] = sum c * byte_b(row[m]) and out[m] =
// body + sum_b C[s][(m, b)] << 8b mod 2^32 exactly: |C| <= 2 kn t 255
// < 2^31 for kn <= 2^19. Words wrap mod 2^32 as the other kernels' sums do.
// A k-step of 32 is two input coordinates i: lane (g, q) (g = lane / 4, q
// = lane % 4, as mma's fragments) holds coordinate 2 u + q / 2, levels 4
// (q % 2) + 1 .. + 4, c1 in A's first k-half and c2 in its second, for
// samples g and g + 8 of its warp's 16; its B registers hold the same
// (i, levels) of output word 8 Q + g, row 1 then row 2, byte b of the four
// levels' words (a byte transpose of the four words it loads), for the
// quad Q's n-tile b. The k order inside a step is free as long as A and B
// agree, which they do by construction. Blocks of KSM_WARPS warps: warp wp
// takes samples blockIdx.y * 16 KSM_WARPS + 16 wp + 0..15 (then in steps
// of gridDim.y tiles) and output words blockIdx.x * 8 KSM_Q + 0..8 KSM_Q-1;
// the warps of a block read the same table words, mostly from L1. With
// gridDim.z > 1 the blocks split the coordinate pairs and add into out,
// which must be zero, with atomicAdd; block z = 0 adds the body.
#define KSM_WARPS 8
#define KSM_Q 4
__device__ __forceinline__ void bs_mma_s8u8(int32_t (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
#ifdef __CUDA_ARCH__
    asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.u8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};"
                 : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#elif !defined(__CUDACC__)
    hm_mma_s8u8(d, a, b0, b1);
#endif
}

// bs_ksm_coeffs: A's c1 (x) and c2 (y) bytes of the four levels whose raw
// digits are the bit pairs of f8, the first level in bits 7..6: byte e of
// x is +1 for raw 1, -1 (0xFF) for raw 3, else 0; of y, 1 for raw 0. With
// the raw digits spread into bytes, bit 0 (lo) and bit 1 (hi) of each
// byte give them without branches (goldfhe_bs_keyswitch_packed_b2 calls it
// per staged coordinate; goldfhe_bs_keyswitch_mma_b2 fills a table).
__device__ __forceinline__ uint2 bs_ksm_coeffs(uint32_t f8) {
    const uint32_t x = ((f8 >> 6) & 3) | (((f8 >> 4) & 3) << 8) | (((f8 >> 2) & 3) << 16) | ((f8 & 3) << 24);
    const uint32_t lo = x & 0x01010101u, hi = (x >> 1) & 0x01010101u, both = lo & hi;
    return make_uint2((lo ^ both) | (both * 0xFFu), (lo | hi) ^ 0x01010101u);
}

// bs_ksm_neg: the coefficient bytes of x (each 0, 1 or 0xFF) negated
// when sg is all ones (bs_ks_sign): a nonzero byte XOR 0xFE; no carries.
__device__ __forceinline__ uint32_t bs_ksm_neg(uint32_t x, uint32_t sg) { return x ^ ((x & 0x01010101u) * 0xFEu & sg); }

// bs_ksm_products: one k-step of a warp's tile, C += A B for the KSM_Q
// quads' n-tiles: words[Q] are the eight table words of this lane's B
// column 8 Q + g, k-slots 4 q + e from words[Q][e] and 16 + 4 q + e from
// words[Q][4 + e] (e < 4), and n-tile b of quad Q takes byte b of each
// (a byte transpose of the eight words: 8 PRMT per four words).
__device__ __forceinline__ void bs_ksm_products(int32_t (&acc)[KSM_Q][4][4], const uint32_t (&a)[4],
                                                const uint32_t (&words)[KSM_Q][8]) {
#pragma unroll
    for (int Q = 0; Q < KSM_Q; Q++) {
        const uint32_t* r1 = words[Q];
        const uint32_t* r2 = words[Q] + 4;
        // Byte b of the four words, word e in byte e.
        const uint32_t x0 = __byte_perm(r1[0], r1[1], 0x5140), x1 = __byte_perm(r1[0], r1[1], 0x7362);
        const uint32_t x2 = __byte_perm(r1[2], r1[3], 0x5140), x3 = __byte_perm(r1[2], r1[3], 0x7362);
        const uint32_t y0 = __byte_perm(r2[0], r2[1], 0x5140), y1 = __byte_perm(r2[0], r2[1], 0x7362);
        const uint32_t y2 = __byte_perm(r2[2], r2[3], 0x5140), y3 = __byte_perm(r2[2], r2[3], 0x7362);
        bs_mma_s8u8(acc[Q][0], a, __byte_perm(x0, x2, 0x5410), __byte_perm(y0, y2, 0x5410));
        bs_mma_s8u8(acc[Q][1], a, __byte_perm(x0, x2, 0x7632), __byte_perm(y0, y2, 0x7632));
        bs_mma_s8u8(acc[Q][2], a, __byte_perm(x1, x3, 0x5410), __byte_perm(y1, y3, 0x5410));
        bs_mma_s8u8(acc[Q][3], a, __byte_perm(x1, x3, 0x7632), __byte_perm(y1, y3, 0x7632));
    }
}

// bs_ksm_store: the warp's tile of outputs, samples sl (C rows g) and sh
// (g + 8) of this lane, out[m] = body + sum_b C[(m, b)] << 8 b: C[g][2q +
// c] and C[g + 8][2q + c] of each n-tile are words 8 Q + 2 q + c.
__device__ __forceinline__ void bs_ksm_store(uint32_t* __restrict__ out, const uint32_t* __restrict__ in,
                                             const int32_t (&acc)[KSM_Q][4][4], uint32_t sl, uint32_t sh,
                                             uint32_t q, uint32_t n, uint32_t kn, uint32_t count) {
    const uint64_t w = (uint64_t)n + 1, stride = (uint64_t)kn + 1;
#pragma unroll
    for (int Q = 0; Q < KSM_Q; Q++) {
#pragma unroll
        for (int r = 0; r < 4; r++) {
            const uint32_t s = r < 2 ? sl : sh;
            const uint32_t m = blockIdx.x * (8 * KSM_Q) + 8 * Q + 2 * q + (r & 1);
            if (s >= count || m > n) continue;
            uint32_t v = (uint32_t)acc[Q][0][r] + ((uint32_t)acc[Q][1][r] << 8) + ((uint32_t)acc[Q][2][r] << 16) +
                         ((uint32_t)acc[Q][3][r] << 24);
            if (m == n && blockIdx.z == 0) v += in[s * stride + kn];
            if (gridDim.z == 1) {
                out[s * w + m] = v;
            } else {
                atomicAdd(out + s * w + m, v);
            }
        }
    }
}

__device__ __forceinline__ void bs_ksm_zero(int32_t (&acc)[KSM_Q][4][4]) {
#pragma unroll
    for (int Q = 0; Q < KSM_Q; Q++)
#pragma unroll
        for (int b = 0; b < 4; b++)
#pragma unroll
            for (int r = 0; r < 4; r++) acc[Q][b][r] = 0;
}

extern "C" __global__ void __launch_bounds__(KSM_WARPS * 32, 2)
    goldfhe_bs_keyswitch_mma_b2(uint32_t* __restrict__ out, const uint32_t* __restrict__ in,
                                const uint32_t* __restrict__ table, uint32_t n, uint32_t kn, uint32_t t,
                                uint32_t offset, uint32_t count) {
    GOLDFHE_FAULT_POINT();
    __shared__ uint2 lut[256];  // bs_ksm_coeffs of every f8
    for (uint32_t f = threadIdx.x; f < 256; f += KSM_WARPS * 32) lut[f] = bs_ksm_coeffs(f);
    __syncthreads();
    const uint32_t lane = threadIdx.x % 32, wp = threadIdx.x / 32, g = lane / 4, q = lane % 4, h = q % 2;
    const uint64_t w = (uint64_t)n + 1, stride = (uint64_t)kn + 1;
    // Levels 4h + 1 + e past t: their raw digit forced to 2 (no row), their
    // table words read from level t (any valid word: times 0).
    uint32_t keep = 0xFF, fix = 0;
    uint64_t lvl[4];
#pragma unroll
    for (int e = 0; e < 4; e++) {
        const uint32_t j = 4 * h + e;  // level j + 1
        if (j >= t) {
            keep &= ~(3u << (6 - 2 * e));
            fix |= 2u << (6 - 2 * e);
        }
        lvl[e] = (uint64_t)(j < t ? j : t - 1) * 2 * w;
    }
    const uint64_t perI = (uint64_t)t * 2 * w;
    uint32_t word[KSM_Q];  // this lane's B column, clamped to a valid word
#pragma unroll
    for (int Q = 0; Q < KSM_Q; Q++) word[Q] = min(blockIdx.x * (8 * KSM_Q) + 8 * Q + g, n);
    const uint32_t pairs = (kn + 1) / 2;
    for (uint32_t s0 = blockIdx.y * (16 * KSM_WARPS) + 16 * wp; s0 < count; s0 += gridDim.y * (16 * KSM_WARPS)) {
        const uint32_t sl = s0 + g, sh = sl + 8;
        int32_t acc[KSM_Q][4][4];
        bs_ksm_zero(acc);
        for (uint32_t u = blockIdx.z; u < pairs; u += gridDim.z) {
            const uint32_t i = 2 * u + q / 2;
            const bool iv = i < kn;
            uint32_t a[4] = {0, 0, 0, 0};
            if (iv && sl < count) {
                const uint32_t x = in[sl * stride + i], sg = bs_ks_sign(x);
                const uint2 c = lut[(((bs_ks_signed(x, sg) + offset) >> (24 - 8 * h)) & keep) | fix];
                a[0] = bs_ksm_neg(c.x, sg), a[2] = bs_ksm_neg(c.y, sg);
            }
            if (iv && sh < count) {
                const uint32_t x = in[sh * stride + i], sg = bs_ks_sign(x);
                const uint2 c = lut[(((bs_ks_signed(x, sg) + offset) >> (24 - 8 * h)) & keep) | fix];
                a[1] = bs_ksm_neg(c.x, sg), a[3] = bs_ksm_neg(c.y, sg);
            }
            const uint32_t* base = table + (uint64_t)(iv ? i : kn - 1) * perI;
            // Every quad's words first, then the products: the 32 loads in
            // flight together rather than a quad's eight at a time. Word e
            // is row 1 of level e, word 4 + e its row 2.
            uint32_t words[KSM_Q][8];
#pragma unroll
            for (int Q = 0; Q < KSM_Q; Q++) {
#pragma unroll
                for (int e = 0; e < 4; e++) {
                    words[Q][e] = __ldg(base + lvl[e] + word[Q]);
                    words[Q][4 + e] = __ldg(base + lvl[e] + w + word[Q]);
                }
            }
            bs_ksm_products(acc, a, words);
        }
        bs_ksm_store(out, in, acc, sl, sh, q, n, kn, count);
    }
}

// goldfhe_bs_keyswitch_mma_b3: the tensor-core sum for basebit 3 and any
// t (t * 3 <= 31). A digit d = raw - 4 in [-4, 3] selects one of four rows
// (bs_keyswitch_tiled), so A's coefficient of row h is +1 for d = -(h + 1),
// -1 for d = h + 1 and 0 otherwise (bs_ksm_coeffs3), all negated for an odd
// input word (bs_ks_sign, bs_ksm_neg), and a k-step of 32 is
// eight (input coordinate, level) pairs times four rows. The pairs are
// numbered f = i t + (j - 1), the table's own row order (row h of pair f
// is table row 4 f + h), so k-step u takes pairs 8 u .. 8 u + 7 with no
// padding inside a coordinate: lane (g, q) holds pairs 8 u + 2 q (A's and
// B's first k-half, rows 0..3 in bytes 0..3) and 8 u + 2 q + 1 (second
// k-half), i.e. eight consecutive table rows, and a last k-step's pairs
// past kn t have coefficient 0 and read the last pair's rows. The tile,
// grid and chunks are goldfhe_bs_keyswitch_mma_b2's, with k-steps in place
// of coordinate pairs; |C| <= kn t 255 < 2^31 for kn t < 2^23.
__device__ __forceinline__ uint32_t bs_ksm_coeffs3(uint32_t raw) {
    return raw < 4 ? 1u << (8 * (3 - raw)) : raw == 4 ? 0u : 0xFFu << (8 * (raw - 5));
}

extern "C" __global__ void __launch_bounds__(KSM_WARPS * 32, 2)
    goldfhe_bs_keyswitch_mma_b3(uint32_t* __restrict__ out, const uint32_t* __restrict__ in,
                                const uint32_t* __restrict__ table, uint32_t n, uint32_t kn, uint32_t t,
                                uint32_t offset, uint32_t count) {
    GOLDFHE_FAULT_POINT();
    const uint32_t lane = threadIdx.x % 32, wp = threadIdx.x / 32, g = lane / 4, q = lane % 4;
    const uint64_t w = (uint64_t)n + 1, stride = (uint64_t)kn + 1;
    const uint32_t pairs = kn * t, steps = (pairs + 7) / 8;
    uint32_t word[KSM_Q];  // this lane's B column, clamped to a valid word
#pragma unroll
    for (int Q = 0; Q < KSM_Q; Q++) word[Q] = min(blockIdx.x * (8 * KSM_Q) + 8 * Q + g, n);
    for (uint32_t s0 = blockIdx.y * (16 * KSM_WARPS) + 16 * wp; s0 < count; s0 += gridDim.y * (16 * KSM_WARPS)) {
        const uint32_t sl = s0 + g, sh = sl + 8;
        int32_t acc[KSM_Q][4][4];
        bs_ksm_zero(acc);
        for (uint32_t u = blockIdx.z; u < steps; u += gridDim.z) {
            uint32_t a[4] = {0, 0, 0, 0};
#pragma unroll
            for (int c = 0; c < 2; c++) {
                const uint32_t f = 8 * u + 2 * q + c;
                if (f >= pairs) break;
                const uint32_t i = f / t, sft = 32 - 3 * (f - i * t + 1);
                if (sl < count) {
                    const uint32_t x = in[sl * stride + i], sg = bs_ks_sign(x);
                    a[2 * c] = bs_ksm_neg(bs_ksm_coeffs3(((bs_ks_signed(x, sg) + offset) >> sft) & 7), sg);
                }
                if (sh < count) {
                    const uint32_t x = in[sh * stride + i], sg = bs_ks_sign(x);
                    a[2 * c + 1] = bs_ksm_neg(bs_ksm_coeffs3(((bs_ks_signed(x, sg) + offset) >> sft) & 7), sg);
                }
            }
            // Table rows 4 f .. 4 f + 7 of f = 8 u + 2 q, each clamped to
            // the last row (times 0).
            const uint32_t r0 = 4 * (8 * u + 2 * q), last = 4 * pairs - 1;
            const uint32_t* rows[8];
#pragma unroll
            for (int e = 0; e < 8; e++) rows[e] = table + (uint64_t)min(r0 + e, last) * w;
            uint32_t words[KSM_Q][8];
#pragma unroll
            for (int Q = 0; Q < KSM_Q; Q++) {
#pragma unroll
                for (int e = 0; e < 8; e++) words[Q][e] = __ldg(rows[e] + word[Q]);
            }
            bs_ksm_products(acc, a, words);
        }
        bs_ksm_store(out, in, acc, sl, sh, q, n, kn, count);
    }
}

// goldfhe_bs_keyswitch_packed_b2: goldfhe_bs_keyswitch_mma_b2's product
// (basebit 2, t <= 8; the same A and B, k-step u = coordinates 2u, 2u + 1)
// with both operands laid out for their fragments, so that a warp's loads
// are whole cache lines and nothing is transposed in the loop:
// - B comes packed (kernels.PackKSTable): per k-step u and octet o of
//   output words, the 32 lanes' b0/b1 registers of the four byte n-tiles,
//   in two halves of 512 bytes, lane (g, q)'s uint4 at half h, lane:
//   {b0, b1} of bytes 2h and 2h + 1 of word 8 o + g. Levels past t,
//   coordinates past kn and words past n are zero bytes.
// - A is staged in shared memory by the block, a chunk of KSP_STEPS
//   k-steps at a time, as each lane's four registers (one uint4) per
//   k-step and 16-sample fragment; the 16-byte slot of lane L is L ^
//   ksp_swz(u), so that neither the staging stores nor the warp's loads
//   meet in a bank.
// A block is KSP_MW x KSP_NW warps over 32 KSP_MW samples x 8 KSP_OCTETS
// words; warp (mw, nw) holds samples 32 mw .. + 31 (two fragments) and
// octets 2 nw, 2 nw + 1. Per k-step a warp loads 2 KB of B (each byte
// times 32 samples) and 1 KB of A from shared memory for 16 mma, where
// goldfhe_bs_keyswitch_mma_b2 makes 32 four-sector loads and 64 byte
// permutations for as many. Tiles of samples in steps of gridDim.y;
// gridDim.z blocks split the chunks and add into out (zeroed) with
// atomicAdd, block z = 0 adding the body, as in goldfhe_bs_keyswitch_mma_b2.
#define KSP_MW 4
#define KSP_NW 2
#define KSP_SAMPLES (32 * KSP_MW)
#define KSP_OCTETS (2 * KSP_NW)
#define KSP_STEPS 8
// The staging: thread (pair p, coordinate c) of the block, c = threadIdx.x
// % (2 KSP_STEPS), loads coordinate c of the chunk for samples g and g + 8
// of fragment p / 8 (p = threadIdx.x / (2 KSP_STEPS) + KSP_PAIR_STRIDE r).
#define KSP_PAIR_STRIDE (KSP_MW * KSP_NW * 32 / (2 * KSP_STEPS))
#define KSP_ROUNDS (KSP_SAMPLES / 2 / KSP_PAIR_STRIDE)

// ksp_swz: the XOR that spreads a chunk's k-steps over the banks: the
// staging stores of k-steps u = 0..3 (and 4..7) with the same lane of
// either coordinate parity then fill eight different 16-byte slots.
__device__ __forceinline__ uint32_t ksp_swz(uint32_t u) { return (u & 1) | ((u & 2) << 1); }

extern "C" __global__ void __launch_bounds__(KSP_MW * KSP_NW * 32, 2)
    goldfhe_bs_keyswitch_packed_b2(uint32_t* __restrict__ out, const uint32_t* __restrict__ in,
                                   const uint4* __restrict__ packed, uint32_t n, uint32_t kn, uint32_t t,
                                   uint32_t offset, uint32_t count) {
    GOLDFHE_FAULT_POINT();
    __shared__ uint4 as[KSP_STEPS][KSP_MW][2][32];
    const uint32_t lane = threadIdx.x % 32, wp = threadIdx.x / 32, mw = wp % KSP_MW, nw = wp / KSP_MW;
    const uint32_t g = lane / 4, q = lane % 4;
    const uint32_t octets = (n + 8) / 8, steps = (kn + 1) / 2;
    const uint64_t w = (uint64_t)n + 1, stride = (uint64_t)kn + 1;
    (void)t;  // levels past t are zero in packed
    uint32_t oc[2];  // this warp's octets, clamped to the last (not stored)
#pragma unroll
    for (int Q = 0; Q < 2; Q++) oc[Q] = min(blockIdx.x * KSP_OCTETS + 2 * nw + Q, octets - 1);
    // The staging thread's coordinate in a chunk and its pairs' samples.
    const uint32_t sc = threadIdx.x % (2 * KSP_STEPS), sp = threadIdx.x / (2 * KSP_STEPS);
    const uint32_t first = blockIdx.z * KSP_STEPS, jump = gridDim.z * KSP_STEPS;
    for (uint32_t s0 = blockIdx.y * KSP_SAMPLES; s0 < count; s0 += gridDim.y * KSP_SAMPLES) {
        // vin: this thread's coordinate of the next chunk, samples lo, hi
        // of each of its pairs.
        uint32_t vin[KSP_ROUNDS][2];
        auto load = [&](uint32_t u0) {
            const uint32_t i = 2 * u0 + sc;
#pragma unroll
            for (int r = 0; r < KSP_ROUNDS; r++) {
                const uint32_t p = sp + KSP_PAIR_STRIDE * r, s = s0 + 16 * (p / 8) + p % 8;
                vin[r][0] = i < kn && s < count ? __ldg(in + s * stride + i) : 0;
                vin[r][1] = i < kn && s + 8 < count ? __ldg(in + (s + 8) * stride + i) : 0;
            }
        };
        int32_t acc[2][2][4][4];
#pragma unroll
        for (int r = 0; r < 2; r++)
#pragma unroll
            for (int Q = 0; Q < 2; Q++)
#pragma unroll
                for (int b = 0; b < 4; b++)
#pragma unroll
                    for (int c = 0; c < 4; c++) acc[r][Q][b][c] = 0;
        // B of k-step u, octet Q: bq[Q][0], bq[Q][1] the two halves.
        auto loadB = [&](uint4 (&bq)[2][2], uint32_t u) {
            u = min(u, steps - 1);
#pragma unroll
            for (int Q = 0; Q < 2; Q++) {
                const uint4* at = packed + ((uint64_t)u * octets + oc[Q]) * 64 + lane;
                bq[Q][0] = __ldg(at);
                bq[Q][1] = __ldg(at + 32);
            }
        };
        uint4 bcur[2][2], bnxt[2][2];
        if (first < steps) {
            load(first);
            loadB(bcur, first);
        }
        for (uint32_t u0 = first; u0 < steps; u0 += jump) {
            __syncthreads();  // the last chunk's A read
            // Stage the chunk's A: coordinate i = 2 u0 + sc is k-step u0 +
            // sc / 2 at lanes q = 2 (sc % 2) + h.
            {
                const uint32_t ul = sc / 2, sw = ksp_swz(ul);
#pragma unroll
                for (int r = 0; r < KSP_ROUNDS; r++) {
                    const uint32_t p = sp + KSP_PAIR_STRIDE * r, f = p / 8, gg = p % 8;
                    const uint32_t sgl = bs_ks_sign(vin[r][0]), sgh = bs_ks_sign(vin[r][1]);
                    const uint32_t lo = bs_ks_signed(vin[r][0], sgl) + offset, hi = bs_ks_signed(vin[r][1], sgh) + offset;
                    const uint32_t i = 2 * u0 + sc, slo = s0 + 16 * f + gg;
                    const bool vlo = i < kn && slo < count, vhi = i < kn && slo + 8 < count;
#pragma unroll
                    for (uint32_t h = 0; h < 2; h++) {
                        const uint2 cl = vlo ? bs_ksm_coeffs((lo >> (24 - 8 * h)) & 0xFF) : make_uint2(0, 0);
                        const uint2 ch = vhi ? bs_ksm_coeffs((hi >> (24 - 8 * h)) & 0xFF) : make_uint2(0, 0);
                        const uint32_t L = 4 * gg + 2 * (sc % 2) + h;
                        as[ul][f / 2][f % 2][L ^ sw] = make_uint4(bs_ksm_neg(cl.x, sgl), bs_ksm_neg(ch.x, sgh),
                                                                  bs_ksm_neg(cl.y, sgl), bs_ksm_neg(ch.y, sgh));
                    }
                }
            }
            __syncthreads();
            if (u0 + jump < steps) load(u0 + jump);  // in flight over the products
            const uint32_t end = min(u0 + KSP_STEPS, steps);
            for (uint32_t u = u0; u < end; u++) {
                loadB(bnxt, u + 1 < end ? u + 1 : u0 + jump);
                const uint32_t ul = u - u0;
                uint32_t a[2][4];
#pragma unroll
                for (int r = 0; r < 2; r++) {
                    const uint4 v = as[ul][mw][r][lane ^ ksp_swz(ul)];
                    a[r][0] = v.x, a[r][1] = v.y, a[r][2] = v.z, a[r][3] = v.w;
                }
#pragma unroll
                for (int Q = 0; Q < 2; Q++) {
                    const uint32_t b0[4] = {bcur[Q][0].x, bcur[Q][0].z, bcur[Q][1].x, bcur[Q][1].z};
                    const uint32_t b1[4] = {bcur[Q][0].y, bcur[Q][0].w, bcur[Q][1].y, bcur[Q][1].w};
#pragma unroll
                    for (int r = 0; r < 2; r++)
#pragma unroll
                        for (int b = 0; b < 4; b++) bs_mma_s8u8(acc[r][Q][b], a[r], b0[b], b1[b]);
                }
#pragma unroll
                for (int Q = 0; Q < 2; Q++) bcur[Q][0] = bnxt[Q][0], bcur[Q][1] = bnxt[Q][1];
            }
        }
        // out[m] = body + sum_b C[(m, b)] << 8 b (bs_ksm_store's sum), C
        // registers c of fragment r: sample 16 r + g (+ 8 for c >= 2) of
        // this warp's 32, word 8 o + 2 q + c % 2.
#pragma unroll
        for (int r = 0; r < 2; r++)
#pragma unroll
            for (int Q = 0; Q < 2; Q++)
#pragma unroll
                for (int c = 0; c < 4; c++) {
                    const uint32_t s = s0 + 32 * mw + 16 * r + g + (c >= 2 ? 8 : 0);
                    const uint32_t o = blockIdx.x * KSP_OCTETS + 2 * nw + Q, m = 8 * o + 2 * q + (c & 1);
                    if (s >= count || m > n) continue;
                    uint32_t v = (uint32_t)acc[r][Q][0][c] + ((uint32_t)acc[r][Q][1][c] << 8) +
                                 ((uint32_t)acc[r][Q][2][c] << 16) + ((uint32_t)acc[r][Q][3][c] << 24);
                    if (m == n && blockIdx.z == 0) v += in[s * stride + kn];
                    if (gridDim.z == 1) {
                        out[s * w + m] = v;
                    } else {
                        atomicAdd(out + s * w + m, v);
                    }
                }
    }
}

#endif // GOLDFHE_BOOTSTRAP_CUH
