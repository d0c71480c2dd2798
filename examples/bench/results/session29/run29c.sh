#!/bin/bash
# Session 29 run C (experiment, branch flatg3-s29): three free-running samples a block of 768 threads sharing psiPow
# (goldfhe_bs_wide_8x8x16_k1_l3_f768_g3) against the f256 kernel, both from one sm_90 fatbin built here.
R=$OUT/r; mkdir -p $R
{ nvidia-smi --query-gpu=name,uuid,serial,driver_version,power.limit,temperature.gpu --format=csv; nvcc --version | tail -1; } > $R/device.txt; cat $R/device.txt
cd .gpu && xz -d -f *.xz && chmod +x *.test && cd ..
s=$(date +%s); nvcc -fatbin -O3 -std=c++17 -gencode arch=compute_90,code=sm_90 -Xptxas -v -o .gpu/x.fatbin kernels/goldfhe.cu > $R/build.log 2>&1; echo "build rc=$? $(( $(date +%s)-s )) s"
grep -A3 "entry function 'goldfhe_bs_wide_8x8x16_k1_l3_f[27]" $R/build.log | grep -E "entry|spill|Used"
F=$PWD/.gpu/x.fatbin
cd kernels
GOLDFHE_FATBIN=$F ../.gpu/kernels.test -test.run '^TestBlindRotateWide$' -test.v > $R/exact.log 2>&1; echo "exact rc=$?"; grep -E -- "--- (PASS|FAIL).*(f768|f256)|^(ok|FAIL|PASS)" $R/exact.log | head -20; grep -c -- "--- PASS.*gpu.*f768" $R/exact.log
for r in 1 2 3; do for k in 256 768; do
  nvidia-smi --query-gpu=timestamp,power.draw,clocks.sm,temperature.gpu --format=csv,noheader -lms 200 > $R/smi_${k}_$r.csv & P=$!
  GOLDFHE_FATBIN=$F GOLDFHE_BENCH_COUNTS=3960 ../.gpu/kernels.test -test.run '^$' -test.bench "BlindRotate/wide_8x8x16_k1_l3_f${k}_g3/" -test.benchtime 20x > $R/bench_${k}_$r.log 2>&1
  kill $P; wait $P 2>/dev/null
  echo "round $r f$k: $(grep -o '[0-9.]* ns/op' $R/bench_${k}_$r.log) $(awk -F', ' '{gsub(/ W/,"",$2); if ($2+0 > 350) {n++; s+=$2}} END {if (n) printf "%d samples >350 W, mean %.0f W", n, s/n}' $R/smi_${k}_$r.csv)"
done; done
cd $OUT && tar czf run29c.tgz r && rm -rf r && ls -la
