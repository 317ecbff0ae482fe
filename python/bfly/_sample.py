"""bfly.sample: one or more categories per row of a 2-D weight array, on the GPU or the CPU.

Arrays are taken as they are, without a copy: a NumPy array (or a PyTorch CPU tensor) runs the generated kernel
on the CPU (bfly._cpu), a PyTorch or CuPy CUDA array runs it on the GPU on the caller's current stream, and a JAX
array (or any other object with __dlpack__ and __dlpack_device__) is received through DLPack and runs on bfly's
stream of its device (python/src/dlpack.cpp says how the order is kept). The draws come back as an int32 array of
the caller's framework, on the weights' device.
"""

from __future__ import annotations

import sys

import numpy as np

from . import _bfly, _cpu

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


def _check_out(out, like: _Array, shape) -> _Array:
    o = _view(out, "out")
    if o.framework != like.framework or o.on_gpu != like.on_gpu or o.device_index != like.device_index:
        raise ValueError(f"out is a {o.framework} array on {o.device}, but the input is a {like.framework} array "
                         f"on {like.device}; out must be of the same framework and on the same device")
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


_TYPE_INDEX = {tag: i for i, tag in enumerate(_bfly.element_type_tags())}  # "f32" -> bfly's element type index
_TYPE_INDICES: dict = {}  # framework dtype object -> that index, or None for a dtype bfly does not take


def _type_index(dtype, name: str, logits: bool) -> int:
    """bfly's index of a framework's dtype; TypeError naming the argument for any other dtype."""
    index = _TYPE_INDICES.get(dtype)
    if index is None:
        index = _TYPE_INDICES[dtype] = _TYPE_INDEX.get(_dtype_tag(dtype))
        if index is None:
            takes = "float32, float16 or bfloat16" if logits else _TYPE_NAMES
            raise TypeError(f"{name} has dtype {dtype}; bfly.sample{'_logits' if logits else ''} takes {takes} "
                            f"{name}")
    return index


def _draws_shape(shape, num_samples, name: str):
    """The draws' shape for an input of `shape`: (M,) for num_samples=None, else (M, num_samples)."""
    if len(shape) != 2:
        raise ValueError(f"{name} must be 2-D (M rows of K {name}), but it has shape {tuple(shape)}; for one "
                         f"distribution pass {name}[None, :]")
    return (int(shape[0]),) if num_samples is None else (int(shape[0]), num_samples)


_TORCH = None  # (torch.Tensor, torch.int32, torch's current raw stream of a device) once torch is imported


def _torch_pieces():
    """What the PyTorch CUDA path needs of torch, looked up once: None until torch has been imported."""
    global _TORCH
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    # torch._C._cuda_getCurrentRawStream(device) is what torch.cuda.current_stream(device).cuda_stream returns,
    # without building a torch.cuda.Stream.
    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    if raw is None:
        def raw(device):
            return torch.cuda.current_stream(device).cuda_stream
    _TORCH = (torch.Tensor, torch.int32, raw)
    return _TORCH


def _draw(x, num_samples, replacement, logits, temperature, seed, offset, out):
    """bfly.sample (logits=False) and bfly.sample_logits (logits=True). The hot path, a PyTorch CUDA tensor, reads
    the tensor's attributes, allocates the draws and makes one call to the compiled module, which checks the rest
    (strides, alignment, num_samples against K, seed, offset, temperature), finds the loaded kernel in its cache and
    enqueues it on torch's current stream of the tensor's device, in that device's primary context."""
    if num_samples is not None and (type(num_samples) is not int or num_samples < 1):
        raise ValueError(f"num_samples = {num_samples!r}; it must be None (one draw per row) or an integer >= 1")
    if replacement is not True and replacement is not False:
        raise TypeError(f"replacement = {replacement!r}; it must be True or False")
    name = "logits" if logits else "weights"
    torch = _TORCH or _torch_pieces()
    if torch is not None and isinstance(x, torch[0]) and x.is_cuda:
        index = _TYPE_INDICES.get(x.dtype)
        if index is None:
            index = _type_index(x.dtype, name, logits)
        device = x.get_device()
        shape = x.shape
        if len(shape) != 2:
            _draws_shape(shape, num_samples, name)  # raises, naming the shape
        draws_shape = (shape[0],) if num_samples is None else (shape[0], num_samples)
        if out is None:
            result = x.new_empty(draws_shape, dtype=torch[1])
        else:
            result = _check_out(out, _Array("torch", x, True, device, 0, shape, (), x.dtype), draws_shape).obj
        _bfly.sample_gpu(index, x.data_ptr(), shape, x.stride(), False, device, result.data_ptr(), num_samples,
                         replacement, logits, temperature, seed, offset, torch[2](device))
        return result

    w = _view(x, name)
    if w.framework in _DLPACK_FRAMEWORKS:
        return _draw_dlpack(w, num_samples, replacement, logits, temperature, seed, offset, out)
    index = _type_index(w.dtype, name, logits)
    draws_shape = _draws_shape(w.shape, num_samples, name)
    result = _check_out(out, w, draws_shape).obj if out is not None else None
    # NumPy and CuPy give strides in bytes, PyTorch and DLPack (bfly._bfly.DlpackArray) in elements.
    strides, in_bytes = (w.obj.strides, True) if w.framework in ("numpy", "cupy") else (w.strides, False)
    if not w.on_gpu:
        call = _bfly.check_call(index, w.pointer, w.shape, strides, in_bytes, num_samples, replacement, logits,
                                temperature, seed, offset)
        if result is None:
            result = _empty_draws(w, draws_shape)
        if call.M > 0:
            _cpu.kernel(call.spec).run(call, _pointer(result), 0)
        return result
    # CuPy: its current stream and allocations are the current device's, so the array's device is made current
    # first (when it is not already).
    cupy = sys.modules["cupy"]
    if cupy.cuda.runtime.getDevice() == w.device_index:
        return _launch_cupy(cupy, w, index, strides, in_bytes, draws_shape, result, num_samples, replacement, logits,
                            temperature, seed, offset)
    with cupy.cuda.Device(w.device_index):
        return _launch_cupy(cupy, w, index, strides, in_bytes, draws_shape, result, num_samples, replacement, logits,
                            temperature, seed, offset)


def _launch_cupy(cupy, w, index, strides, in_bytes, draws_shape, result, num_samples, replacement, logits,
                 temperature, seed, offset):
    if result is None:
        result = cupy.empty(draws_shape, dtype=cupy.int32)
    _bfly.sample_gpu(index, w.pointer, w.shape, strides, in_bytes, w.device_index, result.data.ptr, num_samples,
                     replacement, logits, temperature, seed, offset, cupy.cuda.get_current_stream().ptr)
    return result


def sample(weights, num_samples=None, *, replacement=True, seed=None, offset=0, out=None):
    """Draws categories from each row of `weights`, a 2-D array of M rows of K non-negative, unnormalised
    weights (float32, float64, float16 or bfloat16), as ``torch.multinomial`` does.

    - A NumPy array (or PyTorch CPU tensor) runs on the CPU; a PyTorch or CuPy CUDA array on its GPU, enqueued
      on the caller's current stream without a copy and without waiting for it. A JAX array (or any array with
      __dlpack__) is taken through DLPack and, on a GPU, runs on bfly's stream of its device, ordered after the
      weights and before the consumer of the draws by DLPack's stream contract (docs/PYTHON.md).
    - ``num_samples=None`` draws one category per row: shape (M,). An integer n draws n per row: shape (M, n),
      like ``torch.multinomial(weights, n, replacement)``. With ``replacement=True`` the n draws are independent
      (n up to 2**24); with ``replacement=False`` they are n distinct categories, each drawn from the weights of the
      categories not drawn before (n up to min(K, 64)); a row with fewer than n positive weights draws each of them
      once and -1 for the rest.
    - The draws are int32, in the weights' framework and on their device (or written into ``out``).
    - Draw d of row r depends only on (seed, offset, r, d, the row's weights): not on M, the device (CPU and GPU
      draw the same categories) or the stream. ``seed=None`` takes a fresh random seed; a new ``offset`` draws
      again with fresh uniforms.
    - Rows with a negative, NaN or infinite weight, or a zero total, come back as -1: ``bfly.invalid_rows(draws)``.
    """
    return _draw(weights, num_samples, replacement, False, 1.0, seed, offset, out)


def sample_logits(logits, num_samples=None, *, temperature=1.0, replacement=True, seed=None, offset=0, out=None):
    """Draws categories from softmax(logits / temperature) of each row of `logits`, a 2-D array of M rows of K
    float32, float16 or bfloat16 logits, without forming the probabilities: what
    ``bfly.sample(softmax(logits / temperature), ...)`` draws, in one pass over the logits. A -inf logit is never
    drawn; a row with a NaN or +inf, or with every logit -inf, comes back as -1. ``temperature`` must be positive
    and finite. Everything else is as for :func:`sample`; one draw per row (``num_samples=None``) is the n = 1 draw.
    """
    if not isinstance(temperature, (int, float)) or isinstance(temperature, bool):
        raise ValueError(f"temperature = {temperature!r}; it must be a positive, finite number")
    return _draw(logits, num_samples, replacement, True, float(temperature), seed, offset, out)


_DLPACK_FRAMEWORKS = ("jax", "dlpack")


def _draw_dlpack(w: _Array, num_samples, replacement, logits, temperature, seed, offset, out):
    """_draw for JAX and other DLPack arrays (read by _view): a JAX array back for JAX, for another framework on
    the GPU a bfly._bfly.DeviceDraws (its from_dlpack takes it without a copy), on the CPU NumPy."""
    if out is not None:
        raise TypeError("out is not taken with JAX or other DLPack arrays (JAX arrays are immutable); the draws "
                        "are returned")
    jax_result = w.framework == "jax"
    if not w.on_gpu:  # the CPU: a NumPy view of the input; the draws copied into a JAX array
        host = _draw(w.obj, num_samples, replacement, logits, temperature, seed, offset, None)
        return sys.modules["jax"].numpy.asarray(host) if jax_result else host
    name = "logits" if logits else "weights"
    index = _type_index(w.dtype, name, logits)
    result = _bfly.DeviceDraws(w.device_index, list(_draws_shape(w.shape, num_samples, name)))
    stream = _bfly.dlpack_stream(w.device_index)
    _bfly.sample_gpu(index, w.pointer, w.shape, w.strides, False, w.device_index, result.pointer, num_samples,
                     replacement, logits, temperature, seed, offset, stream)
    result.finish(stream, [w.obj])  # the event consumers wait for; the input stays referenced until then
    return sys.modules["jax"].dlpack.from_dlpack(result) if jax_result else result


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
