#!/usr/bin/env bash
# The GPU test suite in one device call, from the repository root:
#   bash bench/run_gpu_tests_on_device.sh BINARY [shards] [timeout_s]
# runs the GoogleTest binary (build/tests/gpu/bfly_gpu_tests, or a stripped copy carried in build-deps/bin) in
# `shards` shards at once (default 12), each stopped after `timeout_s` seconds (default 500, under the call's 600),
# and writes one log, $OUT/gpu-tests.log (the device tool brings back at most 8 files): a summary first (tests
# passed, failed, skipped, and those a timeout stopped, by name), then each shard's own log. Each shard writes its log
# as it runs, so a shard that a timeout stops still shows how far it came. Exit status 0 only when every test ran
# to its end and none failed. Without a GPU every test skips, and the summary says so.
set -u
binary=${1:?usage: bash bench/run_gpu_tests_on_device.sh BINARY [shards] [timeout_s]}
shards=${2:-12}
limit=${3:-500}
out=${OUT:-bench/results}
mkdir -p "$out"
logs=$(mktemp -d)
for i in $(seq 0 $((shards - 1))); do
  (
    GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i timeout "$limit" "$binary" > "$logs/shard-$i.log" 2>&1
    echo "exit status $?" >> "$logs/shard-$i.log"
  ) &
done
wait

# A test ran to its end when GoogleTest printed OK, FAILED or SKIPPED for it after its RUN line.
summary=$(awk '
  /^\[ RUN      \] / { running[$4] = 1; order[++n] = $4 }
  /^\[       OK \] / { delete running[$4]; passed++ }
  /^\[  SKIPPED \] / && $5 ~ /^\(/ { delete running[$4]; skipped++ }
  /^\[  FAILED  \] / && $5 ~ /^\(/ { delete running[$4]; failed++; failures = failures "  failed: " $4 "\n" }
  END {
    for (i = 1; i <= n; i++) if (order[i] in running) { stopped++; unfinished = unfinished "  stopped: " order[i] "\n" }
    printf "tests passed %d, failed %d, skipped %d, stopped by the timeout %d\n", passed, failed, skipped, stopped
    printf "%s%s", failures, unfinished
    exit failed + stopped > 0
  }' "$logs"/shard-*.log)
status=$?
device=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)
{
  echo "# $binary in $shards GoogleTest shards at once, timeout $limit s each; device: ${device:-none found}"
  echo "$summary"
  for i in $(seq 0 $((shards - 1))); do
    echo
    echo "=== shard $i"
    cat "$logs/shard-$i.log"
  done
} > "$out/gpu-tests.log"
rm -rf "$logs"
echo "$summary"
echo "log: $out/gpu-tests.log"
exit $status
