"""The Python tests: CPU tests always; tests marked `gpu` only with a CUDA device and driver (skipped otherwise).

Each session gets its own kernel cache (NVRTC entries and CPU kernel libraries), so a test never reads a kernel an
older bfly left behind; bfly reads BFLY_CACHE_DIR once, before the first kernel, so it is set here before import."""

import os
import sys
import tempfile

_cache = tempfile.TemporaryDirectory(prefix="bfly-pytest-cache-")
os.environ.setdefault("BFLY_CACHE_DIR", _cache.name)
# The GPU tests share the device between PyTorch, CuPy, JAX and bfly: JAX allocates as it goes instead of taking
# most of the memory up front.
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
sys.path.insert(0, os.path.dirname(__file__))  # reference.py

import pytest  # noqa: E402

import bfly  # noqa: E402


def pytest_collection_modifyitems(config, items):
    available, why = bfly.gpu_available()
    if available:
        return
    skip = pytest.mark.skip(reason=f"no GPU: {why}")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
