"""Hand-made wheels laid out as sglang's releases are, for the release loader's tests
(conformance/upstream/). None of their files is sglang's: a minimal launcher with the contract's
signature, a verify module importing the JIT utils, and package ``__init__`` files that raise if
anything runs them (sglang's real ones import the server's dependencies)."""

from __future__ import annotations

import base64
import hashlib
import zipfile
from pathlib import Path

from impls.contract import ARGUMENT_NAMES

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
