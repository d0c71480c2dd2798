#!/bin/bash
# Session 41 run I (asked for four H100s again): run H's four-GPU figure (157,970 gates/s) against the bench
# program built at the session's start (61c98c0: bench_old, before the engines became handles over cores and
# Multi's Close and panics changed) on one host, alternated: -gpus 4, then -gpus 1, old, new, old, new.
R=$OUT/r; mkdir -p $R; T0=$(date +%s); left() { echo $(( 400 - ($(date +%s) - T0) )); }
{ cat .gpu/HEAD.txt; nvidia-smi --query-gpu=index,name,uuid,serial,driver_version,power.limit,compute_cap,temperature.gpu,pci.bus_id --format=csv; nproc; } > $R/device.txt 2>&1; cat $R/device.txt
cd .gpu && xz -d -f *.xz && chmod +x bench bench_old && cd ..
for g in 4 1; do
  for bin in bench_old bench bench_old bench; do
    timeout $(( $(left) - 5 )) .gpu/$bin -engine gpu -sets TFHELib128 -variants grouped3 -batches 16384,65536 -reps 5 -max-gates 400000 -gpus $g -out $R/$bin-$g > $R/$bin-$g.log 2>&1; echo "$bin -gpus $g rc=$?" >> $R/ab.log
    grep -E 'batch +[0-9]' $R/$bin-$g.log | sed "s/^/$bin -gpus $g: /" >> $R/ab.log
  done
done
cat $R/ab.log
cd $OUT && tar czf run41i.tgz r && rm -rf r
