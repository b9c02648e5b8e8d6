"""Planted planners of the seventeenth hostile review against the one-call engine
(tests/test_hostile17.py): each changes, in place, a container that a module the engine watches
binds (the binding stays the very same object, which is all the namespace guard compared).

* :func:`narrows_the_profiles`: tests/planted/wrong_entries_planners.py's
  ``last_entry_clamped_wrong`` (wrong only where the project rule ``lut-clamp`` decides), and
  ``verdict.PROFILES["all"]`` narrowed to the contract: a built-in planner, judged on every rule,
  then reads ``differs`` (a pass), and so does every later built-in of the process;
* :func:`widens_the_default_table`: the right plan, and the entries subject's ``DEFAULT_TABLE``
  given 32 columns: every later case built on the default table gets another table than its
  golden was written for (honest planners fail);
* :func:`reseeds_the_fills`: the right plan, and the process's poison seed (``inputs._SEED``) set
  to 0: every later fill of the process comes from a seed the planner chose, which no results
  fingerprint or rerun command names.
"""

from __future__ import annotations

from tests.planted.wrong_entries_planners import last_entry_clamped_wrong


def narrows_the_profiles(**kwargs):
    from conformance.engine import verdict

    last_entry_clamped_wrong(**kwargs)
    verdict.PROFILES["all"] = verdict.PROFILES["contract"]


def widens_the_default_table(**kwargs):
    from impls.entries_planner import subject
    from impls.entries_planner.python_planner import launch

    launch(**kwargs)
    subject.DEFAULT_TABLE["cols"] = 32


def reseeds_the_fills(**kwargs):
    from conformance.engine import inputs
    from impls.entries_planner.python_planner import launch

    launch(**kwargs)
    inputs._SEED[0] = 0
