#!/bin/bash
# Session 29 run A: make gpu-test on the tree with the new sticky codes (kernels/errors.go, driver.go) and the
# fake-driver engine tests; CUDA 13's cuda.h on the codes now treated as sticky; one engine round (TFHELib128 grouped by 3).
R=$OUT/r; mkdir -p $R
{ nvidia-smi --query-gpu=name,driver_version,power.limit,compute_cap,temperature.gpu --format=csv; nvcc --version | tail -2; } > $R/device.txt; cat $R/device.txt
H=$(dirname $(readlink -f $(command -v nvcc)))/../include/cuda.h
for c in ECC_UNCORRECTABLE NVLINK_UNCORRECTABLE CONTAINED CONTEXT_IS_DESTROYED TENSOR_MEMORY_LEAK MPS_CLIENT_TERMINATED EXTERNAL_DEVICE UNKNOWN LAUNCH_OUT_OF_RESOURCES; do
  echo "== CUDA_ERROR_$c"; awk -v c="CUDA_ERROR_$c " 'index($0,"/**"){buf=""} {buf=buf"\n"$0} index($0,c) && index($0,"="){print buf; exit}' $H
done > $R/cudah.txt 2>&1; grep -c "==" $R/cudah.txt
cd .gpu && xz -d -f *.xz && chmod +x *.test bench && cd ..
s=$(date +%s); make gpu-test > $R/gpu-test.out 2>&1; rc=$?; echo "gpu-test rc=$rc $(( $(date +%s)-s )) s" >> $R/gpu-test.out
cp .gpu/logs/* $R/
cat $R/gpu-test.out
echo "gpu/ subtests passed: $(grep -c -- '--- PASS: .*/gpu/' $R/kernels.log); TestGPUMatchesCPU subtests passed: $(grep -c -- '--- PASS: TestGPUMatchesCPU/' $R/bootstrap.log)"
grep -E -- '--- (FAIL|PASS): (TestFakeGPUEngine|TestDeviceErrorsAreSticky|TestDriverInitError|TestGPUFault)|--- FAIL' $R/kernels.log $R/bootstrap.log | head -20
s=$(date +%s); ./.gpu/bench -engine gpu -sets TFHELib128 -variants grouped3 -batches 16384,65536 -reps 5 -max-gates 400000 -out $R/bench1 > $R/ebench1.log 2>&1; echo "bench rc=$? $(( $(date +%s)-s )) s" >> $R/ebench1.log
grep -E 'gates/s|mJ|rc=' $R/ebench1.log
cd $OUT && tar czf run29a.tgz r && rm -rf r && ls -la
