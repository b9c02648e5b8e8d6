"""Load-time limits on what a case may ask the harness to allocate (cases/README.md, *Limits*).

A case over a limit is refused as one ``[load]`` fault before anything is allocated. The limits
keep the memory of one case run (the guarded copies, the pristine copy and the per-step snapshots
the runner keeps, conformance/engine) within the figures that cases/README.md states, measured by
``tests/test_limits.py``.
"""

from __future__ import annotations

MAX_ARRAY_LEN = 1 << 20
"""Longest array a spec may describe (requests, goldens, buffers): 8 MiB of int64."""
MAX_TABLE_ELEMENTS = 1 << 25
"""Largest table (max_reqs * max_seq_len): 64 MiB of int32; a run of a case at the limit peaks
under 1 GiB of memory (see cases/README.md)."""
MAX_LUT_LEN = 1 << 23
"""Longest LUT: 64 MiB of int64."""
MAX_OVERRIDE_ELEMENTS = MAX_ARRAY_LEN
"""Most elements an override ``shape`` may ask for (a zero tensor of that shape)."""
MAX_CASE_FILE_BYTES = 1 << 27
"""Largest case file the loader reads (128 MiB: a few arrays at :data:`MAX_ARRAY_LEN` written out
as JSON integers); a bigger one, or anything that is not a regular file (a FIFO, ``/dev/zero``
behind a symlink), is one ``[load]`` fault and is never read."""
MAX_KEPT_MESSAGE = 8192
"""Characters of one message (a failure report, a planner's exception text, a skip or xfail
reason) kept in the results file and printed on the terminal and in reports; a longer one is cut
and ends ``... [truncated, N characters in all]`` (conformance/corpus/text.py)."""
