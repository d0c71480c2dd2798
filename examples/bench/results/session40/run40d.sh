#!/bin/bash
# Session 40 run D (asked again for two H100s of one host): the final code on several GPUs:
# TestGPUMulti (full mode) and TestGPUConcurrentMerged, BenchmarkGPUMulti (1 and 2 GPUs in one run),
# bench with -gpus 2 and 1 (TFHELib128 grouped by 3).
R=$OUT/r; mkdir -p $R; T0=$(date +%s); left() { echo $(( 560 - ($(date +%s) - T0) )); }
{ cat .gpu/HEAD.txt; nvidia-smi --query-gpu=index,name,uuid,serial,driver_version,power.limit,compute_cap,temperature.gpu,pci.bus_id --format=csv; nvidia-smi topo -m; nproc; lscpu | grep "Model name"; } > $R/device.txt 2>&1; cat $R/device.txt
cd .gpu && xz -d -f *.xz && chmod +x *.test bench && cd ..
s=$(date +%s); timeout $(left) .gpu/bootstrap.test -test.run 'TestGPUMulti$|TestGPUConcurrentMerged' -test.v -test.timeout=20m > $R/multi.log 2>&1; echo "multi rc=$? $(( $(date +%s)-s )) s" | tee -a $R/multi.log
grep -E -- '^(---|    ---)|FAIL' $R/multi.log | head -20
s=$(date +%s); timeout $(left) .gpu/bootstrap.test -test.run '^$' -test.bench 'BenchmarkGPUMulti' -test.benchtime 3x -test.timeout=20m > $R/benchmulti.log 2>&1; echo "benchmulti rc=$? $(( $(date +%s)-s )) s" | tee -a $R/benchmulti.log
grep -E 'gates/s|rc=' $R/benchmulti.log
for g in 2 1; do
  s=$(date +%s); timeout $(( $(left) - 90 )) .gpu/bench -engine gpu -sets TFHELib128 -variants grouped3 -batches 1,16384,65536 -reps 5 -max-gates 400000 -gpus $g -out $R/bench$g > $R/bench$g.log 2>&1; echo "bench -gpus $g rc=$? $(( $(date +%s)-s )) s" | tee -a $R/bench$g.log
  grep -E 'batch +[0-9]|rc=|mJ' $R/bench$g.log | head -12
done
cd $OUT && tar czf run40d.tgz r && rm -rf r
