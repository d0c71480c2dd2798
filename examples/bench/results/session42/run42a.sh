#!/bin/bash
# Session 42 run A (asked for two H100s of one host, nvidia-h100-x2, for an H100 multi-GPU figure): main at
# the session start, on the committed fatbin d08bf256...: TestGPUMulti and TestGPUConcurrentMerged (full mode),
# then bench -gpus 2 and 1 (TFHELib128 grouped by 3).
R=$OUT/r; mkdir -p $R; T0=$(date +%s); left() { echo $(( 450 - ($(date +%s) - T0) )); }
{ cat .gpu/HEAD.txt; nvidia-smi --query-gpu=index,name,uuid,serial,driver_version,power.limit,compute_cap,temperature.gpu,pci.bus_id --format=csv; nvidia-smi topo -m; nproc; lscpu | grep "Model name"; } > $R/device.txt 2>&1; cat $R/device.txt
cd .gpu && xz -d -f *.xz && chmod +x *.test bench && cd ..
s=$(date +%s); timeout $(( $(left) - 150 )) .gpu/bootstrap.test -test.run 'TestGPUMulti$|TestGPUConcurrentMerged' -test.v -test.timeout=10m > $R/multi.log 2>&1; echo "multi rc=$? $(( $(date +%s)-s )) s" | tee -a $R/multi.log
grep -E -- '^(---|    ---)|FAIL' $R/multi.log | head -20
for g in 2 1; do
  s=$(date +%s); timeout $(( $(left) - 10 )) .gpu/bench -engine gpu -sets TFHELib128 -variants grouped3 -batches 1,16384,65536 -reps 5 -max-gates 400000 -gpus $g -out $R/bench$g > $R/bench$g.log 2>&1; echo "bench -gpus $g rc=$? $(( $(date +%s)-s )) s" | tee -a $R/bench$g.log
  grep -E 'batch +[0-9]|rc=|mJ' $R/bench$g.log | head -8
done
cd $OUT && tar czf run42a.tgz r && rm -rf r
