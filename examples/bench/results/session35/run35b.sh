#!/bin/bash
# Session 35 run B (one GPU; asked for an H100): make gpu-test on this session's code (gpuntt's
# Transformer reducing words >= p and running plans without a GPU kernel as gpuntt.DefaultPlan,
# TestGPUMatchesCPU over all 175 factorisations, bootstrap's default plan from gpuntt), then bench
# (TFHELib128 grouped by 3) at 1, 16,384 and 65,536 gates.
R=$OUT/r; mkdir -p $R
{ cat .gpu/HEAD.txt; nvidia-smi --query-gpu=index,name,uuid,serial,driver_version,power.limit,compute_cap,temperature.gpu,pci.bus_id --format=csv; nvcc --version | tail -2; nproc; } > $R/device.txt 2>&1; cat $R/device.txt
cd .gpu && xz -d -f *.xz && chmod +x *.test bench && cd ..
sha256sum kernels/goldfhe.fatbin | tee $R/sums.txt; sh kernels/srchash.sh | tee -a $R/sums.txt; cat kernels/goldfhe.fatbin.sha256 | tee -a $R/sums.txt
s=$(date +%s); timeout 420 make gpu-test > $R/gpu-test.out 2>&1; echo "gpu-test rc=$? $(( $(date +%s)-s )) s" >> $R/gpu-test.out
cp .gpu/logs/*.log $R/; rm -f $R/fault-fatbin.log
cat $R/gpu-test.out
echo "gpu/ subtests passed: $(grep -c -- '--- PASS: .*/gpu' $R/kernels.log); TestGPUMatchesCPU subtests passed: $(grep -c -- '--- PASS: TestGPUMatchesCPU/' $R/bootstrap.log); gpuntt TestGPUMatchesCPU subtests passed: $(grep -c -- '--- PASS: TestGPUMatchesCPU/' $R/gpuntt.log), failed: $(grep -c -- '--- FAIL: TestGPUMatchesCPU/' $R/gpuntt.log)"
grep -E -- '--- FAIL' $R/kernels.log $R/bootstrap.log $R/gpuntt.log | head -30
grep -E -- '--- (PASS|FAIL|SKIP): (TestTransformerMatchesCPU|TestGPUMatchesCPU|TestGPUFault|TestFakeTransformer|TestFakeGPUEngineCircuits)' $R/gpuntt.log $R/bootstrap.log $R/kernels.log
grep -E 'transformer: ' $R/gpuntt.log | sort | uniq -c | head
s=$(date +%s); timeout 150 .gpu/bench -engine gpu -sets TFHELib128 -variants grouped3 -batches 1,16384,65536 -reps 5 -max-gates 400000 -out $R/bench1 > $R/bench1.log 2>&1; echo "bench rc=$? $(( $(date +%s)-s )) s" | tee -a $R/bench1.log
grep -E 'batch +[0-9]|rc=|mJ' $R/bench1.log | head -12
cd $OUT && tar czf run35b.tgz r && rm -rf r
