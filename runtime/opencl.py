"""The OpenCL runtime: device choice, programs built once (cached on disk), device
memory, and checked kernel launches from the VM.

- **Device**: `choose_device(spec)`: `spec` is `P:D` (platform and device indices) or
  a case-insensitive piece of "platform device" names; without one, the first GPU of
  any platform, else the first device. No environment variable is read.
- **Programs**: `OpenCLRuntime.program(source)` builds once per process and keeps the
  device binary on disk under `cache_dir`, keyed by the SHA-256 of the source, the build
  options, and the device and driver; a build error raises `OpenCLError` with the build
  log and the kernels the program holds.
- **Memory**: `ClStorage` is one device buffer (pooled by size class like host storage);
  `ClTensor` a tensor in it (byte offset, shape, dtype), which is what VM registers hold
  for values on the device. Data crosses only in `to_device`/`to_host` (the VM's
  `device_copy`).
- **Launches**: `OpenCLKernelEntry` checks a launch exactly as a CPU kernel's
  (`KernelEntry.plan`: the group's shape functions), then runs each phase of the
  kernel over a grid sized by the kernel's own bounds, which the module's launch plan
  computes (`runtime/opencl_plan.py`: the runtime generates no code).
"""

from __future__ import annotations

import hashlib
import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from xdsl.dialects import func

from nimble.dialects.device import Device
from nimble.errors import RunError
from nimble.runtime.allocator import check_size, max_bytes, size_class
from nimble.runtime.bytecode import BytecodeError
from nimble.runtime.kernels import Arg, KernelEntry
from nimble.runtime.opencl_plan import ClKernel, ParamKind

DEFAULT_CACHE = Path.home() / ".cache" / "nimble" / "opencl"


class OpenCLError(RunError):
    """No usable OpenCL device, a program that does not build, or a failed transfer."""


def _cl():
    try:
        import pyopencl as cl
    except ImportError as e:  # pragma: no cover (pyopencl is a core dependency)
        raise OpenCLError(f"pyopencl is not installed: {e}") from None
    return cl


def list_devices() -> list[tuple[str, Any]]:
    """Every OpenCL device: ("P:D platform / device", device)."""
    cl = _cl()
    try:
        platforms = cl.get_platforms()
    except cl.Error as e:
        raise OpenCLError(f"no OpenCL platform found ({e}); install a driver, e.g. Debian's pocl-opencl-icd") from None
    found = []
    for p, platform in enumerate(platforms):
        try:
            devices = platform.get_devices()
        except cl.Error:
            continue
        for d, device in enumerate(devices):
            found.append((f"{p}:{d} {platform.name.strip()} / {device.name.strip()}", device))
    return found


def choose_device(spec: str | None = None) -> Any:
    cl = _cl()
    found = list_devices()
    if not found:
        raise OpenCLError("no OpenCL device found; install a driver, e.g. Debian's pocl-opencl-icd")
    if spec:
        for label, device in found:
            index, _, names = label.partition(" ")
            if spec == index or spec.lower() in names.lower():
                return device
        raise OpenCLError(f"no OpenCL device matches '{spec}' (found: {'; '.join(l for l, _ in found)})")
    gpus = [d for _, d in found if d.type & cl.device_type.GPU]
    return (gpus or [d for _, d in found])[0]


class ClStorage:
    """One device buffer of `capacity` bytes (`size` of them asked for)."""

    __slots__ = ("buffer", "size", "capacity", "runtime", "__weakref__")

    def __init__(self, runtime: OpenCLRuntime, capacity: int):
        cl = _cl()
        self.runtime = runtime
        self.buffer = cl.Buffer(runtime.context, cl.mem_flags.READ_WRITE, max(capacity, 64))
        self.capacity = capacity
        self.size = capacity


class ClTensor:
    """A tensor in device memory: `storage` from byte `offset`, C-contiguous."""

    __slots__ = ("storage", "offset", "shape", "dtype")

    def __init__(self, storage: ClStorage, offset: int, shape: tuple[int, ...], dtype: np.dtype):
        self.storage = storage
        self.offset = offset
        self.shape = tuple(int(d) for d in shape)
        self.dtype = np.dtype(dtype)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    def reshape(self, shape: Sequence[int]) -> ClTensor:
        shape = tuple(int(d) for d in shape)
        if int(np.prod(shape, dtype=np.int64)) != self.size:
            raise ValueError(f"cannot reshape a tensor of {self.size} elements to {list(shape)}")
        return ClTensor(self.storage, self.offset, shape, self.dtype)

    def to_host(self) -> np.ndarray:
        return self.storage.runtime.to_host(self)

    def __repr__(self) -> str:
        return f"ClTensor({self.dtype}{list(self.shape)} at {self.offset})"


CPU_GROUP_ROWS = 4
"""Row tiles per work-group of a register-tiled phase on a CPU device (`launch_shape`)."""
CPU_GROUP_ITEMS = 1
"""Work-items per group of a work-group phase on a CPU device: pocl runs a group's
work-items one after the other on one core, so more add barriers and no parallelism
(the tests also run 3, to exercise the barriers)."""
GPU_GROUP_ITEMS = 64
"""Work-items per group of a work-group phase on a GPU (not measured: no GPU here)."""
GROUPS_PER_UNIT = 4
"""Work-groups per compute unit of a work-group phase (`launch_shape`)."""
MAX_SPLIT = 4
"""At most this many groups split one iteration of a work-group phase, when there are
fewer iterations than `GROUPS_PER_UNIT` per compute unit (each stages the iteration's
buffers itself)."""


class OpenCLRuntime:
    """One device: its context, queue, program cache and storage pool."""

    _shared: dict[str, OpenCLRuntime] = {}

    def __init__(self, device: Any, cache_dir: Path | None = None):
        cl = _cl()
        self.device = device
        self.context = cl.Context([device])
        self.queue = cl.CommandQueue(self.context)
        self.cache_dir = Path(cache_dir) if cache_dir is not None else DEFAULT_CACHE
        self.programs: dict[str, Any] = {}
        self.free: dict[int, list[ClStorage]] = {}
        self.builds = 0  # programs compiled from source (not found in the cache)
        self.identity = f"{device.platform.name}|{device.platform.version}|{device.name}|{device.driver_version}"

    @classmethod
    def get(cls, spec: str | None = None) -> OpenCLRuntime:
        """The runtime of the device `spec` chooses, shared within the process."""
        key = spec or ""
        if key not in cls._shared:
            cls._shared[key] = cls(choose_device(spec))
        return cls._shared[key]

    def launch_shape(self, trips: tuple[int, ...], phase: Any) -> tuple[tuple[int, ...], tuple[int, ...] | None]:
        """The global and work-group sizes of a phase whose mapped loops run `trips`
        threads (work-groups for a work-group phase) along each grid axis.

        Register-tiled phases on a CPU device (pocl runs a work-group on one core, its
        work-items one after the other) take `CPU_GROUP_ROWS` row tiles along grid
        axis 1 per group, so the column panel of the lane operand they share stays in
        the core's cache (GEMM 512^3 on pocl: 0.69-0.78 ms with 4 rows against 0.81-0.87
        with the driver's choice); the global size is rounded up to whole groups (a
        tiled thread past the edge computes nothing). A work-group phase (`c_groups`)
        runs `CPU_GROUP_ITEMS` work-items per group on a CPU and `GPU_GROUP_ITEMS`
        elsewhere, at most `GROUPS_PER_UNIT` groups per compute unit (each group reuses
        its scratch slice from one iteration to the next); with fewer iterations than
        that, up to `MAX_SPLIT` groups split each iteration's tiles (conv2d 512
        channels at 7 x 7, one panel: 2.84 -> 1.65 ms on pocl). Other phases: the
        driver chooses."""
        if phase.group:
            items = self.group_items
            target = GROUPS_PER_UNIT * self.device.max_compute_units
            left, groups = target, []
            for n in trips:
                groups.append(max(1, min(n, left)))
                left = max(1, left // groups[-1])
            if phase.split:
                groups.append(min(MAX_SPLIT, -(-target // math.prod(groups))))
            return (groups[0] * items, *groups[1:]), (items, *(1 for _ in groups[1:]))
        if not phase.tile or len(trips) < 2 or not self.cpu:
            return trips, None
        rows = max(1, min(CPU_GROUP_ROWS, trips[1] // (2 * self.device.max_compute_units)))
        return (trips[0], -(-trips[1] // rows) * rows, *trips[2:]), (1, rows, *(1 for _ in trips[2:]))

    @property
    def cpu(self) -> bool:
        """Whether the device is a CPU (pocl: a work-group runs on one core)."""
        return bool(self.device.type & _cl().device_type.CPU)

    @property
    def group_items(self) -> int:
        """Work-items per group of a work-group phase (or of one-group kernels such as
        the device NMS's sort and greedy pass)."""
        return min(CPU_GROUP_ITEMS if self.cpu else GPU_GROUP_ITEMS, self.device.max_work_group_size)

    @property
    def description(self) -> str:
        return f"{self.device.platform.name.strip()} / {self.device.name.strip()}"

    # -- programs ---------------------------------------------------------------------

    def program(self, source: str, options: Sequence[str] = ("-cl-std=CL1.2",), kernels: Sequence[str] = ()) -> Any:
        cl = _cl()
        key = hashlib.sha256("\0".join([source, *options, self.identity]).encode()).hexdigest()
        if key in self.programs:
            return self.programs[key]
        path = self.cache_dir / f"{key}.bin"
        program = None
        if path.exists():
            try:
                program = cl.Program(self.context, [self.device], [path.read_bytes()]).build(options=list(options))
            except cl.Error:
                program = None  # a stale or damaged cache entry: rebuild from source
        if program is None:
            try:
                program = cl.Program(self.context, source).build(options=list(options))
            except cl.Error as e:
                log = str(e).strip() or type(e).__name__  # pyopencl puts the build log in the message
                names = ", ".join(kernels) or "(unnamed)"
                raise OpenCLError(f"OpenCL program for kernels {names} failed to build on {self.description}:\n{log}") from None
            self.builds += 1
            try:
                self.cache_dir.mkdir(parents=True, exist_ok=True)
                binary = program.get_info(cl.program_info.BINARIES)[0]
                tmp = path.with_suffix(f".{os.getpid()}.tmp")
                tmp.write_bytes(binary)
                tmp.replace(path)
            except OSError:
                pass  # a read-only cache directory only costs a rebuild next time
        self.programs[key] = program
        return program

    # -- memory -------------------------------------------------------------------------

    def alloc(self, size: int) -> ClStorage:
        check_size(size, max_bytes())
        capacity = size_class(size)
        free = self.free.get(capacity)
        storage = free.pop() if free else ClStorage(self, capacity)
        storage.size = size
        return storage

    def release(self, storage: ClStorage) -> None:
        self.free.setdefault(storage.capacity, []).append(storage)

    def to_device(self, array: np.ndarray) -> ClTensor:
        cl = _cl()
        array = np.require(array, requirements="C")  # (ascontiguousarray makes 0-d arrays 1-d)
        tensor = ClTensor(self.alloc(array.nbytes), 0, array.shape, array.dtype)
        if array.nbytes:
            cl.enqueue_copy(self.queue, tensor.storage.buffer, array, is_blocking=False)
        return tensor

    def to_host(self, tensor: ClTensor) -> np.ndarray:
        cl = _cl()
        out = np.empty(tensor.shape, tensor.dtype)
        if out.nbytes:
            cl.enqueue_copy(self.queue, out, tensor.storage.buffer, src_offset=tensor.offset, is_blocking=True)
        return out

    def write(self, tensor: ClTensor, array: np.ndarray) -> None:
        cl = _cl()
        data = np.require(np.asarray(array, dtype=tensor.dtype), requirements="C").reshape(tensor.shape)
        if data.nbytes:
            cl.enqueue_copy(self.queue, tensor.storage.buffer, data, dst_offset=tensor.offset, is_blocking=True)


class OpenCLKernelEntry(KernelEntry):
    """A kernel compiled to OpenCL: checked like a CPU kernel, launched phase by phase."""

    device = Device.OPENCL
    tensor_class = ClTensor

    def __init__(self, name: str, runtime: OpenCLRuntime, program: Any, launch: ClKernel, group: func.FuncOp,
                 variant: bool, work: int):
        super().__init__(name, 0, group, False, variant, work)
        self.runtime = runtime
        self.launch_plan = launch
        self.phases = [_cl().Kernel(program, p.name) for p in launch.phases]
        # Declared scalar arguments: pyopencl then packs Python ints itself (setting a
        # numpy scalar argument took ~6 us each on pocl, 30 us a launch of a GEMM).
        scalars = [None if pointer else np.int64 for p in launch.params for pointer in p.pointers()]
        for kernel in self.phases:
            kernel.set_scalar_arg_dtypes(scalars)
        self.recipe = [p.dims if p.kind is ParamKind.BUFFER else None for p in launch.params
                       if p.kind is not ParamKind.SCRATCH]
        """Per argument of the kernel function: a buffer's `?` axes (pointer, offset in
        elements, those dims), or None (an index): `cl_arguments` in one tight loop."""
        self.scratch: list[ClStorage | None] = [None] * len(launch.scratch)
        """Device memory for the kernel's staging buffers (im2col), kept between launches
        and grown when a launch needs more (launches on one queue run in order)."""

    def launch(self, args: Sequence[Any], outputs: Sequence[Any], threads: int, pool: Any, reference: Any) -> None:
        plan = self.plan(args, outputs, 1)
        if plan.empty_input:
            host_args = [a.to_host() if isinstance(a, ClTensor) else a for a in args]
            for out, value in zip(outputs, reference(self.group, host_args)):
                self.runtime.write(out, value)
            return
        sizes, scratch_bytes = plan.slots
        cl_args = self.cl_arguments(self.flatten(args, outputs))
        for i, nbytes in enumerate(scratch_bytes):
            if self.scratch[i] is None or self.scratch[i].capacity < nbytes:
                self.scratch[i] = self.runtime.alloc(nbytes)
            cl_args.append(self.scratch[i].buffer)
        queue = self.runtime.queue
        for kernel, (size, group) in zip(self.phases, sizes):
            kernel(queue, size, group, *cl_args)

    def _prepare(self, args: Sequence[Any], outputs: Sequence[Any]) -> tuple[list[tuple[Any, Any]], list[int]]:
        """The (global size, work-group size) of each phase and the bytes of each staging
        buffer (they depend only on the shapes, so the plan memoises them); a buffer of
        a work-group phase has one copy per work-group."""
        launch = self.launch_plan
        values = launch.evaluate(self.flatten(args, outputs))
        shapes = [self.runtime.launch_shape(trips, phase) for trips, phase in zip(launch.trips(values), launch.phases)]
        copies = {}
        for phase, (size, group) in zip(launch.phases, shapes):
            for k in phase.per_group:
                copies[k] = math.prod(n // g for n, g in zip(size, group or [1] * len(size)))
        return shapes, [n * copies.get(k, 1) for k, n in enumerate(launch.scratch_bytes(values))]

    def flatten(self, args: Sequence[Any], outputs: Sequence[Any]) -> list[Any]:
        """The launch's values in the kernel function's argument order (a shape is one
        index argument per dim)."""
        flat: list[Any] = []
        for kind, value in zip(self.kinds, args):
            if kind is Arg.SHAPE:
                flat += [int(d) for d in value]
            else:
                flat.append(value)
        return flat + list(outputs)

    def finish(self) -> None:
        self.runtime.queue.finish()

    def cl_arguments(self, flat: Sequence[Any]) -> list[Any]:
        out: list[Any] = []
        append = out.append
        for dims, value in zip(self.recipe, flat):
            if dims is None:
                append(int(value))
                continue
            if value.__class__ is not ClTensor:
                raise self._fail(f"expected a tensor in device memory, got {type(value).__name__}")
            append(value.storage.buffer)
            append(value.offset // value.dtype.itemsize)
            if dims:
                shape = value.shape
                out += [shape[k] for k in dims]
        return out


class OpenCLModule:
    """The OpenCL kernels of a program: its C source built as one program on one device,
    launched by their plans."""

    def __init__(self, source: str, kernels: Sequence[ClKernel], runtime: OpenCLRuntime):
        self.runtime = runtime
        self.text = source
        self.kernels = {k.name: k for k in kernels}
        self.program = runtime.program(source, kernels=list(self.kernels))
        built = set(self.program.get_info(_cl().program_info.KERNEL_NAMES).split(";"))
        missing = sorted({p.name for k in kernels for p in k.phases} - built)
        if missing:
            raise BytecodeError(f"the OpenCL program has no kernel {', '.join(missing)} (its launch plans name them)")

    def entry(self, name: str, group: func.FuncOp, variant: bool, work: int) -> OpenCLKernelEntry:
        if name not in self.kernels:
            raise KeyError(name)
        return OpenCLKernelEntry(name, self.runtime, self.program, self.kernels[name], group, variant, work)
