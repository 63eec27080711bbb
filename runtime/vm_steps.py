"""The VM's instructions: `Steps._i_<mnemonic>(fields)` makes the closure that runs one
instruction on a register file (`VirtualMachine._decode` calls `_step` for each), and
`_alloc_private` / `_alloc_private_reg` fuse an allocation pair into one step. A step
returns None to fall through, a jump target, `RETURN` or `CALL`; an error inside a step
raises `Fatal`, which the VM's loop reports as a `VMError` naming the function and the
instruction. `Steps` is a part of `VirtualMachine` (runtime/vm.py), whose state
(`program`, `storage`, `per_thread`, `kernels`, `host_functions`, `opencl`, ...) its
steps read.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.dialects.builtin import SymbolRefAttr

from nimble.dialects import vm
from nimble.dialects.device import NATIVE_KERNEL, Device
from nimble.dialects.dynshape import failure_message
from nimble.dialects.graph.adt import AdtValue
from nimble.dialects.graph.control import truth
from nimble.dialects.index_semantics import INDEX_BINARY, INDEX_COMPARISONS
from nimble.errors import RunError
from nimble.runtime.allocator import MemoryLimit, Storage
from nimble.runtime.bytecode import BytecodeError, dtype_of
from nimble.runtime.opencl import ClStorage, ClTensor

RETURN = -1
CALL = -2
"""What a step returns besides None (fall through) and a jump target: the function
returns (its results in `r[RESULTS]`), or calls (the call in `r[CALLEE]`)."""


RESULTS, CALLEE = -1, -2
"""The two registers past a function's own: its results, and its pending call
(function index, arguments, destination registers, whether a closure's)."""


PRIVATE_MAX_BYTES = 1 << 14
"""Largest tensor whose private storage is a plain array (`_alloc_private`): numpy
aligns its allocations to 16 bytes, not the 64 of a pool storage; that matters only to
the speed of larger tensors (kernels make no alignment assumptions)."""


class VMError(RunError):
    """A program stopped with an error (message names the function and instruction)."""


@dataclass(frozen=True)
class Closure:
    function: int
    captured: tuple[Any, ...]


class Fatal(Exception):
    pass


def int_register(v: Any) -> int:
    if isinstance(v, bool | np.bool_) or not isinstance(v, int | np.integer):
        raise Fatal(f"expected an integer register, got {type(v).__name__}")
    return int(v)


# Index arithmetic on Python ints, as `dialects/index_semantics.py` defines it (values of
# other types raise TypeError, division by zero ZeroDivisionError: both are reported as a
# VMError; allocation converts sizes with `int_register`).
INDEX_STEPS: dict[str, Callable[[Any, Any], Any]] = {name: INDEX_BINARY[op] for name, op in vm.BINARY_OPS.items()}


def tensors_in_words(holders: list[tuple[int, tuple]], r: list[Any]) -> str:
    """The tensors of `holders` (alloc_tensor / alloc_tensor_reg instructions) in words,
    their dims read from the registers `r`."""
    words = []
    for opcode, values in holders:
        dtype, dims = values[3], values[4]
        if opcode == vm.Opcode.ALLOC_TENSOR_REG:
            dims = [r[d] for d in dims]
        words.append(f"{dtype}{list(dims)}")
    return ", ".join(words) or "no tensor"


def outlined_op(function: Any) -> Any | None:
    """The op a host function outlines (`to_vm`'s `host_function`: the op on the
    function's arguments, then a return of its results), or None."""
    from xdsl.dialects import func

    ops = list(function.body.block.ops)
    if len(ops) != 2 or not isinstance(ops[1], func.ReturnOp):
        return None
    op = ops[0]
    if list(ops[1].operands) != list(op.results) or list(op.operands) != list(function.body.block.args):
        return None
    return op


def native_kernel_of(function: Any) -> str | None:
    """The kernel a host function's op runs on the CPU (`device.NATIVE_KERNEL`), if any."""
    attr = function.attributes.get(NATIVE_KERNEL)
    return attr.root_reference.data if isinstance(attr, SymbolRefAttr) else None


def native_op(function: Any, kernels: dict[str, Any]) -> tuple[str, Any, Any] | None:
    """(device, op, run) when a host function outlines one op with an implementation of
    its own where it is placed: on OpenCL (`runtime.opencl_vision`: `run(runtime, op,
    args)`) or on the CPU by its kernel, of `kernels` (`runtime.cpu_vision`: `run(op,
    args)`); None otherwise, when the reference runs it."""
    from nimble.dialects.device import placement_of

    op = outlined_op(function)
    if op is None:
        return None
    where = placement_of(op) or Device.CPU
    run = None
    if where == Device.OPENCL:
        from nimble.runtime.opencl_vision import device_ops

        run = device_ops().get(type(op))
    elif where == Device.CPU:
        from nimble.runtime.cpu_vision import cpu_op

        run = cpu_op(op, kernels.get(native_kernel_of(function)))
    return (where, op, run) if run is not None else None


class Steps:
    """The instructions' closures (a part of `VirtualMachine`)."""

    def _alloc_private(self, storage_fields: tuple, tensor_fields: tuple, after: int):
        """`alloc_storage s` then `alloc_tensor t` at offset 0 of `s`, where nothing else
        touches `s` (`private_tensor_storages`): the tensor becomes a fresh array of its
        own (~5x cheaper than a pool storage and a view of it), with the same checks and
        statistics; then the step jumps past the `alloc_tensor` (to step `after`)."""
        storage, tensor = self._i_alloc_storage(*storage_fields), self._i_alloc_tensor(*tensor_fields)
        _, size, _, device = storage_fields
        dst, _, _, dtype, shape = tensor_fields
        dt, shape = dtype_of(dtype), tuple(shape)
        nbytes = int(np.prod(shape, dtype=object)) * dt.itemsize
        shared, local = self.storage, self.per_thread

        def step(r):
            if self.max_steps is not None:
                self.steps += 1  # the alloc_tensor, counted like any instruction
            n = r[size]
            if n.__class__ is not int or n < nbytes:
                storage(r)
                tensor(r)  # the error it makes
                return after
            r[dst] = (local.pool or shared).private(np.empty(shape, dt), n)
            return after
        return step if device == Device.CPU and nbytes <= PRIVATE_MAX_BYTES else storage

    def _alloc_private_reg(self, storage_fields: tuple, tensor_fields: tuple, after: int):
        """`_alloc_private` for a tensor whose dims are registers (`alloc_tensor_reg` at a
        register holding 0): a fresh array when its dims are plain ints and it is small
        (`PRIVATE_MAX_BYTES`), else the two instructions in one step. The ONNX MLP at
        batch 1, its two layers' allocations (the steps alone, min of 9 x 20,000 calls;
        pool storages not reused): 6.2 -> 3.0 us."""
        storage, tensor = self._i_alloc_storage(*storage_fields), self._i_alloc_tensor_reg(*tensor_fields)
        _, size, _, device = storage_fields
        dst, _, _, dtype, dims = tensor_fields
        dt = dtype_of(dtype)
        itemsize = dt.itemsize
        shared, local = self.storage, self.per_thread

        def step(r):
            if self.max_steps is not None:
                self.steps += 1  # the alloc_tensor_reg, counted like any instruction
            n = r[size]
            shape = tuple([r[d] for d in dims])
            nbytes = itemsize
            for d in shape:
                if d.__class__ is not int or d < 0:
                    nbytes = -1
                    break
                nbytes *= d
            if n.__class__ is int and 0 <= nbytes <= min(n, PRIVATE_MAX_BYTES):
                r[dst] = (local.pool or shared).private(np.empty(shape, dt), n)
            else:  # larger, or a value the checks of the instructions report
                storage(r)
                tensor(r)
            return after
        return step if device == Device.CPU else storage

    def _step(self, opcode: int, values: tuple[Any, ...]) -> Callable[[list[Any]], int | None]:
        """The closure running one instruction (`_i_<mnemonic>` makes it)."""
        name = vm.INSTRUCTIONS[opcode][0]
        if name in INDEX_STEPS:
            return self._binary(name, *values)
        return getattr(self, f"_i_{name}")(*values)

    @staticmethod
    def _binary(name: str, dst: int, lhs: int, rhs: int):
        fn = INDEX_STEPS[name]

        def step(r):
            r[dst] = fn(r[lhs], r[rhs])
        return step

    def _i_move(self, dst, src):
        def step(r):
            r[dst] = r[src]
        return step

    def _i_ret(self, values):
        def step(r):
            r[RESULTS] = [r[v] for v in values]
            return RETURN
        return step

    def _i_invoke(self, dsts, callee, args):
        def step(r):
            r[CALLEE] = (callee, [r[a] for a in args], dsts, False)
            return CALL
        return step

    def _i_invoke_closure(self, dsts, closure, args):
        def step(r):
            c = r[closure]
            if not isinstance(c, Closure):
                raise Fatal(f"r{closure} is not a closure")
            r[CALLEE] = (c.function, [*c.captured, *(r[a] for a in args)], dsts, True)
            return CALL
        return step

    def _i_invoke_kernel(self, kernel, inputs, outputs):
        entry = self.kernels[kernel]
        if entry is None:
            name = self.program.kernels[kernel].name
            raise BytecodeError(f"kernel '{name}' implements a host op: it is not launched")
        if len(inputs) + len(outputs) != entry.arity:
            raise BytecodeError(f"kernel '{entry.name}' takes {entry.arity} arguments, got {len(inputs) + len(outputs)}")
        host = self.run_host
        local = self.per_thread

        def step(r):
            if self.profile is not None:
                entry.ready()  # (a first launch's JIT is not the kernel's time)
                t = time.perf_counter()
                entry.launch([r[i] for i in inputs], [r[o] for o in outputs], self.threads, self.pool, host)
                entry.finish()  # device launches are asynchronous: time them whole
                self.profile.setdefault(entry.name, []).append(time.perf_counter() - t)
                return None
            if local.recording is not None:
                return record(r)
            entry.launch([r[i] for i in inputs], [r[o] for o in outputs], self.threads, self.pool, host)

        def record(r):
            """A launch of a recorded run: the fast-path spec it took or made (`entry._fast`,
            which the recording checks is this launch's)."""
            ins, outs = [r[i] for i in inputs], [r[o] for o in outputs]
            entry.launch(ins, outs, self.threads, self.pool, host)
            local.recording.launched(entry._fast if entry.device == Device.CPU else None, ins, outs, self.threads)
        return step

    def _i_invoke_host(self, dsts, host, args):
        function = self.host_functions[host]
        native = native_op(function, self.native_kernels)
        if native is not None and native[0] == Device.OPENCL:
            _, op, run = native
            runtime = self.device_runtime()

            def device_step(r):
                values = [r[a] for a in args]
                if not all(isinstance(v, ClTensor) for v in values):
                    raise Fatal(f"'{op.name}' placed on OpenCL was given a tensor in host memory")
                t = time.perf_counter() if self.profile is not None else 0.0
                try:
                    results = run(runtime, op, values)
                except ValueError as e:
                    raise Fatal(str(e)) from None
                if self.profile is not None:
                    self.profile.setdefault(f"{op.name} (opencl)", []).append(time.perf_counter() - t)
                for d, v in zip(dsts, results):
                    r[d] = v
            return device_step
        if native is not None:
            _, op, run = native

            def native_step(r):
                values = [r[a] for a in args]
                t = time.perf_counter() if self.profile is not None else 0.0
                results = run(op, values)
                if results is None:  # arguments it does not take (in device memory): as the reference
                    results = self.run_host(function, values)
                elif self.profile is not None:
                    self.profile.setdefault(f"{op.name} (cpu)", []).append(time.perf_counter() - t)
                for d, v in zip(dsts, results):
                    r[d] = v
            return native_step

        def step(r):
            results = self.run_host(function, [r[a] for a in args])
            for d, v in zip(dsts, results):
                r[d] = v
        return step

    def _i_alloc_storage(self, dst, size, alignment, device):
        shared, local = self.storage, self.per_thread
        if device != Device.CPU:
            opencl = self.device_runtime()

            def on_device(r):
                r[dst] = opencl.alloc(int_register(r[size]))
            return on_device

        holders = self._holders.get(dst, [])

        def step(r):
            try:
                r[dst] = (local.pool or shared).alloc(int_register(r[size]), alignment)
            except MemoryLimit as e:
                raise Fatal(f"{e}; it would hold {tensors_in_words(holders, r)}") from None
        return step

    def device_runtime(self) -> Any:
        """The OpenCL runtime (of the kernels, or the default device for copies alone)."""
        from nimble.runtime.opencl import OpenCLRuntime

        if self.opencl is not None:
            return self.opencl.runtime
        return OpenCLRuntime.get(self.opencl_device)

    def _i_alloc_tensor(self, dst, storage, offset, dtype, shape):
        dt = dtype_of(dtype)
        shape = tuple(shape)
        nbytes = int(np.prod(shape, dtype=object)) * dt.itemsize

        def step(r):
            s = r[storage]
            if not isinstance(s, Storage | ClStorage) or offset + nbytes > s.size:
                raise Fatal(f"a {dtype}{list(shape)} tensor at offset {offset} does not fit in r{storage}")
            r[dst] = np.ndarray(shape, dt, s.buffer, offset) if s.__class__ is Storage else ClTensor(s, offset, shape, dt)
        return step

    def _i_alloc_tensor_reg(self, dst, storage, offset, dtype, dims):
        dt = dtype_of(dtype)
        itemsize = dt.itemsize

        def step(r):
            s = r[storage]
            shape = tuple([r[d] for d in dims])
            at = r[offset]
            if s.__class__ is Storage and at.__class__ is int and all(d.__class__ is int and d >= 0 for d in shape):
                # The common case (host storage, plain int dims) without the general checks.
                n = itemsize
                for d in shape:
                    n *= d
                if at < 0 or at + n > s.size:
                    raise Fatal(f"a {dtype}{list(shape)} tensor at offset {at} does not fit in r{storage}")
                r[dst] = np.ndarray(shape, dt, s.buffer, at)
                return
            general(r, s)

        def general(r, s):
            shape = tuple(int_register(r[d]) for d in dims)
            at = int_register(r[offset])
            if any(d < 0 for d in shape):
                raise Fatal(f"negative dim in tensor shape {shape}")
            n = 1
            for d in shape:
                n *= d
            on_device = None  # the device storage, for a tensor in device memory
            if isinstance(s, np.ndarray | ClTensor) and s.dtype != dt:  # a view of a tensor (device.view)
                raise Fatal(f"a {dtype} view of a {s.dtype} tensor")
            if isinstance(s, np.ndarray):
                buffer = s if s.flags.c_contiguous else np.ascontiguousarray(s)
                size = buffer.nbytes
            elif isinstance(s, Storage):
                buffer, size = s.buffer, s.size
            elif isinstance(s, ClTensor):
                on_device, base, size = s.storage, s.offset, s.nbytes
            elif isinstance(s, ClStorage):
                on_device, base, size = s, 0, s.size
            else:
                raise Fatal(f"r{storage} is neither storage nor a tensor")
            if at < 0 or at + n * dt.itemsize > size:
                raise Fatal(f"a {dtype}{list(shape)} tensor at offset {at} does not fit in r{storage}")
            r[dst] = np.ndarray(shape, dt, buffer, at) if on_device is None else ClTensor(on_device, base + at, shape, dt)
        return step

    def _i_alloc_adt(self, dst, constructor, fields):
        name = self.program.constructors[constructor][0]

        def step(r):
            r[dst] = AdtValue(name, tuple(r[f] for f in fields))
        return step

    def _i_alloc_tuple(self, dst, fields):
        def step(r):
            r[dst] = tuple(r[f] for f in fields)
        return step

    def _i_alloc_closure(self, dst, callee, captured):
        def step(r):
            r[dst] = Closure(callee, tuple(r[c] for c in captured))
        return step

    def _i_get_field(self, dst, src, index):
        def step(r):
            v = r[src]
            fields = v.fields if isinstance(v, AdtValue) else v
            if not isinstance(fields, tuple) or not 0 <= index < len(fields):
                raise Fatal(f"r{src} has no field {index}")
            r[dst] = fields[index]
        return step

    def _i_get_tag(self, dst, src):
        tags = self.tags

        def step(r):
            v = r[src]
            if not isinstance(v, AdtValue) or v.constructor not in tags:
                raise Fatal(f"r{src} is not a value of a known constructor")
            r[dst] = tags[v.constructor]
        return step

    def _i_if(self, cond, then, else_):
        def step(r):
            c = r[cond]
            return then if (c if isinstance(c, bool) else truth(c)) else else_
        return step

    def _i_goto(self, target):
        return lambda r: target

    def _i_load_const(self, dst, constant):
        value = self.program.constants[constant]

        def step(r):
            r[dst] = value
        return step

    def _i_load_consti(self, dst, value):
        def step(r):
            r[dst] = value
        return step

    def _i_shape_of(self, dst, src):
        def step(r):
            r[dst] = tuple(r[src].shape)
        return step

    def _i_dim(self, dst, src, axis):
        def step(r):
            shape = r[src].shape
            if not 0 <= axis < len(shape):
                raise Fatal(f"dim {axis} of a rank-{len(shape)} tensor")
            r[dst] = shape[axis]
        return step

    def _i_make_shape(self, dst, dims):
        def step(r):
            r[dst] = tuple(int_register(r[d]) for d in dims)
        return step

    def _i_reshape_tensor(self, dst, src, shape):
        def step(r):
            r[dst] = r[src].reshape(r[shape])
        return step

    def _i_device_copy(self, dst, src, src_device, dst_device):
        if src_device == dst_device:
            def same(r):
                v = r[src]
                r[dst] = np.array(v, copy=True) if isinstance(v, np.ndarray) else v
            return same
        opencl = self.device_runtime()
        constants = {id(c): c for c in self.program.constants}
        resident = self.resident_constants
        label = f"copy {src_device} -> {dst_device}"

        def step(r):
            t = time.perf_counter() if self.profile is not None else 0.0
            v = r[src]
            if dst_device == Device.CPU:
                if not isinstance(v, ClTensor):
                    raise Fatal(f"device_copy from {src_device}: r{src} is not in {src_device} memory")
                out = opencl.to_host(v)
            elif constants.get(id(v)) is v:
                # The program's constants never change: each goes to the device once.
                if id(v) not in resident:
                    resident[id(v)] = opencl.to_device(v)
                out = resident[id(v)]
            elif isinstance(v, ClTensor):
                # An argument the caller keeps on the device (`Executable.to_device`): no
                # copy. Safe to share: no kernel writes into a copy's buffer, and a kill
                # does not return a tensor's storage to the pool.
                if v.storage.runtime is not opencl:
                    raise Fatal(f"device_copy to {dst_device}: r{src} is in the memory of another OpenCL device")
                out = v
            else:
                if not isinstance(v, np.ndarray):
                    raise Fatal(f"device_copy from cpu: r{src} is not a host tensor")
                out = opencl.to_device(v)
            r[dst] = out
            if self.profile is not None:
                opencl.queue.finish()  # a copy to the device is asynchronous: time it whole
                self.profile.setdefault(label, []).append(time.perf_counter() - t)
        return step

    def _i_fatal(self, message, values):
        text = self.program.strings[message]

        def step(r):
            raise VMError(failure_message(text, [r[v] for v in values]))
        return step

    def _i_kill(self, src):
        shared, local = self.storage, self.per_thread

        def step(r):
            v = r[src]
            if isinstance(v, Storage):
                (local.pool or shared).free(v)
            elif isinstance(v, ClStorage):
                v.runtime.release(v)
            r[src] = None
        return step

    def _i_cmp(self, dst, predicate, lhs, rhs):
        fn = INDEX_COMPARISONS[predicate]  # vm.cmp predicates are arith.cmpi's

        def step(r):
            r[dst] = fn(r[lhs], r[rhs])
        return step

    def _i_select(self, dst, cond, a, b):
        def step(r):
            r[dst] = r[a] if r[cond] else r[b]
        return step

    def _i_not(self, dst, src):
        def step(r):
            r[dst] = not r[src]
        return step
