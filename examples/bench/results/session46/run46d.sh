#!/bin/bash
# Session 46 run D (one GPU; asked for an H100): BenchmarkAdder on the GPU engine (TFHELib128 grouped by 3):
# the ripple-carry adder of MAJ gates against the carry-select one (blocks of ceil(sqrt(w)) bits) and the
# AND/OR adder, 8, 16, 32 and 64 bits, two rounds of five additions; nvidia-smi alongside. Committed fatbin
# d08bf256...
R=$OUT/r; mkdir -p $R; T0=$(date +%s); left() { echo $(( 570 - ($(date +%s) - T0) )); }
{ cat .gpu/HEAD.txt; nvidia-smi --query-gpu=index,name,uuid,serial,driver_version,power.limit,compute_cap,temperature.gpu,pci.bus_id --format=csv; nproc; lscpu | grep 'Model name'; } > $R/device.txt 2>&1; cat $R/device.txt
cd .gpu && xz -d -f *.xz && chmod +x gates.test && cd ..
s=$(date +%s); (cd gates && timeout $(( $(left) - 5 )) ../.gpu/gates.test -test.run '^$' -test.bench 'Adder/engine=gpu' -test.benchtime 5x -test.count 2 > $R/bench_adder.txt 2>&1); echo "bench rc=$? $(( $(date +%s)-s )) s" | tee -a $R/bench_adder.txt
cat $R/bench_adder.txt
cd $OUT && tar czf run46d.tgz r && rm -rf r
