#!/bin/bash
# Session 34 run B (four GPUs of one host): the multi-GPU engine after the review's mends. In order:
# TestDevices (each device's UUID, against nvidia-smi's), TestGPUMulti (NewGPUs over all four = one
# GPU engine on every sample, = CPU on a subset), BenchmarkGPUMulti (1, 2 and 4 GPUs in one run), the
# bench program with -gpus 4 (energy summed over the four) and -gpus 1 (clock and power found by
# UUID), AES-128 on 1, 2 and 4 GPUs, and the bootstrap GPU tests in short mode; each step cut at a
# deadline so that the logs come back.
R=$OUT/r; mkdir -p $R; T0=$(date +%s); left() { echo $(( 565 - ($(date +%s) - T0) )); }
{ nvidia-smi --query-gpu=index,name,uuid,serial,driver_version,power.limit,compute_cap,temperature.gpu,pci.bus_id --format=csv; nvidia-smi topo -m; nvcc --version | tail -2; nproc; } > $R/device.txt 2>&1; cat $R/device.txt
cd .gpu && xz -d -f *.xz && chmod +x *.test bench circuit && cd ..
(cd kernels && timeout $(left) ../.gpu/kernels.test -test.run 'TestDevices$' -test.v > $R/devices.log 2>&1); grep -E 'device [0-9]|---' $R/devices.log
s=$(date +%s); timeout $(left) .gpu/bootstrap.test -test.run 'TestGPUMulti$' -test.v -test.timeout=20m > $R/multi.log 2>&1; echo "multi rc=$? $(( $(date +%s)-s )) s" | tee -a $R/multi.log
grep -E -- '^(---|    ---)|batch [0-9]+: Multi|goroutines|FAIL|multi\(' $R/multi.log | cut -c1-220 | head -40
s=$(date +%s); timeout $(left) .gpu/bootstrap.test -test.run '^$' -test.bench 'BenchmarkGPUMulti' -test.benchtime 3x -test.timeout=20m > $R/benchmulti.log 2>&1; echo "benchmulti rc=$? $(( $(date +%s)-s )) s" | tee -a $R/benchmulti.log
grep -E 'gates/s|rc=' $R/benchmulti.log
for g in 4 1; do
  s=$(date +%s); timeout $(left) .gpu/bench -engine gpu -sets TFHELib128 -variants grouped3 -batches 1,132,1024,16384,65536,262144 -reps 5 -max-gates 600000 -gpus $g -out $R/bench$g > $R/bench$g.log 2>&1; echo "bench -gpus $g rc=$? $(( $(date +%s)-s )) s" | tee -a $R/bench$g.log
  grep -E 'batch +[0-9]|rc=|mJ|sampling|energy' $R/bench$g.log; tail -4 $R/bench$g/summary.txt
done
mkdir -p /tmp/k2
for args in "-grouping 2 -gpus 1" "-gpus 2" "-gpus 4" "-gpus 1" "-gpus 4 -instances 64" "-gpus 4 -instances 32" "-gpus 1 -instances 32"; do
  echo "== $args" >> $R/aes.log; timeout $(left) .gpu/circuit -circuit aes128 -keys /tmp/k2 $args >> $R/aes.log 2>&1; echo "rc=$?" >> $R/aes.log
done
grep -E '^==|^time|^sets|rc=|GPU:' $R/aes.log | cut -c1-200 | head -60
echo "left $(left) s before the bootstrap GPU tests"
s=$(date +%s); timeout $(left) .gpu/bootstrap.test -test.run 'GPU|NewSelection' -test.short -test.v -test.timeout=20m > $R/bootstrap.log 2>&1; echo "bootstrap rc=$? $(( $(date +%s)-s )) s" | tee -a $R/bootstrap.log
echo "bootstrap: $(grep -c -- '^--- PASS' $R/bootstrap.log) passed, $(grep -c -- '^--- FAIL' $R/bootstrap.log) failed, $(grep -c -- '^--- SKIP' $R/bootstrap.log) skipped"
grep -E -- '--- FAIL' $R/*.log | head -20
cd $OUT && tar czf run34b.tgz r && rm -rf r
