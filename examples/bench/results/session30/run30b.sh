#!/bin/bash
# Session 30 run B, the final tree: make gpu-test (the committed fatbin, with the fault test), make gpu-test-compute80
# (compute_80 PTX compiled by the driver: the code of GPUs without clusters), then TFHELib128 grouped by 3, two rounds.
R=$OUT/r; mkdir -p $R
{ nvidia-smi --query-gpu=name,uuid,serial,driver_version,power.limit,compute_cap,temperature.gpu --format=csv; nvcc --version | tail -2; } > $R/device.txt; cat $R/device.txt
cd .gpu && xz -d -f *.xz && chmod +x *.test bench && cd ..
s=$(date +%s); make gpu-test > $R/gpu-test.out 2>&1; rc=$?; echo "gpu-test rc=$rc $(( $(date +%s)-s )) s" >> $R/gpu-test.out
for f in .gpu/logs/*; do cp $f $R/emb_$(basename $f); done
cat $R/gpu-test.out
echo "gpu/ subtests passed: $(grep -c -- '--- PASS: .*/gpu' $R/emb_kernels.log); TestGPUMatchesCPU subtests passed: $(grep -c -- '--- PASS: TestGPUMatchesCPU/' $R/emb_bootstrap.log)"
grep -E -- '--- (FAIL|PASS): (TestGPUFault|TestBadLaunch|TestNewSplitScratchFails|TestFakeGPUEngineOlderGPUs)\b|--- FAIL' $R/emb_*.log | head -20
s=$(date +%s); make gpu-test-compute80 > $R/gpu-test-c80.out 2>&1; rc=$?; echo "gpu-test-compute80 rc=$rc $(( $(date +%s)-s )) s" >> $R/gpu-test-c80.out
for f in .gpu/logs/*; do cp $f $R/c80_$(basename $f); done
tail -6 $R/gpu-test-c80.out
echo "gpu/ subtests passed: $(grep -c -- '--- PASS: .*/gpu' $R/c80_kernels.log); TestGPUMatchesCPU subtests passed: $(grep -c -- '--- PASS: TestGPUMatchesCPU/' $R/c80_bootstrap.log)"
grep -E -- '--- FAIL' $R/c80_*.log | head -20
for i in 1 2; do
s=$(date +%s); ./.gpu/bench -engine gpu -sets TFHELib128 -variants grouped3 -batches 16384,65536 -reps 5 -max-gates 400000 -out $R/bench$i > $R/ebench$i.log 2>&1; echo "bench round $i rc=$? $(( $(date +%s)-s )) s" >> $R/ebench$i.log
grep -E 'batch +[0-9]+ |mJ|rc=' $R/ebench$i.log
done
cd $OUT && tar czf run30b.tgz r && rm -rf r && ls -la
