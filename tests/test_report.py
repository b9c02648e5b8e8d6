"""The results file (``conformance/plugin/results_writer.py``) and ``python -m conformance report``,
on real runs of the tiny corpus in ``tests/data/report-cases`` (see ``tests/report_runs.py``)."""

from __future__ import annotations

import json
import re
import subprocess

import jsonschema
import pytest

from conformance.cli import main as cli_main
from conformance.reporting.compare import compare
from conformance.paths import RESULTS_SCHEMA_PATH as SCHEMA_PATH
from conformance.reporting.report import build
from conformance.reporting.report_lines import run_command
from conformance.reporting.results_format import ResultsError, load_results
from conformance.reporting.bench_figures import _row, load_bench
from conformance.reporting.bench_noise import moved
from conformance.reporting.corpus_coverage import corpus_cases
from conformance.plugin.results_writer import write_json_atomic
from tests.corpus_results import write_covering
from tests.report_runs import PLANNER, ROOT, case_folder, run

DATA = ROOT / "tests" / "data"
C = f"[{PLANNER}]"


def _statuses(doc: dict) -> dict[str, str]:
    return {r["id"]: r["status"] for r in doc["results"]}


def _schema_valid(doc: dict) -> None:
    jsonschema.Draft202012Validator(json.loads(SCHEMA_PATH.read_text())).validate(doc)


def test_results_file_is_schema_valid_with_every_status():
    a = run("a")
    assert a.returncode == 1, a.output
    doc = load_results(a.results)
    _schema_valid(doc)
    assert (doc["complete"], doc["exitstatus"], doc["collected"]) == (True, 1, 17)
    assert _statuses(doc) == {
        **{f"{c}[python]": "pass" for c in (
            "spec7-no-prefix", "spec7-decode-seed", "spec7-prefill-and-decodes",
            "spec7-padding-row-middle", "err-dtype-prefix-lens", "hazard-prefix-past-row",
            "declared-divergence", "spec7-lut-shift")},
        **{f"{c}{C}": "fail" for c in (
            "spec7-no-prefix", "spec7-decode-seed", "spec7-prefill-and-decodes",
            "spec7-padding-row-middle", "hazard-prefix-past-row", "spec7-lut-shift")},
        f"err-dtype-prefix-lens{C}": "pass", f"declared-divergence{C}": "xfail",
        "err-val-stride-zero[validator]": "pass"}
    by_id = {r["id"]: r for r in doc["results"]}
    fail = by_id[f"spec7-prefill-and-decodes{C}"]
    assert fail["message"].splitlines()[0] == (
        f"spec7-prefill-and-decodes{C}  ({case_folder('common')}/a-spec.json $.cases[2])")
    assert "out_write_offsets: 3 element(s) differ, first at index 0" in fail["message"]
    assert fail["rerun"].endswith(  # after the environment the run had (PYTHONPATH, ...)
        f"pytest conformance/ --planner {PLANNER} --cases {case_folder('common')} --case "
        "spec7-prefill-and-decodes --results reports/out/rerun-spec7-prefill-and-decodes.json")
    assert fail["message"].splitlines()[-1] == f"  rerun: {fail['rerun']}"
    assert (fail["tags"], fail["source"], fail["file"], fail["json_path"]) == (
        ["spec-example"], {"kind": "spec", "ref": "docs/spec/offsets-planner.md §7"},
        f"{case_folder('common')}/a-spec.json", "$.cases[2]")
    assert by_id[f"declared-divergence{C}"]["message"] == (
        "declared for the report tests: the off-by-one scan fails it")
    assert by_id[f"err-dtype-prefix-lens{C}"]["error_ids"] == ["dtype"]
    assert all(r["duration"] > 0 for r in doc["results"])
    fp = doc["fingerprint"]
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    assert fp["commit"] == (head.stdout.strip() or None)
    assert fp["planners"]["python"]["mode"] == "cpu"
    assert fp["planners"][PLANNER]["mode"] == "external"
    assert fp["torch"] and fp["numpy"] and fp["host"]


@pytest.mark.slow  # a run under -n 2: about 20 s on 2 cores
def test_xdist_workers_merge_into_one_file():
    b = run("b")
    doc = load_results(b.results)
    _schema_valid(doc)
    ids = [r["id"] for r in doc["results"]]
    assert len(ids) == len(set(ids)) == doc["collected"] == 17
    bad = {i: s for i, s in _statuses(doc).items() if s != "pass"}
    assert bad == {f"err-dtype-prefix-lens{C}": "fail", f"declared-divergence{C}": "fail",
                   f"spec7-padding-row-middle{C}": "crash"}
    msg = {r["id"]: r["message"] for r in doc["results"]}
    assert re.fullmatch(rf"worker 'gw\d' crashed while running 'conformance/test_corpus.py::"
                        rf"spec7-padding-row-middle\[{re.escape(PLANNER)}\]'",
                        msg[f"spec7-padding-row-middle{C}"])
    assert msg[f"declared-divergence{C}"] == (
        "[XPASS(strict)] declared for the report tests: the off-by-one scan fails it")
    assert msg[f"err-dtype-prefix-lens{C}"].startswith(f"err-dtype-prefix-lens{C}  (")
    assert all(r["tags"] and r["file"] for r in doc["results"])  # metadata travelled too
    assert {r["worker"] for r in doc["results"]} >= {"gw0", "gw1"}


def test_killed_run_leaves_a_valid_file_of_what_finished():
    c = run("c")
    assert c.returncode == 3, c.output  # os._exit(3) inside the planner: no pytest teardown
    doc = load_results(c.results)
    _schema_valid(doc)
    assert (doc["complete"], doc["exitstatus"], doc["collected"]) == (False, None, 15)
    assert [r["id"] for r in doc["results"]] == [
        "spec7-no-prefix[python]", f"spec7-no-prefix{C}", "spec7-decode-seed[python]",
        f"spec7-decode-seed{C}", "spec7-prefill-and-decodes[python]"]


def test_atomic_write_keeps_the_old_file_when_writing_fails(tmp_path):
    path = tmp_path / "out" / "results.json"
    write_json_atomic(path, {"n": 1})
    with pytest.raises(TypeError):
        write_json_atomic(path, {"n": object()})
    assert json.loads(path.read_text()) == {"n": 1}
    assert [p.name for p in path.parent.iterdir()] == ["results.json"]  # no temporary left


@pytest.mark.slow  # compares with run b, a run under -n 2 (tests/report_runs.py): about 20 s on 2 cores
def test_compare_two_real_runs():
    model = compare(run("a").results, run("b").results)
    ids = {k: [(e["id"], e.get("old_status"), e["status"]) for e in model[k]]
           for k in ("newly_failing", "newly_passing", "other_changes", "appeared", "disappeared")}
    assert ids["newly_failing"] == [(f"declared-divergence{C}", "xfail", "fail"),
                                    (f"err-dtype-prefix-lens{C}", "pass", "fail")]
    assert ids["newly_passing"] == [(f"{c}{C}", "fail", "pass") for c in (
        "hazard-prefix-past-row", "spec7-decode-seed", "spec7-no-prefix",
        "spec7-prefill-and-decodes")]
    assert ids["other_changes"] == [(f"spec7-padding-row-middle{C}", "fail", "crash")]
    assert ids["appeared"] == [("spec7-capacity-exact[python]", None, "pass"),
                               (f"spec7-capacity-exact{C}", None, "pass")]
    assert ids["disappeared"] == [("spec7-lut-shift[python]", None, "pass"),
                                  (f"spec7-lut-shift{C}", None, "fail")]
    assert model["unchanged"] == 8 and model["bench"] is None


@pytest.mark.slow  # compares with run b, a run under -n 2 (tests/report_runs.py): about 20 s on 2 cores
def test_compare_markdown_and_html(capsys, tmp_path):
    a, b = str(run("a").results), str(run("b").results)
    assert cli_main(["report", "--compare", a, b, "--format", "markdown"]) == 0
    md = capsys.readouterr().out
    assert md.splitlines()[2] == ("4 regression(s): 2 newly failing, 2 disappeared; 4 newly "
                                  "passing, 1 other status changes, 2 appeared, 8 unchanged")
    assert "### Newly failing (2)" in md and "### Appeared (2)" in md
    detail = ("wrong error message (the type ValueError and the id [dtype] matched): expected "
              "message 'kv-canary: prefix_lens must have dtype torch.int64, got torch.int32', got "
              "'kv-canary: prefix_lens must have dtype int64, got int32' (first difference at "
              "character 39)")
    assert re.search(rf"\| `err-dtype-prefix-lens\[{re.escape(PLANNER)}\]` +\| pass -> fail +\| "
                     rf"`{re.escape(detail[:160])}` +\|", md), md  # as code: never Markdown
    assert "got ValueError [dtype] 'kv-canary: prefix_lens must have dtype int64, got int32'" in md
    out = tmp_path / "compare.html"
    assert cli_main(["report", "--compare", a, b, "--out", str(out)]) == 0
    html = out.read_text()
    assert re.search(r'<section class="newly_failing" id="newly_failing">\s*<h2>Newly failing '
                     r'\(2\)</h2>', html)
    assert f"<code>spec7-capacity-exact{C}</code>" in html


def test_benchmarks_moved_beyond_their_noise(capsys):
    old, _ = load_bench(DATA / "bench-old.json")
    new, _ = load_bench(DATA / "bench-new.json")
    figures = moved(old, new)  # triton eager bs 4096 x1.5; python eager bs 64 x1.01 is noise
    assert [(m["planner"], m["mode"], m["bs"], round(m["ratio"], 3)) for m in figures] == [
        ("triton", "eager", "4096", 1.5)]
    assert cli_main(["report", "--compare", str(DATA / "bench-old.json"),
                     str(DATA / "bench-new.json"), "--format", "markdown"]) == 0
    md = capsys.readouterr().out
    assert ("1 benchmark figure(s) moved beyond their noise (26 of 26 judged; repeats: old 1, new "
            "1; rounds: old 200, new 200; a move needs >= 3 repeats a side (every repeat apart) "
            "or, without repeats, >= 5 rounds a side (IQRs apart))") in md
    assert re.search(r"\| `triton` +\| `eager` +\| - +\| 4096 +\| 38\.19 +\| 57\.29 +\| 1\.50x +\| 1/1 +\| 200/200",
                     md), md


def test_bench_names_without_params():
    row = _row({"name": "test_launch[numba-cuda-512]", "group": "launch",
                "stats": {"median": 2e-5, "min": 1e-5, "q1": 1.5e-5, "q3": 3e-5, "rounds": 9}})
    assert (row.planner, row.mode, row.bs, row.p50, row.iqr, row.floor) == (
        "numba-cuda", "launch", 512, 20.0, 15.0, False)


def test_html_report_and_publish(capsys, tmp_path):
    a = run("a")
    out, pub = tmp_path / "report.html", tmp_path / "site"
    bench = json.loads((DATA / "bench-old.json").read_text())  # python, triton, numba-cuda
    judged = json.loads(a.results.read_text())["fingerprint"]["planners"]
    bench["machine_info"]["planners"] = {"python": judged["python"]}  # the code run "a" judged
    (tmp_path / "bench.json").write_text(json.dumps(bench))
    assert cli_main(["report", str(a.results), "--bench", str(tmp_path / "bench.json"),
                     "--out", str(out), "--publish", str(pub)]) == 0
    assert sorted(p.name for p in pub.iterdir()) == ["bench.json", "index.html", "results.json"]
    assert json.loads((pub / "results.json").read_text()) == json.loads(a.results.read_text())
    html = out.read_text()
    assert (pub / "index.html").read_text() == html
    assert not re.search(r"<(link|img|iframe)\b|\bsrc=|url\(|@import|://", html)  # nothing fetched
    rows = re.findall(r'<tr id="case--([^"]+)"', html)
    assert rows[:6] == ["spec7-no-prefix", "spec7-decode-seed", "spec7-prefill-and-decodes",
                        "spec7-padding-row-middle", "hazard-prefix-past-row", "spec7-lut-shift"]
    assert set(rows[6:]) == {"declared-divergence", "err-dtype-prefix-lens", "err-val-stride-zero"}
    assert html.count('<details class="failure"') == 6
    assert '<h2 id="failures">Failures (6)</h2>' in html  # none judged but failing: no more words
    assert html.count('<code class="rerun">') == 6 and "  rerun: " not in html  # shown once
    assert re.search(r'<tr><td><code title="[^"]*">dtype</code></td><td>§4 item 2</td><td>launcher'
                     r'</td>\s*<td>1</td>\s*<td class="num"><span class="ok">1/1</span>', html)
    hazards = html[html.index('id="hazards"'):html.index('id="bench"')]
    assert "hazard-prefix-past-row" in hazards and hazards.count('class="s s-fail"') == 1
    # every figure withheld (tests/test_report_withheld.py): run "a" judged neither triton nor
    # numba-cuda, and python on its own folders only, not on the corpus: no plot
    assert "withheld: not judged by this run" in html
    total = len(corpus_cases())
    assert (f"withheld: judged on 0 of {total} corpus cases (cases/offsets-planner/; not judged: "
            f"bs-0, bs-1, bs-31 and {total - 3} more): figures stand only beside a run of the "
            "whole corpus") in html and html.count("<svg") == 0
    assert "6 not passing" in html
    seed = json.loads(a.results.read_text())["fingerprint"]["poison_seed"]
    command = re.search(r"Command: <code>([^<]*)</code>", html).group(1)
    assert f"CONFORMANCE_POISON_SEED={seed} pytest conformance/ -p no:cacheprovider -q " in command
    # python judged on the whole corpus (tests/corpus_results.py): its 2 modes plotted
    covered = write_covering(a.results, "python", tmp_path / "covered.json")
    assert cli_main(["report", str(covered), "--bench", str(tmp_path / "bench.json"),
                     "--out", str(tmp_path / "covered.html")]) == 0
    html = (tmp_path / "covered.html").read_text()
    assert html.count("<svg") == 2 and html.count("<polyline") == 2
    assert "withheld: not judged by this run" in html and "withheld: judged on" not in html
    assert html.count('stroke-dasharray="5,4"') == 4  # a floor line + its legend, per mode


def test_the_report_command_carries_only_the_rerun_variables_quoted():
    doc = {"args": ["conformance/", "--case", "a b"], "environment": {
        "PYTHONPATH": "/x y", "CONFORMANCE_POISON_SEED": "7", "X; rm -rf ~": "1", "LD_PRELOAD": "e"}}
    assert run_command(doc) == \
        "PYTHONPATH='/x y' CONFORMANCE_POISON_SEED=7 pytest conformance/ --case 'a b'"
    assert run_command({"args": ["-q"], "environment": ["PYTHONPATH=/x"]}) == "pytest -q"
    assert run_command({"args": ["-q"]}) == "pytest -q"


def test_text_and_markdown_formats(capsys):
    a = str(run("a").results)
    assert cli_main(["report", a, "--format", "text", "--max-failures-per-group", "0"]) == 0
    text = capsys.readouterr().out  # every failure's rerun command (0: none left out)
    row = next(ln.split() for ln in text.splitlines() if ln.startswith(PLANNER))
    # fail oob error crash timeout xpass differs not-wrapper declared xfail skip pass
    assert row[1:] == ["external", "6", "0", "0", "0", "0", "0", "0", "0", "0", "1", "0", "1",
                       row[-1]]
    assert "error catalog: 2 of 22 ids covered by this run's cases" in text
    assert (f"pytest conformance/ --planner {PLANNER} --cases {case_folder('common')} "
            "--case spec7-no-prefix") in text
    assert cli_main(["report", a, "--format", "markdown"]) == 0
    md = capsys.readouterr().out
    assert md.startswith("## Conformance\n\n17 results, 6 not passing; run complete")
    assert md.count("<details><summary><b>fail</b>") == 3  # of 6 alike: 3 a pattern by default
    assert "; 3 more left out (" in md
    lines = md.splitlines()
    run_line = next(line for line in lines if line.startswith("Run: `"))
    # after the variables the run had set (TRITON_INTERPRET=1 ... where the suite sets them)
    assert re.fullmatch(r"Run: `([A-Z_]+=\S+ )*CONFORMANCE_POISON_SEED=\d+ pytest conformance/ "
                        r"-p no:cacheprovider "
                        rf"-q --planner python --planner {re.escape(PLANNER)} --results \S+/a\.json "
                        rf"--junitxml=\S+/a\.xml --cases {re.escape(str(case_folder('common')))} "
                        rf"--cases {re.escape(str(case_folder('old-only')))}`", run_line), run_line
    # what did not pass comes before the tables a reviewer scrolls past
    headings = [line for line in lines if line.startswith("### ")]
    assert headings[:1] == ["### Not passing"], headings
    assert headings.index("### Not passing") < headings.index("### Divergence profile (spec §6)") \
        < headings.index("### Documented errors x planners")


@pytest.mark.parametrize("content, error", [
    ('{"format": "planner-conformance-results", "version": 2}',
     "results format version 2, this harness reads version 1"),
    ('{"format": "planner-conformance-results", "version": 1}',
     "at $: 'complete' is a required property"),
    ("{not json", "line 1 column 2: malformed JSON"),
])
def test_bad_results_file_is_one_line_error(tmp_path, capsys, content, error):
    path = tmp_path / "results.json"
    path.write_text(content)
    with pytest.raises(ResultsError, match=re.escape(error)):
        load_results(path)
    assert cli_main(["report", str(path), "--format", "text"]) == 2
    assert capsys.readouterr().err == f"error: {path}: {error}" + (
        "" if "malformed" not in error else ": Expecting property name enclosed in double "
        "quotes") + "\n"


def test_build_orders_failures_first_and_counts():
    model = build(load_results(run("a").results))
    assert [s["planner"] for s in model["summary"]] == ["python", PLANNER, "validator"]
    assert model["summary"][1]["counts"]["fail"] == 6 and model["bad"] == 6
    assert [r["case"] for r in model["hazards"]] == ["hazard-prefix-past-row"]
    assert model["tags"] == ["documented-error", "hazard", "lut", "padding", "spec-example",
                             "swa", "validator"]


@pytest.mark.slow  # compares with run b, a run under -n 2 (tests/report_runs.py): about 20 s on 2 cores
def test_compare_published_folders(capsys, tmp_path):
    """``--publish`` folders carry results and benchmarks; comparing them compares both."""
    for name, bench in (("a", "bench-old.json"), ("b", "bench-new.json")):
        assert cli_main(["report", str(run(name).results), "--bench", str(DATA / bench),
                         "--publish", str(tmp_path / name)]) == 0
    capsys.readouterr()
    assert cli_main(["report", "--compare", str(tmp_path / "a"), str(tmp_path / "b"),
                     "--format", "text"]) == 0
    text = capsys.readouterr().out
    assert text.splitlines()[2] == (
        "4 regression(s): 2 newly failing, 2 disappeared; 4 newly passing, 1 other status "
        "changes, 2 appeared, 8 unchanged, 1 benchmark figure(s) moved beyond their noise (26 of "
        "26 judged; repeats: old 1, new 1; rounds: old 200, new 200; a move needs >= 3 repeats a "
        "side (every repeat apart) or, without repeats, >= 5 rounds a side (IQRs apart))")
    assert re.search(r"^triton +eager +- +4096 +38\.19 +57\.29 +1\.50x +1/1 +200/200$", text,
                     re.M), text


def test_the_page_names_its_subjects_and_the_corpus_subjects_catalog():
    from conformance.reporting.report_lines import CATALOG_FILE, run_subjects

    assert CATALOG_FILE == "impls/offsets_planner/errors.py"
    doc = {"results": [{"subject": "entries-planner"}, {}, {"subject": "canary-plan"},
                       {"subject": ["not", "a", "name"]}, "not a result"]}
    assert run_subjects(doc) == ["canary-plan", "entries-planner", "offsets-planner"]
    assert run_subjects({"results": []}) == []


def test_compare_lists_cases_in_natural_order():
    """Ids with numbers read in their numbers' order (bs-1, bs-128, bs-1025), never as text."""
    from conformance.corpus.text import natural_key

    ids = ["random-bs-1025", "random-bs-128", "random-bs-1", "random-bs-64"]
    assert sorted(ids, key=natural_key) == ["random-bs-1", "random-bs-64", "random-bs-128",
                                            "random-bs-1025"]
    assert sorted(["$.cases[10]", "$.cases[2]", None], key=natural_key) == [
        None, "$.cases[2]", "$.cases[10]"]
