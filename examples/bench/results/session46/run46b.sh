#!/bin/bash
# Session 46 run B (one GPU; asked for an H100): full adders' carries as MAJ gates in the linear plan
# (280dc73) against the plan before it (fc8810c, which has the MAJ gate but plans the netlists gate by
# gate): examples/circuit on the GPU engine, adder64, mul64, sha256 and aes128 (unchanged: a control), the
# two binaries alternated on one card with one set of keys (grouped by 2, the default; sha256 grouped by
# 3 too). Every run decrypts and checks its outputs. Committed fatbin d08bf256...
R=$OUT/r; mkdir -p $R; T0=$(date +%s); left() { echo $(( 570 - ($(date +%s) - T0) )); }
{ cat .gpu/HEAD.txt; nvidia-smi --query-gpu=index,name,uuid,serial,driver_version,power.limit,compute_cap,temperature.gpu,pci.bus_id --format=csv; nproc; lscpu | grep 'Model name'; } > $R/device.txt 2>&1; cat $R/device.txt
cd .gpu && xz -d -f *.xz && chmod +x circuit_* && cd ..
S=5eed000000000000000000000000000000000000000000000000000000000046
run() { # binary label circuit grouping
  local k=$R/keys$4; mkdir -p $k
  timeout $(( $(left) - 5 )) .gpu/circuit_$1 -circuit $3 -engine gpu -grouping $4 -seed $S -keys $k > $R/$3_g$4_$1_$2.log 2>&1
  echo "$3 g$4 $1 $2 rc=$?: $(grep -E '^plan' $R/$3_g$4_$1_$2.log | sed 's/ estimated.*//') | $(grep -E '^time' $R/$3_g$4_$1_$2.log | cut -c1-60) | $(grep -c 'matches plaintext' $R/$3_g$4_$1_$2.log) match" | tee -a $R/summary.txt
}
for c in add64 mul64 aes128 sha256; do run old 1 $c 2; run new 1 $c 2; run new 2 $c 2; run old 2 $c 2; done
run old 1 sha256 3; run new 1 sha256 3; run new 2 sha256 3; run old 2 sha256 3
cd $OUT && tar czf run46b.tgz r && rm -rf r
