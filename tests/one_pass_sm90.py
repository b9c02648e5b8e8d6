"""Compile every Triton one-pass candidate config the sweep times for an H200 (sm_90) without a GPU:
``TRITON_INTERPRET=0 python -m tests.one_pass_sm90`` (Triton's bundled ptxas; no device needed).

``--all``: every config the GPU sweep launches (a minute or so), else :data:`CONFIGS` (eight
representative ones of :mod:`impls.offsets_planner.triton_one_pass_kernel`) and :data:`PACKED` (two of
:mod:`impls.offsets_planner.triton_packed_lookback`). Prints one line per config,
``BLOCK TILE LOOKBACK SPLIT NPROG warps TICKET UNROLLED: ok`` (``packed TILE NPROG warps: ok`` for
the packed kernel) or the compile error, and
exits 1 if any failed: what the interpreter cannot see (its numpy semantics accept what the
compiler refuses: a loop-carried value whose type changes, an unsupported atomic, a bad layout)
fails here, not on the lead's GPU run.
"""

from __future__ import annotations

import os
import sys

os.environ["TRITON_INTERPRET"] = "0"

import triton  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.compiler import ASTSource  # noqa: E402

from impls.offsets_planner import triton_one_pass as top  # noqa: E402
from impls.offsets_planner import triton_one_pass_kernel as topk  # noqa: E402
from impls.offsets_planner import triton_packed_lookback as tpl  # noqa: E402
from impls.offsets_planner import triton_roles, triton_roles_lookback  # noqa: E402

POINTERS = ["*i64"] * 3 + ["*i32"] + ["*i64"] * 4 + ["*i32"] * 3 + ["*i64"]
CONSTEXPRS = ("BLOCK", "TILE", "HAS_LUT", "LOOKBACK", "SPLIT", "NPROG", "TICKET", "UNROLLED")
CONFIGS = [(32, 32, False, 0, 2, 1, False, False), (4096, 4096, False, 0, 2, 32, False, False),
           (4096, 4096, False, 64, 2, 16, False, False), (4096, 512, False, 0, 8, 8, False, False),
           (4096, 128, True, 0, 32, 4, True, False), (512, 32, True, 0, 16, 1, True, False),
           (4096, 128, True, 0, 32, 4, False, False), (4096, 512, False, 0, 8, 8, False, True)]
"""``(BLOCK, TILE, LOOKBACK, SPLIT, NPROG, warps, TICKET, UNROLLED)`` of the one-pass kernel."""
PACKED = [(32, 128, 1), (128, 32, 4)]
"""``(TILE, NPROG, warps)`` of the packed look-back kernel (it runs only with 2+ programs)."""
ROLES_CONSTEXPRS = ("BLOCK", "TILE", "HAS_LUT", "SCANS", "SPLIT")
ROLES = [(32, 32, 1, 0, 1), (4096, 64, 1, 0, 8), (4096, 32, 2, 64, 16), (1024, 128, 2, 0, 4)]
"""``(BLOCK, TILE, SCANS, SPLIT, warps)`` of the ``roles`` kernel (no workspace argument)."""
ROLES_LOOKBACK_CONSTEXPRS = ("BLOCK", "STILE", "TILE", "HAS_LUT", "NPROG", "SLOW_CARRY", "JOINED",
                             "EARLY_POLL", "EPOCH_LOAD")
ROLES_LOOKBACK = [(4096, 512, 64, 8, 8, True, True, False),
                  (4096, 128, 32, 32, 4, False, False, False),
                  (1024, 256, 32, 4, 8, True, False, False),
                  (1024, 256, 32, 4, 8, False, True, False),
                  (4096, 512, 64, 8, 8, True, True, True),
                  (2048, 128, 32, 16, 8, True, True, True),
                  (1024, 128, 32, 8, 8, True, True, False),
                  (4096, 512, 64, 8, 4, True, True, False)]
"""``(BLOCK, STILE, TILE, NPROG, warps, JOINED, EARLY_POLL, EPOCH_LOAD)`` of the
``roles-lookback`` kernel (the default launch's is JOINED and EARLY_POLL; every constexpr is
passed: one left to its default would reach the compiler as None)."""


def sweep_configs() -> list[tuple]:
    """Every distinct one-pass kernel config (as :data:`CONFIGS`) the GPU sweep launches."""
    from impls.offsets_planner.harness.sweeps.one_pass import BATCHES
    from impls.offsets_planner.harness.sweeps.one_pass_calls import candidates

    out = set()
    for bs in BATCHES:
        for label, text, _make in candidates("triton", bs):
            design = label.split()[-1]
            if design in ("roles", "roles-lookback"):
                continue  # their own kernels: roles_configs, ROLES_LOOKBACK
            cfg = dict(part.split() for part in text.split(", ")) if text != "default" else {}
            tile, warps, split = (int(cfg[k]) if k in cfg else None for k in ("tile", "num_warps",
                                                                             "split"))
            block, tile, warps, grid = top.config_for(design, bs, tile, warps, split or 0)
            nprog = max(2, 1 << (max(1, grid) - 1).bit_length())
            if design == "lookback-packed" and grid > 1:
                continue  # the packed kernel: PACKED
            out.add((block, tile, design in ("lookback", "lookback-pid") and grid > 1,
                     split or 0, nprog, warps, design == "lookback", design == "blocked-unrolled"))
    return sorted(out)


def roles_configs() -> list[tuple]:
    """Every distinct ``roles`` kernel config (as :data:`ROLES`) the GPU sweep launches."""
    from impls.offsets_planner.harness.sweeps.one_pass import BATCHES
    from impls.offsets_planner.harness.sweeps.one_pass_calls import roles_candidates

    out = set()
    for bs in BATCHES:
        for _label, text, _make in roles_candidates("triton", bs):
            cfg = {k: int(v) for k, v in (part.split() for part in text.split(", "))}
            block, tile, warps, _grid = triton_roles.shape(bs, cfg["tile"], cfg["num_warps"],
                                                           cfg.get("split", 0), cfg["scans"])
            split = min(cfg.get("split", 0), block)
            out.add((block, tile, cfg["scans"], split, warps))
    return sorted(out)


def _compile(kernel, n_constexprs: int, values: dict, warps: int, pointers=POINTERS) -> str:
    names = kernel.arg_names
    signature = dict(zip(names, pointers + ["i64"] * 7 + ["constexpr"] * n_constexprs))
    src = ASTSource(fn=kernel, signature=signature,
                    constexprs={(names.index(n),): v for n, v in values.items()})
    try:
        compiled = triton.compile(src, target=GPUTarget("cuda", 90, 32),
                                  options={"num_warps": warps})
        return f"ok, {len(compiled.asm['cubin'])} cubin bytes"
    except Exception as exc:  # noqa: BLE001 - printed, and the exit status says so
        return f"{type(exc).__name__}: {exc}"


def main() -> int:
    configs = sweep_configs() if "--all" in sys.argv else CONFIGS
    results = []
    for block, tile, lookback, split, nprog, warps, ticket, unrolled in configs:
        values = dict(zip(CONSTEXPRS, (block, tile, True, lookback, split, nprog, ticket,
                                       unrolled)))
        label = f"{block} {tile} {lookback} {split} {nprog} {warps} {ticket} {unrolled}"
        results.append((label, _compile(topk._one_pass_kernel, len(CONSTEXPRS), values, warps)))
    for tile, nprog, warps in PACKED:
        values = {"TILE": tile, "HAS_LUT": True, "NPROG": nprog}
        results.append((f"packed {tile} {nprog} {warps}",
                        _compile(tpl._packed_kernel, len(values), values, warps)))
    for block, tile, scans, split, warps in roles_configs() if "--all" in sys.argv else ROLES:
        values = dict(zip(ROLES_CONSTEXPRS, (block, tile, True, scans, split)))
        results.append((f"roles {block} {tile} {scans} {split} {warps}",
                        _compile(triton_roles._roles_kernel, len(values), values, warps,
                                 POINTERS[:11])))
    for block, stile, tile, nprog, warps, joined, early, epoch in ROLES_LOOKBACK:
        values = dict(zip(ROLES_LOOKBACK_CONSTEXPRS, (block, stile, tile, True, nprog, False,
                                                      joined, early, epoch)))
        results.append((f"roles-lookback {block} {stile} {tile} {nprog} {warps} {joined} {early} "
                        f"{epoch}",
                        _compile(triton_roles_lookback._roles_lookback_kernel, len(values),
                                 values, warps)))
    for label, result in results:
        print(f"{label}: {result}")
    return 0 if all(r.startswith("ok, ") for _, r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
