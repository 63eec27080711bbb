"""The Nimble virtual machine: a register machine running a bytecode `Program`.

Loading pre-decodes every instruction into a Python closure over its fields (made by
`runtime/vm_steps.py`, one method per mnemonic), so the dispatch loop is
`next = code[pc](regs)`: a closure returns None to fall through, a jump target,
`RETURN` or `CALL`. Calls are frames on a list, not Python frames
(`MAX_DEPTH` deep at most). Values in registers are numpy arrays (tensors), ints and
bools (index, i1), tuples (shapes, tuples), `AdtValue`s, `Closure`s and `Storage`s.
Kernels run through `KernelEntry` (checked launches); host functions (CPU fallbacks, and
a kernel's group when its inputs are empty) through the reference interpreter.

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
from typing import Any

from nimble.dialects import vm
from nimble.dialects.device import Device
from nimble.runtime.allocator import StoragePool
from nimble.runtime.bytecode import BytecodeError, Function, Program
from nimble.runtime.cpu_vision import NativeKernel
from nimble.runtime.kernels import KernelEntry, LaunchError, check_launches
from nimble.runtime.llvm_jit import KernelCode
from nimble.runtime.opencl import ClTensor
from nimble.runtime.recurrence import RecurrenceEntry, holds_recurrence
from nimble.runtime.replay import NotReplayable, Recording, Replays
from nimble.runtime.trace import Tracer
from nimble.runtime.vm_steps import (
    CALLEE,
    RESULTS,
    RETURN,
    Fatal,
    Steps,
    VMError,
    native_kernel_of,
    outlined_op,
)
from nimble.runtime.workers import current as current_workers
from nimble.runtime.workers import workers

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


class _PerThread(threading.local):
    recording: Recording | None = None
    pool: StoragePool | None = None


class VirtualMachine(Steps):
    """Runs the functions of one program."""

    def __init__(self, program: Program, code: Any, threads: int | None = None, base_dir: str = ".",
                 opencl: Any = None, opencl_device: str | None = None):

        self.program = program
        self.code = code  # the CPU kernels' machine code (`llvm_jit.KernelCode`), alive as long as the VM
        self.checked = isinstance(code, KernelCode) and code.checked  # (compiled with bounds checks)
        self.threads = max(1, threads if threads is not None else min(2, os.cpu_count() or 1))
        self.pool = ThreadPoolExecutor(max_workers=self.threads - 1) if self.threads > 1 else None
        self.storage = StoragePool()
        self.per_thread = _PerThread()
        """This thread's run being recorded, if any, and its storage pool (`_record`)."""
        self.opencl = opencl  # the OpenCL kernels (`runtime.opencl.OpenCLModule`), if any
        self.opencl_device = opencl_device
        self.resident_constants: dict[int, ClTensor] = {}  # program constants copied to the device
        copy = vm.Opcode.DEVICE_COPY
        self.device_values = bool(program.opencl_program) or any(op == copy for f in program.functions
                                                                  for op, _ in f.code)
        """Whether registers can hold device tensors (only then do host calls check for them)."""
        self.host_functions = []
        self.interpreter = None
        self.signatures: dict[str, tuple[Any, list[str], dict[str, str]]] = {}
        self.result_names: dict[str, list[str]] = {}
        """Per function with a signature: its results' source names, where it has them."""
        self.argument_checks: dict[str, Any] = {}  # SignatureCheck per entry, built on first call
        self.kernels: list[KernelEntry | None] = []
        self.native_kernels: dict[str, NativeKernel] = {}
        """The kernels of host ops (`device.NATIVE_KERNEL`) by name."""
        self.tags = {name: tag for name, tag in program.constructors}
        self.index = {f.name: i for i, f in enumerate(program.functions)}
        try:
            self._load_host(program, base_dir, code)
        except BytecodeError:
            raise
        except Exception as e:  # noqa: BLE001 (whatever a malformed section makes fail)
            raise BytecodeError(f"host functions section: {type(e).__name__}: {e}") from None
        self.splits = self.threads > 1 and any(k is not None and k.parallel for k in self.kernels)
        """Whether a launch may run in chunks on the workers (held awake during a run)."""
        self.split_last_run = False
        """Whether the last run split a launch: the next one wakes the workers first."""
        self.profile: dict[str, list[float]] | None = None
        self.tracer: Tracer | None = None
        """Records every instruction while set (`start_trace`, runtime/trace.py)."""
        self._untraced_steps: int | None = None  # `max_steps` before the trace (restored after)
        self.steps = 0
        self.max_steps: int | None = None
        self.entries: list[tuple[list[Callable[[list[Any]], int | None]], list[Any], list[int]]] = []
        """Per function, its steps (one closure per instruction, `_decode`), the register
        file a call starts from (constants in place) and its parameters' registers."""
        self.origins: list[list[int]] = []
        """Per function, each step's instruction (its position in the function's code)."""
        self.fused: list[set[int]] = []
        """Per function, the instructions (`alloc_storage`) whose step runs the next one too
        (`_alloc_private`, `_alloc_private_reg`)."""
        for f in program.functions:
            steps, registers, origins = self._decode(f)
            self.entries.append((steps, registers, list(f.params)))
            self.origins.append(origins)
        self.replays = Replays(program.functions)
        """Calls of a signature seen before replay their launches (`runtime.replay`)."""

    def _load_host(self, program: Program, base_dir: str, code: Any) -> None:
        """Take the host functions (CPU fallbacks, kernel groups, signatures) and bind
        the kernels, checking each against its group."""
        from xdsl.dialects import func

        from nimble.reference import Interpreter

        host_module = program.host_module
        self.interpreter = Interpreter(host_module, base_dir)
        for op in host_module.ops:
            if vm.SIGNATURE_OF in op.attributes:
                of = op.attributes[vm.SIGNATURE_OF].data
                names = [a.data for a in op.attributes[vm.ARG_NAMES].data]
                dims = op.attributes.get(vm.DIM_NAMES)
                dim_names = {k: v.data for k, v in dims.data.items()} if dims is not None else {}
                inputs = op.function_type.inputs.data
                if of not in self.index or len(inputs) != len(names) \
                        or len(inputs) != len(program.functions[self.index[of]].params):
                    raise BytecodeError(f"signature of '{of}' does not match the function")
                self.signatures[of] = (op.function_type, names, dim_names)
                results = op.attributes.get(vm.RESULT_NAMES)
                if results is not None:
                    self.result_names[of] = [r.data for r in results.data]
                    if len(self.result_names[of]) != len(op.function_type.outputs.data):
                        raise BytecodeError(f"result names of '{of}' do not match its results")
        for name in program.hosts:
            function = self.interpreter.functions.get(name)
            if not isinstance(function, func.FuncOp) or function.is_declaration:
                raise BytecodeError(f"host function '{name}' is not in the host functions section")
            self.host_functions.append(function)
        for k in program.kernels:
            if k.device == Device.OPENCL:
                if self.opencl is None or k.name not in self.opencl.kernels:
                    raise BytecodeError(f"OpenCL kernel '{k.name}' is not in the device kernels")
                entry = self.opencl.entry(k.name, self.host_functions[k.group], k.variant, k.work)
                if entry.abi != k.abi:
                    raise BytecodeError(f"kernel '{k.name}' was compiled for other argument types than its group has")
                self.kernels.append(entry)
                continue
            if k.name not in code:
                raise BytecodeError(f"kernel '{k.name}' is not in the object code")
            group = self.host_functions[k.group]
            if native_kernel_of(group) == k.name:  # a host op's kernel: called by its host function's step
                native = NativeKernel(k, functools.partial(code.address, k.name), code.checked)
                if not native.fits(outlined_op(group)):
                    raise BytecodeError(f"kernel '{k.name}' does not take the arguments of its host function's op")
                self.native_kernels[k.name] = native
                self.kernels.append(None)  # (not launched: an instruction naming it is refused)
                continue
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
                                                                (ClTensor,) if self.opencl is not None else ())
        check(args)

    def invoke(self, name: str, args: Sequence[Any]) -> list[Any]:
        index = self.index.get(name)
        if index is None:
            raise VMError(f"the module has no function @{name}")
        args = list(args)
        if self.profile is None and self.tracer is None and self.max_steps is None \
                and self.per_thread.recording is None and not self.checked:  # (a replayed run skips the bounds checks)
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
        tracer = self.tracer
        deepest = MAX_DEPTH - depth
        if tracer is not None:
            tracer.enter(index)
        try:
            while True:
                step = code[pc]
                if counting:
                    while True:
                        self.steps += 1
                        if self.steps > self.max_steps:
                            raise VMError(f"@{self.program.functions[index].name}: stopped after {self.max_steps} "
                                          f"instructions")
                        if tracer is None:
                            nxt = step(regs)
                        else:
                            start = time.perf_counter_ns()
                            nxt = step(regs)
                            tracer.step(index, pc, start, time.perf_counter_ns())
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
                    if tracer is not None:
                        tracer.leave()
                    if not frames:
                        return regs[RESULTS]
                    results = regs[RESULTS]
                    code, regs, pc, index = frames.pop()
                    _, _, dsts, closure = regs[CALLEE]
                    if closure and len(results) != len(dsts):
                        raise Fatal(f"the closure returned {len(results)} values, {len(dsts)} expected")
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
                    if tracer is not None:
                        tracer.enter(index)
        except VMError:
            raise
        except (Fatal, LaunchError, TypeError, ValueError, IndexError, AttributeError, KeyError, ArithmeticError,
                RecursionError, MemoryError) as e:
            raise self._error(e, index, pc) from None

    def _error(self, e: Exception, index: int, pc: int) -> VMError:
        """The VMError of an exception in step `pc` of function `index`, naming the
        function and the instruction (a launch's error names its kernel already)."""
        if isinstance(e, LaunchError):
            return VMError(str(e))
        at = self.origins[index][pc]
        f = self.program.functions[index]
        what = str(e) if isinstance(e, Fatal) else f"{type(e).__name__}: {e}"
        return VMError(f"@{f.name} instruction {at} ({vm.INSTRUCTIONS[f.code[at][0]][0]}): {what}")

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

    def start_trace(self) -> Tracer:
        """Record every instruction of the calls from now on (`stop_trace` ends it)."""
        self.tracer = Tracer(self)
        self._untraced_steps = self.max_steps
        self.max_steps = self.max_steps or 1 << 62  # the counting dispatch loop
        return self.tracer

    def stop_trace(self) -> Tracer:
        tracer, self.tracer = self.tracer, None
        self.max_steps = self._untraced_steps
        return tracer

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
                    raise Fatal(f"host function @{function.sym_name.data} was given a tensor in device memory")
        try:
            return self.interpreter.call(function.sym_name.data, args)
        except InterpreterError as e:
            raise Fatal(str(e)) from None

    # -- decoding ------------------------------------------------------------------------
    def _decode(self, f: Function) -> tuple[list[Callable[[list[Any]], int | None]], list[Any], list[int]]:
        """The steps of `f`, the register file a call starts from, and the position in
        `f.code` of each step. A constant's register (`constant_registers`) holds its
        value in the register file from the start, and its load is not a step (jump
        targets move to the step after): the ONNX MLP's 20 instructions are 12 steps."""
        constants = constant_registers(f.code, f.params, vm.Opcode.LOAD_CONST, vm.Opcode.LOAD_CONSTI)
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
        private = set(private_tensor_storages(f.code, vm.Opcode.ALLOC_STORAGE, vm.Opcode.ALLOC_TENSOR,
                                              vm.Opcode.ALLOC_TENSOR_REG, zeros))
        self.fused.append(private)
        tensor_ops = (vm.Opcode.ALLOC_TENSOR, vm.Opcode.ALLOC_TENSOR_REG)
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
                alloc = self._alloc_private if f.code[pc + 1][0] == vm.Opcode.ALLOC_TENSOR else self._alloc_private_reg
                steps.append(alloc(f.code[pc][1], f.code[pc + 1][1], step_of[pc + 2]))
                continue
            fields = vm.INSTRUCTIONS[opcode][2]
            values = tuple(step_of[v] if kind is vm.Kind.TARGET else v for (_, kind), v in zip(fields, values))
            steps.append(self._step(opcode, values))
        return steps, registers, origins

    def _constant(self, opcode: int, value: int) -> Any:
        return self.program.constants[value] if opcode == vm.Opcode.LOAD_CONST else value


