#!/bin/bash
# Session 33 run D: the final tree with the new fatbin cfd5bf30... embedded (sources b1f2a7f1...): make gpu-test, then the engine
# benchmark once.
R=$OUT/r; mkdir -p $R
{ nvidia-smi --query-gpu=name,uuid,serial,driver_version,power.limit,compute_cap,temperature.gpu --format=csv; nvcc --version | tail -2; } > $R/device.txt; cat $R/device.txt
cd .gpu && xz -d -f *.xz && chmod +x *.test bench && cd ..
sha256sum kernels/goldfhe.fatbin | tee $R/sums.txt; sh kernels/srchash.sh | tee -a $R/sums.txt; cat kernels/goldfhe.fatbin.sha256 | tee -a $R/sums.txt
s=$(date +%s); make gpu-test > $R/gpu-test.out 2>&1; echo "gpu-test rc=$? $(( $(date +%s)-s )) s" >> $R/gpu-test.out
cp .gpu/logs/*.log $R/; rm -f $R/fault-fatbin.log
cat $R/gpu-test.out
echo "gpu/ subtests passed: $(grep -c -- '--- PASS: .*/gpu' $R/kernels.log); TestGPUMatchesCPU subtests passed: $(grep -c -- '--- PASS: TestGPUMatchesCPU/' $R/bootstrap.log); f256 cases passed: $(grep -c -- '--- PASS: TestBlindRotateWide/gpu/wide_8x8x16_k1_l3_f256' $R/kernels.log)"
grep -E -- '--- FAIL' $R/kernels.log $R/bootstrap.log $R/gpuntt.log | head -30
grep -E -- '--- (PASS|FAIL|SKIP): (TestGPUConcurrentMerged|TestFakeGPUEngine(MergesCalls|MergeStress|SyncErrorOrder|EmptyCall|MergedKeepsNothing)|TestGPUFault)' $R/bootstrap.log $R/kernels.log
.gpu/bench -engine gpu -sets TFHELib128 -variants grouped3 -batches 1,16384,65536 -reps 5 -max-gates 400000 -out $R/bench > $R/bench.log 2>&1; echo "bench rc=$?" >> $R/bench.log
grep -E 'batch +[0-9]|mJ a gate|rc=' $R/bench.log
cd $OUT && tar czf run33d.tgz r && rm -rf r
