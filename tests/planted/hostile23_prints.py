"""A planner that writes nothing and prints a green summary line of ``python -m conformance
fuzz``'s format on its standard output and error, at import and on every call
(tests/test_hostile23.py): a script that reads fuzz's output would read it as green."""

from __future__ import annotations

import sys

FAKE = ("fuzz seed 0: 2 plans; divergences: tests.planted.hostile23_prints:launch (external) 0; "
        "1.0 s")

print(FAKE)
print(FAKE, file=sys.stderr)


def launch(**kwargs) -> None:
    """Plans nothing; prints a green summary line."""
    print(FAKE, flush=True)
    print(FAKE, file=sys.stderr, flush=True)
