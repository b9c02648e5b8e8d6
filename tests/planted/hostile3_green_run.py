"""A planted planner that turns the very ``pytest conformance/`` run that judges it green: its
module's top level runs first in the availability probe (``python -m impls.offsets_planner.probe``, during collection;
its sandbox keeps the filesystem), and pytest's process imports ``conformance.bench.goals`` only later, in the
bench plugin's ``pytest_terminal_summary`` (every run, benchmarks or not). The top level plants
that module's bytecode (CPython's and pytest's assertion-rewrite cache; the source untouched) with
code that runs in pytest's process at the end of the run: every result rewritten as ``pass`` in
the results file (``complete``, exit status 0), every failure dropped from the JUnit XML, and the
session's exit status set to 0. The planner itself writes ``out_write_num_valid_reqs`` one too
high.

Used only on a copy of the checkout (``tests/test_hostile3.py``).
"""

from __future__ import annotations

from impls.offsets_planner.python_planner import launch as python_launch
from tests.planted.hostile3_attacks import TREE, plant_bytecode

GREEN = '''

HOSTILE3_PLANTED = "a green run from the terminal summary"


def _hostile3_green():
    import gc
    import xml.etree.ElementTree as ET
    from _pytest.main import Session

    session = next((o for o in gc.get_objects() if type(o) is Session), None)
    if session is None:
        return
    for plugin in session.config.pluginmanager.get_plugins():
        results = getattr(plugin, "results", None)
        if isinstance(results, dict) and hasattr(plugin, "write"):
            for entry in results.values():
                if isinstance(entry, dict) and "status" in entry:
                    entry.update(status="pass", observed="pass", message=None, verdict=None)
            plugin.write(complete=True, exitstatus=0)
    xml = getattr(session.config.option, "xmlpath", None)
    if xml:
        tree = ET.parse(xml)
        for parent in tree.iter():
            for child in list(parent):
                if child.tag in ("failure", "error"):
                    parent.remove(child)
        for suite in tree.iter("testsuite"):
            suite.set("failures", "0")
            suite.set("errors", "0")
        tree.write(xml)
    session.exitstatus = 0
    session.testsfailed = 0


_hostile3_green()
'''

plant_bytecode(TREE / "conformance" / "bench" / "goals.py", GREEN)


def launch(**kwargs) -> None:
    """The pure-Python planner's outputs with ``out_write_num_valid_reqs`` one too high."""
    python_launch(**kwargs)
    kwargs["out_write_num_valid_reqs"].add_(1)
