"""An independent float64 reference of bfly's draws: Philox4x32-10 in NumPy (templates/bfly/philox.cuh's
definition: key = seed, counter = (row lo, row hi, 0, iteration), first output word), the uniform of the kernel's
accumulator type, and the smallest k whose prefix sum exceeds u * total."""

import numpy as np

_M0, _M1 = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)
_W0, _W1 = np.uint32(0x9E3779B9), np.uint32(0xBB67AE85)
_LOW = np.uint64(0xFFFFFFFF)


def philox_bits(seed: int, rows: np.ndarray, iteration: int) -> np.ndarray:
    rows = rows.astype(np.uint64)
    c0 = (rows & _LOW).astype(np.uint32)
    c1 = (rows >> np.uint64(32)).astype(np.uint32)
    c2 = np.zeros_like(c0)
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


def uniforms(seed: int, M: int, iteration: int, double: bool) -> np.ndarray:
    bits = philox_bits(seed, np.arange(M), iteration)
    if double:
        return bits.astype(np.float64) * 2.0**-32
    return (bits >> np.uint32(8)).astype(np.float64) * 2.0**-24


def draws(weights: np.ndarray, seed: int, iteration: int = 0):
    """(draws, margin): the reference draw of each row (-1 for an invalid row) and the distance of u * total to the
    nearest prefix sum relative to the total (small margins are where rounding may pick the neighbour)."""
    w = np.asarray(weights, dtype=np.float64)
    M = w.shape[0]
    u = uniforms(seed, M, iteration, double=weights.dtype == np.float64)
    prefix = np.cumsum(w, axis=1)
    total = prefix[:, -1]
    bad = ~np.isfinite(w).all(axis=1) | (w < 0).any(axis=1) | ~(total > 0) | ~np.isfinite(total)
    target = u * np.where(bad, 0, total)
    k = (prefix <= target[:, None]).sum(axis=1)
    k = np.minimum(k, w.shape[1] - 1)
    out = np.where(bad, -1, k)
    with np.errstate(invalid="ignore", divide="ignore"):
        margin = np.abs(prefix - target[:, None]).min(axis=1) / np.where(bad, 1, total)
    return out, margin
