// Host model of the hybrid NTT's small transforms (kernels/ntt_hybrid.cuh,
// kernels/ntt_lazy.cuh): the device source itself, compiled by g++ (the
// lazy primitives have host branches with the same steps as their PTX), is
// compared bit for bit with the canonical-per-operation network the kernels
// used before (ref_ct/ref_gs below: the previous hyb_ct/hyb_gs, with the
// canonical gl_* operations in place of the PTX fa_* ones), and the
// decimation-in-frequency inverse (hyb_ct_inv_lazy) with ref_gs.
//   g++ -O2 -std=c++17 -o /tmp/hybrid_model kernels/testdata/hybrid_model.cpp && /tmp/hybrid_model
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>

#define __device__
#define __host__
#define __global__
#define __forceinline__ inline
#define __restrict__
#define __shared__
#define __launch_bounds__(x)
struct hyb_dim3 { unsigned x, y, z; };
static hyb_dim3 threadIdx, blockIdx, blockDim, gridDim;
static inline void __syncwarp() {}
static inline uint64_t __umul64hi(uint64_t a, uint64_t b) { return (uint64_t)(((unsigned __int128)a * b) >> 64); }

#include "../goldilocks.cuh"
// ntt_fastops.cuh is PTX; its functions are the canonical gl_* ones
// (canonical in, canonical out), which is all the reference needs.
#define GOLDFHE_NTT_FASTOPS_CUH
static inline uint64_t fa_add(uint64_t a, uint64_t b) { return gl_add(a, b); }
static inline uint64_t fa_sub(uint64_t a, uint64_t b) { return gl_sub(a, b); }
template <int S> static inline uint64_t fa_mul_pow2(uint64_t x) { return gl_mul_pow2(x, S); }
#define GOLDFHE_HYB_NO_KERNELS
#include "../ntt_hybrid.cuh"

static const uint64_t P = GL_P;

template <int F, bool TWISTED>
static void ref_ct(uint64_t (&x)[F]) {
    hyb_for<hyb_lg<F>::v>([&](auto lvc) {
        constexpr int lv = decltype(lvc)::value, h = F >> (lv + 1);
        hyb_for<F / 2>([&](auto bc) {
            constexpr int b = decltype(bc)::value, g = b / h, j = b % h, a = 2 * g * h + j;
            constexpr int E = hyb_exp<F, TWISTED>(lv, g);
            const uint64_t u = x[a], v = hyb_mul_abs<E>(x[a + h]);
            if constexpr (hyb_negates<E>()) {
                x[a] = fa_sub(u, v);
                x[a + h] = fa_add(u, v);
            } else {
                x[a] = fa_add(u, v);
                x[a + h] = fa_sub(u, v);
            }
        });
    });
}
template <int F, bool TWISTED>
static void ref_gs(uint64_t (&x)[F]) {
    hyb_for<hyb_lg<F>::v>([&](auto lvc) {
        constexpr int lv = hyb_lg<F>::v - 1 - decltype(lvc)::value, h = F >> (lv + 1);
        hyb_for<F / 2>([&](auto bc) {
            constexpr int b = decltype(bc)::value, g = b / h, j = b % h, a = 2 * g * h + j;
            constexpr int E = 128 - hyb_exp<F, TWISTED>(lv, g);
            const uint64_t u = x[a], v = x[a + h];
            x[a] = fa_add(u, v);
            if constexpr (hyb_negates<E>()) {
                x[a + h] = hyb_mul_abs<E>(fa_sub(v, u));
            } else {
                x[a + h] = hyb_mul_abs<E>(fa_sub(u, v));
            }
        });
    });
}

static long fails = 0, cases = 0;
static const uint64_t special[] = {0, 1, 2, P - 1, P - 2, P - 0xFFFFFFFFull, P - 0x100000000ull, 0xFFFFFFFFull,
                                   0x100000000ull, 1ull << 63, (1ull << 63) - 1, 0xFFFFFFFEFFFFFFFFull,
                                   0x8000000080000000ull, 0x7FFFFFFFFFFFFFFFull, 0x00000001FFFFFFFFull};

template <int F, bool TW>
static void run(std::mt19937_64& rng, long n, const char* name) {
    const int NS = sizeof(special) / sizeof(special[0]);
    long f0 = fails;
    for (long it = 0; it < n; it++) {
        uint64_t a[F], b[F], c[F], d[F];
        const int mode = it % 6;
        for (int i = 0; i < F; i++) {
            uint64_t x;
            switch (mode) {
            case 0: x = rng() % P; break;                       // uniform
            case 1: x = special[rng() % NS]; break;             // extremes only
            case 2: x = P - 1 - (rng() % 4096); break;          // near p
            case 3: x = rng() % 4096; break;                    // near 0
            case 4: x = (rng() & 1) ? P - 1 : 0; break;
            default: x = (rng() % 3 == 0) ? special[rng() % NS] : rng() % P; break;
            }
            a[i] = b[i] = c[i] = d[i] = x;
        }
        if (it == 0) for (int i = 0; i < F; i++) a[i] = b[i] = c[i] = d[i] = P - 1;
        if (it == 1) for (int i = 0; i < F; i++) a[i] = b[i] = c[i] = d[i] = 0;
        ref_ct<F, TW>(a);
        hyb_ct<F, TW>(b);
        ref_gs<F, TW>(c);
        hyb_gs<F, TW>(d);
        cases += 2;
        for (int i = 0; i < F; i++) {
            if (a[i] != b[i] || b[i] >= P) { if (fails++ < 10) printf("%s ct mismatch it=%ld i=%d\n", name, it, i); break; }
        }
        for (int i = 0; i < F; i++) {
            if (c[i] != d[i] || d[i] >= P) { if (fails++ < 10) printf("%s gs mismatch it=%ld i=%d\n", name, it, i); break; }
        }
        // hyb_gs_ct_lazy (cyclic only): the same residues as ref_gs, for
        // canonical and for any inputs
        if constexpr (!TW) {
            uint64_t e[F], g[F];
            for (int i = 0; i < F; i++) e[i] = (it & 1) ? d[i] ^ (rng() & 0xFFFFFFFF00000000ull) : a[i];
            for (int i = 0; i < F; i++) g[i] = e[i] % P;
            ref_gs<F, false>(g);
            hyb_gs_ct_lazy<F>(e);
            cases++;
            for (int i = 0; i < F; i++) {
                if (lz_canon(e[i]) != g[i]) { if (fails++ < 10) printf("%s gs_ct_lazy mismatch it=%ld i=%d\n", name, it, i); break; }
            }
        }
        // hyb_ct_inv_lazy (the split blind rotation's inverse stages): on
        // the inputs in natural order (register k = ref_gs's input brv(k)),
        // register j holds ref_gs's output brv(j) as a residue; for the
        // twisted inverse (stage 1) times psi_2F^-m, m = brv(j), as the
        // kernel applies it (hyb_tw, then the sign).
        {
            constexpr int LG = hyb_lg<F>::v;
            uint64_t in[F], v[F], w[F];
            for (int i = 0; i < F; i++) in[i] = (it & 1) ? d[i] ^ (rng() & 0xFFFFFFFF00000000ull) : a[i];
            for (int i = 0; i < F; i++) w[i] = in[i] % P;
            ref_gs<F, TW>(w);
            for (int k = 0; k < F; k++) v[k] = in[hyb_brv(k, LG)];
            hyb_ct_inv_lazy<F>(v);
            cases++;
            bool bad = false;
            hyb_for<F>([&](auto jc) {
                constexpr int j = decltype(jc)::value, m = hyb_brv(j, LG);
                uint64_t y = lz_canon(v[j]);
                if constexpr (TW) {
                    constexpr int E = (128 - (64 / F) * m) & 127;
                    y = hyb_tw<E>(v[j]);
                    if constexpr (hyb_negates<E>()) y = gl_neg(y);
                }
                bad |= y != w[m];
            });
            if (bad && fails++ < 10) printf("%s ct_inv_lazy mismatch it=%ld\n", name, it);
        }
        // hyb_fwd's stage 1: lz_mul of hyb_ct_lazy's outputs = gl_mul of the canonical ones
        {
            uint64_t l[F];
            for (int i = 0; i < F; i++) l[i] = d[i] ^ (uint64_t)it;  // any values
            uint64_t m[F];
            for (int i = 0; i < F; i++) m[i] = l[i] % P;
            hyb_ct_lazy<F, TW>(l);
            ref_ct<F, TW>(m);
            cases++;
            for (int i = 0; i < F; i++) {
                const uint64_t t = rng() % P;
                if (lz_mul(l[i], t) != gl_mul(m[i], t)) { if (fails++ < 10) printf("%s ct_lazy+mul mismatch\n", name); break; }
            }
        }
        // hyb_ct also takes non-canonical (lazy) inputs: x and x - p give the same result
        if (it % 7 == 0) {
            uint64_t e[F], f[F];
            for (int i = 0; i < F; i++) { e[i] = rng() % P; f[i] = e[i] < 0xFFFFFFFFull ? e[i] + P : e[i]; }
            hyb_ct<F, TW>(e);
            hyb_ct<F, TW>(f);
            cases++;
            for (int i = 0; i < F; i++) if (e[i] != f[i]) { if (fails++ < 10) printf("%s lazy-input mismatch\n", name); break; }
        }
    }
    printf("%-8s %ld transforms each way, %ld failures\n", name, n, fails - f0);
}

// hyb_ct_digits (the wide blind rotation's stage 1 on gadget digits): the
// exact first level on signed digits |d| <= 2^14, against ref_ct of the
// digits mapped to Goldilocks elements (d + p for d < 0); outputs compared
// as residues (canonicalised; the kernel feeds them to lz_mul, which takes
// any operand) and through lz_mul against gl_mul of the reference.
template <int F>
static void run_digits(std::mt19937_64& rng, long n, const char* name) {
    long f0 = fails;
    const int32_t B = 1 << 14;
    for (long it = 0; it < n; it++) {
        int32_t d[F];
        const int mode = it % 5;
        const int beta = 1 + (int)(rng() % 15);  // beta <= 15: |d| <= 2^(beta-1)
        const int32_t half = 1 << (beta - 1);
        for (int i = 0; i < F; i++) {
            switch (mode) {
            case 0: d[i] = (int32_t)(rng() % (2 * half)) - half; break;      // digits of beta bits
            case 1: d[i] = (rng() & 1) ? B : -B; break;                       // extremes
            case 2: d[i] = (int32_t)(rng() % (2 * B + 1)) - B; break;
            case 3: d[i] = (int32_t)(rng() % 3) - 1; break;
            default: d[i] = (rng() % 2) ? -B : (int32_t)(rng() % 128) - 64; break;
            }
        }
        uint64_t m[F], x[F];
        for (int i = 0; i < F; i++) m[i] = d[i] < 0 ? P - (uint64_t)(-(int64_t)d[i]) : (uint64_t)d[i];
        ref_ct<F, true>(m);
        hyb_ct_digits<F>(d, x);
        cases++;
        for (int i = 0; i < F; i++) {
            const uint64_t t = rng() % P;
            if (lz_canon(x[i]) != m[i] || lz_mul(x[i], t) != gl_mul(m[i], t)) {
                if (fails++ < 10) printf("%s digits mismatch it=%ld i=%d\n", name, it, i);
                break;
            }
        }
    }
    printf("%-8s %ld digit transforms, %ld failures\n", name, n, fails - f0);
}

int main(int argc, char** argv) {
    long n = argc > 1 ? atol(argv[1]) : 20000;
    std::mt19937_64 rng(20261122);
    run<4, false>(rng, n, "4");
    run<4, true>(rng, n, "4t");
    run<8, false>(rng, n, "8");
    run<8, true>(rng, n, "8t");
    run<16, false>(rng, n, "16");
    run<16, true>(rng, n, "16t");
    run<32, false>(rng, n, "32");
    run<32, true>(rng, n, "32t");
    run<64, false>(rng, n, "64");
    run<64, true>(rng, n, "64t");
    run_digits<4>(rng, 20 * n, "4d");
    run_digits<8>(rng, 50 * n, "8d");
    run_digits<16>(rng, 20 * n, "16d");
    run_digits<32>(rng, 5 * n, "32d");
    run_digits<64>(rng, 2 * n, "64d");
    printf("hybrid_model: %ld cases, %ld failures\n", cases, fails);
    return fails != 0;
}
