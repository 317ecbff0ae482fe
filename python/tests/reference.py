"""An independent float64 reference of bfly's draws: Philox4x32-10 in NumPy (templates/bfly/philox.cuh's
definition: key = seed, counter = (row lo, row hi, word, iteration), first output word), the uniform of the kernel's
accumulator type, and the smallest k whose prefix sum exceeds u * total. Draw d of a row takes counter word d; a
redraw a of draw d without replacement takes word d + a * 2^24, and after 8 the draw is made exactly among the
categories left (docs/DESIGN.md section 11)."""

import numpy as np

_M0, _M1 = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)
_W0, _W1 = np.uint32(0x9E3779B9), np.uint32(0xBB67AE85)
_LOW = np.uint64(0xFFFFFFFF)


def philox_bits(seed: int, rows: np.ndarray, iteration: int, word: int = 0) -> np.ndarray:
    rows = rows.astype(np.uint64)
    c0 = (rows & _LOW).astype(np.uint32)
    c1 = (rows >> np.uint64(32)).astype(np.uint32)
    c2 = np.full_like(c0, word)
    c3 = np.full_like(c0, iteration)
    k0, k1 = np.uint32(seed & 0xFFFFFFFF), np.uint32(seed >> 32)
    with np.errstate(over="ignore"):
        for _ in range(10):
            p0 = _M0 * c0.astype(np.uint64)
            p1 = _M1 * c2.astype(np.uint64)
            hi0, lo0 = (p0 >> np.uint64(32)).astype(np.uint32), (p0 & _LOW).astype(np.uint32)
            hi1, lo1 = (p1 >> np.uint64(32)).astype(np.uint32), (p1 & _LOW).astype(np.uint32)
            c0, c1, c2, c3 = hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0
            k0 = np.uint32(k0 + _W0)
            k1 = np.uint32(k1 + _W1)
    return c0


def uniforms(seed: int, M: int, iteration: int, double: bool, word: int = 0) -> np.ndarray:
    bits = philox_bits(seed, np.arange(M), iteration, word)
    if double:
        return bits.astype(np.float64) * 2.0**-32
    return (bits >> np.uint32(8)).astype(np.float64) * 2.0**-24


def _search(prefix, total, u):
    """The smallest k whose prefix exceeds u * total, and the distance of u * total to the nearest prefix sum
    relative to the total (small margins are where rounding may pick the neighbour)."""
    target = u * total
    k = np.minimum((prefix <= target[:, None]).sum(axis=1), prefix.shape[1] - 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        margin = np.abs(prefix - target[:, None]).min(axis=1) / np.where(total > 0, total, 1)
    return k, np.where(total > 0, margin, np.inf)


def _rows(weights):
    w = np.asarray(weights, dtype=np.float64)
    prefix = np.cumsum(w, axis=1)
    total = prefix[:, -1]
    bad = ~np.isfinite(w).all(axis=1) | (w < 0).any(axis=1) | ~(total > 0) | ~np.isfinite(total)
    return w, prefix, np.where(bad, 0, total), bad


def draws(weights: np.ndarray, seed: int, iteration: int = 0, draw: int = 0):
    """(draws, margin): draw `draw` of each row with replacement (-1 for an invalid row; draw 0 is the one-draw
    kernel's) and its margin."""
    w, prefix, total, bad = _rows(weights)
    k, margin = _search(prefix, total, uniforms(seed, len(w), iteration, weights.dtype == np.float64, draw))
    return np.where(bad, -1, k), margin


def distinct_draws(weights: np.ndarray, seed: int, iteration: int, n: int):
    """(draws, margin): n draws per row without replacement, as the kernel makes them (rejection of a drawn category
    for up to 8 attempts, then the exact draw among the categories left; -1 once no positive weight is left, and
    for every draw of an invalid row), and each row's smallest margin over the searches it made."""
    w, prefix, total, bad = _rows(weights)
    M, K = w.shape
    double = weights.dtype == np.float64
    rows = np.arange(M)
    out = np.full((M, n), -1)
    margin = np.full(M, np.inf)
    drawn = np.zeros((M, K), dtype=bool)
    ran_out = bad.copy()
    for d in range(n):
        chosen = np.full(M, -1)
        searching = ~ran_out
        for attempt in range(8):
            k, m = _search(prefix, total, uniforms(seed, M, iteration, double, d + (attempt << 24)))
            margin = np.where(searching, np.minimum(margin, m), margin)
            accept = searching & ~drawn[rows, k]
            chosen[accept] = k[accept]
            searching &= ~accept
        rest = np.where(drawn, 0.0, np.where(bad[:, None], 0.0, w))
        rest_prefix = np.cumsum(rest, axis=1)
        k, m = _search(rest_prefix, rest_prefix[:, -1], uniforms(seed, M, iteration, double, d + (8 << 24)))
        k = np.where(rest_prefix[:, -1] > 0, k, -1)
        margin = np.where(searching, np.minimum(margin, m), margin)
        chosen[searching] = k[searching]
        chosen[ran_out] = -1
        ran_out |= chosen < 0
        drawn[rows[chosen >= 0], chosen[chosen >= 0]] = True
        out[:, d] = chosen
    return out, margin
