"""The PRNG (splitmix64) and array specs of case files (conformance/corpus/arrays.py)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conformance.corpus import arrays
from conformance.corpus.arrays import ArraySpecError, evaluate, spec_len, splitmix64

M64 = (1 << 64) - 1
FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# ---------------------------------------------------------------------------------------------
# splitmix64 and array specs


def test_splitmix64_published_first_outputs_for_seed_0():
    assert splitmix64(0, 3).tolist() == [0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4,
                                         0x06C45D188009454F]
    assert splitmix64(0, 3).dtype == np.uint64
    assert splitmix64(0, 0).tolist() == []


def _splitmix64_scalar(seed: int, n: int) -> list[int]:
    """The module docstring's definition, one Python int at a time."""
    out, state = [], seed % (1 << 64)
    for _ in range(n):
        state = (state + 0x9E3779B97F4A7C15) & M64
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
        out.append(z ^ (z >> 31))
    return out


@FAST
@given(st.integers(min_value=0, max_value=M64), st.integers(min_value=0, max_value=40))
def test_splitmix64_vectorised_matches_scalar_definition(seed, n):
    assert splitmix64(seed, n).tolist() == _splitmix64_scalar(seed, n)


def test_random_ints_and_permutation():
    assert arrays.random_ints(0, 3, 10, 19) == [10 + x % 10 for x in _splitmix64_scalar(0, 3)]
    assert arrays.random_ints(0, 3, 10, 19) == [15, 10, 19]
    assert arrays.random_ints(5, 4, -2, -2) == [-2, -2, -2, -2]
    with pytest.raises(ArraySpecError, match=r"random: high \(1\) is below low \(2\)"):
        arrays.random_ints(0, 1, 2, 1)
    perm = arrays.permutation(7, 50)
    assert perm.dtype == np.int64 and sorted(perm.tolist()) == list(range(50))
    assert perm.tolist() == np.argsort(splitmix64(7, 50), kind="stable").tolist()
    assert arrays.permutation(8, 50).tolist() != perm.tolist()


@pytest.mark.parametrize(("spec", "values"), [
    ([3, -1, 0], [3, -1, 0]),
    ({"fill": 7, "len": 3}, [7, 7, 7]),
    ({"fill": 7, "len": 0}, []),
    ({"arange": {"len": 4}}, [0, 1, 2, 3]),
    ({"arange": {"len": 3, "start": 5, "step": -2}}, [5, 3, 1]),
    ({"cycle": [1, 0], "len": 5}, [1, 0, 1, 0, 1]),
    ({"random": {"len": 3, "low": 10, "high": 19, "seed": 0, "prng": "splitmix64"}}, [15, 10, 19]),
    ({"concat": [[1], {"fill": 0, "len": 2}, {"arange": {"len": 2, "start": 9}}]}, [1, 0, 0, 9, 10]),
    ({"concat": []}, []),
])
def test_array_specs(spec, values):
    assert evaluate(spec) == values
    assert spec_len(spec) == len(values)


@pytest.mark.parametrize(("spec", "message"), [
    ({"fill": 1}, "len must be a non-negative integer, got None"),
    ({"fill": 1, "len": -1}, "len must be a non-negative integer, got -1"),
    ({"fill": 1, "len": True}, "len must be a non-negative integer, got True"),
    ({"fill": 1, "len": (1 << 20) + 1}, "len 1048577 exceeds the limit of 1048576 elements"),
    ({"cycle": [], "len": 2}, "cycle needs a non-empty pattern"),
    ({"random": {"len": 2, "low": 0, "high": 1, "seed": 0, "prng": "pcg"}}, "unknown prng 'pcg'"),
    ({"concat": [{"fill": 0, "len": 1 << 20}, [1]]}, "concat exceeds the limit"),
    ({"bogus": 1}, "unknown array spec keys ['bogus']"),
    ("12", "not an array spec: '12'"),
])
def test_bad_array_specs(spec, message):
    with pytest.raises(ArraySpecError) as excinfo:
        evaluate(spec)
    assert message in str(excinfo.value)


_leaf_specs = st.one_of(
    st.lists(st.integers(-5, 5), max_size=6),
    st.builds(lambda v, n: {"fill": v, "len": n}, st.integers(-9, 9), st.integers(0, 6)),
    st.builds(lambda n, a, s: {"arange": {"len": n, "start": a, "step": s}},
              st.integers(0, 6), st.integers(-9, 9), st.integers(-3, 3)),
    st.builds(lambda p, n: {"cycle": p, "len": n}, st.lists(st.integers(-3, 3), min_size=1,
                                                             max_size=3), st.integers(0, 7)),
    st.builds(lambda n, lo, span, seed: {"random": {"len": n, "low": lo, "high": lo + span,
                                                    "seed": seed}},
              st.integers(0, 6), st.integers(-50, 50), st.integers(0, 20), st.integers(0, 1 << 40)),
)
_array_specs = st.recursive(_leaf_specs, lambda inner: st.builds(
    lambda parts: {"concat": parts}, st.lists(inner, max_size=3)), max_leaves=6)


@FAST
@given(_array_specs)
def test_spec_len_agrees_with_evaluate(spec):
    values = evaluate(spec)
    assert spec_len(spec) == len(values)
    assert all(isinstance(v, int) for v in values)
    if isinstance(spec, dict) and "random" in spec:
        r = spec["random"]
        assert all(r["low"] <= v <= r["high"] for v in values)
