#!/usr/bin/env bash
# Data-parallel bfly-lda on the GPU machine, from the repository root (carry "build-deps": bench/prepare_device_deps.sh
# for fmt, and optionally, built on the build machine, build-deps/bin/bfly_gpu_tests and
# build-deps/bin/lda-multi-gpu-bench, which is then not built there):
#   bash bench/lda/run_multi_gpu_on_device.sh            # 1 GPU, then 2 GPUs when the machine has them
#   GPUS="1" bash bench/lda/run_multi_gpu_on_device.sh   # only the given counts
# Steps, logged to $OUT/<device>-<date>-lda-multi-gpu.log:
#   1. unless build-deps/bin/lda-multi-gpu-bench exists, configure bfly with the bench into build-device/ and build
#      lda-multi-gpu-bench (all cores);
#   2. find NCCL (BFLY_NCCL_LIBRARY, else libnccl.so.2 on the loader path, else pip's nvidia-nccl wheel);
#   3. if build-deps/bin/bfly_gpu_tests exists, its MultiGpu tests (N ranks equal one GPU bit for bit);
#   4. lda-multi-gpu-bench on a synthetic corpus made on the GPUs (TOKENS, default 1e9; K = 1024; mean document
#      length 1000; V = 100000; 1 warm-up + ITERATIONS timed iterations, default 5) for each count in GPUS.
# Outputs in $OUT (default bench/results): <device>-<date>-lda-multi-gpu.csv (one row per timed iteration: time
# split into z-step, counts, all-reduce, estimates) and the log, which ends with the speed-up of N GPUs over 1.
# About 1 minute on an H100 with the binaries carried (plus 2-3 minutes to build them there otherwise); the bench
# needs ~17 GB of GPU memory for 1e9 tokens on one GPU.
set -uo pipefail
root=$(pwd)
[[ -f "$root/CMakeLists.txt" && -d "$root/bench/lda" ]] || { echo "run from the repository root" >&2; exit 2; }
OUT=${OUT:-$root/bench/results}
mkdir -p "$OUT"
build=$root/build-device
jobs=$(nproc)
step() { echo; echo "=== $(date +%T) [${SECONDS}s] $*"; }

main() {
step "machine"
command -v nvcc >/dev/null || export PATH=/usr/local/cuda/bin:$PATH
nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv 2>&1 || true
nvidia-smi topo -m 2>&1 | head -8 || true
local devices
devices=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
echo "GPUs: $devices; NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-unset (bfly sets 0)}"

bench=$root/build-deps/bin/lda-multi-gpu-bench
if [[ -x "$bench" ]]; then
  echo "using $bench (built on the build machine)"
else
  step "configure"
  local cmake_args=(-S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DBFLY_BUILD_BENCH=ON -DBFLY_BUILD_TESTS=OFF)
  command -v ninja >/dev/null && cmake_args+=(-G Ninja)
  [[ -f "$root/build-deps/fmt/lib/cmake/fmt/fmt-config.cmake" ]] && cmake_args+=("-Dfmt_DIR=$root/build-deps/fmt/lib/cmake/fmt")
  cmake "${cmake_args[@]}" > "$build.configure.log" 2>&1 || { cat "$build.configure.log"; echo "configure failed"; return 3; }
  step "build lda-multi-gpu-bench ($jobs jobs)"
  cmake --build "$build" --target lda-multi-gpu-bench -j "$jobs" 2>&1 | grep -E "error|FAILED"
  bench=$build/bench/lda/lda-multi-gpu-bench
  [[ -x "$bench" ]] || { echo "build failed"; return 4; }
fi
mkdir -p "$build"
export BFLY_CACHE_DIR=$build/bfly-cache

step "NCCL"
if [[ -z "${BFLY_NCCL_LIBRARY:-}" ]] && ! ldconfig -p 2>/dev/null | grep -q 'libnccl.so.2'; then
  local wheel="" sites="" dir
  # pip's nvidia-nccl wheel (a dependency of torch's CUDA wheels), wherever its package directory is
  sites=$(python3 -c 'import site; print(" ".join(site.getsitepackages() + [site.getusersitepackages()]))' 2>/dev/null)
  for dir in $sites; do
    [[ -d "$dir/nvidia" ]] && wheel=$(find "$dir/nvidia" -name 'libnccl.so.2' 2>/dev/null | head -1)
    [[ -n "$wheel" ]] && break
  done
  [[ -n "$wheel" ]] || wheel=$(find / -xdev -name 'libnccl.so.2' 2>/dev/null | head -1)
  [[ -n "$wheel" ]] && export BFLY_NCCL_LIBRARY=$wheel
fi
echo "BFLY_NCCL_LIBRARY=${BFLY_NCCL_LIBRARY:-(libnccl.so.2 from the loader path)}"

local status=0
if [[ -x "$root/build-deps/bin/bfly_gpu_tests" ]]; then
  step "GPU tests: data-parallel ranks equal one GPU"
  "$root/build-deps/bin/bfly_gpu_tests" --gtest_filter='MultiGpu*' 2>&1 | grep -E "^\[ +(OK|FAILED|SKIPPED|PASSED) |rank|Failure|Expected|Which is|error" | head -60
  [[ ${PIPESTATUS[0]} -ne 0 ]] && { echo "GPU tests failed"; status=7; }
fi

local counts=${GPUS:-}
if [[ -z "$counts" ]]; then
  counts=1
  [[ $devices -ge 2 ]] && counts="1 2"
fi
for n in $counts; do
  step "lda-multi-gpu-bench --gpus $n"
  "$bench" --gpus "$n" --tokens "${TOKENS:-1e9}" --topics 1024 --doc-length 1000 \
    --vocab 100000 --iterations "${ITERATIONS:-5}" --warmup 1 --csv "$csv" || { echo "bench failed (--gpus $n)"; status=8; }
done

step "summary (median over the timed iterations)"
[[ -s "$csv" ]] || { echo "no rows in $csv"; return $((status == 0 ? 9 : status)); }
python3 - "$csv" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
by = {}
for r in rows:
    by.setdefault(int(r["gpus"]), []).append(r)
base = None
for gpus in sorted(by):
    rs = by[gpus]
    med = lambda key: statistics.median(float(r[key]) for r in rs)
    rate = med("tokens_per_s")
    base = base or (rate if gpus == 1 else None)
    speedup = f", {rate / base:.2f}x of 1 GPU" if base and gpus > 1 else ""
    print(f"{gpus} GPU(s), {rs[0]['device']}: {rate / 1e6:.1f} Mtokens/s{speedup}; per iteration "
          f"{med('iteration_s'):.3f} s = z-step {med('zstep_s'):.3f} + counts {med('count_s'):.3f} + "
          f"all-reduce {med('all_reduce_s'):.3f} + estimates {med('estimate_s'):.3f} s")
PY
step "done, exit status $status"
return $status
}

device=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 | tr 'A-Z ' 'a-z-' | tr -cd 'a-z0-9-' | sed 's/^nvidia-//')
[[ -n "$device" ]] || device=unknown
stem=$OUT/${device:-gpu}-$(date -u +%F)-lda-multi-gpu
csv=$stem.csv
main 2>&1 | tee "$stem.log"
exit "${PIPESTATUS[0]}"
