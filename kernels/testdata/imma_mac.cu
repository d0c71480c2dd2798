// imma_mac.cu: the multiply-accumulate of one grouped-by-3 CMux step on the
// tensor cores, alone, for the design sketched in kernels/NOTES.md session
// 12 (a first measurement of it, not part of any kernel). Per position p
// and sample s it computes
//   out[c] = sum over S < 7 of f_S * sum over j < 6 of d_j * K_(S,j,c) mod p,
// c < 2, Goldilocks p, with the inner sums as one integer matrix product of
// bytes: A[(S,c) + 16 b][(j, a)] = byte b of K_(S,j,c) * 2^(8a) mod p (the
// key folded and split, prepared on the host in mma's fragment order), B =
// the digits' bytes d_(j,a) of 8 samples (mma's n), C's slots < 48 * 255^2
// < 2^22, then sum_b C_b 2^(8b) reduced to 64 bits, times f_S lazily
// (lz_mac), the seven terms summed across lanes (shuffles), reduced. Rows
// of an m-tile are the 14 outputs (S, c) (2 rows spare), the m-tile is the
// byte b, so each lane holds all eight bytes of its outputs. k = 48 is one
// m16n8k32 and one m16n8k16 per m-tile: 16 mma per position and 8 samples.
//
// It checks every output against a host sum (__int128), and prints
// sample-positions per second and SM cycles per sample-position at the
// device's maximum clock, to set against today's multiply-accumulate:
// about 15,600 FMA-pipe SM cycles per step and sample, 15.2 per position
// (kernels/NOTES.md session 11). Modes: 1 the whole MAC, digits and
// factors read from global memory for each group; 0 the mma alone (their
// C words folded into a checksum); 2 and 3 the same with each lane's
// digits and factors read once per item and reused for its R groups (the
// operands on chip, as a kernel that makes them would have them). R is
// how many groups of 8 samples share one read of the key's fragments: 1
// as read per group, 4 and 16 the floor of a design sharing it more
// widely.
//   nvcc -O3 -std=c++17 -arch=sm_90 -o /tmp/imma_mac kernels/testdata/imma_mac.cu && /tmp/imma_mac
// First run in session 13 (kernels/NOTES.md). testdata/imma_mac_model.cpp
// runs the kernel on the host (mma from the PTX ISA's fragment layouts)
// against the same reference, and slots_to_u64 against __int128 sums:
//   g++ -O2 -std=c++20 -pthread -o /tmp/imma_mac_model kernels/testdata/imma_mac_model.cpp && /tmp/imma_mac_model
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "../ntt_lazy.cuh"

constexpr int P = 1024;        // positions
constexpr int NS = 8;          // samples per group (mma's n)
constexpr int TERMS = 7, DIG = 6, COLS = 2;
constexpr uint64_t GLP = 0xFFFFFFFF00000001ull;

static uint64_t mulmod(uint64_t a, uint64_t b) { return (uint64_t)((unsigned __int128)a * b % GLP); }
static uint64_t addmod(uint64_t a, uint64_t b) { return (uint64_t)(((unsigned __int128)a + b) % GLP); }

#ifndef IMMA_MAC_MODEL
// launder: an empty asm that the compiler must assume changes x.
__device__ __forceinline__ void launder(uint32_t& x) { asm volatile("" : "+r"(x)); }
__device__ __forceinline__ void launder(uint64_t& x) { asm volatile("" : "+l"(x)); }
__device__ __forceinline__ void mma_k32(int32_t (&d)[4], const uint32_t* a, uint32_t b0, uint32_t b1) {
    asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.u8.u8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};"
                 : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
__device__ __forceinline__ void mma_k16(int32_t (&d)[4], const uint32_t* a, uint32_t b0) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.s32.u8.u8.s32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};"
                 : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(b0));
}
#endif

// slots_to_u64: sum_b v_b 2^(8b) (each v_b in [0, 2^22), the sum below
// 2^79) as a 64-bit representative mod p. Neighbouring slots are paired
// first (v_2i + v_(2i+1) 2^8 < 2^31), then X = w_0 + w_1 2^16 and Y = w_2
// + w_3 2^16 (below 2^48), the sum X + Y 2^32 as lo + hi 2^64 with hi <
// 2^17, and 2^64 = 2^32 - 1 mod p: about a third of the instructions of
// adding the eight shifted slots one by one (session 13's first run).
__host__ __device__ inline uint64_t slots_to_u64(const int32_t (&v)[8]) {
    uint32_t w[4];
    for (int i = 0; i < 4; i++) w[i] = (uint32_t)v[2 * i] + ((uint32_t)v[2 * i + 1] << 8);
    const uint64_t X = w[0] + ((uint64_t)w[1] << 16), Y = w[2] + ((uint64_t)w[3] << 16);
    const uint64_t lo = X + (Y << 32), hi = (Y >> 32) + (lo < X);
    const uint64_t t = (hi << 32) - hi;  // hi (2^32 - 1) below 2^49, by ALU subtraction, not a multiply
    uint64_t r = lo + t;
    if (r < t) r += 0xFFFFFFFFull;  // 2^64 again; cannot carry twice
    return r;
}

// Key fragments, per position: for each m-tile b (0..7) the four words of
// its m16n8k32 A fragment (k 0..31) then the two of its m16n8k16 one (k
// 32..47), 48 words per lane, stored as 12 uint4 each lane-interleaved
// ([p][i][lane]), so that each of a warp's 12 loads reads 512 contiguous
// bytes. (The first layout, [p][lane][i], made every load touch 32 lines
// and left the kernel bound by its loads at 42 SM cycles per
// sample-position, mma alone; see kernels/NOTES.md session 13.)
// Digits: [group][position][sample][12 words] (6 u64 little-endian: byte
// k = 8j + a). f: [group][position][sample][7]. out: [group][position][c][sample].
// A warp's item is one position and R consecutive groups: the key's
// fragments are loaded once per item and used for the R groups, which
// stands for a design that shares each key read among 8R samples (R = 1:
// every group reads the key itself).
template <int MODE, int R>
__global__ void __launch_bounds__(256) imma_mac(const uint4* __restrict__ keyFrag, const uint32_t* __restrict__ dig,
                                                const uint64_t* __restrict__ f, uint64_t* __restrict__ out,
                                                int groups, uint32_t* sink) {
    const int lane = threadIdx.x % 32, g = lane / 4, q = lane % 4;
    const int warps = gridDim.x * (blockDim.x / 32), wid = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    uint32_t check = 0;
    for (int item = wid; item < groups / R * P; item += warps) {
        const int p = item % P, grp0 = item / P * R;
        uint32_t a[48];
        const uint4* kf = keyFrag + (size_t)p * 12 * 32 + lane;
#pragma unroll
        for (int i = 0; i < 12; i++) {
            const uint4 v = __ldg(kf + 32 * i);
            a[4 * i] = v.x, a[4 * i + 1] = v.y, a[4 * i + 2] = v.z, a[4 * i + 3] = v.w;
        }
        // MODE 2: this lane's digit words and factors of the item's first
        // group, read once and reused for its R groups (laundered each time,
        // so nothing is hoisted): the multiply-accumulate's own cost, with
        // operands on chip as a real kernel would have them.
        // MODE 3: the same for the mma alone.
        uint32_t hb[3] = {0, 0, 0};
        uint64_t hf[2][2] = {{0, 0}, {0, 0}};
        if (MODE >= 2) {
            const uint32_t* dw = dig + (((size_t)grp0 * P + p) * NS + g) * 12;
            hb[0] = __ldg(dw + q), hb[1] = __ldg(dw + 4 + q), hb[2] = __ldg(dw + 8 + q);
#pragma unroll
            for (int h = 0; h < 2; h++)
#pragma unroll
                for (int u = 0; u < 2; u++)
                    if (g + 8 * h < 2 * TERMS)
                        hf[h][u] = __ldg(f + (((size_t)grp0 * P + p) * NS + 2 * q + u) * TERMS + (g + 8 * h) / 2);
        }
#pragma unroll 1
        for (int grp = grp0; grp < grp0 + R; grp++) {
            // B: sample g's words q, 4 + q (k32) and 8 + q (k16).
            uint32_t b0, b1, b2;
            if (MODE >= 2) {
                launder(hb[0]), launder(hb[1]), launder(hb[2]);
                b0 = hb[0], b1 = hb[1], b2 = hb[2];
            } else {
                const uint32_t* dw = dig + (((size_t)grp * P + p) * NS + g) * 12;
                b0 = __ldg(dw + q), b1 = __ldg(dw + 4 + q), b2 = __ldg(dw + 8 + q);
            }
            int32_t acc[8][4];
#pragma unroll
            for (int b = 0; b < 8; b++) {
#pragma unroll
                for (int r = 0; r < 4; r++) acc[b][r] = 0;
                mma_k32(acc[b], a + 6 * b, b0, b1);
                mma_k16(acc[b], a + 6 * b + 4, b2);
            }
            if (MODE == 0 || MODE == 3) {
#pragma unroll
                for (int b = 0; b < 8; b++) check ^= acc[b][0] + acc[b][1] * 3 + acc[b][2] * 5 + acc[b][3] * 7;
                continue;
            }
            // This lane: rows (outputs) g and g + 8, samples 2q and 2q + 1;
            // output r = 2S + c, so both rows have column c = g % 2.
            lz_acc sum[2];
            lz_acc_zero(sum[0]);
            lz_acc_zero(sum[1]);
            // Rows 14 and 15 (lanes g = 6, 7 at h = 1) are the spare ones:
            // their key bytes are zero, so their slots are, and they go
            // through the same instructions with a factor of 0 rather than
            // a branch (which cost the warp a divergent path).
#pragma unroll
            for (int h = 0; h < 2; h++) {
                const int r = g + 8 * h, S = r / 2;
#pragma unroll
                for (int u = 0; u < 2; u++) {
                    int32_t v[8];
#pragma unroll
                    for (int b = 0; b < 8; b++) v[b] = acc[b][2 * h + u];
                    const int s = 2 * q + u;
                    uint64_t fs;
                    if (MODE == 2) {
                        launder(hf[h][u]);
                        fs = hf[h][u];
                    } else {
                        fs = r < 2 * TERMS ? __ldg(f + (((size_t)grp * P + p) * NS + s) * TERMS + S) : 0;
                    }
                    lz_mac(sum[u], slots_to_u64(v), fs);
                }
            }
            // Canonical throughout (lz_acc_reduce, lz_addc), so no lz_canon.
            uint64_t res[2] = {lz_acc_reduce(sum[0]), lz_acc_reduce(sum[1])};
            // The four lanes of one column c (g = c, c + 2, c + 4, c + 6).
#pragma unroll
            for (int u = 0; u < 2; u++) {
                res[u] = lz_addc(res[u], __shfl_xor_sync(0xFFFFFFFFu, res[u], 8));
                res[u] = lz_addc(res[u], __shfl_xor_sync(0xFFFFFFFFu, res[u], 16));
            }
            if (g < 2) {
#pragma unroll
                for (int u = 0; u < 2; u++) out[(((size_t)grp * P + p) * COLS + g) * NS + 2 * q + u] = res[u];
            }
        }
    }
    if (check == 0x9E3779B9u) sink[0] = check;  // keeps MODE 0's and 3's products
}

// The step's key K[p][S][j][c], its fragments for keyFrag, and a
// reference output.
struct Problem {
    int groups;
    std::vector<uint64_t> K, D, F;
    std::vector<uint32_t> frag;
};
static Problem makeProblem(int groups, uint64_t seed) {
    Problem pr{groups, {}, {}, {}, {}};
    std::mt19937_64 rng(seed);
    auto rnd = [&] { uint64_t x; do x = rng(); while (x >= GLP); return x; };
    pr.K.resize((size_t)P * TERMS * DIG * COLS);
    for (auto& x : pr.K) x = rnd();
    // byte b of K_(S,j,c) 2^(8a), row = 2S + c, k = 8j + a; rows 14, 15 zero.
    std::vector<uint64_t> folded((size_t)P * TERMS * DIG * COLS * 8);
    for (size_t i = 0; i < pr.K.size(); i++) {
        uint64_t w = pr.K[i];
        for (int a = 0; a < 8; a++, w = mulmod(w, 256)) folded[i * 8 + a] = w;
    }
    auto A = [&](int p, int row, int k, int b) -> uint32_t {
        if (row >= 2 * TERMS) return 0;
        const int S = row / 2, c = row % 2, j = k / 8, a = k % 8;
        return (uint32_t)(folded[((((size_t)p * TERMS + S) * DIG + j) * COLS + c) * 8 + a] >> (8 * b)) & 0xFF;
    };
    pr.frag.resize((size_t)P * 32 * 48);
    for (int p = 0; p < P; p++)
        for (int lane = 0; lane < 32; lane++) {
            const int g = lane / 4, q = lane % 4;
            uint32_t w[48];
            // m16n8k32 A: a0 (g, 4q..), a1 (g+8, 4q..), a2 (g, 16+4q..), a3
            // (g+8, 16+4q..); m16n8k16 A (k 32..47): a0 (g, 4q..), a1 (g+8, 4q..).
            const int rows[6] = {g, g + 8, g, g + 8, g, g + 8};
            const int k0[6] = {4 * q, 4 * q, 16 + 4 * q, 16 + 4 * q, 32 + 4 * q, 32 + 4 * q};
            for (int b = 0; b < 8; b++)
                for (int r = 0; r < 6; r++) {
                    uint32_t x = 0;
                    for (int e = 0; e < 4; e++) x |= A(p, rows[r], k0[r] + e, b) << (8 * e);
                    w[6 * b + r] = x;
                }
            for (int i = 0; i < 12; i++)
                for (int e = 0; e < 4; e++) pr.frag[(((size_t)p * 12 + i) * 32 + lane) * 4 + e] = w[4 * i + e];
        }
    pr.D.resize((size_t)groups * P * NS * DIG);
    pr.F.resize((size_t)groups * P * NS * TERMS);
    for (auto& x : pr.D) x = rnd();
    for (auto& x : pr.F) x = rnd();
    return pr;
}
// checkProblem: outputs of every step-th group against the host sum; the
// number of wrong ones. reuse > 1: each group's output is that of the
// digits and factors of the first group of its run of reuse (MODE 2).
static long checkProblem(const Problem& pr, const std::vector<uint64_t>& out, int step, int reuse = 1) {
    long bad = 0;
    for (int ogrp = 0; ogrp < pr.groups; ogrp += step)
        for (int p = 0; p < P; p++)
            for (int s = 0; s < NS; s++)
                for (int c = 0; c < COLS; c++) {
                    const int grp = ogrp - ogrp % reuse;
                    uint64_t want = 0;
                    for (int S = 0; S < TERMS; S++) {
                        uint64_t m = 0;
                        for (int j = 0; j < DIG; j++)
                            m = addmod(m, mulmod(pr.D[(((size_t)grp * P + p) * NS + s) * DIG + j],
                                                 pr.K[(((size_t)p * TERMS + S) * DIG + j) * COLS + c]));
                        want = addmod(want, mulmod(m, pr.F[(((size_t)grp * P + p) * NS + s) * TERMS + S]));
                    }
                    const uint64_t got = out[(((size_t)ogrp * P + p) * COLS + c) * NS + s];
                    if (got != want && ++bad <= 3)
                        printf("group %d position %d sample %d column %d: %#llx, want %#llx\n", ogrp, p, s, c,
                               (unsigned long long)got, (unsigned long long)want);
                }
    return bad;
}

#ifndef IMMA_MAC_MODEL
int main() {
    int dev = 0, sms = 0, clockKHz = 0;
    cudaGetDevice(&dev);
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    cudaDeviceGetAttribute(&clockKHz, cudaDevAttrClockRate, dev);
    cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, dev);
    const int groups = (4 * sms + 15) / 16 * 16;  // 32 samples per SM in flight, a multiple of every R
    const Problem pr = makeProblem(groups, 12);
    const std::vector<uint32_t>& frag = pr.frag;
    const std::vector<uint64_t>&D = pr.D, &F = pr.F;
    std::vector<uint64_t> out((size_t)groups * P * COLS * NS);
    uint4* dK;
    uint32_t *dD, *dSink;
    uint64_t *dF, *dOut;
    cudaMalloc(&dK, frag.size() * 4);
    cudaMalloc(&dD, D.size() * 8);
    cudaMalloc(&dF, F.size() * 8);
    cudaMalloc(&dOut, out.size() * 8);
    cudaMalloc(&dSink, 4);
    cudaMemcpy(dK, frag.data(), frag.size() * 4, cudaMemcpyHostToDevice);
    cudaMemcpy(dD, D.data(), D.size() * 8, cudaMemcpyHostToDevice);
    cudaMemcpy(dF, F.data(), F.size() * 8, cudaMemcpyHostToDevice);
    long bad = 0;
    cudaEvent_t t0, t1;
    cudaEventCreate(&t0);
    cudaEventCreate(&t1);
    printf("%s, %d SMs, %d MHz, %d groups of %d samples\n", prop.name, sms, clockKHz / 1000, groups, NS);
    // One kernel: checked (MODE 1), then timed, two rounds, the first a warm-up.
    auto measure = [&](auto kernel, const char* name, bool check, int reuse = 1) {
        int perSM = 0;
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSM, kernel, 256, 0);
        const int blocks = perSM * sms;
        if (check) {
            cudaMemset(dOut, 0, out.size() * 8);
            kernel<<<blocks, 256>>>(dK, dD, dF, dOut, groups, dSink);
            if (cudaError_t e = cudaDeviceSynchronize(); e != cudaSuccess) {
                printf("%s: %s\n", name, cudaGetErrorString(e));
                exit(2);
            }
            cudaMemcpy(out.data(), dOut, out.size() * 8, cudaMemcpyDeviceToHost);
            const long b = checkProblem(pr, out, 7, reuse);
            bad += b;
            printf("%-34s %ld wrong outputs (every 7th group checked)\n", name, b);
        }
        for (int rep = 0; rep < 2; rep++) {
            const int runs = 10;
            cudaEventRecord(t0);
            for (int i = 0; i < runs; i++) kernel<<<blocks, 256>>>(dK, dD, dF, dOut, groups, dSink);
            cudaEventRecord(t1);
            cudaEventSynchronize(t1);
            float ms = 0;
            cudaEventElapsedTime(&ms, t0, t1);
            if (rep == 0) continue;
            const double sp = (double)runs * groups * NS * P, sec = ms / 1e3;
            printf("%-34s %d blocks/SM, %.3f ms per launch, %.3g sample-positions/s, %.2f SM cycles per sample-position\n",
                   name, perSM, ms / runs, sp / sec, sec * sms * clockKHz * 1e3 / sp);
        }
    };
    measure(imma_mac<1, 1>, "R=1  mma + recombination + f_S:", true);
    measure(imma_mac<0, 1>, "R=1  mma alone:", false);
    measure(imma_mac<1, 2>, "R=2  mma + recombination + f_S:", true);
    measure(imma_mac<0, 2>, "R=2  mma alone:", false);
    measure(imma_mac<1, 4>, "R=4  mma + recombination + f_S:", true);
    measure(imma_mac<0, 4>, "R=4  mma alone:", false);
    measure(imma_mac<1, 16>, "R=16 mma + recombination + f_S:", true);
    measure(imma_mac<0, 16>, "R=16 mma alone:", false);
    measure(imma_mac<2, 4>, "R=4  operands on chip:", true, 4);
    measure(imma_mac<2, 16>, "R=16 operands on chip:", true, 16);
    measure(imma_mac<3, 4>, "R=4  operands on chip, mma alone:", false);
    measure(imma_mac<3, 16>, "R=16 operands on chip, mma alone:", false);
    return bad != 0;
}
#endif // IMMA_MAC_MODEL
