#!/bin/bash
# Session 46 run C (one GPU; asked for an H100): the final library code after both reviews (AddUint reading a
# repeated or constant operand bit once; fused carries read in the gates fused so far, none of MUX outputs,
# none past the noise guard). gates' GPU tests in full mode (MAJ in every batch, 64-bit AddUint checked call
# by call against the CPU engine), then examples/circuit on the GPU engine: add64, mul64, sha256 grouped by
# 3 (every output decrypted and checked; keys kept outside $OUT). Committed fatbin d08bf256...
R=$OUT/r; mkdir -p $R; T0=$(date +%s); left() { echo $(( 570 - ($(date +%s) - T0) )); }
{ cat .gpu/HEAD.txt; nvidia-smi --query-gpu=index,name,uuid,serial,driver_version,power.limit,compute_cap,temperature.gpu,pci.bus_id --format=csv; nproc; lscpu | grep 'Model name'; } > $R/device.txt 2>&1; cat $R/device.txt
cd .gpu && xz -d -f *.xz && chmod +x gates.test circuit && cd ..
s=$(date +%s); (cd gates && timeout $(( $(left) - 120 )) ../.gpu/gates.test -test.run 'GPU|Example_clientAndServer' -test.v -test.timeout=10m > $R/gates.log 2>&1); echo "gates rc=$? $(( $(date +%s)-s )) s" | tee -a $R/gates.log
echo "gates: $(grep -c -- '^--- PASS' $R/gates.log) passed, $(grep -c -- '^--- FAIL' $R/gates.log) failed; TestGatesGPUMatchCPU subtests passed: $(grep -c -- '--- PASS: TestGatesGPUMatchCPU/' $R/gates.log); AddUint lines right: $(grep -c 'AddUint.*right, GPU = CPU' $R/gates.log)"
grep -E -- '--- FAIL' $R/gates.log | head
S=5eed000000000000000000000000000000000000000000000000000000000046
for a in "add64 2" "mul64 2" "sha256 3"; do set -- $a; mkdir -p /tmp/keys$2
  timeout $(( $(left) - 5 )) .gpu/circuit -circuit $1 -engine gpu -grouping $2 -seed $S -keys /tmp/keys$2 > $R/$1_g$2.log 2>&1
  echo "$1 g$2 rc=$?: $(grep -E '^plan' $R/$1_g$2.log | sed 's/ estimated.*//') | $(grep -E '^time' $R/$1_g$2.log | cut -c1-60) | $(grep -c 'matches plaintext' $R/$1_g$2.log) match" | tee -a $R/summary.txt
done
cd $OUT && tar czf run46c.tgz r && rm -rf r
