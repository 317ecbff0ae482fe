"""bfly.spec, bfly.generate, bfly.show, bfly.inspect: the generator and the NVRTC compile report from Python, as
bfly-gen show and bfly-gen inspect print them (docs/BFLY_GEN.md)."""

from __future__ import annotations

from dataclasses import dataclass, field

from . import _bfly

_TYPES = {"f32": "f32", "float32": "f32", "f64": "f64", "float64": "f64", "f16": "f16", "float16": "f16",
          "bf16": "bf16", "bfloat16": "bf16"}


def spec(K=None, *, type="f32", W=None, variant=None, R=None, name=None):
    """A sampling kernel spec: the one bfly.sample uses for K categories of `type` (f32, f64, f16, bf16, or the
    NumPy names), with W, variant ("swap", "addsub") and R forced where given; or the spec of a kernel `name`
    such as "bfly_sample_f32_w32_k1024_r8_addsub" (any operation)."""
    if name is not None:
        if K is not None or W is not None or variant is not None or R is not None:
            raise ValueError("spec: give either name or K (with type, W, variant, R), not both")
        return _bfly.parse_kernel_name(name)
    if K is None:
        raise ValueError("spec: K (the number of categories) is required unless a kernel name is given")
    if not isinstance(K, int) or isinstance(K, bool):
        raise TypeError(f"K = {K!r}; it must be an integer")
    tag = _TYPES.get(str(type))
    if tag is None:
        raise ValueError(f"type = {type!r}; it must be one of f32, f64, f16, bf16 (or float32, float64, float16, "
                         "bfloat16)")
    return _bfly.sample_spec(K, tag, W, variant, R)


def _spec_of(first, kwargs):
    if first is not None and not isinstance(first, int):
        if kwargs:
            raise ValueError("give a KernelSpec alone, or K with type, W, variant, R")
        if isinstance(first, str):
            return spec(name=first)
        return first
    return spec(first, **kwargs)


@dataclass(frozen=True)
class GeneratedSource:
    """One generated kernel: `source` is the text NVRTC compiles (bfly's fragments included by name),
    `inlined` the same with the fragments pasted in (self-contained)."""
    spec: object
    kernel_name: str
    source: str = field(repr=False)
    inlined: str = field(repr=False)
    family: str
    description: str

    def __str__(self) -> str:
        return self.source


def generate(spec_or_K=None, **kwargs) -> GeneratedSource:
    """Generates the kernel of a spec (a KernelSpec, a kernel name, or K with type, W, variant, R as for
    bfly.spec)."""
    s = _spec_of(spec_or_K, kwargs)
    kernel_name, text, inlined, family, description = _bfly.generate(s)
    return GeneratedSource(s, kernel_name, text, inlined, family, description)


def show(spec_or_K=None, *, inline=False, **kwargs) -> str:
    """The source `bfly-gen show` prints (with inline=True, `bfly-gen show --inline`)."""
    g = generate(spec_or_K, **kwargs)
    return g.inlined if inline else g.source


@dataclass(frozen=True)
class CompileReport:
    """What NVRTC made of a kernel, as `bfly-gen inspect` reports it (`text`, also str(report))."""
    kernel_name: str
    description: str
    arch: str
    options: list
    resources_known: bool  # False for a PTX target (only the driver compiles it)
    registers: int
    spill_store_bytes: int
    spill_load_bytes: int
    local_bytes: int
    static_shared_bytes: int
    cache_entry: str       # the disk cache entry (empty when the disk cache is off)
    cache_level: str       # where the kernel came from: "memory", "disk" or "built"
    text: str = field(repr=False)

    def __str__(self) -> str:
        return self.text


def inspect(spec_or_K=None, *, arch=None, **kwargs) -> CompileReport:
    """Compiles a spec through the kernel cache with NVRTC for `arch` ("sm_90", "compute_90"; None: the current
    device, which needs a GPU) and reports its registers, spills and memory. Needs no GPU when arch is given."""
    s = _spec_of(spec_or_K, kwargs)
    return CompileReport(**_bfly.inspect(s, arch))
