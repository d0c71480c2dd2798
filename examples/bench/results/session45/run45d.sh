#!/bin/bash
# Session 45 run D (one GPU; asked for an H100): two rounds of bench -gpus 1 (TFHELib128 grouped by 3, batches
# 1, 16,384 and 65,536, the median of five calls, NVML's clock, power and energy a gate) on the tree of run C (the card of run C, warm).
# Committed fatbin d08bf256...
R=$OUT/r; mkdir -p $R; T0=$(date +%s); left() { echo $(( 570 - ($(date +%s) - T0) )); }
{ cat .gpu/HEAD.txt; nvidia-smi --query-gpu=index,name,uuid,serial,driver_version,power.limit,compute_cap,temperature.gpu,pci.bus_id --format=csv; nproc; lscpu | grep 'Model name'; } > $R/device.txt 2>&1; cat $R/device.txt
cd .gpu && xz -d -f *.xz && chmod +x bench && cd ..
for r in 1 2; do
  s=$(date +%s); timeout $(( $(left) - 5 )) .gpu/bench -engine gpu -sets TFHELib128 -variants grouped3 -batches 1,16384,65536 -reps 5 -max-gates 400000 -gpus 1 -out $R/bench$r > $R/bench$r.log 2>&1; echo "bench round $r rc=$? $(( $(date +%s)-s )) s" | tee -a $R/bench$r.log
  grep -E 'batch +[0-9]|mJ|WRONG' $R/bench$r.log | head -6
done
cd $OUT && tar czf run45d.tgz r && rm -rf r
