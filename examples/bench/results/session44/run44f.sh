#!/bin/bash
# Session 44 run F (one GPU; asked for an H100): run C again on the final tree, after the review fix to gates' linear plan (an XOR tree's sum counted a cancelled leaf once);
# summing a tree of XORs as a whole (gates' own GPU tests, of Batch, which the plan does not reach, left out:
# the device's 64 MiB limit on what travels). Shipped circuits through the circuit example on the GPU engine (AES-128, SHA-256, add64, mult64; known answers); the lookup
# example (its XOR trees now summed whole by the planner) on 1, 64 and 1,024 queries and a 256-record table.
# Committed fatbin d08bf256...
R=$OUT/r; mkdir -p $R; T0=$(date +%s); left() { echo $(( 570 - ($(date +%s) - T0) )); }
{ cat .gpu/HEAD.txt; nvidia-smi --query-gpu=index,name,uuid,serial,driver_version,power.limit,compute_cap,temperature.gpu,pci.bus_id --format=csv; nproc; lscpu | grep 'Model name'; } > $R/device.txt 2>&1; cat $R/device.txt
cd .gpu && xz -d -f *.xz && chmod +x circuit query && cd ..
mkdir -p /tmp/k2
for args in "-circuit aes128 -engine gpu -keys /tmp/k2" "-circuit aes128 -engine gpu -keys /tmp/k2" "-circuit sha256 -engine gpu -keys /tmp/k2" "-circuit add64 -engine gpu -keys /tmp/k2" "-circuit mult64 -engine gpu -keys /tmp/k2"; do
  echo "== $args" >> $R/circuits.log; timeout $(( $(left) - 120 )) .gpu/circuit $args >> $R/circuits.log 2>&1; echo "rc=$?" >> $R/circuits.log
done
grep -E '^==|^plan|^time|^output|rc=' $R/circuits.log | head -30
for args in "-engine gpu -queries 1" "-engine gpu -queries 64" "-engine gpu -queries 1024" "-engine gpu -records 256 -queries 256"; do
  echo "== $args" >> $R/query.log; timeout $(( $(left) - 5 )) .gpu/query $args >> $R/query.log 2>&1; echo "rc=$?" >> $R/query.log
done
grep -E '^==|^circuit|^plan|^server|^answers|rc=' $R/query.log
cd $OUT && tar czf run44f.tgz r && rm -rf r
