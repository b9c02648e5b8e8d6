"""Compile every Triton one-pass candidate config the sweep times for an H200 (sm_90) without a GPU:
``TRITON_INTERPRET=0 python -m tests.one_pass_sm90`` (Triton's bundled ptxas; no device needed).

``--all``: every config the GPU sweep launches (a minute or so), else six representative ones.
Prints one line per config, ``BLOCK TILE LOOKBACK SPLIT NPROG warps TICKET: ok`` or the compile error, and
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

from impls import triton_one_pass as top  # noqa: E402

POINTERS = ["*i64"] * 3 + ["*i32"] + ["*i64"] * 4 + ["*i32"] * 3 + ["*i64"]
CONSTEXPRS = ("BLOCK", "TILE", "HAS_LUT", "LOOKBACK", "SPLIT", "NPROG", "TICKET")
CONFIGS = [(32, 32, False, 0, 2, 1, False), (4096, 4096, False, 0, 2, 32, False),
           (4096, 4096, False, 64, 2, 16, False), (4096, 512, False, 0, 8, 8, False),
           (4096, 128, True, 0, 32, 4, True), (512, 32, True, 0, 16, 1, True),
           (4096, 128, True, 0, 32, 4, False)]


def sweep_configs() -> list[tuple]:
    """Every distinct (BLOCK, TILE, LOOKBACK, SPLIT, NPROG, warps, TICKET) the GPU sweep launches."""
    from conformance.bench.sweeps.one_pass import BATCHES
    from conformance.bench.sweeps.one_pass_calls import candidates

    out = set()
    for bs in BATCHES:
        for label, text, _make in candidates("triton", bs):
            design = label.split()[-1]
            lookback = design.startswith("lookback")
            cfg = dict(part.split() for part in text.split(", ")) if text != "default" else {}
            tile, warps, split = (int(cfg[k]) if k in cfg else None for k in ("tile", "num_warps",
                                                                             "split"))
            block, tile, warps, grid = top.config_for(design, bs, tile, warps, split or 0)
            nprog = max(2, 1 << (max(1, grid) - 1).bit_length())
            out.add((block, tile, lookback and grid > 1, split or 0, nprog, warps,
                     design == "lookback"))
    return sorted(out)


def main() -> int:
    configs = sweep_configs() if "--all" in sys.argv else CONFIGS
    kernel = top._one_pass_kernel
    names = kernel.arg_names
    signature = dict(zip(names, POINTERS + ["i64"] * 7 + ["constexpr"] * len(CONSTEXPRS)))
    failed = 0
    for block, tile, lookback, split, nprog, warps, ticket in configs:
        values = dict(zip(CONSTEXPRS, (block, tile, True, lookback, split, nprog, ticket)))
        src = ASTSource(fn=kernel, signature=signature,
                        constexprs={(names.index(n),): v for n, v in values.items()})
        label = f"{block} {tile} {lookback} {split} {nprog} {warps} {ticket}"
        try:
            compiled = triton.compile(src, target=GPUTarget("cuda", 90, 32),
                                      options={"num_warps": warps})
            print(f"{label}: ok, {len(compiled.asm['cubin'])} cubin bytes")
        except Exception as exc:  # noqa: BLE001 - printed, and the exit status says so
            failed += 1
            print(f"{label}: {type(exc).__name__}: {exc}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
