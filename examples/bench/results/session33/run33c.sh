#!/bin/bash
# Session 33 run C: the split kernel's producer warp synced before each fill (bootstrap_split.cuh) and the key's
# 16-byte alignment checked for every wide-family kernel: make fatbin of the working tree (nvcc -t 0), then
# make gpu-test against that fatbin (GOLDFHE_FATBIN; TestFatbinSourceHash fails by design: the test binaries
# embed the committed fatbin), then the engine benchmark once against it. The new fatbin comes back xz-compressed.
R=$OUT/r; mkdir -p $R
{ nvidia-smi --query-gpu=name,uuid,serial,driver_version,power.limit,compute_cap,temperature.gpu --format=csv; nvcc --version | tail -2; } > $R/device.txt; cat $R/device.txt
cd .gpu && xz -d -f *.xz && chmod +x *.test bench && cd ..
s=$(date +%s); make fatbin NVCC="nvcc -t 0" > $R/fatbin.log 2>&1; echo "fatbin rc=$? $(( $(date +%s)-s )) s" | tee -a $R/fatbin.log
sha256sum kernels/goldfhe.fatbin | tee $R/sums.txt; cat kernels/goldfhe.fatbin.sha256 | tee -a $R/sums.txt
cp kernels/goldfhe.fatbin $OUT/goldfhe.fatbin && xz -T8 -6 $OUT/goldfhe.fatbin
export GOLDFHE_FATBIN=$PWD/kernels/goldfhe.fatbin
s=$(date +%s); make gpu-test > $R/gpu-test.out 2>&1; echo "gpu-test rc=$? $(( $(date +%s)-s )) s" >> $R/gpu-test.out
cp .gpu/logs/*.log $R/; rm -f $R/fault-fatbin.log
cat $R/gpu-test.out
echo "gpu/ subtests passed: $(grep -c -- '--- PASS: .*/gpu' $R/kernels.log); TestGPUMatchesCPU subtests passed: $(grep -c -- '--- PASS: TestGPUMatchesCPU/' $R/bootstrap.log); split cases passed: $(grep -c -- '--- PASS: TestBlindRotateWide/gpu/.*split' $R/kernels.log)"
grep -E -- '^--- FAIL|^    --- FAIL' $R/kernels.log $R/bootstrap.log $R/gpuntt.log | head -30
.gpu/bench -engine gpu -sets TFHELib128 -variants grouped3 -batches 1,16384,65536 -reps 5 -max-gates 400000 -out $R/bench > $R/bench.log 2>&1; echo "bench rc=$?" >> $R/bench.log
grep -E 'batch +[0-9]|mJ a gate|rc=' $R/bench.log
cd $OUT && tar czf run33c.tgz r && rm -rf r
