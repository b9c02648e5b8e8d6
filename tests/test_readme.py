"""The README's two commands are the ones CI runs, and its summary table is the one pytest prints."""

from __future__ import annotations

import re
from pathlib import Path

from conformance.corpus.corpus_subject import NAME as CORPUS_NAME
from conformance.plugin.outcomes import OUTCOMES
from conformance.plugin.summary import HEADERS, legend_lines, parse as parse_summary
from conformance.plugin.summary import render as render_summary

ROOT = Path(__file__).resolve().parent.parent


def _ci_commands() -> list[str]:
    lines = (ROOT / ".ci" / "run").read_text().splitlines()
    setup = ("#", "set ", "cd ", "command -v ")  # comments, shell setup, system packages
    return [ln for ln in lines if ln.strip() and not ln.startswith(setup)]


def test_ci_runs_exactly_the_readme_commands():
    readme = (ROOT / "README.md").read_text()
    block = re.search(r"## Install and test\n(?:(?!\n## ).)*?```\n(.*?)```", readme, re.S).group(1)
    install, test, slow = _ci_commands()
    assert block.splitlines() == [install, test]
    assert f"`{slow}`" in readme  # the slow set, which README names and CI runs after the suite
    assert slow == "pytest -m slow --junitxml=reports/out/junit-slow.xml"
    assert "-c constraints-cpu.txt" in install
    # The whole suite, keeping pytest's JUnit XML (testcases named case-id[planner]) for CI.
    assert test == "pytest --junitxml=reports/out/junit.xml"


def test_constraints_pin_the_cpu_torch():
    assert (ROOT / "constraints-cpu.txt").read_text().split() == ["torch==2.13.0"]


def test_readme_summary_is_laid_out_as_printed():
    readme = (ROOT / "README.md").read_text().splitlines()
    start = readme.index(next(ln for ln in readme if "conformance summary" in ln)) + 1
    block = readme[start:readme.index("```", start)]
    # what the isolated cases ran in (conformance/plugin/tally.py), then one table per subject,
    # each under its name: the corpus subject's first, then each one-call subject's
    assert re.fullmatch(r"isolation sandbox: .+; judge .+", block[0]), block[0]
    heads = [i for i, ln in enumerate(block) if ln.startswith("subject ")]
    assert [block[i] for i in heads] == [
        f"subject {CORPUS_NAME}:", "subject canary-plan:", "subject entries-planner:"]
    assert heads[0] == 1
    # the legend of the columns once, under the last table (every table has the same columns)
    legend = legend_lines()
    assert legend[0].startswith("pass..error: pytest's outcomes; judged: oob, ")
    assert block[-len(legend):] == legend
    assert sum(ln.startswith("pass..error:") for ln in block) == 1
    tables = [block[a + 1:b] for a, b in zip(heads, [*heads[1:], len(block) - len(legend)])]
    for sample, n in zip(tables, (7, 4, 3), strict=True):
        assert sample[0].split() == list(HEADERS) and len(HEADERS) == len(OUTCOMES) + 3
        rows = [[r[0], r[1], *map(int, r[2:-1]), r[-1]] for r in parse_summary(sample).values()]
        assert len(rows) == n
        assert sample == render_summary(rows)  # what conformance/plugin/summary.py prints
