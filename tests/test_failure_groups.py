"""Failures grouped by their first difference (``conformance/reporting/failure_groups.py``): at the
end of the conformance summary and in the Markdown, text and HTML reports, from real runs of
planted planners; every expectation is computed here from the results file's verdicts."""

from __future__ import annotations

import html
import json
import re
from collections import defaultdict

import pytest

from conformance.corpus.text import natural_key
from conformance.corpus.loader import load_corpus
from conformance.reporting import failure_groups
from conformance.reporting.failure_groups import (MARKDOWN_TITLE, MAX_CASES, MAX_PATTERNS,
                                                   SUMMARY_TITLE, TITLE, WIDTH)
from conformance.reporting.results_format import BAD
from conformance.reporting.run_profile import run_profile
from tests.subproc import cli, run_pytest

TWO_BUGS = "tests.planted.two_bugs:two_bugs"
SCAN_CASES = ("bs-1025", "bs-2048", "bs-2049", "bs-4095", "bs-4096",
              "random-decode-prefill-bs-1025")
"""Batches past 1024 requests: the dropped block carry changes their scans."""
ERROR_CASES = ("err-contiguous-lut", "err-contiguous-extend-seq-lens",
               "err-contiguous-out-verify-enable")
"""Steps that must raise the contiguity error: its message's typo makes it another error."""
PASSING = "spec7-prefill-and-decodes"


@pytest.fixture(scope="module")
def two_bugs(tmp_path_factory):
    """A run of the two-bug planner on a few cases: (completed process, results document)."""
    tmp = tmp_path_factory.mktemp("two-bugs")
    args = [a for c in (*SCAN_CASES, *ERROR_CASES, PASSING) for a in ("--case", c)]
    proc, _ = run_pytest(tmp, "-q", "-n", "0", "--planner", TWO_BUGS, *args)
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc, json.loads((tmp / "results.json").read_text()), tmp / "results.json"


def first_kinds(doc: dict) -> dict[tuple, set[str]]:
    """{(what, field, rule, expected error id, got kind) of the first difference: the failed cases
    whose verdict starts with it}, read straight from each result's verdict."""
    out = defaultdict(set)
    for r in doc["results"]:
        if r["status"] not in BAD:
            continue
        first = r["verdict"]["differences"][0]
        expected = next((s["id"] for s in r["verdict"]["error_steps"]
                         if s["step"] == first["step"]), None) if first["field"] == "error" else None
        out[(first["what"], first["field"], first["rule"], expected,
             first.get("got_kind"))].add(r["case"])
    return dict(out)


def block(output: str) -> list[str]:
    """The failure-groups block of a summary or a text report: from its title (the summary's
    :data:`SUMMARY_TITLE`, the report's :data:`TITLE`) to the next section's rule or a blank
    line."""
    lines = output.splitlines()
    [start] = [i for i, line in enumerate(lines) if line in (SUMMARY_TITLE, TITLE)]
    end = next(i for i in range(start + 1, len(lines))
               if lines[i].startswith("=====") or not lines[i].strip())
    return lines[start:end]


def patterns(lines: list[str]) -> list[tuple[int, str, str]]:
    """(count, words, cases) of each pattern line of a planner's block (wrapped lines joined)."""
    joined: list[str] = []
    for line in lines:
        if re.match(r"    +\d+  ", line):
            joined.append(line.strip())
        else:
            joined[-1] += " " + line.strip()
    out = []
    for text in joined:
        count, rest = text.split("  ", 1)
        words, cases = rest.split("   ", 1)
        out.append((int(count), words, cases))
    return out


def test_two_bugs_of_one_planner_are_two_patterns(two_bugs):
    proc, doc, _ = two_bugs
    kinds = first_kinds(doc)
    assert len(kinds) == 2  # one per bug
    value = next(k for k in kinds if k[0] == "value")
    error = next(k for k in kinds if k[0] == "error")
    assert kinds[value] == set(SCAN_CASES) and kinds[error] == set(ERROR_CASES)
    assert error[3:] == ("contiguous", "ValueError [unidentified]")  # the typo: no catalog id
    [group] = failure_groups.groups(doc["results"])
    assert group["planner"] == TWO_BUGS and group["failed"] == sum(map(len, kinds.values()))
    assert {p["key"][1:]: {c["case"] for c in p["cases"]} for p in group["patterns"]} == kinds
    assert [p["count"] for p in group["patterns"]] == sorted(map(len, kinds.values()),
                                                             reverse=True)


def test_the_summary_ends_with_the_groups(two_bugs):
    proc, doc, _ = two_bugs
    kinds = first_kinds(doc)
    lines = block(proc.stdout)
    failed = sum(map(len, kinds.values()))
    # its first line says it is the part to read, and how to stop a run early, in one line
    assert lines[0] == SUMMARY_TITLE == ("failures by first difference (when many cases fail, "
                                         "read these lines first; -x or --maxfail=N stops a run "
                                         "early):")
    assert len(lines[0]) <= WIDTH
    assert lines[1].split() == [TWO_BUGS, str(failed), "failed", "cases,", str(len(kinds)),
                                "patterns"]
    rows = patterns(lines[2:])
    assert len(rows) == len(kinds)
    for count, words, cases in rows:
        [key] = [k for k in kinds if (k[0] == "value") == ("another value" in words)]
        # fewest contract differences first (an error case: none), then by id
        size = {r["case"]: (r["verdict"] or {}).get("by_rule", {}).get("contract", 0)
                for r in doc["results"] if r["case"] in kinds[key]}
        listed = sorted(kinds[key], key=lambda c: (size[c], natural_key(c)))
        assert count == len(kinds[key])
        more = len(listed) - MAX_CASES
        assert cases == ", ".join(listed[:MAX_CASES]) + (f" and {more} more" if more > 0 else "")
        assert (key[1] in words) if key[0] == "value" else (f"[{key[3]}], got {key[4]}" in words)
    assert rows[0][1] == "out_verify_offsets_scratch: another value (contract)"
    # the block sits in the conformance summary, after the table
    assert proc.stdout.index("conformance summary") < proc.stdout.index(SUMMARY_TITLE) \
        < proc.stdout.index("conformance profile")


def test_the_markdown_and_text_reports_show_the_same_groups(two_bugs):
    _, doc, path = two_bugs
    kinds = first_kinds(doc)
    markdown = cli("report", str(path), "--format", "markdown").stdout
    section = markdown.split(MARKDOWN_TITLE, 1)[1].split("<details>")[0]
    # under the heading of what did not pass, above every failure's own section
    assert markdown.index("### Not passing") < markdown.index(MARKDOWN_TITLE) \
        < markdown.index("<details>")
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in section.splitlines()
            if line.startswith(f"| `{TWO_BUGS}`")]
    assert len(rows) == len(kinds)
    for planner, count, words, cases in rows:
        ids = re.findall(r"`([^`]+)`", cases)
        key = next(k for k, v in kinds.items() if set(ids) <= v)
        assert int(count) == len(kinds[key]) and len(ids) == min(len(kinds[key]), MAX_CASES)
    text = cli("report", str(path), "--format", "text").stdout
    # the terminal's lines, under the report's own title (no pytest option to name there)
    assert block(text) == [TITLE, *block(two_bugs[0].stdout)[1:]]


def test_a_passing_run_prints_no_groups(tmp_path):
    proc, _ = run_pytest(tmp_path, "-q", "-n", "0", "--planner", "python", "--case", PASSING)
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert "conformance summary" in proc.stdout
    assert "failures by first difference" not in proc.stdout
    results = str(tmp_path / "results.json")
    assert MARKDOWN_TITLE not in cli("report", results, "--format", "markdown").stdout
    assert TITLE not in cli("report", results, "--format", "text").stdout
    page = tmp_path / "page.html"
    assert cli("report", results, "--out", str(page)).returncode == 0
    assert 'id="failure-groups"' not in page.read_text()


def test_a_hostile_case_id_is_text_in_every_report(tmp_path):
    """A case file's id is a user's text: the HTML escapes it, Markdown keeps it in code spans."""
    hostile = "x<script>alert(1)</script>"
    case = next(c for c in load_corpus()[0] if c.id == PASSING)
    folder = tmp_path / "cases"
    folder.mkdir()
    (folder / "hostile.json").write_text(json.dumps({**case.raw, "id": hostile}))
    (folder / "plain.json").write_text(json.dumps({**case.raw, "id": "plain"}))
    proc, _ = run_pytest(tmp_path, "-q", "-n", "0", "--cases", str(folder), "--planner",
                         "tests.planted.wrong_planners:off_by_one_scan")
    assert proc.returncode == 1
    doc = json.loads((tmp_path / "results.json").read_text())
    assert hostile in {r["case"] for r in doc["results"] if r["status"] in BAD}  # it failed
    assert hostile in "\n".join(block(proc.stdout))  # plain text on the terminal
    results = str(tmp_path / "results.json")
    page = tmp_path / "page.html"
    cli("report", results, "--out", str(page))
    text = page.read_text()
    table = text.split('id="failure-groups-table"', 1)[1].split("</table>", 1)[0]
    assert html.escape(hostile) in table and "<script>alert" not in text
    markdown = cli("report", results, "--format", "markdown").stdout
    section = markdown.split(MARKDOWN_TITLE, 1)[1].split("<details>")[0]
    assert f"`{hostile}`" in section
    assert hostile not in re.sub(r"`[^`]*`", "", section)  # only inside a code span


def test_the_block_is_capped():
    """Past :data:`MAX_PATTERNS` patterns a planner's block counts the rest; past
    :data:`MAX_CASES` cases a pattern counts the rest."""
    fields = [f"out_{k}" for k in range(MAX_PATTERNS + 3)]
    results = [{"planner": "p", "case": f"c-{f}-{i}", "status": "fail", "verdict": {
        "differences": [{"step": 0, "what": "value", "field": f, "rule": "contract"}],
        "error_steps": []}} for n, f in enumerate(fields) for i in range(n + 1)]
    [group] = failure_groups.groups(results)
    assert len(group["patterns"]) == len(fields) and len(group["listed"]) == MAX_PATTERNS
    assert group["more_patterns"] == 3 and group["more_cases"] == 1 + 2 + 3
    lines = failure_groups.terminal_lines([group])
    assert lines[-1] == "    and 3 more patterns (6 failed cases)"
    top = group["listed"][0]
    assert top["count"] == len(fields) and top["more"] == len(fields) - MAX_CASES
    assert all(len(line) <= failure_groups.WIDTH for line in lines)
    assert failure_groups.terminal_lines([]) == [] and failure_groups.markdown_lines([]) == []


def test_one_more_pattern_of_one_case_is_said_in_the_singular():
    fields = [f"out_{k}" for k in range(MAX_PATTERNS + 1)]
    results = [{"planner": "p", "case": f"c-{f}-{i}", "status": "fail", "verdict": {
        "differences": [{"step": 0, "what": "value", "field": f, "rule": "contract"}],
        "error_steps": []}} for n, f in enumerate(fields) for i in range(1 if n == 0 else 2)]
    [group] = failure_groups.groups(results)
    assert (group["more_patterns"], group["more_cases"]) == (1, 1)
    assert failure_groups.terminal_lines([group])[-1] == "    and 1 more pattern (1 failed case)"
    last_row = failure_groups.markdown_lines([group])[-1].splitlines()[-1]
    assert [cell.strip() for cell in last_row.split("|")] == [
        "", "`p`", "1", "and 1 more pattern", "", ""]


def _words(what: str, got_kind: str | None = None) -> str:
    return failure_groups.words(("fail", what, "error", "contract", "dtype", got_kind))


def test_an_error_pattern_names_the_kinds_and_a_verdict_without_one_still_reads():
    assert _words("error", "TypeError [dtype]") == (
        "wrong error: expected [dtype], got TypeError [dtype] (contract)")
    assert _words("error") == "wrong error: expected [dtype], got another error (contract)"
    assert _words("no-error") == "no error raised: expected [dtype] (contract)"
    assert failure_groups.words(("crash", None, None, None, None, None)) == "crashed"



@pytest.mark.parametrize("status, cause, said", [
    ("crash", "death", "crash: the worker died after the case's last call"),
    ("crash", "hang", "crash: the worker hung or was stopped after the case's last call"),
    ("fail", "write-inside", "fail: wrote into an argument after the case's last call"),
    ("oob", "write-outside", "oob: wrote outside an argument after the case's last call")])
def test_a_failure_after_the_last_call_is_grouped_by_what_the_planner_did(status, cause, said):
    """A case failed after its last call keeps the verdict of its passing call (or none): its
    ``after_last_call`` keys it, never a difference of that verdict, nor "no verdict"."""
    passed = _lut_clamp_then_contract("p", after_last_call=cause)  # a verdict it passed with
    passed["status"] = status
    plain = {"planner": "p", "case": PASSING, "status": status, "after_last_call": cause,
             "verdict": None}
    [group] = failure_groups.groups([passed, plain])
    [found] = group["patterns"]
    assert found["words"].startswith(said), found["words"]
    assert found["count"] == 2
    assert [c["case"] for c in found["cases"]] == sorted([LUT_CLAMP_CASE, PASSING],
                                                         key=natural_key)
    # a fail without that field is still read from its verdict
    passed.pop("after_last_call")
    assert failure_groups.groups([passed])[0]["patterns"][0]["key"][1] == "value"



def test_a_case_file_fault_is_grouped_as_one_not_as_a_planners_failure():
    """A result of the ``load`` pseudo-planner (a case file that does not load, a ``--case`` id
    that names no case) says so, not "fail, with no verdict"."""
    faults = [{"planner": "load", "case": f"cases.json@$.cases[{i}]", "status": "fail",
               "verdict": None} for i in range(2)]
    [group] = failure_groups.groups(faults)
    [found] = group["patterns"]
    assert found["count"] == 2
    assert found["words"].startswith("a case file that does not load, or a --case id that ")


SEED_COLUMN_PREFIX = "tests.planted.mutants.seeds:seed_column_prefix"
"""Reads the seed at column prefix instead of prefix - 1: on a clamping LUT case some of its wrong
seeds sit where the LUT clamps (project rule ``lut-clamp``), the others where the contract
decides."""
LUT_CLAMP_CASE = "random-swa-lut-clamp-bs-4095"


def _seed_difference(index: int, rule: str, expected: int, got: int) -> dict:
    return {"step": 0, "run": "a", "what": "value", "field": "out_write_seed_slot_indices",
            "index": index, "expected": expected, "got": got, "rule": rule, "evidence": None,
            "inputs": None, "got_kind": None}


def _lut_clamp_then_contract(planner: str, **extra) -> dict:
    """A failed result whose first difference a project rule decides (``lut-clamp``) and a later
    one the contract, as the seed-column bug gives on ``random-swa-lut-clamp-bs-4095``."""
    diffs = [_seed_difference(178, "lut-clamp", 5099, 5096),
             _seed_difference(302, "contract", 4471, 4470),
             _seed_difference(1499, "lut-clamp", 5099, 5097)]
    return {"planner": planner, "case": LUT_CLAMP_CASE, "status": "fail", **extra, "verdict": {
        "differences": diffs, "by_rule": {"lut-clamp": 2, "contract": 1}, "count": 3,
        "error_steps": [], "situations": {}, "outside": None, "by_kind": {}}}


def _key_rule(results: list[dict], **kwargs) -> str:
    [group] = failure_groups.groups(results, **kwargs)
    [found] = group["patterns"]
    return found["key"][3]


def test_a_case_is_grouped_under_a_rule_it_was_judged_on():
    """Under ``--profile contract`` (an external planner's default) a project rule's difference
    never fails a case: the case is filed under its first contract difference. A built-in planner,
    a one-call subject's result and a run judged on ``project`` are judged on the project rules
    too: their first difference keys them."""
    external = _lut_clamp_then_contract(SEED_COLUMN_PREFIX)
    assert _key_rule([external]) == "contract"
    assert _key_rule([external], profile="contract") == "contract"
    [group] = failure_groups.groups([external])
    assert group["patterns"][0]["words"] == "out_write_seed_slot_indices: another value (contract)"
    assert failure_groups.key_difference(external)["index"] == 302
    assert _key_rule([external], profile="project") == "lut-clamp"
    assert _key_rule([external], profile="all") == "lut-clamp"
    assert _key_rule([_lut_clamp_then_contract("python")]) == "lut-clamp"  # built-in: all
    assert _key_rule([_lut_clamp_then_contract("python", subject="entries-planner")]) \
        == "lut-clamp"
    # a manifest named it and its observed status stayed: judged on every rule
    assert _key_rule([_lut_clamp_then_contract(SEED_COLUMN_PREFIX,
                                               divergence="m.json $.divergences[0]: ...")]) \
        == "lut-clamp"


def test_with_no_judged_difference_kept_the_first_difference_keys_it():
    """A failure whose kept differences no judged rule decides (its contract ones past the kept
    sample, or a hand-edited file) still has a key: its first difference."""
    result = _lut_clamp_then_contract(SEED_COLUMN_PREFIX)
    result["verdict"]["differences"] = [d for d in result["verdict"]["differences"]
                                        if d["rule"] != "contract"]
    assert _key_rule([result]) == "lut-clamp"
    result["verdict"]["differences"][0]["rule"] = None  # hand-edited: no rule at all
    assert _key_rule([result]) is None


def test_a_real_lut_clamp_failure_is_grouped_under_the_contract(tmp_path):
    """The finding, end to end: the seed-column bug on a clamping LUT case, judged on the contract
    (an external planner's default profile); its verdict's first difference is a ``lut-clamp``
    one, yet the summary and the reports file it under the contract, which failed it."""
    proc, _ = run_pytest(tmp_path, "-q", "-n", "0", "--planner", SEED_COLUMN_PREFIX,
                         "--case", LUT_CLAMP_CASE)
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-3000:]
    results = tmp_path / "results.json"
    [result] = json.loads(results.read_text())["results"]
    diffs = result["verdict"]["differences"]
    assert result["status"] == "fail" and diffs[0]["rule"] == "lut-clamp"  # the finding's data
    contract = next(d for d in diffs if d["rule"] == "contract")
    expected = f"{contract['field']}: another value (contract)"
    # the failure's diff shows the contract's first element beside the first one (a lut-clamp one)
    shown = [line.strip() for line in proc.stdout.splitlines()]
    assert f"first under contract: index {contract['index']}" in shown
    lines = block(proc.stdout)
    assert patterns(lines[2:]) == [(1, expected, LUT_CLAMP_CASE)]
    assert "project rule" not in "\n".join(lines)
    assert block(cli("report", str(results), "--format", "text").stdout) == [TITLE, *lines[1:]]
    markdown = cli("report", str(results), "--format", "markdown").stdout
    section = markdown.split(MARKDOWN_TITLE, 1)[1].split("<details>")[0]
    assert f"`{expected}`" in section and "project rule" not in section


def test_a_report_reads_the_profile_from_the_run_arguments():
    """The report's groups take the run's ``--profile`` from its recorded arguments."""
    assert run_profile(["conformance/", "--profile", "project"]) == "project"
    assert run_profile(["--profile=all", "-q"]) == "all"
    assert run_profile(["--profile", "all", "--profile", "contract"]) == "contract"
    assert run_profile(["-q"]) is None
    assert run_profile(None) is None


def test_a_case_with_two_failed_results_is_listed_once():
    """Two load faults of one case are two failures of one pattern, its id listed once."""
    fault = {"planner": "load", "case": "my-bad-len", "status": "fail", "verdict": None}
    [group] = failure_groups.groups([fault, dict(fault)])
    [found] = group["patterns"]
    assert found["count"] == 2 and [c["case"] for c in found["listed"]] == ["my-bad-len"]
    assert group["failed"] == 2


def test_a_misspelt_keyword_is_named_once_in_its_group(tmp_path):
    """Every valid call of a planner whose signature misspells a keyword raises the same
    ``TypeError``: its one pattern repeats the message, so the summary names the keyword without
    opening a report; a pattern whose results raised different messages names none."""
    planner = "tests.planted.misspelt_keyword:misspelt"
    proc, _ = run_pytest(tmp_path, "-q", "-n", "0", "--planner", planner,
                         "--case", PASSING, "--case", "bs-1")
    assert proc.returncode == 1, proc.stdout[-3000:]
    said = "launch() got an unexpected keyword argument 'prefix_lens'".replace("launch", "misspelt")
    lines = block(proc.stdout)
    assert any(f"2  raised TypeError on a valid step (contract): {said}" in line
               for line in lines), lines
    doc = json.loads((tmp_path / "results.json").read_text())
    results = [r for r in doc["results"] if r["status"] in BAD]
    assert len(results) == 2
    other = json.loads(json.dumps(results))
    other[1]["verdict"]["differences"][0]["got"] = "TypeError: another message"
    (found,) = failure_groups.groups(other)
    assert [p["words"] for p in found["patterns"]] == ["raised TypeError on a valid step (contract)"]
