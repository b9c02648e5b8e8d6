"""One planner or one file fails only itself: an unavailable built-in is skipped with its reason,
a case over a load-time limit is one ``[load]`` fault, a huge message is kept truncated
(docs/robustness.md, *Limits*)."""

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


import json  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402

from conformance.corpus import loader  # noqa: E402
from conformance.corpus.limits import (  # noqa: E402
    MAX_CASE_MEMORY,
    MAX_PERMUTED_ELEMENTS,
    case_memory,
)
from impls.offsets_planner.contract import output_lengths  # noqa: E402
from tests.subproc import REPO  # noqa: E402

EMPTY_STEP = {"inputs": {"req_pool_indices": [], "prefix_lens": [], "extend_seq_lens": []},
              "expect": {"out_verify_offsets_scratch": [0], "out_write_offsets": [0],
                         "out_write_seed_slot_indices": [], "out_verify_num_valid": 0,
                         "out_verify_enable": 1, "out_write_num_valid_reqs": 0}}


def _case(case_id: str, inputs: dict, steps: int = 1) -> dict:
    return {"id": case_id, "description": "d", "tags": [], "golden_check": "hand: no request",
            "source": {"kind": "project", "ref": "cases/offsets-planner/README.md, Limits"},
            "inputs": inputs,
            "steps": [EMPTY_STEP] * steps}


def _load(tmp_path, *docs):
    (tmp_path / "c.json").write_text(json.dumps({"group": "g", "cases": list(docs)}))
    return loader.load_corpus([tmp_path])


def test_many_steps_on_huge_buffers_are_refused_before_anything_is_allocated(tmp_path):
    cases, errors = _load(tmp_path, _case("many-steps", {"write_req_capacity": 1 << 20}, 35))
    assert cases == []
    [fault] = errors
    assert fault.case_id == "many-steps" and fault.json_path == "$.cases[0]"
    assert "over the limit of 2 GiB per case" in fault.message and "35 step(s)" in fault.message


def test_a_huge_permuted_table_is_refused_at_load(tmp_path):
    table = {"generator": "permuted", "max_reqs": 1 << 10, "max_seq_len": 1 << 15, "seed": 1}
    cases, errors = _load(tmp_path, *(_case(f"perm-{k}", {"req_to_token": {**table, "seed": k}})
                                      for k in range(6)))
    assert cases == [] and len(errors) == 6
    assert all(f"limit of {MAX_PERMUTED_ELEMENTS} for a permutation" in e.message for e in errors)


def test_one_file_sorts_a_bounded_number_of_permuted_elements(tmp_path, monkeypatch):
    monkeypatch.setattr(loader, "MAX_FILE_PERMUTED_ELEMENTS", 2048)
    table = {"generator": "permuted", "max_reqs": 32, "max_seq_len": 32}
    cases, errors = _load(tmp_path, *(_case(f"perm-{k}", {"req_to_token": {**table, "seed": k}})
                                      for k in range(3)))
    assert [c.id for c in cases] == ["perm-0", "perm-1"]
    [fault] = errors
    assert fault.case_id == "perm-2" and "split the file" in fault.message


PROBE = r"""
import json, sys, tempfile
from pathlib import Path
from conformance.corpus.loader import load_corpus
from conformance.engine.runner import Target, run_case, resolve_device
from impls.offsets_planner.registry import get_planner
d = Path(tempfile.mkdtemp())
(d / "c.json").write_text(sys.argv[1])
def kib(field):
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
Path("/proc/self/clear_refs").write_text("5")  # Linux: the peak (VmHWM) restarts at the RSS now
base = kib("VmRSS")
cases, errors = load_corpus([d])
assert not errors, errors
run_case(cases[0], Target("python", get_planner("python"), resolve_device("cpu")))
print((kib("VmHWM") - base) * 1024)
"""


def test_the_memory_estimate_is_above_the_measured_peak():
    capacity, steps = 1 << 17, 4
    doc = _case("steps-on-big-buffers", {"write_req_capacity": capacity}, steps)
    proc = subprocess.run([sys.executable, "-c", PROBE, json.dumps(doc)], cwd=REPO,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    peak = int(proc.stdout.split()[-1])
    estimate = case_memory(sum(output_lengths(capacity).values()), steps, 1, 0)
    assert peak > steps * capacity * 8  # the probe measured the run: the step copies are in it
    assert peak < estimate < MAX_CASE_MEMORY
