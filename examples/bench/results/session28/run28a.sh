#!/bin/bash
# Session 28 run A: the bench's energy per gate (NVML energy counter), two rounds of TFHELib128 grouped by 3; gpumon's NVML test; make gpu-test (kernels/memory.go's views changed).
R=$OUT/r; mkdir -p $R
{ nvidia-smi --query-gpu=name,driver_version,power.limit,compute_cap,temperature.gpu --format=csv; nvcc --version | tail -2; } > $R/device.txt; cat $R/device.txt
cd .gpu && xz -d -f *.xz && chmod +x *.test bench && cd ..
./.gpu/gpumon.test -test.v -test.count=1 > $R/gpumon.log 2>&1; tail -5 $R/gpumon.log
for i in 1 2; do
  s=$(date +%s); ./.gpu/bench -engine gpu -sets TFHELib128 -variants grouped3 -batches 16384,65536 -reps 5 -max-gates 400000 -out $R/bench$i > $R/ebench$i.log 2>&1; echo "bench round $i rc=$? $(( $(date +%s)-s )) s" >> $R/ebench$i.log
  grep -E 'gates/s|mJ|rc=' $R/ebench$i.log
done
s=$(date +%s); make gpu-test > $R/gpu-test.out 2>&1; rc=$?; echo "gpu-test rc=$rc $(( $(date +%s)-s )) s" >> $R/gpu-test.out
cp .gpu/logs/* $R/
cat $R/gpu-test.out
echo "gpu/ subtests passed: $(grep -c -- '--- PASS: .*/gpu/' $R/kernels.log); TestGPUMatchesCPU subtests passed: $(grep -c -- '--- PASS: TestGPUMatchesCPU/' $R/bootstrap.log)"
grep -E -- '--- (FAIL|PASS): TestLaunchAllocs|--- FAIL' $R/kernels.log $R/bootstrap.log | head
