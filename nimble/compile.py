"""`nimble.compile`, `nimble.load`: a model in, an executable on numpy arrays out.

The pipeline is a table of named stages (each a flat list of passes); a target picks
stages, it does not branch inside them. For `target="llvm"`: every fusion group becomes
an LLVM kernel (`graph`, `loops`), its outputs explicit storage (`memory`), the host
part of the program (control flow, calls, ADTs, shape computation, allocation, kernel
launches) VM instructions (`vm`). The result is a `Program` for the VM
(`nimble.runtime.vm`), which `Executable.save` writes as one bytecode file. Ops without
a loop lowering run on the host by their reference semantics (a CPU fallback, listed in
`Executable.fallbacks`).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import MemRefType, ModuleOp
from xdsl.passes import PassPipeline

from nimble import program_cache
from nimble.diagnostics import verify_after_pass
from nimble.dialects import loop
from nimble.dialects.device import Device
from nimble.dialects.graph.types import numpy_dtype
from nimble.dialects.target import set_target, target_of
from nimble.lowering.vm.vm_program import program_from_module
from nimble.passes.schedule_loops import REMAINDERS
from nimble.pipelines import JIT_MODES, PER_KERNEL, PIPELINES, STAGES, TARGET_OPTIONS, TARGETS  # noqa: F401 (part of nimble.compile's API)
from nimble.registry import all_passes, make_context
from nimble.runtime import bounds, cpu_target, kernel_cache
from nimble.runtime.bytecode import BytecodeError
from nimble.runtime.collector import COMPILE_GC_THRESHOLD, fewer_collections  # noqa: F401 (part of the API)
from nimble.runtime.cpu_target import CpuTarget, TargetError
from nimble.runtime.executable import CompileStats, Executable, load  # noqa: F401 (nimble.compile's API)
from nimble.runtime.kernel_cache import KernelCache
from nimble.runtime.kernels import ArrayKernel

if TYPE_CHECKING:
    from nimble.runtime.llvm_jit import KernelStream, Progress


def to_vm(module: ModuleOp, target: str = "llvm") -> ModuleOp:
    """The module lowered to the VM level (as is if it already is), in place."""
    from nimble.dialects import vm

    if not any(isinstance(op, vm.FunctionOp) for op in module.ops):
        run_stages(module, [s for s in TARGETS[target] if s != "llvm"], TARGET_OPTIONS.get(target))
    return module


def run_stages(module: ModuleOp, stages: Sequence[str], options: dict[str, str] | None = None,
               verify_each: bool = False, on_kernel: Callable[[loop.KernelOp], None] | None = None) -> ModuleOp:
    """Run the named stages; `options` adds pass options (`{"schedule-loops": "remainder=masked"}`).
    `verify_each` verifies the module after every pass (`PassBrokeIR` names the pass
    after which it stopped verifying). `on_kernel(kernel)` is told of each kernel as the
    kernel passes of a `PER_KERNEL` stage finish it (it may compile it meanwhile)."""
    options = options or {}
    ctx = make_context()

    def pipeline(passes: Sequence[str]) -> PassPipeline:
        spec = ",".join(f"{p}{{{options[p]}}}" if p in options else p for p in passes)
        return PassPipeline.parse_spec(all_passes(), spec, verify_after_pass if verify_each else None)

    for stage in stages:
        split = PER_KERNEL.get(stage, len(STAGES[stage]))
        pipeline(STAGES[stage][:split]).apply(ctx, module)
        if split < len(STAGES[stage]):
            each = pipeline(STAGES[stage][split:])
            for kernel in loop.kernels_of(module):
                _run_on_kernel(each, ctx, module, kernel)
                if on_kernel is not None:
                    on_kernel(kernel)
            pipeline(["simplify-host{cse=true}"]).apply(ctx, module)
    return module


def _run_on_kernel(passes: PassPipeline, ctx: Context, module: ModuleOp, kernel: loop.KernelOp) -> None:
    """`passes` on a module holding `kernel` alone (with `module`'s attributes: its target),
    whatever they leave in it put back in `kernel`'s place."""
    after = kernel.next_op
    kernel.detach()
    alone = ModuleOp([kernel], attributes=dict(module.attributes))
    passes.apply(ctx, alone)
    for op in list(alone.ops):
        op.detach()
        if after is None:
            module.body.block.add_op(op)
        else:
            module.body.block.insert_op_before(op, after)


def compile(source: Any, target: str = "llvm", entry: str | None = None, threads: int | None = None,
            remainder: str = "auto", opencl_device: str | None = None, cpu: str | None = None,
            cpu_features: str = "", jit: str = "eager", progress: Progress | None = None,
            example_inputs: Sequence[Any] | None = None,
            dynamic_dims: Mapping[int, Sequence[int]] | None = None) -> Executable:
    """Compile a model (path to `.nb`/`.mlir`/`.onnx`, MLIR text, a parsed module, or a
    `torch.nn.Module` with its `example_inputs`) for `target`.

    A torch module is exported to ONNX (`nimble/torch_backend.py`); `dynamic_dims[i]`
    lists the axes of input `i` that may change size (each becomes a `?` dim). The
    executable takes numpy arrays (`torch.compile(model, backend="nimble")` takes and
    gives tensors).

    `entry` defaults to `main`, or the module's only function. `threads` (default: up
    to 2, the cores of the CI machine kind) is how many chunks a parallel loop runs in.
    `remainder` (`auto`, `peeled` or `masked`: see `schedule-loops`) is how vector loops
    finish sizes that are not a multiple of the vector width. Targets: `llvm` (every
    kernel on the CPU), `opencl` (every kernel the OpenCL backend can express on the
    OpenCL device, the rest on the CPU), `hetero` (OpenCL for the groups with enough
    work); `opencl_device` picks the device (`P:D` indices or part of its name; default:
    the first GPU, else the first device). `cpu` is the CPU the kernels are compiled
    for: `host` (the default, unless `$NIMBLE_CPU` names another), or
    one LLVM names (`haswell`, `znver3`, `x86-64-v2`, `skylake-avx512`),
    `cpu_features` overrides (`-avx512f`); code for a CPU the host cannot run is
    compiled (and can be saved) but not run (`TargetError`).
    `jit` is when the CPU kernels are compiled: `eager` (the default) now, on every
    core, `lazy` each at its first launch (a kernel no call launches costs nothing:
    quicker to a first answer in an interactive session on one core). Kernels in the
    kernel cache are loaded, not compiled, either way. `progress(done, total)` is told
    as each kernel is ready (eager mode).
    """
    if jit not in JIT_MODES:
        raise ValueError(f"jit must be one of {', '.join(JIT_MODES)}, not '{jit}'")
    if _is_torch_module(source):
        if example_inputs is None:
            raise ValueError("compiling a torch module needs its example_inputs")
        from nimble.torch_backend import compile_module

        return compile_module(source, example_inputs, dynamic_dims, target=target, entry=entry, threads=threads,
                              remainder=remainder, opencl_device=opencl_device, cpu=cpu, cpu_features=cpu_features,
                              jit=jit, progress=progress)
    if example_inputs is not None or dynamic_dims is not None:
        raise ValueError("example_inputs and dynamic_dims are for a torch module")
    target_cpu = cpu_target.resolve(cpu, cpu_features)

    def build(stream: KernelStream | None = None) -> Executable:
        with fewer_collections():
            return _compile(source, target, entry, threads, remainder, opencl_device, target_cpu, stream)

    cache = kernel_cache.default_cache() if jit == "eager" and not target_cpu.missing_on(cpu_target.host()) else None
    key = program_cache.program_key(source, target, entry, remainder, target_cpu) if cache else None
    exe = _cached_program(cache, key, threads, entry, build) if key else None
    if exe is not None:
        return exe
    stream = _kernel_stream(target_cpu) if jit == "eager" else None
    try:
        exe = build(stream)
    except BaseException:
        if stream is not None:
            stream.cancel()
        raise
    if jit == "eager":
        t0 = time.perf_counter()
        exe.code.compile_all(progress=progress, stream=stream)
        exe.stats.stages["jit"] = time.perf_counter() - t0
        if key:
            try:
                program_cache.store(cache, key, exe.to_bytes())
            except RuntimeError:  # (a kernel that failed to compile: it fails at its launch)
                pass
    return exe


def _is_torch_module(source: Any) -> bool:
    """Whether `source` is a `torch.nn.Module` (torch is not imported to find out)."""
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(source, torch.nn.Module)


def _device_has_halves(spec: str | None) -> bool:
    """Whether the OpenCL device `spec` chooses computes on f16 (`cl_khr_fp16`)."""
    from nimble.runtime.opencl import OpenCLRuntime

    return "cl_khr_fp16" in OpenCLRuntime.get(spec).device.extensions.split()


def _kernel_stream(cpu: CpuTarget) -> KernelStream:
    from nimble.lowering.llvm.loops_to_llvm import lower_kernels
    from nimble.runtime.llvm_jit import KernelStream

    return KernelStream(lower_kernels, cpu, kernel_cache.default_cache())


def _cached_program(cache: KernelCache, key: bytes, threads: int | None, entry: str | None,
                    build: Callable[[], Executable]) -> Executable | None:
    """The program stored under `key`, loaded, or None (a miss: absent, or code this host
    cannot run)."""
    t0 = time.perf_counter()
    program_cache.wait(key)  # (this process writing it)
    data = cache.get(key, kernel_cache.PROGRAM_SUFFIX)
    if data is None:
        return None
    try:
        exe = load(data, threads, entry or "main")
    except (BytecodeError, TargetError):
        return None
    exe.stats = CompileStats(len(exe.program.kernels), stages={"load": time.perf_counter() - t0},
                             from_program_cache=True)
    exe.code.from_cache = exe.code.compiled
    exe._recompile = lambda: build().module
    return exe


def _compile(source: Any, target: str, entry: str | None, threads: int | None, remainder: str,
             opencl_device: str | None, cpu: CpuTarget, stream: KernelStream | None = None) -> Executable:
    from nimble.api import parse

    if target not in TARGETS:
        raise ValueError(f"unknown target '{target}' (known: {', '.join(TARGETS)})")
    base_dir = os.path.dirname(os.fspath(source)) if isinstance(source, str | os.PathLike) and os.path.exists(source) else "."
    t0 = time.perf_counter()
    module = source.clone() if isinstance(source, ModuleOp) else parse(source)
    stages = {"parse": time.perf_counter() - t0}
    if remainder not in REMAINDERS:
        raise ValueError(f"remainder must be one of {', '.join(REMAINDERS)}, not '{remainder}'")
    functions = [f.sym_name.data for f in module.ops if isinstance(f, func.FuncOp) and f.body.blocks]
    if entry is None:
        entry = "main" if "main" in functions or len(functions) != 1 else functions[0]
    if entry not in functions:
        raise ValueError(f"the module has no function @{entry}")
    options = {"schedule-loops": f"remainder={remainder}", **TARGET_OPTIONS.get(target, {})}
    if "place-devices" in options and _device_has_halves(opencl_device):
        options["place-devices"] += " half=true"
    set_target(module, cpu)

    def on_kernel(kernel: loop.KernelOp) -> None:
        if loop.kernel_device(kernel) == Device.CPU:
            stream.add(kernel)

    for stage in TARGETS[target]:
        if stage != "llvm":
            t1 = time.perf_counter()
            run_stages(module, [stage], options, on_kernel=on_kernel if stream is not None else None)
            stages[stage] = time.perf_counter() - t1
    t1 = time.perf_counter()
    program = program_from_module(module, base_dir)
    stages["program"] = time.perf_counter() - t1
    exe = Executable.from_program(program, module, entry, threads, base_dir, opencl_device)
    exe.stats.stages.update(stages)
    return exe


class KernelFunction(ArrayKernel):
    """A kernel of `compile_kernels`, called directly on numpy arrays (one per memref
    argument, an int per index argument; `ArrayKernel` checks them)."""

    def __init__(self, kernel: loop.KernelOp, jit: Any, checked: bool = False):
        self.jit = jit  # keeps the machine code alive
        types = [a.type for a in kernel.args]
        params = [(numpy_dtype(t.get_element_type()), t.get_shape()) if isinstance(t, MemRefType) else None
                  for t in types]
        name = kernel.sym_name.data
        super().__init__(name, params, [str(t) for t in types], lambda: jit.addresses[name], checked)


def compile_kernels(source: Any, devices: Sequence[str] = (Device.CPU,)) -> dict[str, KernelFunction]:
    """JIT every `loop.kernel` for `devices` of a loop-level module (a
    `.nb`/`.mlir` path, text, or a module), realising the schedules written on its loops."""
    from nimble.api import parse
    from nimble.lowering.llvm.loops_to_llvm import lower_kernels
    from nimble.runtime.llvm_jit import JitModule

    module = source.clone() if isinstance(source, ModuleOp) else parse(source)
    run_stages(module, ["realize"])
    checked = bounds.enabled()
    jit = JitModule.compile(lower_kernels(module, devices, checked), target_of(module))
    return {f.sym_name.data: KernelFunction(f, jit, checked)
            for d in devices for f in loop.kernels_of(module, d)}
