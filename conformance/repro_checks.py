"""The checks every repro script carries: :mod:`conformance.repro` copies this file's source into
each script below the case's data, so it must import torch only and nothing of the harness.

``run_repro`` builds the inputs the way conformance/engine/inputs.py does (guard zones, garbage
lanes, poison), launches every step twice, and returns the differences it found. The launcher's
argument names come in ``cfg["NAMES"]``, which :mod:`conformance.repro` writes from the contract
table (impls/<subject>/contract.py).
"""

import torch


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
                classes = {c.__name__ for c in type(raised).__mro__} if raised else set()
                if raised is None:
                    problems.append(f"{label}: expected {want['type']}: {message!r}; "
                                    f"the call returned normally")
                elif want["type"] not in classes or str(raised) != message:
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
