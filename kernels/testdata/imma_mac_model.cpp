// Host model of testdata/imma_mac.cu's kernel: the source itself compiled
// by g++, every CUDA thread a std::thread, each warp's mma.sync computed
// from its 32 lanes' registers by the PTX ISA's fragment layouts
// (m16n8k32 and m16n8k16, u8 x u8 -> s32), __shfl_xor_sync through the
// warp's slots; the outputs of a few groups against the file's own host
// sum. It checks the kernel's fragment orders, recombination, lazy
// products and lane reduction, not nvcc or the GPU.
//   g++ -O2 -std=c++20 -pthread -o /tmp/imma_mac_model kernels/testdata/imma_mac_model.cpp && /tmp/imma_mac_model
#include <barrier>
#include <cstdint>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "mma_model.h"

#define IMMA_MAC_MODEL
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
struct uint4 {
    uint32_t x, y, z, w;
};
struct hm_dim3 {
    unsigned x = 0, y = 1, z = 1;
};
thread_local hm_dim3 threadIdx, blockIdx;
hm_dim3 blockDim, gridDim;
template <class T>
static inline T __ldg(const T* p) {
    return *p;
}

// One warp's exchange slots: the mma's (testdata/mma_model.h) and the
// shuffles'.
struct hm_warp_slots : hm_mma_slots {
    uint64_t v[32];
};
thread_local hm_warp_slots* hm_warp;

static inline void mma_k32(int32_t (&d)[4], const uint32_t* a, uint32_t b0, uint32_t b1) {
    hm_mma<32, false>(*hm_warp, threadIdx.x % 32, d, a, b0, b1);
}
static inline void mma_k16(int32_t (&d)[4], const uint32_t* a, uint32_t b0) {
    hm_mma<16, false>(*hm_warp, threadIdx.x % 32, d, a, b0, 0);
}
static inline uint64_t __shfl_xor_sync(unsigned, uint64_t v, int mask) {
    const unsigned lane = threadIdx.x % 32;
    hm_warp->v[lane] = v;
    hm_warp->bar.arrive_and_wait();
    const uint64_t r = hm_warp->v[lane ^ (unsigned)mask];
    hm_warp->bar.arrive_and_wait();
    return r;
}

static inline void launder(uint32_t&) {}
static inline void launder(uint64_t&) {}

#include "imma_mac.cu"

// slotsCheck: slots_to_u64 against an __int128 sum for random slots, for
// slots at the extremes, and for slots whose low 64 bits carry (rare in
// the kernel's random outputs, so checked here); the number wrong.
static long slotsCheck() {
    std::mt19937_64 rng(99);
    long bad = 0;
    const int32_t top = (1 << 22) - 1;
    auto one = [&](const int32_t (&v)[8]) {
        unsigned __int128 x = 0;
        for (int b = 0; b < 8; b++) x += (unsigned __int128)(uint32_t)v[b] << (8 * b);
        const uint64_t want = (uint64_t)(x % GLP), got = slots_to_u64(v) % GLP;
        bad += got != want;
    };
    for (int i = 0; i < 1 << 20; i++) {
        int32_t v[8];
        for (int b = 0; b < 8; b++) {
            const uint64_t r = rng();
            // Mostly uniform; some slots at 0 or the top, to reach both ends.
            v[b] = (r & 7) == 0 ? 0 : (r & 7) == 1 ? top : (int32_t)((r >> 8) % (uint64_t)(top + 1));
        }
        one(v);
    }
    // The low word's carry: Y mod 2^32 near 2^32 with X large.
    for (uint32_t d = 0; d < 4096; d++) {
        int32_t v[8] = {top, top, top, top, (int32_t)(0xFF - (d & 0xFF)), (int32_t)(0xFFFF >> 8), 0, (int32_t)(d >> 8)};
        one(v);
    }
    return bad;
}

int main() {
    if (const long b = slotsCheck()) {
        printf("slots_to_u64: %ld wrong\n", b);
        return 1;
    }
    const int groups = 4;
    const Problem pr = makeProblem(groups, 12);
    long bad = 0;
    // MODE 1 with R = 2, then MODE 2 (operands reused) with R = 4.
    for (int mode = 1; mode <= 2; mode++) {
        std::vector<uint64_t> out((size_t)groups * P * COLS * NS, 0x5A5A5A5A5A5A5A5Aull);
        uint32_t sink = 0;
        // One block of two warps: each walks half the (group, position) items.
        blockDim.x = 64;
        gridDim.x = 1;
        std::vector<std::unique_ptr<hm_warp_slots>> warps;
        for (int w = 0; w < 2; w++) warps.emplace_back(new hm_warp_slots);
        std::vector<std::thread> ts;
        for (unsigned t = 0; t < blockDim.x; t++) {
            ts.emplace_back([&, t] {
                threadIdx.x = t;
                blockIdx.x = 0;
                hm_warp = warps[t / 32].get();
                const uint4* kf = reinterpret_cast<const uint4*>(pr.frag.data());
                const uint32_t* dig = reinterpret_cast<const uint32_t*>(pr.D.data());
                if (mode == 1)
                    imma_mac<1, 2>(kf, dig, pr.F.data(), out.data(), groups, &sink);
                else
                    imma_mac<2, 4>(kf, dig, pr.F.data(), out.data(), groups, &sink);
            });
        }
        for (auto& t : ts) t.join();
        const long b = checkProblem(pr, out, 1, mode == 2 ? 4 : 1);
        printf("MODE %d: %ld of %zu outputs wrong\n", mode, b, out.size());
        bad += b;
    }
    return bad != 0;
}
