#!/usr/bin/env bash
# The one command for the GPU machine, from the repository root, after bench/python/prepare_device_wheels.sh here
# (carry ".whl"):
#   bash bench/python/run_on_device.sh [bench_sample.py options]
# 1. installs the bfly wheel from .whl/ into a fresh /tmp/site (pytest is the machine's own) (the machine's PyTorch, CuPy and NumPy stay);
# 2. runs the GPU tests (python/tests/test_gpu.py: every element type and form on the GPU against the CPU path; the
#    CPU tests run in CI) unless BFLY_SKIP_TESTS=1 (the log: $OUT/python-tests.log);
# 3. runs bench/python/bench_sample.py with the options given (bfly.sample against torch.multinomial and
#    torch.distributions.Categorical, several draws and logits, and the per-call overhead against C++), writing its
#    CSV and log to $OUT.
# About 2 minutes for the tests on an H100 (they compile about 25 CPU kernels with the host compiler) and 1 to 2 for
# the bench with its defaults (20 NVRTC kernels); `--parts overhead draws --types f32` keeps the bench under a minute.
set -uo pipefail
root=$(pwd)
out=${OUT:-$root/bench/results}
mkdir -p "$out"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}  # libnvrtc
rm -rf /tmp/site
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
  || exit 1
export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
status=0
if [[ "${BFLY_SKIP_TESTS:-0}" != 1 ]]; then
  (cd /tmp && python3 -m pytest -q -ra -p no:cacheprovider --durations=5 "$root/python/tests/test_gpu.py") 2>&1 |
    tee "$out/python-tests.log" || status=1
fi
python3 "$root/bench/python/bench_sample.py" --out-dir "$out" "$@" 2>&1 | tee "$out/python-sample-bench.log" || status=1
exit $status
