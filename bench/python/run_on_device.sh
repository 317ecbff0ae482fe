#!/usr/bin/env bash
# The one command for the GPU machine, from the repository root, after bench/python/prepare_device_wheels.sh here
# (carry ".whl"):
#   bash bench/python/run_on_device.sh
# 1. installs the bfly wheel from .whl/ into a fresh /tmp/site (pytest is the machine's own) (the machine's PyTorch, CuPy and NumPy stay);
# 2. runs the Python tests, the GPU ones included (python/tests; the log: $OUT/python-tests.log);
# 3. runs bench/python/bench_sample.py (bfly.sample against torch.multinomial and torch.distributions.Categorical,
#    and the per-call overhead against C++), writing its CSV and log to $OUT.
# About 3 minutes on an H100 (the tests compile about 20 CPU kernels; the bench, 20 NVRTC kernels).
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
(cd /tmp && python3 -m pytest -q -ra -p no:cacheprovider "$root/python/tests") 2>&1 | tee "$out/python-tests.log" \
  || status=1
python3 "$root/bench/python/bench_sample.py" --out-dir "$out" 2>&1 | tee "$out/python-sample-bench.log" || status=1
exit $status
