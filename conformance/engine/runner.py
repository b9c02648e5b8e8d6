"""Run one case on one planner and judge every output byte (issue #2, item 7).

For a launcher case, twice (poison ``a``, then fresh poison ``b``), for every step in order over the
same output buffers: build the inputs, apply overrides, launch, then require
* the expected error (type, exact message, catalog id) or none;
* every input allocation (garbage tails included) unchanged;
* every output allocation (guard zones included) equal to its expected state: the previous state
  with the golden's defined regions written, nothing else touched.
Validator and allocate cases call the shared validator / allocator instead of a planner.
A mismatch raises :class:`ConformanceFailure`, whose text names the case file, the step, the field,
the first differing index and the command that reruns just this case on this planner.
"""

from __future__ import annotations

import os
import shlex
import traceback
from dataclasses import dataclass
from pathlib import Path

import torch

from conformance.corpus.arrays import evaluate
from conformance.corpus.loader import Case, display_path
from conformance.paths import DEFAULT_CASES_DIR, RESULTS_RELPATH
from conformance.engine.diff import field_diff
from conformance.engine.inputs import (
    GUARD,
    RequestInputs,
    allocate_outputs,
    apply_overrides,
    apply_patches,
    build_tables,
    launcher_kwargs,
)
from impls.buffers import PlanBuffers
from impls.constants import OUTPUT_NAMES
from impls.errors import identify
from impls.registry import Launcher
from impls.validate import inner_args, validate_offsets_inputs, zero_lut

SCALAR_FIELDS = ("out_verify_num_valid", "out_verify_enable", "out_write_num_valid_reqs")
RUNS = ("a", "b")


class ConformanceFailure(AssertionError):
    """A planner's behaviour differs from the case; ``str()`` is the whole readable report."""


@dataclass(frozen=True)
class Target:
    """What a case runs against: a planner's name, its launcher and the device its tensors live on."""

    name: str
    launch: Launcher | None
    device: torch.device


RERUN_ENVIRONMENT = ("PYTHONPATH", "TRITON_INTERPRET", "NUMBA_ENABLE_CUDASIM")
"""Variables a rerun carries when the run had them: where an external planner's module is found,
and the Triton interpreter / Numba CUDA simulator switches."""
RUN_ENVIRONMENT = {name: os.environ[name] for name in RERUN_ENVIRONMENT if name in os.environ}
"""Those of :data:`RERUN_ENVIRONMENT` this process started with (taken when the harness is
imported, before any planner sets its own)."""
RERUN_RESULTS = RESULTS_RELPATH.parent / "rerun-{case}.json"
"""Where a rerun writes its results file, so it never replaces the full run's."""


def shell_command(argv: list[str], environment: dict[str, str] | None = None) -> str:
    """``argv`` as one line safe to paste into a POSIX shell: every word through :func:`shlex.quote`
    (``shlex.join``), prefixed by ``NAME=value`` assignments of ``environment`` (values quoted)."""
    assignments = [f"{name}={shlex.quote(value)}" for name, value in (environment or {}).items()]
    return " ".join([*assignments, shlex.join(argv)])


def rerun_command(case_id: str, planner: str, cases_dir: Path | None = None,
                  environment: dict[str, str] | None = None) -> str:
    """The one command that reruns just ``case_id`` on ``planner``, safe to paste into a shell.

    ``cases_dir`` is the directory to load the case from when it is not in the default corpus.
    The command writes its own results file (:data:`RERUN_RESULTS`), never the full run's, and
    carries ``environment`` (default :data:`RUN_ENVIRONMENT`).
    """
    argv = ["pytest", "conformance/"]
    if planner not in ("validator", "allocator"):
        argv += ["--planner", planner]
    if cases_dir is not None:
        argv += ["--cases", display_path(cases_dir)]
    argv += ["--case", case_id, "--results", str(RERUN_RESULTS).format(case=case_id)]
    return shell_command(argv, RUN_ENVIRONMENT if environment is None else environment)


def load_rerun_command(folder: Path, environment: dict[str, str] | None = None) -> str:
    """The command that lists the cases (and load faults) of the case files in ``folder``, safe to
    paste into a shell (see :func:`rerun_command` for ``environment``)."""
    argv = ["python", "-m", "conformance", "--cases", display_path(folder), "cases"]
    return shell_command(argv, RUN_ENVIRONMENT if environment is None else environment)


def cases_dir_arg(directory: Path) -> Path | None:
    """The ``--cases`` directory a rerun needs for cases in ``directory``: None inside the default
    corpus, else ``directory`` itself."""
    try:
        directory.resolve().relative_to(DEFAULT_CASES_DIR)
    except ValueError:
        return directory
    return None


def case_dir_arg(case: Case) -> Path | None:
    """The ``--cases`` directory a rerun of ``case`` needs: None inside the default corpus."""
    return cases_dir_arg(case.path.parent)


def resolve_device(device: str | torch.device) -> torch.device:
    """``cuda`` with its current index made explicit (tensors report ``cuda:0``), else as given."""
    device = torch.device(device)
    if device.type == "cuda" and device.index is None:
        return torch.device("cuda", torch.cuda.current_device())
    return device


class _Judge:
    """Collects the context of one step so a failure can say where it happened."""

    def __init__(self, case: Case, target: Target) -> None:
        self.case, self.target, self.where = case, target, ""

    def fail(self, detail: str) -> None:
        head = f"{self.case.id}[{self.target.name}]  ({self.case.location})"
        lines = [head, f"  {self.case.description}"]
        if self.where:
            lines.append(f"  {self.where}")
        lines.extend("  " + line for line in detail.splitlines())
        rerun = rerun_command(self.case.id, self.target.name, case_dir_arg(self.case))
        lines.append(f"  rerun: {rerun}")
        raise ConformanceFailure("\n".join(lines))

    def error(self, step, raised: BaseException | None) -> None:
        """Compare what was raised with the step's expectation."""
        want = step.error
        if want is None:
            if raised is not None:
                tb = "".join(traceback.format_exception(raised)[-3:]).rstrip()
                self.fail(f"raised {type(raised).__name__} on a valid input:\n{tb}")
            return
        message = want["message"].replace("{device}", str(self.target.device))
        expected = f"{want['type']} [{want['id']}] {message!r}"
        if raised is None:
            self.fail(f"expected {expected}\n     but the call returned normally")
        got_id = getattr(raised, "error_id", None) or identify(str(raised))
        got = f"{type(raised).__name__} [{got_id}] {str(raised)!r}"
        type_ok = want["type"] in {cls.__name__ for cls in type(raised).__mro__}
        if not (type_ok and str(raised) == message and got_id == want["id"]):
            self.fail(f"wrong error\n  expected {expected}\n       got {got}")

    def unchanged(self, snapshots: list[tuple]) -> None:
        for name, whole, before, offset, length, version in snapshots:
            if not torch.equal(whole, before):
                diff = field_diff(name, before.flatten().tolist(), whole.flatten().tolist(),
                                  offset=offset, length=length)
                self.fail(f"modified its input (inputs are read-only, spec §5)\n{diff}")
            if whole._version != version:  # torch counts in-place writes, even undone ones
                self.fail(f"wrote to its input {name} in place (torch's version counter went "
                          f"from {version} to {whole._version}), then restored its values: "
                          f"inputs are read-only (spec §5), and another stream may read them")

    def outputs(self, buffers, expected: dict[str, list], poison: dict[str, list]) -> None:
        for name in OUTPUT_NAMES:
            got = buffers[name].storage.tolist()
            diff = field_diff(name, expected[name], got, offset=GUARD,
                              length=buffers[name].view.numel(), poison=poison[name])
            if diff:
                self.fail(diff)


def _snapshots(kwargs: dict, own_views: set[int]) -> list[tuple]:
    """(name, allocation, copy, offset, length, version) of every input: the whole allocation (garbage
    tails and guard zones included) and where the tensor sits in it, plus the shared no-LUT
    stand-in, which a planner must not write either."""
    out = []
    if kwargs.get("full_to_swa_index_mapping") is None:
        device = kwargs["out_verify_offsets_scratch"].device
        if device.type != "meta":
            stand_in = zero_lut(device)
            out.append(("lut_tensor (the no-LUT stand-in)", stand_in, stand_in.clone(), 0, 1,
                        stand_in._version))
    for name, value in kwargs.items():
        if not isinstance(value, torch.Tensor) or id(value) in own_views or value.is_meta:
            continue
        whole = value._base if value._base is not None else value
        offset = value.storage_offset() - whole.storage_offset()
        out.append((name, whole, whole.clone(), offset, value.numel(), whole._version))
    return out


def _apply_golden(expected: dict[str, list], golden: dict) -> None:
    for name in OUTPUT_NAMES:
        values = golden[name]
        values = [values] if name in SCALAR_FIELDS else evaluate(values)
        expected[name][GUARD:GUARD + len(values)] = values


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _run_launcher(case: Case, target: Target, judge: _Judge) -> None:
    device = target.device
    buffers = allocate_outputs(case, device)
    own_views = {id(b.view) for b in buffers.values()}
    # One table, LUT and set of input tensors for the whole case, as a server keeps them: the second
    # run sees the same tensors at the same addresses, with the table and LUT restored in place.
    table, lut = build_tables(case, device)
    pristine = [t.clone() for t in (table, lut) if t is not None]
    requests = RequestInputs(case, device)
    for r, run in enumerate(RUNS):
        for tensor, original in zip([t for t in (table, lut) if t is not None], pristine):
            tensor.copy_(original)  # undo the previous run's step patches
        for buffer in buffers.values():
            buffer.poison(run)
        poison = {name: b.storage.tolist() for name, b in buffers.items()}
        expected = {name: list(values) for name, values in poison.items()}
        for k, step in enumerate(case.steps):
            judge.where = (f"step {k + 1} of {len(case.steps)}, " if len(case.steps) > 1 else "")
            judge.where += f"run {r + 1} of 2 (fresh poison {run!r})"
            if r:
                judge.where += ": the first run matched, so the output depends on what the " \
                               "buffers held before, or is nondeterministic"
            apply_patches(table, lut, step)
            kwargs = apply_overrides(launcher_kwargs(step, device, table, lut, buffers, requests),
                                     step.overrides)
            snapshots = _snapshots(kwargs, own_views)
            raised = None
            try:
                target.launch(**kwargs)
                _sync(device)
            except Exception as exc:  # judged below: a planner may raise anything
                raised = exc
            judge.error(step, raised)
            judge.unchanged(snapshots)
            if step.error is None:
                _apply_golden(expected, step.expect)
            judge.outputs(buffers, expected, poison)


def _run_validator(case: Case, target: Target, judge: _Judge) -> None:
    step = case.steps[0]
    table, lut = build_tables(case, target.device)
    buffers = allocate_outputs(case, target.device)
    kwargs = apply_overrides(launcher_kwargs(step, target.device, table, lut, buffers),
                             step.overrides)
    raised = None
    try:
        inner = inner_args(**kwargs)
        inner.update(case.derived)
        validate_offsets_inputs(**inner)
    except Exception as exc:
        raised = exc
    judge.error(step, raised)


def _run_allocate(case: Case, target: Target, judge: _Judge) -> None:
    raised = None
    try:
        PlanBuffers.allocate(**case.allocate, device=target.device)
    except Exception as exc:
        raised = exc
    judge.error(case.steps[0], raised)


def run_case(case: Case, target: Target) -> None:
    """Run ``case`` on ``target`` and judge it.

    Raises:
        ConformanceFailure: any difference from the case's expectation (readable report).
        ArraySpecError: the case describes inputs that cannot be built.
    """
    judge = _Judge(case, target)
    runner = {"launcher": _run_launcher, "validator": _run_validator,
              "allocate": _run_allocate}[case.entry]
    runner(case, target, judge)
