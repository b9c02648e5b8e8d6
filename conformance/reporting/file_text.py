"""A results or bench file's text, whether written by the harness or stored gzipped as committed
GPU evidence under ``reports/gpu/`` (a name ending in ``.gz``)."""

from __future__ import annotations

import gzip
import zlib
from pathlib import Path

__all__ = ["read_file_text"]


def read_file_text(path: Path | str) -> str:
    """The UTF-8 text of ``path``, gunzipped first when its name ends in ``.gz``.

    Raises:
        OSError: missing, a folder, unreadable, or a ``.gz`` file that is not gzip or is cut short
            (the message says which).
        UnicodeDecodeError: the (gunzipped) bytes are not UTF-8.
    """
    path = Path(path)
    if path.suffix != ".gz":
        return path.read_text(encoding="utf-8")
    try:
        data = gzip.decompress(path.read_bytes())
    except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
        raise OSError(f"not a whole gzip file ({exc})") from exc
    return data.decode("utf-8")
