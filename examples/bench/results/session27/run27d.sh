#!/bin/bash
# Session 27 run D (run C's machine): the engine on main (embedded fatbin 90b6481b...), TFHELib128 grouped by 3, two rounds, with nvidia-smi.
R=$OUT/r; mkdir -p $R
{ nvidia-smi --query-gpu=name,driver_version,power.limit --format=csv; nvcc --version | tail -2; } > $R/gpu.txt; cat $R/gpu.txt
cd .gpu && xz -d -f *.xz && chmod +x bench && cd ..
sha256sum kernels/goldfhe.fatbin | tee $R/fatbin.sha256
nvidia-smi --query-gpu=timestamp,power.draw,clocks.sm,clocks_throttle_reasons.sw_power_cap,temperature.gpu --format=csv -lms 250 > $R/smi.csv &
SMI=$!
for round in 1 2; do
  echo "== engine round $round $(date +%T.%N)" >> $R/ebench.log
  .gpu/bench -engine gpu -sets TFHELib128 -variants grouped3 -batches 16384,65536 -reps 5 -max-gates 400000 >> $R/ebench.log 2>&1
done
kill $SMI
grep -E "^==|16384|65536|MHz" $R/ebench.log | head -30
tar -C $OUT -cJf $OUT/x.tar.xz r
