#!/bin/bash
# Session 29 run E: on run D's card (warm), two engine rounds, TFHELib128 grouped by 3.
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,uuid,serial,driver_version,power.limit,temperature.gpu --format=csv > $R/device.txt; cat $R/device.txt
cd .gpu && xz -d -f bench.xz && chmod +x bench && cd ..
for i in 1 2; do
  s=$(date +%s); ./.gpu/bench -engine gpu -sets TFHELib128 -variants grouped3 -batches 16384,65536 -reps 5 -max-gates 400000 -out $R/bench$i > $R/ebench$i.log 2>&1; echo "bench round $i rc=$? $(( $(date +%s)-s )) s" >> $R/ebench$i.log
  grep -E 'gates/s|mJ|rc=' $R/ebench$i.log
done
cd $OUT && tar czf run29e.tgz r && rm -rf r
