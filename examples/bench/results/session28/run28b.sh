#!/bin/bash
# Session 28 run B: the final bench binary (4e0ecae): TFHELib128 grouped by 3 at 16,384 and 65,536 gates, two rounds, and grouped by 2 at 65,536 once, each with the energy per gate from NVML's energy counter.
R=$OUT/r; mkdir -p $R
{ nvidia-smi --query-gpu=name,driver_version,power.limit,compute_cap,temperature.gpu --format=csv; } > $R/device.txt; cat $R/device.txt
cd .gpu && xz -d -f bench.xz && chmod +x bench && cd ..
for i in 1 2; do
  s=$(date +%s); ./.gpu/bench -engine gpu -sets TFHELib128 -variants grouped3 -batches 16384,65536 -reps 5 -max-gates 400000 -out $R/g3_$i > $R/ebench_g3_$i.log 2>&1; echo "bench g3 round $i rc=$? $(( $(date +%s)-s )) s" >> $R/ebench_g3_$i.log
  grep -E 'gates/s|mJ|rc=' $R/ebench_g3_$i.log
done
s=$(date +%s); ./.gpu/bench -engine gpu -sets TFHELib128 -variants grouped -batches 65536 -reps 5 -max-gates 400000 -out $R/g2 > $R/ebench_g2.log 2>&1; echo "bench g2 rc=$? $(( $(date +%s)-s )) s" >> $R/ebench_g2.log
grep -E 'gates/s|mJ|rc=' $R/ebench_g2.log
cp $R/g3_1/results.csv $R/g3_1_results.csv; cp $R/g3_2/results.csv $R/g3_2_results.csv; cp $R/g2/results.csv $R/g2_results.csv
rm -rf $R/g3_1 $R/g3_2 $R/g2
