"""Fifth hostile review, kept as tests: a contest entrant's external planner (``--planner
mymod:launch``) against the recent code: the bench's floors and re-judging
(conformance/bench/floors.py, clocks.py, rejudge.py), the source digest and the report's
freshness check (impls/source_file.py, impls/known_finders.py, conformance/reporting/freshness.py),
the judge's condensed error-step text and the documented-errors table
(conformance/engine/judge.py, output_differences.py, conformance/reporting/error_table.py). Planted planners:
tests/planted/hostile5_bench.py and tests/planted/hostile5_corpus.py.

One test per attempt. Caught: a plain test asserting the harness's verdict. Not caught: a
strict xfail whose reason names the hole and a fix; the test states what the harness should do
(it passes once fixed). A hole's mechanism is checked in its fixture (outside the xfail), so a
strict xfail never passes by accident of a broken attack.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib._bootstrap_external as bootstrap
import importlib.util
import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from conformance.bench.refusal import refused
from tests.test_bench import _planner_benches, _pytest

ROOT = Path(__file__).resolve().parent.parent
BENCH = "tests.planted.hostile5_bench"
CORPUS = "tests.planted.hostile5_corpus"
_ARGS = ("--bench-bs", "8", "--bench-rounds", "2", "--bench-mode", "eager", "--bench-scenario",
         "reused")


def _sha(data: bytes | str) -> str:
    return hashlib.sha256(data.encode() if isinstance(data, str) else data).hexdigest()


def _unique(stem: str) -> str:
    return f"{stem}_{uuid.uuid4().hex[:10]}"


# === 1. the bench: re-judging against a reference the planner rebinds ===========================


def _bench(folder: Path, planners: list[str], log: Path | None = None) -> tuple[dict, str]:
    out = folder / "bench.json"
    args = [a for p in planners for a in ("--planner", p)]
    with pytest.MonkeyPatch.context() as mp:
        if log is not None:
            mp.setenv("HOSTILE5_LOG", str(log))
        proc = _pytest("conformance/bench", *args, *_ARGS, f"--benchmark-json={out}")
    assert out.exists(), proc.stdout[-3000:] + proc.stderr[-3000:]
    return json.loads(out.read_text()), proc.stdout + proc.stderr


def _plan(doc: dict, planner: str) -> dict:
    return next(b for b in _planner_benches(doc) if b["params"]["planner"] == planner)


def _bench_kw():
    """The bench's own bs-8 serving batch on the CPU (test_bench.workload_kwargs, default table)."""
    from conformance.bench import workloads

    return workloads.build(8, workloads.spec_for("serving", "cpu", None, seed=8), "cpu")


@pytest.fixture(scope="module")
def reference_run(tmp_path_factory):
    """A bench run of ``agrees_with_patched_reference`` (and ``python``). Checked here: its plan
    is wrong on the bench's own batch (every seed -1 where the reference plans table slots)."""
    from impls.offsets_planner import python_planner
    from impls.offsets_planner.contract import OUTPUT_NAMES
    from tests.planted import hostile5_bench

    assert python_planner.seed_positions is hostile5_bench._REAL_SEED_POSITIONS  # not patched here
    right, wrong = _bench_kw(), _bench_kw()
    python_planner.launch(**right)
    hostile5_bench.plan_without_seeds(**wrong)
    seeds = OUTPUT_NAMES[2]
    assert right[seeds][:8].tolist() != wrong[seeds][:8].tolist() == [-1] * 8
    assert any(s >= 0 for s in right[seeds][:8].tolist())
    doc, output = _bench(tmp_path_factory.mktemp("reference"),
                         [f"{BENCH}:agrees_with_patched_reference", "python"])
    entry = _plan(doc, f"{BENCH}:agrees_with_patched_reference")
    assert entry["extra_info"]["judged_calls"] >= 3  # its outputs were re-judged, and agreed
    return doc, output


def _tampered_names(reason: str | None, when: str) -> list[str]:
    """The names a ``timer tampered: NAMES replaced WHEN`` refusal lists, in order."""
    head, tail = "timer tampered: ", f" replaced {when}"
    assert reason and reason.startswith(head) and reason.endswith(tail), reason
    return reason[len(head):-len(tail)].split(", ")


def test_a_planner_that_patches_the_reference_planners_helpers_is_refused(reference_run):
    """Caught: every global of impls/offsets_planner/python_planner.py (the helpers
    ``plan_values`` calls through them) is a watched name (rejudge.py,
    ``clocks.watch_globals``), so rebinding ``seed_positions`` refuses the planner's figure when
    it is resolved, as rebinding ``plan_values`` itself does, and every figure after it."""
    doc, output = reference_run
    reason = "timer tampered: impls.offsets_planner.python_planner.seed_positions replaced"
    entry = _plan(doc, f"{BENCH}:agrees_with_patched_reference")
    assert refused(entry) == f"{reason} when the planner was resolved"
    assert entry["stats"]["median"] is None
    assert all(refused(b) and refused(b).startswith(reason) for b in doc["benchmarks"])
    assert refused(_plan(doc, "python")) == f"{reason} when the planner was resolved"
    assert f"refused figure: {reason}" in output


@pytest.fixture(scope="module")
def rebinding_run(tmp_path_factory):
    return _bench(tmp_path_factory.mktemp("rebinding"), [f"{BENCH}:rebinds_plan_values"])


def test_a_planner_that_rebinds_the_reference_itself_is_refused(rebinding_run):
    """Caught (the obvious way of the attack above): ``rejudge.plan_values`` is a watched name,
    so rebinding it refuses the planner's figure when it is resolved, and every figure of the run
    after it."""
    doc, output = rebinding_run
    reason = "timer tampered: conformance.bench.rejudge.plan_values replaced"
    entry = _plan(doc, f"{BENCH}:rebinds_plan_values")
    assert refused(entry) == f"{reason} when the planner was resolved"
    assert entry["stats"]["median"] is None
    assert all(refused(b) and refused(b).startswith(reason) for b in doc["benchmarks"])
    assert f"refused figure: {reason}" in output


# === 2. the bench: floors made slower without rebinding a watched name =========================


@pytest.fixture(scope="module")
def floors_run(tmp_path_factory):
    """One bench run of the three floor attacks beside ``triton`` and ``numba-cuda`` (each slows
    another floor: chain-triton, empty-numba, torch-op), the three resolved in that order before
    any floor is timed. Checked here: the bench timed the chain-triton and empty-numba floors
    with the attacks in place (the planted calls logged themselves), and the torch-op floor with
    the real ``add_`` it captured at import (no planted call logged: the rebinding never
    reached it); every floor ran in eager mode."""
    folder = tmp_path_factory.mktemp("floors")
    log = folder / "slowed.log"
    doc, output = _bench(folder, [f"{BENCH}:hooks_chain_triton", f"{BENCH}:fakes_empty_numba",
                                  f"{BENCH}:slows_torch_op", "triton", "numba-cuda"], log)
    slowed = set(log.read_text().splitlines())
    assert slowed == {"chain-triton floor slowed", "empty-numba floor slowed"}, output[-3000:]
    floors = {}
    for b in doc["benchmarks"]:
        extra = b["extra_info"]
        if extra.get("floor") and b["params"].get("mode") == "eager":
            floors[extra["floor"]] = b
    assert set(floors) == {"empty-triton", "empty-numba", "torch-op", "chain-triton",
                           "chain-numba"}, sorted(floors)
    return doc, floors


_HOOKED = "conformance.bench.chain_triton.chain_kernel.pre_run_hooks"
_FAKED = "conformance.bench.empty_numba.empty_kernel"
_ADD = "torch.Tensor.add_"
_RESOLVED, _AFTER = "when the planner was resolved", "after the bench bound it"


@pytest.mark.slow  # one CPU bench run with triton and numba-cuda: about 10 s on 2 cores
def test_the_torch_op_floor_slowed_through_tensor_add_is_refused(floors_run):
    """Caught: the torch-op floor calls ``torch.Tensor.add_`` as captured at the floors' import
    (the rebinding does not slow it: fixture), and ``torch.Tensor.add_`` is a watched name: the
    planner that rebinds it is refused when it is resolved, and the floor timed after it."""
    doc, floors = floors_run
    assert refused(floors["torch-op"]) and refused(_plan(doc, f"{BENCH}:slows_torch_op"))
    assert _ADD in _tampered_names(refused(_plan(doc, f"{BENCH}:slows_torch_op")), _RESOLVED)
    assert _ADD in _tampered_names(refused(floors["torch-op"]), _AFTER)
    assert floors["torch-op"]["stats"]["median"] is None


@pytest.mark.slow  # shares floors_run
def test_a_pre_run_hook_on_the_bound_chain_kernel_is_refused(floors_run):
    """Caught: each floor kernel's own state (its instance attributes, the items of its hook
    lists, the class attributes it resolves) is snapshot when its module is imported at
    collection (``clocks.watch_state``): the hook added to the genuine bound kernel is named the
    moment the planner is resolved (it is resolved first: the only change then), and every
    figure after it is refused, the chain floor and ``triton`` among them."""
    doc, floors = floors_run
    assert refused(floors["chain-triton"]) and refused(_plan(doc, "triton"))
    assert _tampered_names(refused(_plan(doc, f"{BENCH}:hooks_chain_triton")),
                           _RESOLVED) == [_HOOKED]
    assert _HOOKED in _tampered_names(refused(floors["chain-triton"]), _AFTER)


@pytest.mark.slow  # shares floors_run
def test_the_empty_numba_floor_set_before_its_first_use_is_refused(floors_run):
    """Caught: the empty Numba kernel lives in conformance/bench/empty_numba.py, imported, bound
    and watched at collection like the other floor kernels: the kernel set in its place before
    the floor's first use (launched by the floor: fixture) is a watched name rebound, refused
    when the planner is resolved, and every figure after it, the floor and ``numba-cuda``
    among them."""
    doc, floors = floors_run
    assert refused(floors["empty-numba"]) and refused(_plan(doc, "numba-cuda"))
    assert _tampered_names(refused(_plan(doc, f"{BENCH}:fakes_empty_numba")),
                           _RESOLVED) == [_FAKED, _HOOKED]
    assert _FAKED in _tampered_names(refused(floors["empty-numba"]), _AFTER)


# === 3. source digests and the report's freshness check =========================================

GOOD = "from impls.offsets_planner.python_planner import launch  # the plan the run judged\n"
WRONG = "from tests.planted.wrong_planners import off_by_one_scan as launch  # another plan\n"


def _results_doc(planner: str, source: dict | None) -> dict:
    """A whole results file of this checkout's commit whose only planner is ``planner`` with the
    recorded ``source`` digest (the committed 0.5.23 run, its planner renamed)."""
    from conformance.fingerprint import head_commit

    doc = json.loads((ROOT / "reports" / "upstream" / "0.5.23" / "results.json").read_text())
    doc["fingerprint"]["commit"] = head_commit()
    doc["fingerprint"]["dirty"] = False
    doc["fingerprint"]["planners"] = {planner: {"available": True, "mode": "external",
                                                "device": "cpu", "reason": None,
                                                "source": source}}
    for r in doc["results"]:
        r["planner"] = planner
        r["id"] = f"{r['case']}[{planner}]"
    return doc


def _report(capsys, doc: dict, folder: Path) -> tuple[int, str]:
    from conformance.cli import main as cli_main

    path = folder / "results.json"
    path.write_text(json.dumps(doc))
    code = cli_main(["report", str(path), "--format", "text", "--strict",
                     "--out", str(folder / "report.txt")])
    capsys.readouterr()
    return code, (folder / "report.txt").read_text()


@pytest.fixture
def entrant_editable(tmp_path):
    """The entrant's own package installed with ``pip install -e .`` (setuptools' editable
    finder of its project, made from setuptools' own template), its finder installed here, after
    ``impls.known_finders`` was imported: the module imports, and find_source refuses it
    (impls/editable_finders.py knows only the editable finders on ``sys.meta_path`` when it was
    imported; put there before, as its ``.pth`` does at interpreter start, this one would be
    known): the run records no digest."""
    from setuptools.command.editable_wheel import _finder_template

    from impls.source_file import find_source

    pkg = _unique("hostile5_entrant")
    folder = tmp_path / "project" / pkg
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text("")
    (folder / "kernels.py").write_text(GOOD)
    finder_name = f"__editable___{pkg}_0_1_finder"
    (tmp_path / f"{finder_name}.py").write_text(_finder_template(finder_name,
                                                                 {pkg: str(folder)}, {}))
    sys.path.insert(0, str(tmp_path))
    before = list(sys.meta_path)
    try:
        importlib.import_module(finder_name).install()
        module = f"{pkg}.kernels"
        assert importlib.import_module(module).launch.__name__ == "launch"
        assert find_source(module) is None  # no digest for the run
        yield module, folder / "kernels.py"
    finally:
        sys.meta_path[:] = before
        sys.path.remove(str(tmp_path))
        for name in [n for n in sys.modules if n == pkg or n.startswith(pkg + ".")
                     or n == finder_name]:
            del sys.modules[name]


def test_a_planner_without_a_source_digest_is_named_by_the_report(entrant_editable, tmp_path,
                                                                   capsys):
    """Caught (b2507a0, made while this review ran): a planner the run recorded no digest of
    (here its lookup refused because of the entrant's own editable finder) is named in the
    report's first line, and ``--strict`` exits 1, though its code changed since the run."""
    module, path = entrant_editable
    planner = f"{module}:launch"
    doc = _results_doc(planner, None)  # what the run recorded: find_source refused
    path.write_text(WRONG)  # the code changes after the run
    code, text = _report(capsys, doc, tmp_path)
    assert code == 1
    assert text.splitlines()[0] == (f"NO SOURCE DIGEST of {planner}: a change to its code since "
                                    "the run cannot be seen")


def test_compare_names_a_planner_without_a_source_digest(entrant_editable, tmp_path, capsys):
    """A compare of two runs of a planner with no digest (the entrant's own editable finder) names
    it in the headline: a rewrite between the runs cannot be seen (reporting/compare_verdict.py)."""
    from conformance.cli import main as cli_main

    module, path = entrant_editable
    planner = f"{module}:launch"
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    old.write_text(json.dumps(_results_doc(planner, None)))
    path.write_text(WRONG)  # rewritten between the two runs, neither with a digest
    new.write_text(json.dumps(_results_doc(planner, None)))
    out = tmp_path / "compare.txt"
    cli_main(["report", "--compare", str(old), str(new), "--format", "text", "--out", str(out)])
    capsys.readouterr()
    head = "\n".join(out.read_text().splitlines()[:3])
    assert (f"no source digest of {planner}: whether its code changed cannot be seen"
            in head), head


@pytest.fixture
def replaced_beside_bytecode(tmp_path, monkeypatch):
    """A planner whose digest the run recorded, then replaced by another file beside a planted
    ``__pycache__`` entry (bytecode of a third code, stamped with the new file's mtime and size,
    which the import runs): checked here, find_source refuses the module now, so the report's
    freshness check finds no file."""
    from conformance.reporting.freshness import current_file
    from impls.source_file import digest, find_source

    name = _unique("hostile5_replaced")
    path = tmp_path / f"{name}.py"
    path.write_text(GOOD)
    monkeypatch.syspath_prepend(str(tmp_path))
    recorded = digest(name, find_source(name))
    assert recorded == {"module": name, "file": f"{name}.py", "sha256": _sha(GOOD)}
    path.write_text(WRONG)
    stat = os.stat(path)
    code = compile("def launch(**kwargs):\n    return None\n", str(path), "exec")
    cache = importlib.util.cache_from_source(str(path))
    os.makedirs(os.path.dirname(cache), exist_ok=True)
    with open(cache, "wb") as handle:
        handle.write(bootstrap._code_to_timestamp_pyc(code, int(stat.st_mtime), stat.st_size))
    assert find_source(name) is None and current_file(name) is None
    return name, recorded


def test_a_source_replaced_beside_planted_bytecode_is_named_stale(replaced_beside_bytecode,
                                                                  tmp_path, capsys):
    """A planner file changed after the run beside bytecode the import would run instead: the
    lookup is refused now, which the report names (impls/source_file.lookup) rather than read
    as a file that is gone, and --strict exits 1."""
    name, recorded = replaced_beside_bytecode
    planner = f"{name}:launch"
    code, text = _report(capsys, _results_doc(planner, recorded), tmp_path)
    assert code == 1 and text.startswith("STALE RESULTS") and planner in text.splitlines()[0]
    assert text.splitlines()[0].endswith(
        f"source cannot be verified now: {planner} (the import would run cached bytecode that "
        "is not the file's code)"), text.splitlines()[0]


@pytest.fixture(scope="module")
def shadowed_run(tmp_path_factory):
    """A real corpus run, with the ``pytest`` console script (so the working directory is not on
    the harness's sys.path) from folder A, with folder B the planner folder; both hold a module of the
    planner's name: A's plans right, B's is the off-by-one scan. Returns the results document,
    the module name and the two files' SHA-256 (A's, B's)."""
    base = tmp_path_factory.mktemp("shadow")
    here, there = base / "A", base / "B"
    here.mkdir()
    there.mkdir()
    name = _unique("hostile5_shadow")
    (here / f"{name}.py").write_text(GOOD)
    (there / f"{name}.py").write_text(WRONG)
    results = base / "results.json"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTEST_ADDOPTS",
                                                            "PYTEST_XDIST_WORKER")}
    env["PYTHONPATH"] = str(ROOT)
    env["CONFORMANCE_PLANNER_PATH"] = str(there)
    proc = subprocess.run(
        [str(Path(sys.executable).with_name("pytest")), str(ROOT / "conformance"), "--rootdir",
         str(ROOT), "-p", "no:cacheprovider", "-p", "no:hypothesispytest", "-q",
         "--planner", f"{name}:launch", "--case", "spec7-prefill-and-decodes",
         "--results", str(results)],
        cwd=here, env=env, capture_output=True, text=True, timeout=300)
    doc = json.loads(results.read_text())
    assert doc["complete"], proc.stdout[-3000:]
    return doc, name, _sha(GOOD), _sha(WRONG)


def test_the_digest_names_the_file_the_workers_ran(shadowed_run):
    """The probe and the isolation workers start with ``-P``: their sys.path is the harness's
    (PYTHONPATH, then the planner folders) without their working directory first, so a module of the planner's name in the
    working directory is not what the cases run: B's off-by-one scan runs, fails, and is the
    file the results digest (before, A's right file ran green beside B's digest)."""
    doc, name, right, wrong = shadowed_run
    assert [(r["case"], r["status"]) for r in doc["results"]] == [
        ("spec7-prefill-and-decodes", "fail")]
    source = doc["fingerprint"]["planners"][f"{name}:launch"]["source"]
    assert source["sha256"] == wrong != right


# === 4. the judge's error steps in the results and the report ===================================


@pytest.fixture(scope="module")
def error_step_run(tmp_path_factory):
    """A real corpus run of the two planted error-step planners on one error case, one multi-step
    error case and one valid case (external planners: isolation workers), and its report model."""
    from conformance.reporting.report import build
    from conformance.reporting.results_format import load_results
    from tests.subproc import run_pytest

    tmp = tmp_path_factory.mktemp("error-steps")
    proc, _ = run_pytest(tmp, "--planner", f"{CORPUS}:writes_then_raises", "--planner",
                         f"{CORPUS}:returns_and_writes_outside", "--case", "err-dtype-prefix-lens",
                         "--case", "err-steps-dtype-between-valid", "--case",
                         "spec7-prefill-and-decodes")
    doc = load_results(tmp / "results.json")
    assert doc["complete"], proc.stdout[-3000:]
    by_id = {r["id"]: r for r in doc["results"]}
    return by_id, build(doc, check_stale=False)


def test_an_error_step_that_wrote_before_raising_fails_its_error_row(error_step_run):
    """A planner that writes an output before its checks, then raises exactly the documented
    error, fails its error row: an error step is ok only with no difference of its own (spec
    section 4: the checks come before any write; conformance/engine/judge.py)."""
    from conformance.reporting import error_table
    from conformance.reporting.report_render import render_text

    by_id, model = error_step_run
    planner = f"{CORPUS}:writes_then_raises"
    result = by_id[f"err-dtype-prefix-lens[{planner}]"]
    assert result["status"] == "fail" and "writes nothing" in result["message"]
    # err-dtype-prefix-lens fails its row; in err-steps-dtype-between-valid the error step writes
    # the 0 the valid step before it left there: no difference to see, so that case keeps its row
    assert f"dtype: {planner} 1/2" in error_table.failing_lines(model["catalog"])
    assert by_id[f"err-steps-dtype-between-valid[{planner}]"]["status"] == "pass"
    assert "documented error steps: none failed" not in render_text(model)


def test_a_step_that_returned_and_wrote_outside_is_oob_and_names_the_write(error_step_run):
    """Caught: on a step that must raise, the judge condenses what the planner wrote into one
    line ('and wrote 1 element(s) of out_write_offsets'), but the write before the tensor is
    still data (``outside``, with its proof), the status is ``oob``, the failure text names the
    write outside under 'out of bounds:', and the error row counts the step as failed."""
    from conformance.reporting import error_table

    by_id, model = error_step_run
    planner = f"{CORPUS}:returns_and_writes_outside"
    for case in ("err-dtype-prefix-lens", "err-steps-dtype-between-valid"):
        result = by_id[f"{case}[{planner}]"]
        assert result["status"] == "oob"
        message = result["message"]
        assert "  and wrote 1 element(s) of out_write_offsets\n" in message
        assert ("out of bounds: the planner wrote outside out_write_offsets (1 before its start) "
                "(spec §6, last line)") in message
        assert result["verdict"]["outside"] == ("the planner wrote outside out_write_offsets "
                                                "(1 before its start)")
        assert any(d["what"] == "outside" and d["index"] == -1
                   for d in result["verdict"]["differences"])
    assert f"dtype: {planner} 0/2" in error_table.failing_lines(model["catalog"])
    assert by_id[f"spec7-prefill-and-decodes[{planner}]"]["status"] == "pass"
