"""The release loader (conformance/upstream/): wheel RECORD checks, the files it loads, the
synthetic parent packages, the one stand-in, and that a published release's launcher, kernel and
validation helpers are the wheel's own bytes. The hand-made wheels are tests/planted/fake_wheels.py;
the published one is fetched with pip (skipped, with the reason, when the index cannot be reached)."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from conformance.fingerprint import upstream_release
from conformance.upstream.command import default_cache
from conformance.upstream.release_tree import ReleaseLayoutError, build_tree, verify_tree
from conformance.upstream.wheel import FetchError, RecordError, fetch_wheel, open_wheel, record_hex
from tests.planted import fake_wheels

NEWEST = "0.5.23"
"""The newest sglang release judged (reports/upstream/0.5.23/)."""

PROBE = r"""
import json, sys, inspect
name = sys.argv[1]
module_name, _, attr = name.partition(":")
import importlib
module = importlib.import_module(module_name)
launcher = getattr(module, attr)
verify = sys.modules[launcher.__globals__["_assert_contiguous"].__module__]
print(json.dumps({
    "launcher": inspect.getsourcefile(launcher),
    "validation": inspect.getsourcefile(launcher.__globals__["_assert_contiguous"]),
    "modules": {m: getattr(sys.modules[m], "__file__", None) for m in sorted(sys.modules)
                if m == "sglang" or m.startswith("sglang.")},
    "kernels": {k: inspect.getsourcefile(getattr(v, "fn", v)) for k, v in vars(module).items()
                if type(v).__name__ in ("JITFunction", "InterpretedFunction")},
}))
"""


def probe(site: Path, planner: str) -> dict:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]),
           "TRITON_INTERPRET": "1"}
    done = subprocess.run([sys.executable, "-c", PROBE, planner], env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.splitlines()[-1])


def test_record_hash_is_read_as_hex():
    # sha256(b"") in RECORD's urlsafe base64 without padding (PEP 376)
    assert record_hex("sha256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU") == \
        hashlib.sha256(b"").hexdigest()
    with pytest.raises(RecordError, match="not a sha256"):
        record_hex("md5=abc")


def test_fake_release_loads_without_any_package_init(tmp_path):
    wheel = open_wheel(fake_wheels.make_wheel(tmp_path, fake_wheels.files()))
    tree = build_tree(wheel, tmp_path / "tree")
    verify_tree(tree)
    assert tree.planner == "sglang.kernels.ops.kv_canary.plan.offsets_kernel:launch_plan_offsets_kernel"
    assert sorted(tree.files) == [f"{fake_wheels.PKG}/consts.py", f"{fake_wheels.PKG}/plan/offsets_kernel.py",
                                  f"{fake_wheels.PKG}/verify.py"]
    assert list(tree.stand_ins) == ["sglang.kernels.jit.utils"]
    seen = probe(tree.site, tree.planner)  # the wheel's __init__ files raise if they run
    assert seen["validation"].endswith(f"{fake_wheels.PKG}/verify.py")
    for path, digest in tree.files.items():
        assert hashlib.sha256((tree.site / path).read_bytes()).hexdigest() == digest
    with zipfile.ZipFile(wheel.path) as archive:
        assert (tree.site / "sglang/__init__.py").read_bytes() != archive.read("sglang/__init__.py")


def test_the_fingerprint_names_the_wheel_without_importing_the_release(tmp_path, monkeypatch):
    wheel_path = fake_wheels.make_wheel(tmp_path, fake_wheels.files())
    tree = build_tree(open_wheel(wheel_path), tmp_path / "t")
    monkeypatch.syspath_prepend(str(tree.site))
    claimed = upstream_release(tree.planner)
    assert "sglang" not in sys.modules  # found on sys.path, read as text, never run
    assert claimed["matches_record"] is True
    assert sorted(claimed["loaded"]) == sorted(tree.files)
    assert claimed["loaded"] == tree.files
    assert claimed["wheel_sha256"] == hashlib.sha256(Path(wheel_path).read_bytes()).hexdigest()
    assert list(claimed["stand_ins"]) == ["sglang.kernels.jit.utils"]
    (tree.site / fake_wheels.PKG / "consts.py").write_text("PLAN_BS_BLOCK_SIZE = 1\n")
    assert upstream_release(tree.planner)["matches_record"] is False
    assert upstream_release("impls.offsets_planner.python_planner:launch") is None


def test_a_file_that_differs_from_record_is_refused(tmp_path):
    path = fake_wheels.make_wheel(tmp_path, fake_wheels.files(),
                                  tamper=f"{fake_wheels.PKG}/verify.py")
    with pytest.raises(RecordError, match="verify.py does not match its RECORD"):
        build_tree(open_wheel(path), tmp_path / "tree")


def test_an_edit_after_layout_is_caught(tmp_path):
    tree = build_tree(open_wheel(fake_wheels.make_wheel(tmp_path, fake_wheels.files())), tmp_path / "t")
    (tree.site / fake_wheels.PKG / "consts.py").write_text("PLAN_BS_BLOCK_SIZE = 1\n")
    with pytest.raises(RecordError, match="no longer matches"):
        verify_tree(tree)


@pytest.mark.parametrize("override, message", [
    ({"launcher": None}, "has no offsets kernel"),
    ({"launcher": fake_wheels.launcher_source(names=("prefix_lens", "req_to_token"))},
     "another signature"),
    ({"launcher": fake_wheels.launcher_source(imports="from sglang.srt.utils import x\n")},
     "sglang.srt.utils"),
    ({"verify": "from sglang.kernels.jit.utils import tvm_build\n"}, "stand-in does not give"),
])
def test_a_release_that_cannot_be_loaded_says_why(tmp_path, override, message):
    path = fake_wheels.make_wheel(tmp_path, fake_wheels.files(**override))
    with pytest.raises(ReleaseLayoutError, match=message):
        build_tree(open_wheel(path), tmp_path / "tree")


@pytest.fixture(scope="module")
def newest_wheel():
    try:
        return fetch_wheel(NEWEST, default_cache() / "wheels", timeout=300)
    except FetchError as exc:
        pytest.skip(f"sglang {NEWEST}'s wheel is not cached and the package index cannot be reached: {exc}")


def _record(path: Path) -> dict[str, str]:
    with zipfile.ZipFile(path) as archive:
        name = next(n for n in archive.namelist() if n.endswith(".dist-info/RECORD"))
        rows = csv.reader(io.StringIO(archive.read(name).decode()))
        return {r[0]: r[1] for r in rows if len(r) > 1 and r[1]}


def test_published_launcher_kernel_and_helpers_are_the_wheels_bytes(newest_wheel, tmp_path):
    tree = build_tree(open_wheel(newest_wheel), tmp_path / "tree")
    seen = probe(tree.site, tree.planner)
    record = _record(newest_wheel)
    files = {"launcher": seen["launcher"], "validation": seen["validation"],
             **{f"kernel {k}": v for k, v in seen["kernels"].items()},
             **{m: f for m, f in seen["modules"].items() if f}}
    assert seen["kernels"], "the launcher's module defines no Triton kernel"
    ours = {m for m, f in seen["modules"].items() if f and (
        f.endswith("__init__.py") or m in ("sglang.kernels.jit.utils",))}
    assert "sglang.kernels.jit.utils" in ours  # the one stand-in, named
    for label, path in files.items():
        rel = os.path.relpath(path, tree.site).replace(os.sep, "/")
        if label in ours:
            assert rel not in record or rel.endswith("__init__.py"), label
            continue
        digest = hashlib.sha256(Path(path).read_bytes()).digest()
        expected = record[rel].partition("=")[2]
        assert __import__("base64").urlsafe_b64encode(digest).rstrip(b"=").decode() == expected, label
    assert "sglang.kernels.registry" not in seen["modules"]  # kv_canary/__init__ never ran


def test_matrix_gives_a_release_that_cannot_be_judged_its_column(tmp_path):
    from conformance.upstream.matrix import write_matrix
    from conformance.upstream.run_release import ReleaseRun, prepare
    wheel = fake_wheels.make_wheel(tmp_path, fake_wheels.files(launcher=None), release="0.4.0")
    runs = [prepare("0.4.0", tmp_path / "cache", wheel),
            ReleaseRun("0.3.0", problem="pip download sglang==0.3.0 failed: no matching distribution")]
    assert "has no offsets kernel" in runs[0].problem
    text = write_matrix(runs, tmp_path / "out").read_text()
    header = next(line for line in text.splitlines() if line.startswith("|") and "0.3.0" in line)
    assert header.index("0.3.0") < header.index("0.4.0")  # oldest first
    assert "no: sglang 0.4.0 has no offsets kernel" in text
    assert "no: pip download sglang==0.3.0 failed" in text
    assert "### 0.3.0 -> 0.4.0" in text and "not comparable" in text
