#!/bin/bash
# Session 27 run B: TestGPUFault after its recovery check became the fallback check; the trapping
# fatbin built here (make fault-fatbin's command). Bootstrap GPU tests in short mode while it builds.
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,power.limit --format=csv > $R/gpu.txt; cat $R/gpu.txt
cd .gpu && xz -d -f *.xz && chmod +x *.test && cd ..
( s=$(date +%s); nvcc -fatbin -O3 -std=c++17 -DGOLDFHE_FAULT_AFTER=3 -gencode arch=compute_90,code=sm_90 -o .gpu/fault.fatbin kernels/goldfhe.cu > $R/fault_nvcc.log 2>&1; echo "fault fatbin rc=$? $(( $(date +%s)-s )) s" >> $R/fault_nvcc.log ) &
FP=$!
.gpu/bootstrap.test -test.short -test.run 'GPU|NewSelection' -test.v > $R/bootstrap_gpu_short.log 2>&1; echo "bootstrap GPU short rc=$?"
wait $FP; tail -1 $R/fault_nvcc.log
GOLDFHE_FAULT_FATBIN=$PWD/.gpu/fault.fatbin .gpu/bootstrap.test -test.run GPUFault -test.v > $R/fault.log 2>&1; echo "fault rc=$?"
echo "short: $(grep -c '^--- PASS' $R/bootstrap_gpu_short.log) pass, $(grep -c -- '--- FAIL' $R/bootstrap_gpu_short.log) fail, $(grep -c -- '--- SKIP' $R/bootstrap_gpu_short.log) skip"
grep -E -- '--- (PASS|FAIL|SKIP)|FAULT-HANDLED|engine_gpu_fault_test' $R/fault.log | head -40
tar -C $OUT -cJf $OUT/x.tar.xz r
