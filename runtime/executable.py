"""A compiled model as the runtime holds it: `Executable` (a bytecode program, its
kernels' machine code, the VM that runs it) and `load` (a `.nbc` file back into one).

Nothing here imports the compiler (the frontend, lark, a pass): a saved model loads and
runs with the runtime alone (tests/test_runtime_alone.py). Compiling the kernels of a
module that holds no object code for this CPU, or on `trust_object_code=False`, imports
the LLVM lowering when it is needed.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from nimble.dialects import loop
from nimble.dialects.device import GROUP_OF, HOST_FUNCTION, Device
from nimble.dialects.target import target_of
from nimble.reference import InterpreterError
from nimble.runtime import cpu_target, signature
from nimble.runtime.bytecode import BytecodeError, Program, decode, encode
from nimble.runtime.cpu_target import CpuTarget, TargetError, TargetWarning
from nimble.runtime.opencl import ClTensor
from nimble.runtime.vm import VirtualMachine, VMError

if TYPE_CHECKING:
    from nimble.runtime.llvm_jit import KernelCode


@dataclass
class CompileStats:
    """Where a compile's time went."""

    kernels: int
    stages: dict[str, float] = field(default_factory=dict)
    """Seconds per step: `parse`, each stage of the target's pipeline, `program` (the
    bytecode program built), `jit` (eager mode: the kernels' compile after the passes;
    it begins during them, `KernelCode.streamed`), or `load` (a program from the
    program cache)."""
    from_program_cache: bool = False
    """Whether the whole program came from the program cache (`nimble/program_cache.py`)."""

    @property
    def seconds_passes(self) -> float:
        """The stages from the parsed module to the program."""
        return sum(t for step, t in self.stages.items() if step not in ("parse", "jit", "load"))

    def report(self, code: KernelCode) -> str:
        """The steps' times, one per line, and what the JIT did (`--timings`)."""
        lines = [f"  {name:12s} {seconds:8.3f} s" for name, seconds in self.stages.items()]
        if "jit" in self.stages or "load" in self.stages:
            during = f" ({len(code.streamed)} begun during the passes)" if code.streamed else ""
            lines.append(f"  {len(code.compiled)} kernels: {len(code.compiled) - len(code.from_cache)} compiled{during}, "
                         f"{len(code.from_cache)} from the cache")
        return "\n".join(lines)


class Executable:
    """A compiled model: call it on numpy arrays (`exe(a, b)`, any sizes for `?` dims),
    save it as one bytecode file (`exe.save(path)`, `nimble.load(path)`)."""

    def __init__(self, program: Program, code: KernelCode, entry: str, stats: CompileStats | None = None,
                 threads: int | None = None, base_dir: str = ".", opencl_device: str | None = None):
        self.program = program
        self.code = code
        self._module: ModuleOp | None = None
        self._recompile: Any = None  # (a program from the program cache: how to get its module)
        self.entry = entry
        self.stats = stats
        self.opencl = _opencl_module(program, opencl_device)
        self.vm = VirtualMachine(program, code, threads, base_dir, opencl=self.opencl, opencl_device=opencl_device)
        self.signatures = self.vm.signatures
        if entry not in self.vm.index:
            raise ValueError(f"the module has no function @{entry}")

    @classmethod
    def from_program(cls, program: Program, module: ModuleOp, entry: str | None = None, threads: int | None = None,
                     base_dir: str = ".", opencl_device: str | None = None) -> Executable:
        """The executable of `program`: its CPU kernels (those of `module` that it launches)
        JIT-compiled each when first launched; its OpenCL kernels built now."""
        from nimble.lowering.llvm.loops_to_llvm import lower_kernels
        from nimble.runtime.llvm_jit import KernelCode

        used = {k.name for k in program.kernels if k.device == Device.CPU}
        code = KernelCode([f for f in loop.kernels_of(module) if f.sym_name.data in used], lower_kernels,
                          target_of(module))  # (the module's own kernels: each compile lowers a copy)
        names = [f.name for f in program.functions]
        if entry is None:
            entry = "main" if "main" in names or len(names) != 1 else names[0]
        exe = cls(program, code, entry, CompileStats(len(program.kernels)), threads, base_dir, opencl_device)
        exe.module = module
        return exe

    @property
    def module(self) -> ModuleOp | None:
        """The compiled module (the passes' output): None for a loaded bytecode file; for
        a program from the program cache, compiled again when first asked for."""
        if self._module is None and self._recompile is not None:
            self._module, self._recompile = self._recompile(), None
        return self._module

    @module.setter
    def module(self, module: ModuleOp | None) -> None:
        self._module = module

    @property
    def seconds_jit(self) -> float:
        """Time spent so far waiting for this executable's kernels to compile: lazy, at
        their first launch; eager, after the passes (those compiled while the passes ran,
        `code.streamed`, cost no wait)."""
        return self.code.seconds

    @property
    def kernel_names(self) -> list[str]:
        return sorted(k.name for k in self.program.kernels)

    @property
    def fallbacks(self) -> list[str]:
        """Ops the VM runs by their reference semantics (no kernel lowering, no
        implementation of their own where they are placed: `runtime.vm_steps.native_op`)."""
        from nimble.runtime.vm_steps import native_op

        return [f"{f.sym_name.data}: {f.attributes[HOST_FUNCTION].data}" for f in self.vm.host_functions
                if GROUP_OF not in f.attributes and native_op(f, self.vm.native_kernels) is None]

    def to_device(self, array: Any) -> ClTensor:
        """`array` copied to this executable's OpenCL device, to pass as an argument of
        later calls (weights a server keeps resident): an argument the program uses on
        the device is then not copied again. Host kernels cannot read it."""
        if self.opencl is None:
            raise ValueError("this executable runs no kernel on an OpenCL device")
        return self.opencl.runtime.to_device(np.asarray(array))

    def run(self, *args: Any, entry: str | None = None, trace: str | os.PathLike[str] | None = None) -> list[Any]:
        """All results of function `entry` (default: the compiled entry), as a list.
        The arguments in order, or by name (`run({"x": x})`), or as ONNX Runtime's
        `run(output_names, feeds)` (`run(["y"], {"x": x})`; None: every output).
        `trace`: write a Chrome / Perfetto trace of this call there (runtime/trace.py)."""
        name = entry or self.entry
        wanted = None
        if len(args) == 2 and isinstance(args[1], Mapping) and (args[0] is None or isinstance(args[0], list | tuple)):
            wanted, args = args[0], args[1:]
        if len(args) == 1 and isinstance(args[0], Mapping):  # inputs by name
            try:
                args = tuple(signature.feeds_in_order(args[0], self._signature(name)[1], name))
            except ValueError as e:
                raise InterpreterError(str(e)) from None
        values = [np.asarray(a) if isinstance(a, list | float) else a for a in args]
        self.vm.check_arguments(name, values)
        if trace is not None:
            self.vm.start_trace()
        try:
            results = self.vm.invoke(name, values)
        except VMError as e:
            raise InterpreterError(str(e)) from None
        finally:
            tracer = self.vm.stop_trace() if trace is not None else None
        if tracer is not None:
            tracer.write(trace)
        results = [r.to_host() if isinstance(r, ClTensor) else r for r in results]
        if wanted is None:
            return results
        names = [o.name for o in self.outputs(name)]
        unknown = [w for w in wanted if w not in names]
        if unknown:
            raise InterpreterError(f"@{name} has no output named {', '.join(map(str, unknown))} "
                                   f"(outputs: {', '.join(names)})")
        return [results[names.index(w)] for w in wanted]

    def inputs(self, entry: str | None = None) -> list[signature.ValueInfo]:
        """The entry's parameters: name, element type, dims (named dims by name, None for
        an unnamed `?`), as ONNX Runtime's `get_inputs()`."""
        return signature.inputs(*self._signature(entry or self.entry))

    def outputs(self, entry: str | None = None) -> list[signature.ValueInfo]:
        """The entry's results (by their ONNX names, else `result_<i>`), as `get_outputs()`."""
        entry = entry or self.entry
        return signature.outputs(self._signature(entry)[0], self.vm.result_names.get(entry))

    def _signature(self, entry: str) -> tuple[Any, list[str], dict[str, str]]:
        if entry not in self.vm.signatures:
            raise InterpreterError(f"the module has no entry @{entry} with a signature")
        return self.vm.signatures[entry]

    def __call__(self, *args: Any) -> Any:
        results = self.run(*args)
        return results[0] if len(results) == 1 else tuple(results)

    def to_bytes(self) -> bytes:
        """The bytecode file's bytes, with every CPU kernel's object code (those not yet
        launched compiled now)."""
        objects = self.code.objects()
        self.program.object_code = [data for _names, data in objects]
        self.program.cpu_kernels = self.code.kernels_text() or self.program.cpu_kernels
        self.program.cpu, self.program.cpu_features = self.code.cpu.cpu, self.code.cpu.features
        holder = {name: i for i, (names, _data) in enumerate(objects) for name in names}
        for k in self.program.kernels:
            if k.device == Device.CPU:
                k.code = holder[k.name]
        return encode(self.program)

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the model as one bytecode file (`nimble.load` reads it back)."""
        with open(path, "wb") as f:
            f.write(self.to_bytes())


def load(path_or_bytes: str | os.PathLike[str] | bytes, threads: int | None = None, entry: str = "main",
         opencl_device: str | None = None, trust_object_code: bool = True) -> Executable:
    """An executable from a bytecode file written by `Executable.save` or `nimble-compile`.
    The whole file is validated first (`BytecodeError` if it is malformed), its object code
    structurally too (`runtime.elf_check`). Object code is code: with
    `trust_object_code=False` it is not loaded at all, and the kernels are compiled here
    from the loop-level IR the file also holds."""
    from nimble.runtime.elf_check import ElfError, check_object
    from nimble.runtime.llvm_jit import KernelCode

    if isinstance(path_or_bytes, bytes):
        data = path_or_bytes
    else:
        with open(path_or_bytes, "rb") as f:
            data = f.read()
    program = decode(data)
    try:
        cpu = cpu_target.named(program.cpu, program.cpu_features) if program.cpu else cpu_target.host()
    except TargetError as e:
        raise BytecodeError(f"the kernels' target: {e}") from None
    if not trust_object_code:
        if not any(k.device == Device.CPU for k in program.kernels):
            code = KernelCode.from_objects([], cpu_target.host())  # (no CPU kernel: nothing to compile)
        elif not program.cpu_kernels:
            raise BytecodeError("the module holds no loop-level IR to compile its kernels from (it was written "
                                "without it): it loads only trusting its object code")
        else:
            code = _compiled_here(program, cpu_target.host())
    else:
        objects = [([k.name for k in program.kernels if k.device == Device.CPU and k.code == i], blob)
                   for i, blob in enumerate(program.object_code)]
        for i, (_names, blob) in enumerate(objects):
            try:
                check_object(blob)
            except ElfError as e:
                raise BytecodeError(f"object {i} of the kernels section does not hold ELF object code LLVM may "
                                    f"load: {e}") from None
        if program.cpu_kernels and cpu.missing_on(cpu_target.host()):
            host = cpu_target.host()
            warnings.warn(f"the module's code is compiled for {cpu.describe()} and uses "
                          f"{', '.join(cpu.missing_on(host))}, which this CPU ({host.cpu}) lacks: its kernels are "
                          f"compiled again for this one (its schedules stay those of {cpu.cpu}; compile the model "
                          f"here for this CPU's own)", TargetWarning, stacklevel=2)
            code = _compiled_here(program, host)
        else:
            cpu_target.check_runs_here(cpu)
            try:
                code = KernelCode.from_objects([o for o in objects if o[0]], cpu)
            except Exception as e:  # noqa: BLE001 (LLVM's loader reports any problem as RuntimeError or OSError)
                raise BytecodeError(f"the kernels' object code does not load: {e}") from None
    functions = [f.name for f in program.functions]
    if entry not in functions and len(functions) == 1:
        entry = functions[0]
    return Executable(program, code, entry, None, threads, opencl_device=opencl_device)


def _compiled_here(program: Program, host: CpuTarget) -> KernelCode:
    """The program's CPU kernels compiled for `host` from the loop-level IR it holds."""
    from nimble.api import parse
    from nimble.lowering.llvm.loops_to_llvm import lower_kernels
    from nimble.runtime.llvm_jit import KernelCode

    try:
        module = parse(program.cpu_kernels)
    except Exception as e:  # noqa: BLE001 (a damaged text fails to parse in many ways)
        raise BytecodeError(f"the loop-level CPU kernels: {type(e).__name__}: {e}") from None
    used = {k.name for k in program.kernels if k.device == Device.CPU}
    kernels = [f.clone() for f in loop.kernels_of(module) if f.sym_name.data in used]
    missing = used - {f.sym_name.data for f in kernels}
    if missing:
        raise BytecodeError(f"the loop-level CPU kernels lack {', '.join(sorted(missing))}")
    code = KernelCode(kernels, lower_kernels, host)
    code.compile_all()
    return code


def _opencl_module(program: Program, device: str | None) -> Any:
    """The program's OpenCL kernels built for `device` (None if it has none)."""
    if not program.opencl_program:
        return None
    from nimble.runtime.opencl import OpenCLModule, OpenCLRuntime

    return OpenCLModule(program.opencl_program, program.opencl_kernels, OpenCLRuntime.get(device))
