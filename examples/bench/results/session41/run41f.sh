#!/bin/bash
# Session 41 run F (one GPU; asked for an H100): what the session's gates changes cost in a circuit evaluation,
# on one card: AES-128 grouped by 2, 32 blocks at once (EvalCircuits), with the circuit example built at the
# session's start (61c98c0: circuit_old) and at its end (circuit, HEAD.txt), alternated old, new, old, new,
# then the same with -concurrent (32 goroutines, merged). The same saved keys for all.
R=$OUT/r; mkdir -p $R; T0=$(date +%s); left() { echo $(( 570 - ($(date +%s) - T0) )); }
{ cat .gpu/HEAD.txt; nvidia-smi --query-gpu=index,name,uuid,serial,driver_version,power.limit,compute_cap,temperature.gpu,pci.bus_id --format=csv; nproc; lscpu | grep 'Model name'; } > $R/device.txt 2>&1; cat $R/device.txt
cd .gpu && xz -d -f *.xz && chmod +x circuit circuit_old && cd ..
mkdir -p /tmp/k2
.gpu/circuit -circuit aes128 -engine gpu -keys /tmp/k2 -grouping 2 > $R/keys.log 2>&1; echo "keys rc=$?"
for extra in "" "-concurrent"; do
  for bin in circuit_old circuit circuit_old circuit; do
    echo "== $bin -instances 32 $extra" >> $R/ab.log; timeout $(( $(left) - 5 )) .gpu/$bin -circuit aes128 -engine gpu -keys /tmp/k2 -instances 32 $extra >> $R/ab.log 2>&1; echo "rc=$?" >> $R/ab.log
  done
done
grep -E '^==|^time|^sets|rc=' $R/ab.log
cd $OUT && tar czf run41f.tgz r && rm -rf r
