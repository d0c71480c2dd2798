// pointwise.cuh: pointwise products of batched Goldilocks vectors, the
// NTT-domain products and multiply-accumulates of the external product
// (DESIGN.md sections 3 and 6).
//
// Layout shared by the kernels below: `count` vectors of `n` elements; vector
// v of operand X starts at element v * sX of X's buffer. A stride of 0 makes
// every vector the same (a broadcast operand, e.g. one key row for a batch).
// Launch: blockDim.x threads per block, gridDim.x * blockDim.x >= n,
// gridDim.y <= count (blocks loop over the vectors in steps of gridDim.y).
// The output may be the same memory as an input with the same stride
// (in place); no other overlap is allowed. The Go wrappers (pointwise.go)
// check all of this.
#ifndef GOLDFHE_POINTWISE_CUH
#define GOLDFHE_POINTWISE_CUH

#include "goldilocks.cuh"

// goldfhe_mul: dst = a * b. a, b any; dst canonical.
extern "C" __global__ void goldfhe_mul(uint64_t *dst, const uint64_t *a, const uint64_t *b,
                                       uint32_t n, uint32_t count,
                                       uint64_t sdst, uint64_t sa, uint64_t sb) {
    const uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) {
        return;
    }
    for (uint64_t v = blockIdx.y; v < count; v += gridDim.y) {
        dst[v * sdst + i] = gl_mul(a[v * sa + i], b[v * sb + i]);
    }
}

// goldfhe_muladd: acc = acc + a * b. acc canonical; a, b any; acc stays
// canonical.
extern "C" __global__ void goldfhe_muladd(uint64_t *acc, const uint64_t *a, const uint64_t *b,
                                          uint32_t n, uint32_t count,
                                          uint64_t sacc, uint64_t sa, uint64_t sb) {
    const uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) {
        return;
    }
    for (uint64_t v = blockIdx.y; v < count; v += gridDim.y) {
        uint64_t *p = acc + v * sacc + i;
        *p = gl_add(*p, gl_mul(a[v * sa + i], b[v * sb + i]));
    }
}

#endif // GOLDFHE_POINTWISE_CUH
