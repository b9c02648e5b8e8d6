"""Array specs: how case files spell integer arrays compactly, and the portable PRNG behind them.

An array spec is one of (all values are Python ints; ``len`` counts elements):

* a JSON list of integers: ``[1, 0, 2]``
* ``{"fill": v, "len": n}``: n copies of v
* ``{"arange": {"len": n, "start": a, "step": s}}``: a, a+s, a+2s, ... (start 0, step 1 by default)
* ``{"cycle": [v0, v1, ...], "len": n, "stride": s}``: the pattern repeated and cut to n, each
  repetition adding s (default 0): element i is ``pattern[i % k] + (i // k) * s``. With a stride,
  the exclusive prefix sums of a periodic batch are one line: the sums of [5, 0, 10, 0] repeated
  are ``{"cycle": [0, 5, 5, 15], "stride": 15}``
* ``{"random": {"len": n, "low": a, "high": b, "seed": s, "prng": "splitmix64"}}``: uniform in
  [a, b] (both included) as ``a + (x mod (b - a + 1))`` with x the splitmix64 stream of seed s
* ``{"concat": [spec, spec, ...]}``: the arrays one after another

splitmix64 (Steele, Lea and Flood, OOPSLA 2014) is used because it is a few lines in any language:
output i (from 0) is ``mix(seed + (i + 1) * 0x9E3779B97F4A7C15 mod 2^64)``, where mix is
``z ^= z >> 30; z *= 0xBF58476D1CE4E5B9; z ^= z >> 27; z *= 0x94D049BB133111EB; z ^= z >> 31``,
all mod 2^64. Seed 0 gives 0xE220A8397B1DCDAF first.
"""

from __future__ import annotations

import numpy as np

from conformance.corpus.limits import MAX_ARRAY_LEN


_GAMMA = np.uint64(0x9E3779B97F4A7C15)
_MUL1 = np.uint64(0xBF58476D1CE4E5B9)
_MUL2 = np.uint64(0x94D049BB133111EB)


class ArraySpecError(ValueError):
    """An array spec that cannot be evaluated; the message names the fault."""


def splitmix64(seed: int, n: int) -> np.ndarray:
    """The first ``n`` outputs of splitmix64 seeded with ``seed`` (uint64 [n])."""
    with np.errstate(over="ignore"):
        z = np.uint64(seed % (1 << 64)) + np.arange(1, n + 1, dtype=np.uint64) * _GAMMA
        z = (z ^ (z >> np.uint64(30))) * _MUL1
        z = (z ^ (z >> np.uint64(27))) * _MUL2
        return z ^ (z >> np.uint64(31))


def random_ints(seed: int, n: int, low: int, high: int) -> list[int]:
    """``n`` ints uniform in [low, high] from splitmix64(seed), as the module docstring defines."""
    if high < low:
        raise ArraySpecError(f"random: high ({high}) is below low ({low})")
    span = high - low + 1
    return [low + int(x) % span for x in splitmix64(seed, n).tolist()]


def permutation(seed: int, n: int) -> np.ndarray:
    """A permutation of 0..n-1 (int64 [n]): the stable argsort of splitmix64(seed)'s first n outputs."""
    return np.argsort(splitmix64(seed, n), kind="stable").astype(np.int64)


def _check_len(n: object) -> int:
    if not isinstance(n, int) or isinstance(n, bool) or n < 0:
        raise ArraySpecError(f"len must be a non-negative integer, got {n!r}")
    if n > MAX_ARRAY_LEN:
        raise ArraySpecError(f"len {n} exceeds the limit of {MAX_ARRAY_LEN} elements")
    return n


def spec_len(spec: object) -> int:
    """Length of the array ``spec`` describes, without building it."""
    if isinstance(spec, list):
        return len(spec)
    if isinstance(spec, dict):
        if "concat" in spec:
            return sum(spec_len(part) for part in spec["concat"])
        inner = spec.get("arange") or spec.get("random") or spec
        return _check_len(inner.get("len"))
    raise ArraySpecError(f"not an array spec: {spec!r}")


def evaluate(spec: object) -> list[int]:
    """The list of ints ``spec`` describes (see the module docstring).

    Raises:
        ArraySpecError: an unknown form, a bad length, or a length over :data:`MAX_ARRAY_LEN`.
    """
    if isinstance(spec, list):
        return list(spec)
    if not isinstance(spec, dict):
        raise ArraySpecError(f"not an array spec: {spec!r}")
    if "fill" in spec:
        return [spec["fill"]] * _check_len(spec.get("len"))
    if "arange" in spec:
        a = spec["arange"]
        n, start, step = _check_len(a.get("len")), a.get("start", 0), a.get("step", 1)
        return [start + i * step for i in range(n)]
    if "cycle" in spec:
        pattern, n, stride = spec["cycle"], _check_len(spec.get("len")), spec.get("stride", 0)
        if not pattern:
            raise ArraySpecError("cycle needs a non-empty pattern")
        k = len(pattern)
        return [pattern[i % k] + (i // k) * stride for i in range(n)]
    if "random" in spec:
        r = spec["random"]
        if r.get("prng", "splitmix64") != "splitmix64":
            raise ArraySpecError(f"unknown prng {r.get('prng')!r}: only splitmix64")
        return random_ints(r["seed"], _check_len(r.get("len")), r["low"], r["high"])
    if "concat" in spec:
        if sum(spec_len(part) for part in spec["concat"]) > MAX_ARRAY_LEN:
            raise ArraySpecError(f"concat exceeds the limit of {MAX_ARRAY_LEN} elements")
        return [v for part in spec["concat"] for v in evaluate(part)]
    raise ArraySpecError(f"unknown array spec keys {sorted(spec)}")
