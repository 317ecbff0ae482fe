#!/usr/bin/env bash
# Run HERE (the build machine, with network), from the repository root, before bench/python/run_on_device.sh:
#   bash bench/python/prepare_device_wheels.sh
# The GPU machine has PyTorch, CuPy and NumPy for its Python 3.12 but cannot reach PyPI. This builds the bfly wheel
# for CPython 3.12 here (pip wheel ., with pyenv's or PYTHON312's interpreter; ccache makes rebuilds quick) and
# puts it into .whl/ (git-ignored), which the device call carries. pytest is not carried: the device's own pytest
# (with its plugins, such as pytest-timeout) is newer, and an older copy on PYTHONPATH breaks their hooks.
# About 2 MB.
set -euo pipefail
root=$(pwd)
[[ -f "$root/pyproject.toml" && -d "$root/python/bfly" ]] || { echo "run from the repository root" >&2; exit 2; }
python312=${PYTHON312:-$(ls -d "$HOME"/.pyenv/versions/3.12.*/bin/python3 2>/dev/null | tail -1)}
[[ -x "$python312" ]] || { echo "no CPython 3.12 found; set PYTHON312=/path/to/python3.12" >&2; exit 1; }
source scripts/cuda-env.sh
mkdir -p .whl
rm -f .whl/bfly-*.whl .whl/pytest-*.whl .whl/pluggy-*.whl .whl/iniconfig-*.whl
"$python312" -m pip wheel --no-deps -w .whl -C build-dir=build-python312 .
ls -la .whl
echo "carry \".whl\" in the device call (bench/python/run_on_device.sh)"
