#!/bin/bash
# Session 31 run E: the final engine (31641da: a merged round reads each group's kind and mu before answering it).
# make gpu-test; AES-128 grouped by 2 on 32 sets in 32 merged goroutines, and as one EvalCircuits call;
# BenchmarkGPUConcurrent once.
R=$OUT/r; mkdir -p $R
{ nvidia-smi --query-gpu=name,uuid,serial,driver_version,power.limit,compute_cap,temperature.gpu --format=csv; nvcc --version | tail -2; } > $R/device.txt; cat $R/device.txt
cd .gpu && xz -d -f *.xz && chmod +x *.test circuit && cd ..
s=$(date +%s); make gpu-test > $R/gpu-test.out 2>&1; echo "gpu-test rc=$? $(( $(date +%s)-s )) s" >> $R/gpu-test.out
cp .gpu/logs/*.log $R/; rm -f $R/fault-fatbin.log
cat $R/gpu-test.out
echo "gpu/ subtests passed: $(grep -c -- '--- PASS: .*/gpu' $R/kernels.log); TestGPUMatchesCPU subtests passed: $(grep -c -- '--- PASS: TestGPUMatchesCPU/' $R/bootstrap.log)"
grep -E -- '--- FAIL' $R/kernels.log $R/bootstrap.log $R/gpuntt.log | head -30
grep -E -- '--- (PASS|FAIL|SKIP): (TestGPUConcurrentMerged|TestFakeGPUEngineMerge)' $R/bootstrap.log $R/kernels.log; grep -E 'calls ran merged' $R/bootstrap.log
run() { # name args...
  local n=$1; shift
  local s=$(date +%s%N)
  ./.gpu/circuit "$@" > $R/$n.log 2>$R/$n.err; local rc=$?
  echo "$n rc=$rc wall $(( ($(date +%s%N) - s) / 1000000 )) ms: $*" | tee -a $R/runs.txt
  grep -E '^(time|sets|output)' $R/$n.log | sed "s/^/  /" | tee -a $R/runs.txt
}
K="-circuit aes128 -grouping 2 -keys .gpu/keys2"
run aes_n32_conc $K -instances 32 -concurrent
run aes_n32_batch $K -instances 32
rm -rf .gpu/keys2
./.gpu/bootstrap.test -test.run '^$' -test.bench 'GPUConcurrent' -test.benchtime 10x > $R/bench.log 2>&1; echo "bench rc=$?" >> $R/bench.log
grep -E 'Benchmark|rc=' $R/bench.log
cd $OUT && tar czf run31e.tgz r && rm -rf r
