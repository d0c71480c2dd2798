// pipes.cu: issue rate of the integer instructions the blind rotation is
// made of, on the GPU it runs on (kernels/NOTES.md, session 11). Each
// thread runs 8 independent chains of one instruction, with enough warps
// to fill every scheduler; the figure is warp instructions per cycle per
// SM at the device's maximum clock (4 = one per scheduler per cycle). A
// chain's other instructions (register moves the compiler adds) are
// counted in its time, so a figure is a lower bound of the rate.
//   nvcc -O3 -arch=sm_90 -o /tmp/pipes kernels/testdata/pipes.cu && /tmp/pipes
// On an H100 80GB HBM3 (1980 MHz, 2026-11-25): mad.lo.u32 (IMAD) 1.90,
// add.u32 (IADD3, which ptxas splits between the ALU and the FMA pipe)
// 3.30, mad.wide.u32 (IMAD.WIDE) 0.746, mad.hi.u32 (IMAD.HI) 0.804: the
// wide and high multiplies are quarter rate, IMAD half rate.
#include <cstdint>
#include <cstdio>

template <int OP>
__global__ void chains(uint32_t* out, uint32_t seed, int iters) {
    uint32_t a[8], b[8];
    uint64_t w[8];
    for (int i = 0; i < 8; i++) {
        a[i] = seed + threadIdx.x * 7 + i;
        b[i] = seed ^ (i * 0x9E37);
        w[i] = a[i];
    }
    for (int it = 0; it < iters; it++) {
#pragma unroll
        for (int i = 0; i < 8; i++) {
            // Each step depends on the last, so that no compiler folds the loop.
            if (OP == 0) asm volatile("{.reg .u32 l, h; mov.b64 {l, h}, %0; mad.wide.u32 %0, l, h, %0;}" : "+l"(w[i]));
            if (OP == 1) asm volatile("mad.lo.u32 %0, %0, %0, %1;" : "+r"(a[i]) : "r"(b[i]));
            if (OP == 2) asm volatile("add.u32 %0, %0, %1;\n\tadd.u32 %1, %1, %0;" : "+r"(a[i]), "+r"(b[i]));
            if (OP == 3) asm volatile("mad.hi.u32 %0, %0, %0, %1;" : "+r"(a[i]) : "r"(b[i]));
        }
    }
    uint32_t s = 0;
    for (int i = 0; i < 8; i++) s += a[i] + b[i] + (uint32_t)w[i] + (uint32_t)(w[i] >> 32);
    if (s == 0x12345678) out[0] = s;  // never, but the compiler cannot know
}

template <int OP>
static float timeit(uint32_t* out, int blocks, int threads, int iters) {
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    float ms = 0;
    for (int rep = 0; rep < 2; rep++) {  // the first is a warm-up
        cudaEventRecord(e0);
        chains<OP><<<blocks, threads>>>(out, 1, iters);
        cudaEventRecord(e1);
        cudaEventSynchronize(e1);
        cudaEventElapsedTime(&ms, e0, e1);
    }
    return ms;
}

int main() {
    cudaDeviceProp p;
    if (cudaGetDeviceProperties(&p, 0) != cudaSuccess) {
        fprintf(stderr, "pipes: no CUDA device\n");
        return 1;
    }
    int khz = 0;
    cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0);
    uint32_t* out;
    cudaMalloc(&out, 4);
    const int iters = 4096, blocks = p.multiProcessorCount * 4, threads = 512;
    const char* names[] = {"mad.wide.u32 (IMAD.WIDE)", "mad.lo.u32 (IMAD)", "add.u32 (IADD3)", "mad.hi.u32 (IMAD.HI)"};
    float ms[4] = {timeit<0>(out, blocks, threads, iters), timeit<1>(out, blocks, threads, iters),
                   timeit<2>(out, blocks, threads, iters), timeit<3>(out, blocks, threads, iters)};
    printf("%s, %d SMs, %d MHz\n", p.name, p.multiProcessorCount, khz / 1000);
    for (int op = 0; op < 4; op++) {
        const double perSM = (double)blocks * threads / 32 * iters * 8 * (op == 2 ? 2 : 1) / p.multiProcessorCount;
        printf("%-26s %.3f ms, %.3f warp instructions per cycle per SM\n", names[op], ms[op],
               perSM / (ms[op] * 1e-3 * khz * 1e3));
    }
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
