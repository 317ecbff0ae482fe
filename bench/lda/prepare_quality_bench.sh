#!/usr/bin/env bash
# Run HERE (the build machine, with network), from the repository root, before the quality bench on a GPU machine
# that has no network:
#   bash bench/lda/prepare_quality_bench.sh [--with-sklearn PYTHON_VERSION]
# Writes into build-deps/ (ignored by git; carry "build-deps") and .whl/ (carry ".whl"):
#   build-deps/corpora/wordnet-glosses.txt.gz  WordNet 3.0 glosses, one per line (scripts/lda/fetch_real_corpus.sh)
#   build-deps/corpora/kjv-chapters.txt.gz     the King James Bible, one chapter per line (fetch_kjv_corpus.sh)
#   build-deps/bin/bfly-lda                    bfly-lda built here (Release, stripped); the device script builds
#                                              its own when this one does not start there
#   build-deps/bin/bfly_gpu_tests              the GPU tests (the device script runs those named by --gpu-tests)
#   .whl/tomotopy-*.whl                        tomotopy (abi3: any CPython >= 3.9)
#   with --with-sklearn 3.X: .whl/ also gets scikit-learn, scipy, joblib and threadpoolctl for CPython 3.X
#   (about 45 MB more: with it the carried files pass the device's 64 MiB limit unless bfly-lda is left out;
#   without it the bench uses the device's own scikit-learn if it has one and otherwise skips it).
set -euo pipefail
root=$(pwd)
[[ -f "$root/CMakeLists.txt" && -d "$root/bench/lda" ]] || { echo "run from the repository root" >&2; exit 2; }
sklearn_python=""
[[ "${1:-}" == "--with-sklearn" ]] && sklearn_python=${2:?--with-sklearn needs a Python version such as 3.11}

mkdir -p build-deps/corpora build-deps/bin .whl
glosses=$(scripts/lda/fetch_real_corpus.sh "$root/build-deps/corpora/wordnet-glosses.txt" | tail -1)
kjv=$(scripts/lda/fetch_kjv_corpus.sh "$root/build-deps/corpora/kjv-chapters.txt" | tail -1)
gzip -9 -f "$glosses" "$kjv"

source scripts/cuda-env.sh
[[ -f /work/ccache-env.sh ]] && source /work/ccache-env.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release > /dev/null
cmake --build build --target bfly-lda bfly_gpu_tests > /dev/null
strip -o build-deps/bin/bfly-lda build/tools/bfly-lda/bfly-lda
strip -o build-deps/bin/bfly_gpu_tests build/tests/gpu/bfly_gpu_tests

python3 -m pip download -q --only-binary=:all: --no-deps -d .whl "tomotopy==0.14.0"
if [[ -n $sklearn_python ]]; then
  python3 -m pip download -q --only-binary=:all: --no-deps --python-version "$sklearn_python" \
    --platform manylinux_2_28_x86_64 --platform manylinux2014_x86_64 -d .whl scikit-learn scipy joblib threadpoolctl
fi
du -ch build-deps/corpora build-deps/bin .whl | tail -1
echo "carry: [\"build-deps\", \".whl\"]"
