"""bfly.spec, generate, show and inspect: the generator's and NVRTC's answers as Python objects."""

import pytest

import bfly


def test_spec_follows_the_sampling_rule_and_forced_fields():
    s = bfly.spec(100)
    assert (s.W, s.K, s.R, s.type, s.variant, s.operation) == (16, 100, 8, "f32", "addsub", "sample")
    assert s.name == "bfly_sample_f32_w16_k100_r8_addsub"
    assert bfly.spec(64, type="float64").variant == "swap"
    forced = bfly.spec(1024, W=32, variant="swap", R=4)
    assert (forced.W, forced.variant, forced.R) == (32, "swap", 4)
    assert bfly.spec(name=forced.name) == forced
    with pytest.raises(bfly.Error, match="W"):
        bfly.spec(100, W=12)
    with pytest.raises(ValueError, match="type"):
        bfly.spec(100, type="int8")
    with pytest.raises(bfly.Error):
        bfly.spec(name="not_a_kernel")


def test_generate_and_show():
    g = bfly.generate(100, W=8)
    assert g.kernel_name == "bfly_sample_f32_w8_k100_r7_addsub" and g.family == "sample"
    assert f'extern "C" __global__ void\n{g.kernel_name}(' in g.source or g.kernel_name + "(" in g.source
    assert '#include "bfly/philox.cuh"' in g.source and "#include" not in g.inlined.replace("// ", "")
    assert str(g) == g.source == bfly.show(100, W=8)
    assert bfly.show(g.spec, inline=True) == g.inlined
    assert bfly.show(g.kernel_name) == g.source


def test_inspect_compiles_with_nvrtc_for_an_architecture():
    report = bfly.inspect(64, arch="sm_90")
    assert report.kernel_name == bfly.spec(64).name and report.arch == "sm_90"
    assert report.resources_known and report.registers > 0
    assert report.cache_level in ("built", "disk", "memory")
    assert report.kernel_name in str(report) and "registers" in str(report)
    assert bfly.inspect(64, arch="sm_90").cache_level == "memory"


def test_inspect_without_a_device_asks_for_an_architecture():
    if bfly.gpu_available()[0]:
        pytest.skip("a GPU is present")
    with pytest.raises(bfly.Error, match="arch"):
        bfly.inspect(64)
