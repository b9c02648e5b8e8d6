"""Load-time limits on what a case may ask the harness to allocate
(cases/<subject>/README.md, *Limits*).

A case over a limit is refused as one ``[load]`` fault before anything is allocated. The limits
keep the memory of one case run (the guarded copies, the pristine copy and the per-step snapshots
the runner keeps, conformance/engine) within the figures that cases/<subject>/README.md
states, measured by ``tests/test_limits.py``.
"""

from __future__ import annotations

MAX_ARRAY_LEN = 1 << 20
"""Longest array a spec may describe (requests, goldens, buffers): 8 MiB of int64."""
MAX_TABLE_ELEMENTS = 1 << 25
"""Largest table (max_reqs * max_seq_len): 64 MiB of int32; a run of a case at the limit peaks
under 1 GiB of memory (see cases/<subject>/README.md)."""
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
MAX_PERMUTED_ELEMENTS = 1 << 22
"""Largest permuted table or permutation LUT (elements): the permutation is a sort of that many
splitmix64 keys, done at load time too (to find the spec §6 rows a case reaches); about 0.5 s
on one idle core at this size."""
MAX_FILE_PERMUTED_ELEMENTS = 1 << 24
"""Permuted-table elements the load-time checks of one case file may sort, over all its cases:
a case past it is one ``[load]`` fault (split the file), so collecting one file stays within a
few seconds."""
MAX_CASE_MEMORY = 2 << 30
"""Most memory one case run may be estimated to need (:func:`case_memory`, 2 GiB); a case over
it is one ``[load]`` fault, refused before anything is allocated."""
BYTES_PER_STEP_ELEMENT = 400
"""Bytes an output-allocation element costs per step of a case (both runs): the observer's
before/after copies and the judge's expected copy as Python ints, and the load-time element
rules; measured at about 280 (tests/test_limits.py)."""
BYTES_PER_TABLE_ELEMENT = 24
"""Bytes a table element costs (int32 copies: built, guarded, pristine, snapshot; a permuted
table's sort keys and indices)."""
BYTES_PER_LUT_ELEMENT = 48
"""Bytes a LUT element costs (int64 copies, and a permutation's sort)."""


def case_memory(output_elements: int, steps: int, table_elements: int, lut_elements: int) -> int:
    """Estimated bytes of one run of a case, from its shapes and step count alone: ``steps`` times
    the output allocations' ``output_elements`` at :data:`BYTES_PER_STEP_ELEMENT`, plus the table
    and the LUT at their per-element costs. An over-estimate of the measured peak
    (tests/test_limits.py)."""
    return (steps * output_elements * BYTES_PER_STEP_ELEMENT
            + table_elements * BYTES_PER_TABLE_ELEMENT + lut_elements * BYTES_PER_LUT_ELEMENT)
