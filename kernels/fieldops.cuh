// fieldops.cuh: a kernel that evaluates every primitive of goldilocks.cuh
// on given operands, so a Go test can compare the device arithmetic with the
// CPU's (smallntt, math/big) bit for bit.
#ifndef GOLDFHE_FIELDOPS_CUH
#define GOLDFHE_FIELDOPS_CUH

#include "goldilocks.cuh"

// goldfhe_field_ops: for i < n, with a = a[i], b = b[i], writes
//   out[0n + i] = gl_add(a, b)                  (a, b canonical)
//   out[1n + i] = gl_sub(a, b)                  (a, b canonical)
//   out[2n + i] = gl_mul(a, b)                  (any)
//   out[3n + i] = gl_mul_pow2(a, b % 192)       (any a)
//   out[4n + i] = gl_reduce192(a, b, a ^ b)     (any)
//   out[5n + i] = gl_mul_2_32(a)                (any)
// The number of outputs per element (6) is FieldOpCount in Go. Grid-stride
// loop over i: any 1-D launch covers n.
extern "C" __global__ void goldfhe_field_ops(uint64_t *out, const uint64_t *a, const uint64_t *b,
                                             uint32_t n) {
    const uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const uint64_t x = a[i], y = b[i];
        out[0 * (uint64_t)n + i] = gl_add(x, y);
        out[1 * (uint64_t)n + i] = gl_sub(x, y);
        out[2 * (uint64_t)n + i] = gl_mul(x, y);
        out[3 * (uint64_t)n + i] = gl_mul_pow2(x, (uint32_t)(y % 192));
        out[4 * (uint64_t)n + i] = gl_reduce192(x, y, x ^ y);
        out[5 * (uint64_t)n + i] = gl_mul_2_32(x);
    }
}

#endif // GOLDFHE_FIELDOPS_CUH
