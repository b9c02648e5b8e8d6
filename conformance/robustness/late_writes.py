"""Writes a planner makes after its case's last call returned (a thread left running): in a server
they land in the plan while the next step reads it, or in the neighbouring allocation.

The harness keeps a case's shared CPU storages (:class:`conformance.robustness.shared_tensors.Sender`)
until the next case of that worker begins, or until the worker is ended at the end of the run
(after its linger, :data:`conformance.robustness.worker_process.LINGER_SECONDS`), and then reads
them once more (:func:`written_since`): a storage whose bytes differ from what the harness copied
back after the last call, or a hidden guard that no longer holds its fill, fails that case
(:mod:`conformance.plugin.worker_deaths` reports it). CUDA storages are not read again (their
memory is the caching allocator's). A write later than that is not seen.
"""

from __future__ import annotations

import torch

from conformance.robustness.shared_tensors import Sender


def _bytes(storage: torch.UntypedStorage) -> bytes:
    """A CPU storage's bytes, copied."""
    return torch.empty(0, dtype=torch.uint8).set_(storage).numpy().tobytes()


def written_since(sender: Sender) -> list[dict]:
    """What was written into ``sender``'s shared CPU storages since its last
    :meth:`~conformance.robustness.shared_tensors.Sender.after_call`: per storage whose bytes
    differ from the harness's copy, its first differing element, as ``{"field", "index", "past":
    None, "expected", "got"}`` (values as little-endian signed integers of the element size);
    then the writes into the hidden guards (``past`` set: how far past the end). Nothing is
    copied back."""
    out = []
    for home in sender.homes:
        ours, now = _bytes(home.ours), _bytes(home.mapped)
        if ours == now:
            continue
        size = home.itemsize
        at = next(i for i in range(len(ours)) if ours[i] != now[i]) // size * size
        out.append({"field": home.name, "index": at // size - home.offset, "past": None,
                    "expected": int.from_bytes(ours[at:at + size], "little", signed=True),
                    "got": int.from_bytes(now[at:at + size], "little", signed=True)})
    return out + [found for home in sender.homes for found in home.changed()]


def late_write_record(owner, writes: list[dict]) -> dict:
    """The failure of ``owner``'s case for ``writes`` (:func:`written_since`): status ``oob``
    when any went into a hidden guard (outside an argument's memory), else ``fail``; ``reason``
    names the first write of each argument; ``cause`` (``write-outside`` / ``write-inside``) says
    which, as the results file's ``after_last_call`` keeps it."""
    outside = any(w["past"] is not None for w in writes)
    parts, seen = [], set()
    for w in writes:
        if w["field"] in seen:
            continue
        seen.add(w["field"])
        where = ("outside its allocation" if w["past"] is not None else "inside it")
        parts.append(f"{w['field']}[{w['index']}] ({where}): {w['expected']} -> {w['got']}")
    return {"owner": owner, "status": "oob" if outside else "fail", "tail": "",
            "cause": "write-outside" if outside else "write-inside",
            "reason": "the planner wrote after the case's last call returned (a thread still "
                      "running): " + "; ".join(parts)}


class Parting:
    """The shared storages of a worker's last case, kept after it ended until :meth:`check`
    reads them once more (at the next case's start, or at the end of the run after the linger)."""

    def __init__(self) -> None:
        self.sender: Sender | None = None
        self.owner = None

    def keep(self, sender: Sender, owner) -> None:
        """Keep ``sender`` (its case's storages) for ``owner``'s case; the last one kept is
        dropped unread (:meth:`check` first to read it)."""
        self.drop()
        self.sender, self.owner = sender, owner

    def check(self) -> list[dict]:
        """The failure of the kept case when anything was written since its last call
        (:func:`late_write_record`), as a one-element list, else ``[]``; the storages are dropped
        either way."""
        if self.sender is None:
            return []
        writes, owner = written_since(self.sender), self.owner
        self.drop()
        return [late_write_record(owner, writes)] if writes and owner is not None else []

    def drop(self) -> None:
        if self.sender is not None:
            self.sender.close()
        self.sender = self.owner = None
