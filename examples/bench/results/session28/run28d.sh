#!/bin/bash
# Session 28 run D: the key loads' L1 eviction priority (-DGOLDFHE_KEY_L1=evict_first / evict_last, sm_90 fatbins built here) against the embedded fatbin: the flat kernel's time (three alternated rounds) and the engine's energy per gate (one round each at 65,536 gates). Everything under $OUT in one tarball.
R=/tmp/r; mkdir -p $R
{ nvidia-smi --query-gpu=name,driver_version,power.limit,compute_cap,temperature.gpu --format=csv; nvcc --version | tail -2; } > $R/device.txt; cat $R/device.txt
cd .gpu && xz -d -f kernels.test.xz bench.xz && chmod +x kernels.test bench && cd ..
s=$(date +%s)
for v in evict_first evict_last; do
  nvcc -fatbin -O3 -std=c++17 -DGOLDFHE_KEY_L1=$v -gencode arch=compute_90,code=sm_90 -o /tmp/$v.fatbin kernels/goldfhe.cu > $R/build_$v.log 2>&1 &
done
wait; echo "builds done $(( $(date +%s)-s )) s"; ls -la /tmp/*.fatbin
cd kernels
for i in 1 2 3; do
  for v in base evict_first evict_last; do
    F=""; [ $v != base ] && F=/tmp/$v.fatbin
    echo "round $i $v: $(GOLDFHE_FATBIN=$F GOLDFHE_BENCH_COUNTS=3960 ../.gpu/kernels.test -test.run '^$' -test.bench 'BlindRotate/wide_8x8x16_k1_l3_f256_g3/' -test.benchtime 20x 2>&1 | grep -E 'ns/op|FAIL')" | tee -a $R/kbench.log
  done
done
cd ..
for v in base evict_first evict_last; do
  F=""; [ $v != base ] && F=/tmp/$v.fatbin
  GOLDFHE_FATBIN=$F ./.gpu/bench -engine gpu -sets TFHELib128 -variants grouped3 -batches 65536 -reps 5 -max-gates 400000 -out $R/e_$v > $R/ebench_$v.log 2>&1
  echo "$v: $(grep -E 'batch  65536' $R/ebench_$v.log | sed 's/.*batch/batch/')"; grep -oE '[0-9.]+ W \(at most.*' $R/ebench_$v.log | head -1
done
tar czf $OUT/run28d.tgz -C /tmp r
