"""Replaying a run: a function's kernel launches for one signature, in one native call.

At batch 1 a transformer or an RNN spends most of its time between kernels: BERT (2
layers, hidden 64) at 1 x 8 runs ~430 VM instructions per call, 36 of them launches,
for ~0.2 ms outside the kernels' ~0.09. Most of those instructions compute shapes,
sizes, allocations and checks, and for a function whose instructions read only shapes
(`traceable`: no host calls, no ADTs, no device copies) every one of them gives the same
result at every call with the same argument signature (shapes, dtypes, strides, index
values). So after a signature has run twice, the second time *recording*, a `Trace`
holds the run's launches: per kernel launch the function it calls (the kernel, or the
workers' `nimble_split`), its slot array with every dim and scalar in place, and where
each data pointer comes from: an argument (plus a byte offset), a constant or a
storage of the run (an address fixed at recording: the trace owns the storages it
recorded, taken from a pool of their own), or a storage that holds a result (a fresh
buffer per call, so results never alias a later call's). Later calls with that
signature patch the arguments' and fresh buffers' addresses into a table and make one
call to `nimble_replay` (below, JIT-compiled once per process), which fills each
launch's slots and calls it in order; the results are views of the fresh buffers (or
of the arguments, or constants), as the VM would have returned them.

What a call with a recorded signature would check (shape asserts, the launches' checks
against their groups) held when it was recorded and depends on the signature alone.
A recording that meets anything else (a launch that takes no fast path, a data pointer
of a buffer the run did not allocate) keeps no trace, and that signature runs on the VM
from then on. `NIMBLE_REPLAY=0` turns replays off (the VM runs every call).
"""

from __future__ import annotations

import bisect
import ctypes
import itertools
import os
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from llvmlite import ir

from nimble.dialects import vm
from nimble.dialects.vm import Opcode
from nimble.runtime.allocator import Storage, aligned_bytes
from nimble.runtime.kernels import same_statics
from nimble.runtime.native_ir import I64, P8, P64, VOID, Emitter, module
from nimble.runtime.pointers import data_pointer
from nimble.runtime.workers import current as current_workers

TRACEABLE = frozenset((
    Opcode.MOVE, Opcode.RET, Opcode.INVOKE_KERNEL, Opcode.ALLOC_STORAGE, Opcode.ALLOC_TENSOR, Opcode.ALLOC_TENSOR_REG,
    Opcode.IF, Opcode.GOTO, Opcode.LOAD_CONST, Opcode.LOAD_CONSTI, Opcode.SHAPE_OF, Opcode.DIM, Opcode.MAKE_SHAPE,
    Opcode.RESHAPE_TENSOR, Opcode.FATAL, Opcode.KILL, Opcode.CMP, Opcode.SELECT, Opcode.NOT,
    *(Opcode[name.upper()] for name in vm.BINARY)))
"""Instructions whose results depend only on the shapes and index values they are given."""
MAX_TRACES = 8
"""Signatures replayed per function (least recently used dropped): each owns its storages."""
MAX_OWNED_BYTES = 1 << 28
"""Bytes of storage the traces of one function may own together (least recently used dropped)."""
MAX_LAUNCHES = 4096
"""Launches in one trace (a VM loop recorded is unrolled)."""
HEAD = 3  # per launch: function, slot count, patch count
ALIGNMENT = 64

def source() -> str:
    """`nimble_replay(table, bases)`: each launch of the table (`Trace`) run on its slot
    template, patched with the addresses of this replay's buffers."""
    m = module()
    e = Emitter(m, "nimble_replay", VOID, [("table", P64), ("bases", P64)])
    b, table = e.b, e.arg["table"]
    slots = b.alloca(I64, e.load_word(table, 1))
    slots.align = ALIGNMENT

    def launch(_i: ir.Value, record: ir.Value) -> ir.Value:
        kernel, slot_count, patch_count = (e.load_word(record, k) for k in range(HEAD))
        template = e.word(record, HEAD)
        e.copy_words(slots, template, slot_count)
        patches = b.gep(template, [slot_count])

        def patch(j: ir.Value) -> None:
            slot, base, offset = (e.load_word(patches, b.add(b.mul(j, I64(3)), I64(k))) for k in range(3))
            b.store(b.add(e.load_word(e.arg["bases"], base), offset), b.gep(slots, [slot]))

        e.each(0, patch_count, patch, "patch")
        e.run_chunk(b.inttoptr(kernel, P8), slots)
        return b.add(b.add(slot_count, b.mul(patch_count, I64(3))), I64(HEAD))

    e.each_record(e.word(table, 2), e.load_word(table, 0), launch, "launch")
    b.ret_void()
    return str(m)


_REPLAY: Any = None
_LOCK = threading.Lock()


def _replay_function() -> Any:
    """`nimble_replay(table, bases)` as a ctypes function (compiled on first use)."""
    global _REPLAY
    if _REPLAY is not None:
        return _REPLAY
    with _LOCK:
        if _REPLAY is None:
            from nimble.runtime.llvm_jit import support_engine

            engine = support_engine(source())
            function = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p)(
                engine.get_function_address("nimble_replay"))
            function.engine = engine  # the machine code lives as long as the function
            _REPLAY = function
    return _REPLAY


def traceable(code: Sequence[tuple[int, Any]]) -> bool:
    """Whether a function's instructions read only shapes and index values."""
    return all(opcode in TRACEABLE for opcode, _ in code)


def signature(args: Sequence[Any]) -> tuple | None:
    """What a replay depends on: each argument's shape, dtype and strides (C-contiguous
    numpy arrays only), or its value (ints); None for any other argument."""
    key: list[Any] = []
    for a in args:
        if a.__class__ is np.ndarray:
            if not a.flags.c_contiguous:
                return None
            key.append((a.shape, a.dtype, a.strides))
        elif a.__class__ is int:
            key.append(a)
        else:
            return None
    return tuple(key)


class NotReplayable(Exception):
    """Why a recording keeps no trace."""


@dataclass
class _Result:
    base: int  # -1: the value itself (a constant array or an int); else a bases index
    offset: int
    value: Any  # the value (base -1), else (shape, dtype, strides)


class Recording:
    """What the VM reports while it records a run (`VirtualMachine._record`)."""

    def __init__(self, args: Sequence[Any], constants: Sequence[Any]):
        self.args = list(args)
        self.constants = [c for c in constants if isinstance(c, np.ndarray)]
        self.buffers: list[Any] = []  # the run's storages and private arrays, in allocation order
        self.launches: list[tuple[int, np.ndarray, list[tuple[int, np.ndarray]]]] = []
        self.failure: str | None = None
        self.workers: Any = None  # the workers split launches ran on (their header names them)

    # -- reported by the VM ------------------------------------------------------------------
    def allocated(self, buffer: Any) -> None:
        self.buffers.append(buffer)

    def launched(self, fast: Any, args: Sequence[Any], outputs: Sequence[Any], threads: int) -> None:
        """A launch on these arrays and the kernel's fast-path spec after it (`kernels._Fast`,
        None if it has none): the spec of this launch, if its threads, workers, dtypes,
        shapes, strides and shape arguments are this launch's (the kernel keeps the spec
        of its last checked launch: another thread's, or one of other shapes, if this
        launch took no fast path)."""
        if self.failure is not None:
            return
        if fast is None or fast.threads != threads or fast.workers not in (None, current_workers()):
            self.failure = "a launch took no fast path"
            return
        if len(self.launches) >= MAX_LAUNCHES:
            self.failure = f"more than {MAX_LAUNCHES} launches"
            return
        spec = fast.spec.array
        nslots, ntensors = int(spec[0]), int(spec[1])
        template = spec[5:5 + nslots].copy()
        tensors: list[tuple[int, np.ndarray]] = []
        at = 5 + nslots
        for _ in range(ntensors):
            is_output, index, slot, descr, rank = (int(v) for v in spec[at:at + 5])
            array = (outputs if is_output else args)[index]
            # The spec is this launch's, not one another thread's run left meanwhile.
            layout = tuple(int(v) for v in spec[at + 6:at + 6 + 2 * rank])
            if id(array.dtype) != descr or array.shape + array.strides != layout:
                self.failure = "a launch's spec is not its own"
                return
            tensors.append((slot, array))
            at += 6 + 2 * rank
        if not same_statics(list(args), fast.statics):
            self.failure = "a launch's spec is not its own"
            return
        self.launches.append((fast.function.value, template, tensors))
        if fast.workers is not None:
            self.workers = fast.workers

    # -- the trace -----------------------------------------------------------------------------
    def trace(self, results: Sequence[Any]) -> Trace:
        if self.failure is not None:
            raise NotReplayable(self.failure)
        ranges: list[tuple[int, int, Any]] = []  # (start, end, owner)
        inputs = {id(a): k for k, a in enumerate(self.args) if isinstance(a, np.ndarray)}
        for owner in [*(a for a in self.args if isinstance(a, np.ndarray)), *self.constants, *self.buffers]:
            array = owner.buffer if isinstance(owner, Storage) else owner
            start = data_pointer(array)
            ranges.append((start, start + (owner.capacity if isinstance(owner, Storage) else array.nbytes), owner))
        ranges.sort(key=lambda r: r[0])
        for (_, end, _), (start, _, _) in itertools.pairwise(ranges):
            if start < end:  # arguments that overlap: which one a pointer is in would be a guess
                raise NotReplayable("buffers overlap")
        starts = [r[0] for r in ranges]

        def owner_of(array: np.ndarray) -> tuple[Any, int]:
            p = data_pointer(array)
            k = bisect.bisect_right(starts, p) - 1
            while k >= 0 and ranges[k][0] <= p:
                start, end, owner = ranges[k]
                if p < end or (p == end and array.nbytes == 0):
                    return owner, p - start
                k -= 1
            raise NotReplayable("a kernel reads or writes a buffer the run did not allocate")

        fresh: dict[int, int] = {}  # id(owner) -> bases index of its per-call buffer
        sizes: list[int] = []
        n_args = len(self.args)

        def base_of(owner: Any) -> int | None:
            if id(owner) in inputs:
                return inputs[id(owner)]
            return fresh.get(id(owner))

        outputs: list[_Result] = []
        for value in results:
            if not isinstance(value, np.ndarray):
                if value.__class__ is not int:
                    raise NotReplayable(f"a result of type {type(value).__name__}")
                outputs.append(_Result(-1, 0, value))
                continue
            owner, offset = owner_of(value)
            if any(owner is c for c in self.constants):
                outputs.append(_Result(-1, 0, value))
                continue
            if id(owner) not in inputs and id(owner) not in fresh:
                fresh[id(owner)] = n_args + len(sizes)
                sizes.append(owner.capacity if isinstance(owner, Storage) else owner.nbytes)
            outputs.append(_Result(base_of(owner), offset, (value.shape, value.dtype, value.strides)))
        table: list[int] = [len(self.launches), max((len(t) for _, t, _ in self.launches), default=1)]
        for function, template, tensors in self.launches:
            patches: list[int] = []
            for slot, array in tensors:
                owner, offset = owner_of(array)
                base = base_of(owner)
                if base is None:  # a constant or a storage the trace owns: its address now
                    template[slot] = data_pointer(array)
                else:
                    patches += [slot, base, offset]
            table += [function, len(template), len(patches) // 3, *template, *patches]
        return Trace(np.array(table, np.int64), n_args, sizes, outputs, self.buffers, self.workers)


class Trace:
    """A recorded run for one signature: the launch table, the buffers it owns, how to
    build the results."""

    def __init__(self, table: np.ndarray, n_args: int, fresh_sizes: list[int], outputs: list[_Result],
                 owned: list[Any], workers: Any):
        self.table = table
        self.fresh_sizes = fresh_sizes
        self.outputs = outputs
        self.owned = owned  # the storages whose addresses the table holds, alive as long as it is
        self.workers = workers  # the workers a split launch's header names (None: no split)
        self.bases = np.zeros(n_args + len(fresh_sizes), np.int64)
        self.nbytes = sum(b.capacity if isinstance(b, Storage) else b.nbytes for b in owned)
        self.lock = threading.Lock()  # one replay at a time writes `bases`

    def run(self, args: Sequence[Any]) -> list[Any]:
        bases = self.bases
        for k, a in enumerate(args):
            if a.__class__ is np.ndarray:
                bases[k] = data_pointer(a)
        fresh = [aligned_bytes(n, ALIGNMENT) for n in self.fresh_sizes]
        n_args = len(args)
        for j, buffer in enumerate(fresh):
            bases[n_args + j] = data_pointer(buffer)
        _replay_function()(data_pointer(self.table), data_pointer(bases))
        results = []
        for r in self.outputs:
            if r.base < 0:
                results.append(r.value)
                continue
            shape, dtype, strides = r.value
            buffer = args[r.base] if r.base < n_args else fresh[r.base - n_args]
            results.append(np.ndarray(shape, dtype, buffer, r.offset, strides))
        return results


class Replays:
    """Per function: whether it is traceable, how often each signature ran, the traces."""

    def __init__(self, functions: Sequence[Any]):
        self.enabled = os.environ.get("NIMBLE_REPLAY", "1") != "0"
        self.traceable = [traceable(f.code) for f in functions]
        self.seen: list[dict[tuple, int]] = [{} for _ in functions]
        self.traces: list[OrderedDict[tuple, Trace | None]] = [OrderedDict() for _ in functions]
        self.lock = threading.Lock()

    def lookup(self, index: int, args: Sequence[Any]) -> tuple[tuple | None, Trace | None]:
        """(the signature if this call should record, the trace if it can replay)."""
        if not (self.enabled and self.traceable[index]):
            return None, None
        key = signature(args)
        if key is None:
            return None, None
        with self.lock:
            traces = self.traces[index]
            if key in traces:
                traces.move_to_end(key)
                return None, traces[key]  # None: recorded, not replayable
            seen = self.seen[index]
            count = seen.get(key, 0) + 1
            if count < 2:
                if len(seen) > 4 * MAX_TRACES:
                    seen.clear()
                seen[key] = count
                return None, None
            seen.pop(key, None)
            return key, None

    def keep(self, index: int, key: tuple, trace: Trace | None) -> None:
        """Keep `trace` for `key` (None: that signature runs on the VM), dropping the least
        recently used ones past `MAX_TRACES` or `MAX_OWNED_BYTES`."""
        if trace is not None and trace.nbytes > MAX_OWNED_BYTES:
            trace = None
        with self.lock:
            traces = self.traces[index]
            traces[key] = trace
            while len(traces) > MAX_TRACES or sum(t.nbytes for t in traces.values() if t) > MAX_OWNED_BYTES:
                traces.popitem(last=False)
