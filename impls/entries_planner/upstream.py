"""Upstream's entries launcher as the harness judges it (``python -m conformance upstream-entries``,
:mod:`conformance.upstream.entries_command`): which files of a release's wheel are laid out, which
function builds the kernel, which cases run each in a process of their own, and the random
in-contract batches judged against this subject's pure-Python reference planner.

The launcher ``launch_plan_entries_kernel`` (``sglang/kernels/ops/kv_canary/plan/entries_kernel.py``,
0.5.23) JIT-builds the CUDA source ``kv_canary/canary_plan_entries.cuh`` through sglang's JIT utils
package ``sglang.kernels.jit.utils`` (``load_jit``: it writes a ``build.ninja``, runs ``ninja``, which
runs ``nvcc`` on a generated ``cuda.cu`` and the host compiler ``$CXX`` / ``c++`` to link, then loads
the ``.so`` with ``tvm_ffi.load_module``). Unlike the offsets launcher, this one needs that package
for real, so it is laid out byte for byte (RECORD-checked) with everything it imports at module level:

* Python: every ``sglang`` module the launcher reaches through unconditional module-level imports,
  inside :data:`CODE_ROOTS` (the kv_canary package, the JIT package, ``sglang/srt/environ.py``, which
  imports only the standard library). The ``__init__`` files of the JIT package
  (:data:`REAL_PACKAGE_ROOT`) are sglang's own (its public interface is one of them); every other
  parent package (``sglang``, ``sglang.kernels``, ``kv_canary``, ``plan``, ``sglang.srt``, ...) is an
  empty one of the harness's, so that sglang's top ``__init__``, the kernel registry and the server
  never run.
* Data: the JIT package's whole ``include/`` folder and ``csrc/kv_canary/`` (the CUDA sources and
  headers ``load_jit`` compiles; ``paths.py`` needs both folders to exist).
* **One stand-in**, :data:`STAND_IN_MODULE` (``sglang.srt.utils.common``, the server's 4,000-line
  utilities: orjson, psutil, PIL, starlette, ``sglang.srt.platforms``, ...), which ``arch.py`` imports
  ``is_cuda`` from at module level; ``get_cuda_version`` is imported in a function, only when
  ``nvcc --version`` cannot run. Both raise: no build step of ours stands in for upstream's.

Imports that only run in a function or under a module-level ``if`` and that fall outside the layout
(``flashinfer`` for sm_107, ``sailify``, ``sglang.utils``, the CUDA core-dump hook) are listed in the
tree's ``tree.json`` (``not_laid_out``), never stubbed.

The subject module names this module as its ``UPSTREAM_ENTRY`` (and ``UPSTREAM_TREE``); nothing
here imports the harness or sglang.
"""

from __future__ import annotations

import random

import torch

from impls.entries_planner.contract import ARGUMENT_NAMES, INPUT_NAMES, OUTPUT_NAMES
from impls.entries_planner.python_planner import launch as reference_launch

__all__ = ["TREE_NAME", "LAUNCHER", "START", "EXTRA_STARTS", "JIT_LOADER", "BUILD_VARIANTS",
           "CODE_ROOTS", "REAL_PACKAGE_ROOT", "DATA_ROOTS", "STAND_IN_MODULE", "STAND_IN_NAMES",
           "STAND_IN_NOTE", "STAND_IN_SOURCE", "HAZARD_PINS", "INPUT_NAMES", "random_batch"]

TREE_NAME = "entries"
"""The tree's default folder: ``CACHE/sglang/RELEASE-entries``."""
LAUNCHER = "launch_plan_entries_kernel"
START = "sglang/kernels/ops/kv_canary/plan/entries_kernel.py"
"""The launcher's module in the wheel (0.5.20 and later keep the KV canary under sglang/kernels/ops)."""
EXTRA_STARTS = ("sglang/kernels/ops/kv_canary/plan/api.py", "sglang/kernels/ops/kv_canary/plan_ref.py")
"""Also laid out when the wheel has them: the whole-plan wrapper ``launch_canary_plan_kernels`` and
its torch reference ``launch_canary_plan_kernels_torch_reference`` (which the wrapper calls, in a
function, on a device that is not CUDA)."""
JIT_LOADER = "_jit_plan_entries_module"
"""The launcher module's function that builds one variant: (has_swa_lut, has_pool) -> tvm-ffi Module."""
BUILD_VARIANTS = ((False, False), (True, False), (False, True), (True, True))
"""(has_swa_lut, has_verify_expected_token_pool): the launcher's four template instantiations,
each built by ``JIT_LOADER(*variant)``."""
CODE_ROOTS = ("sglang/kernels/ops/kv_canary/", "sglang/kernels/jit/", "sglang/srt/environ.py")
REAL_PACKAGE_ROOT = "sglang/kernels/jit/"
DATA_ROOTS = ("sglang/kernels/jit/include/", "sglang/kernels/jit/csrc/kv_canary/")
STAND_IN_MODULE = "sglang.srt.utils.common"
STAND_IN_NAMES = ("is_cuda", "get_cuda_version")
STAND_IN_NOTE = ("planner-conformance's stand-in for sglang.srt.utils.common (the server's utilities): "
                 "is_cuda and get_cuda_version raise; neither is called on a CUDA build whose nvcc runs")
STAND_IN_SOURCE = f'''"""Stand-in for {STAND_IN_MODULE}, written by planner-conformance; NOT sglang's code.

The real module imports the server (orjson, psutil, PIL, starlette, sglang.srt.platforms, ...).
sglang.kernels.jit.utils.arch imports is_cuda from it (used by get_activation_cuda_cflags only) and,
in a function, get_cuda_version (only when `nvcc --version` cannot run). Both raise here.
"""


def is_cuda():
    raise RuntimeError("planner-conformance stand-in for {STAND_IN_MODULE}: is_cuda is not available")


def get_cuda_version():
    raise RuntimeError("planner-conformance stand-in for {STAND_IN_MODULE}: get_cuda_version is not "
                       "available (sglang asked for it because `nvcc --version` could not run)")
'''
HAZARD_PINS = ("lut-empty", "entry-outside-table", "pool-outside", "overflow-writes-nothing")
"""Project rules whose situation upstream's kernel meets by reading outside a tensor or trapping
(``docs/spec/entries-planner.md`` section 6, "upstream CUDA kernel" column): such a case runs in a
process of its own."""
BS_CHOICES = (1, 2, 3, 5, 8, 31, 64, 127, 256, 511, 1000, 1024, 2048, 4095, 4096)


def random_batch(seed: int, poison: int):
    """An in-contract batch (spec section 5: every read inside the table, LUT and pool; the gate
    open or shut by enable 0 / T <= 0 / T > C with enable 0, never T > C with enable set).
    Returns (kwargs on the CPU, offsets, every output as the reference planner leaves it from
    ``poison``, a one-line description)."""
    from impls.entries_planner.subject import SCRATCH_GARBAGE, exclusive_offsets

    rng = random.Random(seed)
    bs = rng.choice(BS_CHOICES)
    max_reqs = bs + 1 + rng.choice((0, 3))
    max_seq_len = rng.choice((8, 16, 64, 200))
    window = rng.choice((0, 0, -3, 1, 4, 37, 5000))
    lut_len = rng.choice((0, 0, 50, 4096, 70000))  # 0 here: no LUT
    gen = torch.Generator().manual_seed(seed)
    hi = max(lut_len + lut_len // 8, 1000)
    table = torch.randint(-1, hi, (max_reqs, max_seq_len), generator=gen, dtype=torch.int32)
    lut = (torch.randint(-1, 1 << 40, (lut_len,), generator=gen, dtype=torch.int64)
           if lut_len else None)
    rpi = [0 if rng.random() < 0.15 else rng.randrange(1, max_reqs) for _ in range(bs)]
    prefix = [rng.choice((-2, 0, 1, max_seq_len)) if rng.random() < 0.2
              else rng.randint(0, max_seq_len) for _ in range(bs)]
    pool = valid = None
    offset = rng.choice((-1, 0, 1))
    if rng.random() < 0.6:
        cols = max_seq_len + 2 + rng.choice((0, 5))
        pool = torch.randint(-5, 1 << 30, (max_reqs, cols), generator=gen, dtype=torch.int32)
        valid = [rng.randint(-1, cols) for _ in range(bs)]
    gate = rng.choice(("open", "open", "open", "enable-0", "short-capacity"))
    offsets = exclusive_offsets(rpi, prefix, window)
    total = offsets[-1]
    capacity = total + rng.choice((0, 1, 3, 100))
    enable = 1
    if gate == "enable-0":
        enable = 0
    elif gate == "short-capacity" and total > 0:
        capacity, enable = total - 1, 0
    values = (torch.tensor(rpi, dtype=torch.int64), torch.tensor(prefix, dtype=torch.int64),
              table, lut,
              torch.tensor(offsets + [SCRATCH_GARBAGE] * 3, dtype=torch.int64),
              torch.tensor([enable], dtype=torch.int32), pool,
              None if valid is None else torch.tensor(valid, dtype=torch.int64),
              *(torch.full((capacity,), poison, dtype=torch.int64) for _ in OUTPUT_NAMES),
              offset, window)
    kwargs = dict(zip(ARGUMENT_NAMES, values))  # the contract's order (spec section 3)
    reference = {k: v.clone() if isinstance(v, torch.Tensor) else v for k, v in kwargs.items()}
    reference_launch(**reference)  # the readable reference, on the CPU
    expected = {name: reference[name].cpu().tolist() for name in OUTPUT_NAMES}
    what = (f"seed {seed}: bs {bs}, table {max_reqs}x{max_seq_len}, W {window}, "
            f"LUT {lut_len or 'none'}, pool {'none' if pool is None else tuple(pool.shape)}, "
            f"offset {offset}, T {total}, C {capacity}, enable {enable}")
    return kwargs, offsets, expected, what
