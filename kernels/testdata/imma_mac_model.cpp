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

// One warp's exchange slots.
struct hm_warp_slots {
    std::barrier<> bar{32};
    uint32_t a[32][4], b[32][2];
    uint64_t v[32];
};
thread_local hm_warp_slots* hm_warp;

// mma.sync.aligned.m16n8k<K>.row.col.s32.u8.u8.s32, g = lane / 4, q = lane
// % 4. K = 32: a0 = A[g][4q..], a1 = A[g+8][4q..], a2 = A[g][16+4q..], a3 =
// A[g+8][16+4q..], b0 = B[4q..][g], b1 = B[16+4q..][g]. K = 16: a0 =
// A[g][4q..], a1 = A[g+8][4q..], b0 = B[4q..][g]. C: c0, c1 = C[g][2q, 2q+1],
// c2, c3 = C[g+8][2q, 2q+1].
template <int K>
static void hm_mma(int32_t (&d)[4], const uint32_t* a, uint32_t b0, uint32_t b1) {
    const unsigned lane = threadIdx.x % 32, g = lane / 4, q = lane % 4;
    for (int r = 0; r < (K == 32 ? 4 : 2); r++) hm_warp->a[lane][r] = a[r];
    hm_warp->b[lane][0] = b0, hm_warp->b[lane][1] = b1;
    hm_warp->bar.arrive_and_wait();
    auto A = [](unsigned row, unsigned k) {
        const unsigned reg = (row >= 8 ? 1 : 0) + (k >= 16 ? 2 : 0);
        return (hm_warp->a[(row % 8) * 4 + (k % 16) / 4][reg] >> (8 * (k % 4))) & 0xFF;
    };
    auto B = [](unsigned k, unsigned col) {
        return (hm_warp->b[col * 4 + (k % 16) / 4][k >= 16 ? 1 : 0] >> (8 * (k % 4))) & 0xFF;
    };
    for (int r = 0; r < 4; r++) {
        const unsigned row = g + (r >= 2 ? 8 : 0), col = 2 * q + (r & 1);
        int32_t sum = 0;
        for (unsigned k = 0; k < K; k++) sum += (int32_t)(A(row, k) * B(k, col));
        d[r] += sum;
    }
    hm_warp->bar.arrive_and_wait();
}
static inline void mma_k32(int32_t (&d)[4], const uint32_t* a, uint32_t b0, uint32_t b1) { hm_mma<32>(d, a, b0, b1); }
static inline void mma_k16(int32_t (&d)[4], const uint32_t* a, uint32_t b0) { hm_mma<16>(d, a, b0, 0); }
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
