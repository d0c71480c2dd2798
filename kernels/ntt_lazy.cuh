// ntt_lazy.cuh: lazily reduced Goldilocks butterflies for the hybrid NTT's
// small transforms (ntt_hybrid.cuh). The same source compiles for the
// device (nvcc: PTX carry chains) and for the host (g++: the same steps in
// C++), so that kernels/testdata/lazy_model.cpp can check it.
//
// Inside one small transform a register holds a "lazy" element: any
// uint64_t x, standing for x mod p. hyb_ct/hyb_gs canonicalise once at the
// end. A butterfly reduces its twiddled operand to a canonical w (< p):
// then u + w and u - w need a single carry (borrow) fold each, without a
// comparison, for any u (lz_add, lz_sub):
//   u + w = s + 2^64 c: if c, s = u + w - 2^64 <= p - 1, so s + eps < 2^64;
//   u - w = d - 2^64 b: if b, d = u - w + 2^64 >= 2^64 - p + 1 > eps, so
//   d - eps >= 0.
#ifndef GOLDFHE_NTT_LAZY_CUH
#define GOLDFHE_NTT_LAZY_CUH

#include <stdint.h>

#ifdef __CUDACC__
#define LZ_FN __host__ __device__ __forceinline__
#else
#define LZ_FN static inline
#endif

#define LZ_EPS 0xFFFFFFFFull

// lz_addz: s + m (m zero-extended), one add chain; the caller knows there
// is no carry out.
LZ_FN uint64_t lz_addz(uint64_t s, uint32_t m) {
    uint64_t r;
#ifdef __CUDA_ARCH__
    asm("{.reg .u32 s0, s1;\n\t"
        "mov.b64 {s0, s1}, %1;\n\t"
        "add.cc.u32 s0, s0, %2;\n\t"
        "addc.u32 s1, s1, 0;\n\t"
        "mov.b64 %0, {s0, s1};}"
        : "=l"(r) : "l"(s), "r"(m));
#else
    r = s + (uint64_t)m;
#endif
    return r;
}

// lz_add: u + w (mod p) as a lazy value; u any, w <= p.
// s = u + w, c = carry; result s + c * eps, added as the 32-bit word
// m = c * eps (0 or 0xFFFFFFFF) zero-extended. m is selected from the
// carry (one SEL) rather than computed as 0 - c: from 0 - c ptxas made
// SEL, IMAD.MOV, IMAD.IADD and a second IADD3 for the carry of s + m, seven
// instructions in all where this is five (nvcc 11.8's SASS for sm_90,
// kernels/NOTES.md session 14).
LZ_FN uint64_t lz_add(uint64_t u, uint64_t w) {
    uint64_t s;
    uint32_t m;
#ifdef __CUDA_ARCH__
    asm("{.reg .u32 c;\n\t"
        ".reg .pred q;\n\t"
        "add.cc.u64 %0, %2, %3;\n\t"
        "addc.u32 c, 0, 0;\n\t"
        "setp.ne.u32 q, c, 0;\n\t"
        "selp.b32 %1, 0xFFFFFFFF, 0, q;}"
        : "=l"(s), "=r"(m) : "l"(u), "l"(w));
#else
    s = u + w;
    m = s < u ? 0xFFFFFFFFu : 0u;
#endif
    return lz_addz(s, m);
}

// lz_sub: u - w (mod p) as a lazy value; u any, w <= p. d = u - w,
// b = -borrow (0 or 0xFFFFFFFF = borrow * eps); result d - b (zero-extended
// b), one subtraction chain each.
LZ_FN uint64_t lz_sub(uint64_t u, uint64_t w) {
    uint64_t d, r;
    uint32_t b;
#ifdef __CUDA_ARCH__
    asm("sub.cc.u64 %0, %2, %3;\n\tsubc.u32 %1, 0, 0;" : "=l"(d), "=r"(b) : "l"(u), "l"(w));
    asm("{.reg .u32 d0, d1;\n\t"
        "mov.b64 {d0, d1}, %1;\n\t"
        "sub.cc.u32 d0, d0, %2;\n\t"
        "subc.u32 d1, d1, 0;\n\t"
        "mov.b64 %0, {d0, d1};}"
        : "=l"(r) : "l"(d), "r"(b));
#else
    d = u - w;
    b = 0u - (uint32_t)(u < w);
    r = d - (uint64_t)b;
#endif
    return r;
}

// lz_fold_canon: the canonical value of s + c * 2^64, for c in {0, 1} and
// s < p - eps = 2^64 - 2^33 + 2 when c = 1. Then s + eps < p (and does not
// carry); when c = 0, s + eps carries exactly when s >= p, and then
// s - p = s + eps - 2^64. So with k = c + (carry of s + eps), at most one
// of the two being 1, the answer is s + k * eps, added as the zero-extended
// word -k. No comparison, no select.
LZ_FN uint64_t lz_fold_canon(uint64_t s, uint32_t c) {
    uint32_t k;
#ifdef __CUDA_ARCH__
    asm("{.reg .u64 t;\n\t"
        "add.cc.u64 t, %1, 0xFFFFFFFF;\n\t"
        "addc.u32 %0, %2, 0;}"
        : "=r"(k) : "l"(s), "r"(c));
#else
    k = c + (uint32_t)(s + LZ_EPS < s);
#endif
    return lz_addz(s, 0u - k);
}

// lz_canon: any -> canonical (lz_fold_canon with c = 0): t = x + eps,
// and t if that carries (x >= p, t = x - p), else x. On the device a
// select of the two: four ALU instructions (IADD3, IADD3.X, two SEL),
// where lz_fold_canon's add of the zero-extended -k took four ALU and three
// FMA-pipe ones (kernels/NOTES.md session 14).
LZ_FN uint64_t lz_canon(uint64_t x) {
#ifdef __CUDA_ARCH__
    uint64_t r;
    asm("{.reg .u64 t;\n\t"
        ".reg .u32 k;\n\t"
        ".reg .pred q;\n\t"
        "add.cc.u64 t, %1, 0xFFFFFFFF;\n\t"
        "addc.u32 k, 0, 0;\n\t"
        "setp.ne.u32 q, k, 0;\n\t"
        "selp.b64 %0, t, %1, q;}"
        : "=l"(r) : "l"(x));
    return r;
#else
    return lz_fold_canon(x, 0);
#endif
}

// lz_addc: a + b mod p, canonical, for a, b <= p - 1 (canonical): s = a + b
// with carry c; if c, s = a + b - 2^64 <= 2p - 2 - 2^64 = 2^64 - 2^33
// (lz_fold_canon).
LZ_FN uint64_t lz_addc(uint64_t a, uint64_t b) {
    uint64_t s;
    uint32_t c;
#ifdef __CUDA_ARCH__
    asm("add.cc.u64 %0, %2, %3;\n\taddc.u32 %1, 0, 0;" : "=l"(s), "=r"(c) : "l"(a), "l"(b));
#else
    s = a + b;
    c = s < a;
#endif
    return lz_fold_canon(s, c);
}

// lz_red_small_sum: s = lo + hi * eps (one 32x32->64 multiply-add) and
// its carry c, so that (hi * 2^64 + lo) = s + c * 2^64 (mod p); if c, s <
// hi * eps <= (2^32 - 1)^2 = 2^64 - 2^33 + 1.
LZ_FN uint64_t lz_red_small_sum(uint32_t hi, uint64_t lo, uint32_t& c) {
    uint64_t s;
#ifdef __CUDA_ARCH__
    asm("{.reg .u64 e;\n\t"
        "mul.wide.u32 e, %2, 0xFFFFFFFF;\n\t"
        "add.cc.u64 %0, %3, e;\n\t"
        "addc.u32 %1, 0, 0;}"
        : "=l"(s), "=r"(c) : "r"(hi), "l"(lo));
#else
    const uint64_t e = (uint64_t)hi * LZ_EPS;
    s = lo + e;
    c = s < lo;
#endif
    return s;
}

// lz_red_small: (hi * 2^64 + lo) mod p, canonical, for hi < 2^32, lo any:
// lz_red_small_sum, whose bound when c = 1 is lz_fold_canon's condition.
LZ_FN uint64_t lz_red_small(uint32_t hi, uint64_t lo) {
    uint32_t c;
    const uint64_t s = lz_red_small_sum(hi, lo, c);
    return lz_fold_canon(s, c);
}

// lz_mul64: x * 2^64 = x * eps (mod p), canonical, x any:
// x * eps = x0 * eps + x1 * 2^32 * eps = x0 * eps - x1 (2^32 * eps = -1).
// y = x0 * eps - x1 is in (-2^32, (2^32 - 1)^2] and (2^32 - 1)^2 < p; on a
// borrow y + p = y - eps (mod 2^64), in (p - 2^32, p).
LZ_FN uint64_t lz_mul64(uint64_t x) {
    const uint64_t e = (uint64_t)(uint32_t)x * LZ_EPS;
    const uint64_t x1 = x >> 32;
    uint64_t d, r;
    uint32_t b;
#ifdef __CUDA_ARCH__
    asm("sub.cc.u64 %0, %2, %3;\n\tsubc.u32 %1, 0, 0;" : "=l"(d), "=r"(b) : "l"(e), "l"(x1));
    asm("{.reg .u32 d0, d1;\n\t"
        "mov.b64 {d0, d1}, %1;\n\t"
        "sub.cc.u32 d0, d0, %2;\n\t"
        "subc.u32 d1, d1, 0;\n\t"
        "mov.b64 %0, {d0, d1};}"
        : "=l"(r) : "l"(d), "r"(b));
#else
    d = e - x1;
    b = 0u - (uint32_t)(e < x1);
    r = d - (uint64_t)b;
#endif
    return r;
}

// lz_mul_pow2<S>: x * 2^S mod p, canonical, x any, 0 <= S < 96 (the shift
// twiddles), one reduction whatever S:
//   S <= 32: x * 2^S = hi * 2^64 + lo with hi < 2^32 (lz_red_small);
//   32 < S < 64: hi = x >> (64 - S) = hh * 2^32 + hl, and with
//     2^64 = eps, 2^96 = -1 (DESIGN.md section 3)
//     x * 2^S = lo + hl * eps - hh: lz_red_small(hl, lo) is canonical and
//     hh < 2^31 < p, so the lazy difference is canonical (lz_sub: on a
//     borrow the result is u - w + p, in [0, p) for u < w <= p);
//   64 <= S < 96: with x = xh * 2^(96 - S) + xl, xl < 2^(96 - S):
//     x * 2^S = xh * 2^96 + (xl * 2^(S - 64)) * 2^64 = h * eps - xh, where
//     h = xl * 2^(S - 64) = (x mod 2^32) << (S - 64) mod 2^32 < 2^32, so
//     h * eps <= (2^32 - 1)^2 < p is canonical and xh < 2^(S - 32) <= p
//     (lz_sub as above; S = 64 is lz_mul64).
template <int S>
LZ_FN uint64_t lz_mul_pow2(uint64_t x) {
    static_assert(S >= 0 && S < 96, "lz_mul_pow2 takes 0 <= S < 96");
    if constexpr (S == 0) {
        return lz_canon(x);
    } else if constexpr (S < 32) {
        return lz_red_small((uint32_t)(x >> (64 - S)), x << S);
    } else if constexpr (S == 32) {
        return lz_red_small((uint32_t)(x >> 32), x << 32);
    } else if constexpr (S < 64) {
        const uint64_t hi = x >> (64 - S);
        return lz_sub(lz_red_small((uint32_t)hi, x << S), hi >> 32);
    } else if constexpr (S == 64) {
        return lz_mul64(x);
    } else {
        const uint32_t h = (uint32_t)x << (S - 64);
        return lz_sub((uint64_t)h * LZ_EPS, x >> (96 - S));
    }
}

// ---------------------------------------------------------------------------
// The NTT-domain multiply-accumulate of the blind rotation (sum over the
// TRGSW rows of x * y, x and y any uint64_t) without comparisons: 32-bit
// multiply-add carry chains into a wide accumulator
//   T = a + 2^32 b + 2^64 c + 2^96 kb + 2^128 top
// (a, b, c 64-bit; kb, top 32-bit carry counters). x = x1 2^32 + x0,
// y = y1 2^32 + y0: x0 y0 goes into a (its carry at 2^64 into c), x1 y1
// into c (its carry into top) on the same chain, x0 y1 and x1 y0 into b
// (carries into kb). Every product is below 2^128, so after R products
// top < R and kb < 2R: exact for R < 2^31. lz_acc_reduce returns T mod p,
// canonical.
struct lz_acc {
    uint64_t a, b, c;
    uint32_t kb, top;
};

LZ_FN void lz_acc_zero(lz_acc& s) {
    s.a = s.b = s.c = 0;
    s.kb = s.top = 0;
}

LZ_FN void lz_mac(lz_acc& s, uint64_t x, uint64_t y) {
#ifdef __CUDA_ARCH__
    asm("{.reg .u32 x0, x1, y0, y1, a0, a1, b0, b1, c0, c1;\n\t"
        "mov.b64 {x0, x1}, %5;\n\t"
        "mov.b64 {y0, y1}, %6;\n\t"
        "mov.b64 {a0, a1}, %0;\n\t"
        "mov.b64 {b0, b1}, %1;\n\t"
        "mov.b64 {c0, c1}, %2;\n\t"
        "mad.lo.cc.u32 a0, x0, y0, a0;\n\t"
        "madc.hi.cc.u32 a1, x0, y0, a1;\n\t"
        "madc.lo.cc.u32 c0, x1, y1, c0;\n\t"
        "madc.hi.cc.u32 c1, x1, y1, c1;\n\t"
        "addc.u32 %4, %4, 0;\n\t"
        "mad.lo.cc.u32 b0, x0, y1, b0;\n\t"
        "madc.hi.cc.u32 b1, x0, y1, b1;\n\t"
        "addc.u32 %3, %3, 0;\n\t"
        "mad.lo.cc.u32 b0, x1, y0, b0;\n\t"
        "madc.hi.cc.u32 b1, x1, y0, b1;\n\t"
        "addc.u32 %3, %3, 0;\n\t"
        "mov.b64 %0, {a0, a1};\n\t"
        "mov.b64 %1, {b0, b1};\n\t"
        "mov.b64 %2, {c0, c1};}"
        : "+l"(s.a), "+l"(s.b), "+l"(s.c), "+r"(s.kb), "+r"(s.top)
        : "l"(x), "l"(y));
#else
    const uint64_t x0 = (uint32_t)x, x1 = x >> 32, y0 = (uint32_t)y, y1 = y >> 32;
    // a + x0 y0 + 2^64 (c + x1 y1): the chain a0, a1, c0, c1, top
    const unsigned __int128 lo = (unsigned __int128)s.a + x0 * y0;
    const unsigned __int128 hi = (unsigned __int128)s.c + x1 * y1 + (uint64_t)(lo >> 64);
    s.a = (uint64_t)lo;
    s.c = (uint64_t)hi;
    s.top += (uint32_t)(hi >> 64);
    unsigned __int128 m = (unsigned __int128)s.b + x0 * y1;
    s.b = (uint64_t)m;
    s.kb += (uint32_t)(m >> 64);
    m = (unsigned __int128)s.b + x1 * y0;
    s.b = (uint64_t)m;
    s.kb += (uint32_t)(m >> 64);
#endif
}

// lz_acc_split: the sum as T = z + 2^64 y + 2^128 w exactly, with z = a +
// 2^32 b0, y = c + b1 + 2^32 kb + carry, w = top + carry (one add chain;
// w <= top + 1 < 2^32 - 1); returns z, y0 = y mod 2^32 and yw = 2^32 w +
// y1 (y = y1 2^32 + y0), so that with 2^64 = eps, 2^96 = -1 and 2^128 =
// -2^32 (DESIGN.md section 3) T = z + eps y0 - yw, and yw < p.
LZ_FN void lz_acc_split(const lz_acc& s, uint64_t& z, uint32_t& y0, uint64_t& yw) {
#ifdef __CUDA_ARCH__
    asm("{.reg .u32 a0, a1, b0, b1, c0, c1, w;\n\t"
        "mov.b64 {a0, a1}, %3;\n\t"
        "mov.b64 {b0, b1}, %4;\n\t"
        "mov.b64 {c0, c1}, %5;\n\t"
        "add.cc.u32 a1, a1, b0;\n\t"
        "addc.cc.u32 %2, c0, b1;\n\t"
        "addc.cc.u32 c1, c1, %6;\n\t"
        "addc.u32 w, %7, 0;\n\t"
        "mov.b64 %0, {a0, a1};\n\t"
        "mov.b64 %1, {c1, w};}"
        : "=l"(z), "=l"(yw), "=r"(y0)
        : "l"(s.a), "l"(s.b), "l"(s.c), "r"(s.kb), "r"(s.top));
#else
    const unsigned __int128 zz = (unsigned __int128)s.a + ((s.b & 0xFFFFFFFFull) << 32);
    z = (uint64_t)zz;
    const unsigned __int128 yy = (unsigned __int128)s.c + (s.b >> 32) + ((uint64_t)s.kb << 32) + (uint64_t)(zz >> 64);
    y0 = (uint32_t)yy;
    const uint32_t w = s.top + (uint32_t)(yy >> 64);
    yw = ((uint64_t)w << 32) | (uint32_t)((uint64_t)yy >> 32);
#endif
}

// lz_acc_reduce: T mod p, canonical: lz_red_small(y0, z) - yw
// (lz_acc_split), a canonical value minus one below p: canonical (lz_sub).
LZ_FN uint64_t lz_acc_reduce(const lz_acc& s) {
    uint64_t z, yw;
    uint32_t y0;
    lz_acc_split(s, z, y0, yw);
    return lz_sub(lz_red_small(y0, z), yw);
}

// lz_acc_reduce_lazy: T mod p as a lazy value (any uint64_t standing for
// it), for an operand of a further lz_mac: lz_acc_reduce without the
// canonicalisation inside lz_red_small. The sum t = z + y0 eps with carry
// c is folded to t + c eps only (below 2^64: with c, t < y0 eps <= (2^32 -
// 1)^2), and lz_sub takes any u.
LZ_FN uint64_t lz_acc_reduce_lazy(const lz_acc& s) {
    uint64_t z, yw;
    uint32_t y0, c;
    lz_acc_split(s, z, y0, yw);
    const uint64_t t = lz_red_small_sum(y0, z, c);
    return lz_sub(lz_addz(t, 0u - c), yw);
}

// lz_red128: (h * 2^64 + l) mod p, canonical, for any h, l. With h = h1
// 2^32 + h0, 2^64 = eps and 2^96 = -1 (DESIGN.md section 3) the value is
// l + h0 eps - h1 = l + t - eps for t = h0 eps + (eps - h1) = h0 eps + ~h1,
// which one multiply-add forms and which is at most (2^32 - 1)^2 + 2^32 - 1
// = 2^64 - 2^32: no wrap. Then s = l + t with carry c:
//   c = 1: the value is s + 2^64 - eps = s (mod p), and s <= (2^64 - 1) +
//     (2^64 - 2^32) - 2^64 = p - 2: canonical;
//   c = 0: the value is s - eps; u = s - eps (mod 2^64) is canonical when
//     it does not borrow (s - eps <= 2^64 - 1 - eps = p - 1), and on a
//     borrow (s < eps) the answer s - eps + p is u - eps (mod 2^64), in
//     [p - eps, p).
// No comparison: a select of the subtrahend, two subtraction chains.
LZ_FN uint64_t lz_red128(uint64_t h, uint64_t l) {
    uint64_t r;
#ifdef __CUDA_ARCH__
    asm("{.reg .u32 h0, h1, c, m, s0, s1, b;\n\t"
        ".reg .u64 t, s;\n\t"
        ".reg .pred q;\n\t"
        "mov.b64 {h0, h1}, %1;\n\t"
        "not.b32 h1, h1;\n\t"
        "mov.b64 t, {h1, 0};\n\t"
        "mad.wide.u32 t, h0, 0xFFFFFFFF, t;\n\t"
        "add.cc.u64 s, %2, t;\n\t"
        "addc.u32 c, 0, 0;\n\t"
        "setp.eq.u32 q, c, 0;\n\t"
        "selp.b32 m, 0xFFFFFFFF, 0, q;\n\t"
        "mov.b64 {s0, s1}, s;\n\t"
        "sub.cc.u32 s0, s0, m;\n\t"
        "subc.cc.u32 s1, s1, 0;\n\t"
        "subc.u32 b, 0, 0;\n\t"
        "sub.cc.u32 s0, s0, b;\n\t"
        "subc.u32 s1, s1, 0;\n\t"
        "mov.b64 %0, {s0, s1};}"
        : "=l"(r) : "l"(h), "l"(l));
#else
    const uint64_t t = (uint64_t)(uint32_t)h * LZ_EPS + (uint64_t)(~(uint32_t)(h >> 32));
    const uint64_t s = l + t;
    const uint32_t m = s < l ? 0u : 0xFFFFFFFFu;  // eps unless the add carried
    const uint64_t u = s - m;
    const uint32_t b = s < m ? 0xFFFFFFFFu : 0u;  // -borrow
    r = u - b;
#endif
    return r;
}

// lz_mul: a * b mod p, canonical, a, b any: the 128-bit product (four 32
// x 32 -> 64 products; x0 y1 + x1 y0 is a 65-bit middle term) reduced by
// lz_red128. Unlike the rest of this file, the host branch does not repeat
// the PTX's steps for the product (it multiplies in __int128); session 14's
// review checked that chain against a step-by-step transcription with
// explicit carry flags. It replaced lz_acc_reduce of a one-product lz_acc sum: in the
// wide kernels' stages (nvcc 11.8's SASS) one ALU and three FMA-pipe
// instructions fewer per product, and those stages are bound by the ALU
// pipe, about 40% of whose work in stage 1 is the twiddle products
// (kernels/NOTES.md session 14: the wide kernel 1.1% faster on an H200).
// The wide multiplies are quarter-rate instructions of the FMA pipe on
// sm_90, the pipe that bounds the multiply-accumulate (kernels/NOTES.md,
// session 11).
LZ_FN uint64_t lz_mul(uint64_t a, uint64_t b) {
#ifdef __CUDA_ARCH__
    uint64_t h, l;
    asm("{.reg .u32 x0, x1, y0, y1, l0, l1, h0, h1, m0, m1, mc;\n\t"
        ".reg .u64 p;\n\t"
        "mov.b64 {x0, x1}, %2;\n\t"
        "mov.b64 {y0, y1}, %3;\n\t"
        "mul.wide.u32 p, x0, y0;\n\t"
        "mov.b64 {l0, l1}, p;\n\t"
        "mul.wide.u32 p, x1, y1;\n\t"
        "mov.b64 {h0, h1}, p;\n\t"
        "mul.wide.u32 p, x0, y1;\n\t"
        "mov.b64 {m0, m1}, p;\n\t"
        "mad.lo.cc.u32 m0, x1, y0, m0;\n\t"
        "madc.hi.cc.u32 m1, x1, y0, m1;\n\t"
        "addc.u32 mc, 0, 0;\n\t"
        "add.cc.u32 l1, l1, m0;\n\t"
        "addc.cc.u32 h0, h0, m1;\n\t"
        "addc.u32 h1, h1, mc;\n\t"
        "mov.b64 %0, {h0, h1};\n\t"
        "mov.b64 %1, {l0, l1};}"
        : "=l"(h), "=l"(l) : "l"(a), "l"(b));
    return lz_red128(h, l);
#else
    const unsigned __int128 p = (unsigned __int128)a * b;
    return lz_red128((uint64_t)(p >> 64), (uint64_t)p);
#endif
}

#endif // GOLDFHE_NTT_LAZY_CUH
