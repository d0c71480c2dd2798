#!/bin/bash
# Session 42 run F (one GPU): after gpuntt.DefaultPlan took the hybrid 32x64 at N = 2048: gpuntt's GPU tests
# (Transformer against the CPU plans, DefaultPlan of every size included) and bootstrap's GPU tests in short mode
# (the engine's own default plan), on the committed fatbin d08bf256....
R=$OUT/r; mkdir -p $R; T0=$(date +%s); left() { echo $(( 400 - ($(date +%s) - T0) )); }
{ cat .gpu/HEAD.txt; nvidia-smi --query-gpu=index,name,uuid,serial,driver_version,power.limit,compute_cap,temperature.gpu,pci.bus_id --format=csv; } > $R/device.txt 2>&1; cat $R/device.txt
cd .gpu && xz -d -f *.xz && chmod +x *.test && cd ..
s=$(date +%s); timeout $(( $(left) - 120 )) .gpu/gpuntt.test -test.v -test.timeout=5m > $R/gpuntt.log 2>&1; echo "gpuntt rc=$? $(( $(date +%s)-s )) s" | tee -a $R/gpuntt.log
echo "gpuntt: $(grep -c -- '^--- PASS' $R/gpuntt.log) passed, $(grep -c -- '^--- FAIL' $R/gpuntt.log) failed, $(grep -c -- '^--- SKIP' $R/gpuntt.log) skipped"
grep -E -- '--- FAIL|transformer: .*2048' $R/gpuntt.log | head
s=$(date +%s); timeout $(( $(left) - 5 )) .gpu/bootstrap.test -test.run 'GPU|NewSelection|Dropped' -test.short -test.v -test.timeout=5m > $R/bootstrap.log 2>&1; echo "bootstrap (short) rc=$? $(( $(date +%s)-s )) s" | tee -a $R/bootstrap.log
echo "bootstrap: $(grep -c -- '^--- PASS' $R/bootstrap.log) passed, $(grep -c -- '^--- FAIL' $R/bootstrap.log) failed, $(grep -c -- '^--- SKIP' $R/bootstrap.log) skipped"
cd $OUT && tar czf run42f.tgz r && rm -rf r
