"""Benchmark of the numba-cuda planner on a CUDA GPU: ``python -m conformance.bench.sweeps.numba_sweep``.

Prints one table of ratios at bs 1, 64, 512 and 4096 (issue 4's goals), timed with
:mod:`conformance.bench.timing` (CUDA events, graph replay, medians with IQR):

* eager call: wall-clock us of one ``launch(...)`` (memoised validation + one launch), against the
  25 us goal;
* device time per plan: graph replay of ``CALLS_PER_GRAPH`` captured plans, against the replay of as
  many empty numba kernels in the same run (goal: ratio <= 1.5);
* for reference, Numba's own eager launch of an empty kernel given a device array and given a torch
  tensor, the planner through Numba's ordinary launch (cached device-array views), the eager call's
  parts (the full validator, the memoised one, the launch alone) and the replay of the kernel built
  with the shared-memory scan instead of warp shuffles, and of plans without a LUT (one dependent
  gather fewer).

``--out FILE`` also writes the table, with the machine fingerprint, as Markdown.
"""

from __future__ import annotations

import argparse
import sys

import torch

from conformance.bench import timing as gt
from conformance.fingerprint import fingerprint_text
from conformance.bench import workloads
from conformance.bench.floors import empty_numba_kernel

SIZES = (1, 64, 512, 4096)
EAGER_GOAL_US = 25.0
REPLAY_GOAL_RATIO = 1.5
CALLS_PER_GRAPH = 20
TENSORS = ("req_pool_indices", "prefix_lens", "extend_seq_lens", "req_to_token",
           "out_verify_offsets_scratch", "out_write_offsets", "out_write_seed_slot_indices",
           "out_verify_num_valid", "out_verify_enable", "out_write_num_valid_reqs")


def plan_kwargs(bs: int, seed: int = 0) -> dict:
    """A realistic SWA plan on the GPU: 2048 rows x 4096 positions, a 4M-entry LUT, W=128, one
    row in eight padding, extend 1 (:func:`conformance.bench.workloads.build`)."""
    spec = workloads.Spec(table=(2048, 4096), lut_len=1 << 22, window=128, padding_every=8,
                          seed=seed)
    return workloads.build(bs, spec, "cuda")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", help="also write the table as Markdown to this file")
    args = parser.parse_args(argv)
    if not torch.cuda.is_available():
        print("bench_numba: needs a CUDA device (none visible to torch)")
        return 2
    from numba import cuda

    from impls import numba_cuda_planner as nb
    from impls.validate import validate_launch
    from impls.validate_cache import validate_launch_cached

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
        validate_memo = gt.host_time(lambda: validate_launch_cached(**kw), sync=False)
        plan = validate_launch_cached(**kw)
        tensors = tuple(kw[n] for n in TENSORS)
        launch_only = gt.host_time(lambda: nb._launch_gpu(plan, tensors))
        replay_smem = gt.graph_replay_time(lambda: nb._launch_gpu(plan, tensors, use_shuffle=False),
                                           calls_per_graph=CALLS_PER_GRAPH)
        no_lut = dict(kw, full_to_swa_index_mapping=None, swa_window_size=0)
        replay_no_lut = gt.graph_replay_time(lambda: nb.launch(**no_lut),
                                             calls_per_graph=CALLS_PER_GRAPH)
        path, records = nb.LAUNCH_PATH, dict(nb._RECORDS)
        nb.LAUNCH_PATH, nb._RECORDS = "numba", {}
        try:
            via_numba = gt.host_time(lambda: nb.launch(**kw))
        finally:
            nb.LAUNCH_PATH, nb._RECORDS = path, records
        rows.append([
            bs, f"{eager.p50:.1f} (IQR {eager.iqr:.1f})", f"{eager.p50 / EAGER_GOAL_US:.2f}",
            f"{replay.p50:.2f}", f"{empty_replay.p50:.2f}", f"{replay.p50 / empty_replay.p50:.2f}",
            f"{empty_eager_dev.p50:.1f}", f"{empty_eager_torch.p50:.1f}", f"{via_numba.p50:.1f}",
            f"{validate_full.p50:.1f}", f"{validate_memo.p50:.1f}", f"{launch_only.p50:.1f}",
            f"{replay_smem.p50:.2f}", f"{replay_no_lut.p50:.2f}",
        ])
    headers = ["bs", "eager call us", "eager / 25 us goal",
               f"replay us/plan ({CALLS_PER_GRAPH}/graph)", "empty kernel replay us",
               "replay ratio (goal <= 1.5)", "empty eager, device array us",
               "empty eager, torch tensor us", "planner via numba launch us", "full validator us",
               "memoised validator us", "launch only us", "replay us/plan, shared-memory scan",
               "replay us/plan, no LUT"]
    from tabulate import tabulate

    table = tabulate(rows, headers=headers, tablefmt="github")
    fp = fingerprint_text()
    print(f"numba-cuda planner benchmark ({fp}; launch path {nb.LAUNCH_PATH})")
    print(table)
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(f"# numba-cuda planner benchmark\n\n{fp}\n\nLaunch path: `{nb.LAUNCH_PATH}`. "
                     "Medians of 15 batches (gpu_timing.host_time / graph_replay_time).\n\n"
                     f"{table}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
