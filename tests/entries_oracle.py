"""An independent oracle and case builder for the entries planner tests.

The oracle walks requests and their window positions in order and appends entries to lists (the
formulation of spec section 5's first paragraph); the planners instead map each entry index to its
request by searching the offsets. The oracle computes its own offsets too, so a test can also check
that the scratch it builds is the exclusive prefix sum the spec requires.
"""

from __future__ import annotations

import json
from pathlib import Path

import torch

POISON = -777_777
"""What every output holds before a launch: an element still POISON afterwards was not written."""
SCRATCH_GARBAGE = 1 << 40
"""What the scratch holds past [bs]: a planner that reads there plans nonsense."""
ROW_LEN = 16
CASE_FOLDER = Path(__file__).resolve().parents[1] / "cases" / "entries-planner"
"""The entries cases, JSON Lines (format: its README)."""
DTYPES = {"int32": torch.int32, "int64": torch.int64}


def linear_table(max_reqs: int = 4, max_seq_len: int = ROW_LEN) -> torch.Tensor:
    """``req_to_token[row, pos] = row * max_seq_len + pos`` (int32), spec section 9's table."""
    return torch.arange(max_reqs * max_seq_len, dtype=torch.int32).reshape(max_reqs, max_seq_len)


def linear_pool(rows: int = 4, cols: int = ROW_LEN, base: int = 1000) -> torch.Tensor:
    """``pool[row, col] = base + row * cols + col`` (int32)."""
    return (torch.arange(rows * cols, dtype=torch.int32) + base).reshape(rows, cols)


def window_positions(prefix: int, window: int) -> range:
    if window > 0:
        return range(max(0, prefix - window), max(prefix, 0))
    return range(0, max(prefix, 0))


def oracle(rpi, prefix, table, lut, pool, valid, offset, window):
    """(offsets [bs+1], {output name: list of entries}) for plain Python lists / nested lists."""
    max_reqs, max_seq_len = len(table), len(table[0]) if table else 0

    def slot(row, pos):
        if not (0 <= row < max_reqs and 0 <= pos < max_seq_len):
            return -1
        value = table[row][pos]
        if lut is None or value < 0:
            return value
        if len(lut) == 0:
            return -1
        return lut[value] if value < len(lut) else lut[-1]

    slots, tokens, positions, prevs, offsets = [], [], [], [], [0]
    for r, row in enumerate(rpi):
        if row != 0:
            for pos in window_positions(prefix[r], window):
                slots.append(slot(row, pos))
                positions.append(pos)
                prevs.append(slot(row, pos - 1) if pos >= 1 else -1)
                token = -1
                if pool is not None and valid is not None and 0 <= pos + offset < valid[r]:
                    if 0 <= row < len(pool) and pos + offset < len(pool[0]):
                        token = pool[row][pos + offset]
                tokens.append(token)
        offsets.append(len(slots))
    return offsets, {"out_verify_slot_indices": slots, "out_verify_expected_tokens": tokens,
                     "out_verify_expected_positions": positions,
                     "out_verify_prev_slot_indices": prevs}


def build(rpi, prefix, *, window=0, table=None, lut=None, pool=None, valid=None, offset=0,
          capacity=None, enable=None, scratch=None):
    """The launcher's 14 keyword arguments (CPU tensors) and the oracle's expected entries.

    Outputs are POISON-filled; the scratch is the oracle's offsets (or ``scratch``) followed by
    SCRATCH_GARBAGE; ``enable`` defaults to what the offsets planner writes (total <= capacity).
    Returns (kwargs, offsets, expected).
    """
    table = linear_table() if table is None else table
    offsets, expected = oracle(list(rpi), list(prefix), table.tolist(),
                               None if lut is None else lut.tolist(),
                               None if pool is None else pool.tolist(),
                               None if valid is None else list(valid), offset, window)
    offsets = list(scratch) if scratch is not None else offsets
    total = offsets[-1]
    capacity = total + 3 if capacity is None else capacity
    scratch_t = torch.tensor(offsets + [SCRATCH_GARBAGE] * 3, dtype=torch.int64)
    kwargs = dict(
        req_pool_indices=torch.tensor(list(rpi), dtype=torch.int64),
        prefix_lens=torch.tensor(list(prefix), dtype=torch.int64),
        req_to_token=table,
        full_to_swa_index_mapping=lut,
        verify_offsets_scratch=scratch_t,
        verify_enable=torch.tensor([int(total <= capacity) if enable is None else enable],
                                   dtype=torch.int32),
        req_to_verify_expected_tokens=pool,
        req_to_verify_expected_tokens_valid_lens=(None if valid is None else
                                                  torch.tensor(list(valid), dtype=torch.int64)),
        kv_token_id_vs_position_offset=offset,
        swa_window_size=window,
    )
    for name in expected:
        kwargs[name] = torch.full((capacity,), POISON, dtype=torch.int64)
    return kwargs, offsets, expected


def outputs(kwargs) -> dict[str, list[int]]:
    return {name: kwargs[name].tolist() for name in (
        "out_verify_slot_indices", "out_verify_expected_tokens", "out_verify_expected_positions",
        "out_verify_prev_slot_indices")}


def load_cases(folder: Path = CASE_FOLDER) -> list[dict]:
    """Every case of ``folder/*.jsonl``, one JSON object a line, files in name order."""
    return [json.loads(line) for path in sorted(Path(folder).glob("*.jsonl"))
            for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def materialise(case, device=None):
    """(kwargs, oracle offsets, oracle entries) for one case's ``inputs`` (cases README), its
    tensors on ``device`` (default CPU); the case's ``change`` is applied there."""
    spec = dict(case["inputs"])
    shape = spec.pop("table", {"rows": 4, "cols": 16})
    table = linear_table(shape["rows"], shape["cols"])
    for row, pos, value in spec.pop("table_set", []):
        table[row, pos] = value
    lut = None
    if (lut_spec := spec.pop("lut", None)) is not None:
        lut = torch.arange(lut_spec["len"], dtype=torch.int64) + lut_spec["plus"]
        for index, value in lut_spec.get("set", []):
            lut[index] = value
    pool = None
    if (pool_spec := spec.pop("pool", None)) is not None:
        pool = linear_pool(pool_spec["rows"], pool_spec["cols"], pool_spec["base"])
    change = spec.pop("change", {})
    kwargs, offsets, expected = build(
        spec.pop("req_pool_indices"), spec.pop("prefix_lens"), table=table, lut=lut, pool=pool,
        valid=spec.pop("valid_lens", None), offset=spec.pop("kv_token_id_vs_position_offset", 0),
        window=spec.pop("swa_window_size", 0), capacity=spec.pop("capacity"),
        enable=spec.pop("verify_enable", None), scratch=spec.pop("scratch", None))
    assert not spec, f"unknown input fields {sorted(spec)}"
    if device is not None:
        kwargs = {k: v.to(device) if isinstance(v, torch.Tensor) else v for k, v in kwargs.items()}
    from impls.entries_planner.subject import changed  # the cases README's `change`, written once

    for name, how in change.items():
        kwargs[name] = changed(kwargs[name], how)
    return kwargs, offsets, expected
