"""Planted planners of the sixth hostile review (tests/test_hostile6.py): wrong errors dressed as
the documented one, for the failure groups' ``got_kind`` (conformance/reporting/failure_groups.py).
"""

from __future__ import annotations

from impls.offsets_planner import python_planner


def _documented(kwargs):
    """The error the reference planner raises for these arguments (None: it returns)."""
    try:
        python_planner.launch(**kwargs)
    except Exception as exc:  # noqa: BLE001 - the documented error, re-dressed below
        return exc
    return None


def fake_builtin_class(**kwargs):
    """Raises, where the reference raises, an exception of a class *named* like the documented
    built-in (``ValueError``...) but not a subclass of it, with the very message and error id:
    a wrong error, which the failure groups read as ``got ValueError [<the expected id>]``."""
    real = _documented(kwargs)
    if real is None:
        return python_planner.launch(**kwargs)
    base = next(c for c in type(real).__mro__ if c.__module__ == "builtins")
    fake = type(base.__name__, (Exception,), {})(str(real))
    fake.error_id = getattr(real, "error_id", None)
    raise fake


def right_id_wrong_message(**kwargs):
    """Raises the documented built-in class with the documented error id as its ``error_id``,
    but another message: a wrong error whose group words read exactly like the expected error."""
    real = _documented(kwargs)
    if real is None:
        return python_planner.launch(**kwargs)
    base = next(c for c in type(real).__mro__ if c.__module__ == "builtins")
    fake = base("nothing is wrong here")
    fake.error_id = getattr(real, "error_id", None)
    raise fake
