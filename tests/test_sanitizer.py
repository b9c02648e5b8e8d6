"""``--sanitize memcheck``: the parser of compute-sanitizer's memcheck output, the tie of each
reported access error to the case that was running (on the CPU a planted planner prints what
memcheck prints into the worker's log), and the refusal to run unsanitized where the sanitizer is
missing or torch sees no CUDA device."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

from conformance.plugin.summary import HEADERS, parse as parse_summary
from conformance.plugin.isolation_options import failure_report, status_of
from conformance.robustness.isolated_case import case_request
from conformance.robustness.isolation import WorkerPool
from conformance.robustness.sanitizer import AccessError, parse_memcheck, sanitizer_prefix
from tests.planted.hostile_planners import MEMCHECK_BLOCK
from tests.subproc import run_pytest
from tests.test_isolate import isolation_corpus, load_isolation_corpus

SAMPLE = """\
========= COMPUTE-SANITIZER
some program output
========= Invalid __global__ read of size 4 bytes
=========     at _plan_offsets_kernel+0x1f0 in offsets_kernel.py:88
=========     by thread (3,0,0) in block (0,0,0)
=========     Address 0x7f3c0e000240 is out of bounds
=========     and is 8 bytes after the nearest allocation at 0x7f3c0e000200 of size 56 bytes
=========
========= Invalid __global__ write of size 8 bytes
=========     at _plan_offsets_kernel+0x3a0
=========     by thread (0,0,0) in block (1,0,0)
=========     Address 0x7f3c0dfffff8 is out of bounds
=========     and is 8 bytes before the nearest allocation at 0x7f3c0e000000 of size 512 bytes
=========
========= Program hit cudaErrorLaunchFailure (error 719) due to "unspecified launch failure" on CUDA API call to cudaStreamSynchronize.
=========     Saved host backtrace up to driver entry point at error
=========
========= ERROR SUMMARY: 3 errors
"""


def test_parse_memcheck_reads_every_access_error_and_the_summary():
    errors, summary = parse_memcheck(SAMPLE)
    assert summary == 3  # the API error counts in the summary, not as an access error
    assert [(e.op, e.size, e.kernel, e.thread, e.block, e.address, e.distance, e.side,
             e.allocation) for e in errors] == [
        ("read", 4, "_plan_offsets_kernel+0x1f0", "(3,0,0)", "(0,0,0)", "0x7f3c0e000240", 8,
         "after", {"base": "0x7f3c0e000200", "size": 56}),
        ("write", 8, "_plan_offsets_kernel+0x3a0", "(0,0,0)", "(1,0,0)", "0x7f3c0dfffff8", 8,
         "before", {"base": "0x7f3c0e000000", "size": 512}),
    ]
    assert errors[0].summary() == (
        "Invalid __global__ read of size 4 bytes at _plan_offsets_kernel+0x1f0 by thread (3,0,0) "
        "in block (0,0,0), address 0x7f3c0e000240: 8 bytes after the nearest allocation "
        "(56 bytes at 0x7f3c0e000200)")
    assert errors[1].lines[0] == " Invalid __global__ write of size 8 bytes"
    assert parse_memcheck("no sanitizer here\n========= ERROR SUMMARY: 0 errors\n") == ([], 0)


def test_parse_memcheck_keeps_other_device_errors():
    errors, summary = parse_memcheck("========= Misaligned Shared or Local Address\n"
                                     "=========     at k+0x10\n"
                                     "=========     by thread (0,0,0) in block (0,0,0)\n")
    assert summary is None
    assert [(e.kind, e.op, e.kernel) for e in errors] == [
        ("Misaligned Shared or Local Address", None, "k+0x10")]


def test_sanitizer_prefix_is_memcheck_that_keeps_the_context():
    prefix = sanitizer_prefix("memcheck", "/opt/cuda/bin/compute-sanitizer")
    assert prefix[:3] == ["/opt/cuda/bin/compute-sanitizer", "--tool", "memcheck"]
    assert prefix[prefix.index("--destroy-on-device-error") + 1] == "kernel"


def _fake_sanitizer(folder: Path) -> Path:
    """A ``compute-sanitizer`` stand-in: drops its own options and runs the command after them."""
    folder.mkdir(exist_ok=True)
    path = folder / "compute-sanitizer"
    path.write_text(f"#!{sys.executable}\nimport os, sys\nargs = sys.argv[1:]\n"
                    "while args and args[0].startswith('--'):\n    args = args[2:]\n"
                    "os.execv(args[0], args)\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_each_access_error_is_tied_to_the_case_that_was_running(tmp_path):
    cases = {c.id: c for c in load_isolation_corpus(tmp_path / "cases")[0]}
    planner = "tests.planted.hostile_planners:mimics_memcheck"
    fake = _fake_sanitizer(tmp_path / "bin")
    pool = WorkerPool(prefix=sanitizer_prefix("memcheck", str(fake)))
    try:
        worker = pool.get(planner)
        answers = {case_id: worker.run(case_request(cases[case_id], planner, "cpu"), 120,
                                       sanitized=True)
                   for case_id in ("iso-e-plain", "iso-a-plain", "iso-d-hazard-ok")}
    finally:
        pool.close()
    assert {k: len(a["access_errors"]) for k, a in answers.items()} == {
        "iso-e-plain": 0, "iso-a-plain": 3, "iso-d-hazard-ok": 0}  # prefix 7: runs a, b, plain
    assert [status_of(a) for a in answers.values()] == ["observed", "oob", "observed"]
    error = AccessError(**answers["iso-a-plain"]["access_errors"][0])
    assert (error.op, error.size, error.distance, error.allocation) == (
        "read", 4, 8, {"base": "0x7f1e5a000200", "size": 64})

    item = SimpleNamespace(case=cases["iso-a-plain"], planner=planner)  # what it reads of an item
    text = failure_report(item, "oob", answers["iso-a-plain"])
    assert "oob (sanitizer: access error)" in text
    assert ("Invalid __global__ read of size 4 bytes at _plan_offsets_kernel+0x2d0 by thread "
            "(1,0,0) in block (0,0,0), address 0x7f1e5a000248: 8 bytes after the nearest "
            "allocation (64 bytes at 0x7f1e5a000200)") in text
    assert MEMCHECK_BLOCK.splitlines()[0].removeprefix("=========").strip() in text


def _path_without_sanitizer(tmp_path: Path, extra: Path | None = None) -> dict:
    folders = [p for p in os.environ["PATH"].split(os.pathsep)
               if not (Path(p) / "compute-sanitizer").exists()]
    return {"PATH": os.pathsep.join(([str(extra)] if extra else []) + folders),
            "CUDA_HOME": str(tmp_path / "no-cuda")}


@pytest.mark.slow  # refused starts, each a whole pytest process: about 11 s on 2 cores
@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the CPU-only refusal")
def test_sanitize_without_the_sanitizer_or_a_gpu_refuses_to_run(tmp_path, monkeypatch):
    for key, value in _path_without_sanitizer(tmp_path).items():
        monkeypatch.setenv(key, value)
    proc, items = run_pytest(tmp_path, "--planner", "python", "--sanitize", "memcheck")
    assert proc.returncode == 4 and items == {}
    assert ("ERROR: --sanitize: compute-sanitizer not found on PATH, in $CUDA_HOME/bin or "
            "/usr/local/cuda/bin (it ships with the CUDA toolkit); no case was run "
            "unsanitized") in proc.stderr
    fake = _fake_sanitizer(tmp_path / "bin")
    monkeypatch.setenv("PATH", f"{fake.parent}{os.pathsep}{os.environ['PATH']}")
    proc, items = run_pytest(tmp_path, "--planner", "python", "--sanitize", "memcheck")
    assert proc.returncode == 4 and items == {}
    assert ("ERROR: --sanitize memcheck: torch sees no CUDA device, and compute-sanitizer checks "
            "CUDA kernels only; no case was run unsanitized") in proc.stderr
    # the run never started: its results file says so (never a previous run's, shown as this one)
    assert json.loads((tmp_path / "results.json").read_text())["complete"] is False
    proc, _ = run_pytest(tmp_path, "--planner", "python", "--sanitize", "memcheck",
                         "--no-isolate")
    assert proc.returncode == 4
    assert "--sanitize runs every case in a child: drop --no-isolate" in proc.stderr


def test_results_file_accepts_oob_and_counts_it_bad(tmp_path):
    from conformance.reporting.results_format import BAD, ResultsError, load_results

    proc, _ = run_pytest(tmp_path, "--planner", "python", "--case", "spec7-no-prefix")
    assert proc.returncode == 0
    path = tmp_path / "results.json"
    doc = json.loads(path.read_text())
    doc["results"][0]["status"] = "oob"
    path.write_text(json.dumps(doc))
    assert load_results(path)["results"][0]["status"] == "oob" and "oob" in BAD
    doc["results"][0]["status"] = "out-of-bounds"
    path.write_text(json.dumps(doc))
    with pytest.raises(ResultsError):
        load_results(path)


def _sanitizer_here() -> bool:
    from conformance.robustness.sanitizer import SanitizerUnavailable, find_sanitizer

    try:
        find_sanitizer()
    except SanitizerUnavailable:
        return False
    return torch.cuda.is_available()


@pytest.mark.skipif(not _sanitizer_here(), reason="needs compute-sanitizer and a CUDA device")
def test_memcheck_on_the_gpu_gives_the_out_of_bounds_case_oob(tmp_path):
    cases = isolation_corpus(tmp_path / "cases")
    proc, items = run_pytest(tmp_path, "--cases", str(cases), "--sanitize", "memcheck",
                             "--planner", "tests.planted.crash_planners:illegal_address",
                             "-k", "iso-b-past-row or iso-d-hazard-ok", timeout=600)
    outcome = {name.split("[")[0]: item for name, item in items.items()}
    assert outcome["iso-b-past-row"].properties["status"] == "oob", outcome["iso-b-past-row"].text
    assert "Invalid __global__ read" in outcome["iso-b-past-row"].text
    assert outcome["iso-d-hazard-ok"].outcome == "passed"
    assert proc.returncode == 1
    rows = parse_summary(proc.stdout.splitlines())
    row = next(r for name, r in rows.items() if "illegal_address" in name)
    counts = dict(zip(HEADERS, row))
    assert (counts["oob"], counts["pass"], counts["fail"]) == ("1", "1", "0"), counts


def test_a_sanitizer_that_refuses_the_device_stops_the_run(tmp_path):
    from conformance.plugin.isolation_options import Isolation
    from conformance.robustness.isolation import IsolationFailure

    refuses = [sys.executable, "-c", "print('========= Error: No supported devices found'); "
               "raise SystemExit(1)", "--"]
    isolation = Isolation.__new__(Isolation)  # as __init__ leaves it with --sanitize memcheck
    isolation.sanitize, isolation.timeout, isolation.pool = "memcheck", 30.0, WorkerPool(refuses)
    case = next(c for c in load_isolation_corpus(tmp_path / "cases")[0]
                if c.id == "iso-e-plain")
    item = SimpleNamespace(case=case, planner="python", avail=SimpleNamespace(device="cuda"),
                           session=SimpleNamespace(shouldstop=False), user_properties=[])
    try:
        with pytest.raises(IsolationFailure) as info:
            isolation.run_isolated(item)
    finally:
        isolation.pool.close()
    assert ("isolation worker for python did not start: it exited before its handshake\n"
            "========= Error: No supported devices found") in str(info.value)
    assert item.session.shouldstop == "--sanitize memcheck: the sanitized worker did not start"
