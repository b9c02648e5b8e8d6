"""Planted planners of a hostile entrant that attack what the isolation sandbox keeps: the
filesystem, the worker's environment and the worker's own reports (``tests/test_hostile3.py``
runs them on a copy of the checkout, never on this one, and says which still fool the harness).

Every planner here is wrong by one count, or raises the wrong exception; each tries to get a
passing verdict anyway:

* :func:`edits_case_file`: rewrites the golden of the case it recognises (by its inputs) in the
  case file on disk, so that the next run judges it by its own wrong output;
* :func:`plants_judge_bytecode`: writes ``conformance/engine/judge.py``'s ``__pycache__`` entry
  (and pytest's assertion-rewrite cache entry beside it) with a judge that never fails (the
  header carries the source's own mtime and size, so Python and pytest trust it, and the source,
  ``git status`` included, is unchanged): the next run's judge is its;
* :func:`right_when_named`: right only when the worker's environment names a pytest test
  (``PYTEST_CURRENT_TEST``, inherited from pytest when the worker was spawned), wrong otherwise
  (as in a server);
* :func:`forges_raise`: on an invalid call raises ``RuntimeError``, after replacing the worker's
  recorder of exceptions (``Raised.of``) with one that records the validator's ``ValueError``.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path

from impls.offsets_planner.python_planner import launch as python_launch
from impls.offsets_planner.validate import validate_launch

TREE = Path(__file__).resolve().parents[2]
"""The checkout this module sits in (``tests/planted/`` two levels down)."""
REQUESTS = ("req_pool_indices", "prefix_lens", "extend_seq_lens")


def _wrong(kwargs: dict) -> None:
    """The pure-Python planner's outputs with ``out_write_num_valid_reqs`` one too high."""
    python_launch(**kwargs)
    kwargs["out_write_num_valid_reqs"].add_(1)


def _requests(kwargs: dict) -> dict:
    return {name: kwargs[name].tolist() for name in REQUESTS}


def edits_case_file(**kwargs) -> None:
    """Wrong count; every case file under ``cases/`` whose case has these request inputs gets its
    ``out_write_num_valid_reqs`` golden raised by one (once: a golden already edited is left)."""
    _wrong(kwargs)
    seen = _requests(kwargs)
    count = int(kwargs["out_write_num_valid_reqs"].item())
    for path in (TREE / "cases").rglob("*.json"):
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        changed = False
        for case in data.get("cases", []) if isinstance(data, dict) else []:
            inputs, expect = case.get("inputs") or {}, case.get("expect") or {}
            if all(inputs.get(n) == v for n, v in seen.items()) and \
                    expect.get("out_write_num_valid_reqs") == count - 1:
                expect["out_write_num_valid_reqs"] = count
                changed = True
        if changed:
            path.write_text(json.dumps(data, indent=2) + "\n")


NEUTERED = "\n\n_Judging.fail = lambda self: None\nHOSTILE3_PLANTED = \"a judge that never fails\"\n"


def plant_bytecode(source: Path, extra: str) -> None:
    """Write the bytecode of ``source`` + ``extra`` where the next import of ``source`` finds it:
    CPython's ``__pycache__`` entry (the header holds the source's own mtime and size, so it is
    trusted) and pytest's assertion-rewrite entry beside it (``NAME.cpython-311-pytest-X.Y.Z.pyc``,
    its header a checked hash of the source, which this process computes as well as pytest).
    The source file itself is left byte for byte as it was."""
    import marshal
    from importlib.metadata import version

    pyc = Path(importlib.util.cache_from_source(str(source)))
    stat = source.stat()
    body = marshal.dumps(compile(source.read_text() + extra, str(source), "exec"))
    timestamped = (importlib.util.MAGIC_NUMBER + (0).to_bytes(4, "little")
                   + (int(stat.st_mtime) & 0xFFFFFFFF).to_bytes(4, "little")
                   + (stat.st_size & 0xFFFFFFFF).to_bytes(4, "little"))
    checked = (importlib.util.MAGIC_NUMBER + b"\x03\x00\x00\x00"
               + importlib.util.source_hash(source.read_bytes())[:8])
    pyc.parent.mkdir(exist_ok=True)
    pyc.write_bytes(timestamped + body)
    pyc.with_name(f"{source.stem}.{sys.implementation.cache_tag}-pytest-{version('pytest')}"
                  ".pyc").write_bytes(checked + body)


def _plant_judge_bytecode() -> None:
    plant_bytecode(TREE / "conformance" / "engine" / "judge.py", NEUTERED)


def plants_judge_bytecode(**kwargs) -> None:
    """Wrong count, and a never-failing judge planted in the harness's bytecode cache."""
    _wrong(kwargs)
    _plant_judge_bytecode()


def right_when_named(**kwargs) -> None:
    """Right when ``PYTEST_CURRENT_TEST`` is in the environment (the harness's worker), else one
    count too high (a server, the fuzzer)."""
    python_launch(**kwargs)
    if "PYTEST_CURRENT_TEST" not in os.environ:
        kwargs["out_write_num_valid_reqs"].add_(1)


class _Forged:
    pending = None


def forges_raise(**kwargs) -> None:
    """Right on valid calls. On an invalid one raises ``RuntimeError("not the documented
    error")`` and has the worker record the validator's ``ValueError`` in its place."""
    try:
        validate_launch(**kwargs)
    except ValueError as documented:
        observe = sys.modules.get("conformance.engine.observe")
        if observe is None:
            import conformance.engine.observe as observe
        real = observe.Raised.of.__func__ if not hasattr(observe.Raised, "_hostile3") else None
        if real is not None:
            def of(cls, exc, _real=real):
                if isinstance(exc, RuntimeError) and _Forged.pending is not None:
                    exc, _Forged.pending = _Forged.pending, None
                return _real(cls, exc)
            observe.Raised.of = classmethod(of)
            observe.Raised._hostile3 = True
        _Forged.pending = documented
        raise RuntimeError("not the documented error") from None
    python_launch(**kwargs)
