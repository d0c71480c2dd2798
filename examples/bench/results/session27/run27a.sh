#!/bin/bash
# Session 27 run A: the fault hook (kernels/bootstrap.cuh GOLDFHE_FAULT_POINT). Builds the trapping
# fatbin (sm_90) and, beside it, the committed fatbin's rebuild from the changed sources (byte identity);
# runs every kernels GPU test, gpuntt, the bootstrap GPU tests in full mode with TestGPUFault.
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,power.limit --format=csv > $R/gpu.txt; cat $R/gpu.txt; nvcc --version | tail -2 >> $R/gpu.txt
cd .gpu && xz -d -f *.xz && chmod +x *.test && cd ..
( s=$(date +%s); nvcc -fatbin -O3 -std=c++17 -DGOLDFHE_FAULT_AFTER=3 -gencode arch=compute_90,code=sm_90 -o .gpu/fault.fatbin kernels/goldfhe.cu > $R/fault_nvcc.log 2>&1; echo "fault fatbin rc=$? $(( $(date +%s)-s )) s" >> $R/fault_nvcc.log ) &
FP=$!
( s=$(date +%s); nvcc -t 0 -fatbin -O3 -std=c++17 -gencode arch=compute_80,code=sm_80 -gencode arch=compute_86,code=sm_86 -gencode arch=compute_89,code=sm_89 -gencode 'arch=compute_90,code=[sm_90,compute_90]' -o /tmp/rebuilt.fatbin kernels/goldfhe.cu > $R/rebuild.log 2>&1; echo "rebuild rc=$? $(( $(date +%s)-s )) s" >> $R/rebuild.log; sha256sum /tmp/rebuilt.fatbin kernels/goldfhe.fatbin >> $R/rebuild.log ) &
RP=$!
(cd kernels && ../.gpu/kernels.test -test.v) > $R/kernels.log 2>&1; echo "kernels rc=$?"
.gpu/gpuntt.test > $R/gpuntt.log 2>&1; echo "gpuntt rc=$?"
wait $FP; cat $R/fault_nvcc.log | tail -2
GOLDFHE_FAULT_FATBIN=$PWD/.gpu/fault.fatbin .gpu/bootstrap.test -test.run GPU -test.v > $R/bootstrap_gpu_full.log 2>&1; echo "bootstrap GPU rc=$?"
wait $RP; cat $R/rebuild.log | tail -3
for f in kernels bootstrap_gpu_full; do echo "$f: $(grep -c '^--- PASS' $R/$f.log) pass, $(grep -c -- '--- FAIL' $R/$f.log) fail; gpu/ subtests passed: $(grep -c -- '--- PASS: .*/gpu/' $R/$f.log); TestGPUMatchesCPU subtests passed: $(grep -c -- '--- PASS: TestGPUMatchesCPU/' $R/$f.log)"; done
grep -E -- '--- (PASS|FAIL|SKIP): TestGPUFault|FAULT-HANDLED|faulting call|written before|after the fault|new engine' $R/bootstrap_gpu_full.log | head -30
tar -C $OUT -cJf $OUT/x.tar.xz r
