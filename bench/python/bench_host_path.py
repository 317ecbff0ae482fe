#!/usr/bin/env python3
"""The host work of one bfly.sample call on a PyTorch CUDA tensor, measured without a GPU (and without PyTorch).

PyTorch is replaced by a stand-in whose tensors answer the attributes bfly reads (is_cuda, dtype, get_device(),
shape, stride(), data_ptr(), new_empty()) with plain Python values, and the weights have M = 0 rows, so a call
runs all of bfly's Python and compiled checks, the element-type lookup, the draws' allocation (a stand-in) and the
one call into bfly._bfly, and stops where the GPU path would make the device's context current and launch. What
this leaves out: PyTorch's own attribute costs (a real tensor's are somewhat dearer than the stand-in's), the
context switch and the launch (the C++ Sampler's cost, timed on a device by bench_sample.py).

--compare-with REV also times the Python layer of git revision REV (python/bfly/_sample.py there, M = 1 and its
launch call replaced by a no-op, since it checked nothing further in C++), for a before/after on this machine.
These are CPU numbers of this machine: microseconds per call, the minimum over --repeats of --calls calls.
"""
import argparse
import importlib.util
import subprocess
import sys
import time
import types
from pathlib import Path


def stand_in_torch():
    torch = types.ModuleType("torch")
    torch.__path__ = []

    class DType:
        def __init__(self, name):
            self.name = name

        def __str__(self):
            return "torch." + self.name

    class Tensor:
        __module__ = "torch"
        is_cuda = True
        device = "cuda:0"

        def __init__(self, shape, dtype):
            self.shape, self.dtype = tuple(shape), dtype
            self._stride = (self.shape[1], 1) if len(self.shape) == 2 else (1,)

        def get_device(self):
            return 0

        def stride(self):
            return self._stride

        def data_ptr(self):
            return 0x7F0000000000

        def new_empty(self, shape, dtype):
            return Tensor(shape, dtype)

    torch.Tensor = Tensor
    torch.float32, torch.int32 = DType("float32"), DType("int32")
    torch._C = types.SimpleNamespace(_cuda_getCurrentRawStream=lambda device: 0)
    torch.cuda = types.SimpleNamespace(current_device=lambda: 0)
    torch.empty = lambda shape, dtype, device: Tensor(shape, dtype)
    return torch


def per_call(fn, calls, repeats):
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for i in range(calls):
            fn(i)
        best = min(best, (time.perf_counter() - start) / calls)
    return best * 1e6


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=100000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--compare-with", metavar="REV", help="also time python/bfly/_sample.py of git revision REV")
    args = parser.parse_args()
    torch = sys.modules["torch"] = stand_in_torch()
    import bfly
    from bfly import _bfly

    w = torch.Tensor((0, 16), torch.float32)
    rows = [
        ("bfly.sample(w, seed=1, offset=i)", lambda i: bfly.sample(w, seed=1, offset=i)),
        ("bfly.sample(w, offset=i)  (seed=None)", lambda i: bfly.sample(w, offset=i)),
        ("bfly.sample(w, 4, replacement=False, ...)", lambda i: bfly.sample(w, 4, replacement=False, seed=1, offset=i)),
        ("bfly.sample_logits(w, temperature=0.7, ...)", lambda i: bfly.sample_logits(w, temperature=0.7, seed=1,
                                                                                    offset=i)),
        ("  the one _bfly.sample_gpu call alone", lambda i: _bfly.sample_gpu(0, w.data_ptr(), (0, 16), (16, 1), False, 0,
                                                                           0x7F0000100000, None, True, False, 1.0, 1,
                                                                           i, 0)),
        ("  the stand-in's attribute reads", lambda i: (w.is_cuda, w.dtype, w.get_device(), w.shape, w.stride(),
                                                        w.data_ptr(), w.new_empty((0,), torch.int32).data_ptr())),
    ]
    if args.compare_with:
        root = Path(__file__).resolve().parents[2]
        source = subprocess.run(["git", "-C", str(root), "show", f"{args.compare_with}:python/bfly/_sample.py"],
                                check=True, capture_output=True, text=True).stdout
        spec = importlib.util.spec_from_loader("bfly._sample_previous", loader=None)
        previous = importlib.util.module_from_spec(spec)
        previous.__package__ = "bfly"
        exec(compile(source, f"{args.compare_with}:python/bfly/_sample.py", "exec"), previous.__dict__)

        class WithoutLaunch:  # the previous layer's module, its launch a no-op
            def __getattr__(self, name):
                return getattr(_bfly, name)

            @staticmethod
            def sample_device(*arguments):
                pass

        previous._bfly = WithoutLaunch()
        one_row = torch.Tensor((1, 16), torch.float32)
        rows.append((f"{args.compare_with}: bfly.sample(w, seed=1, offset=i)",
                     lambda i: previous.sample(one_row, seed=1, offset=i)))
        rows.append((f"{args.compare_with}: bfly.sample(w, offset=i)", lambda i: previous.sample(one_row, offset=i)))
    print(f"host work per call, stand-in PyTorch CUDA tensor, CPU of this machine (min of {args.repeats} x "
          f"{args.calls} calls)")
    for name, fn in rows:
        print(f"{name:48} {per_call(fn, args.calls, args.repeats):7.2f} us")


if __name__ == "__main__":
    main()
