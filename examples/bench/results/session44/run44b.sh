#!/bin/bash
# Session 44 run B (one GPU; asked for an H100): the session's final library code (smallntt's pure-Go MulSum and
# digit transforms, gates.Builder, examples/query on the Builder). bootstrap's GPU tests in full mode; the same
# tests in short mode built with -tags purego, so that the GPU engine is compared with the CPU engine's Go code
# (the new MulSum and ForwardDigits) rather than its assembly; the query example on 1, 64 and 1,024 queries.
# Committed fatbin d08bf256...
R=$OUT/r; mkdir -p $R; T0=$(date +%s); left() { echo $(( 570 - ($(date +%s) - T0) )); }
{ cat .gpu/HEAD.txt; nvidia-smi --query-gpu=index,name,uuid,serial,driver_version,power.limit,compute_cap,temperature.gpu,pci.bus_id --format=csv; nproc; lscpu | grep -E 'Model name|Flags' | sed 's/Flags:.*\(avx512ifma\).*/Flags: ... avx512ifma .../'; } > $R/device.txt 2>&1; cat $R/device.txt
cd .gpu && xz -d -f *.xz && chmod +x *.test query && cd ..
s=$(date +%s); timeout $(( $(left) - 330 )) .gpu/bootstrap.test -test.run 'GPU|NewSelection|Dropped' -test.v -test.timeout=10m > $R/bootstrap.log 2>&1; echo "bootstrap (full) rc=$? $(( $(date +%s)-s )) s" | tee -a $R/bootstrap.log
echo "bootstrap: $(grep -c -- '^--- PASS' $R/bootstrap.log) passed, $(grep -c -- '^--- FAIL' $R/bootstrap.log) failed, $(grep -c -- '^--- SKIP' $R/bootstrap.log) skipped"
grep -E -- '--- FAIL' $R/bootstrap.log | head
s=$(date +%s); timeout $(( $(left) - 90 )) .gpu/bootstrap-purego.test -test.run 'GPUMatchesCPU|GPUMulti' -test.short -test.v -test.timeout=10m > $R/bootstrap_purego.log 2>&1; echo "bootstrap purego (short) rc=$? $(( $(date +%s)-s )) s" | tee -a $R/bootstrap_purego.log
echo "bootstrap purego: $(grep -c -- '^--- PASS' $R/bootstrap_purego.log) passed, $(grep -c -- '^--- FAIL' $R/bootstrap_purego.log) failed, $(grep -c -- '^--- SKIP' $R/bootstrap_purego.log) skipped"
grep -E -- '--- FAIL' $R/bootstrap_purego.log | head
for args in "-engine gpu -queries 1" "-engine gpu -queries 64" "-engine gpu -queries 1024"; do
  echo "== $args" >> $R/query.log; timeout $(( $(left) - 5 )) .gpu/query $args >> $R/query.log 2>&1; echo "rc=$?" >> $R/query.log
done
grep -E '^==|^circuit|^plan|^server|^answers|rc=' $R/query.log
cd $OUT && tar czf run44b.tgz r && rm -rf r
