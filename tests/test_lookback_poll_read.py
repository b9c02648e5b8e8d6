"""How a Triton look-back scan program reads one poll of the earlier tiles' words
(impls/offsets_planner/triton_roles_lookback.py ``_tagged_sums``, the ``TAGGED`` candidate): from
the words ``READY | 32 bits`` that each earlier tile publishes (its verify total's low and high
half, then its write total's), the two carries and the count of words not ready yet, in one
reduction. Run in Triton's interpreter on published totals drawn at random."""

from __future__ import annotations

import random

import pytest
import torch

from impls.offsets_planner import triton_planner as tp
from impls.offsets_planner import triton_roles_lookback as trl

pytestmark = pytest.mark.skipif(tp.MODE != "interpreter", reason="Triton's interpreter only")
READY = 1 << 32

if tp.triton is not None:
    tl = tp.tl

    @tp.triton.jit
    def _read_poll(poll_ptr, out_ptr, N: tl.constexpr):
        w = tl.arange(0, N)
        carry_v, carry_w, missing = trl._tagged_sums(tl.load(poll_ptr + w), w)
        tl.store(out_ptr, carry_v)
        tl.store(out_ptr + 1, carry_w)
        tl.store(out_ptr + 2, missing)


def published(totals: list[tuple[int, int]]) -> list[int]:
    """The four words each tile publishes for its (verify, write) totals (spec of the workspace
    in the module docstring of triton_roles_lookback)."""
    words = []
    for v, w in totals:
        words += [READY | (v & 0xFFFFFFFF), READY | (v >> 32), READY | (w & 0xFFFFFFFF),
                  READY | (w >> 32)]
    return words


def read(words: list[int]) -> tuple[int, int, int]:
    out = torch.zeros(3, dtype=torch.int64)
    _read_poll[(1,)](torch.tensor(words, dtype=torch.int64), out, N=len(words))
    return tuple(int(x) for x in out)


@pytest.mark.parametrize("tiles", [2, 8, 32, 128])
def test_carries_are_the_sums_of_the_published_totals(tiles):
    rng = random.Random(tiles)
    totals = [(rng.randrange(0, 1 << 40), rng.randrange(0, 1 << 40)) for _ in range(tiles)]
    assert read(published(totals)) == (sum(v for v, _ in totals), sum(w for _, w in totals), 0)


def test_words_not_ready_are_counted():
    rng = random.Random(5)
    totals = [(rng.randrange(0, 1 << 36), rng.randrange(0, 1 << 36)) for _ in range(8)]
    words = published(totals)
    for i in (0, 5, 6, 31):  # zeroed (the other set's reset) or stale flags: not ready
        words[i] = 0 if i != 6 else (2 << 32) | 7
    assert read(words)[2] == 4
    masked_out = published(totals[:4]) + [READY] * 16  # the words of tiles not before this one
    assert read(masked_out) == (sum(v for v, _ in totals[:4]), sum(w for _, w in totals[:4]), 0)
