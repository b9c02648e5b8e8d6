"""The socket between the harness and its isolation worker: one Unix ``SOCK_SEQPACKET`` pair,
one pickled message per packet with the file descriptors it carries (``SCM_RIGHTS``,
:func:`socket.send_fds`). What travels on it: :mod:`conformance.robustness.shared_tensors`
(descriptors of shared tensors, never tensor data).
"""

from __future__ import annotations

import os
import pickle
import socket

MAX_MESSAGE = 1 << 20
"""Bytes of one message on the socket (descriptors only: no tensor data travels)."""
MAX_FDS = 200
"""File descriptors one message may carry (SCM_RIGHTS allows 253)."""


def socket_pair() -> tuple[socket.socket, socket.socket]:
    """(harness end, worker end): a Unix ``SOCK_SEQPACKET`` pair (one message per send, its file
    descriptors with it)."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    for end in (ours, theirs):
        end.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, MAX_MESSAGE + 4096)
    return ours, theirs


def send(sock: socket.socket, message: dict, fds: list[int] = ()) -> None:
    """Send ``message`` (pickled) and ``fds`` as one packet."""
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    if len(data) > MAX_MESSAGE or len(fds) > MAX_FDS:
        raise ValueError(f"message of {len(data)} bytes and {len(fds)} fds is over the limit")
    socket.send_fds(sock, [data], list(fds))


def receive(sock: socket.socket) -> tuple[dict | None, list[int]]:
    """The next packet: (message, fds), or (None, []) when the harness closed its end."""
    data, fds, _, _ = socket.recv_fds(sock, MAX_MESSAGE, MAX_FDS)
    if not data:
        for fd in fds:
            os.close(fd)
        return None, []
    return pickle.loads(data), list(fds)
