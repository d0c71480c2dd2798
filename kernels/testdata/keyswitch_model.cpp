// Host model of goldfhe_bs_keyswitch, of the tiled
// goldfhe_bs_keyswitch_s*_b* and of goldfhe_bs_keyswitch_mma_b2
// and goldfhe_bs_keyswitch_mma_b3 (bootstrap.cuh): the kernel source,
// cut out of bootstrap.cuh, compiled by g++, every CUDA thread a std::thread
// (blocks one after another, so its static __shared__ array serves each
// block in turn), against a plain C++ sum, for several shapes (basebit 1..8),
// counts, samples per block, coordinates per thread and input-coordinate
// chunks (gridDim.z, atomicAdd into a zeroed out); the tiled kernels for
// basebit 2 and 3, 4 and 16 samples per tile, partial tiles, several tiles
// per block (gridDim.y) and chunks; the tensor-core kernel with t <= 8
// levels, an odd kn, partial warps and blocks, several tiles per block and
// chunks (and for basebit 3 with any t, a last partial k-step of
// (coordinate, level) pairs), its mma.sync m16n8k32 (s8 x u8) computed from the 32 lanes'
// registers by the fragment layout of the PTX ISA (testdata/mma_model.h):
//   awk '/^\/\/ bs_ks_sign:/,/^#endif \/\/ GOLDFHE_BOOTSTRAP_CUH/' kernels/bootstrap.cuh | grep -v "^#endif // GOLDFHE" |
//     sed 's/static __shared__/__shared__/' > /tmp/ks_kernel.inc
//   g++ -O1 -std=c++20 -pthread -I/tmp -o /tmp/keyswitch_model kernels/testdata/keyswitch_model.cpp && /tmp/keyswitch_model
// (__shared__ is `static` here, so the sed keeps the tiled kernel's
// `static __shared__` digit table from reading `static static`.)
// It checks the kernel's indexing and reduction, not nvcc or the GPU.
#include <algorithm>
#include <barrier>
#include <memory>
#include "mma_model.h"
#include <cstdint>
#include <cstdio>
#include <random>
#include <thread>
#include <vector>
#define __device__
#define __global__
#define __restrict__
#define __launch_bounds__(...)
#define __forceinline__ inline
#define __shared__ static
struct d3 { unsigned x = 0, y = 0, z = 0; };
thread_local d3 threadIdx, blockIdx; d3 gridDim;
std::barrier<>* bar;
static inline void __syncthreads() { bar->arrive_and_wait(); }
// Blocks run one after another, so a plain add is atomic enough.
static inline void atomicAdd(uint32_t* p, uint32_t v) { *p += v; }
struct uint2 { uint32_t x, y; };
struct uint4 { uint32_t x, y, z, w; };
static inline uint2 make_uint2(uint32_t x, uint32_t y) { return {x, y}; }
static inline uint4 make_uint4(uint32_t x, uint32_t y, uint32_t z, uint32_t w) { return {x, y, z, w}; }
template <class T> static inline T __ldg(const T* p) { return *p; }
static inline uint32_t min(uint32_t a, uint32_t b) { return a < b ? a : b; }
static inline uint32_t __byte_perm(uint32_t x, uint32_t y, uint32_t sel) {
    const uint64_t v = (uint64_t)y << 32 | x;
    uint32_t r = 0;
    for (int i = 0; i < 4; i++) r |= (uint32_t)((v >> (8 * ((sel >> (4 * i)) & 7))) & 0xFF) << (8 * i);
    return r;
}
// mma.sync.aligned.m16n8k32.row.col.s32.s8.u8.s32 for the warp of this
// thread (testdata/mma_model.h).
thread_local hm_mma_slots* hm_warp;
static void hm_mma_s8u8(int32_t (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
    hm_mma<32, true>(*hm_warp, threadIdx.x % 32, d, a, b0, b1);
}
// bootstrap.cuh's fault hook, as goldfhe.fatbin has it (GOLDFHE_FAULT_AFTER unset).
#define GOLDFHE_FAULT_POINT() \
    do {                      \
    } while (0)
#include "ks_kernel.inc"
// The fatbin has tiles of 16; the model checks the template with 4 too.
KST_DEFINE(4, 2)
KST_DEFINE(4, 3)
// reference is the plain key-switching sum (tfhe keySwitch) for count
// samples of dimension kn into dimension n: an odd word's digits are those
// of its negation, negated.
static void reference(std::vector<uint32_t>& want, const std::vector<uint32_t>& in, const std::vector<uint32_t>& table,
                      uint32_t n, uint32_t kn, uint32_t t, uint32_t bb, uint32_t offset, uint32_t count) {
    uint32_t half = 1u << (bb - 1), w = n + 1;
    for (uint32_t s = 0; s < count; s++) for (uint32_t m = 0; m < w; m++) {
        uint32_t r = m == n ? in[s * (kn + 1) + kn] : 0;
        for (uint32_t i = 0; i < kn; i++) { uint32_t x = in[s * (kn + 1) + i]; int sign = x & 1 ? -1 : 1;
            uint32_t v = (x & 1 ? 0u - x : x) + offset;
            for (uint32_t j = 1; j <= t; j++) { int d = sign * ((int)((v >> (32 - j * bb)) & ((1u << bb) - 1)) - (int)half);
                if (d == 0) continue; uint32_t e = table[(((size_t)i * t + j - 1) * half + (d > 0 ? d : -d) - 1) * w + m];
                r += d > 0 ? -e : e; } }
        want[s * w + m] = r; }
}
// pack is kernels.PackKSTable, written again from the layout in
// goldfhe_bs_keyswitch_packed_b2's comment: per k-step u, octet o, half h
// and lane (g, q) four words {b0, b1} of bytes 2h and 2h + 1, where b0
// (b1) of byte b holds byte b of word 8 o + g of row 1 (row 2) of
// coordinate 2 u + q / 2, levels 4 (q % 2) + 1 .. + 4, the first in byte 0.
static std::vector<uint32_t> pack(const std::vector<uint32_t>& table, uint32_t n, uint32_t kn, uint32_t t) {
    const uint32_t w = n + 1, steps = (kn + 1) / 2, octets = (n + 8) / 8;
    std::vector<uint32_t> p((size_t)steps * octets * 256);
    for (uint32_t u = 0; u < steps; u++) for (uint32_t o = 0; o < octets; o++) for (uint32_t lane = 0; lane < 32; lane++) {
        const uint32_t g = lane / 4, q = lane % 4, i = 2 * u + q / 2, m = 8 * o + g;
        uint32_t b0[4] = {}, b1[4] = {};
        for (uint32_t e = 0; e < 4; e++) {
            const uint32_t j = 4 * (q % 2) + e + 1;
            if (i >= kn || j > t || m > n) continue;
            const uint32_t r1 = table[(((size_t)i * t + j - 1) * 2) * w + m], r2 = table[(((size_t)i * t + j - 1) * 2 + 1) * w + m];
            for (uint32_t b = 0; b < 4; b++) {
                b0[b] |= ((r1 >> (8 * b)) & 0xFF) << (8 * e);
                b1[b] |= ((r2 >> (8 * b)) & 0xFF) << (8 * e);
            }
        }
        for (uint32_t h = 0; h < 2; h++) {
            uint32_t* at = &p[((((size_t)u * octets + o) * 2 + h) * 32 + lane) * 4];
            at[0] = b0[2 * h], at[1] = b1[2 * h], at[2] = b0[2 * h + 1], at[3] = b1[2 * h + 1];
        }
    }
    return p;
}

int main() {
    std::mt19937 rng(5);
    struct Shape { uint32_t n, kn, t, bb; } shapes[] = {{11, 64, 8, 2}, {130, 32, 5, 3}, {127, 16, 3, 8}, {33, 20, 31, 1}};
    int fails = 0;
    for (auto sh : shapes) for (uint32_t count : {1u, 3u, 9u, 17u}) for (uint32_t spb : {1u, 2u, 4u, 8u}) for (uint32_t cpt : {1u, 4u}) for (uint32_t gz : {1u, 3u, 8u}) {
        uint32_t half = 1u << (sh.bb - 1), w = sh.n + 1, offset = rng();
        std::vector<uint32_t> table((size_t)sh.kn * sh.t * half * w), in((size_t)count * (sh.kn + 1)), out((size_t)count * w, 0xdeadbeef), want(out.size());
        for (auto& x : table) x = rng(); for (auto& x : in) x = rng();
        reference(want, in, table, sh.n, sh.kn, sh.t, sh.bb, offset, count);
        uint32_t gx = (sh.n + KS_TX * cpt) / (KS_TX * cpt), gy = std::min<uint32_t>((count + spb - 1) / spb, 2);
        gridDim = {gx, gy, gz};
        if (gz > 1) std::fill(out.begin(), out.end(), 0u);
        for (uint32_t bx = 0; bx < gx; bx++) for (uint32_t by = 0; by < gy; by++) for (uint32_t bz = 0; bz < gz; bz++) {
            std::barrier<> b(KS_TX * KS_TY); bar = &b; std::vector<std::thread> th;
            for (uint32_t ty = 0; ty < KS_TY; ty++) for (uint32_t tx = 0; tx < KS_TX; tx++)
                th.emplace_back([&, tx, ty] { threadIdx = {tx, ty, 0}; blockIdx = {bx, by, bz};
                    goldfhe_bs_keyswitch(out.data(), in.data(), table.data(), sh.n, sh.kn, sh.t, sh.bb, offset, count, spb, cpt); });
            for (auto& t : th) t.join();
        }
        if (out != want) { fails++; printf("FAIL n=%u count=%u spb=%u cpt=%u gz=%u\n", sh.n, count, spb, cpt, gz); }
    }
    // The tiled kernels: one block of KST_W warps at a time.
    struct TShape { uint32_t n, kn, t, bb; } tshapes[] = {{11, 64, 8, 2}, {130, 32, 5, 3}, {630, 24, 8, 2}, {40, 16, 10, 3}, {7, 9, 15, 2}};
    for (auto sh : tshapes) for (uint32_t st : {4u, 16u}) for (uint32_t count : {1u, 3u, 9u, 17u, 40u}) for (uint32_t gy : {1u, 2u}) for (uint32_t gz : {1u, 3u, 8u}) {
        // An even offset, as every gadget's with t * bb <= 30, keeps the
        // named words below even (decomposed as they are).
        uint32_t half = 1u << (sh.bb - 1), w = sh.n + 1, offset = rng() & ~1u;
        std::vector<uint32_t> table((size_t)sh.kn * sh.t * half * w), in((size_t)count * (sh.kn + 1)), out((size_t)count * w, 0xdeadbeef), want(out.size());
        for (auto& x : table) x = rng(); for (auto& x : in) x = rng();
        // Some all-zero-digit and all-extreme inputs.
        for (uint32_t i = 0; i < sh.kn; i += 5) in[i] = 0u - offset;
        for (uint32_t i = 2; i < sh.kn; i += 9) in[i] = offset - 1u;  // odd: every digit +half
        reference(want, in, table, sh.n, sh.kn, sh.t, sh.bb, offset, count);
        uint32_t gx = (w + KST_W * 32 - 1) / (KST_W * 32);
        gridDim = {gx, gy, gz};
        if (gz > 1) std::fill(out.begin(), out.end(), 0u);
        for (uint32_t bx = 0; bx < gx; bx++) for (uint32_t by = 0; by < gy; by++) for (uint32_t bz = 0; bz < gz; bz++) {
            std::vector<std::thread> th;
            for (uint32_t tx = 0; tx < KST_W * 32; tx++)
                th.emplace_back([&, tx] { threadIdx = {tx, 0, 0}; blockIdx = {bx, by, bz};
                    auto f = sh.bb == 2 ? (st == 4 ? goldfhe_bs_keyswitch_s4_b2 : goldfhe_bs_keyswitch_s16_b2)
                                        : (st == 4 ? goldfhe_bs_keyswitch_s4_b3 : goldfhe_bs_keyswitch_s16_b3);
                    f(out.data(), in.data(), table.data(), sh.n, sh.kn, sh.t, offset, count); });
            for (auto& t : th) t.join();
        }
        if (out != want) { fails++; printf("FAIL tiled n=%u bb=%u st=%u count=%u gy=%u gz=%u\n", sh.n, sh.bb, st, count, gy, gz); }
    }
    // The tensor-core kernels. Basebit 2: t <= 8 (5: levels past t), an
    // odd kn (a last pair with one coordinate), n past a word tile, counts
    // past a warp's 16 and a block's 128 samples. Basebit 3: (coordinate,
    // level) pairs 8 per k-step, so t = 5 and an odd kn leave a last
    // partial k-step; t = 10 (the largest) and t = 1; every raw digit 0..7.
    struct MShape { uint32_t n, kn, t, bb; } mshapes[] = {{11, 64, 8, 2}, {630, 24, 8, 2}, {40, 9, 5, 2}, {70, 16, 1, 2},
                                                          {11, 64, 5, 3}, {742, 24, 5, 3}, {40, 9, 10, 3}, {70, 13, 1, 3},
                                                          {33, 3, 3, 3}};
    for (auto sh : mshapes) for (uint32_t count : {1u, 9u, 17u, 130u}) for (uint32_t gy : {1u, 2u}) for (uint32_t gz : {1u, 3u}) {
        if ((count < 17 && gy > 1) || (sh.n > 100 && (count != 130 || gy > 1 || gz > 1))) continue;  // time
        uint32_t half = 1u << (sh.bb - 1), w = sh.n + 1, offset = rng() & ~1u;  // even: as the tiled kernels'
        std::vector<uint32_t> table((size_t)sh.kn * sh.t * half * w), in((size_t)count * (sh.kn + 1)), out((size_t)count * w, 0xdeadbeef), want(out.size());
        for (auto& x : table) x = rng(); for (auto& x : in) x = rng();
        for (uint32_t i = 0; i < sh.kn; i += 5) in[i] = 0u - offset;
        for (uint32_t i = 2; i < sh.kn; i += 9) in[i] = offset - 1u;  // odd: every digit +half
        if (sh.bb == 2) {
            for (uint32_t i = 3; i < sh.kn; i += 7) in[i] = 0x55555554u - offset;  // every raw digit 1
        } else {
            for (uint32_t i = 3; i < sh.kn; i += 7) in[i] = 0xFFFFFFFEu - offset;  // every raw digit 7
            for (uint32_t i = 4; i < sh.kn; i += 11) in[i] = 0x92492492u - offset;  // every raw digit 4 (d = 0)
        }
        reference(want, in, table, sh.n, sh.kn, sh.t, sh.bb, offset, count);
        uint32_t gx = (w + 8 * KSM_Q - 1) / (8 * KSM_Q);
        gridDim = {gx, gy, gz};
        if (gz > 1) std::fill(out.begin(), out.end(), 0u);
        auto kernel = sh.bb == 2 ? goldfhe_bs_keyswitch_mma_b2 : goldfhe_bs_keyswitch_mma_b3;
        for (uint32_t bx = 0; bx < gx; bx++) for (uint32_t by = 0; by < gy; by++) for (uint32_t bz = 0; bz < gz; bz++) {
            std::barrier<> b(KSM_WARPS * 32); bar = &b;  // basebit 2's lookup table
            std::vector<std::unique_ptr<hm_mma_slots>> warps;
            for (int i = 0; i < KSM_WARPS; i++) warps.emplace_back(new hm_mma_slots);
            std::vector<std::thread> th;
            for (uint32_t tx = 0; tx < KSM_WARPS * 32; tx++)
                th.emplace_back([&, tx] { threadIdx = {tx, 0, 0}; blockIdx = {bx, by, bz}; hm_warp = warps[tx / 32].get();
                    kernel(out.data(), in.data(), table.data(), sh.n, sh.kn, sh.t, offset, count); });
            for (auto& t : th) t.join();
        }
        if (out != want) { fails++; printf("FAIL mma n=%u kn=%u t=%u bb=%u count=%u gy=%u gz=%u\n", sh.n, sh.kn, sh.t, sh.bb, count, gy, gz); }
    }
    // The packed kernel (basebit 2, t <= 8): odd kn (a last pair with one
    // coordinate), a last partial chunk of k-steps (kn = 33: 17 steps),
    // t < 8 (zero levels), n past a block's 32 words and a warp's octets,
    // counts past a warp's 32 and a block's 128 samples, several tiles per
    // block (gridDim.y) and chunks (gridDim.z).
    struct PShape { uint32_t n, kn, t; } pshapes[] = {{11, 64, 8}, {630, 24, 8}, {40, 9, 5}, {70, 16, 1}, {33, 33, 8}};
    for (auto sh : pshapes) for (uint32_t count : {1u, 9u, 40u, 130u, 300u}) for (uint32_t gy : {1u, 2u}) for (uint32_t gz : {1u, 3u}) {
        if ((count < 130 && gy > 1) || (sh.n > 100 && (count != 130 || gy > 1 || gz > 1))) continue;  // time
        uint32_t w = sh.n + 1, offset = rng() & ~1u;  // even: as the tiled kernels'
        std::vector<uint32_t> table((size_t)sh.kn * sh.t * 2 * w), in((size_t)count * (sh.kn + 1)), out((size_t)count * w, 0xdeadbeef), want(out.size());
        for (auto& x : table) x = rng(); for (auto& x : in) x = rng();
        for (uint32_t i = 0; i < sh.kn; i += 5) in[i] = 0u - offset;
        for (uint32_t i = 2; i < sh.kn; i += 9) in[i] = offset - 1u;  // odd: every digit +half
        for (uint32_t i = 3; i < sh.kn; i += 7) in[i] = 0x55555554u - offset;  // every raw digit 1
        for (uint32_t i = 4; i < sh.kn; i += 11) in[i] = 0xFFFFFFFEu - offset;  // every raw digit 3
        reference(want, in, table, sh.n, sh.kn, sh.t, 2, offset, count);
        const std::vector<uint32_t> packed = pack(table, sh.n, sh.kn, sh.t);
        uint32_t gx = ((sh.n + 8) / 8 + KSP_OCTETS - 1) / KSP_OCTETS;
        gridDim = {gx, gy, gz};
        if (gz > 1) std::fill(out.begin(), out.end(), 0u);
        const uint32_t threads = KSP_MW * KSP_NW * 32;
        for (uint32_t bx = 0; bx < gx; bx++) for (uint32_t by = 0; by < gy; by++) for (uint32_t bz = 0; bz < gz; bz++) {
            std::barrier<> b(threads); bar = &b;
            std::vector<std::unique_ptr<hm_mma_slots>> warps;
            for (uint32_t i = 0; i < threads / 32; i++) warps.emplace_back(new hm_mma_slots);
            std::vector<std::thread> th;
            for (uint32_t tx = 0; tx < threads; tx++)
                th.emplace_back([&, tx] { threadIdx = {tx, 0, 0}; blockIdx = {bx, by, bz}; hm_warp = warps[tx / 32].get();
                    goldfhe_bs_keyswitch_packed_b2(out.data(), in.data(), (const uint4*)packed.data(), sh.n, sh.kn, sh.t, offset, count); });
            for (auto& t : th) t.join();
        }
        if (out != want) { fails++; printf("FAIL packed n=%u kn=%u t=%u count=%u gy=%u gz=%u\n", sh.n, sh.kn, sh.t, count, gy, gz); }
    }
    printf("%d failures\n", fails);
    return fails != 0;
}
