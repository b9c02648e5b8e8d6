"""The contract lives in the repository (``docs/spec/offsets-planner.md``) and every pointer to it
resolves: Markdown links (file and ``#anchor``), each case's ``source.ref`` (file, ``§N``, ``§4 item N``,
``§6 row N``) and the ``section N`` of a docstring that names it. No tracked file points outside the
checkout (the workplace's old shared folder), so a clone from anywhere has the contract.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SPEC = REPO / "docs" / "spec" / "offsets-planner.md"
SPEC_PATH = "docs/spec/offsets-planner.md"
OUTSIDE = "../" "shared"  # split so that this file does not itself mention it

LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
SECTION_MARK = re.compile(r"§\s*(\d+)")
SECTION_WORD = re.compile(r"\bsections?\s+(\d+(?:(?:,\s*|\s+and\s+)\d+)*)")
NUMBERS = re.compile(r"\d+")


def _tracked() -> list[Path]:
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout: the tracked files are unknown")
    return [REPO / name for name in out.stdout.decode().split("\0") if name]


def _text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (UnicodeDecodeError, IsADirectoryError, FileNotFoundError):
        return None


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def _spec_outline(text: str) -> tuple[dict[int, str], set[str]]:
    """({section number: body}, {anchors}) of the spec's ``## N. title`` sections."""
    sections: dict[int, str] = {}
    anchors: set[str] = set()
    current = None
    for line in text.splitlines():
        if line.startswith("#"):
            anchors.add(_slug(line.lstrip("#")))
            m = re.match(r"## (\d+)\. ", line)
            current = int(m.group(1)) if m else None
            if current is not None:
                sections[current] = ""
            continue
        if current is not None:
            sections[current] += line + "\n"
    return sections, anchors


SECTIONS, ANCHORS = _spec_outline(SPEC.read_text(encoding="utf-8"))


def _items(section: int) -> set[int]:
    return {int(n) for n in re.findall(r"^(\d+)\. ", SECTIONS[section], re.M)}


def _table_rows(section: int) -> int:
    rows = [ln for ln in SECTIONS[section].splitlines() if ln.startswith("|")]
    return max(len(rows) - 2, 0)  # less the header and the rule


def _ref_problems(ref: str) -> list[str]:
    """What in a spec ``source.ref`` does not resolve (empty: all of it does)."""
    problems = []
    if not ref.startswith(SPEC_PATH):
        return [f"does not start with {SPEC_PATH}"]
    for n in map(int, SECTION_MARK.findall(ref)):
        if n not in SECTIONS:
            problems.append(f"no section {n}")
    for m in re.finditer(r"§\s*(\d+)\s+(items?|rows?)\s+(\d+(?:(?:,\s*|\s+and\s+)\d+)*)", ref):
        section, kind, numbers = int(m.group(1)), m.group(2), map(int, NUMBERS.findall(m.group(3)))
        if section not in SECTIONS:
            continue
        if kind.startswith("item"):
            problems += [f"no item {n} in section {section}" for n in numbers
                         if n not in _items(section)]
        else:
            problems += [f"no row {n} in section {section}'s table" for n in numbers
                         if not 1 <= n <= _table_rows(section)]
    return problems


def _sources(node, where: str):
    """(where, source) for every ``source`` object under a case file's JSON."""
    if isinstance(node, dict):
        if isinstance(node.get("source"), dict):
            yield where, node["source"]
        for key, value in node.items():
            yield from _sources(value, f"{where}.{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _sources(value, f"{where}[{i}]")


def test_the_spec_is_in_the_repository():
    assert SPEC.is_file()
    assert sorted(SECTIONS) == list(range(1, 9))
    assert _items(4) == set(range(0, 17))


def test_no_tracked_file_points_outside_the_checkout():
    hits = [str(p.relative_to(REPO)) for p in _tracked()
            if (text := _text(p)) is not None and OUTSIDE in text]
    assert hits == []


def test_every_markdown_link_resolves():
    broken = []
    for path in _tracked():
        if path.suffix != ".md" or (text := _text(path)) is None:
            continue
        for target in LINK.findall(text):
            if re.match(r"[a-z]+:", target) or target.startswith("#"):
                continue  # a URL or an anchor in the same page
            file, _, anchor = target.partition("#")
            dest = (path.parent / file).resolve()
            if not dest.exists():
                broken.append(f"{path.relative_to(REPO)}: {target}")
            elif anchor and dest == SPEC.resolve() and anchor not in ANCHORS:
                broken.append(f"{path.relative_to(REPO)}: {target} (no such heading)")
    assert broken == []


def test_every_case_source_naming_the_spec_resolves():
    case_files = [p for p in _tracked() if p.suffix == ".json"
                  and p.relative_to(REPO).parts[0] in ("cases", "tests")]
    seen, broken = 0, []
    for path in case_files:
        doc = json.loads(path.read_text(encoding="utf-8"))
        for where, source in _sources(doc, "$"):
            ref = source.get("ref", "")
            if source.get("kind") != "spec" and "spec" not in ref and "§" not in ref:
                continue
            seen += 1
            broken += [f"{path.relative_to(REPO)} {where}: {ref!r}: {p}" for p in _ref_problems(ref)]
    assert seen > 100  # the corpus's spec references were all found
    assert broken == []


def test_a_docstring_naming_the_spec_names_existing_sections():
    broken, seen = [], 0
    for path in _tracked():
        if path.suffix != ".py" or path == Path(__file__).resolve() or (text := _text(path)) is None:
            continue  # this file spells the path in pieces and plants broken references
        for line in text.splitlines():
            if "``" not in line or "offsets-planner.md" not in line:
                continue  # a docstring names a file as a ``literal``; code builds paths itself
            seen += 1
            if SPEC_PATH not in line:
                broken.append(f"{path.relative_to(REPO)}: {line.strip()} (not {SPEC_PATH})")
            for group in SECTION_WORD.findall(line):
                broken += [f"{path.relative_to(REPO)}: no section {n}"
                           for n in map(int, NUMBERS.findall(group)) if n not in SECTIONS]
    assert seen >= 3
    assert broken == []


@pytest.mark.parametrize("ref, problem", [
    ("offsets-planner.md §4 item 2", f"does not start with {SPEC_PATH}"),
    (f"{SPEC_PATH} §9", "no section 9"),
    (f"{SPEC_PATH} §4 items 3 and 17", "no item 17 in section 4"),
    (f"{SPEC_PATH} §6 row 40", "no row 40 in section 6's table"),
])
def test_a_broken_reference_is_reported(ref, problem):
    assert _ref_problems(ref) == [problem]


def test_a_good_reference_has_no_problem():
    assert _ref_problems(f"{SPEC_PATH} §4 items 0, 1 and 2; §5 and §7 (capacity example)") == []
