#!/bin/bash
# Session 34 run A (two GPUs of one host): bootstrap.Multi / NewGPUs on real devices. In order:
# TestGPUMulti (NewGPUs over every GPU = one GPU engine on every sample, = CPU on a subset; full
# mode), every kernels test (GPU and fake, the fake Multi tests among them), BenchmarkGPUMulti (1 and
# 2 GPUs in one run), the bench program with -gpus 1 and 2, AES-128 with -gpus 1 and 2, and last the
# bootstrap GPU tests in short mode; each step cut at a deadline so that the logs come back.
R=$OUT/r; mkdir -p $R; T0=$(date +%s); left() { echo $(( 565 - ($(date +%s) - T0) )); }
{ nvidia-smi --query-gpu=index,name,uuid,serial,driver_version,power.limit,compute_cap,temperature.gpu --format=csv; nvidia-smi topo -m; nvcc --version | tail -2; nproc; } > $R/device.txt 2>&1; cat $R/device.txt
cd .gpu && xz -d -f *.xz && chmod +x *.test bench circuit && cd ..
s=$(date +%s); timeout $(left) .gpu/bootstrap.test -test.run 'TestGPUMulti$' -test.v -test.timeout=20m > $R/multi.log 2>&1; echo "multi rc=$? $(( $(date +%s)-s )) s" | tee -a $R/multi.log
grep -E -- '^(---|    ---)|batch [0-9]+: Multi|goroutines|FAIL' $R/multi.log | head -40
s=$(date +%s); (cd kernels && timeout $(left) ../.gpu/kernels.test -test.v -test.timeout=20m > $R/kernels.log 2>&1; echo "kernels rc=$? $(( $(date +%s)-s )) s" | tee -a $R/kernels.log)
echo "kernels: $(grep -c -- '^--- PASS' $R/kernels.log) passed, $(grep -c -- '^--- FAIL' $R/kernels.log) failed, $(grep -c -- '^--- SKIP' $R/kernels.log) skipped; gpu/ subtests passed: $(grep -c -- '--- PASS: .*/gpu' $R/kernels.log)"
grep -E -- '--- (FAIL|PASS): TestFakeGPUEngineMulti' $R/kernels.log
s=$(date +%s); timeout $(left) .gpu/bootstrap.test -test.run '^$' -test.bench 'BenchmarkGPUMulti' -test.benchtime 3x -test.timeout=20m > $R/benchmulti.log 2>&1; echo "benchmulti rc=$? $(( $(date +%s)-s )) s" | tee -a $R/benchmulti.log
grep -E 'gates/s|rc=' $R/benchmulti.log
for g in 1 2; do
  s=$(date +%s); timeout $(left) .gpu/bench -engine gpu -sets TFHELib128 -variants grouped3 -batches 1,132,1024,16384,65536 -reps 5 -max-gates 400000 -gpus $g -out $R/bench$g > $R/bench$g.log 2>&1; echo "bench -gpus $g rc=$? $(( $(date +%s)-s )) s" | tee -a $R/bench$g.log
  grep -E 'batch +[0-9]|rc=' $R/bench$g.log
done
mkdir -p /tmp/k2
for args in "-grouping 2 -gpus 1" "-gpus 2" "-gpus 1" "-gpus 2" "-gpus 2 -instances 32" "-gpus 1 -instances 32"; do
  echo "== $args" >> $R/aes.log; timeout $(left) .gpu/circuit -circuit aes128 -keys /tmp/k2 $args >> $R/aes.log 2>&1; echo "rc=$?" >> $R/aes.log
done
grep -E '^==|ms|rc=' $R/aes.log | head -60
echo "left $(left) s before the bootstrap GPU tests"
s=$(date +%s); timeout $(left) .gpu/bootstrap.test -test.run 'GPU|NewSelection' -test.short -test.v -test.timeout=20m > $R/bootstrap.log 2>&1; echo "bootstrap rc=$? $(( $(date +%s)-s )) s" | tee -a $R/bootstrap.log
echo "bootstrap: $(grep -c -- '^--- PASS' $R/bootstrap.log) passed, $(grep -c -- '^--- FAIL' $R/bootstrap.log) failed, $(grep -c -- '^--- SKIP' $R/bootstrap.log) skipped"
grep -E -- '--- FAIL' $R/*.log | head -20
cd $OUT && tar czf run34a.tgz r && rm -rf r
