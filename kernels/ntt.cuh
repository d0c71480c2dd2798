// ntt.cuh: the NTT kernels over the Goldilocks field (DESIGN.md section 4).
//
// Three families, each bit-for-bit the function its smallntt counterpart
// computes (the layout is the one documented on smallntt.Plan: position j of
// an N-point transform holds the value at psi^(2*brv_L(j)+1)):
//
//   goldfhe_ntt_matrix_{fwd,inv}   the decomposed N-point NTT, eq. (9) of
//       Li et al. 2024, each small transform in the paper's matrix style: one
//       thread per output, every term a shift of < 96 bits, summed in three
//       64-bit limbs, one 192-bit reduction per output; with or without the
//       merging preprocessing.
//   goldfhe_ntt_butterfly_{fwd,inv}  the radix-2 baseline: Cooley-Tukey
//       forward with the merged bit-reversed psi table, Gentleman-Sande
//       inverse, one general multiplication per butterfly, one block per
//       polynomial in shared memory.
//   goldfhe_small_{matrix,butterfly}  batches of independent n-point
//       transforms (n = 4..64), the paper's Table 1.
//
// Every root of order dividing 128 is a power of psi_128 = 2^73 - 2^25
// (smallntt/small.go): psi_128^(2j) = 2^(3j), psi_128^(2j+1) = 2^(3j+73) +
// 2^(3j+121), exponents of 2 taken mod 192 with 2^96 = -1 folded into the
// operand. So the small transforms need no multiplier.
#ifndef GOLDFHE_NTT_CUH
#define GOLDFHE_NTT_CUH

#include "goldilocks.cuh"
#include "ntt_fastops.cuh"

#define NTT_MAX_STAGES 6

// NTTStage describes stage s of a decomposition (smallntt.Plan doc): blocks
// of size = N_s positions, f = f_s rows by t = t_s columns, and the twiddle
// table by position inside a block (T_s forward, T'_s inverse; NULL when the
// stage has none). Layout shared with kernels/ntt.go (24 bytes).
struct NTTStage {
    int32_t f, logf, t, size;
    const uint64_t* tw;
};

// NTTPlanDesc is passed by value (160 bytes). negacyclic selects the twisted
// first stage (Forward/Inverse) over the cyclic one (ForwardCyclic...).
struct NTTPlanDesc {
    int32_t n, nstages, negacyclic, merge;
    NTTStage st[NTT_MAX_STAGES];
};

// acc192_shift adds x * 2^e (0 <= e < 192) to the 192-bit accumulator
// (z, y, w): for e >= 96 the operand becomes p - x (2^96 = -1; p - 0 = p is
// 0 mod p, so no test for zero), then x * 2^e' with e' < 96 is below 2^160
// and is split into limbs by shifts.
__device__ __forceinline__ void acc192_shift(uint64_t& z, uint64_t& y, uint64_t& w,
                                             uint64_t x, uint32_t e) {
    if (e >= 96) {
        x = GL_P - x;
        e -= 96;
    }
    uint64_t lo, mid, hi;
    if (e < 64) {
        lo = x << e;
        mid = e == 0 ? 0 : x >> (64 - e);
        hi = 0;
    } else {
        const uint32_t r = e - 64;
        lo = 0;
        mid = x << r;
        hi = r == 0 ? 0 : x >> (64 - r);
    }
    asm("add.cc.u64 %0, %0, %3;\n\t"
        "addc.cc.u64 %1, %1, %4;\n\t"
        "addc.u64 %2, %2, %5;"
        : "+l"(z), "+l"(y), "+l"(w)
        : "l"(lo), "l"(mid), "l"(hi));
}

// acc192_psi adds x * psi_128^E (E mod 128) to the accumulator: one shifted
// term for even E, two for odd E (only the twisted 64-point transform has
// odd E).
__device__ __forceinline__ void acc192_psi(uint64_t& z, uint64_t& y, uint64_t& w,
                                           uint64_t x, uint32_t E) {
    const uint32_t j = (E & 127) >> 1;
    if ((E & 1) == 0) {
        acc192_shift(z, y, w, x, 3 * j);
    } else {
        uint32_t e0 = 3 * j + 73, e1 = 3 * j + 121;
        if (e0 >= 192) e0 -= 192;
        if (e1 >= 192) e1 -= 192;
        acc192_shift(z, y, w, x, e0);
        acc192_shift(z, y, w, x, e1);
    }
}

__device__ __forceinline__ uint32_t ntt_brv(uint32_t k, int32_t logf) {
    return logf == 0 ? 0 : __brev(k) >> (32 - logf);
}

// Exponent of psi_128 in the forward small matrix entry for output k and
// input m: cyclic omega_f^(mk), twisted psi_2f^(m(2k+1)).
__device__ __forceinline__ uint32_t ntt_exp_fwd(bool twisted, int32_t f, uint32_t k, uint32_t m) {
    return twisted ? ((64u / f) * m * (2 * k + 1)) & 127u : ((128u / f) * m * k) & 127u;
}

// Exponent for output i and input k of the (unscaled) inverse.
__device__ __forceinline__ uint32_t ntt_exp_inv(bool twisted, int32_t f, uint32_t i, uint32_t k) {
    return (128u - ntt_exp_fwd(twisted, f, k, i)) & 127u;
}

// ntt_stage_fwd runs forward stage S over the n positions of one polynomial
// in shared memory. The data are in cur on entry and on exit; oth is scratch.
// Merging (paper section 2.2): inputs m and m + f/2 differ by the factor
// (-1)^k (cyclic) or 2^48 * (-1)^k (twisted), so u_m = x_m + c*x_(m+f/2) and
// v_m = x_m - c*x_(m+f/2) are formed once per column and even outputs sum f/2
// terms of u, odd ones f/2 terms of v.
__device__ void ntt_stage_fwd(uint64_t* cur, uint64_t* oth, const NTTStage& S,
                              bool twisted, bool merge, int32_t n) {
    const int32_t f = S.f, t = S.t, size = S.size, half = f / 2;
    const uint64_t* src = cur;
    if (merge) {
        const int32_t hs = size / 2;
        for (int32_t q = threadIdx.x; q < n / 2; q += blockDim.x) {
            const int32_t B = (q / hs) * size, r = q % hs, m = r / t, c = r % t;
            const uint64_t x0 = cur[B + t * m + c];
            uint64_t x1 = cur[B + t * (m + half) + c];
            if (twisted) x1 = gl_mul_pow2(x1, 48);
            oth[B + t * m + c] = fa_add(x0, x1);
            oth[B + t * (m + half) + c] = fa_sub(x0, x1);
        }
        __syncthreads();
        src = oth;
    }
    uint64_t* dst = merge ? cur : oth;
    for (int32_t o = threadIdx.x; o < n; o += blockDim.x) {
        const int32_t B = (o / size) * size, r = o % size, k = r / t, c = r % t;
        uint64_t z = 0, y = 0, w = 0;
        if (merge) {
            const int32_t base = (k & 1) ? half : 0;
            for (int32_t m = 0; m < half; m++)
                acc192_psi(z, y, w, src[B + t * (m + base) + c], ntt_exp_fwd(twisted, f, k, m));
        } else {
            for (int32_t m = 0; m < f; m++)
                acc192_psi(z, y, w, src[B + t * m + c], ntt_exp_fwd(twisted, f, k, m));
        }
        uint64_t v = gl_reduce192(z, y, w);
        const int32_t pos = t * (int32_t)ntt_brv(k, S.logf) + c;
        if (S.tw != nullptr) v = gl_mul(v, S.tw[pos]);
        dst[B + pos] = v;
    }
    __syncthreads();
    if (!merge) {
        // The result is in oth: copy back so that cur always holds the data
        // between stages (keeps the stage loop simple; costs one shared pass).
        for (int32_t i = threadIdx.x; i < n; i += blockDim.x) cur[i] = oth[i];
        __syncthreads();
    }
}

// ntt_stage_inv runs the inverse of forward stage S (smallntt.Plan doc):
// y_k = a[B + t*brv(k) + c] * T'[t*brv(k) + c], then
// a[B + t*i + c] = sum_k y_k * R(i,k)^-1, merged over k and k + f/2, whose
// entries differ by (-1)^i in both the cyclic and the twisted case.
__device__ void ntt_stage_inv(uint64_t* cur, uint64_t* oth, const NTTStage& S,
                              bool twisted, bool merge, int32_t n) {
    const int32_t f = S.f, t = S.t, size = S.size, half = f / 2, hs = size / 2;
    for (int32_t q = threadIdx.x; q < n / 2; q += blockDim.x) {
        const int32_t B = (q / hs) * size, r = q % hs, m = r / t, c = r % t;
        const int32_t p0 = t * (int32_t)ntt_brv(m, S.logf) + c;
        const int32_t p1 = t * (int32_t)ntt_brv(m + half, S.logf) + c;
        uint64_t y0 = cur[B + p0], y1 = cur[B + p1];
        if (S.tw != nullptr) {
            y0 = gl_mul(y0, S.tw[p0]);
            y1 = gl_mul(y1, S.tw[p1]);
        }
        if (merge) {
            oth[B + t * m + c] = fa_add(y0, y1);
            oth[B + t * (m + half) + c] = fa_sub(y0, y1);
        } else {
            oth[B + t * m + c] = y0;
            oth[B + t * (m + half) + c] = y1;
        }
    }
    __syncthreads();
    for (int32_t o = threadIdx.x; o < n; o += blockDim.x) {
        const int32_t B = (o / size) * size, r = o % size, i = r / t, c = r % t;
        uint64_t z = 0, y = 0, w = 0;
        if (merge) {
            const int32_t base = (i & 1) ? half : 0;
            for (int32_t m = 0; m < half; m++)
                acc192_psi(z, y, w, oth[B + t * (m + base) + c], ntt_exp_inv(twisted, f, i, m));
        } else {
            for (int32_t k = 0; k < f; k++)
                acc192_psi(z, y, w, oth[B + t * k + c], ntt_exp_inv(twisted, f, i, k));
        }
        cur[B + t * i + c] = gl_reduce192(z, y, w);
    }
    __syncthreads();
}

// goldfhe_ntt_matrix_fwd transforms batch polynomials of d.n coefficients
// (canonical), in place in global memory, one block per polynomial at a
// time (grid-stride). Dynamic shared memory: 2 * d.n * 8 bytes.
extern "C" __global__ void goldfhe_ntt_matrix_fwd(uint64_t* data, int32_t batch, const NTTPlanDesc d) {
    extern __shared__ uint64_t ntt_sm[];
    uint64_t* cur = ntt_sm;
    uint64_t* oth = ntt_sm + d.n;
    for (int32_t poly = blockIdx.x; poly < batch; poly += gridDim.x) {
        uint64_t* g = data + (size_t)poly * d.n;
        for (int32_t i = threadIdx.x; i < d.n; i += blockDim.x) cur[i] = g[i];
        __syncthreads();
        for (int32_t s = 0; s < d.nstages; s++)
            ntt_stage_fwd(cur, oth, d.st[s], s == 0 && d.negacyclic, d.merge != 0, d.n);
        for (int32_t i = threadIdx.x; i < d.n; i += blockDim.x) g[i] = cur[i];
        __syncthreads();
    }
}

// goldfhe_ntt_matrix_inv is the exact inverse of goldfhe_ntt_matrix_fwd
// (scaled by N^-1 through the stage-1 table T'_1).
extern "C" __global__ void goldfhe_ntt_matrix_inv(uint64_t* data, int32_t batch, const NTTPlanDesc d) {
    extern __shared__ uint64_t ntt_sm[];
    uint64_t* cur = ntt_sm;
    uint64_t* oth = ntt_sm + d.n;
    for (int32_t poly = blockIdx.x; poly < batch; poly += gridDim.x) {
        uint64_t* g = data + (size_t)poly * d.n;
        for (int32_t i = threadIdx.x; i < d.n; i += blockDim.x) cur[i] = g[i];
        __syncthreads();
        for (int32_t s = d.nstages - 1; s >= 0; s--)
            ntt_stage_inv(cur, oth, d.st[s], s == 0 && d.negacyclic, d.merge != 0, d.n);
        for (int32_t i = threadIdx.x; i < d.n; i += blockDim.x) g[i] = cur[i];
        __syncthreads();
    }
}

// goldfhe_ntt_butterfly_fwd: Cooley-Tukey over the whole polynomial in
// shared memory; level m = 1, 2, ..., n/2 pairs a[2gh + j] and a[2gh + h + j]
// (h = n/2m, g < m) with the twiddle tab[m + g] (psi^brv_L(m+g) for the
// negacyclic transform): (x, y) -> (x + c*y, x - c*y). The result is in
// bit-reversed order, the smallntt.Plan layout. Shared memory: d.n * 8 bytes.
extern "C" __global__ void goldfhe_ntt_butterfly_fwd(uint64_t* data, int32_t batch, int32_t n,
                                                     const uint64_t* __restrict__ tab) {
    extern __shared__ uint64_t ntt_sm[];
    uint64_t* a = ntt_sm;
    for (int32_t poly = blockIdx.x; poly < batch; poly += gridDim.x) {
        uint64_t* g = data + (size_t)poly * n;
        for (int32_t i = threadIdx.x; i < n; i += blockDim.x) a[i] = g[i];
        __syncthreads();
        for (int32_t m = 1, h = n / 2; m < n; m *= 2, h /= 2) {
            for (int32_t q = threadIdx.x; q < n / 2; q += blockDim.x) {
                const int32_t grp = q / h, j = q % h;
                const int32_t x = 2 * grp * h + j;
                const uint64_t c = tab[m + grp];
                const uint64_t u = a[x], v = gl_mul(a[x + h], c);
                a[x] = fa_add(u, v);
                a[x + h] = fa_sub(u, v);
            }
            __syncthreads();
        }
        for (int32_t i = threadIdx.x; i < n; i += blockDim.x) g[i] = a[i];
        __syncthreads();
    }
}

// goldfhe_ntt_butterfly_inv: Gentleman-Sande, levels m = n/2, ..., 2 with
// tabInv[m + g] = tab[m + g]^-1: (x, y) -> (x + y, (x - y)*c^-1); the last
// level (m = 1) folds in the scaling: (x, y) -> ((x + y)*tabInv[0],
// (x - y)*tabInv[1]) with tabInv[0] = N^-1 and tabInv[1] = tab[1]^-1 * N^-1
// (smallntt's table convention, plan_tables.go).
extern "C" __global__ void goldfhe_ntt_butterfly_inv(uint64_t* data, int32_t batch, int32_t n,
                                                     const uint64_t* __restrict__ tabInv) {
    extern __shared__ uint64_t ntt_sm[];
    uint64_t* a = ntt_sm;
    for (int32_t poly = blockIdx.x; poly < batch; poly += gridDim.x) {
        uint64_t* g = data + (size_t)poly * n;
        for (int32_t i = threadIdx.x; i < n; i += blockDim.x) a[i] = g[i];
        __syncthreads();
        for (int32_t m = n / 2, h = 1; m >= 1; m /= 2, h *= 2) {
            for (int32_t q = threadIdx.x; q < n / 2; q += blockDim.x) {
                const int32_t grp = q / h, j = q % h;
                const int32_t x = 2 * grp * h + j;
                const uint64_t u = a[x], v = a[x + h];
                if (m == 1) {
                    a[x] = gl_mul(fa_add(u, v), tabInv[0]);
                    a[x + h] = gl_mul(fa_sub(u, v), tabInv[1]);
                } else {
                    a[x] = fa_add(u, v);
                    a[x + h] = gl_mul(fa_sub(u, v), tabInv[m + grp]);
                }
            }
            __syncthreads();
        }
        for (int32_t i = threadIdx.x; i < n; i += blockDim.x) g[i] = a[i];
        __syncthreads();
    }
}

// goldfhe_small_matrix: batch independent n-point small transforms
// (smallntt.Small, natural order in and out) of kind 1 cyclic, 2 twisted,
// 3 cyclic inverse, 4 twisted inverse (unscaled), matrix style, one thread
// per output, merged or not. Each block handles blockDim.x / n transforms;
// blockDim.x must be a multiple of n. Shared memory: 2 * blockDim.x * 8.
extern "C" __global__ void goldfhe_small_matrix(uint64_t* data, int32_t batch, int32_t n,
                                                int32_t kind, int32_t merge) {
    extern __shared__ uint64_t ntt_sm[];
    uint64_t* x = ntt_sm;
    uint64_t* mg = ntt_sm + blockDim.x;
    const bool twisted = kind == 2 || kind == 4, inverse = kind >= 3;
    const int32_t per = blockDim.x / n, half = n / 2;
    const int32_t lt = threadIdx.x / n, k = threadIdx.x % n, base = lt * n;
    for (int64_t first = (int64_t)blockIdx.x * per; first < batch; first += (int64_t)gridDim.x * per) {
        const int64_t tr = first + lt;
        const bool live = lt < per && tr < batch;
        if (live) x[threadIdx.x] = data[tr * n + k];
        __syncthreads();
        if (merge && live && k < half) {
            const uint64_t x0 = x[base + k];
            uint64_t x1 = x[base + k + half];
            if (twisted && !inverse) x1 = gl_mul_pow2(x1, 48);
            mg[base + k] = fa_add(x0, x1);
            mg[base + k + half] = fa_sub(x0, x1);
        }
        __syncthreads();
        if (live) {
            uint64_t z = 0, y = 0, w = 0;
            if (merge) {
                const int32_t off = base + ((k & 1) ? half : 0);
                for (int32_t m = 0; m < half; m++)
                    acc192_psi(z, y, w, mg[off + m],
                               inverse ? ntt_exp_inv(twisted, n, k, m) : ntt_exp_fwd(twisted, n, k, m));
            } else {
                for (int32_t m = 0; m < n; m++)
                    acc192_psi(z, y, w, x[base + m],
                               inverse ? ntt_exp_inv(twisted, n, k, m) : ntt_exp_fwd(twisted, n, k, m));
            }
            data[tr * n + k] = gl_reduce192(z, y, w);
        }
        __syncthreads();
    }
}

// goldfhe_small_butterfly: the paper's Table 1 baseline, batches of n-point
// cyclic transforms (natural order in and out, equal to goldfhe_small_matrix
// kind 1) as a radix-2 Cooley-Tukey network with one general multiplication
// per butterfly, tab[m + g] = omega_n^brv(m+g) of order n. One thread per
// butterfly; blockDim.x must be a multiple of n/2. Shared: 2*blockDim.x*8.
extern "C" __global__ void goldfhe_small_butterfly(uint64_t* data, int32_t batch, int32_t n,
                                                   const uint64_t* __restrict__ tab) {
    extern __shared__ uint64_t ntt_sm[];
    const int32_t hn = n / 2, per = blockDim.x / hn;
    const int32_t lt = threadIdx.x / hn, q = threadIdx.x % hn;
    uint64_t* a = ntt_sm + lt * n;
    const int32_t logn = 31 - __clz(n);
    for (int64_t first = (int64_t)blockIdx.x * per; first < batch; first += (int64_t)gridDim.x * per) {
        const int64_t tr = first + lt;
        const bool live = lt < per && tr < batch;
        if (live) {
            a[q] = data[tr * n + q];
            a[q + hn] = data[tr * n + q + hn];
        }
        __syncthreads();
        for (int32_t m = 1, h = hn; m < n; m *= 2, h /= 2) {
            if (live) {
                const int32_t grp = q / h, j = q % h, x = 2 * grp * h + j;
                const uint64_t u = a[x], v = gl_mul(a[x + h], tab[m + grp]);
                a[x] = fa_add(u, v);
                a[x + h] = fa_sub(u, v);
            }
            __syncthreads();
        }
        if (live) {
            data[tr * n + ntt_brv(q, logn)] = a[q];
            data[tr * n + ntt_brv(q + hn, logn)] = a[q + hn];
        }
        __syncthreads();
    }
}

#endif // GOLDFHE_NTT_CUH
