#!/bin/bash
# Session 36 run D (one GPU): the final code's gates GPU test (TestGatesGPUMatchCPU, full mode).
R=$OUT/r; mkdir -p $R
{ cat .gpu/HEAD.txt; nvidia-smi --query-gpu=index,name,uuid,serial,driver_version,power.limit,compute_cap --format=csv; } > $R/device.txt 2>&1; cat $R/device.txt
cd .gpu && xz -d -f gates.test.xz && chmod +x gates.test && cd ..
sha256sum kernels/goldfhe.fatbin | tee $R/sums.txt
s=$(date +%s); timeout 300 .gpu/gates.test -test.run 'GPU' -test.v -test.timeout=10m > $R/gates.log 2>&1; echo "gates rc=$? $(( $(date +%s)-s )) s" | tee -a $R/gates.log
grep -E -- '^(---|    ---)|FAIL' $R/gates.log | head -20
cd $OUT && tar czf run36d.tgz r && rm -rf r
