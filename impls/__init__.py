"""The kernel subjects, one package each, every one with its own spec (``docs/spec/<subject>.md``),
contract table, validator, error catalog and planners:

* :mod:`impls.offsets_planner`: the offsets planner (``docs/spec/offsets-planner.md``);
* :mod:`impls.entries_planner`: the entries planner (``docs/spec/entries-planner.md``).

This package imports neither: a subject is imported by name.
"""
