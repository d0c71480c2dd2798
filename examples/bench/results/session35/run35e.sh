#!/bin/bash
# Session 35 run E (one GPU): the final code's GPU tests after the review mends (b89a415): every
# kernels and gpuntt GPU test, and the bootstrap GPU tests in short mode.
R=$OUT/r; mkdir -p $R
{ cat .gpu/HEAD.txt; nvidia-smi --query-gpu=index,name,uuid,serial,driver_version,power.limit,compute_cap,temperature.gpu --format=csv; } > $R/device.txt 2>&1; cat $R/device.txt
cd .gpu && xz -d -f *.xz && chmod +x *.test && cd ..
(cd kernels && timeout 300 ../.gpu/kernels.test -test.v -test.timeout=10m > $R/kernels.log 2>&1; echo "kernels rc=$?" | tee -a $R/kernels.log)
timeout 120 .gpu/gpuntt.test -test.v > $R/gpuntt.log 2>&1; echo "gpuntt rc=$?" | tee -a $R/gpuntt.log
timeout 150 .gpu/bootstrap.test -test.run 'GPU|NewSelection' -test.short -test.v > $R/bootstrap.log 2>&1; echo "bootstrap rc=$?" | tee -a $R/bootstrap.log
for f in kernels gpuntt bootstrap; do echo "$f: $(grep -c -- '^--- PASS' $R/$f.log) passed, $(grep -c -- '^--- FAIL' $R/$f.log) failed, $(grep -c -- '^--- SKIP' $R/$f.log) skipped"; done
echo "gpu/ subtests passed: $(grep -c -- '--- PASS: .*/gpu' $R/kernels.log); gpuntt TestGPUMatchesCPU subtests passed: $(grep -c -- '--- PASS: TestGPUMatchesCPU/' $R/gpuntt.log); bootstrap TestGPUMatchesCPU subtests passed: $(grep -c -- '--- PASS: TestGPUMatchesCPU/' $R/bootstrap.log)"
grep -E -- '--- FAIL' $R/*.log | head -20
grep -E 'transformer: ' $R/gpuntt.log | head -3
cd $OUT && tar czf run35e.tgz r && rm -rf r
