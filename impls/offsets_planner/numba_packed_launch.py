"""The Numba planner's GPU launch: one ``cuLaunchKernel`` with its parameters packed once per
buffer set, instead of Numba's dispatcher (which re-types and re-marshals every argument on every
call).

For each buffer set (:class:`impls.offsets_planner.buffer_set.BufferSet`: table, LUT, outputs,
window, capacity) the kernel parameters (:data:`impls.offsets_planner.numba_cuda_kernel.POINTER_SIGNATURE`)
are packed once into ctypes cells (:class:`PackedLaunch`); each call writes the new request
tensors' pointers (and, when bs changed, bs, the chunk, the grid and the kernel) into those same
cells and makes one ``cuLaunchKernel`` through ctypes on torch's raw current stream. The packing
is checked once, at :func:`impls.offsets_planner.numba_cuda_planner.probe`, against Numba's own
argument marshalling (private Numba APIs, pinned in pyproject.toml); if it differs the planner
uses Numba's ordinary launch (``LAUNCH_PATH = "numba"``). :func:`array_parameters` is the same
packing for Numba array arguments, which the entries planner's driver launch uses
(impls/entries_planner/numba_driver_launch.py).
"""

from __future__ import annotations

import ctypes
import functools

import numpy as np
import torch

from impls.offsets_planner import numba_cuda_planner as nb

cuda = nb.cuda
LAUNCH_PATH: str = "driver"
"""``driver`` (packed params, one ``cuLaunchKernel``) or ``numba`` (fallback); GPU only."""

FALLBACK_REASON: str | None = None
"""Why the GPU launch fell back to Numba's ordinary launch, if it did."""

RECORD_KEY = "numba-cuda"  # this planner's key in BufferSet.records
LAUNCH = None
"""ctypes ``cuLaunchKernel``, bound by :func:`choose_path` (at probe)."""


def kernel_handle(kernel) -> int:
    """The loaded kernel's driver handle (a CUkernel, which cuLaunchKernel accepts)."""
    overload = next(iter(kernel.overloads.values()))
    return int(overload._codelibrary.get_cufunc().handle)


def array_params(t: torch.Tensor) -> list[int]:
    """Numba's flattened array argument for a C-contiguous tensor: meminfo, parent, nitems,
    itemsize, data, shape..., strides... (bytes); checked against Numba once, in packing_ok()."""
    shape, item = tuple(t.shape), t.element_size()
    strides, acc = [], item
    for n in reversed(shape):
        strides.insert(0, acc)
        acc *= n
    return [0, 0, t.numel(), item, t.data_ptr(), *shape, *strides]


def array_parameters(tensors: tuple, *scalars: int) -> list[int]:
    """Numba's flattened parameters of C-contiguous array arguments ``tensors`` then ``scalars``
    (what the entries planner's driver launch packs: impls/entries_planner/numba_driver_launch.py)."""
    values = []
    for t in tensors:
        values.extend(array_params(t))
    return values + list(scalars)


def pointer_params(tensors: tuple, *scalars: int) -> list[int]:
    """The flattened parameters of
    :data:`impls.offsets_planner.numba_cuda_kernel.POINTER_SIGNATURE`: the eleven tensors' data pointers
    (the table's fourth), the workspace as a Numba array, ``scalars`` (bs, lut_len, W, capacity,
    chunk), then the table's rows and columns."""
    rows, cols = tensors[3].shape
    return ([t.data_ptr() for t in tensors[:11]] + array_params(tensors[11]) + list(scalars)
            + [rows, cols])


def packing_ok(kernel, device: torch.device) -> bool:
    """Whether pointer_params() packs exactly what Numba's own marshalling does (small sample
    buffers)."""
    def t(*shape, dtype=torch.int64):
        return torch.arange(int(np.prod(shape)), dtype=dtype, device=device).reshape(shape)

    sample = (t(2), t(2), t(2), t(3, 5, dtype=torch.int32), t(4), t(4097), t(3), t(2),
              t(1, dtype=torch.int32), t(1, dtype=torch.int32), t(1, dtype=torch.int32), t(1))
    overload = next(iter(kernel.overloads.values()))
    theirs: list = []
    scalars = [2, 4, 7, 9, 11]
    args = ([x.data_ptr() for x in sample[:11]] + [cuda.as_cuda_array(sample[11], sync=False)]
            + scalars + list(sample[3].shape))
    for ty, value in zip(overload.argument_types, args, strict=True):
        overload._prepare_args(ty, value, 0, [], theirs)
    theirs = [getattr(v, "value", v) for v in theirs]
    return [int(v) for v in theirs] == pointer_params(sample, *scalars)


def bind_launch() -> None:
    """Bind :data:`LAUNCH` to the driver's ``cuLaunchKernel``."""
    global LAUNCH
    fn = ctypes.CDLL("libcuda.so.1").cuLaunchKernel
    fn.restype = ctypes.c_int  # arguments go in as ready-made ctypes objects: no per-call argtypes
    LAUNCH = fn


GET_DEVICE = getattr(torch._C, "_cuda_getDevice", torch.cuda.current_device)
RAW_STREAM = getattr(torch._C, "_cuda_getCurrentRawStream", None)


def raw_stream(index: int) -> int:
    """torch's current stream on device ``index``, as a raw ``cudaStream_t``."""
    if RAW_STREAM is not None:
        return RAW_STREAM(index)
    return torch.cuda.current_stream(index).cuda_stream


def choose_path(kernel, device: torch.device) -> None:
    """Once per process: keep the driver path only if its packing matches Numba's own."""
    global LAUNCH_PATH, FALLBACK_REASON
    try:
        bind_launch()
        kernel_handle(kernel)
        if not packing_ok(kernel, device):
            FALLBACK_REASON = "packed parameters differ from Numba's marshalling"
    except Exception as exc:  # noqa: BLE001 - any surprise in Numba's internals: ordinary launch
        FALLBACK_REASON = f"{type(exc).__name__}: {exc}"
    if FALLBACK_REASON is not None:
        LAUNCH_PATH = "numba"


def capturing(device: torch.device) -> bool:
    """Whether torch's current stream is capturing a CUDA graph (never for a CPU device)."""
    return device.type == "cuda" and torch.cuda.is_current_stream_capturing()


BS_CELL = 11 + 7
"""The bs cell: after the eleven pointers and the workspace's seven array cells (meminfo, parent,
nitems, itemsize, data, shape, stride)."""
CHUNK_CELL = BS_CELL + 4


class PackedLaunch:
    """A buffer set's packed launch: one ctypes cell per flattened kernel parameter, built once.

    Per call only the three request pointers and, when bs changes, the bs and chunk cells, the
    grid and the kernel (:func:`impls.offsets_planner.numba_cuda_planner.launch_shape`) change:
    :meth:`set_batch` writes them into the same cells. ``call`` is the bound ``cuLaunchKernel`` (None until the
    driver path is chosen, e.g. on the CPU, where only the packing is exercised). The workspace
    argument is the device's look-back workspace (the other designs do not read it); when it
    does not exist yet and the launch is inside a CUDA-graph capture, ``lookback`` is False
    (:data:`impls.offsets_planner.numba_cuda_planner.FALLBACK_DESIGN` for those rows) and ``provisional`` True: the next launch outside
    capture packs again."""

    __slots__ = ("cells", "params", "call", "blocks", "threads", "function", "bs", "index",
                 "stream", "shapes", "bs_cells", "data_cells", "lookback", "provisional")

    def __init__(self, plan, buffers) -> None:
        empty = torch.empty(0, dtype=torch.int64, device=buffers.device)
        ws = nb.lookback_kernel.existing_workspace(buffers.device)
        self.provisional = ws is None and capturing(buffers.device)
        self.lookback = not self.provisional
        if ws is None:
            ws = nb.zero_lut(buffers.device) if self.provisional else nb.lookback_kernel.workspace(
                buffers.device)
        args = (empty, empty, empty, *buffers.tensors, ws)
        self.cells = [ctypes.c_int64(v) for v in pointer_params(args, plan.bs, plan.lut_len,
                                                                 *nb._int64_scalars(plan), 0)]
        self.params = (ctypes.c_void_p * len(self.cells))(
            *[ctypes.addressof(c) for c in self.cells])
        self.blocks, self.threads = ctypes.c_uint(0), ctypes.c_uint(0)
        self.function = ctypes.c_void_p()  # the kernel's handle, set with the grid
        one = ctypes.c_uint(1)
        self.call = None if LAUNCH is None else functools.partial(
            LAUNCH, self.function, self.blocks, one, one, self.threads, one, one,
            ctypes.c_uint(0))
        self.bs = -1  # the request cells hold no batch yet
        self.index = buffers.device.index
        self.stream = ctypes.c_void_p()  # the launch's stream, set per call
        self.shapes: dict[int, tuple] = {}  # bs -> (blocks, threads, chunk, handle), memoised
        self.bs_cells = (self.cells[BS_CELL],)  # every cell that holds bs
        self.data_cells = tuple(self.cells[:3])  # the three request pointers

    def set_batch(self, bs: int, a: torch.Tensor, b: torch.Tensor, c: torch.Tensor) -> None:
        """Point the request cells at ``a``, ``b``, ``c`` (int64 [bs], contiguous)."""
        if bs != self.bs:
            shape = self.shapes.get(bs)
            if shape is None:
                blocks, threads, chunk, key = nb.launch_shape(bs, self.lookback)
                handle = kernel_handle(nb.compiled(key)) if self.call is not None else 0
                shape = self.shapes[bs] = (blocks, threads, chunk, handle)
            blocks, threads, chunk, handle = shape
            for cell in self.bs_cells:
                cell.value = bs
            self.cells[CHUNK_CELL].value = chunk
            self.blocks.value, self.threads.value = blocks, threads
            self.function.value = handle
            self.bs = bs
        pa, pb, pc = self.data_cells
        pa.value, pb.value, pc.value = a.data_ptr(), b.data_ptr(), c.data_ptr()


def launch_numba_path(plan, buffers, tensors: tuple, use_shuffle: bool, stream: int) -> None:
    """Numba's ordinary launch (the fallback, and the shared-memory scan on the GPU)."""
    ws = nb.lookback_kernel.existing_workspace(buffers.device)
    if ws is None and not capturing(buffers.device):
        ws = nb.lookback_kernel.workspace(buffers.device)
    blocks, threads, chunk, key = nb.launch_shape(plan.bs, ws is not None)
    args = pointer_params((*tensors, *buffers.tensors,
                           nb.zero_lut(buffers.device) if ws is None else ws),
                          plan.bs, plan.lut_len, *nb._int64_scalars(plan), chunk)
    ws_view = cuda.as_cuda_array(nb.zero_lut(buffers.device) if ws is None else ws, sync=False)
    args = args[:11] + [ws_view] + args[BS_CELL:]  # Numba marshals the workspace array itself
    nb.compiled(key, use_shuffle)[blocks, threads, cuda.external_stream(stream)](*args)


def launch_gpu(plan, buffers, tensors: tuple, use_shuffle: bool = True) -> None:
    """Launch the plan on ``buffers``' device, on torch's current stream: the buffer set's
    :class:`PackedLaunch` (made on its first call, and again after a provisional one made under
    capture), or Numba's ordinary launch when :data:`LAUNCH_PATH` is ``numba`` or for the
    shared-memory scan (``use_shuffle`` False).

    Raises:
        RuntimeError: ``cuLaunchKernel`` returned an error.
    """
    index = buffers.device.index
    if index != GET_DEVICE():
        with torch.cuda.device(index):
            return launch_gpu(plan, buffers, tensors, use_shuffle)
    stream = raw_stream(index)
    if LAUNCH_PATH != "driver" or not use_shuffle:
        launch_numba_path(plan, buffers, tensors, use_shuffle, stream)
        return
    record = buffers.records.get(RECORD_KEY)
    if record is None or (record.provisional and not capturing(buffers.device)):
        if LAUNCH is None:
            if capturing(buffers.device):  # never probed: the packing check's sample tensors
                launch_numba_path(plan, buffers, tensors, use_shuffle, stream)  # would be captured
                return
            choose_path(nb.compiled(), buffers.device)
            if LAUNCH_PATH != "driver":
                return launch_gpu(plan, buffers, tensors, use_shuffle)
        record = buffers.records[RECORD_KEY] = PackedLaunch(plan, buffers)
    record.set_batch(plan.bs, *tensors)
    record.stream.value = stream
    rc = record.call(record.stream, record.params, None)
    if rc == 201:  # CUDA_ERROR_INVALID_CONTEXT: this thread has no current context yet
        with cuda.gpus[index]:
            rc = record.call(record.stream, record.params, None)
    if rc:
        raise RuntimeError(f"numba-cuda planner: cuLaunchKernel failed with CUresult {rc}")
