"""Repro of conformance case width-int64-min-prefix-small-window on sglang.kernels.ops.kv_canary.plan.offsets_kernel:launch_plan_offsets_kernel.

W = 3 with prefix -2^63: verify 0 (prefix - W overflows to a huge positive if computed that way).
Breaks spec section 5 (upstream bug): window_start = max(prefix - W, 0) is defined in exact integers; upstream's kernel computes prefix - W in int64, which overflows for a negative prefix, so verify_len and the verify offsets are wrong. Judged on sglang 0.5.23 (the published wheel, unchanged): get it with `python -m conformance upstream 0.5.23` (fetches the wheel into ~/.cache/planner-conformance and lays the launcher out), then run `PYTHONPATH=~/.cache/planner-conformance/sglang/0.5.23/site python THIS_FILE`; or `pip install sglang==0.5.23` (the whole server).
Case file: cases/semantics/value-width.json $.cases[6]; rule: project docs/spec/offsets-planner.md §3 (int64 inputs and outputs, int W and capacity), §5; adversarial review of the corpus.
Written by: python -m conformance repro width-int64-min-prefix-small-window --planner sglang.kernels.ops.kv_canary.plan.offsets_kernel:launch_plan_offsets_kernel --note 'Breaks spec section 5 (upstream bug): window_start = max(prefix - W, 0) is defined in exact integers; upstream'"'"'s kernel computes prefix - W in int64, which overflows for a negative prefix, so verify_len and the verify offsets are wrong. Judged on sglang 0.5.23 (the published wheel, unchanged): get it with `python -m conformance upstream 0.5.23` (fetches the wheel into ~/.cache/planner-conformance and lays the launcher out), then run `PYTHONPATH=~/.cache/planner-conformance/sglang/0.5.23/site python THIS_FILE`; or `pip install sglang==0.5.23` (the whole server).'
Standalone: needs torch and the planner's module only. Exit 0 and PASS when the
planner meets the case; exit 1 and every difference printed when it does not.
"""

import os
import sys

import torch

DEVICE = os.environ.get("REPRO_DEVICE") or ("cuda" if torch.cuda.is_available() else "cpu")
if DEVICE == "cpu":  # no GPU: Triton's interpreter, Numba's CUDA simulator
    os.environ.setdefault("TRITON_INTERPRET", "1")
    os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")
try:
    from sglang.kernels.ops.kv_canary.plan.offsets_kernel import launch_plan_offsets_kernel as planner  # noqa: E402
except ImportError as exc:  # no verdict: say so, and where to read how to get it
    print(f"cannot import the planner's module: {exc}; this file's docstring says "
          "how to get it", file=sys.stderr)
    sys.exit(2)

CASE = 'width-int64-min-prefix-small-window'
PLANNER = 'sglang.kernels.ops.kv_canary.plan.offsets_kernel:launch_plan_offsets_kernel'
GUARD, TAIL = 16, 64
TAIL_GARBAGE = {'req_pool_indices': 1, 'prefix_lens': 1099511627776, 'extend_seq_lens': 1099511627776}
TABLE_FILL = 1055784960  # guard zones around req_to_token
LUT_FILL = 69191923138560  # guard zones around the LUT
POISONS = [{'int64': 8825366419785908224, 'int32': 2054815744}, {'int64': -7740280384566329344, 'int32': -1802174464}]
OUTPUT_LENGTHS = {'out_verify_offsets_scratch': 4097, 'out_write_offsets': 2, 'out_write_seed_slot_indices': 1, 'out_verify_num_valid': 1, 'out_verify_enable': 1, 'out_write_num_valid_reqs': 1}
OUTPUT_DTYPES = {n: getattr(torch, d) for n, d in {'out_verify_offsets_scratch': 'int64', 'out_write_offsets': 'int64', 'out_write_seed_slot_indices': 'int64', 'out_verify_num_valid': 'int32', 'out_verify_enable': 'int32', 'out_write_num_valid_reqs': 'int32'}.items()}
NAMES = {'bs_from': 'req_pool_indices', 'table': 'req_to_token', 'lut': 'full_to_swa_index_mapping', 'scalars': ('swa_window_size', 'verify_capacity'), 'one_element': ('out_verify_num_valid', 'out_verify_enable', 'out_write_num_valid_reqs'), 'seeds': 'out_write_seed_slot_indices', 'device_reference': 'out_verify_offsets_scratch'}  # the launcher's argument names, by their part in run_repro


def make_table():
    return torch.arange(0, 64, dtype=torch.int32).reshape((4, 16))


def make_lut():
    return torch.arange(0, 64, dtype=torch.int64).reshape((64,))


STEPS = [{'requests': {'req_pool_indices': [1],
               'prefix_lens': [-9223372036854775808],
               'extend_seq_lens': [1]},
  'swa_window_size': 3,
  'verify_capacity': 1000,
  'req_to_token_set': [],
  'lut_set': [],
  'overrides': [],
  'expect': {'out_verify_offsets_scratch': [0, 0],
             'out_write_offsets': [0, 1],
             'out_write_seed_slot_indices': [-1],
             'out_verify_num_valid': 0,
             'out_verify_enable': 1,
             'out_write_num_valid_reqs': 1}}]

def guarded(tensor, fill, guard):
    """(allocation, view): ``tensor`` inside an allocation with ``guard`` elements of ``fill`` each
    side."""
    n = tensor.numel()
    storage = torch.full((n + 2 * guard,), fill, dtype=tensor.dtype, device=tensor.device)
    storage[guard:guard + n] = tensor.reshape(-1)
    return storage, storage[guard:guard + n].view(tensor.shape)


def override(kwargs, spec):
    """Apply one case override (a dtype, a strided layout, a shape, a device, a swap)."""
    if "swap" in spec:
        a, b = spec["swap"]
        kwargs[a], kwargs[b] = kwargs[b], kwargs[a]
        return
    name, t = spec["tensor"], kwargs[spec["tensor"]]
    if "dtype" in spec:
        kwargs[name] = t.to(getattr(torch, spec["dtype"]))
    elif "layout" in spec:
        shape = tuple(t.shape) or (1,)
        wide = torch.zeros(*shape[:-1], shape[-1] * 2, dtype=t.dtype, device=t.device)
        wide[..., ::2] = t.reshape(shape)
        kwargs[name] = wide[..., ::2]
    elif "shape" in spec:
        kwargs[name] = torch.zeros(spec["shape"], dtype=t.dtype, device=t.device)
    elif "device" in spec:
        kwargs[name] = t.to(spec["device"])


def where(i, guard, n, defined):
    """What allocation index ``i`` is: guard zone, defined region or untouched element."""
    k = i - guard
    if k < 0:
        return f"[{k}] (guard zone before the tensor)"
    if k >= n:
        return f"[{k}] (guard zone past the tensor, length {n})"
    return f"[{k}]" + ("" if k < defined else " (must stay untouched: spec section 5)")


def compare(name, expected, got, guard, n, defined, limit=8):
    """One line per differing element of an output allocation (at most ``limit``)."""
    lines = []
    diffs = [i for i, (e, g) in enumerate(zip(expected, got)) if e != g]
    for i in diffs[:limit]:
        lines.append(f"  {name}{where(i, guard, n, defined)}: expected {expected[i]}, "
                     f"got {got[i]}")
    if len(diffs) > limit:
        lines.append(f"  {name}: {len(diffs) - limit} more element(s) differ")
    return lines


def run_repro(planner, device, steps, make_table, make_lut, cfg):
    """Run the case; returns the list of differences (empty: the planner meets it)."""
    guard, tail, names = cfg["GUARD"], cfg["TAIL"], cfg["NAMES"]
    table_storage, table = guarded(make_table().to(device), cfg["TABLE_FILL"], guard)
    lut0 = make_lut()
    lut_storage, lut = (None, None) if lut0 is None else guarded(lut0.to(device),
                                                                  cfg["LUT_FILL"], guard)
    pristine = [(t, t.clone()) for t in (table_storage, lut_storage) if t is not None]
    most = max(len(s["requests"][names["bs_from"]]) for s in steps)
    requests = {name: torch.full((most + tail,), fill, dtype=torch.int64, device=device)
                for name, fill in cfg["TAIL_GARBAGE"].items()}
    outputs = {}
    for name, n in cfg["OUTPUT_LENGTHS"].items():
        storage = torch.empty(n + 2 * guard, dtype=cfg["OUTPUT_DTYPES"][name], device=device)
        outputs[name] = (storage, storage[guard:guard + n])
    problems = []
    for r, poison in enumerate(cfg["POISONS"]):
        for t, original in pristine:
            t.copy_(original)
        for storage, _ in outputs.values():
            base = poison["int64" if storage.dtype == torch.int64 else "int32"]
            storage.copy_(torch.arange(storage.numel(), dtype=storage.dtype) + base)
        expected = {name: s.tolist() for name, (s, _) in outputs.items()}
        for k, step in enumerate(steps):
            label = f"step {k + 1} of {len(steps)}, run {r + 1} of {len(cfg['POISONS'])}"
            for row, pos, value in step["req_to_token_set"]:
                table[row, pos] = value
            for index, value in step["lut_set"]:
                lut[index] = value
            kwargs = {}
            for name, storage in requests.items():
                values = step["requests"][name]
                storage.fill_(cfg["TAIL_GARBAGE"][name])
                storage[:len(values)] = torch.tensor(values, dtype=torch.int64)
                kwargs[name] = storage[:len(values)]
            kwargs[names["table"]], kwargs[names["lut"]] = table, lut
            kwargs.update({name: step[name] for name in names["scalars"]})
            kwargs.update({name: view for name, (_, view) in outputs.items()})
            for spec in step["overrides"]:
                override(kwargs, spec)
            inputs = [(n, t, t.clone()) for n, t in ((names["table"], table_storage),
                                                     ("the LUT", lut_storage),
                                                     *requests.items()) if t is not None]
            bs = len(step["requests"][names["bs_from"]])
            raised = None
            try:
                planner(**kwargs)
                if torch.device(device).type == "cuda":
                    torch.cuda.synchronize()
            except Exception as exc:  # compared with the expected error below
                raised = exc
            want = step["expect"].get("error")
            if want is not None:
                message = want["message"].replace("{device}", str(outputs[
                    names["device_reference"]][1].device))
                names = {c.__name__ for c in type(raised).__mro__} if raised else set()
                if raised is None:
                    problems.append(f"{label}: expected {want['type']}: {message!r}; "
                                    f"the call returned normally")
                elif want["type"] not in names or str(raised) != message:
                    problems.append(f"{label}: expected {want['type']}: {message!r}; got "
                                    f"{type(raised).__name__}: {str(raised)!r}")
            elif raised is not None:
                problems.append(f"{label}: raised {type(raised).__name__}: {raised} on a valid "
                                f"input")
            else:
                for name in cfg["OUTPUT_LENGTHS"]:
                    value = step["expect"][name]
                    values = [value] if name in names["one_element"] else value
                    expected[name][guard:guard + len(values)] = values
            for name, t, before in inputs:
                if not torch.equal(t, before):
                    problems.append(f"{label}: modified its input {name} (spec section 5)")
            lines = []
            for name, (storage, view) in outputs.items():
                defined = 0 if want is not None else 1 if name in names["one_element"] else (
                    bs if name == names["seeds"] else bs + 1)
                lines += compare(name, expected[name], storage.tolist(), guard, view.numel(),
                                 defined)
            if lines:
                problems.append(f"{label}:\n" + "\n".join(lines))
            if problems:
                return problems  # later steps build on this one
    return problems


if __name__ == "__main__":
    CONFIG = {k: globals()[k] for k in ("GUARD", "TAIL", "TAIL_GARBAGE", "TABLE_FILL", "LUT_FILL",
                                        "POISONS", "OUTPUT_LENGTHS", "OUTPUT_DTYPES",
                                        "NAMES")}
    found = run_repro(planner, DEVICE, STEPS, make_table, make_lut, CONFIG)
    for line in found:
        print(line)
    print(f"{'FAIL' if found else 'PASS'}: {CASE} on {PLANNER} ({DEVICE})")
    sys.exit(1 if found else 0)
