"""Small case files for the harness's own tests, written into a temporary directory."""

from __future__ import annotations

import json
from pathlib import Path

from conformance.corpus.loader import load_corpus


def case_doc(case_id: str, **changes) -> dict:
    """A valid one-step case (spec section 7's decode of row 2, prefix 7) with ``changes``."""
    doc = {
        "id": case_id, "description": "one decode", "tags": ["boundary"],
        "source": {"kind": "project", "ref": "tests"}, "golden_check": "hand",
        "inputs": {"req_to_token": {"generator": "linear", "max_reqs": 4, "max_seq_len": 16},
                   "req_pool_indices": [2], "prefix_lens": [7], "extend_seq_lens": [1]},
        "expect": {"out_verify_offsets_scratch": [0, 7], "out_write_offsets": [0, 1],
                   "out_write_seed_slot_indices": [38], "out_verify_num_valid": 7,
                   "out_verify_enable": 1, "out_write_num_valid_reqs": 1},
    }
    doc.update(changes)
    return doc


def load_files(tmp_path: Path, files: dict[str, object]):
    """Write ``files`` ({relative name: doc or raw text}) under ``tmp_path`` and load them."""
    for name, doc in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return load_corpus([tmp_path])
