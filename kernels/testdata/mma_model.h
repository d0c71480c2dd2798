// Host stand-in for the integer mma.sync of the tensor-core kernels, for
// the host models (testdata/keyswitch_model.cpp, imma_mac_model.cpp): the
// warp's lanes leave their registers in the warp's slots, meet at its
// barrier, and each computes its own D from all of them by the PTX ISA's
// fragment layouts of mma.sync.aligned.m16n8k<K>.row.col.s32.<A>.u8.s32,
// g = lane / 4, q = lane % 4:
//   K = 32: a0 = A[g][4q..4q+3], a1 = A[g+8][4q..], a2 = A[g][16+4q..],
//           a3 = A[g+8][16+4q..]; b0 = B[4q..4q+3][g], b1 = B[16+4q..][g];
//   K = 16: a0 = A[g][4q..], a1 = A[g+8][4q..]; b0 = B[4q..][g];
//   C, D:   c0, c1 = C[g][2q, 2q+1], c2, c3 = C[g+8][2q, 2q+1];
// A's bytes signed (s8) or not (u8), B's unsigned.
#pragma once
#include <barrier>
#include <cstdint>

struct hm_mma_slots {
    std::barrier<> bar{32};
    uint32_t a[32][4], b[32][2];
};

template <int K, bool SIGNED_A>
void hm_mma(hm_mma_slots& w, unsigned lane, int32_t (&d)[4], const uint32_t* a, uint32_t b0, uint32_t b1) {
    static_assert(K == 16 || K == 32, "m16n8k16 or m16n8k32");
    const unsigned g = lane / 4, q = lane % 4;
    for (int r = 0; r < (K == 32 ? 4 : 2); r++) w.a[lane][r] = a[r];
    w.b[lane][0] = b0, w.b[lane][1] = b1;
    w.bar.arrive_and_wait();
    auto A = [&](unsigned row, unsigned k) {
        const uint32_t byte = (w.a[(row % 8) * 4 + (k % 16) / 4][(row >= 8 ? 1 : 0) + (k >= 16 ? 2 : 0)] >> (8 * (k % 4))) & 0xFF;
        return SIGNED_A ? (int32_t)(int8_t)byte : (int32_t)byte;
    };
    auto B = [&](unsigned k, unsigned col) {
        return (int32_t)((w.b[col * 4 + (k % 16) / 4][k >= 16 ? 1 : 0] >> (8 * (k % 4))) & 0xFF);
    };
    for (int r = 0; r < 4; r++) {
        const unsigned row = g + (r >= 2 ? 8 : 0), col = 2 * q + (r & 1);
        int32_t sum = 0;
        for (unsigned k = 0; k < K; k++) sum += A(row, k) * B(k, col);
        d[r] += sum;
    }
    w.bar.arrive_and_wait();
}
