"""Planners for the fuzzer's self-test (``tests/test_fuzz.py``): the pure-Python planner with one
planted bug that only a particular corner of the input space reaches.

    python -m conformance fuzz --planner tests.planted.fuzz_planners:planted --n 200 --seed 3 --out /tmp/found
"""

from __future__ import annotations

from impls.offsets_planner.python_planner import launch as python_launch


def planted(**kwargs) -> None:
    """Bug: with a LUT and bs >= 3, the seed of the first live request whose prefix exceeds 7 and
    that has a seed read inside its row (a seed the contract decides, spec section 8) is off by
    one (``+1``). Right everywhere else, so a fuzzer must find bs >= 3,
    a LUT and a prefix > 7 together, and the smallest failing plan has exactly 3 requests."""
    python_launch(**kwargs)
    rpi = kwargs["req_pool_indices"].tolist()
    if kwargs["full_to_swa_index_mapping"] is None or len(rpi) < 3:
        return
    prefix = kwargs["prefix_lens"].tolist()
    seeds = kwargs["out_write_seed_slot_indices"]
    rows, cols = kwargs["req_to_token"].shape
    for r, (row, p) in enumerate(zip(rpi, prefix)):
        # a seed the contract decides: its position inside its row, its row inside the table
        if 0 < row < rows and 7 < p <= cols and int(seeds[r]) != -1:
            seeds[r] += 1
            return


def poisons_the_golden(**kwargs) -> None:
    """Bug: :func:`planted`'s, and on its first call it replaces ``impls.offsets_planner.python_planner.launch``
    (the reference) with :func:`planted`, so a golden recorded in its process would agree with
    it. Run it only in a child process (``python -m conformance fuzz``): the patch lasts."""
    import impls.offsets_planner.python_planner

    impls.offsets_planner.python_planner.launch = planted
    planted(**kwargs)


a_planted_planner_whose_name_is_long_enough_to_push_an_id_past_its_limit = planted
""":func:`planted` under a name that, with its module, is 100 characters long."""

