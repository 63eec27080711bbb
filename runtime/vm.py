"""The Nimble virtual machine: a register machine running a bytecode `Program`.

Loading pre-decodes every instruction into a Python closure over its fields, so the
dispatch loop is `next = code[pc](regs)`: a closure returns None to fall through, a
jump target, `RETURN` or `CALL`. Calls are frames on a list, not Python frames
(`MAX_DEPTH` deep at most). Values in registers are numpy arrays (tensors), ints and
bools (index, i1), tuples (shapes, tuples), `AdtValue`s, `Closure`s and `Storage`s. Kernels run through `KernelEntry`
(checked launches); host functions (CPU fallbacks, and a kernel's group when its
inputs are empty) through the reference interpreter.

Errors in a running program (a failed shape check, a kernel launch with bad shapes, a
wrong value in a register of a hand-written module) raise `VMError` naming the
function and instruction.
"""

from __future__ import annotations

import functools
import os
import threading
import time
from collections.abc import Callable, Collection, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np

from nimble.dialects import vm
from nimble.dialects.graph.adt import AdtValue
from nimble.dialects.graph.control import truth
from nimble.dialects.shape import failure_message
from nimble.dialects.index_semantics import INDEX_BINARY, INDEX_COMPARISONS
from nimble.runtime.allocator import MemoryLimit, Storage, StoragePool
from nimble.runtime.bytecode import SIGNATURE_OF, BytecodeError, Function, Program, dtype_of
from nimble.runtime.kernels import KernelEntry, LaunchError, check_launches
from nimble.runtime.opencl import ClStorage, ClTensor
from nimble.runtime.recurrence import RecurrenceEntry, holds_recurrence
from nimble.runtime.replay import NotReplayable, Recording, Replays
from nimble.runtime.workers import current as current_workers
from nimble.runtime.workers import workers

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
MAX_DEPTH = 100_000
"""Deepest VM call nesting (calls are frames on a list, not Python frames: a deeper
nesting is a runaway recursion, refused with an error)."""


def private_tensor_storages(code: Sequence[tuple[int, tuple]], alloc_storage: int, alloc_tensor: int,
                            alloc_tensor_reg: int = -1, zeros: Collection[int] = ()) -> list[int]:
    """The positions of `alloc_storage s` followed by `alloc_tensor t, s, 0` (or by
    `alloc_tensor_reg t, s, z` with `z` one of the registers `zeros`, which hold 0 from
    the call's start) where no other instruction names `s` and nothing jumps to the
    tensor's instruction: the storage is the tensor's alone."""
    mentions: dict[int, int] = {}
    targets: set[int] = set()
    for opcode, values in code:
        for (_, kind), value in zip(vm.INSTRUCTIONS[opcode][2], values):
            if kind is vm.Kind.REG:
                mentions[value] = mentions.get(value, 0) + 1
            elif kind is vm.Kind.REGS:
                for v in value:
                    mentions[v] = mentions.get(v, 0) + 1
            elif kind is vm.Kind.TARGET:
                targets.add(value)
    found = []
    for pc, ((op, first), (next_op, second)) in enumerate(zip(code, code[1:])):
        at_zero = (next_op == alloc_tensor and second[2] == 0) or (next_op == alloc_tensor_reg and second[2] in zeros)
        if op == alloc_storage and at_zero and second[1] == first[0] and mentions[first[0]] == 2 \
                and pc + 1 not in targets:
            found.append(pc)
    return found


def constant_registers(code: Sequence[tuple[int, tuple]], params: Sequence[int], load_const: int,
                       load_consti: int) -> dict[int, int]:
    """{position: register} of the `load_const`/`load_consti` instructions whose register
    nothing else writes (no other instruction's `dst`/`dsts`, not a parameter, never
    killed): the register can hold its value from the call's start, and the
    instruction need not run (`VirtualMachine._decode`)."""
    writes: dict[int, int] = {}  # register -> instructions writing it
    never = set(params)
    loads: dict[int, int] = {}
    for pc, (opcode, values) in enumerate(code):
        mnemonic, _, fields = vm.INSTRUCTIONS[opcode]
        for (name, _), value in zip(fields, values):
            for r in (value if name == "dsts" else [value] if name == "dst" else []):
                writes[r] = writes.get(r, 0) + 1
        if mnemonic == "kill":
            never.add(values[0])
        if opcode in (load_const, load_consti):
            loads[pc] = values[0]
    return {pc: r for pc, r in loads.items() if writes[r] == 1 and r not in never}


class VMError(Exception):
    """A program stopped with an error (message names the function and instruction)."""


@dataclass(frozen=True)
class Closure:
    function: int
    captured: tuple[Any, ...]


class _Fatal(Exception):
    pass


def _int(v: Any) -> int:
    if isinstance(v, bool | np.bool_) or not isinstance(v, int | np.integer):
        raise _Fatal(f"expected an integer register, got {type(v).__name__}")
    return int(v)


# Index arithmetic on Python ints, as `dialects/index_semantics.py` defines it (values of
# other types raise TypeError, division by zero ZeroDivisionError: both are reported as a
# VMError; allocation converts sizes with `_int`).
_BINARY: dict[str, Callable[[Any, Any], Any]] = {name: INDEX_BINARY[op] for name, op in vm.BINARY_OPS.items()}


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


def native_op(function: Any) -> tuple[str, Any, Any] | None:
    """(device, op, run) when a host function outlines one op with an implementation of
    its own where it is placed: on OpenCL (`runtime.opencl_vision`: `run(runtime, op,
    args)`) or on the CPU for the operand types it takes (`runtime.cpu_vision`: `run(op,
    args)`); None otherwise, when the reference runs it."""
    from nimble.dialects.device import placement_of

    op = outlined_op(function)
    if op is None:
        return None
    where = placement_of(op) or "cpu"
    run = None
    if where == "opencl":
        from nimble.runtime.opencl_vision import device_ops

        run = device_ops().get(type(op))
    elif where == "cpu":
        from nimble.runtime.cpu_vision import cpu_op

        run = cpu_op(op)
    return (where, op, run) if run is not None else None


def _tensors(holders: list[tuple[int, tuple]], r: list[Any]) -> str:
    """The tensors of `holders` (alloc_tensor / alloc_tensor_reg instructions) in words,
    their dims read from the registers `r`."""
    words = []
    for opcode, values in holders:
        dtype, dims = values[3], values[4]
        if opcode == vm.OPCODES["alloc_tensor_reg"]:
            dims = [r[d] for d in dims]
        words.append(f"{dtype}{list(dims)}")
    return ", ".join(words) or "no tensor"


class _PerThread(threading.local):
    recording: Recording | None = None
    pool: StoragePool | None = None


class VirtualMachine:
    """Runs the functions of one program."""

    def __init__(self, program: Program, code: Any, threads: int | None = None, base_dir: str = ".",
                 opencl: Any = None, opencl_device: str | None = None):

        self.program = program
        self.code = code  # the CPU kernels' machine code (`llvm_jit.KernelCode`), alive as long as the VM
        self.checked = bool(getattr(code, "checked", False))  # (compiled with bounds checks; tests pass dicts)
        self.threads = max(1, threads if threads is not None else min(2, os.cpu_count() or 1))
        self.pool = ThreadPoolExecutor(max_workers=self.threads - 1) if self.threads > 1 else None
        self.storage = StoragePool()
        self.per_thread = _PerThread()
        """This thread's run being recorded, if any, and its storage pool (`_record`)."""
        self.opencl = opencl  # the OpenCL kernels (`runtime.opencl.OpenCLModule`), if any
        self.opencl_device = opencl_device
        self.resident_constants: dict[int, ClTensor] = {}  # program constants copied to the device
        copy = vm.OPCODES["device_copy"]
        self.device_values = bool(program.device_kernels) or any(op == copy for f in program.functions
                                                                  for op, _ in f.code)
        """Whether registers can hold device tensors (only then do host calls check for them)."""
        self.host_functions = []
        self.interpreter = None
        self.signatures: dict[str, tuple[Any, list[str], dict[str, str]]] = {}
        self.argument_checks: dict[str, Any] = {}  # SignatureCheck per entry, built on first call
        self.kernels: list[KernelEntry] = []
        self.tags = {name: tag for name, tag in program.constructors}
        self.index = {f.name: i for i, f in enumerate(program.functions)}
        try:
            self._load_host(program, base_dir, code)
        except BytecodeError:
            raise
        except Exception as e:  # noqa: BLE001 (whatever a malformed section makes fail)
            raise BytecodeError(f"host functions section: {type(e).__name__}: {e}") from None
        self.splits = self.threads > 1 and any(k.parallel for k in self.kernels)
        """Whether a launch may run in chunks on the workers (held awake during a run)."""
        self.split_last_run = False
        """Whether the last run split a launch: the next one wakes the workers first."""
        self.profile: dict[str, list[float]] | None = None
        self.steps = 0
        self.max_steps: int | None = None
        self.entries: list[tuple[list[Callable[[list[Any]], int | None]], list[Any], list[int]]] = []
        """Per function, its steps (one closure per instruction, `_decode`), the register
        file a call starts from (constants in place) and its parameters' registers."""
        self.origins: list[list[int]] = []
        """Per function, each step's instruction (its position in the function's code)."""
        for f in program.functions:
            steps, registers, origins = self._decode(f)
            self.entries.append((steps, registers, list(f.params)))
            self.origins.append(origins)
        self.replays = Replays(program.functions)
        """Calls of a signature seen before replay their launches (`runtime.replay`)."""

    def _load_host(self, program: Program, base_dir: str, code: Any) -> None:
        """Parse the host functions (CPU fallbacks, kernel groups, signatures) and bind
        the kernels, checking each against its group."""
        from xdsl.dialects import func

        from nimble.api import parse
        from nimble.reference import Interpreter

        if program.host_text:
            host_module = program.host_module or parse(program.host_text, "<host functions>")
            self.interpreter = Interpreter(host_module, base_dir)
            for op in host_module.ops:
                if SIGNATURE_OF in op.attributes:
                    of = op.attributes[SIGNATURE_OF].data
                    names = [a.data for a in op.attributes[vm.ARG_NAMES].data]
                    dims = op.attributes.get(vm.DIM_NAMES)
                    dim_names = {k: v.data for k, v in dims.data.items()} if dims is not None else {}
                    inputs = op.function_type.inputs.data
                    if of not in self.index or len(inputs) != len(names) \
                            or len(inputs) != len(program.functions[self.index[of]].params):
                        raise BytecodeError(f"signature of '{of}' does not match the function")
                    self.signatures[of] = (op.function_type, names, dim_names)
        for name in program.hosts:
            function = self.interpreter.functions.get(name) if self.interpreter else None
            if not isinstance(function, func.FuncOp) or function.is_declaration:
                raise BytecodeError(f"host function '{name}' is not in the host functions section")
            self.host_functions.append(function)
        for k in program.kernels:
            if k.device == "opencl":
                if self.opencl is None or k.name not in self.opencl.sources:
                    raise BytecodeError(f"OpenCL kernel '{k.name}' is not in the device kernels")
                entry = self.opencl.entry(k.name, self.host_functions[k.group], k.variant, k.work)
                if entry.abi != k.abi:
                    raise BytecodeError(f"kernel '{k.name}' was compiled for other argument types than its group has")
                self.kernels.append(entry)
                continue
            if k.name not in code:
                raise BytecodeError(f"kernel '{k.name}' is not in the object code")
            group = self.host_functions[k.group]
            kind = RecurrenceEntry if holds_recurrence(group) else KernelEntry
            entry = kind(k.name, functools.partial(code.address, k.name), group, k.parallel, k.variant, k.work)
            if not entry.fit(k.abi):
                raise BytecodeError(f"kernel '{k.name}' was compiled for other argument types than its group has")
            if code.checked:
                check_launches(entry)
            self.kernels.append(entry)

    # -- running -------------------------------------------------------------------------
    def check_arguments(self, name: str, args: Sequence[Any]) -> None:
        """Arguments against the source signature of function `name` (when known)."""
        check = self.argument_checks.get(name)
        if check is None:
            from nimble.reference import InterpreterError, SignatureCheck

            if name not in self.index:
                raise InterpreterError(f"the module has no function @{name}")
            if name not in self.signatures:
                return
            signature, names, _ = self.signatures[name]
            # A program with device kernels may take arguments in device memory
            # (`Executable.to_device`): a kernel or host function that cannot read one
            # says so when it gets one.
            check = self.argument_checks[name] = SignatureCheck(name, signature.inputs.data, names,
                                                                on_device=self.opencl is not None)
        check(args)

    def invoke(self, name: str, args: Sequence[Any]) -> list[Any]:
        index = self.index.get(name)
        if index is None:
            raise VMError(f"the module has no function @{name}")
        args = list(args)
        if self.profile is None and self.max_steps is None and self.per_thread.recording is None \
                and not self.checked:  # (a replayed run skips the bounds checks)
            key, trace = self.replays.lookup(index, args)
            if trace is not None and (trace.workers is None or trace.workers is current_workers()) \
                    and trace.lock.acquire(blocking=False):
                try:
                    return self._held(lambda: trace.run(args), trace.workers is not None)
                finally:
                    trace.lock.release()
            if key is not None:
                return self._record(index, key, args)
        return self._held(lambda: self.call(index, args, 0))

    def _held(self, run: Callable[[], list[Any]], splits: bool | None = None) -> list[Any]:
        """`run()` with the workers held awake (`Workers.hold`) if it may split a launch,
        and woken first when the last run split."""
        native = workers(self.threads - 1) if self.splits else None
        if native is None:
            return run()
        if not native.may_split():  # (a loaded machine: the workers stay parked)
            try:
                return run()
            finally:
                native.ran()
        native.hold(1, self.split_last_run)
        launches = native.launches
        try:
            return run()
        finally:
            self.split_last_run = splits if splits is not None else native.launches != launches
            native.hold(-1)
            native.ran()

    def _record(self, index: int, key: tuple, args: list[Any]) -> list[Any]:
        """Run function `index`, recording its launches: later calls with `key` replay them.
        The run allocates from a pool of its own, whose storages the trace then owns
        (other threads' runs meanwhile use the shared pool)."""
        local = self.per_thread
        recording = local.recording = Recording(args, self.program.constants)
        local.pool = StoragePool(recorder=recording)
        try:
            results = self._held(lambda: self.call(index, args, 0))
        finally:
            local.recording = local.pool = None
        try:
            trace = recording.trace(results)
        except NotReplayable:
            trace = None
        self.replays.keep(index, key, trace)
        return results

    def call(self, index: int, args: list[Any], depth: int = 0) -> list[Any]:
        """Run function `index` on `args`. Calls are frames on a list, not Python frames:
        an `invoke` step leaves its call in `r[CALLEE]` and returns `CALL`; the loop pushes
        the caller, runs the callee, and on its `RETURN` writes the results to the
        caller's destinations and resumes it after the `invoke`."""
        frames: list[tuple[list[Any], list[Any], int, int]] = []  # callers' (code, registers, pc, function)
        entries = self.entries
        code, regs = entries[index][0], self._frame(index, args, depth)
        pc = 0
        counting = self.max_steps is not None
        deepest = MAX_DEPTH - depth
        try:
            while True:
                step = code[pc]
                if counting:
                    while True:
                        self.steps += 1
                        if self.steps > self.max_steps:
                            raise VMError(f"@{self.program.functions[index].name}: stopped after {self.max_steps} "
                                          f"instructions")
                        nxt = step(regs)
                        if nxt is None:
                            pc += 1
                        elif nxt < 0:
                            break
                        else:
                            pc = nxt
                        step = code[pc]
                else:
                    while True:
                        nxt = step(regs)
                        if nxt is None:
                            pc += 1
                        elif nxt < 0:
                            break
                        else:
                            pc = nxt
                        step = code[pc]
                if nxt == RETURN:
                    if not frames:
                        return regs[RESULTS]
                    results = regs[RESULTS]
                    code, regs, pc, index = frames.pop()
                    _, _, dsts, closure = regs[CALLEE]
                    if closure and len(results) != len(dsts):
                        raise _Fatal(f"the closure returned {len(results)} values, {len(dsts)} expected")
                    for d, v in zip(dsts, results):
                        regs[d] = v
                    pc += 1
                else:  # CALL
                    callee, callee_args, _, _ = regs[CALLEE]
                    frames.append((code, regs, pc, index))
                    code, regs, params = entries[callee]
                    if len(callee_args) != len(params) or len(frames) > deepest:
                        self._frame(callee, callee_args, depth + len(frames))  # (raises, saying which)
                    regs = regs.copy()
                    for r, a in zip(params, callee_args):
                        regs[r] = a
                    index, pc = callee, 0
        except VMError:
            raise
        except _Fatal as e:
            at = self.origins[index][pc]
            f = self.program.functions[index]
            raise VMError(f"@{f.name} instruction {at} ({vm.INSTRUCTIONS[f.code[at][0]][0]}): {e}") from None
        except LaunchError as e:
            raise VMError(str(e)) from None
        except (TypeError, ValueError, IndexError, AttributeError, KeyError, ArithmeticError, RecursionError,
                MemoryError) as e:
            at = self.origins[index][pc]
            f = self.program.functions[index]
            raise VMError(f"@{f.name} instruction {at} ({vm.INSTRUCTIONS[f.code[at][0]][0]}): {type(e).__name__}: {e}") from None

    def _frame(self, index: int, args: list[Any], depth: int) -> list[Any]:
        """The registers of a call of function `index` on `args`, `depth` calls deep;
        a VMError if there are too many calls or the wrong number of arguments."""
        f = self.program.functions[index]
        if depth > MAX_DEPTH:
            raise VMError(f"@{f.name}: calls nested more than {MAX_DEPTH} deep")
        if len(args) != len(f.params):
            raise VMError(f"@{f.name} takes {len(f.params)} arguments, got {len(args)}")
        regs = self.entries[index][1].copy()
        for r, a in zip(f.params, args):
            regs[r] = a
        return regs

    def start_profile(self) -> dict[str, list[float]]:
        """Record the time of every kernel launch, device copy and op run by its own
        implementation (`native_op`), and count instructions from now on (`profile_report`)."""
        self.profile = {}
        self.steps = 0
        self.max_steps = 1 << 62  # the counting dispatch loop
        return self.profile

    def profile_report(self, profile: dict[str, list[float]], total: float) -> str:
        """Time per kernel (and device copy, and op run by its own implementation), and
        the rest (VM overhead and host functions)."""
        lines = [f"{'kernel':<40} {'calls':>7} {'total ms':>10} {'mean us':>9}"]
        in_kernels = 0.0
        for name, times in sorted(profile.items(), key=lambda kv: -sum(kv[1])):
            in_kernels += sum(times)
            lines.append(f"{name:<40} {len(times):>7} {sum(times) * 1e3:>10.3f} {sum(times) / len(times) * 1e6:>9.1f}")
        outside = total - in_kernels
        lines.append(f"{'outside kernels (VM, host functions)':<40} {'':>7} {outside * 1e3:>10.3f}")
        if self.steps:
            lines.append(f"{self.steps} VM instructions: {outside / self.steps * 1e6:.2f} us per instruction outside "
                         f"kernels (including launch overhead)")
        return "\n".join(lines)

    def run_host(self, function: Any, args: list[Any]) -> list[Any]:
        from nimble.reference import InterpreterError

        if self.device_values:
            for a in args:
                if isinstance(a, ClTensor):
                    raise _Fatal(f"host function @{function.sym_name.data} was given a tensor in device memory")
        try:
            return self.interpreter.call(function.sym_name.data, args)
        except InterpreterError as e:
            raise _Fatal(str(e)) from None

    # -- decoding ------------------------------------------------------------------------
    def _decode(self, f: Function) -> tuple[list[Callable[[list[Any]], int | None]], list[Any], list[int]]:
        """The steps of `f`, the register file a call starts from, and the position in
        `f.code` of each step. A constant's register (`constant_registers`) holds its
        value in the register file from the start, and its load is not a step (jump
        targets move to the step after): the ONNX MLP's 20 instructions are 12 steps."""
        constants = constant_registers(f.code, f.params, vm.OPCODES["load_const"], vm.OPCODES["load_consti"])
        registers: list[Any] = [None] * (f.num_regs + 2)
        step_of = []  # position in f.code -> the step that runs it or, for a constant's load, the next one
        origins = []
        for pc, (opcode, values) in enumerate(f.code):
            step_of.append(len(origins))
            if pc in constants:
                registers[values[0]] = self._constant(opcode, values[1])
            else:
                origins.append(pc)
        step_of.append(len(origins))
        zeros = {r for r, v in enumerate(registers) if v.__class__ is int and v == 0}
        private = set(private_tensor_storages(f.code, vm.OPCODES["alloc_storage"], vm.OPCODES["alloc_tensor"],
                                              vm.OPCODES["alloc_tensor_reg"], zeros))
        tensor_ops = (vm.OPCODES["alloc_tensor"], vm.OPCODES["alloc_tensor_reg"])
        self._holders: dict[int, list[tuple[int, tuple]]] = {}
        """Per storage register of the function being decoded, the tensors made in it
        (what a refused storage's error names)."""
        for opcode, values in f.code:
            if opcode in tensor_ops:
                self._holders.setdefault(values[1], []).append((opcode, values))
        steps = []
        for pc in origins:
            opcode, values = f.code[pc]
            if pc in private:
                alloc = self._alloc_private if f.code[pc + 1][0] == vm.OPCODES["alloc_tensor"] else self._alloc_private_reg
                steps.append(alloc(f.code[pc][1], f.code[pc + 1][1], step_of[pc + 2]))
                continue
            fields = vm.INSTRUCTIONS[opcode][2]
            values = tuple(step_of[v] if kind is vm.Kind.TARGET else v for (_, kind), v in zip(fields, values))
            steps.append(self._step(opcode, values))
        return steps, registers, origins

    def _constant(self, opcode: int, value: int) -> Any:
        return self.program.constants[value] if opcode == vm.OPCODES["load_const"] else value

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
        return step if device == "cpu" and nbytes <= PRIVATE_MAX_BYTES else storage

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
        return step if device == "cpu" else storage

    def _step(self, opcode: int, values: tuple[Any, ...]) -> Callable[[list[Any]], int | None]:
        """The closure running one instruction (`_i_<mnemonic>` makes it)."""
        name = vm.INSTRUCTIONS[opcode][0]
        if name in _BINARY:
            return self._binary(name, *values)
        return getattr(self, f"_i_{name}")(*values)

    @staticmethod
    def _binary(name: str, dst: int, lhs: int, rhs: int):
        fn = _BINARY[name]

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
                raise _Fatal(f"r{closure} is not a closure")
            r[CALLEE] = (c.function, [*c.captured, *(r[a] for a in args)], dsts, True)
            return CALL
        return step

    def _i_invoke_kernel(self, kernel, inputs, outputs):
        entry = self.kernels[kernel]
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
            local.recording.launched(entry._fast if entry.device == "cpu" else None, ins, outs, self.threads)
        return step

    def _i_invoke_host(self, dsts, host, args):
        function = self.host_functions[host]
        native = native_op(function)
        if native is not None and native[0] == "opencl":
            _, op, run = native
            runtime = self.device_runtime()

            def device_step(r):
                values = [r[a] for a in args]
                if not all(isinstance(v, ClTensor) for v in values):
                    raise _Fatal(f"'{op.name}' placed on OpenCL was given a tensor in host memory")
                t = time.perf_counter() if self.profile is not None else 0.0
                try:
                    results = run(runtime, op, values)
                except ValueError as e:
                    raise _Fatal(str(e)) from None
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
        if device != "cpu":
            opencl = self.device_runtime()

            def on_device(r):
                r[dst] = opencl.alloc(_int(r[size]))
            return on_device

        holders = self._holders.get(dst, [])

        def step(r):
            try:
                r[dst] = (local.pool or shared).alloc(_int(r[size]), alignment)
            except MemoryLimit as e:
                raise _Fatal(f"{e}; it would hold {_tensors(holders, r)}") from None
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
                raise _Fatal(f"a {dtype}{list(shape)} tensor at offset {offset} does not fit in r{storage}")
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
                    raise _Fatal(f"a {dtype}{list(shape)} tensor at offset {at} does not fit in r{storage}")
                r[dst] = np.ndarray(shape, dt, s.buffer, at)
                return
            general(r, s)

        def general(r, s):
            shape = tuple(_int(r[d]) for d in dims)
            at = _int(r[offset])
            if any(d < 0 for d in shape):
                raise _Fatal(f"negative dim in tensor shape {shape}")
            n = 1
            for d in shape:
                n *= d
            on_device = None  # the device storage, for a tensor in device memory
            if isinstance(s, np.ndarray | ClTensor) and s.dtype != dt:  # a view of a tensor (device.view)
                raise _Fatal(f"a {dtype} view of a {s.dtype} tensor")
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
                raise _Fatal(f"r{storage} is neither storage nor a tensor")
            if at < 0 or at + n * dt.itemsize > size:
                raise _Fatal(f"a {dtype}{list(shape)} tensor at offset {at} does not fit in r{storage}")
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
                raise _Fatal(f"r{src} has no field {index}")
            r[dst] = fields[index]
        return step

    def _i_get_tag(self, dst, src):
        tags = self.tags

        def step(r):
            v = r[src]
            if not isinstance(v, AdtValue) or v.constructor not in tags:
                raise _Fatal(f"r{src} is not a value of a known constructor")
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
                raise _Fatal(f"dim {axis} of a rank-{len(shape)} tensor")
            r[dst] = shape[axis]
        return step

    def _i_make_shape(self, dst, dims):
        def step(r):
            r[dst] = tuple(_int(r[d]) for d in dims)
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
            if dst_device == "cpu":
                if not isinstance(v, ClTensor):
                    raise _Fatal(f"device_copy from {src_device}: r{src} is not in {src_device} memory")
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
                    raise _Fatal(f"device_copy to {dst_device}: r{src} is in the memory of another OpenCL device")
                out = v
            else:
                if not isinstance(v, np.ndarray):
                    raise _Fatal(f"device_copy from cpu: r{src} is not a host tensor")
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
