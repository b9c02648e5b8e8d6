"""Untrusted text is data at every sink (docs/robustness.md, *Untrusted text and files*): a case's description, a source
ref, a note or a planner name never becomes Python source in a repro script, shell text in a
printed command, Markdown of its own, or a raw control character on the terminal."""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys

import pytest

from conformance.corpus.loader import load_corpus
from tests.planted.loud_planners import ESCAPES
from tests.subproc import REPO, cli

WRONG = "tests.planted.wrong_planners:off_by_one_scan"
CASE_ID = "spec7-prefill-and-decodes"
HOSTILE = ('"""\nopen("PWNED", "w").write("ran")\n"""  \\N{bogus} \x1b]0;title\x07 \x1b[2J'
           "\r''' {x} \\")
"""Closes a docstring (either quote), breaks a string literal (``\\N{bogus}``), sets the terminal
title (OSC), clears the screen (ESC [2J), returns the cursor (``\\r``)."""


def hostile_case_dir(tmp_path, **changes):
    """A cases folder holding one copy of the spec §7 decode case with ``changes`` applied."""
    case = next(c for c in load_corpus()[0] if c.id == CASE_ID)
    raw = {**case.raw, **changes}
    folder = tmp_path / "cases"
    folder.mkdir()
    (folder / "hostile.json").write_text(json.dumps(raw))
    return folder


@pytest.mark.slow  # whole runs and a repro script run, about 13 s on 2 cores
def test_repro_embeds_the_case_as_data_never_as_source(tmp_path):
    cases = hostile_case_dir(tmp_path, description=HOSTILE,
                             source={"kind": "project", "ref": HOSTILE})
    script = tmp_path / "repro.py"
    proc = cli("--cases", str(cases), "repro", CASE_ID, "--planner", WRONG, "--note", HOSTILE,
               "--out", str(script))
    assert proc.returncode == 0, proc.stderr
    text = script.read_text()
    tree = ast.parse(text)  # never a SyntaxError
    assert "\x1b" not in text and "\r" not in text
    assert ast.get_docstring(tree).count("ABOUT") == 1 and HOSTILE not in ast.get_docstring(tree)
    run = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True,
                         text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert not (tmp_path / "PWNED").exists()  # the description's code never ran
    assert run.returncode == 1, run.stdout + run.stderr
    assert "FAIL: spec7-prefill-and-decodes on tests.planted.wrong_planners:off_by_one_scan" \
        in run.stdout
    about = next(n.value for n in tree.body if isinstance(n, ast.Assign)
                 and getattr(n.targets[0], "id", None) == "ABOUT")
    assert json.loads(about.args[0].value)["description"] == HOSTILE  # kept whole, as data


@pytest.mark.parametrize("name", ["os:system; touch PWNED", "x\nimport os:y", "a:b:c",
                                  "tests.planted.wrong_planners:off_by_one_scan as p\nimport os"])
def test_repro_refuses_a_planner_that_is_not_a_dotted_name(tmp_path, name):
    proc = cli("repro", CASE_ID, "--planner", name, "--out", str(tmp_path / "r.py"))
    assert proc.returncode == 2
    assert "module.path:callable" in proc.stderr
    assert not (tmp_path / "r.py").exists()


FAKE = "vm\n# ALL 191 PASSED ![pwn](http://x/y.png) [link](http://x) <img src=x>"


def _results_doc():
    return json.loads((REPO / "reports" / "upstream" / "0.5.23" / "results.json").read_text())


def _no_markdown_of_its_own(text: str) -> None:
    """``FAKE`` appears only inside code spans: no heading, image, link or tag of its own."""
    assert not any(line.startswith("# ALL") for line in text.splitlines())
    outside = re.sub(r"(`+).*?\1", "", text)  # what renders as Markdown
    assert "![pwn]" not in outside and "[link](" not in outside and "<img" not in outside


def test_markdown_report_quotes_fingerprint_fields_and_stale_planner_names():
    from conformance.reporting.report import build
    from conformance.reporting.report_render import render_markdown

    doc = _results_doc()
    doc["fingerprint"].update(host=FAKE, gpu=FAKE, date=FAKE)
    doc["fingerprint"]["planners"][FAKE] = {
        "available": True, "mode": "cpu", "device": "cpu", "reason": None,
        "source": {"module": "impls.offsets_planner.python_planner", "file": "impls/offsets_planner/python_planner.py",
                   "sha256": "0" * 64}}  # the checkout's file differs: stale
    text = render_markdown(build(doc))
    assert "source changed since the run" in text.splitlines()[0]
    _no_markdown_of_its_own(text)


def test_compare_markdown_quotes_changed_planner_names(tmp_path):
    from conformance.reporting.compare import compare
    from conformance.reporting.compare_render import render_markdown

    old, new = _results_doc(), _results_doc()
    for doc, sha in ((old, "1" * 64), (new, "2" * 64)):
        doc["fingerprint"]["planners"] = {FAKE: {
            "available": True, "mode": "cpu", "device": "cpu", "reason": None,
            "source": {"module": "m", "file": "m.py", "sha256": sha}}}
    (tmp_path / "old.json").write_text(json.dumps(old))
    (tmp_path / "new.json").write_text(json.dumps(new))
    text = render_markdown(compare(tmp_path / "old.json", tmp_path / "new.json"))
    assert "planner code changed" in text
    _no_markdown_of_its_own(text)


def test_bench_table_quotes_planner_and_mode_cells():
    from conformance.bench.summary_table import render

    bench = json.loads((REPO / "tests" / "data" / "bench-new.json").read_text())["benchmarks"]
    for b in bench:
        b["params"]["planner"] = FAKE
    _no_markdown_of_its_own(render(bench))


def test_bench_follow_up_command_is_shell_quoted(tmp_path, monkeypatch, capsys):
    import shlex

    import pytest as pytest_module

    from conformance.bench import cli

    path = tmp_path / "a b; touch PWNED" / "bench.json"
    monkeypatch.setattr(pytest_module, "main", lambda args: 0)
    cli.run_bench(cli_args(path))
    line = capsys.readouterr().out.strip()
    command = line[line.index("(") + 1:-1]
    assert shlex.split(command) == ["python", "-m", "conformance", "report", "--bench", str(path)]


def cli_args(path):
    import argparse

    from conformance.bench import cli

    parser = argparse.ArgumentParser()
    cli.add_parser(parser.add_subparsers())
    return parser.parse_args(["bench", "--json", str(path)])


@pytest.mark.slow  # whole runs and a repro script run, about 13 s on 2 cores
def test_control_characters_and_a_huge_message_are_escaped_and_cut(tmp_path):
    from tests.subproc import run_pytest

    cases = hostile_case_dir(
        tmp_path, description=f"d {ESCAPES}", source={"kind": "project", "ref": f"r {ESCAPES}"},
        xfail=[{"planner": "python", "reason": f"why {ESCAPES}"}])
    proc, items = run_pytest(tmp_path, "--cases", str(cases), "--planner", "python", "--planner",
                             "tests.planted.loud_planners:huge_message", "-rA", timeout=600)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out[-3000:]
    assert not any(c in out for c in "\x1b\x07\r\x9b")  # escaped, never raw
    assert "\\x1b]0;owned\\x07" in out  # ... and still shown
    assert len(out) < 200_000 and "characters in all]" in out
    assert "conformance summary" in proc.stdout
    doc = json.loads((tmp_path / "results.json").read_text())
    [loud] = [r for r in doc["results"] if r["planner"].endswith("huge_message")]
    assert loud["status"] == "fail" and len(loud["message"]) < 9000
    assert loud["message"].endswith("characters in all]")
    [xpass] = [r for r in doc["results"] if r["planner"] == "python"]
    assert xpass["status"] in ("fail", "xpass") and "why \\x1b]0;owned" in xpass["message"]
    report = cli("report", str(tmp_path / "results.json"), "--format", "text")
    assert not any(c in report.stdout + report.stderr for c in "\x1b\x07\r\x9b")
