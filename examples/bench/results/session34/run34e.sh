#!/bin/bash
# Session 34 run E (two GPUs of one host): the final code (Multi keeping at most two idle workers an
# engine; .gpu/HEAD.txt names the commit built): every bootstrap GPU test in short mode (TestGPUMulti
# up to 10,000 samples and 24 goroutines, TestGPUConcurrentMerged, TestGPUMatchesCPU's short sets),
# then BenchmarkGPUMulti on 1 and 2 GPUs.
R=$OUT/r; mkdir -p $R
{ nvidia-smi --query-gpu=index,name,uuid,serial,driver_version,power.limit,compute_cap,temperature.gpu,pci.bus_id --format=csv; nproc; } > $R/device.txt 2>&1; cat $R/device.txt
cat .gpu/HEAD.txt | tee $R/head.txt
cd .gpu && xz -d -f *.xz && chmod +x *.test && cd ..
s=$(date +%s); timeout 300 .gpu/bootstrap.test -test.run "GPU|NewSelection" -test.short -test.v -test.timeout=10m > $R/multi.log 2>&1; echo "multi rc=$? $(( $(date +%s)-s )) s" | tee -a $R/multi.log
grep -E -- '^--- |batch [0-9]+: Multi|goroutines' $R/multi.log | head -40
s=$(date +%s); timeout 200 .gpu/bootstrap.test -test.run '^$' -test.bench 'BenchmarkGPUMulti' -test.benchtime 3x -test.timeout=10m > $R/benchmulti.log 2>&1; echo "benchmulti rc=$? $(( $(date +%s)-s )) s" | tee -a $R/benchmulti.log
grep -E 'gates/s|rc=' $R/benchmulti.log
cd $OUT && tar czf run34e.tgz r && rm -rf r
