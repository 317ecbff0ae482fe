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


def test_seed_and_offset():
    rng = np.random.default_rng()
    w = random_weights(rng, 500, 100, np.float32)
    seed = int(rng.integers(2**63))
    first = bfly.sample(w, seed=seed)
    assert np.array_equal(first, bfly.sample(w, seed=seed))
    assert not np.array_equal(first, bfly.sample(w, seed=seed + 1))
    assert not np.array_equal(first, bfly.sample(w, seed=seed, offset=1))


def assert_equal_but_at_boundaries(draws, expected, margin):
    """Draws equal to the reference except where a uniform lands within rounding of a prefix boundary (the sums
    are f32 in different orders: relative errors far below 1e-4 for K <= 1000), and there rarely."""
    different = np.asarray(draws != expected)
    if different.ndim == 2:
        different = different.any(axis=1)
    assert np.all(margin[different] < 1e-4), (np.flatnonzero(different), margin[different])
    assert different.mean() < 1e-2


@pytest.mark.parametrize("K,dtype", [(100, np.float32)])  # the other types: GPU against CPU (test_gpu.py)
def test_several_draws_equal_the_float64_reference(K, dtype):
    rng = np.random.default_rng()
    w = random_weights(rng, 1000, K, dtype)
    w[17] = 0  # invalid: every draw -1
    seed, offset, n = int(rng.integers(2**63)), int(rng.integers(2**32)), 5
    several = bfly.sample(w, n, seed=seed, offset=offset)
    assert several.shape == (1000, n) and several.dtype == np.int32 and several.flags.c_contiguous
    for d in range(n):  # draw d of row r: Philox counter (r, d, offset)
        expected, margin = reference.draws(w, seed, offset, draw=d)
        assert_equal_but_at_boundaries(several[:, d], expected, margin)
    assert np.all(several[17] == -1) and bfly.invalid_rows(several).tolist() == [17]
    # Draw 0 is the one-draw kernel's draw (the row kernel's: K = 100 >= 16), and one draw as (M, 1) too.
    assert np.array_equal(several[:, 0], bfly.sample(w, seed=seed, offset=offset))
    assert np.array_equal(bfly.sample(w, 1, seed=seed, offset=offset)[:, 0], several[:, 0])


@pytest.mark.parametrize("K,dtype,n", [(100, np.float32, 8), (37, np.float64, 37)])
def test_distinct_draws_equal_the_float64_reference(K, dtype, n):
    rng = np.random.default_rng()
    w = random_weights(rng, 600, K, dtype, zeros=0.5)
    w[:100] *= rng.random((100, K)) < 0.05  # rows with fewer positive weights than n: -1 after them
    w[:100, 0] = dtype(1e-3)
    w[200, :] = 1e-30 if dtype == np.float64 else 1e-3  # flat
    w[201, 3] = dtype(1e6)  # one weight holding nearly all the mass: redraws, then the exact draw of the rest
    w[300] = 0  # invalid
    seed, offset = int(rng.integers(2**63)), int(rng.integers(2**32))
    draws = bfly.sample(w, n, replacement=False, seed=seed, offset=offset)
    assert draws.shape == (600, n) and draws.dtype == np.int32
    expected, margin = reference.distinct_draws(w, seed, offset, n)
    assert_equal_but_at_boundaries(draws, expected, margin)
    positive = (w > 0).sum(axis=1)
    for r in range(600):
        row = draws[r]
        taken = row[row >= 0]
        if r == 300:
            assert np.all(row == -1)
            continue
        assert len(taken) == min(n, positive[r]) and np.all(row[len(taken):] == -1)  # -1 only after the last
        assert len(set(taken.tolist())) == len(taken)  # distinct
        assert np.all(w[r, taken] > 0)  # never a zero weight
    # The first draw without replacement is the first draw with replacement.
    assert np.array_equal(draws[:, 0], bfly.sample(w, seed=seed, offset=offset))


def test_distinct_draws_follow_sequential_sampling():
    # Two draws without replacement from (4, 2, 1, 1): P(first = i, second = j) = p_i * p_j / (1 - p_i).
    p = np.array([4.0, 2.0, 1.0, 1.0]) / 8
    w = np.tile(np.array([4, 2, 1, 1], np.float32), (40000, 1))
    w = np.pad(w, ((0, 0), (0, 96)))  # K = 100: the distinct kernel of the reference test
    draws = bfly.sample(w, 2, replacement=False, seed=int(np.random.default_rng().integers(2**63)))
    counts = np.zeros((4, 4))
    np.add.at(counts, (draws[:, 0], draws[:, 1]), 1)
    expected = np.array([[p[i] * p[j] / (1 - p[i]) if i != j else 0 for j in range(4)] for i in range(4)]) * len(w)
    off = ~np.eye(4, dtype=bool)
    assert np.all(counts[~off] == 0)
    chi2 = ((counts[off] - expected[off]) ** 2 / expected[off]).sum()
    assert chi2 < 40, (chi2, counts, expected)  # 11 degrees of freedom: p < 1e-4


def logit_reference(x, temperature, seed, offset, draw):
    """The reference draw from softmax(x / temperature): the weights 2^((x - max) * float32(log2(e) / T)) in float64,
    with the scale rounded as the kernels round it."""
    x = np.asarray(x, dtype=np.float64)
    scale = np.float64(np.float32(np.log2(np.e) / temperature))
    with np.errstate(invalid="ignore"):
        weights = np.exp2((x - x.max(axis=1, keepdims=True)) * scale)
    bad = np.isnan(x).any(axis=1) | np.isposinf(x).any(axis=1) | np.isneginf(x).all(axis=1)
    weights[bad] = np.nan
    return reference.draws(weights.astype(np.float32), seed, offset, draw=draw)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_logits_draw_from_the_softmax(dtype):
    rng = np.random.default_rng()
    x = (2 * rng.standard_normal((800, 100))).astype(np.float32)
    x[rng.random(x.shape) < 0.2] = -np.inf  # never drawn
    x[:, 7] = 1.0
    x[5] = -np.inf  # invalid rows: all -inf, a NaN, a +inf
    x[6, 3], x[9, 4] = np.nan, np.inf
    if dtype == "bfloat16":  # NumPy has no bfloat16: through PyTorch, else skipped
        torch = pytest.importorskip("torch")
        x = torch.from_numpy(x).to(torch.bfloat16)
        host = x.float().numpy()
    else:
        host = x
    seed, offset, T = int(rng.integers(2**63)), int(rng.integers(2**32)), 0.7
    n = 3
    draws = bfly.sample_logits(x, n, temperature=T, seed=seed, offset=offset)
    draws = np.asarray(draws)
    assert draws.shape == (800, n)
    for d in range(n):
        expected, margin = logit_reference(host, T, seed, offset, d)
        assert_equal_but_at_boundaries(draws[:, d], expected, np.where(np.isnan(margin), 0, margin))
    assert bfly.invalid_rows(draws).tolist() == [5, 6, 9]
    ok = np.delete(np.arange(800), [5, 6, 9])
    assert np.all(np.isfinite(host[ok[:, None], draws[ok]]))  # a -inf logit is never drawn
    one = np.asarray(bfly.sample_logits(x, temperature=T, seed=seed, offset=offset))
    assert one.shape == (800,) and np.array_equal(one, draws[:, 0])
    distinct = np.asarray(bfly.sample_logits(x, 4, temperature=T, replacement=False, seed=seed))
    for r in ok:
        taken = distinct[r][distinct[r] >= 0]
        assert len(set(taken.tolist())) == len(taken) == min(4, np.isfinite(host[r]).sum())
        assert np.all(np.isfinite(host[r, taken]))


def test_long_rows_split_over_ctas_draw_from_the_softmax():
    # Few long rows take sample_split's forms with replacement (docs/DESIGN.md section 12): each CTA sums its slice
    # under its own maximum and the last one rescales. K = 20000 with 12 rows: two CTAs per row, the second partly
    # past the end of the row.
    rng = np.random.default_rng()
    x = (3 * rng.standard_normal((12, 20000))).astype(np.float32)
    x[:, :10000] -= 4  # the CTAs' maxima differ: the second slice holds the row's largest logits
    x[rng.random(x.shape) < 0.2] = -np.inf
    x[3] = -np.inf  # invalid rows: all -inf, a NaN in the second CTA's slice
    x[8, 19000] = np.nan
    seed, offset, T = int(rng.integers(2**63)), int(rng.integers(2**32)), 1.3
    n = 5
    draws = np.asarray(bfly.sample_logits(x, n, temperature=T, seed=seed, offset=offset))
    assert draws.shape == (12, n)
    def check(drawn, expected, margin):  # as assert_equal_but_at_boundaries, for a dozen rows: at most one apart
        different = drawn != expected
        assert np.all(margin[different] < 1e-4) and different.sum() <= 1, (np.flatnonzero(different), margin)

    for d in range(n):
        expected, margin = logit_reference(x, T, seed, offset, d)
        check(draws[:, d], expected, np.where(np.isnan(margin), 0, margin))
    assert bfly.invalid_rows(draws).tolist() == [3, 8]
    # Weights: draw 0 of several draws is the one-draw kernel's draw (both split).
    w = random_weights(rng, 12, 20000, np.float32)
    several = bfly.sample(w, 3, seed=seed, offset=offset)
    assert np.array_equal(several[:, 0], bfly.sample(w, seed=seed, offset=offset))
    for d in range(3):
        expected, margin = reference.draws(w, seed, offset, draw=d)
        check(several[:, d], expected, margin)


@pytest.mark.parametrize("K", [20000, 20001])
def test_long_rows_of_16_bit_weights_split_in_pairs(K):
    # Few long rows of f16 take sample_split_pairs (docs/DESIGN.md section 13): two adjacent weights a table entry.
    # Rows of odd K pair up from the even address at or before their start, whatever it is; rows of even K off a
    # pair (here a view one element into its buffer, ld = K + 1) draw with sample_split over single weights. Either
    # way the draws are the float64 reference's but within rounding of a boundary.
    rng = np.random.default_rng()
    buffer = random_weights(rng, 12, K + 1, np.float16)
    seed, offset = int(rng.integers(2**63)), int(rng.integers(2**32))
    for w in (np.ascontiguousarray(buffer[:, :K]), buffer[:, 1:]):
        draws = bfly.sample(w, seed=seed, offset=offset)
        expected, margin = reference.draws(w, seed, offset)
        different = draws != expected
        assert np.all(margin[different] < 1e-4) and different.sum() <= 1, (np.flatnonzero(different), margin)
        assert np.all(w[np.arange(len(w)), draws] > 0)  # a zero weight is never drawn


@pytest.mark.parametrize("K", [71, 1001])
def test_rows_of_odd_k_of_16_bit_weights_in_pairs(K):
    # Many rows of odd K of f16 take the row kernel over pairs (docs/DESIGN.md section 13): each row pairs up from the
    # even address at or before its start, so rows packed tightly (ld = K) alternate between two phases, and a view
    # one element into its buffer shifts every row's phase. Either way the draws are the float64 reference's but
    # within rounding of a boundary, and nothing outside the rows is drawn.
    rng = np.random.default_rng()
    buffer = random_weights(rng, 300, K + 1, np.float16)
    seed, offset = int(rng.integers(2**63)), int(rng.integers(2**32))
    flat = np.ascontiguousarray(buffer).reshape(-1)
    for w in (flat[: 300 * K].reshape(300, K), flat[1 : 1 + 299 * K].reshape(299, K)):
        draws = bfly.sample(w, seed=seed, offset=offset)
        expected, margin = reference.draws(w, seed, offset)
        different = draws != expected
        assert np.all(margin[different] < 1e-4) and different.sum() <= 2, (np.flatnonzero(different), margin)
        assert np.all(w[np.arange(len(w)), draws] > 0)  # a zero weight is never drawn


def test_long_rows_split_over_ctas_draw_distinct_categories():
    # Few long rows without replacement take sample_split's distinct form (docs/DESIGN.md section 12): the row kernel's
    # redraws, and the exact draw among the categories left on a table formed again without the drawn ones. K = 20000
    # with 12 rows: two CTAs per row.
    rng = np.random.default_rng()
    n = 6
    w = random_weights(rng, 12, 20000, np.float32)
    w[2] *= rng.random(20000) < 0.0002  # a handful of positive weights: -1 once they are all drawn
    w[2, 5] = 0.5
    w[5, 17000] = 1e7  # one weight holding nearly all the mass: redraws, then the exact draw of the rest
    w[6, [3, 19999]] = 1e7  # two heavy weights, one in each CTA's slice
    w[9] = 0  # invalid
    seed, offset = int(rng.integers(2**63)), int(rng.integers(2**32))
    draws = np.asarray(bfly.sample(w, n, replacement=False, seed=seed, offset=offset))
    expected, margin = reference.distinct_draws(w, seed, offset, n)
    different = (draws != expected).any(axis=1)
    assert np.all(margin[different] < 1e-4) and different.sum() <= 1, (np.flatnonzero(different), margin)
    positive = (w > 0).sum(axis=1)
    for r in range(12):
        taken = draws[r][draws[r] >= 0]
        assert len(taken) == min(n, positive[r]) and len(set(taken.tolist())) == len(taken)
        assert np.all(w[r, taken] > 0)
    # The heavy weights are among the draws (each is missed with probability under 1e-12); which draw takes them is
    # random (row 6's two heavy weights need not be the first two draws), so the test does not ask.
    assert 17000 in draws[5] and {3, 19999} <= set(draws[6].tolist())
    assert np.all(draws[9] == -1) and 9 in bfly.invalid_rows(draws).tolist()
    assert np.array_equal(draws[:, 0], bfly.sample(w, seed=seed, offset=offset))  # draw 0: the one-draw kernel's


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
    (np.frombuffer(bytearray(161), np.float32, 40, offset=1).reshape(4, 10), ValueError, ["weights", "aligned"]),
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
    assert bfly.sample(w, 3, offset=2**32 - 1).shape == (4, 3)  # every draw of a call takes the same offset
    for n in (0, -1, 2.0, True, 2**24 + 1):
        with pytest.raises(ValueError, match="num_samples"):
            bfly.sample(w, n)
    with pytest.raises(TypeError, match="replacement"):
        bfly.sample(w, 2, replacement=None)
    with pytest.raises(ValueError, match="num_samples = 11 distinct categories .* K = 10"):
        bfly.sample(w, 11, replacement=False)
    with pytest.raises(ValueError, match="num_samples = 65 without replacement .* 64"):
        bfly.sample(np.ones((4, 100), np.float32), 65, replacement=False)
    for T in (0, -1.0, float("inf"), float("nan"), "1"):
        with pytest.raises(ValueError, match="temperature"):
            bfly.sample_logits(w, temperature=T)
    with pytest.raises(TypeError, match="logits has dtype float64"):
        bfly.sample_logits(np.ones((4, 10)))
    with pytest.raises(ValueError, match="logits must be 2-D"):
        bfly.sample_logits(np.ones(10, np.float32))
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
