"""What a case calls (its ``entry``) and the planner-column names of results that belong to no
planner. One place for these names: the pytest plugin, the results writer, the rerun command and
the report all import them.

* ``launcher`` cases run on every planner under test;
* ``validator`` cases call the shared inner validator (impls/validate.py) directly, once, in the
  column :data:`VALIDATOR`;
* ``allocate`` cases call the buffer allocator (impls/buffers.py), once, in the column
  :data:`ALLOCATOR`;
* a case file that fails to load is one result in the column :data:`LOAD`.
"""

from __future__ import annotations

VALIDATOR, ALLOCATOR, LOAD = "validator", "allocator", "load"
SHARED_PLANNERS: dict[str, str] = {"validator": VALIDATOR, "allocate": ALLOCATOR}
"""Entry of a case that reaches shared code, not a planner -> the column its result is in."""
PSEUDO_PLANNERS: tuple[str, ...] = (VALIDATOR, ALLOCATOR, LOAD)
"""Planner-column names of results that belong to no planner, in report order: cases that reach
only the shared validator, the buffer allocator's errors, and faults of case files found at load
time."""
