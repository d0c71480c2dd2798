#!/bin/bash
# Session 31 run A: many sets of inputs in one evaluation (gates.EvalCircuits, examples/circuit -instances).
# AES-128 at 1, 8, 32 and 64 sets with keys grouped by 3 and by 2; SHA-256's compression at 1 and 16 sets
# (grouped by 3). Each run decrypts and checks every set's outputs. nvidia-smi samples power and clock.
R=$OUT/r; mkdir -p $R
{ nvidia-smi --query-gpu=name,uuid,serial,driver_version,power.limit,compute_cap,temperature.gpu --format=csv; } > $R/device.txt; cat $R/device.txt
cd .gpu && xz -d -f *.xz && chmod +x circuit && cd ..
nvidia-smi --query-gpu=timestamp,power.draw,clocks.sm,temperature.gpu,clocks_event_reasons.sw_power_cap --format=csv -lms 500 > $R/smi.csv 2>&1 &
SMI=$!
run() { # name args...
  local n=$1; shift
  local s=$(date +%s%N)
  ./.gpu/circuit "$@" > $R/$n.log 2>$R/$n.err; local rc=$?
  echo "$n rc=$rc wall $(( ($(date +%s%N) - s) / 1000000 )) ms: $*" | tee -a $R/runs.txt
  grep -E '^(plan|time|sets|output)' $R/$n.log | sed "s/^/  /" | tee -a $R/runs.txt
}
for g in 3 2; do
  for n in 1 8 32 64; do
    run aes_g${g}_n$n -circuit aes128 -grouping $g -keys .gpu/keys$g -instances $n
  done
  run aes_g${g}_n1b -circuit aes128 -grouping $g -keys .gpu/keys$g -instances 1
done
run sha_g3_n1 -circuit sha256 -grouping 3 -keys .gpu/keys3 -instances 1
run sha_g3_n16 -circuit sha256 -grouping 3 -keys .gpu/keys3 -instances 16
kill $SMI
rm -rf .gpu/keys2 .gpu/keys3
cd $OUT && tar czf run31a.tgz r && rm -rf r && ls -la
