"""bfly: draw categories from many discrete distributions at once with generated butterfly-table kernels
(Steele & Tristan), on the GPU (NVRTC, compiled at run time) or the CPU, and train LDA topic models.

    bfly.sample(weights, num_samples=None, *, replacement=True, seed=None, offset=0, out=None)   draws per row
    bfly.sample_logits(logits, num_samples=None, *, temperature=1.0, ...)                       from softmax(x / T)
    bfly.invalid_rows(draws)                                                 rows that could not be drawn
    bfly.LDA(n_topics, alpha=0.1, beta=0.01, ...)                           LDA in scikit-learn style
    bfly.generate / bfly.show / bfly.inspect                                 the generated kernels

docs/PYTHON.md has the details. The module imports without a GPU or a driver: libcuda is opened on first use.
"""

from . import _bfly
from ._bfly import Error, KernelSpec
from ._bfly import version as _version
from ._codegen import CompileReport, GeneratedSource, generate, inspect, show, spec
from ._lda import LDA
from ._sample import invalid_rows, sample, sample_logits

__version__ = _version()


def gpu_available() -> tuple[bool, str]:
    """(True, "") when a CUDA driver and device can be used, else (False, why)."""
    return _bfly.gpu_available()


__all__ = ["Error", "KernelSpec", "CompileReport", "GeneratedSource", "LDA", "generate", "gpu_available",
           "inspect", "invalid_rows", "sample", "sample_logits", "show", "spec"]
