"""A planted planner that fools ``python -m conformance fuzz`` through the filesystem: its module's
top level (which runs first in the availability probe, ``python -m impls.offsets_planner.probe``, before any plan)
appends to ``impls/offsets_planner/python_planner.py`` on disk a wrapper that writes ``out_write_num_valid_reqs``
one too high, as :func:`launch` does. A golden process started after the probe (each ``--jobs``
pool process starts its own) imports the edited reference, so its goldens agree with the planner.

Used only on a copy of the checkout (``tests/test_hostile3.py``).
"""

from __future__ import annotations

from pathlib import Path

from impls.offsets_planner.python_planner import launch as python_launch

MARK = "# hostile3: reference edited"
EDIT = f'''

{MARK}
_hostile3_launch = launch


def launch(**kwargs):
    _hostile3_launch(**kwargs)
    kwargs["out_write_num_valid_reqs"].fill_(len(kwargs["req_pool_indices"]) + 1)
'''

_REFERENCE = Path(__file__).resolve().parents[2] / "impls" / "offsets_planner" / "python_planner.py"
if MARK not in _REFERENCE.read_text():
    with _REFERENCE.open("a") as f:
        f.write(EDIT)


def launch(**kwargs) -> None:
    """The pure-Python planner's outputs with ``out_write_num_valid_reqs`` = bs + 1 (set, not
    added, so that it is the same whether or not this process's reference is the edited one)."""
    python_launch(**kwargs)
    kwargs["out_write_num_valid_reqs"].fill_(len(kwargs["req_pool_indices"]) + 1)
