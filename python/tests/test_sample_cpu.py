"""bfly.sample on NumPy arrays: the generated kernel compiled for the CPU draws what a float64 reference with the
same Philox uniforms draws, and what the C++ CPU execution and the GPU draw; arguments are checked."""

import numpy as np
import pytest

import bfly
import reference


def random_weights(rng, M, K, dtype, zeros=0.3):
    w = rng.random((M, K)).astype(dtype)
    w[rng.random((M, K)) < zeros] = 0
    w[:, rng.integers(K)] += dtype(0.5)  # no row left all-zero
    return w


@pytest.mark.parametrize("K,dtype", [(1, np.float32), (5, np.float32), (100, np.float32), (1000, np.float32),
                                     (37, np.float64), (100, np.float16)])
def test_draws_equal_the_float64_reference(K, dtype):
    rng = np.random.default_rng()
    w = random_weights(rng, 3000, K, dtype)
    seed, offset = int(rng.integers(2**63)), int(rng.integers(2**31))
    draws = bfly.sample(w, seed=seed, offset=offset)
    expected, margin = reference.draws(w, seed, offset)
    assert draws.dtype == np.int32 and draws.shape == (3000,)
    different = draws != expected
    # Only a uniform that lands within rounding of a prefix boundary may pick the neighbouring category (the sums
    # are f32 in different orders: relative errors far below 1e-4 for K <= 1000); a wrong draw is off by a weight.
    assert np.all(margin[different] < 1e-4), (np.flatnonzero(different), margin[different])
    assert different.mean() < 1e-3
    assert np.all(w[np.arange(len(w)), draws] > 0)  # a zero weight is never drawn


def test_draws_equal_the_cpp_cpu_execution():
    # docs/CPU_EXECUTION.md's example, run there through bfly/lockstep.hpp from C++: rows 0 and 1 drew 62 and 98.
    w = np.fromfunction(lambda r, j: (r + j) % 5, (256, 100)).astype(np.float32)
    assert bfly.sample(w, seed=42)[:2].tolist() == [62, 98]


def test_frequencies_follow_the_weights():
    rng = np.random.default_rng()
    K, M = 5, 60000  # kernels shared with the reference test (K = 5, 100, f32) keep the suite quick
    row = rng.random(K) * (rng.random(K) < 0.7)
    row[0] = 0.05
    w = np.tile(row.astype(np.float32), (M, 1))
    counts = np.bincount(bfly.sample(w, seed=int(rng.integers(2**63))), minlength=K)
    expected = M * row / row.sum()
    assert np.all(counts[row == 0] == 0)
    chi2 = ((counts - expected) ** 2 / np.where(expected > 0, expected, 1))[row > 0].sum()
    assert chi2 < 25, (chi2, counts, expected)  # chi-square, <= 4 degrees of freedom: p < 1e-4


def test_seed_offset_and_several_draws():
    rng = np.random.default_rng()
    w = random_weights(rng, 500, 100, np.float32)
    seed = int(rng.integers(2**63))
    first = bfly.sample(w, seed=seed)
    assert np.array_equal(first, bfly.sample(w, seed=seed))
    assert not np.array_equal(first, bfly.sample(w, seed=seed + 1))
    assert not np.array_equal(first, bfly.sample(w, seed=seed, offset=1))
    several = bfly.sample(w, 4, seed=seed, offset=10)
    assert several.shape == (500, 4) and several.flags.c_contiguous
    for d in range(4):
        assert np.array_equal(several[:, d], bfly.sample(w, seed=seed, offset=10 + d))
    assert bfly.sample(w, 1, seed=seed).shape == (500, 1)


def test_row_draw_depends_only_on_its_row_and_index():
    rng = np.random.default_rng()
    w = random_weights(rng, 400, 37, np.float64)
    seed = int(rng.integers(2**63))
    whole = bfly.sample(w, seed=seed)
    changed = w.copy()
    changed[1::2] = rng.random((200, 37))  # other rows change: rows 0, 2, 4, ... draw the same
    assert np.array_equal(bfly.sample(changed, seed=seed)[0::2], whole[0::2])


def test_invalid_rows_come_back_as_minus_one():
    rng = np.random.default_rng()
    w = random_weights(rng, 100, 100, np.float32)
    bad = {3: -1.0, 17: np.nan, 42: np.inf}
    for row, value in bad.items():
        w[row, 5] = value
    w[60] = 0
    draws = bfly.sample(w, seed=1)
    invalid = bfly.invalid_rows(draws)
    assert invalid.tolist() == [3, 17, 42, 60] and len(invalid) == 4
    assert np.all(draws[invalid] == -1) and np.all(np.delete(draws, invalid) >= 0)
    several = bfly.sample(w, 3, seed=1)
    assert bfly.invalid_rows(several).tolist() == [3, 17, 42, 60]


def test_row_stride_and_out():
    rng = np.random.default_rng()
    wide = random_weights(rng, 300, 128, np.float32)
    view = wide[:, :100]  # row stride 128 > K = 100: taken without a copy
    out = np.full(300, -7, dtype=np.int32)
    result = bfly.sample(view, seed=5, out=out)
    assert result is out
    assert np.array_equal(out, bfly.sample(np.ascontiguousarray(view), seed=5))
    several = np.empty((300, 2), dtype=np.int32)
    assert bfly.sample(view, 2, seed=5, out=several) is several
    assert np.array_equal(several[:, 0], out)


def test_empty_and_single_row():
    w = np.ones((0, 10), dtype=np.float32)
    assert bfly.sample(w).shape == (0,)
    assert bfly.sample(w, 3).shape == (0, 3)
    one = np.zeros((1, 5), dtype=np.float32)
    one[0, 3] = 2
    assert bfly.sample(one).tolist() == [3]


@pytest.mark.parametrize("weights,error,words", [
    (np.ones(10, np.float32), ValueError, ["weights", "2-D"]),
    (np.ones((2, 3, 4), np.float32), ValueError, ["weights", "2-D"]),
    (np.ones((4, 10), np.int64), TypeError, ["weights", "int64"]),
    (np.ones((4, 0), np.float32), ValueError, ["weights", "K = 0"]),
    (np.ones((10, 4), np.float32).T, ValueError, ["weights", "contiguous"]),
    (np.ones((4, 20), np.float32)[:, ::2], ValueError, ["weights", "contiguous"]),
    (np.ones((4, 10), np.float32)[::-1], ValueError, ["weights", "row stride"]),
    ([[1.0, 2.0]], TypeError, ["weights", "list"]),
    (np.ones((4, 10), ">f4"), TypeError, ["weights", "byte order"]),
])
def test_bad_weights_are_named(weights, error, words):
    with pytest.raises(error) as raised:
        bfly.sample(weights)
    for word in words:
        assert word in str(raised.value)


def test_bad_arguments_are_named():
    w = np.ones((4, 10), np.float32)
    for kwargs, error, word in [
        (dict(seed=-1), ValueError, "seed"), (dict(seed=2**64), ValueError, "seed"), (dict(seed=1.5), ValueError, "seed"),
        (dict(offset=-1), ValueError, "offset"), (dict(offset=2**32), ValueError, "offset"),
        (dict(out=np.empty(4, np.int64)), TypeError, "out"), (dict(out=np.empty(5, np.int32)), ValueError, "out"),
        (dict(out=np.empty(8, np.int32)[::2]), ValueError, "out"), (dict(out=[0] * 4), TypeError, "out"),
        (dict(out=np.broadcast_to(np.int32(0), (4,))), ValueError, "out"),
    ]:
        with pytest.raises(error, match=word):
            bfly.sample(w, **kwargs)
    with pytest.raises(ValueError, match="offset"):
        bfly.sample(w, 3, offset=2**32 - 2)
    for n in (0, -1, 2.0, True):
        with pytest.raises(ValueError, match="num_samples"):
            bfly.sample(w, n)
    with pytest.raises(NotImplementedError, match="replacement"):
        bfly.sample(w, 2, replacement=False)
    with pytest.raises(ValueError, match="draws"):
        bfly.invalid_rows(np.zeros((2, 2, 2), np.int32))


def test_torch_cpu_tensors_return_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng()
    w = random_weights(rng, 200, 100, np.float32)
    draws = bfly.sample(torch.from_numpy(w), seed=9)
    assert isinstance(draws, torch.Tensor) and draws.dtype == torch.int32
    assert np.array_equal(draws.numpy(), bfly.sample(w, seed=9))
    bf16 = torch.from_numpy(w).to(torch.bfloat16)
    expected, margin = reference.draws(bf16.float().numpy(), 9, 0)
    different = bfly.sample(bf16, seed=9).numpy() != expected
    assert np.all(margin[different] < 1e-4)


class DlpackOnly:
    """An array of some other framework: nothing but the DLPack protocol (here over a NumPy array)."""

    def __init__(self, array, device=None):
        self.array, self.device = array, device

    def __dlpack__(self, **kwargs):
        return self.array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.device or self.array.__dlpack_device__()


def test_dlpack_arrays_on_the_cpu():
    rng = np.random.default_rng()
    w = random_weights(rng, 300, 37, np.float64)  # K and type of an earlier test: no new CPU kernel to compile
    w[7] = 0
    seed = int(rng.integers(2**63))
    draws = bfly.sample(DlpackOnly(w), seed=seed)  # read in place through DLPack; NumPy draws come back
    assert isinstance(draws, np.ndarray) and np.array_equal(draws, bfly.sample(w, seed=seed))
    assert np.array_equal(bfly.sample(DlpackOnly(w), 3, seed=seed), bfly.sample(w, 3, seed=seed))
    assert bfly.invalid_rows(draws).tolist() == [7]
    with pytest.raises(ValueError, match="weights is on DLPack device type 8"):
        bfly.sample(DlpackOnly(w, (8, 0)))
    with pytest.raises(TypeError, match="out is not taken"):
        bfly.sample(DlpackOnly(w), out=np.empty(300, np.int32))
    with pytest.raises(ValueError, match="weights must be 2-D"):
        bfly.sample(DlpackOnly(w[0]))


def test_jax_cpu_arrays_return_jax():
    jax = pytest.importorskip("jax")
    rng = np.random.default_rng()
    w = random_weights(rng, 300, 100, np.float32)
    w[5, 2] = -1
    seed = int(rng.integers(2**63))
    draws = bfly.sample(jax.numpy.asarray(w), seed=seed, offset=4)
    assert isinstance(draws, jax.Array) and draws.dtype == jax.numpy.int32 and draws.shape == (300,)
    assert np.array_equal(np.asarray(draws), bfly.sample(w, seed=seed, offset=4))
    several = bfly.sample(jax.numpy.asarray(w), 2, seed=seed)
    assert several.shape == (300, 2) and np.array_equal(np.asarray(several), bfly.sample(w, 2, seed=seed))
    invalid = bfly.invalid_rows(draws)
    assert isinstance(invalid, jax.Array) and invalid.tolist() == [5]
