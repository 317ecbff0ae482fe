"""CPU kernels: the generated CUDA source of a spec compiled by the host C++ compiler into a shared library.

The GPU runs a kernel that NVRTC compiled from bfly's generated source. On the CPU the same source, with
bfly/lockstep.hpp in front (docs/CPU_EXECUTION.md), is compiled by the host C++ compiler (``BFLY_CXX``, else
``CXX``, else ``c++``) with ``-ffp-contract=off`` (NVRTC compiles with ``--fmad=false``), so a NumPy array draws
exactly the categories a GPU array draws for the same seed. Libraries are cached on disk beside the NVRTC cache,
in ``<cache>/cpu/`` (``BFLY_CACHE_DIR``, ``BFLY_CACHE``: docs/RUNTIME.md), under a name holding a SHA-256 of the
translation unit, the compiler's identity and the flags; in memory they stay loaded for the process.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path

from . import _bfly

_FLAGS = ("-std=c++20", "-O2", "-fPIC", "-shared", "-pthread", "-ffp-contract=off", "-Wno-unknown-pragmas")
_INCLUDE_DIR = Path(__file__).resolve().parent / "include"

_lock = threading.Lock()
_loaded: dict[str, object] = {}  # kernel name -> _bfly.CpuKernelLibrary
_compiler_identity: dict[tuple, str] = {}
_temporary_cache: tempfile.TemporaryDirectory | None = None


def compiler() -> list[str]:
    """The host C++ compiler command: BFLY_CXX, else CXX, else c++ (split like a shell word list)."""
    for variable in ("BFLY_CXX", "CXX"):
        value = os.environ.get(variable, "").strip()
        if value:
            return shlex.split(value)
    return ["c++"]


def _identity(command: list[str]) -> str:
    key = tuple(command)
    if key not in _compiler_identity:
        if shutil.which(command[0]) is None:
            raise _bfly.Error(
                f"the CPU path compiles bfly's generated kernel with the host C++ compiler, and '{command[0]}' was "
                "not found; install g++ or clang++, or name one in BFLY_CXX")
        result = subprocess.run(command + ["--version"], capture_output=True, text=True)
        _compiler_identity[key] = result.stdout.strip()
    return _compiler_identity[key]


def cache_directory() -> Path:
    """Where CPU kernel libraries are kept: <bfly cache>/cpu, or a directory of this process when the disk
    cache is off (BFLY_CACHE=0) or has no location."""
    global _temporary_cache
    base = _bfly.cache_directory()
    if base is not None:
        return Path(base) / "cpu"
    if _temporary_cache is None:
        _temporary_cache = tempfile.TemporaryDirectory(prefix="bfly-cpu-")
    return Path(_temporary_cache.name)


def library_path(spec) -> tuple[Path, str]:
    """The cache path of spec's CPU library and the translation unit it is built from."""
    command = compiler()
    unit = _bfly.cpu_translation_unit(spec)
    key = hashlib.sha256("\0".join(
        [_bfly.version(), " ".join(command), _identity(command), " ".join(_FLAGS), unit]).encode()).hexdigest()
    return cache_directory() / f"{spec.name}_{key[:16]}.so", unit


def _build(path: Path, unit: str) -> None:
    """Compiles `unit` into `path` atomically (a temporary in the same directory, renamed into place), so that
    several processes may fill one cache at once."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        directory = path.parent
    except OSError:
        directory = Path(tempfile.mkdtemp(prefix="bfly-cpu-"))
        path = directory / path.name
    with tempfile.TemporaryDirectory(dir=directory, prefix=".build-") as work:
        source = Path(work) / (path.stem + ".cpp")
        source.write_text(unit)
        output = Path(work) / path.name
        command = compiler() + list(_FLAGS) + ["-I", str(_INCLUDE_DIR), str(source), "-o", str(output)]
        result = subprocess.run(command, capture_output=True, text=True)
        if result.returncode != 0:
            raise _bfly.Error(f"compiling the CPU kernel {path.stem} failed ({' '.join(command)}):\n"
                              f"{result.stderr[-4000:]}")
        os.replace(output, path)
    return path


def kernel(spec):
    """The CPU kernel library of `spec` (a _bfly.KernelSpec), built on first use and loaded once per process."""
    name = spec.name
    library = _loaded.get(name)
    if library is not None:
        return library
    with _lock:
        library = _loaded.get(name)
        if library is None:
            path, unit = library_path(spec)
            if not path.is_file():
                path = _build(path, unit)
            try:
                library = _bfly.CpuKernelLibrary(str(path), spec)
            except _bfly.Error:
                path.unlink(missing_ok=True)  # a damaged entry: rebuild it once
                library = _bfly.CpuKernelLibrary(str(_build(path, unit)), spec)
            _loaded[name] = library
    return library
