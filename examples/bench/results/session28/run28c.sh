#!/bin/bash
# Session 28 run C: key loads that do not allocate in L1 (-DGOLDFHE_KEY_NOALLOC, sm_90 fatbin built here) against the embedded fatbin: the flat kernel's time (three alternated rounds, nvidia-smi power beside it) and the engine's energy per gate (two alternated rounds at 65,536 gates).
R=$OUT/r; mkdir -p $R
{ nvidia-smi --query-gpu=name,driver_version,power.limit,compute_cap,temperature.gpu --format=csv; nvcc --version | tail -2; } > $R/device.txt; cat $R/device.txt
cd .gpu && xz -d -f kernels.test.xz bench.xz && chmod +x kernels.test bench && cd ..
s=$(date +%s); nvcc -fatbin -O3 -std=c++17 -DGOLDFHE_KEY_NOALLOC -gencode arch=compute_90,code=sm_90 -o /tmp/na.fatbin kernels/goldfhe.cu > $R/build.log 2>&1; echo "build rc=$? $(( $(date +%s)-s )) s" | tee -a $R/build.log
NA=/tmp/na.fatbin
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_event_reasons.active --format=csv -lms 100 > $R/smi.csv &
SMI=$!
cd kernels
for i in 1 2 3; do
  for v in base na; do
    F=""; [ $v = na ] && F=$NA
    echo "round $i $v start $(date +%H:%M:%S.%N)" >> $R/kbench.log
    GOLDFHE_FATBIN=$F GOLDFHE_BENCH_COUNTS=3960 ../.gpu/kernels.test -test.run '^$' -test.bench 'BlindRotate/wide_8x8x16_k1_l3_f256_g3/' -test.benchtime 20x 2>&1 | grep -E 'ns/op|FAIL|fatbin' >> $R/kbench.log
    echo "round $i $v end $(date +%H:%M:%S.%N)" >> $R/kbench.log
  done
done
cd ..
cat $R/kbench.log
for i in 1 2; do
  for v in base na; do
    F=""; [ $v = na ] && F=$NA
    GOLDFHE_FATBIN=$F ./.gpu/bench -engine gpu -sets TFHELib128 -variants grouped3 -batches 65536 -reps 5 -max-gates 400000 -out $R/e_${v}_$i > $R/ebench_${v}_$i.log 2>&1
    echo "$v $i: $(grep -E 'batch  65536' $R/ebench_${v}_$i.log | sed 's/.*batch/batch/')"; grep -oE '[0-9.]+ W \(at most.*' $R/ebench_${v}_$i.log | head -1
    cp $R/e_${v}_$i/results.csv $R/e_${v}_${i}_results.csv; rm -rf $R/e_${v}_$i
  done
done
kill $SMI
