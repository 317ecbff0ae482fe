#!/bin/bash
# bfly-bench of one build under several environment switches side by side on the device (a build that reads an
# experimental switch when it generates a kernel), each sweep repeated, the switches interleaved, in one CSV per type
# ($OUT/switches-<type>.csv, a switch and a repeat column first) and a table of the fraction of the read ceiling last.
# usage: K_f32=... K_bf16=... bash bench/run_switches.sh BINARY "label=VAR=value label2=" "f32 bf16" [runs] [repeats]
# A label with nothing after '=' runs with no switch set. The K of type t come from $K_<t>.
set -u
binary=$1; switches=$2; types=$3; runs=${4:-15}; repeats=${5:-2}
export BFLY_CACHE_DIR=/tmp/bfly-cache
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv
for t in $types; do
  klist_var=K_$t; klist=${!klist_var}
  for rep in $(seq 1 $repeats); do
    for s in $switches; do
      label=${s%%=*}; assignment=${s#*=}
      d=/tmp/out-$label-$t-$rep; rm -rf $d; mkdir -p $d
      echo "=== $label ($assignment) $t repeat $rep: --types $t --K $klist --algorithms bfly-auto --runs $runs" | tee -a $OUT/switches.log
      env $assignment $binary --types $t --K $klist --algorithms bfly-auto --runs $runs --out-dir $d >> $OUT/switches.log 2>&1 \
        || echo "exit status $? ($label $t $rep)" | tee -a $OUT/switches.log
      for f in $d/*.csv; do awk -v v=$label -v r=$rep 'NR==1{print "switch,repeat," $0; next}{print v "," r "," $0}' $f >> $OUT/switches-$t.csv.tmp; done
    done
  done
  awk 'NR==1 || !/^switch,/' $OUT/switches-$t.csv.tmp > $OUT/switches-$t.csv; rm $OUT/switches-$t.csv.tmp
done
grep -E "FAIL|ERROR" $OUT/switches.log | head -20
python3 "$(dirname "$0")/variants_table.py" $OUT/switches-*.csv
