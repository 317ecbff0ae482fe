#!/usr/bin/env bash
# The quality bench on the GPU machine, from the repository root, after bench/lda/prepare_quality_bench.sh here
# (carry "build-deps" and ".whl"):
#   bash bench/lda/run_quality_on_device.sh
# bfly-lda (GPU, posterior-mean and draw estimates) against tomotopy (all CPU threads) and scikit-learn (if it can
# be imported, or installed from .whl) on the WordNet glosses and the KJV chapters, K = 64 and 1024, held-out
# perplexity and NPMI against training seconds (bench/lda/quality_bench.py). About 6-7 minutes on an H100 machine
# with 16 cores: tomotopy and scikit-learn train QUALITY_SECONDS (default 25) per corpus and K each.
# Outputs in $OUT (default bench/results): <device>-<date>-lda-quality.csv, one PNG per corpus and K,
# lda-quality.log. With build-deps/bin/bfly_gpu_tests (copied there from build/tests/gpu/ on the build machine) it
# first runs the GPU tests of inference. Environment: QUALITY_SECONDS, QUALITY_TOPICS (default 64,1024), QUALITY_ARGS (more flags).
set -uo pipefail
root=$(pwd)
[[ -f "$root/CMakeLists.txt" && -d "$root/bench/lda" ]] || { echo "run from the repository root" >&2; exit 2; }
OUT=${OUT:-$root/bench/results}
mkdir -p "$OUT"
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

if [[ -x "$root/build-deps/bin/bfly_gpu_tests" ]]; then
  step "GPU tests of inference (build-deps/bin/bfly_gpu_tests, built on the build machine)"
  "$root/build-deps/bin/bfly_gpu_tests" --gtest_filter='GpuLdaInference*:GpuLdaGeneratedZStep*' 2>&1 | tail -8
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
corpora=/tmp/bfly-quality-corpora
mkdir -p "$corpora"
for name in wordnet-glosses kjv-chapters; do
  gunzip -c "$root/build-deps/corpora/$name.txt.gz" > "$corpora/$name.txt" || return 5
done

step "quality bench"
PYTHONUNBUFFERED=1 python3 "$root/bench/lda/quality_bench.py" --bfly-lda "$bfly" \
  --corpus "wordnet=$corpora/wordnet-glosses.txt" --corpus "kjv=$corpora/kjv-chapters.txt" \
  --topics "${QUALITY_TOPICS:-64,1024}" --seconds "${QUALITY_SECONDS:-25}" --out-dir "$OUT" --label "$label" \
  ${QUALITY_ARGS:-}
}

main "$@" 2>&1 | tee "$OUT/lda-quality.log"
exit "${PIPESTATUS[0]}"
