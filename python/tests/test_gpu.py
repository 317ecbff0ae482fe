"""bfly.sample on the GPU (marked gpu: skipped without a device and driver): PyTorch and CuPy arrays are taken
without a copy, the kernel runs on the caller's current stream, and the GPU draws what the CPU draws; JAX arrays
(and other DLPack arrays) are taken in place and ordered through DLPack's stream contract."""

import numpy as np
import pytest

import bfly

pytestmark = pytest.mark.gpu


def random_weights(rng, M, K, dtype=np.float32):
    w = rng.random((M, K)).astype(dtype)
    w[rng.random((M, K)) < 0.3] = 0
    w[:, 0] += dtype(0.25)
    return w


@pytest.fixture(scope="module")
def torch():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch sees no CUDA device")
    return torch


@pytest.fixture(scope="module")
def cupy():
    cupy = pytest.importorskip("cupy")
    return cupy


# K = 4099 with 2000 rows: on a GPU of fast memory (an H200) f64 runs sample_split there and the CPU path the row
# kernel (docs/PYTHON.md, "CPU and GPU draw the same"): the same draws up to rounding at a category boundary. So do
# K = 12 and 48 there (the short rows' rule: over pairs of weights, sample_small or W = 32 on the GPU).
@pytest.mark.parametrize("K", [3, 12, 48, 100, 101, 4099])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_torch_draws_equal_the_cpu_draws(torch, K, dtype):
    rng = np.random.default_rng()
    w = torch.from_numpy(random_weights(rng, 2000, K)).to(getattr(torch, dtype))
    seed = int(rng.integers(2**63))
    gpu = bfly.sample(w.cuda(), seed=seed, offset=7)
    assert gpu.is_cuda and gpu.dtype == torch.int32 and gpu.shape == (2000,)
    cpu = bfly.sample(w, seed=seed, offset=7)  # a CPU tensor: the generated kernel compiled for the CPU
    assert torch.equal(gpu.cpu(), cpu)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_torch_several_and_distinct_draws_and_logits_equal_the_cpu_draws(torch, dtype):
    # Every form of the kernel against the same generated source compiled for the CPU (K = 100, as above).
    rng = np.random.default_rng()
    host = random_weights(rng, 2000, 100)
    host[:50] *= rng.random((50, 100)) < 0.03  # rows with fewer positive weights than the distinct draws
    host[:50, 99] = 0.5
    host[60] = 0
    w = torch.from_numpy(host).to(getattr(torch, dtype))
    seed = int(rng.integers(2**63))
    for n, replacement in ((5, True), (300, True), (8, False)):
        gpu = bfly.sample(w.cuda(), n, replacement=replacement, seed=seed, offset=3)
        assert gpu.is_cuda and gpu.dtype == torch.int32 and gpu.shape == (2000, n)
        assert torch.equal(gpu.cpu(), bfly.sample(w, n, replacement=replacement, seed=seed, offset=3)), (n, replacement)
    assert torch.equal(gpu[:, 0], bfly.sample(w.cuda(), seed=seed, offset=3))  # draw 0: the one-draw kernel's
    if dtype == "float64":
        return  # logits are float32, float16 or bfloat16
    x = torch.from_numpy((2 * rng.standard_normal((2000, 100))).astype(np.float32))
    x[x < -2.5] = float("-inf")
    x[7] = float("-inf")
    x = x.to(getattr(torch, dtype))
    for n, replacement in ((None, True), (4, True), (6, False)):
        gpu = bfly.sample_logits(x.cuda(), n, temperature=0.8, replacement=replacement, seed=seed)
        cpu = bfly.sample_logits(x, n, temperature=0.8, replacement=replacement, seed=seed)
        assert torch.equal(gpu.cpu(), cpu), (n, replacement)
    assert bfly.invalid_rows(gpu).tolist() == [7]


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_torch_long_rows_of_logits_equal_the_cpu_draws(torch, dtype):
    # Few long rows: sample_split's logits and several-draws forms, with and without replacement (K = 40000, three
    # CTAs per row), on the GPU against the same source compiled for the CPU.
    rng = np.random.default_rng()
    x = torch.from_numpy((3 * rng.standard_normal((9, 40000))).astype(np.float32))
    x[:, 20000:] -= 5
    x[4] = float("-inf")
    x = x.to(getattr(torch, dtype))
    seed = int(rng.integers(2**63))
    for n, replacement in ((None, True), (3, True), (20, True), (12, False)):
        gpu = bfly.sample_logits(x.cuda(), n, temperature=0.9, replacement=replacement, seed=seed, offset=2)
        cpu = bfly.sample_logits(x, n, temperature=0.9, replacement=replacement, seed=seed, offset=2)
        assert torch.equal(gpu.cpu(), cpu), (n, replacement)
    assert bfly.invalid_rows(gpu).tolist() == [4]
    host = random_weights(rng, 9, 40000)
    host[3, 30000] = 1e6  # peaked: redraws, then the exact draw among the categories left
    w = torch.from_numpy(host).to(getattr(torch, dtype))
    for n, replacement in ((6, True), (10, False)):
        gpu = bfly.sample(w.cuda(), n, replacement=replacement, seed=seed)
        assert torch.equal(gpu.cpu(), bfly.sample(w, n, replacement=replacement, seed=seed)), (n, replacement)


def test_torch_several_draws_invalid_rows_and_strided_rows(torch):
    rng = np.random.default_rng()
    wide = torch.from_numpy(random_weights(rng, 2000, 96)).cuda()
    w = wide[:, :80]  # row stride 96 > K: read in place
    w[5, 3] = -1
    w[77] = 0
    w[1999, 0] = float("nan")
    seed = int(rng.integers(2**63))
    draws = bfly.sample(w, 3, seed=seed, offset=2)
    assert draws.shape == (2000, 3) and draws.is_contiguous()
    expected = bfly.sample(w.cpu().numpy(), 3, seed=seed, offset=2)
    assert np.array_equal(draws.cpu().numpy(), expected)
    invalid = bfly.invalid_rows(draws)
    assert invalid.is_cuda and invalid.tolist() == [5, 77, 1999]


def test_torch_current_stream_is_used(torch):
    # The weights are written on a side stream after a long sleep; bfly.sample on that stream must see them.
    # Launched on any other stream (torch's side streams do not synchronise with the default one) it would read
    # the zeros and return -1 for every row.
    rng = np.random.default_rng()
    host = torch.from_numpy(random_weights(rng, 4096, 64)).pin_memory()
    w = torch.zeros(host.shape, device="cuda")
    side = torch.cuda.Stream()
    seed = int(rng.integers(2**63))
    torch.cuda.synchronize()
    with torch.cuda.stream(side):
        torch.cuda._sleep(200_000_000)  # about 0.1 s
        w.copy_(host, non_blocking=True)
        draws = bfly.sample(w, seed=seed)
    side.synchronize()
    assert torch.equal(draws.cpu(), bfly.sample(host, seed=seed))


def test_torch_no_copies(torch):
    rng = np.random.default_rng()
    w = torch.from_numpy(random_weights(rng, 3000, 500)).cuda()[:, :400]
    out = torch.empty(3000, dtype=torch.int32, device="cuda")
    bfly.sample(w, seed=1, out=out)  # compile and load first
    torch.cuda.synchronize()
    before = torch.cuda.memory_allocated()
    result = bfly.sample(w, seed=2, out=out)
    assert result is out and torch.cuda.memory_allocated() == before
    assert out.min().item() >= 0


def test_torch_draws_in_another_thread(torch):
    # A new thread has no current CUDA context until bfly makes the tensor's device's primary context current, and
    # its own kernel cache: the draws are the same.
    import threading

    rng = np.random.default_rng()
    w = torch.from_numpy(random_weights(rng, 1000, 100)).cuda()
    seed = int(rng.integers(2**63))
    expected = bfly.sample(w, 3, seed=seed).cpu()
    results = {}

    def draw():
        try:
            results["draws"] = bfly.sample(w, 3, seed=seed)
            torch.cuda.current_stream().synchronize()
        except Exception as error:  # reported by the assertion below
            results["error"] = error

    thread = threading.Thread(target=draw)
    thread.start()
    thread.join()
    assert "error" not in results, results.get("error")
    assert torch.equal(results["draws"].cpu(), expected)


def test_torch_argument_errors(torch):
    w = torch.ones(4, 10, device="cuda")
    with pytest.raises(ValueError, match="out"):
        bfly.sample(w, out=torch.empty(4, dtype=torch.int32))  # on the CPU
    with pytest.raises(TypeError, match="out"):
        bfly.sample(w, out=torch.empty(4, dtype=torch.int64, device="cuda"))
    with pytest.raises(ValueError, match="weights"):
        bfly.sample(w.t())
    with pytest.raises(TypeError, match="weights"):
        bfly.sample(w.int())
    with pytest.raises(ValueError, match="num_samples = 65 without replacement"):
        bfly.sample(torch.ones(4, 100, device="cuda"), 65, replacement=False)
    with pytest.raises(TypeError, match="logits has dtype float64"):
        bfly.sample_logits(w.double())


def test_cupy_draws_equal_the_cpu_draws_on_the_current_stream(cupy):
    rng = np.random.default_rng()
    host = random_weights(rng, 3000, 257, np.float64)
    seed = int(rng.integers(2**63))
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        w = cupy.asarray(host)
        draws = bfly.sample(w, seed=seed)
        several = bfly.sample(w, 2, seed=seed)
    stream.synchronize()
    assert isinstance(draws, cupy.ndarray) and draws.dtype == cupy.int32
    assert np.array_equal(cupy.asnumpy(draws), bfly.sample(host, seed=seed))
    assert np.array_equal(cupy.asnumpy(several), bfly.sample(host, 2, seed=seed))
    out = cupy.empty(3000, dtype=cupy.int32)
    assert bfly.sample(w, seed=seed, out=out) is out
    cupy.cuda.Device().synchronize()
    assert np.array_equal(cupy.asnumpy(out), cupy.asnumpy(draws))


def test_lda_trains_on_the_gpu():
    from test_lda import fit_best_of_three, known_topic_corpus, topic_of_block

    rng = np.random.default_rng()
    X, truth = known_topic_corpus(rng, 200)
    model = fit_best_of_three(rng, X, iterations=60, device="gpu")
    assert model.device_ == "gpu" and model.engine_.startswith("gpu")
    blocks = topic_of_block(model)
    assert np.mean(model.doc_topic_.argmax(axis=1) == np.array([blocks[t] for t in truth])) > 0.95


@pytest.fixture(scope="module")
def jax():
    jax = pytest.importorskip("jax")
    if not any(d.platform == "gpu" for d in jax.devices()):
        pytest.skip("JAX sees no GPU")
    return jax


def test_jax_draws_equal_the_cpu_draws_without_copies(jax):
    rng = np.random.default_rng()
    host = random_weights(rng, 3000, 100)  # K = 100, f32: the CPU kernel of an earlier test
    host[11] = 0
    seed = int(rng.integers(2**63))
    w = jax.device_put(host, jax.devices("gpu")[0])
    draws = bfly.sample(w, seed=seed, offset=3)
    assert isinstance(draws, jax.Array) and draws.dtype == jax.numpy.int32 and draws.shape == (3000,)
    assert draws.devices() == w.devices()
    assert np.array_equal(np.asarray(draws), bfly.sample(host, seed=seed, offset=3))
    several = bfly.sample(w, 4, seed=seed)
    assert several.shape == (3000, 4) and np.array_equal(np.asarray(several), bfly.sample(host, 4, seed=seed))
    invalid = bfly.invalid_rows(draws)
    assert isinstance(invalid, jax.Array) and invalid.tolist() == [11]
    # The weights are read in place: the pointer bfly launches with is the JAX buffer's.
    from bfly._sample import _view
    assert _view(w, "weights").pointer == w.unsafe_buffer_pointer()
    with pytest.raises(TypeError, match="out is not taken"):
        bfly.sample(w, out=jax.numpy.zeros(3000, jax.numpy.int32))


def test_jax_weights_and_draws_are_ordered(jax):
    # The weights come out of a long JAX computation that is still running when bfly.sample is called (JAX
    # dispatches asynchronously), and the draws go straight into JAX computations. bfly's stream waits for the
    # weights (__dlpack__(stream=...)) and JAX's stream for the draws (the draws' __dlpack__); were either wait
    # missing, the kernel would read unfinished weights or JAX unfinished draws, and they would differ from the
    # CPU draws of the same weights.
    jnp = jax.numpy
    rng = np.random.default_rng()
    seed = int(rng.integers(2**63))

    @jax.jit
    def slow_weights(x):
        def body(_, a):
            a = a @ x
            return a / jnp.linalg.norm(a, axis=1, keepdims=True)
        return jnp.abs(jax.lax.fori_loop(0, 400, body, x))[:, :100]

    x = jnp.asarray(rng.standard_normal((4096, 4096)).astype(np.float32))
    for _ in range(3):
        w = slow_weights(x)
        draws = bfly.sample(w, seed=seed)
        shifted = draws + 1  # a JAX computation on the draws, enqueued at once
        expected = bfly.sample(np.asarray(w), seed=seed)
        assert np.array_equal(np.asarray(shifted), expected + 1)


def test_other_dlpack_frameworks_get_draws_through_dlpack(torch):
    class DlpackOnly:  # an array of a framework bfly does not know: only the DLPack protocol
        def __init__(self, array):
            self.array = array

        def __dlpack__(self, **kwargs):
            return self.array.__dlpack__(**kwargs)

        def __dlpack_device__(self):
            return self.array.__dlpack_device__()

    rng = np.random.default_rng()
    host = random_weights(rng, 2000, 100)
    seed = int(rng.integers(2**63))
    w = torch.from_numpy(host).cuda()
    draws = bfly.sample(DlpackOnly(w), seed=seed)
    assert draws.__dlpack_device__() == (2, w.get_device())
    taken = torch.from_dlpack(draws)  # on torch's current stream, which waits for the kernel
    assert taken.data_ptr() == draws.pointer and torch.equal(taken.cpu(), torch.from_numpy(bfly.sample(host, seed=seed)))
    several = torch.from_dlpack(bfly.sample(DlpackOnly(w), 3, seed=seed))  # (M, 3), row-major
    assert several.shape == (2000, 3) and several.stride() == (3, 1)
    assert np.array_equal(several.cpu().numpy(), bfly.sample(host, 3, seed=seed))
