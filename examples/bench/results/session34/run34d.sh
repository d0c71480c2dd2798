#!/bin/bash
# Session 34 run D (two GPUs of one host): bootstrap.Multi with its shares on worker goroutines
# (4584866): TestGPUMulti (full mode, batches up to 40,000, 24 goroutines), TestGPUConcurrentMerged,
# then BenchmarkGPUMulti on 1 and 2 GPUs, and AES-128 on 2 GPUs (one block, 8 blocks at once).
R=$OUT/r; mkdir -p $R
{ nvidia-smi --query-gpu=index,name,uuid,serial,driver_version,power.limit,compute_cap,temperature.gpu,pci.bus_id --format=csv; nproc; } > $R/device.txt 2>&1; cat $R/device.txt
cd .gpu && xz -d -f *.xz && chmod +x *.test circuit && cd ..
s=$(date +%s); timeout 300 .gpu/bootstrap.test -test.run 'TestGPUMulti$|TestGPUConcurrentMerged$' -test.v -test.timeout=10m > $R/multi.log 2>&1; echo "multi rc=$? $(( $(date +%s)-s )) s" | tee -a $R/multi.log
grep -E -- '^(---|    ---)|batch [0-9]+: Multi|goroutines' $R/multi.log | head -30
s=$(date +%s); timeout 200 .gpu/bootstrap.test -test.run '^$' -test.bench 'BenchmarkGPUMulti' -test.benchtime 3x -test.timeout=10m > $R/benchmulti.log 2>&1; echo "benchmulti rc=$? $(( $(date +%s)-s )) s" | tee -a $R/benchmulti.log
grep -E 'gates/s|rc=' $R/benchmulti.log
mkdir -p /tmp/k2
for args in "-grouping 2 -gpus 2" "-gpus 2 -instances 8"; do
  echo "== $args" >> $R/aes.log; timeout 120 .gpu/circuit -circuit aes128 -keys /tmp/k2 $args >> $R/aes.log 2>&1; echo "rc=$?" >> $R/aes.log
done
grep -E '^==|^time|^sets|rc=' $R/aes.log
cd $OUT && tar czf run34d.tgz r && rm -rf r
