"""The load-time limits keep one case run within the memory cases/offsets-planner/README.md states:
a case with a permuted table of MAX_TABLE_ELEMENTS and a permutation LUT of MAX_LUT_LEN peaks under
1 GiB.

Measured in a fresh interpreter (Linux's peak RSS, VmHWM, reset through /proc/self/clear_refs just
before loading, over the RSS then: imports do not count, loading and running the case do) at 1/8
of both limits and scaled up: fixed costs make the scaled figure an over-estimate. At the full
limits it measured about 0.7 GiB (python planner, CPU)."""

from __future__ import annotations

import json
import subprocess
import sys

from conformance.corpus.limits import MAX_LUT_LEN, MAX_TABLE_ELEMENTS
from tests.subproc import REPO

SCALE = 8
PROBE = r"""
import json, sys, tempfile
from pathlib import Path
from conformance.corpus.loader import load_corpus
from conformance.engine.runner import Target, run_case, resolve_device
from impls.offsets_planner.registry import get_planner
doc = json.loads(sys.argv[1])
d = Path(tempfile.mkdtemp())
(d / "c.json").write_text(json.dumps(doc))
def status_kib(field):
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
Path("/proc/self/clear_refs").write_text("5")  # Linux: the peak (VmHWM) restarts at the RSS now
base = status_kib("VmRSS")
cases, errors = load_corpus([d])  # the load-time checks build the permutation too: counted
assert not errors, errors
run_case(cases[0], Target("python", get_planner("python"), resolve_device("cpu")))
print((status_kib("VmHWM") - base) * 1024)
"""


def test_a_case_at_the_limits_peaks_under_one_gib():
    rows = 1024
    doc = {
        "id": "at-the-limits", "description": "d", "tags": [], "golden_check": "hand: no request",
        "source": {"kind": "project", "ref": "cases/offsets-planner/README.md, Limits"},
        "inputs": {"req_to_token": {"generator": "permuted", "max_reqs": rows, "seed": 1,
                                    "max_seq_len": MAX_TABLE_ELEMENTS // SCALE // rows},
                   "lut": {"generator": "permutation", "len": MAX_LUT_LEN // SCALE, "seed": 2}},
        "expect": {"out_verify_offsets_scratch": [0], "out_write_offsets": [0],
                   "out_write_seed_slot_indices": [], "out_verify_num_valid": 0,
                   "out_verify_enable": 1, "out_write_num_valid_reqs": 0},
    }
    proc = subprocess.run([sys.executable, "-c", PROBE, json.dumps(doc)], cwd=REPO,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    peak = int(proc.stdout.split()[-1])
    data = MAX_TABLE_ELEMENTS // SCALE * 4 + MAX_LUT_LEN // SCALE * 8
    print(f"peak {peak / 2**20:.0f} MiB for {data / 2**20:.0f} MiB of table and LUT "
          f"(x{SCALE}: {peak * SCALE / 2**30:.2f} GiB)")
    assert peak > data  # the probe measured the run: the table and LUT are in it
    assert peak * SCALE < 1 << 30
