#!/bin/bash
# Session 42 run C (the same H100 as run B, warm, a minute later): bench of run B's tree, TFHELib128 grouped by 3,
# batches 1, 16,384 and 65,536, two rounds.
R=$OUT/r; mkdir -p $R; T0=$(date +%s); left() { echo $(( 400 - ($(date +%s) - T0) )); }
{ cat .gpu/HEAD.txt; nvidia-smi --query-gpu=index,name,uuid,serial,driver_version,power.limit,compute_cap,temperature.gpu,pci.bus_id --format=csv; } > $R/device.txt 2>&1; cat $R/device.txt
cd .gpu && xz -d -f *.xz && chmod +x bench && cd ..
for i in 1 2; do
  s=$(date +%s); timeout $(( $(left) - 10 )) .gpu/bench -engine gpu -sets TFHELib128 -variants grouped3 -batches 1,16384,65536 -reps 5 -max-gates 400000 -gpus 1 -out $R/bench$i > $R/bench$i.log 2>&1; echo "bench round $i rc=$? $(( $(date +%s)-s )) s" | tee -a $R/bench$i.log
  grep -E 'batch +[0-9]|rc=|mJ' $R/bench$i.log | head -8
done
cd $OUT && tar czf run42c.tgz r && rm -rf r
