// Host model of kernels/ntt_lazy.cuh: the same source compiled by g++ (its
// host branches take the same steps as the PTX carry chains), checked
// against __int128 arithmetic on extreme and random operands over each
// primitive's whole documented domain.
//   g++ -O2 -std=c++17 -o /tmp/lazy_model kernels/testdata/lazy_model.cpp && /tmp/lazy_model
#include <cstdio>
#include <cstdlib>
#include <random>
#include <utility>
#include "../ntt_lazy.cuh"

typedef unsigned __int128 u128;
static const uint64_t P = 0xFFFFFFFF00000001ull;
static uint64_t modp(u128 x) { return (uint64_t)(x % P); }
static uint64_t pow2mod(int s) { u128 r = 1; for (int i = 0; i < s; i++) r = (r * 2) % P; return (uint64_t)r; }

static long fails = 0, checks = 0;
#define CHECK(cond, ...) do { checks++; if (!(cond)) { if (fails++ < 20) { printf(__VA_ARGS__); printf("\n"); } } } while (0)
#define X(v) (unsigned long long)(v)

static const uint64_t ext[] = {0, 1, 2, 3, P - 1, P, P + 1, P - 2, P - 0xFFFFFFFFull, P - 0x100000000ull, 0xFFFFFFFFull,
                               0x100000000ull, 0xFFFFFFFEull, 1ull << 63, (1ull << 63) - 1, (1ull << 63) + 1, ~0ull,
                               ~0ull - 1, 0xFFFFFFFF00000000ull, 0xFFFFFFFE00000000ull, 0xFFFFFFFEFFFFFFFFull,
                               0xFFFFFFFEFFFFFFFEull, 0x00000001FFFFFFFFull, 0x8000000080000000ull,
                               0x7FFFFFFF7FFFFFFFull, 0xFFFFFFFF7FFFFFFFull, 0xFFFFFFFF80000000ull,
                               0x00000000FFFFFFFEull, 0x0000000100000001ull};
static const int NX = sizeof(ext) / sizeof(ext[0]);

template <int S> static void check_pow2(uint64_t x) {
    const uint64_t r = lz_mul_pow2<S>(x);
    CHECK(r < P && r == modp((u128)(x % P) * pow2mod(S)), "mul_pow2<%d>(%016llx) = %016llx", S, X(x), X(r));
}
template <int... Ss> static void check_pow2_all(uint64_t x, std::integer_sequence<int, Ss...>) { (check_pow2<Ss>(x), ...); }

static void check_pair(uint64_t u, uint64_t w) {
    // lz_add / lz_sub: u any, w <= p; lazy results.
    if (w <= P) {
        CHECK(lz_add(u, w) % P == modp((u128)u + w), "add %016llx %016llx", X(u), X(w));
        CHECK(lz_sub(u, w) % P == modp((u128)u + 2 * (u128)P - w), "sub %016llx %016llx", X(u), X(w));
    }
    // lz_addc: canonical operands, canonical result.
    if (u < P && w < P) {
        const uint64_t r = lz_addc(u, w);
        CHECK(r < P && r == modp((u128)u + w), "addc %016llx %016llx", X(u), X(w));
        // the difference of canonical operands feeds a twiddle (any operand): check it is congruent
        CHECK(lz_sub(u, w) % P == modp((u128)u + P - w), "sub canon %016llx %016llx", X(u), X(w));
    }
    // lz_mul: any operands, canonical product.
    const uint64_t pr = lz_mul(u, w);
    CHECK(pr < P && pr == modp((u128)u * w), "mul %016llx %016llx", X(u), X(w));
    // lz_red128: any h, l (w as h: the extremes include h0 = 0 with h1 =
    // 2^32 - 1, whose t is 0, so that a small l takes the borrow branch).
    const uint64_t r128 = lz_red128(w, u);
    CHECK(r128 < P && r128 == modp(((u128)w << 64) + u), "red128 %016llx %016llx", X(w), X(u));
    // lz_red_small: hi < 2^32, lo any.
    const uint32_t hi = (uint32_t)w;
    const uint64_t r = lz_red_small(hi, u);
    CHECK(r < P && r == modp(((u128)hi << 64) + u), "red_small %08x %016llx", hi, X(u));
    // lz_fold_canon: c = 1 only with s < p - eps.
    CHECK(lz_fold_canon(u, 0) == u % P, "fold_canon0 %016llx", X(u));
    if (u < P - 0xFFFFFFFFull) CHECK(lz_fold_canon(u, 1) == modp(((u128)1 << 64) + u), "fold_canon1 %016llx", X(u));
}

// lz_mac / lz_acc_reduce (and lz_acc_reduce_lazy, mod p): sums of R
// products of any operands, against the
// exact 256-bit sum (two __int128 halves) reduced mod p, and against the
// kernels' previous bs_mac_acc + gl_reduce192 (copied below) for canonical
// operands.
static void old_mac(uint64_t& lo, uint64_t& hi, uint64_t& top, uint64_t x, uint64_t y) {
    const uint64_t pl = x * y;
    const uint64_t ph = (uint64_t)(((u128)x * y) >> 64);
    lo += pl;
    const uint64_t h = ph + (lo < pl ? 1 : 0);
    hi += h;
    top += hi < h ? 1 : 0;
}
static uint64_t old_reduce192(uint64_t z, uint64_t y, uint64_t w) {
    // gl_sub(gl_reduce128(y, z), gl_mul_2_32(w)), all canonical steps
    const uint64_t a = modp(((u128)y << 64) + z), b = modp((u128)w << 32);
    return a >= b ? a - b : a + P - b;
}
static void check_mac(const uint64_t* x, const uint64_t* y, int R) {
    lz_acc s;
    lz_acc_zero(s);
    u128 lo = 0, hi = 0;  // exact sum = lo + 2^128 hi
    bool canon = true;
    uint64_t ol = 0, oh = 0, ot = 0;
    for (int r = 0; r < R; r++) {
        lz_mac(s, x[r], y[r]);
        const u128 pr = (u128)x[r] * y[r];
        lo += pr;
        hi += lo < pr;
        canon = canon && x[r] < P && y[r] < P;
        old_mac(ol, oh, ot, x[r], y[r]);
    }
    // (lo + 2^128 hi) mod p, 2^128 = p - 2^32 (mod p)
    const uint64_t want = (uint64_t)((lo % P + (hi % P) * (u128)(P - 0x100000000ull)) % P);
    const uint64_t got = lz_acc_reduce(s);
    CHECK(got == want, "mac R=%d got %016llx want %016llx", R, X(got), X(want));
    const uint64_t lazy = lz_acc_reduce_lazy(s);
    CHECK(lazy % P == want, "mac lazy R=%d got %016llx want %016llx", R, X(lazy), X(want));
    if (canon) CHECK(got == old_reduce192(ol, oh, ot), "mac vs old R=%d", R);
}

int main(int argc, char** argv) {
    long n = argc > 1 ? atol(argv[1]) : 200000;
    std::mt19937_64 rng(12345);
    for (int i = 0; i < NX; i++) {
        CHECK(lz_canon(ext[i]) == ext[i] % P, "canon %016llx", X(ext[i]));
        CHECK(lz_mul64(ext[i]) < P && lz_mul64(ext[i]) == modp((u128)(ext[i] % P) * pow2mod(64)), "mul64 %016llx", X(ext[i]));
        check_pow2_all(ext[i], std::make_integer_sequence<int, 96>{});
        for (int j = 0; j < NX; j++) check_pair(ext[i], ext[j]);
    }
    for (long i = 0; i < n; i++) {
        uint64_t u = rng(), w = rng();
        switch (i % 8) {
        case 1: u |= 0xFFFFFFFF00000000ull; break;
        case 2: w = P - (w & 0xFFFFFFFFull); break;
        case 3: u = P - 1 - (u & 0xFFFF); w = P - (w & 0xFFFF); break;
        case 4: u &= 0xFFFFFFFFull; w |= 0xFFFFFFFF00000000ull; break;
        case 5: w %= P; u %= P; break;
        case 6: u = ~0ull - (u & 0xFFFFFFFFFull); break;
        case 7: u = P - 0xFFFFFFFFull - 1 - (u & 0xFFFFF); break;
        default: break;
        }
        check_pair(u, w);
        check_pair(u, w % (P + 1));
        CHECK(lz_canon(u) == u % P, "canon");
        CHECK(lz_mul64(u) == modp((u128)(u % P) * pow2mod(64)), "mul64 %016llx", X(u));
        if (i % 16 == 0) check_pow2_all(u, std::make_integer_sequence<int, 96>{});
    }
    {
        const long m0 = checks;
        uint64_t x[16], y[16];
        for (int i = 0; i < NX; i++)
            for (int j = 0; j < NX; j++) {
                for (int r = 0; r < 16; r++) { x[r] = ext[i]; y[r] = ext[j]; }
                for (int R = 1; R <= 16; R++) check_mac(x, y, R);
            }
        for (long i = 0; i < 4 * n; i++) {
            const int R = 1 + (int)(rng() % 12);
            for (int r = 0; r < R; r++) {
                switch ((i + r) % 6) {
                case 0: x[r] = rng(); y[r] = rng(); break;                          // any
                case 1: x[r] = rng() % P; y[r] = rng() % P; break;                  // canonical
                case 2: x[r] = ext[rng() % NX]; y[r] = ext[rng() % NX]; break;
                case 3: x[r] = ~0ull - (rng() & 0xFFFF); y[r] = ~0ull - (rng() & 0xFFFF); break;
                case 4: x[r] = P - 1 - (rng() & 0xFFFF); y[r] = P - 1 - (rng() & 0xFFFF); break;
                default: x[r] = rng() | 0xFFFFFFFF00000000ull; y[r] = rng() & 0xFFFFFFFF0000FFFFull; break;
                }
            }
            check_mac(x, y, R);
        }
        printf("lz_mac: %ld checks\n", checks - m0);
    }
    printf("lazy_model: %ld checks, %ld failures\n", checks, fails);
    return fails != 0;
}
