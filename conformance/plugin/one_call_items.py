"""The items of one-call subjects (:mod:`conformance.engine.one_call`): one per (case, built-in
planner), collected beside the corpus engine's by :mod:`conformance.plugin.hooks`; and which
subjects this run judges (:data:`SUBJECTS`, set by :mod:`conformance.plugin.subjects`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType, SimpleNamespace

import pytest
import torch

from conformance.corpus.case_file import display_path
from conformance.corpus.subjects import SubjectError, case_folder, discover
from conformance.engine.rerun import rerun_command
from conformance.corpus.text import terminal_text
from conformance.engine.call_report import failure_text
from conformance.engine.one_call import judge_call
from conformance.engine.runner import ConformanceFailure
from conformance.paths import CASES_ROOT

SUBJECTS = pytest.StashKey[dict]()
"""``config.stash``: {NAME: subject module} of the subjects this run judges."""


def one_call_planner_names(config: pytest.Config) -> set[str]:
    """Every built-in planner name of every one-call subject (``--subject-module`` ones too):
    names ``--planner`` accepts beside the corpus engine's."""
    found = config.stash.get(SUBJECTS, None)
    if found is None:
        try:
            found = discover(extra=config.getoption("subject_module"))
        except SubjectError:
            return set()  # plugin.subjects says why, as a usage error
    return {name for m in found.values() if m.ENGINE == "one-call" for name in m.PLANNERS}


def corpus_planner_names(config: pytest.Config, builtins: tuple[str, ...]) -> list[str]:
    """The ``--planner`` names the corpus engine runs: all of them less those only a one-call
    subject knows (``builtins``: the corpus engine's built-in names, its default)."""
    given = config.getoption("planner")
    if not given:
        return list(builtins)
    only_one_call = one_call_planner_names(config) - set(builtins)
    return list(dict.fromkeys(n for n in given if n not in only_one_call or ":" in n))


def judges_corpus(config: pytest.Config) -> bool:
    """Whether this run judges a corpus-engine subject (the multi-step JSON cases)."""
    return any(m.ENGINE == "corpus" for m in config.stash[SUBJECTS].values())


@dataclass
class OneCallCase:
    """What the front end needs of a one-call case (the dict stays with the subject)."""

    id: str
    description: str
    path: Path
    line: int
    data: dict
    tags: tuple[str, ...] = ()
    xfail: list = field(default_factory=list)

    @property
    def location(self) -> str:
        return f"{self.path.name}:{self.line}"


def one_call_cases(config: pytest.Config) -> tuple[list[tuple[ModuleType, OneCallCase]],
                                                  list[tuple[str, str]]]:
    """(every (subject, case) of the one-call subjects, the (item name, text) of every fault: a
    folder that cannot be read or holds no case, a line that is not a case, an id used twice)."""
    out, faults = [], []
    for module in config.stash[SUBJECTS].values():
        if module.ENGINE != "one-call":
            continue
        folder = case_folder(module, CASES_ROOT)
        try:
            cases = module.load_cases(folder)
        except (OSError, ValueError) as exc:
            faults.append((f"{module.NAME}[load]", f"{module.NAME}: {exc}"))
            continue
        if not cases:
            faults.append((f"{module.NAME}[load]", f"{module.NAME}: no case in {folder}"))
        seen: dict[str, str] = {}
        for c in cases:
            where = f"{Path(c['_file']).name}:{c['_line']}"
            if "_fault" in c or c.get("id") in seen:
                why = c.get("_fault") or f"duplicate case id {c['id']!r} (first at {seen[c['id']]})"
                faults.append((f"{module.NAME}:{where}[load]", f"{module.NAME}: {c['_file']}:"
                                                               f"{c['_line']}: {why}"))
                continue
            seen[c["id"]] = where
            tags = tuple(c.get("tags", ())) + ((c["pins"],) if c.get("pins") else ())
            out.append((module, OneCallCase(c["id"], c.get("description", ""), Path(c["_file"]),
                                            c["_line"], c, tags)))
    return out, faults


def planners_of(module: ModuleType, config: pytest.Config) -> list[str]:
    """The built-in planners of ``module`` this run names (default, no ``--planner``: all)."""
    given = config.getoption("planner")  # only external ones named: none of a subject's runs
    return [p for p in module.PLANNERS if not given or p in given]


def availability(module: ModuleType, name: str) -> SimpleNamespace:
    """``available``, ``mode``, ``reason`` and ``device`` of built-in planner ``name``."""
    mode = module.planner_mode(name)
    if mode == "unavailable":
        try:
            module.get_planner(name)
            reason = "unavailable"
        except RuntimeError as exc:
            reason = str(exc)
        return SimpleNamespace(available=False, fails=False, mode=mode, reason=reason,
                               device="cpu")
    return SimpleNamespace(available=True, fails=False, mode=mode, reason="",
                           device="cuda" if mode == "gpu" else "cpu")


class OneCallItem(pytest.Item):
    """One case of a one-call subject on one of its built-in planners."""

    engine = "one-call"

    def __init__(self, *, subject: ModuleType, case: OneCallCase, planner: str, avail,
                 **kwargs) -> None:
        super().__init__(**kwargs)
        self.subject, self.case, self.planner, self.avail = subject, case, planner, avail
        for key, value in (("planner", planner), ("case", case.id), ("subject", subject.NAME),
                           ("mode", avail.mode)):
            self.user_properties.append((key, value))
        self.extra_keyword_matches.update(case.tags)
        if not avail.available:
            self.add_marker(pytest.mark.skip(reason=terminal_text(f"{planner}: {avail.reason}")))

    def case_meta(self) -> dict:
        """What the results file keeps of this item (``results_writer.case_meta``'s keys)."""
        c = self.case
        return {"case": c.id, "description": c.description, "file": display_path(c.path),
                "json_path": f"line {c.line}", "entry": "launcher", "source": c.data.get("source"),
                "tags": list(c.tags),  # the project rule a case pins is a tag
                "pins": "project" if c.data.get("pins") else None,  # its kind (results schema)
                "error_ids": [error[0]] if (error := self.subject.expected_error(c.data)) else [],
                "rerun": self.rerun(), "subject": self.subject.NAME}

    def rerun(self) -> str:
        """The command that reruns this item alone (the run's variables, its own results file),
        with the ``--subject-module`` a subject outside ``impls/`` needs."""
        extra = ["--subject", self.subject.NAME]
        if self.subject.__name__ in self.config.getoption("subject_module"):
            extra += ["--subject-module", self.subject.__name__]
        return rerun_command(self.case.id, self.planner, extra=extra)

    def runtest(self) -> None:
        launch = self.subject.get_planner(self.planner)
        try:
            verdict = judge_call(self.subject, self.case.data, launch,
                                 torch.device(self.avail.device))
        except (ValueError, KeyError, TypeError) as exc:  # judge_call: before any call
            self.user_properties.append(("status", "error"))
            raise ConformanceFailure(self._text(f"error: the case's inputs cannot be built: "
                                                f"{type(exc).__name__}: {exc}")) from None
        if verdict.count:
            raise ConformanceFailure(self._text(failure_text(verdict)), verdict)

    def _text(self, detail: str) -> str:
        c = self.case
        return "\n".join([f"{c.id}[{self.planner}]  ({self.subject.NAME}: {c.location})",
                          f"  {c.description}", *("  " + line for line in detail.splitlines()),
                          f"  rerun: {self.rerun()}"])

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, ConformanceFailure):
            return terminal_text(str(excinfo.value))
        return super().repr_failure(excinfo, style)

    def reportinfo(self):
        return self.case.path, 0, f"{self.case.id}[{self.planner}]"


def collect(parent: pytest.File, wanted: set[str], fault_item) -> tuple[list, set[str]]:
    """(the items of every one-call subject under ``parent``, the case ids they hold); a folder
    that cannot be read becomes a failing item built by ``fault_item(name, text)``."""
    config = parent.config
    pairs, faults = one_call_cases(config)
    items = [fault_item(name, text) for name, text in faults]
    ids = {case.id for _, case in pairs}
    for module, case in pairs:
        if wanted and case.id not in wanted:
            continue
        for name in planners_of(module, config):
            items.append(OneCallItem.from_parent(parent, name=f"{case.id}[{name}]", subject=module,
                                                 case=case, planner=name,
                                                 avail=availability(module, name)))
    return items, ids
