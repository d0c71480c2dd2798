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

#include "imma_mac.cu"

int main() {
    const int groups = 3;
    const Problem pr = makeProblem(groups, 12);
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
            imma_mac<1>(reinterpret_cast<const uint4*>(pr.frag.data()), reinterpret_cast<const uint32_t*>(pr.D.data()),
                        pr.F.data(), out.data(), groups, &sink);
        });
    }
    for (auto& t : ts) t.join();
    const long bad = checkProblem(pr, out, 1);
    printf("%ld of %zu outputs wrong\n", bad, out.size());
    return bad != 0;
}
