"""Per-case JUnit XML: what pytest's own ``--junitxml`` writes for a corpus item.

pytest names each testcase after the item (``name="case-id[planner]"``) and gives every item of
the corpus the one classname of its collector module (``conformance.test_corpus``). A CI system
groups testcases by classname, so :func:`label_testcase` sets it to the case file instead
(``cases/<subject>/spec/section7-examples.json`` ->
``cases.<subject>.spec.section7-examples``; Jenkins and GitLab show it as package
``cases.<subject>.spec``, class ``section7-examples``) and ``file`` to that file, and
replaces the results writer's internal ``case_meta`` property with two readable ones: ``where``
(file and JSON path) and ``rerun`` (the command that reruns the item).

It uses pytest's junitxml plugin object (``_pytest.junitxml.xml_key``, as pytest's own
``record_xml_attribute`` fixture does); without ``--junitxml`` it does nothing.
"""

from __future__ import annotations

import pytest

try:
    from _pytest.junitxml import xml_key
except ImportError:  # a pytest without it: pytest's own names stay
    xml_key = None


def classname(file: str) -> str:
    """The JUnit classname of the case file ``file`` (a display path): dotted, no ``.json`` or
    ``.jsonl`` (a one-call subject's JSON Lines)."""
    stem = file.removesuffix(".jsonl").removesuffix(".json")
    return stem.replace("\\", "/").strip("/").replace("/", ".")


def label_testcase(config: pytest.Config, report: pytest.TestReport, meta: dict) -> None:
    """Give ``report``'s testcase the case file as classname and file, the properties ``where``
    and ``rerun``, and drop ``case_meta`` from the properties pytest writes at teardown."""
    xml = config.stash.get(xml_key, None) if xml_key is not None else None
    if xml is None or not meta.get("file"):
        return
    testcase = xml.node_reporter(report)
    testcase.add_attribute("classname", classname(meta["file"]))
    testcase.add_attribute("file", meta["file"])
    if not any(name == "where" for name, _ in getattr(testcase, "properties", ())):
        # Once per testcase, from its first report: a worker that crashed sends no teardown.
        testcase.add_property("where", " ".join(p for p in (meta["file"], meta.get("json_path"))
                                                if p))
        testcase.add_property("rerun", meta.get("rerun") or "")
    if report.when == "teardown":  # pytest writes the item's user_properties now
        report.user_properties = [p for p in report.user_properties if p[0] != "case_meta"]
