#!/bin/bash
# Session 30 run C (experiment, branch psil1-s30): the flat kernel reading psiPow through L1 (-DGOLDFHE_PSI_L1) against
# the same source without the macro, both sm_90-only fatbins built here; bit-exactness of the f256 shapes, then three
# alternated kernel rounds at 3,960 samples with nvidia-smi power.
R=$OUT/r; mkdir -p $R
{ nvidia-smi --query-gpu=name,uuid,serial,driver_version,power.limit,temperature.gpu --format=csv; nvcc --version | tail -1; } > $R/device.txt; cat $R/device.txt
cd .gpu && xz -d -f *.xz && chmod +x *.test && cd ..
s=$(date +%s)
nvcc -fatbin -O3 -std=c++17 -gencode arch=compute_90,code=sm_90 -o .gpu/base.fatbin kernels/goldfhe.cu > $R/build_base.log 2>&1 &
nvcc -fatbin -O3 -std=c++17 -DGOLDFHE_PSI_L1 -gencode arch=compute_90,code=sm_90 -o .gpu/psil1.fatbin kernels/goldfhe.cu > $R/build_psil1.log 2>&1 &
wait; echo "builds $(( $(date +%s)-s )) s: $(ls -la .gpu/*.fatbin | awk '{print $5, $9}' | tr '\n' ' ')"
cd kernels
GOLDFHE_FATBIN=$PWD/../.gpu/psil1.fatbin ../.gpu/kernels.test -test.run '^TestBlindRotateWide$' -test.v > $R/exact.log 2>&1; echo "exact rc=$?"; grep -E -- "--- (PASS|FAIL): TestBlindRotateWide/gpu/wide_8x8x16_k1_l3_f256|^(ok|FAIL|PASS)" $R/exact.log | head -8; grep -c -- "--- PASS.*gpu.*f256" $R/exact.log
for r in 1 2 3; do for v in base psil1; do
  nvidia-smi --query-gpu=timestamp,power.draw,clocks.sm,temperature.gpu --format=csv,noheader -lms 200 > $R/smi_${v}_$r.csv & P=$!
  GOLDFHE_FATBIN=$PWD/../.gpu/$v.fatbin GOLDFHE_BENCH_COUNTS=3960 ../.gpu/kernels.test -test.run '^$' -test.bench "BlindRotate/wide_8x8x16_k1_l3_f256_g3/" -test.benchtime 20x > $R/bench_${v}_$r.log 2>&1
  kill $P; wait $P 2>/dev/null
  echo "round $r $v: $(grep -o '[0-9.]* ns/op' $R/bench_${v}_$r.log) $(awk -F', ' '{gsub(/ W/,"",$2); gsub(/ MHz/,"",$3); if ($2+0 > 350) {n++; s+=$2; c+=$3}} END {if (n) printf "%d samples >350 W, mean %.0f W, %.0f MHz", n, s/n, c/n}' $R/smi_${v}_$r.csv)"
done; done
cd $OUT && tar czf run30c.tgz r && rm -rf r && ls -la
