#!/bin/bash
# Session 31 run C: run B again on the merging engine after the review mends (pipeline a semaphore, a small call joining queued ones),
# then make gpu-test, and AES-128 grouped by 2 on 32 sets:
# one EvalCircuits call; 32 goroutines (EvalCircuitWith each) with merging; the same with -no-merge; one set alone.
# Then one gate and the large-batch figure (a lone call and a large call run alone, as before).
R=$OUT/r; mkdir -p $R
{ nvidia-smi --query-gpu=name,uuid,serial,driver_version,power.limit,compute_cap,temperature.gpu --format=csv; nvcc --version | tail -2; } > $R/device.txt; cat $R/device.txt
cd .gpu && xz -d -f *.xz && chmod +x *.test circuit bench && cd ..
s=$(date +%s); make gpu-test > $R/gpu-test.out 2>&1; echo "gpu-test rc=$? $(( $(date +%s)-s )) s" >> $R/gpu-test.out
cp .gpu/logs/*.log $R/
cat $R/gpu-test.out
echo "gpu/ subtests passed: $(grep -c -- '--- PASS: .*/gpu' $R/kernels.log); TestGPUMatchesCPU subtests passed: $(grep -c -- '--- PASS: TestGPUMatchesCPU/' $R/bootstrap.log)"
grep -E -- '--- FAIL' $R/kernels.log $R/bootstrap.log $R/gpuntt.log | head -30
grep -A3 -E -- '--- (PASS|FAIL|SKIP): TestGPUConcurrentMerged' $R/bootstrap.log; grep -E 'calls ran merged' $R/bootstrap.log
nvidia-smi --query-gpu=timestamp,power.draw,clocks.sm,temperature.gpu,clocks_event_reasons.sw_power_cap --format=csv -lms 500 > $R/smi.csv 2>&1 &
SMI=$!
run() { # name args...
  local n=$1; shift
  local s=$(date +%s%N)
  ./.gpu/circuit "$@" > $R/$n.log 2>$R/$n.err; local rc=$?
  echo "$n rc=$rc wall $(( ($(date +%s%N) - s) / 1000000 )) ms: $*" | tee -a $R/runs.txt
  grep -E '^(plan|time|sets|output|engine|  )' $R/$n.log | sed "s/^/  /" | tee -a $R/runs.txt
}
K="-circuit aes128 -grouping 2 -keys .gpu/keys2"
run aes_n1 $K -instances 1
run aes_n32_batch $K -instances 32
run aes_n32_conc $K -instances 32 -concurrent
run aes_n32_conc_nomerge $K -instances 32 -concurrent -no-merge

run aes_n1_b $K -instances 1
kill $SMI
rm -rf .gpu/keys2
s=$(date +%s); ./.gpu/bench -engine gpu -sets TFHELib128 -variants grouped3 -batches 1,16384,65536 -reps 5 -max-gates 400000 -out $R/bench > $R/bench.log 2>&1; echo "bench rc=$? $(( $(date +%s)-s )) s" >> $R/bench.log
grep -E 'gates/s|mJ|rc=' $R/bench.log | head -20
cd $OUT && tar czf run31c.tgz r && rm -rf r && ls -la
