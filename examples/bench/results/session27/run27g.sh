#!/bin/bash
# Session 27 run G (final tree): the committed fatbin rebuilt from the final sources (make fatbin's command, nvcc -t 0, into /tmp) and compared with the committed one and its sources hash; make gpu-test beside it.
R=$OUT/r; mkdir -p $R
{ nvidia-smi --query-gpu=name,driver_version,power.limit,compute_cap --format=csv; nvcc --version | tail -2; } > $R/device.txt; cat $R/device.txt
cd .gpu && xz -d -f *.xz && chmod +x *.test && cd ..
( s=$(date +%s); nvcc -t 0 -fatbin -O3 -std=c++17 -gencode arch=compute_80,code=sm_80 -gencode arch=compute_86,code=sm_86 -gencode arch=compute_89,code=sm_89 -gencode 'arch=compute_90,code=[sm_90,compute_90]' -o /tmp/rebuilt.fatbin kernels/goldfhe.cu > $R/rebuild.log 2>&1; echo "rebuild rc=$? $(( $(date +%s)-s )) s" >> $R/rebuild.log
  sha256sum /tmp/rebuilt.fatbin kernels/goldfhe.fatbin >> $R/rebuild.log
  echo "sources hash now: $(sh kernels/srchash.sh); committed: $(cat kernels/goldfhe.fatbin.sha256)" >> $R/rebuild.log ) &
RP=$!
s=$(date +%s); make gpu-test > $R/gpu-test.out 2>&1; rc=$?; echo "gpu-test rc=$rc $(( $(date +%s)-s )) s" >> $R/gpu-test.out
cp .gpu/logs/* $R/
make fault-fatbin >> $R/gpu-test.out 2>&1   # up to date now: nothing to do
wait $RP
cat $R/gpu-test.out; tail -3 $R/rebuild.log
echo "gpu/ subtests passed: $(grep -c -- '--- PASS: .*/gpu/' $R/kernels.log); TestGPUMatchesCPU subtests passed: $(grep -c -- '--- PASS: TestGPUMatchesCPU/' $R/bootstrap.log)"
grep -E -- '--- (PASS|FAIL): TestGPUFault|after the fault,|written before' $R/bootstrap.log
