#!/bin/bash
# Session 42 run E (one GPU): the full GPU NTT benchmark (make bench-ntt's nttbench, default batches 1 to 65,536,
# every size and variant of the paper's Tables 1 and 2 and the hybrid) on the committed fatbin d08bf256..., whose
# hybrid kernels changed since BENCHMARKS.md's GPU NTT tables (tree 03b4013) were measured.
R=$OUT/r; mkdir -p $R
{ cat .gpu/HEAD.txt; nvidia-smi --query-gpu=index,name,uuid,serial,driver_version,power.limit,compute_cap,temperature.gpu,pci.bus_id --format=csv; } > $R/device.txt 2>&1; cat $R/device.txt
cd .gpu && xz -d -f *.xz && chmod +x nttbench && cd ..
s=$(date +%s); timeout 520 .gpu/nttbench -gpu -out $R/ntt > $R/ntt.log 2>&1; echo "nttbench rc=$? $(( $(date +%s)-s )) s" | tee -a $R/ntt.log
grep -iE 'differs|error|fail' $R/ntt.log | head -5
grep -E '^(512|1024|2048) +(butterfly|hybrid)' $R/ntt/summary.txt | head -20
cd $OUT && tar czf run42e.tgz r && rm -rf r
