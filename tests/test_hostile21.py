"""Twenty-first hostile review, kept as tests: planners right in every byte that leave their
caller's process changed where tests/test_hostile20.py's checks did not read (planted:
tests/planted/hostile21_state.py). Each is also shown harming its caller outside the harness,
beside the honest pure-Python planner, whose caller is unharmed.

Fooled before this review, fixed here (each was exit 0, its case ``pass``): ``logging`` was read
as each existing logger's own fields, handlers by identity, so a planner could silence its
caller's logs and leave every field read as it was:

* ``logging.lastResort.setLevel(CRITICAL + 1)``: the same handler object, so no change; a caller
  that configured no handler (the usual library use) prints none of its errors;
* every logger's memo of ``isEnabledFor`` (``Logger._cache``) rewritten to ``False``: levels,
  flags and handlers untouched, every record dropped until some ``setLevel`` clears the memo;
* a logger first made during the call (no change, by the rule for new loggers) above an existing
  one (``hostile21`` above ``hostile21.premade.child``, whose parents were placeholders), at
  ``CRITICAL + 1`` with ``propagate`` off: the existing logger is reparented to it and drops
  everything.

conformance/robustness/runtime_state.py now reads what each existing logger does with a record
(its ``isEnabledFor`` answers, the handlers its records reach) and the level, filters, formatter
and stream of those handlers and of ``lastResort``; and, beside it,
conformance/robustness/process_settings.py reads ``sys.getdlopenflags()``
(``sets_global_dlopen``: every extension its caller imports later loads ``RTLD_GLOBAL``, its
symbols interposing on every library loaded after it).
"""

from __future__ import annotations

import pytest

from tests.planner_folder_runs import after_one_call, failing_run
from tests.planted import hostile21_state as planted

STATE = "tests.planted.hostile21_state"
HONEST = "impls.offsets_planner.python_planner:launch"
CASE = "spec7-prefill-and-decodes"
HEADER = """
    import ctypes, io, logging, os, sys
    from tests.planted import hostile21_state as planted
"""
LOGGED = """
    caught = io.StringIO()
    sys.stderr = caught  # lastResort writes to sys.stderr as it is when a record comes
    {}.error("boom")
    sys.stderr = sys.__stderr__
    print("logged", "boom" in caught.getvalue())"""
EFFECTS = {
    "silences_the_last_resort": LOGGED.format("logging.getLogger('caller')"),
    "poisons_the_level_caches": LOGGED.format("logging.getLogger()"),
    "adopts_a_logger": LOGGED.format("logging.getLogger(planted.PREMADE)"),
    "sets_global_dlopen": """
        import _testbuffer  # an extension module not loaded before (torch loads _lzma, _bz2)
        print("global symbols", hasattr(ctypes.CDLL(None), "PyInit__testbuffer"))""",
}
"""Planner -> the caller's code after its one call."""
RESULTS = {
    "silences_the_last_resort": ("logged False (exit 0)", "logged True (exit 0)"),
    "poisons_the_level_caches": ("logged False (exit 0)", "logged True (exit 0)"),
    "adopts_a_logger": ("logged False (exit 0)", "logged True (exit 0)"),
    "sets_global_dlopen": ("global symbols True (exit 0)", "global symbols False (exit 0)"),
}
"""Planner -> (the last line its caller prints and its exit status after one right call of the
planner, the same after one call of the honest planner)."""
LOGGING = "logging configuration (loggers, their levels and handlers): changed: "
CHANGES = {
    "silences_the_last_resort": f"{LOGGING}handler <_StderrHandler>: level 30 -> "
                                f"{planted.SILENT}",
    "poisons_the_level_caches": f"{LOGGING}logger 'root': its isEnabledFor memo "
                                "(Logger._cache) contradicts its level at ",
    "adopts_a_logger": f"{LOGGING}logger {planted.PREMADE!r}: effective level 30 -> "
                       f"{planted.SILENT}",
    "sets_global_dlopen": "dlopen flags (sys.getdlopenflags): 2 -> 258",
}
"""The start of the line of each planner's failure that names its change (after four spaces in
the message; ``RTLD_NOW`` 2, ``RTLD_GLOBAL | RTLD_NOW`` 258 on Linux)."""


@pytest.mark.parametrize("planner", sorted(EFFECTS))
def test_each_planner_harms_its_caller(planner):
    """Outside the harness: one right call, then the caller's own code behaves otherwise
    (``RESULTS``' first value) than after one call of the honest planner (its second)."""
    header = HEADER
    assert after_one_call(f"{STATE}:{planner}", EFFECTS[planner], header) == RESULTS[planner][0]
    assert after_one_call(HONEST, EFFECTS[planner], header) == RESULTS[planner][1]


@pytest.fixture(scope="module")
def one_run(tmp_path_factory) -> dict:
    """Every planted planner on one case, in one corpus run: {planner: (status, message)}."""
    found = failing_run(tmp_path_factory.mktemp("hostile21") / "results.json",
                        [f"{STATE}:{name}" for name in planted.HARMS], CASE)
    return {name: found[f"{STATE}:{name}"] for name in planted.HARMS}


@pytest.mark.slow
@pytest.mark.parametrize("planner", sorted(CHANGES))
def test_a_planner_that_leaves_such_state_fails(one_run, planner):
    """Fixed (each was exit 0, its case ``pass``): the case fails naming its change."""
    status, message = one_run[planner]
    lines = [line[4:] for line in message.splitlines() if line.startswith("    ")]
    assert status == "fail", message
    assert any(line.startswith(CHANGES[planner]) for line in lines), message


def test_the_logging_reading_sees_each_harm_and_sets_it_back():
    """In this process: each logging harm read as a change of ``logging_state`` and set back by
    its setter, so that the caller's next record reaches its handler again."""
    import logging

    from conformance.robustness.runtime_state import (logging_changed, logging_state,
                                                      set_logging_state)

    for name in ("silences_the_last_resort", "poisons_the_level_caches", "adopts_a_logger"):
        before = logging_state()
        planted.HARMS[name]()
        changed = logging_changed(before, logging_state())
        assert changed and all(c.startswith(("handler <", "logger ")) for c in changed), name
        set_logging_state(before)
        assert logging_changed(before, logging_state()) == [], name
        assert logging.getLogger(planted.PREMADE).isEnabledFor(logging.ERROR), name
        assert logging.lastResort.level == logging.WARNING, name
    made = logging.getLogger(planted.PREMADE.split(".")[0])  # made by adopts_a_logger: not
    made.setLevel(logging.NOTSET)  # set back (a logger made since is no change), so by hand
    made.propagate = True


def test_an_honest_logger_made_during_a_call_is_no_change():
    """A library's ``logging.getLogger(__name__)`` made, with a handler of its own, and a logger
    made between an existing one and its parent at the default settings: no change."""
    import logging

    from conformance.robustness.runtime_state import logging_changed, logging_state

    logging.getLogger("hostile21honest.premade.child")
    before = logging_state()
    logging.getLogger("hostile21honest.lib").addHandler(logging.NullHandler())
    logging.getLogger("hostile21honest.premade")  # between the existing child and its parent
    assert logging_changed(before, logging_state()) == []


def test_every_planted_planner_is_tested():
    assert sorted(EFFECTS) == sorted(RESULTS) == sorted(CHANGES) == sorted(planted.HARMS)
