#!/bin/bash
# Session 35 run A (asked for two H100s of one host; the no-change tree of session 34): make gpu-test
# (every kernels, gpuntt and bootstrap GPU test, the bootstrap ones in full mode, TestGPUMulti among
# them on a host of two or more GPUs, the fault test with a fault fatbin built here), then bench with
# -gpus 1 and 2 (TFHELib128 grouped by 3); each step cut at a deadline.
R=$OUT/r; mkdir -p $R; T0=$(date +%s); left() { echo $(( 570 - ($(date +%s) - T0) )); }
{ cat .gpu/HEAD.txt; nvidia-smi --query-gpu=index,name,uuid,serial,driver_version,power.limit,compute_cap,temperature.gpu,pci.bus_id --format=csv; nvcc --version | tail -2; nproc; } > $R/device.txt 2>&1; cat $R/device.txt
cd .gpu && xz -d -f *.xz && chmod +x *.test bench && cd ..
sha256sum kernels/goldfhe.fatbin | tee $R/sums.txt; sh kernels/srchash.sh | tee -a $R/sums.txt; cat kernels/goldfhe.fatbin.sha256 | tee -a $R/sums.txt
s=$(date +%s); timeout 330 make gpu-test > $R/gpu-test.out 2>&1; echo "gpu-test rc=$? $(( $(date +%s)-s )) s" >> $R/gpu-test.out
cp .gpu/logs/*.log $R/; rm -f $R/fault-fatbin.log
cat $R/gpu-test.out
echo "gpu/ subtests passed: $(grep -c -- '--- PASS: .*/gpu' $R/kernels.log); TestGPUMatchesCPU subtests passed: $(grep -c -- '--- PASS: TestGPUMatchesCPU/' $R/bootstrap.log)"
grep -E -- '--- FAIL' $R/kernels.log $R/bootstrap.log $R/gpuntt.log | head -30
grep -E -- '--- (PASS|FAIL|SKIP): (TestGPUMulti|TestGPUConcurrentMerged|TestFakeGPUEngineMulti|TestGPUFault|TestDevices)' $R/bootstrap.log $R/kernels.log
for g in 2 1; do
  s=$(date +%s); timeout $(( $(left) - 60 )) .gpu/bench -engine gpu -sets TFHELib128 -variants grouped3 -batches 1,16384,65536 -reps 5 -max-gates 400000 -gpus $g -out $R/bench$g > $R/bench$g.log 2>&1; echo "bench -gpus $g rc=$? $(( $(date +%s)-s )) s" | tee -a $R/bench$g.log
  grep -E 'batch +[0-9]|rc=|mJ' $R/bench$g.log | head -12
done
cd $OUT && tar czf run35a.tgz r && rm -rf r
