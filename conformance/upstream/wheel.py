"""A release's wheel: fetched once with pip into the user's cache, its RECORD read, its files checked.

sglang's wheels are CPython 3.11 manylinux builds (``sglang-0.5.23-cp311-cp311-manylinux_2_34_x86_64
.whl``), so they are fetched with pip's cross-platform options on any Python:
``pip download --no-deps --only-binary=:all: --python-version 3.11 --platform ...``. Nothing is
installed. A wheel's RECORD (PEP 376 / PEP 427) lists ``path,sha256=<urlsafe base64>,size`` for
every file it holds; :func:`member_bytes` returns a file's bytes only when they match it.

Errors: :class:`FetchError` (pip could not get the wheel: no network, no such release) and
:class:`RecordError` (a file missing from RECORD, or bytes that do not match it).
"""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import os
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path

DISTRIBUTION = "sglang"
"""The distribution whose releases are judged (PyPI name)."""
PYTHON_VERSION = "3.11"
"""The only CPython its wheels are built for."""
PLATFORMS = ("manylinux_2_34_x86_64", "manylinux_2_28_x86_64")
"""Platform tags pip may pick (0.5.15 to 0.5.23 ship manylinux_2_34 only)."""


class FetchError(RuntimeError):
    """pip could not download the release's wheel (its last lines are the message)."""


class RecordError(RuntimeError):
    """A wheel file that RECORD does not list, or whose bytes do not match RECORD's SHA-256."""


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def record_hex(entry: str) -> str:
    """RECORD's ``sha256=<urlsafe base64, no padding>`` as hex. Raises RecordError on another
    algorithm."""
    algorithm, _, value = entry.partition("=")
    if algorithm != "sha256" or not value:
        raise RecordError(f"RECORD entry {entry!r} is not a sha256 hash")
    return base64.urlsafe_b64decode(value + "=" * (-len(value) % 4)).hex()


@dataclass(frozen=True)
class Wheel:
    """One wheel file on disk: its path, SHA-256 (hex), release and RECORD (path -> hex SHA-256)."""

    path: Path
    sha256: str
    release: str
    record: dict[str, str]

    def member_bytes(self, name: str) -> bytes:
        """The bytes of wheel member ``name`` (``sglang/.../offsets_kernel.py``), checked against
        RECORD. Raises RecordError when RECORD lacks it or the bytes differ, KeyError when the
        wheel has no such file."""
        if name not in self.record:
            raise RecordError(f"{self.path.name}: {name} is not listed in RECORD")
        with zipfile.ZipFile(self.path) as archive:
            data = archive.read(name)
        if sha256_hex(data) != self.record[name]:
            raise RecordError(f"{self.path.name}: {name} does not match its RECORD SHA-256")
        return data

    def names(self) -> list[str]:
        with zipfile.ZipFile(self.path) as archive:
            return archive.namelist()


def open_wheel(path: Path) -> Wheel:
    """Read a wheel's name, SHA-256 and RECORD. Raises RecordError when it has no RECORD."""
    path = Path(path)
    parts = path.name.split("-")
    if len(parts) < 5 or not path.name.endswith(".whl"):
        raise RecordError(f"{path.name} is not a wheel file name (name-version-python-abi-platform.whl)")
    release = parts[1]
    with zipfile.ZipFile(path) as archive:
        records = [n for n in archive.namelist() if n.endswith(".dist-info/RECORD")]
        if len(records) != 1:
            raise RecordError(f"{path.name}: expected one .dist-info/RECORD, found {len(records)}")
        text = archive.read(records[0]).decode("utf-8")
    record = {}
    for row in csv.reader(io.StringIO(text)):
        if len(row) >= 2 and row[1]:
            record[row[0]] = record_hex(row[1])
    return Wheel(path, file_sha256(path), release, record)


def cached_wheel(release: str, folder: Path) -> Path | None:
    """A wheel of ``release`` already in ``folder``, or None."""
    found = sorted(Path(folder).glob(f"{DISTRIBUTION}-{release}-*.whl"))
    return found[0] if found else None


def pip_download_command(release: str, folder: Path) -> list[str]:
    """The pip command that fetches ``release``'s wheel into ``folder`` (no dependencies, no build)."""
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
               "--python-version", PYTHON_VERSION, "--disable-pip-version-check", "-q",
               "-d", str(folder)]
    for platform in PLATFORMS:
        command += ["--platform", platform]
    return command + [f"{DISTRIBUTION}=={release}"]


def fetch_wheel(release: str, folder: Path, timeout: float = 600) -> Path:
    """The wheel of ``release`` in ``folder``, downloaded with pip unless already there.

    Raises:
        FetchError: pip failed (the index unreachable, no such release, no matching wheel).
    """
    folder = Path(folder)
    found = cached_wheel(release, folder)
    if found is not None:
        return found
    folder.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PIP_NO_INPUT": "1"}
    try:
        done = subprocess.run(pip_download_command(release, folder), capture_output=True,
                              text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired as exc:
        raise FetchError(f"pip download {DISTRIBUTION}=={release}: no answer in {timeout:.0f} s") from exc
    found = cached_wheel(release, folder)
    if done.returncode != 0 or found is None:
        lines = [ln for ln in (done.stderr + done.stdout).splitlines()
                 if ln.strip() and not ln.startswith("WARNING: Location")]
        raise FetchError(f"pip download {DISTRIBUTION}=={release} failed: "
                         + " | ".join(lines[-3:])[-600:])
    return found
