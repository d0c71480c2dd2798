// goldilocks.cuh: arithmetic in the Goldilocks field on the device.
//
// p = 2^64 - 2^32 + 1, eps = 2^32 - 1 = 2^64 mod p, 2^96 = -1, 2^192 = 1
// (DESIGN.md section 3). Elements are uint64_t. Each function states the
// range it accepts ("any": every uint64_t; "canonical": [0, p)) and returns
// canonical values. Every function here is bit-for-bit the same function
// as its CPU counterpart in smallntt (field.go): the FieldOps kernel
// (fieldops.cuh) exposes each one and a Go test compares them.
#ifndef GOLDFHE_GOLDILOCKS_CUH
#define GOLDFHE_GOLDILOCKS_CUH

#include <stdint.h>

#define GL_P   0xFFFFFFFF00000001ull
#define GL_EPS 0x00000000FFFFFFFFull

// gl_canon: any -> canonical. One conditional subtraction suffices since
// 2^64 < 2p.
__device__ __forceinline__ uint64_t gl_canon(uint64_t a) {
    return a >= GL_P ? a - GL_P : a;
}

// gl_add: a + b mod p; a, b canonical. On a carry out of bit 64 the true
// sum is s + 2^64 = s + eps (mod p), and s + eps < 2^64 - 2^32 < p then,
// because a + b <= 2p - 2.
__device__ __forceinline__ uint64_t gl_add(uint64_t a, uint64_t b) {
    uint64_t s = a + b;
    if (s < a) {
        return s + GL_EPS;
    }
    return gl_canon(s);
}

// gl_sub: a - b mod p; a, b canonical. On a borrow d = a - b + 2^64 and the
// answer a - b + p = d - eps; d >= 2^64 - p + 1 > eps, so no wrap.
__device__ __forceinline__ uint64_t gl_sub(uint64_t a, uint64_t b) {
    uint64_t d = a - b;
    if (a < b) {
        d -= GL_EPS;
    }
    return d;
}

// gl_neg: -a mod p; a canonical.
__device__ __forceinline__ uint64_t gl_neg(uint64_t a) {
    return a == 0 ? 0 : GL_P - a;
}

// gl_reduce128: (hi * 2^64 + lo) mod p; hi, lo any. With
// hi = hh * 2^32 + hl: x = lo - hh + eps * hl (mod p) (DESIGN.md section 3);
// the borrow and the carry are each fixed by one eps, then one conditional
// subtraction. Same steps as smallntt.Reduce128.
__device__ __forceinline__ uint64_t gl_reduce128(uint64_t hi, uint64_t lo) {
    const uint64_t hh = hi >> 32;
    const uint64_t hl = hi & GL_EPS;
    uint64_t t = lo - hh;
    if (lo < hh) {
        t -= GL_EPS;             // t = lo - hh + p, and t > eps before this
    }
    const uint64_t u = (hl << 32) - hl;  // hl * eps < 2^64
    uint64_t r = t + u;
    if (r < u) {
        r += GL_EPS;             // t + u - 2^64 + eps < 2^64
    }
    return gl_canon(r);
}

// gl_mul: a * b mod p; a, b any. The 128-bit product through __umul64hi.
__device__ __forceinline__ uint64_t gl_mul(uint64_t a, uint64_t b) {
    return gl_reduce128(__umul64hi(a, b), a * b);
}

// gl_mul_2_32: a * 2^32 mod p; a any. The product is the 96-bit
// (a >> 32) * 2^64 + (a << 32), whose high word is below 2^32.
__device__ __forceinline__ uint64_t gl_mul_2_32(uint64_t a) {
    return gl_reduce128(a >> 32, a << 32);
}

// gl_reduce192: (w * 2^128 + y * 2^64 + z) mod p; z, y, w any. Since
// 2^128 = -2^32 (mod p): x = reduce128(y, z) - 2^32 * w, which is
// 2^32 * (y - w) + (z - y) (DESIGN.md section 3) computed in two canonical
// pieces. The matrix NTT (DESIGN.md section 4) sums shifted terms into such
// three limbs and reduces once per output.
__device__ __forceinline__ uint64_t gl_reduce192(uint64_t z, uint64_t y, uint64_t w) {
    return gl_sub(gl_reduce128(y, z), gl_mul_2_32(w));
}

// gl_mul_pow2: a * 2^s mod p; a any, 0 <= s < 192. No multiplier: for
// s >= 96 use 2^96 = -1 and negate; a * 2^s with s < 96 is then a number
// below 2^160, split into 64-bit limbs by shifts and reduced by the 128- or
// 192-bit rule (DESIGN.md section 3).
__device__ __forceinline__ uint64_t gl_mul_pow2(uint64_t a, uint32_t s) {
    const bool negate = s >= 96;
    if (negate) {
        s -= 96;
    }
    uint64_t r;
    if (s < 64) {
        r = gl_reduce128(s == 0 ? 0 : a >> (64 - s), a << s);
    } else {
        const uint32_t t = s - 64;
        r = gl_reduce192(0, a << t, t == 0 ? 0 : a >> (64 - t));
    }
    return negate ? gl_neg(r) : r;
}

#endif // GOLDFHE_GOLDILOCKS_CUH
