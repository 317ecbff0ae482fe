#!/bin/bash
# bfly-auto at several sizes of input on the device: does the fraction of the read ceiling of a K grow with the bytes
# a launch reads (a cost each launch pays, weighing less the longer the launch)? For each size in $SIZES (bytes,
# default 256 MiB to 4 GiB), one bfly-bench run with --min-bytes at that size (rows and the read ceiling alike), the
# types and K given; one CSV, $OUT/sizes.csv (a bytes column first), and a table last: K down, sizes across.
#   [SIZES="..."] bash bench/run_sizes.sh BUILD "f32 f64" 1024,2048,4096 [runs] [algorithms]
set -u
build=$1; types=$2; ks=$3; runs=${4:-10}; algorithms=${5:-bfly-auto}
sizes=${SIZES:-268435456 536870912 1073741824 2147483648 4294967296}
export BFLY_CACHE_DIR=/tmp/bfly-cache
out=${OUT:-bench/results}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv
for t in $types; do
  for s in $sizes; do
    d=/tmp/sizes-$t-$s; rm -rf $d; mkdir -p $d
    echo "=== bfly-bench-$build --types $t --K $ks --algorithms $algorithms --min-bytes $s --runs $runs" | tee -a $out/sizes.log
    build-deps/bin/bfly-bench-$build --types $t --K $ks --algorithms $algorithms --min-bytes $s --runs $runs \
      --out-dir $d >> $out/sizes.log 2>&1
    for f in $d/*.csv; do awk -v s=$s 'NR==1{print "bytes," $0; next}{print s "," $0}' $f >> $out/sizes.csv.tmp; done
  done
done
awk 'NR==1 || !/^bytes,/' $out/sizes.csv.tmp > $out/sizes.csv; rm $out/sizes.csv.tmp
python3 - "$out/sizes.csv" <<'PY'
import csv, sys, collections
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["type"]]
table = collections.defaultdict(dict)
sizes = sorted({int(r["bytes"]) for r in rows})
for r in rows:
    table[(r["type"], r["algorithm"], int(r["K"]))][int(r["bytes"])] = (float(r["fraction_of_read_ceiling"]), int(r["M"]))
print("type algorithm K: fraction of the read ceiling (M) at " + ", ".join(f"{s / 2**20:.0f} MiB" for s in sizes))
for key in sorted(table):
    cells = [f"{table[key][s][0]:.3f} ({table[key][s][1]})" if s in table[key] else "-" for s in sizes]
    print(f"{key[0]:5} {key[1]:18} {key[2]:6} " + "  ".join(cells))
PY
