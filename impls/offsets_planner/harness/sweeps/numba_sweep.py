"""Benchmark of the numba-cuda planner on a CUDA GPU: ``python -m impls.offsets_planner.harness.sweeps.numba_sweep``.

Prints one table of ratios at bs 1, 64, 512 and 4096, timed with :mod:`conformance.bench.timing`
(CUDA events, graph replay, medians with IQR) on :mod:`conformance.bench.workloads` batches, through
the planner's public entries only (``launch``, ``validate_arguments``, ``launch_validated``):

* eager call: wall-clock us of one ``launch(...)`` (memoised validation + one launch), against
  Numba's own eager launch of an empty kernel;
* device time per plan: graph replay of ``CALLS_PER_GRAPH`` captured plans, against the replay of as
  many empty numba kernels in the same run;
* for reference, the empty kernel given a torch tensor, the eager call's parts (the full validator,
  the memoised one, the launch alone) and the replay of plans without a LUT (one dependent gather
  fewer). The serving goals are judged by the suite (``python -m conformance bench``), not here.

``--out FILE`` also writes the table, with the machine fingerprint, as Markdown.
"""

from __future__ import annotations

import argparse
import sys

import torch

from conformance.bench import timing as gt
from conformance.fingerprint import fingerprint_text
from conformance.bench import workloads
from conformance.bench.floor_modules import empty_numba_kernel

SIZES = (1, 64, 512, 4096)
CALLS_PER_GRAPH = 20


def plan_kwargs(bs: int, seed: int = 0) -> dict:
    """A realistic SWA plan on the GPU: 2048 rows x 4096 positions, a 4M-entry LUT, W=128, one
    row in eight padding, extend 1 (:func:`conformance.bench.workloads.build`)."""
    spec = workloads.Spec(table=(2048, 4096), lut_len=1 << 22, window=128, padding_every=8,
                          seed=seed)
    return workloads.build(bs, spec, "cuda")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=f"python -m {__spec__.name if __spec__ else __name__}",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--out", help="also write the table as Markdown to this file")
    args = parser.parse_args(argv)
    if not torch.cuda.is_available():
        print("bench_numba: needs a CUDA device (none visible to torch)")
        return 2
    from numba import cuda

    from impls.offsets_planner import numba_cuda_planner as nb
    from impls.offsets_planner.contract import LUT_NAME, REQUEST_INPUT_NAMES, SWA_WINDOW_NAME
    from impls.offsets_planner.validate import validate_launch

    probe = nb.probe()
    if not probe.available or probe.mode != "gpu":
        print(f"bench_numba: numba-cuda planner not in gpu mode here: {probe}")
        return 2

    empty_kernel = empty_numba_kernel()  # the cost floor: a kernel that does nothing
    dev_array = cuda.device_array(4, dtype="int64")
    torch_array = torch.zeros(4, dtype=torch.int64, device="cuda")

    def empty_on_torch_stream():
        empty_kernel[1, 32, cuda.external_stream(torch.cuda.current_stream().cuda_stream)](dev_array)

    empty_eager_dev = gt.host_time(lambda: empty_kernel[1, 32](dev_array))
    empty_eager_torch = gt.host_time(lambda: empty_kernel[1, 32](torch_array))
    empty_replay = gt.graph_replay_time(empty_on_torch_stream, calls_per_graph=CALLS_PER_GRAPH)

    rows = []
    for bs in SIZES:
        kw = plan_kwargs(bs, seed=bs)
        eager = gt.host_time(lambda: nb.launch(**kw))
        replay = gt.graph_replay_time(lambda: nb.launch(**kw), calls_per_graph=CALLS_PER_GRAPH)
        validate_full = gt.host_time(lambda: validate_launch(**kw), sync=False)
        validate_memo = gt.host_time(lambda: nb.validate_arguments(kw), sync=False)
        validated = nb.validate_arguments(kw)
        request = [kw[n] for n in REQUEST_INPUT_NAMES]
        launch_only = gt.host_time(lambda: nb.launch_validated(validated, *request))
        no_lut = {**kw, LUT_NAME: None, SWA_WINDOW_NAME: 0}
        replay_no_lut = gt.graph_replay_time(lambda: nb.launch(**no_lut),
                                             calls_per_graph=CALLS_PER_GRAPH)
        rows.append([
            bs, f"{eager.median:.1f} (IQR {eager.iqr:.1f})",
            f"{eager.median / empty_eager_dev.median:.2f}",
            f"{replay.median:.2f}", f"{empty_replay.median:.2f}",
            f"{replay.median / empty_replay.median:.2f}", f"{empty_eager_dev.median:.1f}",
            f"{empty_eager_torch.median:.1f}", f"{validate_full.median:.1f}",
            f"{validate_memo.median:.1f}", f"{launch_only.median:.1f}",
            f"{replay_no_lut.median:.2f}",
        ])
    headers = ["bs", "eager call us", "eager / empty eager",
               f"replay us/plan ({CALLS_PER_GRAPH}/graph)", "empty kernel replay us",
               "replay / empty replay", "empty eager, device array us",
               "empty eager, torch tensor us", "full validator us",
               "validate_arguments (memo) us", "launch_validated us", "replay us/plan, no LUT"]
    from tabulate import tabulate

    table = tabulate(rows, headers=headers, tablefmt="github")
    fp = fingerprint_text()
    print(f"numba-cuda planner benchmark ({fp}; launch path {nb.packed_launch.LAUNCH_PATH})")
    print(table)
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(f"# numba-cuda planner benchmark\n\n{fp}\n\nLaunch path: `{nb.packed_launch.LAUNCH_PATH}`. "
                     "Medians of 15 batches (gpu_timing.host_time / graph_replay_time).\n\n"
                     f"{table}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
