"""Hand-made wheels laid out as sglang's releases are, for the release loader's tests
(conformance/upstream/). None of their files is sglang's: a minimal launcher with the contract's
signature, a verify module importing the JIT utils, and package ``__init__`` files that raise if
anything runs them (sglang's real ones import the server's dependencies)."""

from __future__ import annotations

import base64
import hashlib
import zipfile
from pathlib import Path

from impls.offsets_planner.contract import ARGUMENT_NAMES

PKG = "sglang/kernels/ops/kv_canary"
TRAP = "raise RuntimeError('a package __init__ of the wheel ran')\n"
LAUNCHER = "launch_plan_offsets_kernel"
"""The launcher's name in upstream's module (the one name the stand-in shares with it)."""


def launcher_source(names=ARGUMENT_NAMES, imports: str = "") -> str:
    params = "".join(f"    {n},\n" for n in names)
    return (f"import torch\n{imports}"
            f"from sglang.kernels.ops.kv_canary.verify import _assert_contiguous\n"
            f"from sglang.kernels.ops.kv_canary import consts\n\n\n"
            f"def {LAUNCHER}(\n    *,\n{params}) -> None:\n"
            f"    _assert_contiguous(prefix_lens, 'prefix_lens')\n")


def files(**overrides: str | None) -> dict[str, str]:
    """The wheel's members, path -> text; ``overrides`` replace (or, as None, remove) by key
    ``launcher``, ``verify``, ``consts``."""
    parts = {
        "launcher": (f"{PKG}/plan/offsets_kernel.py", launcher_source()),
        "verify": (f"{PKG}/verify.py",
                   "from sglang.kernels.jit.utils import cache_once\n\n\n"
                   "@cache_once\ndef _load():\n    return None\n\n\n"
                   "def _assert_contiguous(tensor, name):\n"
                   "    if not tensor.is_contiguous():\n"
                   "        raise ValueError(f'kv-canary: {name} must be contiguous')\n"),
        "consts": (f"{PKG}/consts.py", "PLAN_BS_BLOCK_SIZE = 1024\n"),
    }
    out = {"sglang/__init__.py": TRAP, f"{PKG}/__init__.py": TRAP, f"{PKG}/plan/__init__.py": TRAP,
           "sglang/kernels/jit/utils/__init__.py": TRAP}
    for key, (path, text) in parts.items():
        text = overrides.get(key, text)
        if text is not None:
            out[path] = text
    out["sglang-9.9.9.dist-info/METADATA"] = "Metadata-Version: 2.1\nName: sglang\nVersion: 9.9.9\n"
    return out


def _record_hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def make_wheel(folder: Path, members: dict[str, str], release: str = "9.9.9",
               tamper: str | None = None) -> Path:
    """Write ``sglang-RELEASE-cp311-cp311-manylinux_2_34_x86_64.whl`` with a RECORD of the members;
    ``tamper`` names a member whose bytes are changed after RECORD was written."""
    path = Path(folder) / f"sglang-{release}-cp311-cp311-manylinux_2_34_x86_64.whl"
    record = []
    with zipfile.ZipFile(path, "w") as archive:
        for name, text in members.items():
            data = text.encode()
            record.append(f"{name},{_record_hash(data)},{len(data)}")
            archive.writestr(name, data + (b"# edited\n" if name == tamper else b""))
        record.append(f"sglang-{release}.dist-info/RECORD,,")
        archive.writestr(f"sglang-{release}.dist-info/RECORD", "\n".join(record) + "\n")
    return path


ENTRIES_KERNEL = "sglang/kernels/ops/kv_canary/plan/entries_kernel.py"
JIT_FAILURE = "nvcc fatal   : Unsupported gpu architecture 'compute_00' (planted)"
"""What the hand-made JIT utils' ``load_jit`` raises: a build failure, as a machine without a GPU
gets from sglang's real one."""


def entries_files(**overrides: str | None) -> dict[str, str]:
    """A wheel laid out as 0.5.23's entries launcher and JIT package are (none of it sglang's):
    the launcher imports the JIT utils package, which imports ``sglang.srt.environ`` and, from
    ``arch``, the server's ``sglang.srt.utils.common``; ``load_jit`` raises :data:`JIT_FAILURE`.
    ``overrides`` replace (or, as None, remove) members by path."""
    jit = "sglang/kernels/jit"
    out = {
        "sglang/__init__.py": TRAP, "sglang/kernels/__init__.py": TRAP, f"{PKG}/__init__.py": TRAP,
        f"{PKG}/plan/__init__.py": TRAP, "sglang/srt/utils/__init__.py": TRAP,
        "sglang/srt/utils/common.py": TRAP,
        ENTRIES_KERNEL: (
            "from sglang.kernels.jit.utils import cache_once, load_jit, make_cpp_args\n\n\n"
            "@cache_once\ndef _jit_plan_entries_module(has_swa_lut, has_pool):\n"
            "    return load_jit('kv_canary_plan_entries', *make_cpp_args(has_swa_lut, has_pool))\n\n\n"
            "def launch_plan_entries_kernel(**kwargs):\n"
            "    _jit_plan_entries_module(kwargs['full_to_swa_index_mapping'] is not None, False)\n"),
        f"{jit}/__init__.py": '"""The JIT home (hand-made)."""\n',
        f"{jit}/utils/__init__.py": (
            "from sglang.kernels.jit.utils.arch import target\n"
            "from sglang.kernels.jit.utils.compile import load_jit, make_cpp_args\n\n\n"
            "def cache_once(fn):\n    return fn\n"),
        f"{jit}/utils/arch.py": ("from sglang.srt.utils.common import is_cuda\n\n\n"
                                 "def target():\n    from flashinfer import sm107\n    return sm107\n"),
        f"{jit}/utils/compile/__init__.py": (
            "import sglang.srt.environ\n\n\n"
            "def make_cpp_args(*args):\n    return [str(a).lower() for a in args]\n\n\n"
            f"def load_jit(*args, **kwargs):\n    raise RuntimeError({JIT_FAILURE!r})\n"),
        f"{jit}/utils/helion_runtime.py": TRAP,
        "sglang/srt/environ.py": "import os\n\nif os.environ.get('X'):\n    import sglang.srt.debug\n",
        f"{jit}/include/sgl_kernel/utils.h": "#pragma once\n",
        f"{jit}/csrc/kv_canary/canary_plan_entries.cuh": "#include <sgl_kernel/utils.h>\n",
        f"{jit}/csrc/other/not_needed.cuh": "#error not laid out\n",
        "sglang-9.9.9.dist-info/METADATA": "Metadata-Version: 2.1\nName: sglang\nVersion: 9.9.9\n",
    }
    for path, text in overrides.items():
        if text is None:
            out.pop(path, None)
        else:
            out[path] = text
    return out


PLAN_REFERENCE = f"{PKG}/plan_ref.py"
PLAN_WRAPPER = f"{PKG}/plan/api.py"
FAITHFUL_REFERENCE = (
    "from dataclasses import fields\n\n"
    "from sglang.kernels.ops.kv_canary.verify import VerifyPlan\n"
    "from sglang.kernels.ops.kv_canary.write import WritePlan\n\n\n"
    "def launch_canary_plan_kernels_torch_reference(*, verify_plan_out, write_plan_out, **kwargs):\n"
    "    from impls.canary_plan import get_planner\n"
    "    flat = {f.name: getattr(verify_plan_out, f.name) for f in fields(VerifyPlan)}\n"
    "    flat.update({f.name: getattr(write_plan_out, f.name) for f in fields(WritePlan)})\n"
    "    get_planner('python')(**flat, **kwargs)\n")
"""A hand-made torch reference that is this project's pure-Python pipeline behind upstream's
signature: every case passes on it."""
HOSTILE_TEXT = "kv-canary: `x` | <b>bold</b>\n# heading"
"""What :data:`RAISING_REFERENCE` raises: Markdown and HTML that a report must show as text."""
RAISING_REFERENCE = (
    "from sglang.kernels.ops.kv_canary.verify import VerifyPlan  # noqa: F401\n"
    "from sglang.kernels.ops.kv_canary.write import WritePlan  # noqa: F401\n\n\n"
    "def launch_canary_plan_kernels_torch_reference(*, verify_plan_out, write_plan_out, **kwargs):\n"
    f"    raise ValueError({HOSTILE_TEXT!r})\n")


def plan_files(reference: str = FAITHFUL_REFERENCE, **overrides: str | None) -> dict[str, str]:
    """:func:`entries_files` plus a whole-plan wrapper, a torch reference (``reference``'s
    source) and the two plan records, laid out as 0.5.23's are (none of it sglang's)."""
    record = "from dataclasses import dataclass\n\n\n@dataclass(frozen=True, kw_only=True)\nclass {}:\n"
    verify = ("verify_slot_indices", "verify_expected_tokens", "verify_expected_positions",
              "verify_prev_slot_indices", "verify_num_valid", "enable")
    write = ("write_offsets", "write_seed_slot_indices", "write_num_valid_reqs")
    return entries_files(**{
        f"{PKG}/verify.py": record.format("VerifyPlan") + "".join(f"    {n}: object\n" for n in verify),
        f"{PKG}/write.py": record.format("WritePlan") + "".join(f"    {n}: object\n" for n in write),
        PLAN_REFERENCE: reference,
        PLAN_WRAPPER: (
            "def launch_canary_plan_kernels(**kwargs):\n"
            "    from sglang.kernels.ops.kv_canary.plan_ref import (\n"
            "        launch_canary_plan_kernels_torch_reference)\n"
            "    launch_canary_plan_kernels_torch_reference(**kwargs)\n"),
        **overrides})
