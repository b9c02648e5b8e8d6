"""``python -m conformance repro``: the standalone script fails on a planner with the bug, passes on
a correct one, and imports nothing of the harness; ``python -m conformance manifest`` drafts a
manifest from a results file."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys

import pytest

from tests.subproc import REPO, cli


def _write(tmp_path, case_id: str, planner: str):
    out = tmp_path / f"{case_id}.py"
    proc = cli("repro", case_id, "--planner", planner, "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    return out


def _run(script, timeout: float = 300) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}  # for the planners' own modules only
    return subprocess.run([sys.executable, str(script)], cwd=script.parent, env=env,
                          capture_output=True, text=True, timeout=timeout)


@pytest.mark.parametrize("case_id, wrong, shows", [
    ("spec7-prefill-and-decodes", "tests.planted.wrong_planners:off_by_one_scan",
     "out_write_offsets[1]: expected 8, got 9"),
    ("width-int64-min-prefix-small-window", "tests.planted.divergent_planners:window_overflow",
     "out_verify_offsets_scratch[1]: expected 0, got 3"),
    ("hazard-write-offsets-past-bs-untouched",
     "tests.planted.wrong_planners:zeroes_write_offsets_tail",
     "(must stay untouched: spec section 5)"),
])
def test_repro_fails_on_the_bug_and_passes_on_a_correct_planner(tmp_path, case_id, wrong, shows):
    (tmp_path / "bad").mkdir()
    bad = _run(_write(tmp_path / "bad", case_id, wrong))
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert shows in bad.stdout
    assert f"FAIL: {case_id}" in bad.stdout
    good_dir = tmp_path / "good"
    good_dir.mkdir()
    good = _run(_write(good_dir, case_id, "python"))
    assert good.returncode == 0, good.stdout + good.stderr
    assert good.stdout.strip().endswith(f"PASS: {case_id} on impls.offsets_planner.python_planner:launch (cpu)")


def test_repro_imports_torch_and_the_planner_only(tmp_path):
    script = _write(tmp_path, "err-dtype-prefix-lens",
                    "tests.planted.wrong_planners:wrong_error_message")
    tree = ast.parse(script.read_text())
    imported = {n.names[0].name if isinstance(n, ast.Import) else n.module
                for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))}
    assert imported == {"json", "os", "sys", "torch", "tests.planted.wrong_planners"}
    bad = _run(script)
    assert bad.returncode == 1
    assert "expected ValueError: 'kv-canary: prefix_lens must have dtype torch.int64" in bad.stdout


def test_repro_without_the_planners_module_says_so_and_gives_no_verdict(tmp_path):
    script = _write(tmp_path, "bs-0", "tests.planted.wrong_planners:off_by_one_scan")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # the module is not reachable
    proc = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "cannot import the planner's module: No module named 'tests'" in proc.stderr
    assert ("run this file with the planner's folder on PYTHONPATH "
            "(PYTHONPATH=FOLDER python THIS_FILE)") in proc.stderr
    assert "PASS" not in proc.stdout and "FAIL" not in proc.stdout


def test_repro_refuses_unknown_case_and_non_launcher_case():
    proc = cli("repro", "no-such-case", "--planner", "python")
    assert proc.returncode == 2 and "no case has id 'no-such-case'" in proc.stderr
    proc = cli("repro", "err-val-stride-zero", "--planner", "python")
    assert proc.returncode == 2 and "is a validator case" in proc.stderr


def _written_by(script) -> str:
    """The command the script says wrote it (its ``ABOUT["written_by"]``)."""
    line = next(ln for ln in script.read_text().splitlines() if ln.startswith("ABOUT = "))
    return json.loads(ast.literal_eval(line.removeprefix("ABOUT = json.loads(")[:-1]))["written_by"]


def _own_case_folder(tmp_path, name: str, case_id: str):
    """A folder of one case file: the corpus case spec7-no-prefix under id ``case_id``."""
    from conformance.corpus.loader import load_corpus

    raw = next(c.raw for c in load_corpus()[0] if c.id == "spec7-no-prefix")
    folder = tmp_path / name
    folder.mkdir()
    (folder / f"{case_id}.json").write_text(json.dumps({**raw, "id": case_id}))
    return folder


def test_repro_of_an_extra_cases_case_names_extra_cases_in_its_command(tmp_path):
    """A case found through ``--extra-cases DIR`` is rewritten with ``--extra-cases DIR`` (beside
    the corpus), never ``--cases DIR`` (instead of it), and the corpus folder is not added."""
    mine = _own_case_folder(tmp_path, "mine", "mine-no-prefix")
    out = tmp_path / "repro.py"
    proc = cli("--extra-cases", str(mine), "repro", "mine-no-prefix", "--planner", "python",
               "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert _written_by(out) == (f"python -m conformance --extra-cases {mine} repro "
                                "mine-no-prefix --planner python")


def test_repro_keeps_cases_and_extra_cases_as_given(tmp_path):
    only = _own_case_folder(tmp_path, "only", "only-no-prefix")
    extra = _own_case_folder(tmp_path, "extra", "extra-no-prefix")
    out = tmp_path / "repro.py"
    proc = cli("--extra-cases", str(extra), "--cases", str(only), "repro", "extra-no-prefix",
               "--planner", "python", "--note", "a note", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert _written_by(out) == (f"python -m conformance --cases {only} --extra-cases {extra} "
                                "repro extra-no-prefix --planner python --note 'a note'")


def test_manifest_draft_from_a_results_file(tmp_path):
    from tests.subproc import run_pytest

    planner = "tests.planted.divergent_planners:reads_past_row"
    run_pytest(tmp_path, "--planner", planner, "--no-isolate", "--no-manifests",
               "--case", "hazard-prefix-past-last-row", "--case", "hazard-prefix-past-row",
               "--case", "spec7-decode-seed")
    out = tmp_path / "draft.json"
    proc = cli("manifest", "--from", str(tmp_path / "results.json"), "--planner", planner,
               "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(out.read_text())
    # past the last row is outside the table: every outcome of such a read is declared; the
    # next-row read is a project-rule difference already and is not drafted
    assert doc["divergences"] == [{
        "case": "hazard-prefix-past-last-row", "section": "6",
        "reason": "prefix_lens[r] - 1 >= max_seq_len: upstream's kernel reads past the row, this "
                  "project clamps; the read lands outside the table, so the outcome (a stray "
                  "value, a guard-zone fill, a crash) changes from run to run",
        "status": ["fail", "oob"]}]
    assert doc["provenance"]["command"].startswith("python -m conformance manifest --from ")
    again = cli("manifest", "--from", str(tmp_path / "results.json"), "--planner", planner,
                "--out", str(out))
    assert again.returncode == 2 and "never overwritten" in again.stderr
