"""Generators for ``req_to_token`` (the KV-slot table) and the SWA LUT, as case files name them.

Table specs (``max_reqs`` rows x ``max_seq_len`` columns, int32):

* ``{"generator": "linear", "max_reqs": R, "max_seq_len": S}``: ``[row, pos] = row * S + pos``, the
  table of upstream's tests (spec section 7)
* ``{"generator": "permuted", "max_reqs": R, "max_seq_len": S, "seed": s, "prng": "splitmix64"}``:
  the linear values shuffled: flat element i is ``permutation(s, R*S)[i]`` (see
  :func:`conformance.corpus.arrays.permutation`)
* ``{"generator": "explicit", "values": [[...], ...]}``

LUT specs (int64, 1-D):

* ``{"generator": "identity", "len": n}``: ``[i] = i``
* ``{"generator": "shift", "len": n, "shift": k}``: ``[i] = i + k``
* ``{"generator": "permutation", "len": n, "seed": s, "prng": "splitmix64"}``
* ``{"generator": "explicit", "values": [...]}``

Any of them may add ``"set": [[row, pos, value], ...]`` (table) or ``[[index, value], ...]`` (LUT):
single elements overwritten after generation, e.g. a negative slot.
"""

from __future__ import annotations

import numpy as np
import torch

from conformance.corpus.arrays import ArraySpecError, permutation
from conformance.corpus.limits import MAX_LUT_LEN, MAX_TABLE_ELEMENTS

DEFAULT_TABLE = {"generator": "linear", "max_reqs": 1, "max_seq_len": 1}
"""The table of a case whose inputs name none (cases/<subject>/README.md, *Inputs*)."""


def table_shape(spec: dict) -> tuple[int, int]:
    """(max_reqs, max_seq_len) of a table spec, without building it."""
    if spec["generator"] == "explicit":
        values = spec["values"]
        return len(values), (len(values[0]) if values else 0)
    return int(spec["max_reqs"]), int(spec["max_seq_len"])


def lut_len(spec: dict) -> int:
    """Length of a LUT spec, without building it."""
    return len(spec["values"]) if spec["generator"] == "explicit" else int(spec["len"])


def build_table(spec: dict, device: torch.device) -> torch.Tensor:
    """The int32 [max_reqs, max_seq_len] contiguous table ``spec`` describes, on ``device``.

    Raises:
        ArraySpecError: unknown generator, negative sizes, or more than MAX_TABLE_ELEMENTS.
    """
    rows, cols = table_shape(spec)
    if rows < 0 or cols < 0 or rows * cols > MAX_TABLE_ELEMENTS:
        raise ArraySpecError(f"table {rows} x {cols} is outside [0, {MAX_TABLE_ELEMENTS}] elements")
    kind = spec["generator"]
    if kind == "linear":
        table = torch.arange(rows * cols, dtype=torch.int32, device=device).view(rows, cols)
    elif kind == "permuted":
        flat = permutation(spec["seed"], rows * cols).astype(np.int32)
        table = torch.from_numpy(flat).view(rows, cols).to(device)
    elif kind == "explicit":
        table = torch.tensor(spec["values"], dtype=torch.int32, device=device).view(rows, cols)
    else:
        raise ArraySpecError(f"unknown table generator {kind!r}")
    for row, pos, value in spec.get("set", ()):
        table[row, pos] = value
    return table.contiguous()


def build_lut(spec: dict | None, device: torch.device) -> torch.Tensor | None:
    """The int64 1-D LUT ``spec`` describes on ``device``, or None for a null spec.

    Raises:
        ArraySpecError: unknown generator, negative length, or longer than MAX_LUT_LEN.
    """
    if spec is None:
        return None
    n = lut_len(spec)
    if n < 0 or n > MAX_LUT_LEN:
        raise ArraySpecError(f"LUT length {n} is outside [0, {MAX_LUT_LEN}]")
    kind = spec["generator"]
    if kind == "identity":
        lut = torch.arange(n, dtype=torch.int64, device=device)
    elif kind == "shift":
        lut = torch.arange(n, dtype=torch.int64, device=device) + int(spec["shift"])
    elif kind == "permutation":
        lut = torch.from_numpy(permutation(spec["seed"], n)).to(device)
    elif kind == "explicit":
        lut = torch.tensor(spec["values"], dtype=torch.int64, device=device).view(n)
    else:
        raise ArraySpecError(f"unknown LUT generator {kind!r}")
    for index, value in spec.get("set", ()):
        lut[index] = value
    return lut
