"""Random valid plans for the differential fuzzer (``python -m conformance fuzz``), as case dicts.

Every plan is a launcher case in the corpus's own format (``cases/<subject>/README.md``):
table and LUT specs of :mod:`conformance.corpus.generators` (``linear``/``permuted`` tables,
``identity``/``shift``/``permutation`` LUTs, ``set`` entries for negative slots) and per-request arrays as JSON lists of ints, so a plan
that exposes a divergence is written out as a case file unchanged (plus its golden). Plans pass
every check of spec section 4 (bs in [0, 4096], bs <= write_req_capacity, a LUT of length >= 1
whenever W > 0, capacities >= 0); their *values* roam over section 5 and section 6:

* request kinds: padding rows (rpi 0, garbage lengths), decodes (extend 1), prefills (prefix 0),
  chunked prefills, idle rows (extend 0), negative prefix or extend;
* hazards (section 6): prefix past the row (and past the table's last row), rows out of range
  (negative, ``max_reqs``, 2^32 + 1), a negative slot in the table, a LUT shorter than the slots;
* windows W < 0, W = 0, W > 0 near the prefixes, with and without a LUT (W > 0 always has one);
* verify capacity around the total (under by one, exact, over by one, zero, huge), write capacity
  bs or more; bs from 0 up to 4096 (mostly small, sometimes large);
* int64 prefixes (2^40) now and then.

Plan ``i`` of seed ``s`` depends only on (s, i): ``random.Random(s * 1_000_003 + i)``.
"""

from __future__ import annotations

import random
import shlex

from conformance.corpus.corpus_subject import constants as _constants
from conformance.corpus.corpus_subject import contract as _contract

PLAN_BS_BLOCK_SIZE = _constants.PLAN_BS_BLOCK_SIZE
REQUEST_INPUT_NAMES = _contract.REQUEST_INPUT_NAMES
SCALAR_NAMES = _contract.SCALAR_NAMES
TABLE_NAME = _contract.TABLE_NAME

BIG = 1 << 40
"""An int64-only length (totals of a few of them exceed 2^31)."""
MAX_TABLE = 1 << 16
"""Largest generated table (elements), so plans stay cheap to build under interpreters."""


def plan_rng(seed: int, index: int) -> random.Random:
    """The PRNG of plan ``index`` of seed ``seed`` (Python's Mersenne Twister, int-seeded)."""
    return random.Random(seed * 1_000_003 + index)


def _bs(rng: random.Random) -> int:
    roll = rng.random()
    if roll < 0.05:
        return rng.choice((0, 1, PLAN_BS_BLOCK_SIZE, PLAN_BS_BLOCK_SIZE - 1))
    if roll < 0.70:
        return rng.randint(1, 12)
    if roll < 0.92:
        return rng.randint(13, 200)
    return rng.randint(201, PLAN_BS_BLOCK_SIZE)


def _table(rng: random.Random) -> dict:
    max_reqs = rng.choice((1, 2, 4, 8, 16, 64, 256))
    max_seq_len = rng.choice((0, 1, 7, 16, 64, 256, 1024)) if rng.random() < 0.05 else \
        rng.choice((1, 7, 16, 64, 256, 1024))
    while max_reqs * max_seq_len > MAX_TABLE:
        max_seq_len //= 2
    spec = {"generator": "linear", "max_reqs": max_reqs, "max_seq_len": max_seq_len}
    if rng.random() < 0.4:
        spec = {"generator": "permuted", "max_reqs": max_reqs, "max_seq_len": max_seq_len,
                "seed": rng.randrange(1 << 32), "prng": "splitmix64"}
    return spec


def _request(rng: random.Random, max_reqs: int, max_seq_len: int,
             window: int) -> tuple[int, int, int]:
    """(rpi, prefix, extend) of one request; see the module docstring for the kinds."""
    real_row = rng.randint(1, max_reqs - 1) if max_reqs > 1 else rng.choice((1, -1))
    near = max(max_seq_len, 1)
    kind = rng.choices(
        ("padding", "decode", "prefill", "chunk", "idle", "negative", "past-row", "last-row",
         "bad-row", "window-edge", "huge"),
        weights=(10, 30, 12, 12, 5, 4, 5, 4, 4, 8, 2))[0]
    if kind == "padding":
        return 0, rng.choice((0, 99, -5, rng.randint(-BIG, BIG))), rng.choice((0, 99, -3, 1 << 20))
    if kind == "decode":
        return real_row, rng.randint(1, near), 1
    if kind == "prefill":
        return real_row, 0, rng.randint(1, 2048)
    if kind == "chunk":
        return real_row, rng.randint(1, near), rng.randint(2, 512)
    if kind == "idle":
        return real_row, rng.randint(0, near), 0
    if kind == "negative":
        return real_row, rng.choice((-1, -7, rng.randint(0, near))), rng.choice((-1, -4, 1))
    if kind == "past-row":
        return real_row, rng.randint(near + 1, 3 * near + 2), rng.randint(1, 4)
    if kind == "last-row":
        return max_reqs - 1 if max_reqs > 1 else 1, rng.randint(near - 1, 2 * near + 1), 1
    if kind == "bad-row":
        return rng.choice((-1, -3, max_reqs, max_reqs + 5, (1 << 32) + 1)), rng.randint(1, near), 1
    if kind == "window-edge" and window > 0:
        return real_row, max(window + rng.choice((-1, 0, 1)), 0), rng.choice((0, 1, 3))
    return real_row, rng.choice((BIG, BIG + 3, rng.randint(1, near))), rng.randint(1, 3)


def _window(rng: random.Random, max_seq_len: int) -> int:
    roll = rng.random()
    if roll < 0.40:
        return 0
    if roll < 0.50:
        return rng.choice((-1, -128))
    return rng.choice((1, 2, 7, 8, 64, 128, max(max_seq_len - 1, 1), max_seq_len + 1))


def _lut(rng: random.Random, table: dict, window: int) -> dict | None:
    if window <= 0 and rng.random() < 0.5:
        return None
    slots = table["max_reqs"] * table["max_seq_len"]
    n = rng.choice((max(slots, 1), max(slots, 1) + 3, max(slots // 2, 1), 1, 65))
    kind = rng.choice(("identity", "shift", "permutation"))
    spec: dict = {"generator": kind, "len": n}
    if kind == "shift":
        spec["shift"] = rng.choice((100, -3, 1 << 33))
    elif kind == "permutation":
        spec.update(seed=rng.randrange(1 << 32), prng="splitmix64")
    if rng.random() < 0.2:
        spec["set"] = [[rng.randrange(n), rng.choice((-1, -9))]]
    return spec


def verify_total(rpi: list[int], prefix: list[int], window: int) -> int:
    """Sum of verify_len over the batch (spec section 5), to place the capacity around it."""
    total = 0
    for row, p in zip(rpi, prefix):
        if row != 0:
            total += max(min(p, window), 0) if window > 0 else max(p, 0)
    return total


def _capacity(rng: random.Random, total: int) -> int:
    choice = rng.choice(("under", "exact", "over", "zero", "huge", "random"))
    return {"under": max(total - 1, 0), "exact": total, "over": total + 1, "zero": 0,
            "huge": 1 << 40, "random": rng.randint(0, max(2 * total, 1))}[choice]


def random_plan(seed: int, index: int) -> dict:
    """Plan ``index`` of ``seed``: a valid launcher case dict without ``expect`` (see module doc).

    Returns:
        ``{"id", "description", "tags", "source", "golden_check", "needs_review", "inputs"}``;
        ``inputs`` holds JSON lists (int64 values) for the three per-request arrays.
    """
    rng = plan_rng(seed, index)
    table = _table(rng)
    if table["max_seq_len"] > 0 and rng.random() < 0.25:  # a negative slot somewhere in the table
        table["set"] = [[rng.randrange(table["max_reqs"]), rng.randrange(table["max_seq_len"]),
                         rng.choice((-1, -2, -1000))]]
    window = _window(rng, table["max_seq_len"])
    lut = _lut(rng, table, window)
    bs = _bs(rng)
    reqs = [_request(rng, table["max_reqs"], table["max_seq_len"], window) for _ in range(bs)]
    rpi, prefix, extend = ([r[k] for r in reqs] for k in range(3))
    if bs and table["max_seq_len"] > 0 and rng.random() < 0.3:  # a negative slot that is read
        r = rng.randrange(bs)
        if 0 < rpi[r] < table["max_reqs"] and prefix[r] > 0:
            pos = min(prefix[r] - 1, table["max_seq_len"] - 1)
            table.setdefault("set", []).append([rpi[r], pos, rng.choice((-1, -5))])
    inputs: dict = {TABLE_NAME: table, "lut": lut,
                    **dict(zip(SCALAR_NAMES, (window, _capacity(rng, verify_total(rpi, prefix,
                                                                                   window)))))}
    if rng.random() < 0.3:
        inputs["write_req_capacity"] = bs + rng.choice((1, 7, 100))
    inputs.update(zip(REQUEST_INPUT_NAMES, (rpi, prefix, extend)))
    tags = ["fuzz"] + (["swa"] if window > 0 else []) + (["lut"] if lut else [])
    return {
        "id": f"fuzz-s{seed}-p{index}",
        "description": f"Fuzzed plan {index} of seed {seed} (bs {bs}).",
        "tags": tags,
        "source": {"kind": "fuzz",
                   "ref": f"{shlex.join(['python', '-m', 'conformance', 'fuzz', '--seed', str(seed)])}"
                          f", plan {index}"},
        "golden_check": "recorded from the python planner by the fuzzer; NOT yet checked against "
                        "the spec (tests/test_goldens.py checks it against the oracle)",
        "needs_review": True,
        "inputs": inputs,
    }
