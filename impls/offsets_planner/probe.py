"""``python -m impls.offsets_planner.probe module.path:attr``: import an external planner's module in this
process, which is nothing but that, and print one line, :data:`impls.offsets_planner.registry.PROBE_MARK` then
JSON (``available``, ``mode``, ``reason``, ``source``), for :func:`impls.offsets_planner.registry.availability`.
The harness never imports an external planner's module itself (spec section 3's launcher is the
planner's whole interface)."""

from __future__ import annotations

import json
import os
import sys
import time

from impls.offsets_planner.registry import PROBE_MARK, PROBE_READY, probe_external


USAGE = "usage: python -m impls.offsets_planner.probe module.path:attr"


def main() -> None:
    if sys.argv[1:] in (["-h"], ["--help"]):
        print(f"{USAGE}\n\n{__doc__}")
        sys.exit(0)
    if len(sys.argv) != 2:
        print(USAGE, file=sys.stderr)
        sys.exit(2)
    stdout = os.dup(1)  # the module may close or flood its stdout; the answer has its own copy
    os.write(stdout, f"{PROBE_READY}{time.monotonic()!r}\n".encode())  # its timeout starts now
    answer = probe_external(sys.argv[1])
    sys.stdout.flush()
    os.write(stdout, ("\n" + PROBE_MARK + json.dumps(answer) + "\n").encode())
    os._exit(0)  # nothing the module left (threads, atexit hooks) runs after the answer


if __name__ == "__main__":
    main()
