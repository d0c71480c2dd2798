#!/bin/bash
# Session 39 run D (the machine of run C, still warm): the final tree, committed fatbin d08bf256...: gates' GPU
# tests and Example_clientAndServer, and the engine benchmark twice into one -out folder (bench's new
# output-folder preparation: the second run replaces the first's files).
R=$OUT/r; mkdir -p $R; T0=$(date +%s); left() { echo $(( 560 - ($(date +%s) - T0) )); }
{ cat .gpu/HEAD.txt; nvidia-smi --query-gpu=index,name,uuid,serial,driver_version,power.limit,compute_cap,temperature.gpu,pci.bus_id --format=csv; nproc; } > $R/device.txt 2>&1; cat $R/device.txt
cd .gpu && xz -d -f *.xz && chmod +x gates.test bench && cd ..
s=$(date +%s); timeout $(( $(left) - 150 )) .gpu/gates.test -test.run 'GPU|Example_clientAndServer' -test.v -test.timeout=10m > $R/gates.log 2>&1; echo "gates rc=$? $(( $(date +%s)-s )) s" | tee -a $R/gates.log
grep -E -- '--- FAIL|^--- (PASS|SKIP)' $R/gates.log | head
for rep in 1 2; do
  s=$(date +%s); timeout $(( $(left) - 5 )) .gpu/bench -engine gpu -sets TFHELib128 -variants grouped3 -batches 1,16384,65536 -reps 5 -max-gates 400000 -out $R/bench > $R/bench$rep.log 2>&1; echo "bench rc=$? $(( $(date +%s)-s )) s" | tee -a $R/bench$rep.log
  grep -E 'batch +[0-9]|mJ|written' $R/bench$rep.log | head -6
done
ls -la --time-style=+%T $R/bench
cd $OUT && tar czf run39d.tgz r && rm -rf r
