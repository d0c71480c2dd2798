#!/bin/bash
# Session 43 run E (one GPU; asked for an H100): the final tree, where kernels' dlopen and dlsym hold their OS
# thread (so that a failed load keeps dlerror's message); committed fatbin d08bf256...: kernels' GPU tests,
# bootstrap's GPU tests in short mode.
R=$OUT/r; mkdir -p $R; T0=$(date +%s); left() { echo $(( 500 - ($(date +%s) - T0) )); }
{ cat .gpu/HEAD.txt; nvidia-smi --query-gpu=index,name,uuid,serial,driver_version,power.limit,compute_cap,temperature.gpu,pci.bus_id --format=csv; nproc; } > $R/device.txt 2>&1; cat $R/device.txt
cd .gpu && xz -d -f *.xz && chmod +x *.test && cd ..
s=$(date +%s); (cd kernels && timeout $(( $(left) - 150 )) ../.gpu/kernels.test -test.v -test.timeout=10m > $R/kernels.log 2>&1); echo "kernels rc=$? $(( $(date +%s)-s )) s" | tee -a $R/kernels.log
echo "kernels: $(grep -c -- '^--- PASS' $R/kernels.log) passed, $(grep -c -- '^--- FAIL' $R/kernels.log) failed, $(grep -c -- '^--- SKIP' $R/kernels.log) skipped; gpu/ subtests passed: $(grep -c -- '--- PASS: .*/gpu' $R/kernels.log)"
grep -E -- '--- FAIL|--- (PASS|FAIL|SKIP): TestDlopen' $R/kernels.log | head
s=$(date +%s); timeout $(( $(left) - 5 )) .gpu/bootstrap.test -test.run 'GPU|NewSelection|Dropped' -test.short -test.v -test.timeout=5m > $R/bootstrap.log 2>&1; echo "bootstrap (short) rc=$? $(( $(date +%s)-s )) s" | tee -a $R/bootstrap.log
echo "bootstrap: $(grep -c -- '^--- PASS' $R/bootstrap.log) passed, $(grep -c -- '^--- FAIL' $R/bootstrap.log) failed, $(grep -c -- '^--- SKIP' $R/bootstrap.log) skipped"
cd $OUT && tar czf run43e.tgz r && rm -rf r
