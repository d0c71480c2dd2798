#!/bin/bash
# Session 36 run C (run B's warm H100): AES-128 grouped by 2 with the new default XOR sums (8
# terms) against the old default (-xor-terms 9), alternated, three rounds, with run B's keys.
R=$OUT/r; mkdir -p $R
{ cat .gpu/HEAD.txt; nvidia-smi --query-gpu=index,name,uuid,serial,temperature.gpu,power.draw,clocks.sm --format=csv; } > $R/device.txt 2>&1; cat $R/device.txt
cd .gpu && xz -d -f circuit.xz && chmod +x circuit && cd ..
ls /tmp/k2 >> $R/device.txt 2>&1
for i in 1 2 3; do
  for args in "" "-xor-terms 9"; do
    echo "== round $i $args" >> $R/aes.log; timeout 60 .gpu/circuit -circuit aes128 -engine gpu -keys /tmp/k2 $args >> $R/aes.log 2>&1; echo "rc=$?" >> $R/aes.log
  done
done
grep -E '^==|^plan|^time|rc=' $R/aes.log
cd $OUT && tar czf run36c.tgz r && rm -rf r
