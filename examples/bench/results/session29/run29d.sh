#!/bin/bash
# Session 29 run D: make gpu-test on the final tree (upload after a device fault; TestFakeGPUEngineNewFails).
R=$OUT/r; mkdir -p $R
{ nvidia-smi --query-gpu=name,uuid,serial,driver_version,power.limit,compute_cap,temperature.gpu --format=csv; nvcc --version | tail -2; } > $R/device.txt; cat $R/device.txt
cd .gpu && xz -d -f *.xz && chmod +x *.test && cd ..
s=$(date +%s); make gpu-test > $R/gpu-test.out 2>&1; rc=$?; echo "gpu-test rc=$rc $(( $(date +%s)-s )) s" >> $R/gpu-test.out
cp .gpu/logs/* $R/
cat $R/gpu-test.out
echo "gpu/ subtests passed: $(grep -c -- '--- PASS: .*/gpu/' $R/kernels.log); TestGPUMatchesCPU subtests passed: $(grep -c -- '--- PASS: TestGPUMatchesCPU/' $R/bootstrap.log); fake engine subtests passed: $(grep -c -- '--- PASS: TestFakeGPU' $R/kernels.log)"
grep -E -- '--- FAIL' $R/kernels.log $R/bootstrap.log | head -20
cd $OUT && tar czf run29d.tgz r && rm -rf r && ls -la
