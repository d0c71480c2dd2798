#!/bin/bash
# Session 31 run D: BenchmarkGPUConcurrent (goroutines making small Bootstrap calls on one engine, TFHELib128
# grouped by 3, merged and with NoMerge), two passes.
R=$OUT/r; mkdir -p $R
{ nvidia-smi --query-gpu=name,uuid,serial,driver_version,power.limit,compute_cap,temperature.gpu --format=csv; } > $R/device.txt; cat $R/device.txt
cd .gpu && xz -d -f *.xz && chmod +x *.test && cd ..
for i in 1 2; do
  ./.gpu/bootstrap.test -test.run '^$' -test.bench 'GPUConcurrent' -test.benchtime 10x > $R/bench$i.log 2>&1; echo "pass $i rc=$?" >> $R/bench$i.log
  grep -E 'Benchmark|rc=' $R/bench$i.log
done
cd $OUT && tar czf run31d.tgz r && rm -rf r
