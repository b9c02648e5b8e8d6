"""One planner or one file fails only itself: an unavailable built-in is skipped with its reason,
a case over a load-time limit is one ``[load]`` fault, a huge message is kept truncated
(README, *Limits*)."""

from __future__ import annotations

from tests.subproc import run_pytest


def test_an_unavailable_builtin_is_skipped_and_the_summary_prints(tmp_path):
    proc, items = run_pytest(tmp_path, "-p", "tests.planted.numba_missing", "--planner", "python",
                             "--planner", "numba-cuda", "--case", "spec7-prefill-and-decodes",
                             "-rs")
    out = proc.stdout + proc.stderr
    assert "INTERNALERROR" not in out
    assert proc.returncode == 0, out[-3000:]
    assert "conformance summary" in proc.stdout
    assert items["spec7-prefill-and-decodes[python]"].outcome == "passed"
    skipped = items["spec7-prefill-and-decodes[numba-cuda]"]
    assert skipped.outcome == "skipped"
    assert "numba" in skipped.text and "sys.modules" in skipped.text
