// Host model of the wide, cluster and split blind-rotation kernels
// (bootstrap_fused.cuh bsw_run, bootstrap_cluster.cuh bsc_run,
// bootstrap_split.cuh bss_run, with and without PRE; plain and grouped, G
// = 1, 2 and 3): the device source itself, compiled by g++, every CUDA
// thread a std::thread, __syncthreads a std::barrier per block,
// cluster.sync one per cluster, __shfl_xor_sync a std::barrier per warp,
// the split kernels' named barrier (bss_sync) one per block, the wide
// kernels' named barriers (bsw_bar_sync) one per block and id,
// each block's shared memory a host array (poisoned), distributed shared
// memory through testdata/cg's stand-in of cooperative_groups, the split
// kernel's mbarriers and st.async by atomics on the mbarrier's word
// (bootstrap_split.cuh). It runs each kernel on the vectors that
// TestWriteBlindRotateVectors writes (inputs, key and tables, and the Go
// references' output) and compares bit for bit, and checks that the
// vector's shared bytes (WideShape.SharedBytes) are the kernel's
// bsw_shared, bsc_shared or bss_shared. A Pre split kernel (_g2p, _g3p)
// runs beside its combine kernel (bootstrap_combine.cuh, a grid of two
// blocks, started first, as the GPU's programmatic dependent launch lets
// them run together), which forms every step's K' from the vector's key
// and raises the steps' flags while the split kernel waits on them; the
// model checks the K' it wrote against the vector's (Go's refCombine, mod
// p), and that the split kernel zeroes every flag of its samples at its
// end. With
// -fsanitize=thread it also reports a missing barrier as a data race. It
// checks the kernels' logic without nvcc or a GPU, not CUDA's compiler or
// memory model.
//   GOLDFHE_MODEL_VECTORS=/tmp/brvec go test ./kernels -run TestWriteBlindRotateVectors
//   g++ -O1 -std=c++20 -pthread -Ikernels/testdata/cg -o /tmp/blindrotate_model kernels/testdata/blindrotate_model.cpp
//   /tmp/blindrotate_model /tmp/brvec/*.bin
// (-fsanitize=thread or -fsanitize=address for races, or out-of-bounds
// shared-memory accesses: each block's array is SharedBytes long.)
// Vector file (little-endian): 18 uint32 F1, F2, F3, k, l, T, kind (0
// wide, 1 cluster, 2 split, 3 Pre split, 4 flat; T is a split kernel's
// compute threads per block, a flat kernel's threads), G, n, beta,
// offset, mu, count, shared bytes, then the lengths of tables, key
// (uint64; K' for a Pre split kernel, the paired layout for a flat one),
// in and ext (uint32), then those four arrays; for a Pre split kernel
// then the length of the key and the key (uint64).
#include <algorithm>
#include <barrier>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#define __device__
#define __host__
#define __global__
#define __forceinline__ inline
#define __shared__ __thread  // only `extern __shared__` arrays are compiled: see hm_sm
#define __launch_bounds__(...)
#define __cluster_dims__(...)
struct hm_dim3 { unsigned x = 0, y = 1, z = 1; };
thread_local hm_dim3 threadIdx, blockIdx, blockDim, gridDim;
thread_local std::barrier<>* hm_block_bar;
// The split kernels' named barrier 1 (bss_sync): the compute threads of
// the block, not its producer warp.
thread_local std::barrier<>* hm_compute_bar;
// The wide kernels' named barriers (bsw_bar_sync): per block, a
// std::barrier per id, made by the first thread to reach it with its
// count; a later count that differs is a kernel bug, reported and fatal.
struct hm_named_bars {
    std::mutex mu;
    std::map<unsigned, std::pair<int, std::unique_ptr<std::barrier<>>>> bars;
};
thread_local hm_named_bars* hm_named;
static inline void hm_bar_sync(unsigned id, int count) {
    std::barrier<>* b;
    {
        std::lock_guard<std::mutex> g(hm_named->mu);
        auto& e = hm_named->bars[id];
        if (!e.second) e = {count, std::make_unique<std::barrier<>>(count)};
        if (e.first != count) {
            fprintf(stderr, "named barrier %u: count %d, earlier %d\n", id, count, e.first);
            abort();
        }
        b = e.second.get();
    }
    b->arrive_and_wait();
}
static inline void __syncthreads() { hm_block_bar->arrive_and_wait(); }
// Warps for __shfl_xor_sync and __syncwarp: the warp's threads meet at its
// barrier, each shuffled value passing through the warp's slots.
struct hm_warp_ctx {
    std::barrier<>* bar;
    uint64_t* slots;
};
thread_local hm_warp_ctx hm_warp;
// Every __syncwarp of the modelled kernels is reached by all the warp's
// threads (the wide kernels' grouped multiply-accumulate orders its
// in-place writes after the warp's reads by it).
static inline void __syncwarp() { hm_warp.bar->arrive_and_wait(); }
static inline uint64_t __shfl_xor_sync(unsigned, uint64_t v, int mask) {
    const unsigned lane = threadIdx.x % 32;
    hm_warp.slots[lane] = v;
    hm_warp.bar->arrive_and_wait();
    const uint64_t r = hm_warp.slots[lane ^ (unsigned)mask];
    hm_warp.bar->arrive_and_wait();
    return r;
}
static inline uint64_t __umul64hi(uint64_t a, uint64_t b) { return (uint64_t)(((unsigned __int128)a * b) >> 64); }
template <class T> static inline T __ldg(const T* p) { return *p; }
// CUDA's vector type of the flat kernel's paired key loads (PAIR).
struct ulonglong2 { unsigned long long x, y; };
static inline unsigned __brev(unsigned x) {
    unsigned r = 0;
    for (int i = 0; i < 32; i++) r |= ((x >> i) & 1u) << (31 - i);
    return r;
}
#include <cooperative_groups.h>
thread_local hm_cluster_ctx* hm_cluster;
thread_local int hm_rank;
thread_local uint64_t* hm_smem_base;
// `extern __shared__ uint64_t bsw_sm[];` becomes the declaration of this
// per-thread pointer to the thread's block's array (__thread: a
// thread_local here would get a TLS wrapper that g++ 12 calls through a
// null pointer).
__thread uint64_t (*hm_sm)[];
#define bsw_sm (*hm_sm)
#define bsc_sm (*hm_sm)
#define bsf_sm (*hm_sm)
#define bss_sm (*hm_sm)

#include "../goldilocks.cuh"
// ntt_fastops.cuh is PTX: its functions are the canonical gl_* ones
// (testdata/hybrid_model.cpp does the same).
#define GOLDFHE_NTT_FASTOPS_CUH
static inline uint64_t fa_add(uint64_t a, uint64_t b) { return gl_add(a, b); }
static inline uint64_t fa_sub(uint64_t a, uint64_t b) { return gl_sub(a, b); }
template <int S> static inline uint64_t fa_mul_pow2(uint64_t x) { return gl_mul_pow2(x, S); }
#define GOLDFHE_HYB_NO_KERNELS
// Of bootstrap.cuh only bs_modswitch is needed (its key-switching kernel
// has a static __shared__ array, which __thread cannot declare).
#define GOLDFHE_BOOTSTRAP_CUH
static inline uint32_t bs_modswitch(uint32_t t, uint32_t logm) {
    return (uint32_t)(((((uint64_t)t) >> (31 - logm)) + 1) >> 1) & ((1u << logm) - 1);
}
// The combine kernel's psiPow table: its block's array (hm_sm), not a
// __thread one.
#define BSP_PSI_SHARED(name, words) uint64_t* name = *hm_sm
#include "../bootstrap_split.cuh"

typedef void (*kernel)(const uint32_t*, const uint64_t*, const uint64_t*, uint32_t*, uint32_t, uint32_t, uint32_t,
                       uint32_t, uint32_t);
#define K(name) {#name, name}
static const std::map<std::string, kernel> kernels = {
    K(goldfhe_bs_wide_8x8x16_k1_l3_t128),       K(goldfhe_bs_wide_8x8x16_k1_l3_t64),
    K(goldfhe_bs_wide_8x8x16_k1_l2_t128),       K(goldfhe_bs_wide_8x8x16_k1_l2_t64),
    K(goldfhe_bs_wide_8x8x8_k3_l2_t64),         K(goldfhe_bs_wide_8x8x8_k3_l2_t32),
    K(goldfhe_bs_cluster_8x8x16_k1_l3_t128),    K(goldfhe_bs_cluster_8x8x16_k1_l2_t128),
    K(goldfhe_bs_cluster_8x8x8_k3_l2_t64),      K(goldfhe_bs_wide_8x8x16_k1_l3_t128_g2),
    K(goldfhe_bs_wide_8x8x16_k1_l3_t64_g2),     K(goldfhe_bs_wide_8x8x16_k1_l2_t128_g2),
    K(goldfhe_bs_wide_8x8x16_k1_l2_t64_g2),     K(goldfhe_bs_wide_8x8x8_k3_l2_t64_g2),
    K(goldfhe_bs_wide_8x8x8_k3_l2_t32_g2),      K(goldfhe_bs_cluster_8x8x16_k1_l3_t128_g2),
    K(goldfhe_bs_cluster_8x8x16_k1_l2_t128_g2), K(goldfhe_bs_cluster_8x8x8_k3_l2_t64_g2),
    K(goldfhe_bs_split_8x8x16_k1_l3_c8),        K(goldfhe_bs_split_8x8x16_k1_l2_c8),
    K(goldfhe_bs_split_8x8x8_k3_l2_c8),         K(goldfhe_bs_split_8x8x16_k1_l3_c8_g2),
    K(goldfhe_bs_split_8x8x16_k1_l2_c8_g2),     K(goldfhe_bs_split_8x8x8_k3_l2_c8_g2),
    K(goldfhe_bs_wide_8x8x16_k1_l3_t128_g3),    K(goldfhe_bs_wide_8x8x16_k1_l3_t64_g3),
    K(goldfhe_bs_wide_8x8x16_k1_l2_t128_g3),    K(goldfhe_bs_wide_8x8x16_k1_l2_t64_g3),
    K(goldfhe_bs_wide_8x8x8_k3_l2_t64_g3),      K(goldfhe_bs_wide_8x8x8_k3_l2_t32_g3),
    K(goldfhe_bs_cluster_8x8x16_k1_l3_t128_g3), K(goldfhe_bs_cluster_8x8x16_k1_l2_t128_g3),
    K(goldfhe_bs_cluster_8x8x8_k3_l2_t64_g3),   K(goldfhe_bs_split_8x8x16_k1_l3_c8_g3),
    K(goldfhe_bs_split_8x8x16_k1_l2_c8_g3),     K(goldfhe_bs_split_8x8x8_k3_l2_c8_g3),
    K(goldfhe_bs_wide_8x8x16_k1_l3_f256_g3),
};

// The Pre split kernels: K' in place of the key, then the steps' flags.
typedef void (*pre_kernel)(const uint32_t*, const uint64_t*, const uint64_t*, uint32_t*, uint32_t*, uint32_t,
                           uint32_t, uint32_t, uint32_t, uint32_t);
static const std::map<std::string, pre_kernel> pre_kernels = {
    K(goldfhe_bs_split_8x8x16_k1_l3_c8_g2p), K(goldfhe_bs_split_8x8x16_k1_l2_c8_g2p),
    K(goldfhe_bs_split_8x8x8_k3_l2_c8_g2p),  K(goldfhe_bs_split_8x8x16_k1_l3_c8_g3p),
    K(goldfhe_bs_split_8x8x16_k1_l2_c8_g3p), K(goldfhe_bs_split_8x8x8_k3_l2_c8_g3p),
};

// The combine kernels (BSP_DEFINE): in, key, psiPow, K', flags, n, count.
typedef void (*combine_kernel)(const uint32_t*, const uint64_t*, const uint64_t*, uint64_t*, uint32_t*, uint32_t,
                               uint32_t);
static const std::map<std::string, combine_kernel> combine_kernels = {
    K(goldfhe_bs_combine_n1024_k1_l3_g2), K(goldfhe_bs_combine_n1024_k1_l2_g2), K(goldfhe_bs_combine_n512_k3_l2_g2),
    K(goldfhe_bs_combine_n1024_k1_l3_g3), K(goldfhe_bs_combine_n1024_k1_l2_g3), K(goldfhe_bs_combine_n512_k3_l2_g3),
};

static std::string kernel_name(uint32_t F1, uint32_t F2, uint32_t F3, uint32_t k, uint32_t l, uint32_t T, uint32_t kind,
                               uint32_t G) {
    char buf[128], suffix[8] = "";
    if (G >= 2) snprintf(suffix, sizeof suffix, "_g%u%s", G, kind == 3 ? "p" : "");
    if (kind == 4) {
        snprintf(buf, sizeof buf, "goldfhe_bs_wide_%ux%ux%u_k%u_l%u_f%u%s", F1, F2, F3, k, l, T, suffix);
    } else if (kind >= 2) {
        snprintf(buf, sizeof buf, "goldfhe_bs_split_%ux%ux%u_k%u_l%u_c%u%s", F1, F2, F3, k, l,
                 (k + 1) * F1 * F2 * F3 / T, suffix);
    } else {
        snprintf(buf, sizeof buf, "goldfhe_bs_%s_%ux%ux%u_k%u_l%u_t%u%s", kind ? "cluster" : "wide", F1, F2, F3, k, l,
                 T, suffix);
    }
    return buf;
}

// kernel_shared: the dynamic shared memory the kernel's source says a
// block needs.
static int kernel_shared(int F1, int F2, int F3, int k, int l, int T, int kind, int G) {
    switch (kind) {
    case 0:
        return bsw_shared(F1, F2, F3, k + 1, l, G);
    case 1:
        return bsc_shared(F1, F2, F3, l, G);
    case 4:
        return bsw_flat_shared(F1, F2, F3, k + 1, l);
    default:
        return bss_shared(F1, F2, F3, k + 1, l, (k + 1) * F1 * F2 * F3 / T, G, kind == 3);
    }
}

int main(int argc, char** argv) {
    int failed = 0;
    for (int a = 1; a < argc; a++) {
        FILE* f = fopen(argv[a], "rb");
        if (!f) {
            perror(argv[a]);
            return 2;
        }
        std::vector<char> buf;
        char tmp[1 << 16];
        for (size_t r; (r = fread(tmp, 1, sizeof tmp, f)) > 0;) buf.insert(buf.end(), tmp, tmp + r);
        fclose(f);
        uint32_t h[18];
        memcpy(h, buf.data(), sizeof h);
        const uint32_t k = h[3], l = h[4], T = h[5], cl = h[6], n = h[8], beta = h[9], offset = h[10], mu = h[11],
                       count = h[12], shared = h[13];
        // Poisoned words after the key and the tables: a read past them (a
        // term of a missing TRGSW) changes the output.
        const size_t guard = 1 << 16;
        std::vector<uint64_t> tables(h[14] + guard, 0x5A5A5A5A5A5A5A5Aull), key(h[15] + guard, 0x5A5A5A5A5A5A5A5Aull);
        std::vector<uint32_t> in(h[16]), want(h[17]), ext(h[17], 0x5A5A5A5Au);
        const char* p = buf.data() + sizeof h;
        memcpy(tables.data(), p, h[14] * 8), p += h[14] * 8;
        memcpy(key.data(), p, h[15] * 8), p += h[15] * 8;
        memcpy(in.data(), p, in.size() * 4), p += in.size() * 4;
        memcpy(want.data(), p, want.size() * 4), p += want.size() * 4;
        const std::string name = kernel_name(h[0], h[1], h[2], k, l, T, cl, h[7]);
        // A vector whose shared bytes differ from the source's (written by a
        // Go tree whose SharedBytes and kernels disagree) is a failure, and
        // running the kernel in too small an array would corrupt the heap.
        if (const int want = kernel_shared(h[0], h[1], h[2], k, l, T, cl, h[7]); (int)shared != want) {
            printf("%s: %u shared bytes (WideShape.SharedBytes), the source says %d\n", name.c_str(), shared, want);
            failed++;
            continue;
        }
        const bool pre = cl == 3;
        // A Pre split kernel's key, for its combine kernel (poisoned past
        // its end too), and the K' buffer the combine kernel fills.
        std::vector<uint64_t> raw, kp;
        if (pre) {
            uint32_t rawLen;
            memcpy(&rawLen, p, 4), p += 4;
            raw.assign(rawLen + guard, 0x5A5A5A5A5A5A5A5Aull);
            memcpy(raw.data(), p, (size_t)rawLen * 8);
            kp.assign(h[15], 0xA5A5A5A5A5A5A5A5ull);
        }
        const auto it = kernels.find(name);
        const auto pit = pre_kernels.find(name);
        if (pre ? pit == pre_kernels.end() : it == kernels.end()) {
            printf("%s: no kernel %s in the model\n", argv[a], name.c_str());
            return 2;
        }
        // A Pre split kernel's flags, one per (sample, step), at 0: its
        // combine kernel raises them.
        const uint32_t N = h[0] * h[1] * h[2], groups = pre ? bsp_groups(n, h[7]) : 0;
        std::vector<uint32_t> flags((size_t)count * groups, 0u);
        // The combine kernel: two blocks of BSP_THREADS threads, each block
        // with its psiPow array, started before the split kernel.
        std::vector<std::thread> combiners;
        const int cgrid = 2;
        std::vector<std::vector<uint64_t>> psiSm;
        std::vector<std::unique_ptr<std::barrier<>>> psiBars;
        if (pre) {
            char cname[64];
            snprintf(cname, sizeof cname, "goldfhe_bs_combine_n%u_k%u_l%u_g%u", N, k, l, h[7]);
            const auto cit = combine_kernels.find(cname);
            if (cit == combine_kernels.end()) {
                printf("%s: no kernel %s in the model\n", argv[a], cname);
                return 2;
            }
            const uint64_t* psi = tables.data() + (h[14] - 2 * N);  // PsiPowers, last in the tables
            for (int b = 0; b < cgrid; b++) {
                psiSm.emplace_back(bsg_psi_words(N), 0xA5A5A5A5A5A5A5A5ull);
                psiBars.emplace_back(new std::barrier<>(BSP_THREADS));
            }
            for (int b = 0; b < cgrid; b++) {
                for (int t = 0; t < BSP_THREADS; t++) {
                    combiners.emplace_back([&, b, t, psi, fn = cit->second] {
                        threadIdx.x = t;
                        blockIdx.x = b;
                        blockDim.x = BSP_THREADS;
                        gridDim.x = cgrid;
                        hm_block_bar = psiBars[b].get();
                        hm_sm = reinterpret_cast<uint64_t(*)[]>(psiSm[b].data());
                        fn(in.data(), raw.data(), psi, kp.data(), flags.data(), n, count);
                    });
                }
            }
        }
        // A grid of two blocks (clusters), run one after the other: they do
        // not interact, and each takes samples s, s + 2, ...
        const bool flat = cl == 4;  // a wide kernel of T threads
        const int bps = flat ? 1 : cl >= 2 ? (k + 1) * h[0] * h[1] * h[2] / T : cl ? k + 1 : 1;
        // A split kernel's block: T compute threads, and for G >= 2 the
        // combiners (not with PRE) and the producer warp (bss_block).
        const int threads = flat ? T : cl >= 2 ? bss_block(T, h[7], pre) : cl ? T * l : T * (k + 1) * l, grid = 2;
        for (int g = 0; g < grid; g++) {
            std::vector<std::vector<uint64_t>> sm(bps, std::vector<uint64_t>(shared / 8, 0xA5A5A5A5A5A5A5A5ull));
            std::vector<uint64_t*> smp(bps);
            std::vector<std::unique_ptr<std::barrier<>>> bars, cbars, wbars;
            const int warps = (threads + 31) / 32;
            std::vector<uint64_t> wslots((size_t)bps * warps * 32);
            std::vector<hm_named_bars> named(bps);
            for (int b = 0; b < bps; b++) {
                smp[b] = sm[b].data();
                bars.emplace_back(new std::barrier<>(threads));
                cbars.emplace_back(new std::barrier<>(cl >= 2 && !flat ? T : threads));
                for (int w = 0; w < warps; w++) wbars.emplace_back(new std::barrier<>(std::min(32, threads - 32 * w)));
            }
            std::barrier<> cbar(bps * threads);
            hm_cluster_ctx ctx{&cbar, smp.data()};
            std::vector<std::thread> ts;
            for (int b = 0; b < bps; b++) {
                for (int t = 0; t < threads; t++) {
                    ts.emplace_back([&, b, t] {
                        threadIdx.x = t;
                        blockIdx.x = g * bps + b;
                        blockDim.x = threads;
                        gridDim.x = grid * bps;
                        hm_block_bar = bars[b].get();
                        hm_compute_bar = cbars[b].get();
                        hm_named = &named[b];
                        hm_warp = {wbars[b * warps + t / 32].get(), wslots.data() + ((size_t)b * warps + t / 32) * 32};
                        hm_cluster = &ctx;
                        hm_rank = b;
                        hm_smem_base = smp[b];
                        hm_sm = reinterpret_cast<uint64_t(*)[]>(smp[b]);
                        if (pre) {
                            pit->second(in.data(), kp.data(), tables.data(), ext.data(), flags.data(), n, beta,
                                        offset, mu, count);
                        } else {
                            it->second(in.data(), key.data(), tables.data(), ext.data(), n, beta, offset, mu, count);
                        }
                    });
                }
            }
            for (auto& t : ts) t.join();
        }
        for (auto& t : combiners) t.join();
        int bad = 0;
        // The combine kernel's K' against Go's (the same values mod p).
        for (size_t i = 0; i < kp.size(); i++) {
            if (kp[i] % GL_P != key[i] % GL_P && ++bad <= 3)
                printf("  K'[%zu] = %#llx, want %#llx (mod p)\n", i, (unsigned long long)kp[i],
                       (unsigned long long)key[i]);
        }
        for (size_t i = 0; i < want.size(); i++) {
            if (ext[i] != want[i] && ++bad <= 3) printf("  ext[%zu] = %#x, want %#x\n", i, ext[i], want[i]);
        }
        // A Pre split kernel leaves every flag of its samples at 0, for the
        // next pass.
        for (size_t i = 0; i < flags.size(); i++) {
            if (flags[i] != 0 && ++bad <= 3) printf("  flag %zu (sample %zu, step %zu) left at %u\n", i, i / groups,
                                                    i % groups, flags[i]);
        }
        printf("%-42s n = %u, count = %u: %s (%d of %zu words differ)\n", name.c_str(), n, count, bad ? "FAIL" : "ok",
               bad, want.size() + kp.size());
        failed += bad != 0;
    }
    printf("%d of %d vector files failed\n", failed, argc - 1);
    return failed != 0;
}
