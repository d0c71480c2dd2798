#!/bin/bash
# Session 30 run A: the kernels as compiled for an older GPU. A fatbin of compute_80 PTX only (no SASS): the driver
# compiles it for the H100, with __CUDA_ARCH__ = 800, so no cluster or split kernels and no sm_90 paths. Every GPU test
# against it (make gpu-test with GOLDFHE_FATBIN, no fault fatbin), the committed fatbin's per-arch resource usage, and
# a short bench of both fatbins (TFHELib128, default and grouped3, batches 1 and 16384).
R=$OUT/r; mkdir -p $R
{ nvidia-smi --query-gpu=name,uuid,serial,driver_version,power.limit,compute_cap,temperature.gpu --format=csv; nvcc --version | tail -2; } > $R/device.txt; cat $R/device.txt
cd .gpu && xz -d -f *.xz && chmod +x *.test bench && cd ..
s=$(date +%s); nvcc -fatbin -O3 -std=c++17 -gencode arch=compute_80,code=compute_80 -o .gpu/c80.fatbin kernels/goldfhe.cu > $R/c80-build.log 2>&1; echo "c80 build rc=$? $(( $(date +%s)-s )) s, $(stat -c %s .gpu/c80.fatbin) bytes" | tee -a $R/c80-build.log
cuobjdump -res-usage kernels/goldfhe.fatbin > $R/resusage.txt 2>&1; echo "res-usage rc=$?"
awk '/arch = /{a=$3} /Function/{f=$2} /REG:/{n[a]++; if (match($0,/STACK:[0-9]+/)) { st=substr($0,RSTART+6,RLENGTH-6); if (st+0>0) {s[a]++} } } END{for (k in n) print k, n[k], "functions,", s[k]+0, "with a stack frame"}' $R/resusage.txt
export GOLDFHE_FATBIN=$PWD/.gpu/c80.fatbin CUDA_CACHE_PATH=$PWD/.gpu/jit CUDA_CACHE_MAXSIZE=4294967296
s=$(date +%s); .gpu/kernels.test -test.run '^TestBadLaunch$' -test.v > $R/jit-first.log 2>&1; echo "first load (JIT) rc=$? $(( $(date +%s)-s )) s" | tee -a $R/jit-first.log
s=$(date +%s); make gpu-test NVCC=/nonexistent > $R/gpu-test.out 2>&1; rc=$?; echo "gpu-test (c80) rc=$rc $(( $(date +%s)-s )) s" >> $R/gpu-test.out
cp .gpu/logs/* $R/
cat $R/gpu-test.out
echo "gpu/ subtests passed: $(grep -c -- '--- PASS: .*/gpu' $R/kernels.log); TestGPUMatchesCPU subtests passed: $(grep -c -- '--- PASS: TestGPUMatchesCPU/' $R/bootstrap.log)"
grep -E -- '--- FAIL' $R/kernels.log $R/bootstrap.log $R/gpuntt.log | head -30
grep -m3 -E 'engine|gpu/' $R/bootstrap.log | head -5
s=$(date +%s); ./.gpu/bench -engine gpu -sets TFHELib128 -variants default,grouped3 -batches 1,16384 -reps 3 -out $R/bench-c80 > $R/bench-c80.log 2>&1; echo "bench c80 rc=$? $(( $(date +%s)-s )) s" >> $R/bench-c80.log
unset GOLDFHE_FATBIN
s=$(date +%s); ./.gpu/bench -engine gpu -sets TFHELib128 -variants default,grouped3 -batches 1,16384 -reps 3 -out $R/bench-emb > $R/bench-emb.log 2>&1; echo "bench embedded rc=$? $(( $(date +%s)-s )) s" >> $R/bench-emb.log
grep -E 'gates/s|ms|rc=|engine' $R/bench-c80.log $R/bench-emb.log | head -40
cd $OUT && tar czf run30a.tgz r && rm -rf r && ls -la
