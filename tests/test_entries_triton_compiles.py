"""The Triton entries kernel compiles for an H200 (sm_90) on this CPU-only machine.

The interpreter accepts programs the compiler refuses (types, masks, constexpr branches), so the
kernel is also taken through Triton's whole compiler, down to a cubin (Triton's bundled ptxas), for
its four variants (LUT / pool present or not) and both integer widths the launcher's ints may be
given (i32 when they fit, i64 otherwise). This needs no GPU: a fresh interpreter with
``TRITON_INTERPRET=0`` and the offsets module's mode stubbed to ``gpu``. Running the cubin is the
GPU tests' job (tests/test_entries_gpu.py).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

SCRIPT = r'''
import os, sys, types
import torch
torch.cuda.is_available = lambda: True
import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
import impls.offsets_planner
fake = types.ModuleType("impls.offsets_planner.triton_planner")
fake.MODE, fake._UNAVAILABLE = "gpu", None
sys.modules["impls.offsets_planner.triton_planner"] = fake
from impls.entries_planner import triton_planner as m
kernel = m._entries_kernel
int_type = sys.argv[1]
pointers_i32 = ("table_ptr", "enable_ptr", "pool_ptr")
constexprs = ("BLOCK", "NITER", "HAS_LUT", "HAS_POOL")
signature = {n: ("constexpr" if n in constexprs else "*i32" if n in pointers_i32 else
                 "*i64" if n.endswith(("_ptr", "_out")) else int_type) for n in kernel.arg_names}
for has_lut in (False, True):
    for has_pool in (False, True):
        values = {"BLOCK": m.BLOCK, "NITER": 3, "HAS_LUT": has_lut, "HAS_POOL": has_pool}
        compiled = triton.compile(ASTSource(kernel, signature, values),
                                  target=GPUTarget("cuda", 90, 32))
        assert compiled.asm["cubin"], "no cubin"
        print("compiled", int_type, has_lut, has_pool)
'''


@pytest.mark.slow  # Triton compiles every entries-kernel variant for sm_90 on the CPU: about 9 s
@pytest.mark.parametrize("int_type", ["i32", "i64"])
def test_the_kernel_compiles_for_sm90(int_type, tmp_path):
    pytest.importorskip("triton.backends.nvidia")
    env = dict(os.environ, TRITON_INTERPRET="0", TRITON_CACHE_DIR=str(tmp_path),
               TRITON_DEFAULT_FP_FUSION="1", NUMBA_ENABLE_CUDASIM="1")
    proc = subprocess.run([sys.executable, "-c", SCRIPT, int_type], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.count(f"compiled {int_type}") == 4
