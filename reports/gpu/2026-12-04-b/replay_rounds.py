"""What the scripts of this folder share: a CUDA graph of one call, every graph replayed in turn
(rounds of replays behind a sleep kernel: no order effect between rows), and candidates checked
byte for byte against the current Numba planner before and after their replays."""
import torch

from impls.offsets_planner.harness.sweeps import one_pass, one_pass_calls as c


def floors_and_current():
    """The rows every comparison starts with: the Triton and Numba chain floors at their usual
    shapes (raw-pointer Numba), then both current planners."""
    return [("triton", "floor 32w1", c._triton_chain(32, 1)),
            ("triton", "floor 64w2", c._triton_chain(64, 2)),
            ("numba-cuda", "floor 32 pointers", c._numba_chain(32, "pointers")),
            ("numba-cuda", "floor 64 pointers", c._numba_chain(64, "pointers")),
            ("triton", "current", c.current("triton")[2]),
            ("numba-cuda", "current", c.current("numba-cuda")[2])]


def graph_of(call):
    """A CUDA graph of one ``call()`` (warmed up on a side stream first)."""
    call()
    torch.cuda.synchronize()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            call()
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        call()
    torch.cuda.synchronize()
    return g


def interleaved(graphs, rounds: int = 9, replays: int = 200) -> list[list[float]]:
    """Per graph, its ``rounds`` samples (us per replay, sorted): each round replays every graph
    in turn, ``replays`` times behind a sleep kernel, timed by CUDA events."""
    res = [[] for _ in graphs]
    for _ in range(rounds):
        for i, g in enumerate(graphs):
            for _ in range(10):
                g.replay()
            torch.cuda.synchronize()
            torch.cuda._sleep(int(replays * 20e-6 * 2e9))
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            for _ in range(replays):
                g.replay()
            e.record()
            e.synchronize()
            res[i].append(s.elapsed_time(e) * 1e3 / replays)
    return [sorted(x) for x in res]


def run(rows_by_bs: dict, dev, medians: dict | None = None) -> int:
    """Check every candidate row (a label without "floor" and not "current...") against the
    current Numba planner on the serving workload and two out-of-contract draws, replay every
    row in turn, print medians and the check after the replays; the number of candidate rows
    that differ, before or after their replays. ``medians``: filled with ``(bs, framework,
    label) -> median us`` of every row, for a caller's decision (no printed line is parsed)."""
    graphs, bad = [], 0
    for bs, rows in rows_by_bs.items():
        kw = one_pass.workload(bs, dev)
        cur = c.current("numba-cuda")[2]
        checks = [(kw, one_pass.outputs_of(cur, kw))]
        for seed in (1, 2):
            hk = c.hazard_kwargs(bs, seed, dev)
            checks.append((hk, one_pass.outputs_of(cur, hk)))
        for fw, label, make in rows:
            check = "-"
            if "floor" not in label and not label.startswith("current"):
                diffs = [one_pass.difference(one_pass.outputs_of(make, k), want)
                         for k, want in checks]
                check = next((d for d in diffs if d), "same")
                bad += check != "same"
            out = one_pass._copy(kw)
            graphs.append((bs, fw, label, check, graph_of(make(out)), out, checks[0][1]))
    samples = interleaved([g[4] for g in graphs])
    for (bs, fw, label, check, _g, out, want), xs in zip(graphs, samples):
        after = "-" if check == "-" else (one_pass.difference(
            {n: out[n].cpu() for n in want}, want) or "same")
        bad += check == "same" and after != "same"  # right at first, wrong after its replays
        if medians is not None:
            medians[(bs, fw, label)] = xs[len(xs) // 2]
        print(f"{bs:5d} {fw:11s} {label:30s} median {xs[len(xs) // 2]:.2f} min {xs[0]:.2f} "
              f"max {xs[-1]:.2f}  check {check[:60]} after replays {after[:60]}")
    return bad
