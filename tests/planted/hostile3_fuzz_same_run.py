"""A planted planner that fools the very ``python -m conformance fuzz`` run that judges it: its
module's top level runs first in the availability probe (``python -m impls.offsets_planner.probe``, before any plan; its
sandbox keeps the filesystem), while the fuzzing process has not yet imported
``conformance.robustness.isolated_case`` (``plan_divergence.divergence`` imports it on the first plan). The
top level plants that module's bytecode (its source untouched) with a ``judge_observed`` that
finds nothing, so no plan diverges; the planner itself writes ``out_write_num_valid_reqs`` one too
high.

Used only on a copy of the checkout (``tests/test_hostile3.py``).
"""

from __future__ import annotations

from impls.offsets_planner.python_planner import launch as python_launch
from tests.planted.hostile3_attacks import TREE, plant_bytecode

FINDS_NOTHING = '''

HOSTILE3_PLANTED = "a judge_observed that finds nothing"


def judge_observed(case, planner, answer):
    return None
'''

plant_bytecode(TREE / "conformance" / "robustness" / "isolated_case.py", FINDS_NOTHING)


def launch(**kwargs) -> None:
    """The pure-Python planner's outputs with ``out_write_num_valid_reqs`` one too high."""
    python_launch(**kwargs)
    kwargs["out_write_num_valid_reqs"].add_(1)
