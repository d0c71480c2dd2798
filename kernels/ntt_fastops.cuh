// ntt_fastops.cuh: fast canonical Goldilocks ops for the NTT kernels: the same functions
// as goldilocks.cuh (canonical in, canonical out), written with explicit
// carry chains so that each correction is a carry bit rather than a 64-bit
// comparison.
#ifndef GOLDFHE_NTT_FASTOPS_CUH
#define GOLDFHE_NTT_FASTOPS_CUH
#include "goldilocks.cuh"

// fa_add: a + b mod p, a, b canonical. With s = a + b mod 2^64 and carry c:
// if c, the sum is s + eps (< p since a + b <= 2p - 2); if not, it is s or,
// when s >= p, s - p = s + eps - 2^64: adding eps to s carries exactly when
// s >= p. Either way the answer is s + eps when c or that carry, else s.
__device__ __forceinline__ uint64_t fa_add(uint64_t a, uint64_t b) {
    uint64_t s, t;
    uint32_t c, c2;
    asm("add.cc.u64 %0, %2, %3;\n\t"
        "addc.u32 %1, 0, 0;"
        : "=l"(s), "=r"(c) : "l"(a), "l"(b));
    asm("add.cc.u64 %0, %2, 0xFFFFFFFF;\n\t"
        "addc.u32 %1, 0, 0;"
        : "=l"(t), "=r"(c2) : "l"(s));
    return (c | c2) ? t : s;
}

// fa_sub: a - b mod p, a, b canonical: on a borrow, d = a - b + 2^64 and the
// answer is d - eps (DESIGN.md section 3).
__device__ __forceinline__ uint64_t fa_sub(uint64_t a, uint64_t b) {
    uint64_t d;
    uint32_t br;
    asm("sub.cc.u64 %0, %2, %3;\n\t"
        "subc.u32 %1, 0, 0;"
        : "=l"(d), "=r"(br) : "l"(a), "l"(b));
    return br ? d - GL_EPS : d;
}

// fa_reduce_small: (hi * 2^64 + lo) mod p for hi < 2^32: lo + hi * eps, and
// hi * eps = (hi << 32) - hi < 2^64; a carry is worth eps once more, and a
// final canonicalisation (the same carry trick as fa_add).
__device__ __forceinline__ uint64_t fa_reduce_small(uint64_t hi, uint64_t lo) {
    const uint64_t u = (hi << 32) - hi;
    uint64_t r, t;
    uint32_t c, c2;
    asm("add.cc.u64 %0, %2, %3;\n\t"
        "addc.u32 %1, 0, 0;"
        : "=l"(r), "=r"(c) : "l"(lo), "l"(u));
    // c: the true value is r + eps (r < 2^64 - 2^33 then, so no new carry).
    r = c ? r + GL_EPS : r;
    asm("add.cc.u64 %0, %2, 0xFFFFFFFF;\n\t"
        "addc.u32 %1, 0, 0;"
        : "=l"(t), "=r"(c2) : "l"(r));
    return c2 ? t : r;
}

// fa_mul_pow2: x * 2^S mod p for a compile-time 0 <= S < 96, x canonical.
// S < 32: the product's high word is below 2^32 (fa_reduce_small).
// 32 <= S < 64: x * 2^S = (x * 2^(S-32)) * 2^32, two small steps... instead
// split 2^S = 2^32 * 2^(S-32) and use a * 2^32 = a * eps + a, i.e. the
// generic reduction (gl_reduce128). 64 <= S < 96: x * 2^S = y * 2^64 with
// y = x * 2^(S-64) < 2^96, and y * 2^64 = y * eps (mod p).
template <int S>
__device__ __forceinline__ uint64_t fa_mul_pow2(uint64_t x) {
    static_assert(S >= 0 && S < 96, "fa_mul_pow2 takes 0 <= S < 96");
    if constexpr (S == 0) {
        return x;
    } else if constexpr (S < 32) {
        return fa_reduce_small(x >> (64 - S), x << S);
    } else if constexpr (S < 64) {
        return gl_reduce128(x >> (64 - S), x << S);
    } else if constexpr (S == 64) {
        // x * 2^64 = x * eps = (x << 32) - x + 2^64 * (x >> 32) ... = x*2^32 - x
        return fa_sub(gl_mul_2_32(x), x);
    } else {
        // y = x * 2^(S-64) as (yh, yl); y * 2^64 = yl * 2^64 + yh * 2^128
        // = yl * eps - yh * 2^32 (2^128 = -2^32).
        const uint64_t yl = x << (S - 64), yh = x >> (128 - S);  // yh < 2^32
        // yh << 32 <= 2^64 - 2^32 < p is canonical; yl need not be.
        const uint64_t ylc = gl_canon(yl);
        return fa_sub(fa_sub(gl_mul_2_32(ylc), ylc), yh << 32);
    }
}

#endif
