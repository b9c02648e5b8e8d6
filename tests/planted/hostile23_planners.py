"""Planners of the twenty-third hostile review (tests/test_hostile23.py), each wrong, each trying
to get a green ``python -m conformance fuzz`` another way.

* :func:`rewrites_found_cases`: writes nothing (every plan diverges) and, on every call, declares
  every found case under ``$HOSTILE23_OUT`` ``xfail`` for every planner, so that the rerun fuzz
  prints passes (a strict xfail). The variable stands in for what a real planner would do: walk
  the temporary folder (writable in the sandbox) or read fuzz's ``--out`` from ``/proc``.
* :func:`fuzz_shapes_only`: the pure-Python planner on every table whose row length is one the
  fuzzer draws or its shrinker reaches (0, 7, 3 and the powers of two up to 1024), and nothing
  on any other (a server's 4096-token rows, or 100).

tests/planted/hostile23_patches.py patches the judge at import; tests/planted/hostile23_prints.py
prints a green summary.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from impls.offsets_planner.python_planner import launch as python_launch

FUZZ_ROW_LENGTHS = frozenset({0, 3, 7} | {1 << k for k in range(11)})
"""max_seq_len values of conformance/robustness/random_plans.py's tables, halved as its
shrinker halves them."""


def rewrites_found_cases(**kwargs) -> None:
    """Plans nothing; marks every found case it can reach ``xfail``."""
    root = os.environ.get("HOSTILE23_OUT")
    if not root or not os.path.isdir(root):
        return
    for path in Path(root).glob("found-*.json"):
        try:
            doc = json.loads(path.read_text())
            if "xfail" not in doc:
                doc["xfail"] = [{"planner": "*", "reason": "a known difference"}]
                path.write_text(json.dumps(doc))
        except (OSError, ValueError):
            pass


def fuzz_shapes_only(**kwargs) -> None:
    """The reference on the fuzzer's row lengths, nothing on any other."""
    if int(kwargs["req_to_token"].shape[1]) in FUZZ_ROW_LENGTHS:
        python_launch(**kwargs)


def hangs(**kwargs) -> None:
    """Never returns."""
    import time

    time.sleep(3600)


def exits_zero(**kwargs) -> None:
    """Ends its worker with status 0 from inside the call."""
    os._exit(0)
