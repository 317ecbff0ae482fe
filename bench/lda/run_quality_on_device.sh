#!/usr/bin/env bash
# The quality bench on the GPU machine, from the repository root, after bench/lda/prepare_quality_bench.sh here
# (carry "build-deps" and ".whl"), one piece per call so that each fits a time limit:
#   bash bench/lda/run_quality_on_device.sh --corpora wordnet --topics 64 --systems tomotopy --seconds 300
#   bash bench/lda/run_quality_on_device.sh --corpora wordnet,kjv --topics 64,1024 \
#     --systems bfly-lda-collapsed,bfly-lda-mean --bfly-seconds 5
# --corpora: wordnet (the WordNet glosses) and/or kjv (the King James Bible, a chapter per document), default both;
# --topics (default 64,1024); --systems (default bfly-lda-collapsed,bfly-lda-mean,bfly-lda-draw,tomotopy,sklearn); --seconds: the
# training seconds of tomotopy (all CPU threads) and scikit-learn (if it can be imported, or installed from .whl)
# each (default 25); --bfly-seconds: of each bfly-lda run (default 5); --gpu-tests FILTER: first run those GPU tests
# (a gtest filter; build-deps/bin/bfly_gpu_tests, copied there from build/tests/gpu/ on the build machine); any other
# argument goes to bench/lda/quality_bench.py. Held-out perplexity and NPMI against training seconds, at checkpoints
# about 2x apart in seconds; scoring a checkpoint takes about 0.3 s at K = 64 and 3-5 s at K = 1024 (on top of the
# CPU systems' seconds; bfly-lda's are scored while the GPU trains on).
# Outputs in $OUT (default bench/results): <device>-<date>-lda-quality-<corpora>-k<topics>-<systems>.csv and
# lda-quality-<corpora>-k<topics>-<systems>.log; bench/lda/quality_summary.py merges the pieces into the table and
# the plots.
set -uo pipefail
root=$(pwd)
[[ -f "$root/CMakeLists.txt" && -d "$root/bench/lda" ]] || { echo "run from the repository root" >&2; exit 2; }
OUT=${OUT:-$root/bench/results}
mkdir -p "$OUT"
corpora=wordnet,kjv topics=64,1024 systems=bfly-lda-collapsed,bfly-lda-mean,bfly-lda-draw,tomotopy,sklearn seconds=25 bfly_seconds=5
gpu_tests='' bench_args=()
while (($#)); do
  case $1 in
    --corpora) corpora=$2; shift 2 ;;
    --topics) topics=$2; shift 2 ;;
    --systems) systems=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --bfly-seconds) bfly_seconds=$2; shift 2 ;;
    --gpu-tests) gpu_tests=$2; shift 2 ;;
    *) bench_args+=("$1"); shift ;;
  esac
done
piece="${corpora//,/+}-k${topics//,/+}-${systems//,/+}"
for ((i = 0; i + 1 < ${#bench_args[@]}; ++i)); do  # an averaged run's files keep apart from the plain run's
  [[ ${bench_args[i]} == --bfly-average-last && ${bench_args[i+1]} != 1 ]] && piece+="-average${bench_args[i+1]}"
done
step() { echo; echo "=== $(date +%T) [${SECONDS}s] $*"; }

main() {
step "machine"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>&1 || true
echo "cpus: $(nproc)   python: $(python3 --version 2>&1)"
device=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 | tr 'A-Z ' 'a-z-' | tr -cd 'a-z0-9-' | sed 's/^nvidia-//')
label="${device:-gpu}-$(date +%F)"

step "bfly-lda"
bfly=$root/build-deps/bin/bfly-lda
if ! "$bfly" --version > /dev/null 2>&1; then
  echo "the carried bfly-lda does not start here; building one into build-device/"
  command -v nvcc > /dev/null || export PATH=/usr/local/cuda/bin:$PATH
  cmake_args=(-S "$root" -B "$root/build-device" -DCMAKE_BUILD_TYPE=Release -DBFLY_BUILD_TESTS=OFF
              "-DBFLY_LDA_CPU_KERNELS=")
  command -v ninja > /dev/null && cmake_args+=(-G Ninja)
  [[ -f "$root/build-deps/fmt/lib/cmake/fmt/fmt-config.cmake" ]] && cmake_args+=("-Dfmt_DIR=$root/build-deps/fmt/lib/cmake/fmt")
  cmake "${cmake_args[@]}" > /dev/null && cmake --build "$root/build-device" --target bfly-lda -j "$(nproc)" | tail -2
  bfly=$root/build-device/tools/bfly-lda/bfly-lda
fi
"$bfly" --version && "$bfly" --check-device || return 3
export BFLY_CACHE_DIR=$root/build-device/bfly-cache

if [[ -n $gpu_tests && -x "$root/build-deps/bin/bfly_gpu_tests" ]]; then
  step "GPU tests $gpu_tests (build-deps/bin/bfly_gpu_tests, built on the build machine)"
  "$root/build-deps/bin/bfly_gpu_tests" --gtest_filter="$gpu_tests" 2>&1 | grep -E '^\[ +(OK|FAILED|PASSED|SKIPPED) ' | tail -40
fi

step "Python packages"
site=/tmp/bfly-quality-site
if ! python3 -c "import tomotopy, sklearn" 2> /dev/null; then
  for wheel in "$root"/.whl/*.whl; do
    [[ -f $wheel ]] || continue
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target "$site" "$wheel" \
      > /dev/null 2>&1 || echo "$(basename "$wheel") does not install here"
  done
  export PYTHONPATH=$site${PYTHONPATH:+:$PYTHONPATH}
fi
python3 -c "import numpy, tomotopy; print('numpy', numpy.__version__, 'tomotopy', tomotopy.__version__)" || return 4
python3 -c "import sklearn; print('scikit-learn', sklearn.__version__)" || echo "no scikit-learn: it is skipped"

step "corpora"
corpus_dir=/tmp/bfly-quality-corpora corpus_args=()
mkdir -p "$corpus_dir"
for name in ${corpora//,/ }; do
  case $name in
    wordnet) file=wordnet-glosses ;;
    kjv) file=kjv-chapters ;;
    *) echo "--corpora: unknown corpus $name (wordnet, kjv)" >&2; return 2 ;;
  esac
  gunzip -c "$root/build-deps/corpora/$file.txt.gz" > "$corpus_dir/$file.txt" || return 5
  corpus_args+=(--corpus "$name=$corpus_dir/$file.txt")
done

step "quality bench: $piece"
PYTHONUNBUFFERED=1 python3 "$root/bench/lda/quality_bench.py" --bfly-lda "$bfly" "${corpus_args[@]}" \
  --topics "$topics" --systems "$systems" --seconds "$seconds" --bfly-seconds "$bfly_seconds" --out-dir "$OUT" \
  --label "$label" "${bench_args[@]}"
}

main 2>&1 | tee "$OUT/lda-quality-$piece.log"
exit "${PIPESTATUS[0]}"
