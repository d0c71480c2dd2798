#!/bin/bash
# Session 32 run A: the flat kernel's first step of one digit row (bsw_run_flat's first1).
# make fatbin of the working tree; its bit-exact tests (kernels TestBlindRotateWide, bootstrap TestGPUMatchesCPU in
# full mode, both against the new fatbin); then the committed fatbin (old) against the new one, alternated:
# the f256_g3 kernel at 3,960 samples (3 rounds) and the engine (TFHELib128 grouped by 3, 2 rounds).
R=$OUT/r; mkdir -p $R
{ nvidia-smi --query-gpu=name,uuid,serial,driver_version,power.limit,compute_cap,temperature.gpu --format=csv; nvcc --version | tail -2; } > $R/device.txt; cat $R/device.txt
cd .gpu && xz -d -f *.xz && chmod +x *.test bench && cd ..
cp kernels/goldfhe.fatbin .gpu/old.fatbin
s=$(date +%s); make fatbin NVCC="nvcc -t 0" > $R/fatbin.log 2>&1; echo "make fatbin rc=$? $(( $(date +%s)-s )) s" | tee -a $R/fatbin.log
cp kernels/goldfhe.fatbin kernels/goldfhe.fatbin.sha256 $OUT/
sha256sum .gpu/old.fatbin kernels/goldfhe.fatbin | tee $R/sums.txt; cat kernels/goldfhe.fatbin.sha256 | tee -a $R/sums.txt
OLD=$PWD/.gpu/old.fatbin NEW=$PWD/kernels/goldfhe.fatbin
s=$(date +%s); (cd kernels && GOLDFHE_FATBIN=$NEW ../.gpu/kernels.test -test.run 'TestBlindRotateWide|TestFatbin|TestFake' -test.v -test.timeout 20m) > $R/kernels.log 2>&1; echo "kernels rc=$? $(( $(date +%s)-s )) s" | tee -a $R/kernels.log
grep -c -- '--- PASS: TestBlindRotateWide/' $R/kernels.log; grep -E -- '--- FAIL' $R/kernels.log | head
s=$(date +%s); GOLDFHE_FATBIN=$NEW .gpu/bootstrap.test -test.run 'TestGPUMatchesCPU|TestGPUConcurrentMerged' -test.v -test.timeout 20m > $R/matches.log 2>&1; echo "bootstrap rc=$? $(( $(date +%s)-s )) s" | tee -a $R/matches.log
echo "TestGPUMatchesCPU subtests passed: $(grep -c -- '--- PASS: TestGPUMatchesCPU/' $R/matches.log)"; grep -E -- '--- (FAIL|PASS): Test' $R/matches.log
for r in 1 2 3; do for f in old new; do
  F=$OLD; [ $f = new ] && F=$NEW
  (cd kernels && GOLDFHE_FATBIN=$F GOLDFHE_BENCH_COUNTS=3960 ../.gpu/kernels.test -test.run '^$' -test.bench 'BlindRotate/wide_8x8x16_k1_l3_f256_g3/' -test.benchtime 20x) 2>&1 | grep -E '^Benchmark' | sed "s/^/$f r$r /" | tee -a $R/kernel_bench.txt
done; done
for r in 1 2; do for f in old new; do
  F=$OLD; [ $f = new ] && F=$NEW
  GOLDFHE_FATBIN=$F .gpu/bench -engine gpu -sets TFHELib128 -variants grouped3 -batches 1,16384,65536 -reps 5 -max-gates 400000 -out $R/bench_${f}_$r > $R/bench_${f}_$r.log 2>&1
  echo "== $f r$r rc=$?" | tee -a $R/engine_bench.txt; grep -E 'batch +[0-9]|mJ a gate' $R/bench_${f}_$r.log | tee -a $R/engine_bench.txt
done; done
cd $OUT && tar czf run32a.tgz r && rm -rf r
