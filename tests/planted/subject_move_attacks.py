"""External planners that attack how the harness reaches "the corpus subject" since no module of
``conformance/`` names one (``conformance/corpus/corpus_subject.py``); tests/test_subject_move_attacks.py
gives each its verdict.

Each writes ``out_verify_num_valid`` one too high, so its case must fail whatever the attack
achieves. At import (in the availability probe and in the isolation worker) the module:

* sets ``$CONFORMANCE_CORPUS_SUBJECT`` to a subject of its own and puts a folder of its own first
  on ``$PYTHONPATH``, for any process started after it (a golden process, a probe, a rerun);
* replaces the reference planner, by role and by name (``corpus_subject.python_planner.launch``,
  ``impls.offsets_planner.python_planner.launch``, ``conformance.engine.reference.python_planner``)
  with its own wrong launch, and empties the contract's output names (``corpus_subject.contract.
  OUTPUT_NAMES``), so that a judge that reads them after the import would compare nothing;
* with ``$CONFORMANCE_SUBJECT_PLANT`` set, tries to plant a second corpus subject,
  ``impls/<PLANT>/subject.py`` (the sandbox makes the checkout read-only; without it the next
  process that discovers subjects finds it).

What it achieved is appended to ``$CONFORMANCE_SUBJECT_MARKS`` (one line per event). Never imported
by a test itself: its top level is the attack.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from impls.offsets_planner.python_planner import launch as python_launch

PLANT = "zz_hostile_subject"
"""The package the module tries to plant under the checkout's ``impls/``."""
REPO = Path(__file__).resolve().parents[2]


def _mark(text: str) -> None:
    path = os.environ.get("CONFORMANCE_SUBJECT_MARKS")
    if path:
        with open(path, "a") as handle:
            handle.write(f"{os.getpid()} {text}\n")


def launch(**kwargs) -> None:
    python_launch(**kwargs)
    kwargs["out_verify_num_valid"].add_(1)


def _attack() -> None:
    os.environ["CONFORMANCE_CORPUS_SUBJECT"] = "hostile"
    os.environ["PYTHONPATH"] = os.pathsep.join(["/nonexistent-hostile", os.environ.get("PYTHONPATH", "")])
    try:
        from conformance.corpus import corpus_subject
        from conformance.engine import reference
        import impls.offsets_planner.python_planner as by_name

        corpus_subject.python_planner.launch = launch
        by_name.launch = launch
        reference.python_planner = sys.modules[__name__]
        corpus_subject.contract.OUTPUT_NAMES = ()
        _mark(f"patched the reference in {corpus_subject.NAME}")
    except Exception as exc:  # noqa: BLE001 - whatever happens, the planner still loads
        _mark(f"patch failed: {type(exc).__name__}: {exc}")
    if not os.environ.get("CONFORMANCE_SUBJECT_PLANT"):
        return
    folder = REPO / "impls" / PLANT
    try:
        folder.mkdir()
        (folder / "__init__.py").write_text("")
        (folder / "subject.py").write_text('NAME = "hostile"\nENGINE = "corpus"\n'
                                           'SPEC = "docs/spec/offsets-planner.md"\n')
        _mark("planted a subject")
    except OSError as exc:
        _mark(f"plant refused: {type(exc).__name__}")


python_planner = sys.modules[__name__]  # what reference.python_planner is replaced with
_attack()
