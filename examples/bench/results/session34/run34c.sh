#!/bin/bash
# Session 34 run C (two GPUs of one host): make gpu-test on the final tree (every kernels, gpuntt and
# bootstrap GPU test, the bootstrap ones in full mode, the fault test with a fault fatbin built here),
# which on a host of two GPUs includes TestGPUMulti with its batch of 40,000.
R=$OUT/r; mkdir -p $R
{ nvidia-smi --query-gpu=index,name,uuid,serial,driver_version,power.limit,compute_cap,temperature.gpu,pci.bus_id --format=csv; nvcc --version | tail -2; nproc; } > $R/device.txt 2>&1; cat $R/device.txt
cd .gpu && xz -d -f *.xz && chmod +x *.test && cd ..
sha256sum kernels/goldfhe.fatbin | tee $R/sums.txt; sh kernels/srchash.sh | tee -a $R/sums.txt; cat kernels/goldfhe.fatbin.sha256 | tee -a $R/sums.txt
s=$(date +%s); timeout 560 make gpu-test > $R/gpu-test.out 2>&1; echo "gpu-test rc=$? $(( $(date +%s)-s )) s" >> $R/gpu-test.out
cp .gpu/logs/*.log $R/; rm -f $R/fault-fatbin.log
cat $R/gpu-test.out
echo "gpu/ subtests passed: $(grep -c -- '--- PASS: .*/gpu' $R/kernels.log); TestGPUMatchesCPU subtests passed: $(grep -c -- '--- PASS: TestGPUMatchesCPU/' $R/bootstrap.log)"
grep -E -- '--- FAIL' $R/kernels.log $R/bootstrap.log $R/gpuntt.log | head -30
grep -E -- '--- (PASS|FAIL|SKIP): (TestGPUMulti|TestGPUConcurrentMerged|TestFakeGPUEngineMulti|TestGPUFault|TestDevices)' $R/bootstrap.log $R/kernels.log
grep -E 'batch [0-9]+: Multi' $R/bootstrap.log | head -20
cd $OUT && tar czf run34c.tgz r && rm -rf r
