"""The child process of ``upstream-entries``: import a laid-out release's launcher (the subject's
``UPSTREAM_ENTRY``, :mod:`conformance.upstream.entry_subject`), report the toolchain sglang's JIT
build resolves, build the kernel's variants (``BUILD_VARIANTS``), judge it on the subject's cases.

Run by :mod:`conformance.upstream.entries_command` with the release's ``site/`` first on
PYTHONPATH (``python -m conformance.upstream.entries_child --subject NAME --tree DIR --json
PATH``), so that a crash, a device trap or a hang costs this process, never the report. The JSON
file is rewritten after every step: a killed child still leaves the steps it finished.

Steps, in order: ``toolchain`` (found without sglang: PATH's nvcc, c++ and ninja with their
versions, the distributions apache-tvm-ffi, msgspec and ninja, torch, the GPU), ``import`` (the
launcher's module and sglang's JIT utils, each loaded file re-hashed against the tree's RECORD
SHA-256), ``sglang toolchain`` (what sglang's own resolvers return: ``cuda_home``, the device and
host compilers, tvm-ffi's include and library paths, the target from ``get_jit_cuda_arch``),
``build`` (``JIT_LOADER(*variant)``, for the four variants ``(has_swa_lut, has_pool)``, each
``ok`` or the exception's type and full text), ``compile-for`` (optional, needs no GPU: the same builds
under sglang's ``override_jit_cuda_arch``; compiled and loaded, never launched, judging nothing)
and ``judge`` (only when every variant built for a CUDA device here).
"""

from __future__ import annotations

import argparse
import importlib
import json
import logging
import os
import platform
import shutil
import subprocess
import sys
import time
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

class _Collect(logging.Handler):
    def __init__(self):
        super().__init__(logging.WARNING)
        self.lines: list[str] = []

    def emit(self, record):
        self.lines.append(f"{record.name}: {record.getMessage()}")


def _run(command: list[str]) -> str:
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"could not run: {type(exc).__name__}: {exc}"
    text = (done.stdout + done.stderr).strip()
    return text if done.returncode == 0 else f"exit {done.returncode}: {text}"


def _dist(name: str) -> str:
    try:
        return version(name)
    except PackageNotFoundError:
        return "not installed"


def _probe(fn):
    try:
        return fn()
    except Exception as exc:  # noqa: BLE001 - a failing resolver is a finding
        return f"error: {type(exc).__name__}: {exc}"


def basic_toolchain() -> dict:
    """What is on this machine, found without sglang: PATH's tools, the distributions, the GPU."""
    import torch
    info = {"python": platform.python_version(), "torch": torch.__version__,
            "torch.version.cuda": torch.version.cuda, "cuda_available": torch.cuda.is_available(),
            "env CUDA_HOME": os.environ.get("CUDA_HOME"), "env CUDA_PATH": os.environ.get("CUDA_PATH"),
            "env CXX": os.environ.get("CXX"), "which nvcc": shutil.which("nvcc"),
            "which c++": shutil.which("c++"), "which ninja": shutil.which("ninja")}
    if torch.cuda.is_available():
        props = torch.cuda.get_device_properties(0)
        info["gpu"] = f"{props.name}, sm_{props.major}{props.minor}, {props.multi_processor_count} SMs"
    else:
        info["gpu"] = "none (torch.cuda.is_available() is False)"
    nvcc = info["which nvcc"]
    info["nvcc --version"] = _run([nvcc, "--version"]).splitlines()[-2:] if nvcc else "no nvcc on PATH"
    info["c++ --version"] = _run(["c++", "--version"]).splitlines()[:1]
    info["ninja --version"] = _run(["ninja", "--version"]) if info["which ninja"] else "no ninja on PATH"
    for dist in ("apache-tvm-ffi", "msgspec", "ninja"):
        info[f"dist {dist}"] = _dist(dist)
    return info


def sglang_toolchain() -> dict:
    """What sglang's own resolvers pick (``toolchain.py``, ``arch.py``): the build's real inputs."""
    from sglang.kernels.jit.utils import arch
    from sglang.kernels.jit.utils.compile import toolchain
    info = {"sglang cuda_home()": _probe(toolchain.cuda_home),
            "sglang device compiler": _probe(toolchain.device_compiler_path),
            "sglang host compiler": _probe(toolchain.host_compiler_path),
            "sglang tvm_ffi_paths()": _probe(lambda: [list(p) if isinstance(p, tuple) else p
                                                      for p in toolchain.tvm_ffi_paths()]),
            "sglang JIT target": _probe(lambda: arch.get_jit_cuda_arch().target_name)}
    nvcc = info["sglang device compiler"]
    info["sglang's nvcc --version"] = (_run([nvcc, "--version"]).splitlines()[-2:]
                                       if not nvcc.startswith("error") else nvcc)
    return info


def loaded_files(tree, facts) -> dict[str, str]:
    """Every module now imported from the tree's ``site/``, whatever its name, and every
    ``sglang`` module wherever it came from: ``wheel bytes`` (matches RECORD), ``ours`` (a
    synthetic parent package or the stand-in, holding exactly what the layout wrote), ``DIFFERS``
    (a wheel file or one of ours changed since), ``not in the layout: PATH`` (a file under
    ``site/`` the layout did not write: planted there) or ``outside the tree: PATH``. ``facts``
    is the subject's upstream tree the tree was laid out by (its ``STAND_IN_SOURCE``)."""
    from conformance.upstream.entries_tree import EMPTY_INIT
    from conformance.upstream.release_tree import _path
    from conformance.upstream.wheel import file_sha256

    site = Path(tree.site).resolve()
    ours = {f"{p.replace('.', '/')}/__init__.py": EMPTY_INIT for p in tree.synthetic_packages}
    ours.update({_path(m): facts.STAND_IN_SOURCE for m in tree.stand_ins})
    out = {}
    for name, module in sorted(sys.modules.items()):
        path = getattr(module, "__file__", None)
        if not isinstance(path, str):
            continue
        try:
            rel = Path(path).resolve().relative_to(site).as_posix()
        except ValueError:
            if name.split(".")[0] == "sglang":
                out[name] = f"outside the tree: {path}"
            continue
        if rel in tree.files:
            out[name] = "wheel bytes" if file_sha256(Path(path)) == tree.files[rel] else "DIFFERS"
        elif rel in ours:
            out[name] = "ours" if Path(path).read_text(encoding="utf-8") == ours[rel] else "DIFFERS"
        else:
            out[name] = f"not in the layout: {rel}"
    return out


def not_wheel_bytes(loaded: dict[str, str]) -> list[str]:
    """The modules of :func:`loaded_files`' answer that are neither the wheel's bytes nor ours."""
    return [m for m, how in loaded.items() if how not in ("wheel bytes", "ours")]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m conformance.upstream.entries_child")
    parser.add_argument("--subject", default=None, help="the subject (default: the one with UPSTREAM_ENTRY)")
    parser.add_argument("--tree", type=Path, required=True)
    parser.add_argument("--json", type=Path, required=True)
    parser.add_argument("--random", type=int, default=0, help="random batches to judge")
    parser.add_argument("--case", action="append", default=[], help="judge only these case ids")
    parser.add_argument("--compile-for", default=None, metavar="MAJOR.MINOR")
    args = parser.parse_args(argv)
    from conformance.upstream.entries_tree import load_tree
    from conformance.upstream.entry_subject import entry_subject
    subject = entry_subject(args.subject)
    facts = subject.UPSTREAM_ENTRY
    tree = load_tree(args.tree)
    doc = {"steps": [], "warnings": []}
    collect = _Collect()
    logging.getLogger().addHandler(collect)

    def step(name, status, started, **detail):
        doc["steps"].append({"step": name, "status": status,
                             "seconds": round(time.monotonic() - started, 2), **detail})
        doc["warnings"] = collect.lines
        args.json.write_text(json.dumps(doc, indent=1, default=str) + "\n")

    t = time.monotonic()
    doc["toolchain"] = _probe(basic_toolchain)
    step("toolchain", "ok" if isinstance(doc["toolchain"], dict) else "failed", t)
    t = time.monotonic()
    try:
        module = importlib.import_module(tree.module)
        launcher, build = getattr(module, tree.launcher), getattr(module, facts.JIT_LOADER)
        doc["loaded"] = loaded_files(tree, facts)
    except Exception as exc:  # noqa: BLE001
        step("import", "failed", t, error=f"{type(exc).__name__}: {exc}")
        return 1
    bad = not_wheel_bytes(doc["loaded"])
    step("import", "failed" if bad else "ok", t, error=f"not the wheel's bytes: {bad}" if bad else None)
    if bad:
        return 1
    t = time.monotonic()
    found = _probe(sglang_toolchain)
    doc["toolchain"].update(found if isinstance(found, dict) else {"sglang resolvers": found})
    step("sglang toolchain", "ok" if isinstance(found, dict) else "failed", t)
    import torch
    built = True
    for lut, pool in facts.BUILD_VARIANTS:
        t = time.monotonic()
        try:
            build(lut, pool)
            step(f"build lut={lut} pool={pool}", "ok", t)
        except Exception as exc:  # noqa: BLE001
            built = False
            step(f"build lut={lut} pool={pool}", "failed", t, error=f"{type(exc).__name__}: {exc}"[-8000:])
    if args.compile_for:
        from sglang.kernels.jit.utils import override_jit_cuda_arch
        major, minor = (int(x) for x in args.compile_for.split("."))
        for lut, pool in facts.BUILD_VARIANTS:
            t = time.monotonic()
            try:
                with override_jit_cuda_arch(major, minor):
                    build.__wrapped__(lut, pool)
                step(f"compile-for {args.compile_for} lut={lut} pool={pool}", "ok", t,
                     note="compiled and loaded only (sglang's override_jit_cuda_arch); never launched")
            except Exception as exc:  # noqa: BLE001
                step(f"compile-for {args.compile_for} lut={lut} pool={pool}", "failed", t,
                     error=f"{type(exc).__name__}: {exc}"[-8000:])
    t = time.monotonic()
    if not built or not torch.cuda.is_available():
        why = "not every variant built" if not built else "no CUDA device here"
        step("judge", "skipped", t, error=why)
        return 1
    from conformance.upstream import entries_judge as judge
    cases = judge.load_cases(subject)
    chosen = [c for c in cases if c["id"] in args.case] if args.case else judge.safe_cases(cases, subject)
    doc["cases"] = []
    for case in chosen:
        doc["cases"].append(judge.judge_case(launcher, case, "cuda", subject=subject))
        step("judge", "running", t, done=len(doc["cases"]))
        doc["steps"].pop()
    if args.random:
        doc["random"] = judge.judge_random(launcher, "cuda", args.random, subject=subject)
    step("judge", "ok", t, cases=len(doc["cases"]), random=args.random)
    return 0


if __name__ == "__main__":
    sys.exit(main())
