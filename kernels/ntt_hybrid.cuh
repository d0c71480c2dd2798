// ntt_hybrid.cuh: the tuned two-stage decomposed NTT (N = F1 * F2), one warp
// per polynomial. Same stages, twiddle tables and layout as smallntt's
// decomposed plans with factors (F1, F2) (smallntt.Plan doc), so it is bit
// for bit the same function; only the schedule differs: each small
// transform is a radix-2 network held in one thread's registers, fully
// unrolled, whose twiddles are compile-time powers of psi_128 and therefore
// shifts (DESIGN.md section 4: every root of order dividing 64 is a power of
// two). The only general multiplications are the N stage-1 twiddles.
// Between the stages the polynomial sits in shared memory with rows padded
// to F2 + 1 words, so that both the column reads of stage 1 and the row
// reads of stage 2 are free of bank conflicts, and global memory is read and
// written coalesced. One warp owns one polynomial: no block-wide barriers.
#ifndef GOLDFHE_NTT_HYBRID_CUH
#define GOLDFHE_NTT_HYBRID_CUH

#include "goldilocks.cuh"
#include "ntt_fastops.cuh"
#include "ntt_lazy.cuh"

#include <utility>

#define HYB_WARPS 4

// hyb_for calls fn(std::integral_constant<int, I>{}) for I = 0 .. COUNT-1:
// a compile-time loop, so that every register index and every twiddle
// exponent below is a constant (nvcc's #pragma unroll gives up on bodies
// this large and then moves the register arrays to local memory).
template <class Fn, int... Is>
__device__ __forceinline__ void hyb_for_impl(Fn&& fn, std::integer_sequence<int, Is...>) {
    (fn(std::integral_constant<int, Is>{}), ...);
}
template <int COUNT, class Fn>
__device__ __forceinline__ void hyb_for(Fn&& fn) {
    hyb_for_impl(fn, std::make_integer_sequence<int, COUNT>{});
}

template <int F> struct hyb_lg { static constexpr int v = 1 + hyb_lg<F / 2>::v; };
template <> struct hyb_lg<1> { static constexpr int v = 0; };

__host__ __device__ constexpr int hyb_brv(int x, int bits) {
    int r = 0;
    for (int i = 0; i < bits; i++) r |= ((x >> i) & 1) << (bits - 1 - i);
    return r;
}

// Twiddle exponent (units of psi_128, mod 128) at level m = 2^lv, group g
// of the F-point Cooley-Tukey network: negacyclic psi_2F^brv_logF(m+g),
// cyclic omega_2m^brv_lv(g). Either way register j ends up holding output
// brv(j) (the layout of smallntt.Plan within a stage).
template <int F, bool TWISTED>
__host__ __device__ constexpr int hyb_exp(int lv, int g) {
    return (TWISTED ? (64 / F) * hyb_brv((1 << lv) + g, hyb_lg<F>::v) : (64 >> lv) * hyb_brv(g, lv)) & 127;
}

// A twiddle psi_128^E with E even is sign * 2^S with 0 <= S < 96 (2^96 = -1):
// hyb_shift<E> is S and hyb_neg<E> the sign. Odd E (the twisted 64-point
// transform only) is psi_128^(2j+1) = 2^(3j+73) + 2^(3j+121) (small.go).
template <int E> __host__ __device__ constexpr int hyb_s() { return ((3 * ((E & 127) >> 1)) % 192) % 96; }
template <int E> __host__ __device__ constexpr bool hyb_neg() { return ((3 * ((E & 127) >> 1)) % 192) >= 96; }

// hyb_mul_abs returns x * 2^S for even E (the sign is the caller's), and
// x * psi_128^E for odd E.
template <int E>
__device__ __forceinline__ uint64_t hyb_mul_abs(uint64_t x) {
    constexpr int e = E & 127, j = e >> 1;
    if constexpr ((e & 1) == 0) {
        return fa_mul_pow2<hyb_s<E>()>(x);
    } else {
        return gl_add(gl_mul_pow2(x, (3 * j + 73) % 192), gl_mul_pow2(x, (3 * j + 121) % 192));
    }
}
template <int E> __host__ __device__ constexpr bool hyb_negates() { return ((E & 127) & 1) == 0 && hyb_neg<E>(); }

// The butterflies fold a negative twiddle into the order of the add and the
// subtraction instead of negating: (u + c v, u - c v) with c = -|c| is
// (u - |c| v, u + |c| v), and (u - v) c = (v - u) |c|.
//
// Inside hyb_ct the registers hold lazy values (any uint64_t, standing for
// its residue mod p; ntt_lazy.cuh): each butterfly reduces only its twiddled
// operand to a canonical value and folds each output once into [0, 2^64)
// without comparisons; the F outputs are canonicalised at the end. So hyb_ct
// takes any uint64_t, hyb_gs canonical values (as before), and both return
// the same canonical values as the canonical-per-operation network they
// replace (kernels/testdata/hybrid_model.cpp checks this on the host).

// hyb_tw<E>: |psi_128^E| * v, canonical, v lazy.
template <int E>
__device__ __forceinline__ uint64_t hyb_tw(uint64_t v) {
    if constexpr (((E & 127) & 1) == 0) {
        return lz_mul_pow2<hyb_s<E>()>(v);
    } else {
        return hyb_mul_abs<E>(v);  // gl_mul_pow2 takes any operand, gl_add canonical ones
    }
}

// hyb_bfly: the lazy Cooley-Tukey butterfly (u, v) -> (u + c v, u - c v)
// of twiddle c = psi_128^E: c v reduced to a canonical w (hyb_tw), then
// lz_add / lz_sub, which take any u. RAW: v is known canonical, so for a
// twiddle of 1 (E = 0) w is v itself, without lz_canon.
template <int E, bool RAW>
__device__ __forceinline__ void hyb_bfly(uint64_t& lo, uint64_t& hi) {
    uint64_t w;
    if constexpr (RAW && E == 0) {
        w = hi;
    } else {
        w = hyb_tw<E>(hi);
    }
    const uint64_t u = lo;
    if constexpr (hyb_negates<E>()) {
        lo = lz_sub(u, w);
        hi = lz_add(u, w);
    } else {
        lo = lz_add(u, w);
        hi = lz_sub(u, w);
    }
}

// hyb_ct_lazy: the network of hyb_ct without the final canonicalisation
// (lazy outputs, for a consumer that takes any operand, such as lz_mul).
// LV0 > 0 runs the levels LV0 .. log2(F) - 1 only (the caller did the
// first ones: hyb_ct_digits). CONJ (cyclic only) takes every twiddle's
// inverse: the network of the inverse cyclic transform times F, natural
// in, register j holding output brv(j) (hyb_ct_inv_lazy). CANON_IN: the
// caller's inputs are canonical (< p, e.g. lz_mul's outputs), so the first
// level's butterflies of twiddle 1 (every one of a cyclic network) take
// their operand as it is instead of through lz_canon, which lz_add and
// lz_sub need only for a lazy one. Between the wide kernels' barriers the
// forward and inverse stages are bound by the ALU pipe, and these
// lz_canon were 5-7% of a stage's ALU instructions (kernels/NOTES.md
// session 14: the wide kernel about 2% faster on an H200).
template <int F, bool TWISTED, int LV0 = 0, bool CONJ = false, bool CANON_IN = false>
__device__ __forceinline__ void hyb_ct_lazy(uint64_t (&x)[F]) {
    static_assert(!(TWISTED && CONJ), "the conjugate network is the cyclic one's");
    hyb_for<hyb_lg<F>::v - LV0>([&](auto lvc) {
        constexpr int lv = LV0 + decltype(lvc)::value, h = F >> (lv + 1);
        hyb_for<F / 2>([&](auto bc) {
            constexpr int b = decltype(bc)::value, g = b / h, j = b % h, a = 2 * g * h + j;
            constexpr int E = CONJ ? (128 - hyb_exp<F, false>(lv, g)) & 127 : hyb_exp<F, TWISTED>(lv, g);
            hyb_bfly<E, CANON_IN && lv == 0>(x[a], x[a + h]);
        });
    });
}

// hyb_gl_of: the Goldilocks element an int64 y with |y| < 2^63 stands for,
// y or y + p: y + p for y < 0 is (y mod 2^64) - eps, and eps is the 32-bit
// sign word of y zero-extended, so one add chain after the sign (adding p
// & sign took a LOP3 more: kernels/NOTES.md session 14).
__device__ __forceinline__ uint64_t hyb_gl_of(int64_t y) {
    return (uint64_t)y - (uint64_t)(uint32_t)(y >> 63);
}

// hyb_ct_digits: hyb_ct_lazy<F, true> of small signed integers d (|d| <=
// 2^14: the gadget digits of the blind rotation for beta <= 15), the first
// two levels in exact signed 64-bit arithmetic. The first level's twiddle
// is psi_2F^(F/2) = 2^48 for every F (hyb_exp(0, 0) = 32 in units of
// psi_128): y = d_a +- 2^48 d_(a+F/2), |y| <= 2^62 + 2^14. The second's
// are 2^24 and 2^72 (groups 0 and 1), and on such a y they stay small:
// 2^24 (d + 2^48 e) = 2^24 d + 2^72 e and 2^72 (d - 2^48 e) = 2^72 d + 2^24
// e (2^120 = -2^24), with 2^72 = 2^8 2^64 = 2^40 - 2^8 (DESIGN.md section
// 3), so the twiddled operand w is an exact integer below 2^55, computed
// from the digits themselves, and y +- w < 2^62 + 2^14 + 2^55 < 2^63: no
// reduction, only the map of a negative result to the element it stands
// for (hyb_gl_of) before the lazy levels. The second level so replaces F/2
// lazy butterflies (a shift reduction, lz_add, lz_sub: about 15 ALU and 7
// FMA-pipe instructions each) and half of the first level's outputs.
// Same outputs (as residues) as hyb_ct_lazy<F, true> of the digits mapped
// to Goldilocks elements (kernels/testdata/hybrid_model.cpp checks both).
template <int F>
__device__ __forceinline__ void hyb_ct_digits(const int32_t (&d)[F], uint64_t (&x)[F]) {
    static_assert(F >= 4, "two exact levels need F >= 4");
    static_assert(hyb_exp<F, true>(0, 0) == 32 && !hyb_negates<32>() && hyb_s<32>() == 48, "first twisted level is 2^48");
    static_assert(hyb_exp<F, true>(1, 0) == 16 && !hyb_negates<16>() && hyb_s<16>() == 24 &&
                      hyb_exp<F, true>(1, 1) == 48 && !hyb_negates<48>() && hyb_s<48>() == 72,
                  "second twisted level is 2^24, 2^72");
    constexpr int Q = F / 4;
    // v 2^s for s < 64, and v 2^72 = v (2^40 - 2^8), exact for |v| <= 2^14.
    auto sh = [](int64_t v, int s) { return (int64_t)((uint64_t)v << s); };
    auto m72 = [&](int64_t v) { return sh(v, 40) - sh(v, 8); };
    hyb_for<Q>([&](auto jc) {
        constexpr int j = decltype(jc)::value;
        const int64_t d0 = d[j], d1 = d[j + Q], d2 = d[j + 2 * Q], d3 = d[j + 3 * Q];
        const int64_t u0 = d0 + sh(d2, 48), u1 = d0 - sh(d2, 48);  // level 0 at j and j + F/2
        const int64_t w0 = sh(d1, 24) + m72(d3);                    // 2^24 (level 0 at j + F/4)
        const int64_t w1 = m72(d1) + sh(d3, 24);                    // 2^72 (level 0 at j + 3F/4)
        x[j] = hyb_gl_of(u0 + w0);
        x[j + Q] = hyb_gl_of(u0 - w0);
        x[j + 2 * Q] = hyb_gl_of(u1 + w1);
        x[j + 3 * Q] = hyb_gl_of(u1 - w1);
    });
    hyb_ct_lazy<F, true, 2>(x);
}

template <int F, bool TWISTED>
__device__ __forceinline__ void hyb_ct(uint64_t (&x)[F]) {
    hyb_ct_lazy<F, TWISTED>(x);
    hyb_for<F>([&](auto ic) { x[decltype(ic)::value] = lz_canon(x[decltype(ic)::value]); });
}

// hyb_gs is F times the inverse of hyb_ct: Gentleman-Sande with the inverse
// twiddles, bit-reversed in, natural out. It takes canonical values and keeps
// them canonical throughout: the sum by lz_addc, the twiddled difference by
// the twiddle's own reduction (the lazy difference of canonical operands is
// a valid twiddle operand).
template <int F, bool TWISTED>
__device__ __forceinline__ void hyb_gs(uint64_t (&x)[F]) {
    hyb_for<hyb_lg<F>::v>([&](auto lvc) {
        constexpr int lv = hyb_lg<F>::v - 1 - decltype(lvc)::value, h = F >> (lv + 1);
        hyb_for<F / 2>([&](auto bc) {
            constexpr int b = decltype(bc)::value, g = b / h, j = b % h, a = 2 * g * h + j;
            constexpr int E = 128 - hyb_exp<F, TWISTED>(lv, g);
            const uint64_t u = x[a], v = x[a + h];
            x[a] = lz_addc(u, v);
            if constexpr (hyb_negates<E>()) {
                x[a + h] = hyb_tw<E>(lz_sub(v, u));
            } else {
                x[a + h] = hyb_tw<E>(lz_sub(u, v));
            }
        });
    });
}

// hyb_ct_inv_lazy: F times the inverse of the cyclic hyb_ct as a
// decimation-in-frequency network with inverse twiddles: x[k] holds input
// k in natural order (the value that hyb_ct's register brv(k) holds), and
// register j ends holding output brv(j); lazy outputs. Output j depends
// only on the butterflies of its own block at every level, so a caller
// that keeps a few outputs lets the compiler drop the rest of the network
// (the split blind rotation spreads one transform over several threads
// this way).
template <int F>
__device__ __forceinline__ void hyb_ct_inv_lazy(uint64_t (&x)[F]) {
    hyb_ct_lazy<F, false, 0, true>(x);
}

// hyb_gs_ct_lazy: the map of hyb_gs<F, false> (F times the inverse of the
// cyclic hyb_ct: bit-reversed in, natural out) as a Cooley-Tukey network
// (decimation in time on the bit-reversed input: level s joins blocks of
// h = 2^s with the twiddle omega_2h^-j = psi_128^-(64/h)j on the upper
// operand), so that its butterflies are hyb_ct_lazy's: any input, the
// twiddled operand reduced to a canonical value, lazy outputs (for a
// consumer that takes any operand: lz_mul, lz_canon). The twisted inverse
// keeps the Gentleman-Sande form (its twist is merged into the twiddles).
// CANON_IN as for hyb_ct_lazy: canonical inputs, so the first level (h =
// 1, every twiddle 1) skips lz_canon.
template <int F, bool CANON_IN = false>
__device__ __forceinline__ void hyb_gs_ct_lazy(uint64_t (&x)[F]) {
    hyb_for<hyb_lg<F>::v>([&](auto sc) {
        constexpr int h = 1 << decltype(sc)::value;
        hyb_for<F / 2>([&](auto bc) {
            constexpr int b = decltype(bc)::value, g = b / h, j = b % h, a = 2 * g * h + j;
            constexpr int E = (128 - (64 / h) * j) & 127;
            hyb_bfly<E, CANON_IN && h == 1>(x[a], x[a + h]);
        });
    });
}

// hyb_rows: the second stage of the two-stage transform (INV: its
// inverse), in place on the padded polynomial S (F1 rows of F2 + 1 words:
// position p at (F2 + 1) * (p / F2) + p % F2), by one warp: lane takes rows
// lane, lane + 32, ... Canonical outputs (the inverse: canonical in).
template <int F1, int F2, bool INV>
__device__ __forceinline__ void hyb_rows(uint64_t* S, int lane) {
    constexpr int PITCH = F2 + 1;
#pragma unroll
    for (int it = 0; it < (F1 + 31) / 32; it++) {
        const int b = lane + 32 * it;
        if (b >= F1) break;
        uint64_t r[F2];
#pragma unroll
        for (int i = 0; i < F2; i++) r[i] = S[PITCH * b + i];
        if constexpr (INV) {
            hyb_gs<F2, false>(r);
        } else {
            hyb_ct<F2, false>(r);
        }
#pragma unroll
        for (int j = 0; j < F2; j++) S[PITCH * b + j] = r[j];
    }
}

// Forward: tw = T_1 (N entries); twisted selects the negacyclic transform.
template <int F1, int F2, bool TWISTED>
__device__ __forceinline__ void hyb_fwd(uint64_t* __restrict__ data, int32_t batch,
                                        const uint64_t* __restrict__ tw) {
    constexpr int N = F1 * F2, PITCH = F2 + 1;
    extern __shared__ uint64_t hyb_sm[];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    uint64_t* S = hyb_sm + warp * F1 * PITCH;
    const int64_t stride = (int64_t)gridDim.x * HYB_WARPS;
    for (int64_t poly = (int64_t)blockIdx.x * HYB_WARPS + warp; poly < batch; poly += stride) {
        uint64_t* g = data + poly * N;
#pragma unroll
        for (int it = 0; it < (F2 + 31) / 32; it++) {
            const int c = lane + 32 * it;
            if (c >= F2) break;
            uint64_t r[F1];
#pragma unroll
            for (int i = 0; i < F1; i++) r[i] = g[F2 * i + c];
            hyb_ct_lazy<F1, TWISTED>(r);  // lz_mul takes lazy operands
#pragma unroll
            for (int j = 0; j < F1; j++) S[PITCH * j + c] = lz_mul(r[j], tw[F2 * j + c]);
        }
        __syncwarp();
        hyb_rows<F1, F2, false>(S, lane);
        __syncwarp();
        for (int p = lane; p < N; p += 32) g[p] = S[PITCH * (p / F2) + p % F2];
        __syncwarp();
    }
}

// Inverse: twInv = T'_1 = N^-1 * T_1^-1 (the whole scaling).
template <int F1, int F2, bool TWISTED>
__device__ __forceinline__ void hyb_inv(uint64_t* __restrict__ data, int32_t batch,
                                        const uint64_t* __restrict__ twInv) {
    constexpr int N = F1 * F2, PITCH = F2 + 1;
    extern __shared__ uint64_t hyb_sm[];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    uint64_t* S = hyb_sm + warp * F1 * PITCH;
    const int64_t stride = (int64_t)gridDim.x * HYB_WARPS;
    for (int64_t poly = (int64_t)blockIdx.x * HYB_WARPS + warp; poly < batch; poly += stride) {
        uint64_t* g = data + poly * N;
        for (int p = lane; p < N; p += 32) S[PITCH * (p / F2) + p % F2] = g[p];
        __syncwarp();
        hyb_rows<F1, F2, true>(S, lane);
        __syncwarp();
#pragma unroll
        for (int it = 0; it < (F2 + 31) / 32; it++) {
            const int c = lane + 32 * it;
            if (c >= F2) break;
            uint64_t r[F1];
#pragma unroll
            for (int j = 0; j < F1; j++) r[j] = lz_mul(S[PITCH * j + c], twInv[F2 * j + c]);
            hyb_gs<F1, TWISTED>(r);
#pragma unroll
            for (int i = 0; i < F1; i++) g[F2 * i + c] = r[i];
        }
        __syncwarp();
    }
}

// One extern "C" pair per supported shape (negacyclic); blockDim.x must be
// 32 * HYB_WARPS, dynamic shared memory HYB_WARPS * F1 * (F2 + 1) * 8 bytes.
#define HYB_DEFINE(F1, F2)                                                                 \
    extern "C" __global__ void __launch_bounds__(32 * HYB_WARPS)                          \
        goldfhe_ntt_hybrid_fwd_##F1##x##F2(uint64_t* data, int32_t batch, const uint64_t* tw) { \
        hyb_fwd<F1, F2, true>(data, batch, tw);                                            \
    }                                                                                      \
    extern "C" __global__ void __launch_bounds__(32 * HYB_WARPS)                          \
        goldfhe_ntt_hybrid_inv_##F1##x##F2(uint64_t* data, int32_t batch, const uint64_t* tw) { \
        hyb_inv<F1, F2, true>(data, batch, tw);                                            \
    }

// GOLDFHE_HYB_NO_KERNELS: the templates only (the host models in
// kernels/testdata include this file).
#ifndef GOLDFHE_HYB_NO_KERNELS
HYB_DEFINE(16, 32)
HYB_DEFINE(32, 16)
HYB_DEFINE(32, 32)
HYB_DEFINE(32, 64)
HYB_DEFINE(64, 32)
#endif

#endif // GOLDFHE_NTT_HYBRID_CUH
