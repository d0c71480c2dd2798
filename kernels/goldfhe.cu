// goldfhe.cu: the one translation unit compiled into goldfhe.fatbin
// (`make fatbin`: SASS for sm_80, sm_86, sm_89, sm_90 and PTX for
// compute_90). Each kernel family lives in its own .cuh and is included
// here; every __global__ is extern "C" so the Go side finds it by its plain
// name, and has exactly one typed Go wrapper in this package.
//
// Changing any .cu/.cuh file here changes the source hash recorded in
// goldfhe.fatbin.sha256: rebuild the fatbin (make fatbin) and commit both.
#include "goldilocks.cuh"
#include "fieldops.cuh"
#include "pointwise.cuh"
#include "ntt.cuh"
#include "ntt_hybrid.cuh"
#include "bootstrap.cuh"
#include "bootstrap_fused.cuh"
#include "bootstrap_cluster.cuh"
#include "bootstrap_split.cuh"
