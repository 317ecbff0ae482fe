"""bfly.sample: one or more categories per row of a 2-D weight array, on the GPU or the CPU.

Arrays are taken as they are, without a copy: a NumPy array (or a PyTorch CPU tensor) runs the generated kernel
on the CPU (bfly._cpu), a PyTorch or CuPy CUDA array runs it on the GPU on the caller's current stream, and a JAX
array (or any other object with __dlpack__ and __dlpack_device__) is received through DLPack and runs on bfly's
stream of its device (python/src/dlpack.cpp says how the order is kept). The draws come back as an int32 array of
the caller's framework, on the weights' device.
"""

from __future__ import annotations

import secrets
import sys

import numpy as np

from . import _bfly, _cpu

_MAX_ITERATION = 2**32 - 1
_MAX_SEED = 2**64 - 1

_TYPE_NAMES = "float32, float64, float16 or bfloat16"
_DTYPE_TAGS: dict = {}  # framework dtype object -> "f32", "f64", "f16", "bf16" or "i32" (the draws' type)


def _dtype_tag(dtype):
    """The bfly tag of a NumPy, CuPy or PyTorch dtype (None for any other): a dictionary lookup, since reading
    dtype names costs microseconds per call."""
    tag = _DTYPE_TAGS.get(dtype)
    if tag is None and dtype not in _DTYPE_TAGS:
        name = str(dtype).removeprefix("torch.")
        tag = {"float32": "f32", "float64": "f64", "float16": "f16", "bfloat16": "bf16", "int32": "i32"}.get(name)
        _DTYPE_TAGS[dtype] = tag
    return tag


class _Array:
    """What bfly needs of an array: where it is, its layout in elements and its element type."""

    __slots__ = ("framework", "obj", "on_gpu", "device_index", "pointer", "shape", "strides", "dtype", "tag")

    def __init__(self, framework, obj, on_gpu, device_index, pointer, shape, strides, dtype):
        self.framework = framework
        self.obj = obj
        self.on_gpu = on_gpu
        self.device_index = device_index
        self.pointer = pointer
        self.shape = shape
        self.strides = strides  # in elements
        self.dtype = dtype      # the framework's dtype object (str() for messages)
        self.tag = _dtype_tag(dtype)

    @property
    def device(self) -> str:
        return f"cuda:{self.device_index}" if self.on_gpu else "cpu"


def _element_strides(byte_strides, itemsize):
    return tuple(s // itemsize if s % itemsize == 0 else None for s in byte_strides)


def _view(obj, name: str) -> _Array:
    """Reads `obj` (argument `name`) as an _Array without copying; TypeError for anything else."""
    module = type(obj).__module__.partition(".")[0]
    if module == "torch":
        torch = sys.modules["torch"]
        if isinstance(obj, torch.Tensor):
            on_gpu = obj.is_cuda
            if not on_gpu and obj.device.type != "cpu":
                raise ValueError(f"{name} is on the device {obj.device}; bfly runs on CUDA devices and on the CPU")
            return _Array("torch", obj, on_gpu, obj.get_device() if on_gpu else 0, obj.data_ptr(), obj.shape,
                          obj.stride(), obj.dtype)
    elif module == "cupy":
        cupy = sys.modules["cupy"]
        if isinstance(obj, cupy.ndarray):
            return _Array("cupy", obj, True, obj.device.id, obj.data.ptr, obj.shape,
                          _element_strides(obj.strides, obj.itemsize), obj.dtype)
    elif module == "numpy":
        if isinstance(obj, np.ndarray):
            if not obj.dtype.isnative:
                raise TypeError(f"{name} has the non-native byte order {obj.dtype.str}; pass {name}.astype(np."
                                f"{obj.dtype.name})")
            return _Array("numpy", obj, False, 0, obj.ctypes.data, obj.shape,
                          _element_strides(obj.strides, obj.itemsize), obj.dtype)
    if hasattr(obj, "__dlpack__") and hasattr(obj, "__dlpack_device__") and not isinstance(obj, _bfly.DeviceDraws):
        return _dlpack_view(obj, name, "jax" if module in ("jax", "jaxlib") else "dlpack")
    raise TypeError(f"{name} must be a NumPy array, a PyTorch tensor, a CuPy or JAX array, or an array with "
                    f"__dlpack__, not {type(obj).__name__}")


_DL_CPU, _DL_CUDA = 1, 2  # DLPack device types


def _dlpack_view(obj, name: str, framework: str) -> _Array:
    """A JAX (or other DLPack) array: on the CPU as a NumPy view (np.from_dlpack, no copy); on a CUDA device
    received with __dlpack__(stream=bfly's stream of that device), so that the stream waits until the producer's
    data is ready (DLPack's stream contract; JAX inserts an event wait, no host block)."""
    device_type, device_id = obj.__dlpack_device__()
    if device_type == _DL_CPU:
        host = np.from_dlpack(obj)
        return _Array(framework, host, False, 0, host.ctypes.data, host.shape,
                      _element_strides(host.strides, host.itemsize), host.dtype)
    if device_type != _DL_CUDA:
        raise ValueError(f"{name} is on DLPack device type {device_type}; bfly runs on CUDA devices and the CPU")
    received = _bfly.DlpackArray(obj.__dlpack__(stream=_bfly.dlpack_stream(device_id)))
    return _Array(framework, received, True, device_id, received.pointer, tuple(received.shape),
                  tuple(received.strides), received.dtype)


def _current_stream(array: _Array) -> int:
    """The caller's current stream on the array's device, as a CUstream integer."""
    if array.framework == "torch":
        torch = sys.modules["torch"]
        raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)  # what current_stream().cuda_stream returns
        if raw is not None:
            return raw(array.device_index)
        return torch.cuda.current_stream(array.device_index).cuda_stream
    return sys.modules["cupy"].cuda.get_current_stream().ptr


def _device_guard(array: _Array):
    """A context that makes the array's device current (its primary context is where bfly launches), or None
    when it is current already."""
    if array.framework == "torch":
        torch = sys.modules["torch"]
        if torch.cuda.current_device() == array.device_index:
            return None
        return torch.cuda.device(array.device_index)
    cupy = sys.modules["cupy"]
    if cupy.cuda.runtime.getDevice() == array.device_index:
        return None
    return cupy.cuda.Device(array.device_index)


def _empty_draws(like: _Array, shape):
    if like.framework == "numpy":
        return np.empty(shape, dtype=np.int32)
    if like.framework == "torch":
        torch = sys.modules["torch"]
        return torch.empty(shape, dtype=torch.int32, device=like.obj.device)
    cupy = sys.modules["cupy"]
    with cupy.cuda.Device(like.device_index):
        return cupy.empty(shape, dtype=cupy.int32)


def _pointer(draws) -> int:
    """The data pointer of an int32 array made by _empty_draws or checked by _check_out."""
    if hasattr(draws, "data_ptr"):
        return draws.data_ptr()
    if hasattr(draws, "ctypes"):
        return draws.ctypes.data
    return draws.data.ptr


def _check_weights(weights) -> tuple[_Array, str, int, int, int]:
    """(array, type tag, M, K, ld) of valid weights; ValueError/TypeError naming `weights` otherwise."""
    w = _view(weights, "weights")
    if len(w.shape) != 2:
        raise ValueError(f"weights must be 2-D (M rows of K weights), but it has shape {tuple(w.shape)}; "
                         "for one distribution pass weights[None, :]")
    tag = w.tag
    if tag is None or tag == "i32":
        raise TypeError(f"weights has dtype {w.dtype}; bfly.sample takes {_TYPE_NAMES} weights")
    M, K = (int(n) for n in w.shape)
    if K < 1 or K > _bfly.max_categories():
        raise ValueError(f"weights has K = {K} columns; K must be in 1 .. {_bfly.max_categories()}")
    row_stride, column_stride = w.strides
    if M == 0:
        return w, tag, M, K, K
    if K > 1 and column_stride != 1:
        raise ValueError(f"weights must have its rows' elements contiguous (column stride 1), but its strides are "
                         f"{w.strides} elements; pass a contiguous copy (e.g. .contiguous() or np.ascontiguousarray)")
    ld = K if M <= 1 else row_stride
    if ld is None or ld < K:
        raise ValueError(f"weights has a row stride of {row_stride} elements, less than its K = {K} columns (rows "
                         "must not overlap or run backwards); pass a contiguous copy")
    if w.pointer % _bfly.element_size(tag) != 0:
        raise ValueError(f"weights' data at {w.pointer:#x} is not aligned to its {_bfly.element_size(tag)}-byte "
                         "elements")
    return w, tag, M, K, ld


def _check_out(out, like: _Array, shape) -> _Array:
    o = _view(out, "out")
    if o.framework != like.framework or o.on_gpu != like.on_gpu or o.device_index != like.device_index:
        raise ValueError(f"out is a {o.framework} array on {o.device}, but weights is a {like.framework} array on "
                         f"{like.device}; out must be of the same framework and on the same device")
    if o.tag != "i32":
        raise TypeError(f"out has dtype {o.dtype}; it must be int32")
    if o.framework == "numpy" and not o.obj.flags.writeable:
        raise ValueError("out is read-only")
    if tuple(o.shape) != tuple(shape):
        raise ValueError(f"out has shape {tuple(o.shape)}; the draws need shape {tuple(shape)}")
    contiguous = [1] if len(shape) == 1 else [shape[1], 1]
    if any(n > 1 and s != c for n, s, c in zip(shape, o.strides, contiguous)):
        raise ValueError(f"out must be C-contiguous, but its strides are {o.strides} elements")
    return o


def _seed_and_offset(seed, offset, draws: int) -> tuple[int, int]:
    if seed is None:
        seed = secrets.randbits(64)
    elif not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed <= _MAX_SEED:
        raise ValueError(f"seed = {seed!r}; it must be None or an integer in 0 .. 2**64 - 1")
    if not isinstance(offset, int) or isinstance(offset, bool) or not 0 <= offset <= _MAX_ITERATION - (draws - 1):
        raise ValueError(f"offset = {offset!r}; it must be an integer in 0 .. 2**32 - {draws} "
                         f"(draw d of a row uses Philox iteration offset + d)")
    return seed, offset


def _launch(w: _Array, tag: str, M: int, K: int, ld: int, out_pointer: int, seed: int, iteration: int, stream: int):
    if w.on_gpu:
        _bfly.sample_device(w.pointer, tag, M, K, ld, out_pointer, seed, iteration, stream)
    else:
        _cpu.kernel(_bfly.sample_spec(K, tag, M=M)).sample(w.pointer, M, ld, out_pointer, seed, iteration, 0)


def sample(weights, num_samples=None, *, replacement=True, seed=None, offset=0, out=None):
    """Draws categories from each row of `weights`, a 2-D array of M rows of K non-negative, unnormalised
    weights (float32, float64, float16 or bfloat16).

    - A NumPy array (or PyTorch CPU tensor) runs on the CPU; a PyTorch or CuPy CUDA array on its GPU, enqueued
      on the caller's current stream without a copy and without waiting for it. A JAX array (or any array with
      __dlpack__) is taken through DLPack and, on a GPU, runs on bfly's stream of its device, ordered after the
      weights and before the consumer of the draws by DLPack's stream contract (docs/PYTHON.md).
    - ``num_samples=None`` draws one category per row: shape (M,). An integer n draws n per row, with
      replacement: shape (M, n), like ``torch.multinomial(weights, n, replacement=True)``.
    - The draws are int32, in the weights' framework and on their device (or written into ``out``).
    - Draw d of row r depends only on (seed, offset + d, r, the row's weights): not on M, the device (CPU and GPU
      draw the same categories) or the stream. ``seed=None`` takes a fresh random seed.
    - Rows with a negative, NaN or infinite weight, or a zero total, come back as -1: ``bfly.invalid_rows(draws)``.
    """
    w, tag, M, K, ld = _check_weights(weights)
    if num_samples is not None and (not isinstance(num_samples, int) or isinstance(num_samples, bool)
                                    or num_samples < 1):
        raise ValueError(f"num_samples = {num_samples!r}; it must be None (one draw per row) or an integer >= 1")
    if not replacement:
        raise NotImplementedError("bfly.sample(replacement=False): drawing without replacement is not implemented "
                                  "yet; draws with replacement are (replacement=True)")
    draws = 1 if num_samples is None else num_samples
    seed, offset = _seed_and_offset(seed, offset, draws)
    shape = (M,) if num_samples is None else (M, num_samples)
    if w.framework in _DLPACK_FRAMEWORKS:
        return _sample_dlpack(w, tag, M, K, ld, num_samples, seed, offset, out)
    result = _check_out(out, w, shape).obj if out is not None else None
    if M == 0:
        return result if result is not None else _empty_draws(w, shape)

    device_guard = _device_guard(w) if w.on_gpu else None
    if device_guard is not None:
        device_guard.__enter__()
    try:
        stream = _current_stream(w) if w.on_gpu else 0
        if draws == 1:
            target = result if result is not None else _empty_draws(w, shape)
            _launch(w, tag, M, K, ld, _pointer(target), seed, offset, stream)
            return target
        # Draw d goes to row d of a (draws, M) buffer (the kernel writes one contiguous int per row), then the
        # buffer is transposed into the (M, draws) result.
        buffer = _empty_draws(w, (draws, M))
        base = _pointer(buffer)
        for d in range(draws):
            _launch(w, tag, M, K, ld, base + 4 * M * d, seed, offset + d, stream)
        if result is None:
            result = _empty_draws(w, shape)
        if w.framework == "torch":
            result.copy_(buffer.t())
        else:
            result[...] = buffer.T
        return result
    finally:
        if device_guard is not None:
            device_guard.__exit__(None, None, None)


_DLPACK_FRAMEWORKS = ("jax", "dlpack")


def _sample_dlpack(w: _Array, tag: str, M: int, K: int, ld: int, num_samples, seed: int, offset: int, out):
    """sample() for JAX and other DLPack weights (checked by sample): a JAX array back for JAX, for another
    framework on the GPU a bfly._bfly.DeviceDraws (its from_dlpack takes it without a copy), on the CPU NumPy."""
    if out is not None:
        raise TypeError("out is not taken with JAX or other DLPack weights (JAX arrays are immutable); the draws "
                        "are returned")
    draws = 1 if num_samples is None else num_samples
    jax_result = w.framework == "jax"
    if not w.on_gpu or M == 0:  # the CPU: a NumPy view of the weights; the draws copied into a JAX array
        host = sample(w.obj if not w.on_gpu else np.empty((0, K), np.float32), num_samples, seed=seed, offset=offset)
        return sys.modules["jax"].numpy.asarray(host) if jax_result else host
    # Draw d of row r at d * M + r (one launch per draw); JAX gets (draws, M) and transposes, other consumers a
    # column-major (M, draws) view.
    shape = [M] if num_samples is None else ([draws, M] if jax_result else [M, draws])
    result = _bfly.DeviceDraws(w.device_index, shape, column_major=num_samples is not None and not jax_result)
    stream = _bfly.dlpack_stream(w.device_index)
    with _bfly.PrimaryContext(w.device_index):
        for d in range(draws):
            _launch(w, tag, M, K, ld, result.pointer + 4 * M * d, seed, offset + d, stream)
        result.finish(stream, [w.obj])  # the event consumers wait for; the weights stay referenced until then
    if not jax_result:
        return result
    jax_draws = sys.modules["jax"].dlpack.from_dlpack(result)
    return jax_draws if num_samples is None else jax_draws.T


def invalid_rows(draws):
    """The indices of the rows that `sample` could not draw from (returned as -1: a negative, NaN or infinite
    weight, or a zero total), as an int64 array of the draws' framework; ``len()`` of it counts them. Reading it
    waits for the draws (on the GPU, a device-to-host copy of the count)."""
    d = _view(draws, "draws")
    if len(d.shape) not in (1, 2):
        raise ValueError(f"draws must be what bfly.sample returned (1-D or 2-D), but it has shape {d.shape}")
    bad = draws == -1
    if len(d.shape) == 2:
        bad = bad.any(1) if d.framework == "torch" else bad.any(axis=1)
    if d.framework == "torch":
        return sys.modules["torch"].nonzero(bad).flatten()
    if d.framework == "cupy":
        return sys.modules["cupy"].flatnonzero(bad)
    if d.framework == "jax":
        return sys.modules["jax"].numpy.flatnonzero(bad)
    return np.flatnonzero(bad)
