"""Untrusted text is data at every sink (README, *Untrusted text*): a case's description, a source
ref, a note or a planner name never becomes Python source in a repro script, shell text in a
printed command, Markdown of its own, or a raw control character on the terminal."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys

import pytest

from conformance.corpus.loader import load_corpus
from tests.subproc import REPO, run_cli

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


def test_repro_embeds_the_case_as_data_never_as_source(tmp_path):
    cases = hostile_case_dir(tmp_path, description=HOSTILE,
                             source={"kind": "project", "ref": HOSTILE})
    script = tmp_path / "repro.py"
    proc = run_cli("--cases", str(cases), "repro", CASE_ID, "--planner", WRONG, "--note", HOSTILE,
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
    proc = run_cli("repro", CASE_ID, "--planner", name, "--out", str(tmp_path / "r.py"))
    assert proc.returncode == 2
    assert "module.path:callable" in proc.stderr
    assert not (tmp_path / "r.py").exists()
