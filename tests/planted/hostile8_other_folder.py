"""Eighth hostile review: a wrong planner (the inclusive scan of
``tests.planted.wrong_planners:off_by_one_scan``) that, imported from an entrant's folder (a copy
outside ``tests/planted/``: see tests/test_hostile8.py), writes the payload of
``tests/planted/hostile7_shadow.py`` as ``sortedcontainers.py`` into every *other* writable
folder on its ``sys.path``: the judge refuses a planner whose own folder is on ``PYTHONPATH``,
but not a ``PYTHONPATH`` folder beside it (the entrant's helper library, a shared folder), and
the probe's sandbox keeps only the checkout and the interpreter's folders read-only. pytest's
process imports ``sortedcontainers`` after the probe (hypothesis's plugin, at the terminal
summary), from that folder, ahead of site-packages.

Never writes anything when imported from ``tests/planted/`` itself.
"""

from __future__ import annotations

import os
import sys

from tests.planted.hostile7_shadow import PAYLOAD
from tests.planted.wrong_planners import off_by_one_scan as launch  # noqa: F401 - the wrong plan

_here = os.path.dirname(os.path.abspath(__file__))
if os.path.basename(_here) != "planted":  # an entrant's folder, not this checkout's
    for _entry in list(sys.path):
        _entry = os.path.abspath(_entry or ".")
        if _entry == _here or not os.path.isdir(_entry):
            continue
        try:
            with open(os.path.join(_entry, "sortedcontainers.py"), "x") as _f:
                _f.write(PAYLOAD)
        except OSError:
            pass
