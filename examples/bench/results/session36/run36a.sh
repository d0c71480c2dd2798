#!/bin/bash
# Session 36 run A (one GPU; asked for an H100): make gpu-test on this session's code, which adds
# the gates package's GPU test (TestGatesGPUMatchCPU: every gate through Evaluator.Batch on the GPU
# engine against the CPU engine, every named set grouped by 1, 2 and 3 and the toy set, batches
# 1 to 10,000).
R=$OUT/r; mkdir -p $R
{ cat .gpu/HEAD.txt; nvidia-smi --query-gpu=index,name,uuid,serial,driver_version,power.limit,compute_cap,temperature.gpu,pci.bus_id --format=csv; nvcc --version | tail -2; nproc; } > $R/device.txt 2>&1; cat $R/device.txt
cd .gpu && xz -d -f *.xz && chmod +x *.test && cd ..
sha256sum kernels/goldfhe.fatbin | tee $R/sums.txt; sh kernels/srchash.sh | tee -a $R/sums.txt; cat kernels/goldfhe.fatbin.sha256 | tee -a $R/sums.txt
s=$(date +%s); timeout 560 make gpu-test > $R/gpu-test.out 2>&1; echo "gpu-test rc=$? $(( $(date +%s)-s )) s" >> $R/gpu-test.out
cp .gpu/logs/*.log $R/; rm -f $R/fault-fatbin.log
cat $R/gpu-test.out
echo "gpu/ subtests passed: $(grep -c -- '--- PASS: .*/gpu' $R/kernels.log); bootstrap TestGPUMatchesCPU subtests passed: $(grep -c -- '--- PASS: TestGPUMatchesCPU/' $R/bootstrap.log); gpuntt TestGPUMatchesCPU subtests passed: $(grep -c -- '--- PASS: TestGPUMatchesCPU/' $R/gpuntt.log); gates TestGatesGPUMatchCPU subtests passed: $(grep -c -- '--- PASS: TestGatesGPUMatchCPU/' $R/gates.log)"
grep -E -- '--- FAIL' $R/*.log | head -30
grep -E -- '--- (PASS|FAIL|SKIP): (TestGatesGPUMatchCPU|TestGPUMatchesCPU|TestGPUFault)' $R/gates.log $R/bootstrap.log | head -40
grep -E 'against|batch [0-9]+:' $R/gates.log | head -80
cd $OUT && tar czf run36a.tgz r && rm -rf r
