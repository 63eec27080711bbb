"""Calling compiled kernels from the VM: checked launches through ctypes.

A kernel's ABI is `void k(i64 *slots)`: per argument a data pointer and its `?` dims
(tensors), its dims (shapes) or its value (indices), then the outputs likewise, then
a mailbox, the chunk index and chunk count (a parallel kernel's outermost parallel loop
is split into chunks that run at once on the native workers, `runtime.workers`;
a cooperative kernel's chunks meet in the mailbox, zeroed per launch: `runtime.sync`).

Every launch is checked against the shape functions of the kernel's fusion group
(memoised per argument shapes): input dtypes and ranks, the dims the group needs equal,
and the outputs' shapes and dtypes. A launch that would read or write out of bounds is
an error naming the op and the kernel, never an out-of-bounds access.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from enum import Enum
from functools import cache
from typing import Any, NamedTuple

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import MemRefType, TensorType
from xdsl.ir import SSAValue

from nimble.dialects.device import Device
from nimble.dialects.dynshape import ShapeType
from nimble.dialects.graph import ConcatOp, GraphOp
from nimble.dialects.graph.broadcasting import broadcast_sites
from nimble.dialects.graph.types import numpy_dtype
from nimble.dialects.shape_functions import ShapeError, StaticDims
from nimble.errors import RunError
from nimble.reference import conforms, describe, tensor_mismatch, where
from nimble.runtime import bounds
from nimble.runtime.launcher import LAUNCH, launch_spec
from nimble.runtime.pointers import data_pointer
from nimble.runtime.sync import MAILBOX_WORDS
from nimble.runtime.workers import SPLIT_HEADER, split_address, workers
from nimble.runtime.workers import current as current_workers

KERNEL_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
PARALLEL_MIN_WORK = 1 << 20
"""Output elements x reduction steps per element below which a kernel runs on one
thread. In a model, launch after launch, splitting pays from smaller kernels than
called alone: measured 2026-12-07 (Zen 3, 2 threads, each setting in its own process,
best / median over 5 s, two rounds), MobileNetV3-small at batch 1 2.19/2.62 ms from
2^22, 1.71/1.99 from 2^20, 1.48/1.74 from 2^18; MNASNet 6.33/7.10, 6.06/6.74,
5.90/6.35; MobileNetV2 (batch 1 and 3) and MNASNet at batch 3 within the runs' spread.
Called alone, a dense layer 256 -> 256 (`exe(x, w, b)`, min / median of 200 calls, us),
whole vs in 2 chunks: 4 rows (2^18) 28.7/30.0 vs 25.5/34.2, 8 rows (2^19) 39.4/41.3 vs
65.4/102.4, 16 rows (2^20) 60.0/61.8 vs 47.8/65.1; hence 2^20. Measured before (same
layer, workers awake): 2^20 31.5/32.2 vs 30.4/50.1, 2^21 50.6/51.1 vs 41.7/75.8, 2^22
88.0/88.9 vs 59.4/83.4, 2^23 162.7/164.2 vs 97.7/122.3 (6 << 20 before workers stayed
awake during a run; a 3 x 3 conv 32 -> 64 channels at 16 x 16, 2^22.2, then took 96 us
instead of 66). With a `ThreadPoolExecutor` (before the native workers), 2^24 took 217 us."""
PARALLEL_MIN_BYTES = 1 << 19
"""Bytes of arguments (inputs and outputs) from which launches are split whatever their
work: a kernel that streams memory (a dense layer at batch 1, an elementwise op over a
large map) runs faster on both cores' caches. Measured (`exe(...)` back to back in
blocks of 50, workers awake, min / median us, whole vs 2 chunks): add + relu over 96
KiB 14.6/15.0 vs 14.8/15.3, 192 KiB 15.8/16.2 vs 15.6/16.0, 384 KiB 18.4/18.9 vs
16.6/17.2, 768 KiB 24.3/25.2 vs 18.9/19.5, 3 MiB 62.3/63.3 vs 41.7/43.1; a dense layer
at batch 1 over 256 KiB of weights 16.3/16.7 vs 15.8/16.2, 512 KiB 20.0/20.5 vs
17.1/17.5, 1 MiB 29.6/30.3 vs 21.5/22.4, 4 MiB 69.5/70.9 vs 46.0/48.2 (the last one's
work 2^20)."""


class Arg(Enum):
    """How a kernel argument is passed in the slot array."""

    TENSOR = "tensor"  # data pointer, then its `?` dims
    SHAPE = "shape"  # its dims
    INDEX = "index"  # its value


def arg_kind(t: Any) -> Arg:
    """The kind of argument a value of type `t` is."""
    if isinstance(t, TensorType | MemRefType):
        return Arg.TENSOR
    return Arg.SHAPE if isinstance(t, ShapeType) else Arg.INDEX


class LaunchError(RunError):
    """A kernel launch with arguments the kernel cannot take."""


class ShapeOnly(StaticDims):
    """Dims of values known only by shape (kernel intermediates and outputs)."""

    def __init__(self, shapes: dict[SSAValue, tuple[int, ...]], scalars: dict[SSAValue, Any]):
        self.shapes = shapes
        self.scalars = scalars

    def dims(self, value: SSAValue) -> list[int]:
        return list(self.shapes[value])

    def index(self, value: SSAValue) -> int:
        return int(self.scalars[value])

    def shape(self, value: SSAValue) -> list[int]:
        return [int(d) for d in self.scalars[value]]


def _clamps_reads(block: Any, outputs: Sequence[SSAValue]) -> bool:
    """Whether a group's kernel may clamp an index into an input (`GraphOp.CLAMPS_READS`):
    a concat that only its kernel's output takes is written part by part (no clamp); an
    op with regions (a recurrence's loop) is assumed to."""
    for op in block.ops:
        if op.regions:
            return True
        if isinstance(op, GraphOp) and op.CLAMPS_READS:
            written_whole = isinstance(op, ConcatOp) and outputs.count(op.result) == 1 \
                and all(u.operation is block.last_op for u in op.result.uses)
            if not written_whole:
                return True
    return False


class KernelEntry:
    """One compiled kernel and the fusion group (a host function) it computes."""

    device = Device.CPU
    min_work = PARALLEL_MIN_WORK
    """Output elements x work per element from which launches are split."""
    min_bytes = PARALLEL_MIN_BYTES
    """Bytes of array arguments from which launches are split."""
    tensor_class: type = np.ndarray
    """What a tensor argument of this kernel is (device kernels take device tensors)."""

    def __init__(self, name: str, address: int | Callable[[], int], group: func.FuncOp, parallel: bool,
                 variant: bool, work: int):
        self.name = name
        self._resolve = address if callable(address) else None
        """Where the address comes from when the kernel is compiled on its first launch."""
        self._bind(0 if callable(address) else address)
        self.group = group
        self.parallel = parallel
        self.work = work
        block = group.body.block
        self.params = list(block.args)
        self.members = [o for o in block.ops if isinstance(o, GraphOp)]
        self.outputs = list(block.last_op.operands)
        self.sites = [s for op in self.members for s in broadcast_sites(op)] if variant else []
        self.out_dtypes = [numpy_dtype(v.type.get_element_type()) for v in self.outputs]
        self.kinds = [arg_kind(p.type) for p in self.params]
        self.in_dynamic = [[i for i, d in enumerate(p.type.get_shape()) if d < 0] if k is Arg.TENSOR else []
                           for p, k in zip(self.params, self.kinds)]
        self.out_dynamic = [[i for i, d in enumerate(v.type.get_shape()) if d < 0] for v in self.outputs]
        self.arity = len(self.params) + len(self.outputs)
        self.clamps = _clamps_reads(block, self.outputs)
        """Whether a launch with an empty input must run the group by its reference."""
        self.unread: set[int] = set()
        """Parameters whose elements the kernel only copies (whether they are empty does not matter)."""
        self.abi = self._abi()
        self._plans: dict[tuple, _Plan] = {}
        self._fast: _Fast | None = None
        """The last checked launch, if it can take the fast path (CPU, arrays)."""
        self._fast_path = LAUNCH is not None and self.device == Device.CPU
        self._statics = [i for i, k in enumerate(self.kinds) if k is not Arg.TENSOR]

    def ready(self) -> None:
        """Compile the kernel now if it is compiled on its first launch and was not yet."""
        if self._resolve is not None:
            self._bind(self._resolve())
            self._resolve = None

    def _bind(self, address: int) -> None:
        self.fn = KERNEL_FN(address) if address else None
        self.address = ctypes.c_void_p(address)

    def _abi(self) -> list[tuple[str, tuple[int, ...]] | None]:
        """The kernel arguments the group's types call for (compare `Kernel.abi`)."""
        abi: list[tuple[str, tuple[int, ...]] | None] = []
        for value, kind in [*zip(self.params, self.kinds), *((v, Arg.TENSOR) for v in self.outputs)]:
            if kind is Arg.TENSOR:
                abi.append((str(value.type.get_element_type()), tuple(value.type.get_shape())))
            elif kind is Arg.SHAPE:
                abi += [None] * value.type.rank.data
            else:
                abi.append(None)
        return abi

    def fit(self, abi: list[tuple[str, tuple[int, ...]] | None]) -> bool:
        """Take the compiled kernel's arguments (`Kernel.abi`) if it computes the group:
        the group's, except that a dim may be `?` where the group's is static (a kernel
        that groups of other sizes share, `lowering/kernels/shared_forms.py`); its `?` dims are
        then what each launch passes. False if it does not fit."""
        if len(abi) != len(self.abi):
            return False
        for mine, theirs in zip(self.abi, abi):
            if (mine is None) != (theirs is None):
                return False
            if mine is not None and theirs is not None and (
                    mine[0] != theirs[0] or len(mine[1]) != len(theirs[1])
                    or any(t >= 0 and t != m for m, t in zip(mine[1], theirs[1]))):
                return False
        tensors = iter([i for i, d in enumerate(a[1]) if d < 0] for a in abi if a is not None)
        self.in_dynamic = [next(tensors) if k is Arg.TENSOR else [] for k in self.kinds]
        self.out_dynamic = list(tensors)
        self.abi = abi
        return True

    def _fail(self, message: str) -> LaunchError:
        return LaunchError(f"kernel @{self.name}: {message}")

    def plan(self, args: Sequence[Any], outputs: Sequence[Any], threads: int) -> _Plan:
        """How to launch on arguments and outputs of these shapes, after checking them
        (memoised by shapes: the checks depend on nothing else)."""
        key = _key(args, outputs, self.tensor_class)
        found = self._plans.get(key)
        if found is not None:
            return found
        if len(args) + len(outputs) != self.arity:
            raise self._fail(f"takes {self.arity} arguments, got {len(args) + len(outputs)}")
        self.ready()
        shapes: dict[SSAValue, tuple[int, ...]] = {}
        scalars: dict[SSAValue, Any] = {}
        for i, (param, arg) in enumerate(zip(self.params, args)):
            if not isinstance(param.type, TensorType):
                why = conforms(arg, param.type)
            elif isinstance(arg, self.tensor_class):
                why = tensor_mismatch(arg, param.type)
            else:  # a host array on the device, a device tensor on the host, or no tensor
                why = f"expected {param.type} in {self.device} memory, got {describe(arg)}"
            if why is not None:
                raise self._fail(f"input #{i}: {why}")
            if isinstance(param.type, TensorType):
                shapes[param] = arg.shape
            else:
                scalars[param] = arg
        out_shapes = self.output_shapes(shapes, scalars)
        for i, (out, shape, dtype) in enumerate(zip(outputs, out_shapes, self.out_dtypes)):
            if not isinstance(out, self.tensor_class) or out.shape != shape or out.dtype != dtype:
                got = f"{out.dtype}{list(out.shape)}" if isinstance(out, self.tensor_class) else type(out).__name__
                raise self._fail(f"output #{i} must be a writable C-contiguous {dtype}{list(shape)}, got {got}")
            if self.tensor_class is np.ndarray and not out.flags.c_contiguous:
                raise self._fail("outputs must be writable C-contiguous arrays")
        size = max((int(np.prod(s)) for s in out_shapes), default=0)
        touched = sum(a.nbytes for a in (*args, *outputs) if isinstance(a, np.ndarray))
        enough = size * self.work >= self.min_work or touched >= self.min_bytes
        chunks = threads if self.parallel and threads > 1 and enough else 1
        empty_input = any(isinstance(a, self.tensor_class) and a.size == 0 and i not in self.unread
                          for i, a in enumerate(args))
        contiguous = all(a.flags.c_contiguous for a in args if isinstance(a, np.ndarray))
        plan = _Plan(self._prepare(args, outputs), chunks, empty_input, contiguous)
        if len(self._plans) < 256:
            self._plans[key] = plan
        return plan

    def output_shapes(self, shapes: dict[SSAValue, tuple[int, ...]], scalars: dict[SSAValue, Any]) -> list[tuple[int, ...]]:
        """The outputs' shapes for inputs of these shapes and index values, by the group's
        shape functions (LaunchError naming the op if they reject the inputs)."""
        k = ShapeOnly(shapes, scalars)
        for op in self.members:
            try:
                result_shapes = op.shape_function(k)
            except ShapeError as e:
                raise LaunchError(f"{where(op)}'{op.name}' op: {e} (kernel @{self.name})") from None
            for result, s in zip(op.results, result_shapes):
                shapes[result] = tuple(int(d) for d in s)
        if any(shapes[a][i] != shapes[r][j] for a, i, r, j in self.sites):
            raise self._fail("this variant assumes no '?' dim is broadcast from 1, and one is")
        return [shapes[v] for v in self.outputs]

    def finish(self) -> None:
        """Wait until the launches made so far are done (CPU launches are synchronous)."""

    def _prepare(self, args: Sequence[Any], outputs: Sequence[Any]) -> Any:
        """What a launch on arguments of these shapes needs besides the data (memoised
        in the plan): here the slot array with every dim and scalar filled in, and where
        the input and output data pointers go."""
        kinds = [*self.kinds, *[Arg.TENSOR] * len(outputs)]
        packed, at = slot_array(kinds, [*self.in_dynamic, *self.out_dynamic], [*args, *outputs], fill=False)
        tensors = [i for i, k in enumerate(self.kinds) if k is Arg.TENSOR]
        return packed, list(zip(at, tensors)), at[len(tensors):]

    def launch(self, args: Sequence[Any], outputs: Sequence[Any], threads: int, pool: ThreadPoolExecutor | None,
               reference: Any) -> None:
        """Run the kernel on `args`, writing `outputs` (checked first: by `launcher.LAUNCH`
        where the shapes, dtypes and strides are the last launch's, else here)."""
        fast = self._fast
        if fast is not None and fast.threads == threads and args.__class__ is list and outputs.__class__ is list \
                and (fast.workers is None or fast.workers is current_workers()) \
                and (not fast.statics or same_statics(args, fast.statics)) \
                and LAUNCH(fast.function, fast.spec.address, args, outputs) == 0:
            return
        plan = self._plans.get(_key(args, outputs))
        if plan is None:
            plan = self.plan(args, outputs, threads)
        if plan.empty_input and self.clamps:
            # A kernel that clamps indices into its inputs would read outside an empty
            # one: the group runs by its reference semantics instead.
            for out, value in zip(outputs, reference(self.group, list(args))):
                np.copyto(out, value)
            return
        template, in_at, out_at = plan.slots
        packed = template.copy()
        keep = None  # contiguous copies of inputs that are not, alive until the call returns
        if plan.contiguous:
            for at, i in in_at:
                packed[at] = data_pointer(args[i])
        else:
            keep = [np.ascontiguousarray(args[i]) for _, i in in_at]
            for (at, _), arg in zip(in_at, keep):
                packed[at] = data_pointer(arg)
        for at, out in zip(out_at, outputs):
            if not out.flags.writeable:
                raise self._fail("outputs must be writable C-contiguous arrays")
            packed[at] = data_pointer(out)
        chunks = plan.chunks
        statics = tuple((i, args[i]) for i in self._statics)
        fast = self._fast_path and plan.contiguous and all(args[i].__class__ is np.ndarray for _, i in in_at) \
            and all(a.__class__ is np.ndarray for a in outputs) and all(v.__class__ in _STATIC for _, v in statics)
        if chunks == 1 or pool is None:
            self.fn(data_pointer(packed))
            if fast:
                self._fast = _Fast(launch_spec(template, args, outputs, in_at, out_at), threads, self.address, None,
                                   statics)
            return
        parts = np.empty((chunks, len(packed)), np.int64)
        parts[:] = packed
        mailbox = np.zeros(MAILBOX_WORDS, np.int64)  # where a cooperative kernel's chunks meet
        parts[:, -3] = data_pointer(mailbox)
        parts[:, -2] = np.arange(chunks)
        parts[:, -1] = chunks
        native = workers(chunks - 1)
        if native is not None:
            native.run(self.address, parts)
            if fast:  # the next launch of these shapes splits in machine code (`workers.SPLIT_HEADER`)
                head = native.split_head(self.address.value, len(packed), chunks)
                self._fast = _Fast(launch_spec(np.array([*head, *template], np.int64), args, outputs,
                                               [(at + SPLIT_HEADER, i) for at, i in in_at],
                                               [at + SPLIT_HEADER for at in out_at]),
                                   threads, _split_address(), native, statics)
            return
        others = [pool.submit(self.fn, data_pointer(p)) for p in parts[1:]]
        self.fn(data_pointer(parts[0]))
        for other in others:
            other.result()


def check_launches(entry: KernelEntry) -> None:
    """Make each launch of `entry` (a kernel compiled with bounds checks) fail, after it
    ran, if it indexed a buffer out of bounds (`runtime.bounds`)."""
    launch = entry.launch
    inputs = [str(p.type) for p in entry.params]
    outputs = [str(v.type) for v in entry.outputs]

    def checked(*args: Any) -> None:
        bounds.take()  # (a previous launch's, already reported)
        launch(*args)
        code = bounds.take()
        if code:
            raise entry._fail(f"indexed {bounds.describe(code, inputs, outputs)} out of bounds "
                              "(NIMBLE_CHECK_BOUNDS: nothing was read or written there)")

    entry.launch = checked


class _Fast(NamedTuple):
    """A checked launch that launches with the same shapes repeat through `launcher.LAUNCH`."""

    spec: Any  # `launcher.LaunchSpec`
    threads: int
    function: ctypes.c_void_p  # what LAUNCH calls: the kernel, or `nimble_split` for a split launch
    workers: Any  # those workers (None unless split)
    statics: tuple  # the shape and index arguments as (position, value): their values are in
    # the spec's slots, so only equal ones take the fast path (a dynamic reshape's target)


_STATIC = (int, tuple)
"""The classes of shape and index arguments a launch spec keeps (`==` between two of
them is one bool, and equal ones fill the same slots)."""


def same_statics(args: list, statics: tuple) -> bool:
    """Whether `args` holds the spec's shape and index arguments (class and value)."""
    for i, v in statics:
        a = args[i]
        if a.__class__ is not v.__class__ or a != v:
            return False
    return True


def slot_array(kinds: Sequence[Arg], dynamic: Sequence[Sequence[int]], values: Sequence[Any],
               fill: bool = True) -> tuple[np.ndarray, list[int]]:
    """The kernel ABI's argument array: per tensor its data pointer (0 unless `fill`)
    and its `?` dims (axes `dynamic`), per shape its dims, per index its value; then no
    mailbox and chunk 0 of 1. Also the positions of the data pointers."""
    slots: list[int] = []
    pointers: list[int] = []
    for kind, axes, value in zip(kinds, dynamic, values):
        if kind is Arg.TENSOR:
            pointers.append(len(slots))
            slots.append(data_pointer(value) if fill else 0)
            slots += [value.shape[i] for i in axes]
        elif kind is Arg.SHAPE:
            slots += [int(d) for d in value]
        else:
            slots.append(int(value))
    return np.array([*slots, 0, 0, 1], dtype=np.int64), pointers


@dataclass
class _Plan:
    slots: Any  # what `_prepare` made for these shapes
    chunks: int
    empty_input: bool
    contiguous: bool = True  # every input array is C-contiguous (the key holds strides)


def _key(args: Sequence[Any], outputs: Sequence[Any], tensor: type = np.ndarray) -> tuple:
    """What a launch plan depends on: the number of inputs, tensors' shapes, dtypes (a
    dtype object, which no other register value can equal) and strides, other arguments'
    values."""
    key: list[Any] = [len(args)]
    for values in (args, outputs):
        for a in values:
            if a.__class__ is tensor or isinstance(a, tensor):
                key += (a.shape, a.dtype, a.strides) if tensor is np.ndarray else (a.shape, a.dtype)
            else:
                key.append(a)
    return tuple(key)


@cache
def _split_address() -> ctypes.c_void_p:
    """`workers.nimble_split`, for `launcher.LAUNCH` to call."""
    return ctypes.c_void_p(split_address())


class ArrayKernel:
    """A compiled kernel called directly on numpy arrays (`compile_kernels`' kernels, a
    host op's kernel): per buffer argument (`params[i]`: its numpy dtype and dims,
    negative for `?`) a C-contiguous array of that dtype, rank and static dims, else a
    ValueError naming the argument (`types[i]` spells it); per index argument (None) an
    int. `address()` gives the entry, taken at the first call (a lazy JIT compiles then).
    Compiled with bounds checks (`checked`), an access out of bounds is a LaunchError."""

    def __init__(self, name: str, params: Sequence[tuple[np.dtype, Sequence[int]] | None], types: Sequence[str],
                 address: Callable[[], int], checked: bool = False):
        self.name, self.address, self.checked = name, address, checked
        self.params, self.types = list(params), list(types)
        self.kinds = [Arg.TENSOR if p is not None else Arg.INDEX for p in self.params]
        self.dynamic = [[i for i, d in enumerate(p[1]) if d < 0] if p is not None else [] for p in self.params]
        self.fn: Any = None

    def __call__(self, *args: Any) -> None:
        if len(args) != len(self.params):
            raise TypeError(f"kernel @{self.name} takes {len(self.params)} arguments, got {len(args)}")
        for i, (p, arg) in enumerate(zip(self.params, args)):
            if p is None:
                continue
            dtype, dims = p
            if not isinstance(arg, np.ndarray) or arg.dtype != dtype or arg.ndim != len(dims) \
                    or any(d >= 0 and d != n for d, n in zip(dims, arg.shape)) or not arg.flags.c_contiguous:
                got = f"{arg.dtype}{list(arg.shape)}" if isinstance(arg, np.ndarray) else type(arg).__name__
                raise ValueError(f"kernel @{self.name} argument #{i}: expected a C-contiguous {self.types[i]}, "
                                 f"got {got}")
        if self.fn is None:
            self.fn = KERNEL_FN(self.address())
        packed, _ = slot_array(self.kinds, self.dynamic, args)
        bounds.take()
        self.fn(data_pointer(packed))
        code = bounds.take() if self.checked else 0
        if code:
            where = bounds.describe(code, self.types, [], role="argument")
            raise LaunchError(f"kernel @{self.name} indexed {where} out of bounds "
                              "(NIMBLE_CHECK_BOUNDS: nothing was read or written there)")
