// Host stand-in for the part of CUDA's cooperative_groups that
// bootstrap_cluster.cuh uses (this_cluster, block_rank, map_shared_rank,
// sync), for testdata/blindrotate_model.cpp only: the model runs the K1
// blocks of a cluster as threads, each block's shared memory a host array.
#pragma once
#include <barrier>
#include <cstddef>
#include <cstdint>

struct hm_cluster_ctx {
    std::barrier<>* bar;  // every thread of the cluster
    uint64_t** smem;      // each block's shared memory
};
extern thread_local hm_cluster_ctx* hm_cluster;
extern thread_local int hm_rank;
extern thread_local uint64_t* hm_smem_base;

namespace cooperative_groups {
struct cluster_group {
    unsigned block_rank() const { return (unsigned)hm_rank; }
    // The address p of this block's shared memory in block rank's.
    template <class T>
    T* map_shared_rank(T* p, int rank) const {
        const std::ptrdiff_t off = reinterpret_cast<const char*>(p) - reinterpret_cast<const char*>(hm_smem_base);
        return reinterpret_cast<T*>(reinterpret_cast<char*>(hm_cluster->smem[rank]) + off);
    }
    void sync() const { hm_cluster->bar->arrive_and_wait(); }
};
inline cluster_group this_cluster() { return cluster_group{}; }
}  // namespace cooperative_groups
