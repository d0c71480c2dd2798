#!/bin/bash
# Session 29 run B: make gpu-test on the final tree (the fake driver's NTT kernels and the engine's fused and step
# paths on it); CUDA 13.0's cuda.h on every code it documents as needing a relaunch; two engine rounds (TFHELib128 grouped by 3).
R=$OUT/r; mkdir -p $R
{ nvidia-smi --query-gpu=name,uuid,serial,driver_version,power.limit,compute_cap,temperature.gpu --format=csv; nvcc --version | tail -2; } > $R/device.txt; cat $R/device.txt
H=$(dirname $(readlink -f $(command -v nvcc)))/../include/cuda.h
awk '/\/\*\*/{buf=""} {buf=buf"\n"$0} /CUDA_ERROR_[A-Z_]+ *= *[0-9]+/{ if (buf ~ /terminated and relaunched|cannot be used|must be destroyed|inconsistent state/) print buf; buf="" }' $H | grep -E "CUDA_ERROR_[A-Z_]+ *= *[0-9]+" > $R/cudah_sticky.txt; cat $R/cudah_sticky.txt
cd .gpu && xz -d -f *.xz && chmod +x *.test bench && cd ..
s=$(date +%s); make gpu-test > $R/gpu-test.out 2>&1; rc=$?; echo "gpu-test rc=$rc $(( $(date +%s)-s )) s" >> $R/gpu-test.out
cp .gpu/logs/* $R/
cat $R/gpu-test.out
echo "gpu/ subtests passed: $(grep -c -- '--- PASS: .*/gpu/' $R/kernels.log); TestGPUMatchesCPU subtests passed: $(grep -c -- '--- PASS: TestGPUMatchesCPU/' $R/bootstrap.log); fake engine subtests passed: $(grep -c -- '--- PASS: TestFakeGPU' $R/kernels.log)"
grep -E -- '--- FAIL' $R/kernels.log $R/bootstrap.log | head -20
sleep 60  # let the card cool a little after the tests
for i in 1 2; do
  s=$(date +%s); ./.gpu/bench -engine gpu -sets TFHELib128 -variants grouped3 -batches 16384,65536 -reps 5 -max-gates 400000 -out $R/bench$i > $R/ebench$i.log 2>&1; echo "bench round $i rc=$? $(( $(date +%s)-s )) s" >> $R/ebench$i.log
  grep -E 'gates/s|mJ|rc=' $R/ebench$i.log
done
cd $OUT && tar czf run29b.tgz r && rm -rf r && ls -la
