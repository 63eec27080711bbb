"""JIT and object code for LLVM kernels (llvmlite, host CPU, O2).

`JitModule.compile(module)` takes the `llvm`-dialect module of `lower-loops-to-llvm`,
converts it with xdsl's llvmlite backend, marks buffer pointers `noalias` (kernel buffers
never overlap: the caller allocates every output) and each kernel body `alwaysinline`
into its wrapper, optimises at O2 for the target CPU (`runtime/cpu_target.py`: the host's
name and features, e.g. AVX-512, unless compiled for another),
generates object code once (`object_code`) and JIT-loads it. `JitModule.object_code()`
gives those bytes (a saved model holds the very code that ran); `JitModule.from_object(...)`
loads them back without recompiling. `KernelCode` holds a program's kernels, one object
each: all compiled at once on worker processes (`compile_all`), or each when first
launched, or loaded from the kernel cache or a saved model's object code.
`KernelStream` compiles kernels while the compile's passes are still making the others.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import itertools
import os
import re
import threading
import time
from collections.abc import Callable, Collection
from functools import cache, partial
from typing import Any

import llvmlite.binding as llvm
from llvmlite import ir
from xdsl.backend.llvm.convert import convert_module
from xdsl.dialects.builtin import ModuleOp

import nimble.dialects.llvm  # noqa: F401  (casts xdsl's converter lacks)
from nimble.dialects import loop
from nimble.runtime import bounds, cpu_target, jit_pool, kernel_cache, scratch, sync
from nimble.runtime.collector import fewer_collections
from nimble.runtime.cpu_target import CpuTarget
from nimble.runtime.kernel_cache import KernelCache

_LOCK = threading.RLock()
"""LLVM in this process, one thread at a time; held too while compile workers fork (none
starts with another thread inside LLVM)."""


def _new_lock() -> None:  # (in a forked compile worker)
    global _LOCK
    _LOCK = threading.RLock()


os.register_at_fork(after_in_child=_new_lock)
LIBM = ("tanhf", "tanh", "erff", "erf", "tanf", "tan", "asinf", "asin", "acosf", "acos", "atanf", "atan", "sinhf",
        "sinh", "coshf", "cosh", "asinhf", "asinh", "acoshf", "acosh", "atanhf", "atanh")
"""The C library's math functions kernels may call (`lowering/llvm/scalars.py`'s `LIBM_FUNCTIONS`):
bound in every process that loads object code."""
_LIBC = ("malloc", "free", "sched_yield", "syscall")
_LIBGCC = ("__truncdfhf2", "__truncsfhf2", "__extendhfsf2", "__extendhfdf2")
"""Half-precision conversions LLVM calls where the CPU has no instruction for them
(double -> half without AVX512-FP16, e.g. on AMD Zen; float <-> half without F16C):
unbound, the call jumps to address 0."""


@cache
def _initialise() -> None:
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    # The C functions kernels call, bound to this process's libm and libc.
    libm = ctypes.CDLL(ctypes.util.find_library("m"))
    libc = ctypes.CDLL(ctypes.util.find_library("c"))
    for lib, names in ((libm, LIBM), (libc, _LIBC)):
        for name in names:
            llvm.add_symbol(name, ctypes.cast(getattr(lib, name), ctypes.c_void_p).value)
    libgcc = ctypes.CDLL(ctypes.util.find_library("gcc_s") or "libgcc_s.so.1")
    for name in _LIBGCC:
        if hasattr(libgcc, name):  # GCC 12 and later
            llvm.add_symbol(name, ctypes.cast(getattr(libgcc, name), ctypes.c_void_p).value)
    for name, address in bounds.symbols().items():  # (what checked kernels refer to)
        llvm.add_symbol(name, address)
    # Kernels' kept heap buffers, and the chunks' barriers and shared buffers (which
    # take theirs from the kept ones), which kernels call.
    for support in (scratch, sync):
        engine = _engine(support.source(), _machine())
        _SUPPORT.append(engine)
        for name in support.SYMBOLS:
            llvm.add_symbol(name, engine.get_function_address(name))


def runtime_function(name: str, result: type | None, *params: type) -> Callable[..., Any]:
    """The runtime's own native function `name` (`scratch`, `sync`), callable from Python
    (ctypes: `result` and `params` its C types)."""
    _initialise()
    return ctypes.CFUNCTYPE(result, *params)(llvm.address_of_symbol(name))


_SUPPORT: list[llvm.ExecutionEngine] = []
"""Engines of the runtime's own functions, alive as long as the process."""


def _machine(cpu: CpuTarget | None = None) -> llvm.TargetMachine:
    cpu = cpu or cpu_target.host()
    target = llvm.Target.from_default_triple()
    return target.create_target_machine(cpu=cpu.cpu, features=cpu.features, opt=3, codemodel="jitdefault", jit=True)


def _target_machine(cpu: CpuTarget | None = None) -> llvm.TargetMachine:
    """A fresh target machine for `cpu` (default: the host); an MCJIT engine takes
    ownership of its own."""
    _initialise()
    return _machine(cpu)


def _engine(source: str, machine: llvm.TargetMachine) -> llvm.ExecutionEngine:
    module = llvm.parse_assembly(source)
    module.verify()
    engine = llvm.create_mcjit_compiler(module, machine)
    engine.finalize_object()
    return engine


def support_engine(source: str) -> llvm.ExecutionEngine:
    """JIT-compile the LLVM IR of the runtime's own functions (the launch fast path, the
    worker threads' loop, the replay: `runtime/native_ir.py`) for the host CPU; the
    caller keeps the engine alive."""
    with _LOCK:
        return _engine(source, _target_machine())


def to_llvmlite(module: ModuleOp) -> ir.Module:
    """xdsl `llvm` dialect → llvmlite IR, with Nimble's kernel attributes."""
    lowered = convert_module(module, fallback_target_triple=llvm.get_process_triple())
    for function in lowered.functions:
        if function.name.endswith("_body") and not function.is_declaration:
            function.linkage = "internal"
            function.attributes.add("alwaysinline")
            for arg in function.args:
                if isinstance(arg.type, ir.PointerType):
                    arg.add_attribute("noalias")
    return lowered


def _realign_stacks(text: str, names: list[str]) -> str:
    """Kernel wrappers marked `"stackrealign"`: their frames start 64-byte aligned, so
    the register tiles' vector spills are aligned (llvmlite's IR builder prints no
    `alignstack`, hence the text). Without it a spill slot can straddle two cache lines
    (the slots move with the frame's size): measured, 1 thread, 3 x 3 conv + relu at 64
    channels, 56 x 56, 2.39 -> 2.27 ms (same process, alternating)."""
    wanted = set(names)

    def mark(m: re.Match) -> str:
        return f'{m.group(0)} "stackrealign"' if m.group(2) in wanted else m.group(0)

    return re.sub(r'^define void @("?)([^"(]+)\1\(.*\)$', mark, text, flags=re.M)


def optimise(text: str, cpu: CpuTarget | None = None) -> llvm.ModuleRef:
    tm = _target_machine(cpu)
    ref = llvm.parse_assembly(text)
    ref.triple = llvm.get_process_triple()
    ref.data_layout = str(tm.target_data)
    ref.verify()
    # O2, not O3: the kernels come vectorised and register-tiled; O3's extra passes (loop
    # unswitching above all) grew their code and compile time for no run time. Measured
    # 2026-12-06, Zen 5: ResNet-18's kernels 3.91 -> 3.43 s of JIT (LLVM instructions
    # out 35,275 -> 31,667); run time within 1% (A/B in one process, alternating calls)
    # on BERT 2 x 768 (S = 32, 128), LSTM h1024, ResNet-18, ResNet-50, MobileNetV3.
    pto = llvm.create_pipeline_tuning_options(speed_level=2)
    pto.loop_vectorization = True
    pto.slp_vectorization = True
    # Unrolling is the schedule's decision (tile-vectorize): LLVM's full unrolling of
    # constant-trip loops multiplies compile time and rarely pays after register tiling.
    pto.loop_unrolling = False
    pb = llvm.create_pass_builder(tm, pto)
    pb.getModulePassManager().run(ref, pb)
    return ref


def kernel_names(module: ModuleOp) -> list[str]:
    """The entry points of an `llvm`-dialect module of kernels (not their bodies)."""
    return [f.sym_name.data for f in module.ops if not f.sym_name.data.endswith("_body") and f.body.blocks]


def object_code(module: ModuleOp, cpu: CpuTarget | None = None) -> bytes:
    """The ELF object code of an `llvm`-dialect module of kernels, for `cpu` (default:
    the host)."""
    with _LOCK:
        ref = optimise(_realign_stacks(str(to_llvmlite(module)), kernel_names(module)), cpu)
        return _target_machine(cpu).emit_object(ref)


class JitModule:
    """Machine code for a set of kernels, with their entry addresses."""

    def __init__(self, engine: llvm.ExecutionEngine, object_code: bytes, names: list[str]):
        self.engine = engine
        self._object_code = object_code
        self.addresses = {n: engine.get_function_address(n) for n in names}
        missing = [n for n, address in self.addresses.items() if not address]
        if missing:  # (a call of address 0 would crash the process)
            raise RuntimeError(f"no kernel named {', '.join(repr(n) for n in missing)} in the object code")

    @classmethod
    def compile(cls, module: ModuleOp, cpu: CpuTarget | None = None) -> JitModule:
        """Optimise and generate the object code once, for `cpu` (default: the host): the
        JIT loads that object, and a saved model stores the same bytes (no second code
        generation for the file, no file whose code differs from what ran)."""
        return cls.from_object(object_code(module, cpu), kernel_names(module))

    def object_code(self) -> bytes:
        return self._object_code

    @classmethod
    def from_object(cls, data: bytes, names: list[str]) -> JitModule:
        with _LOCK:
            empty = llvm.parse_assembly("")
            engine = llvm.create_mcjit_compiler(empty, _target_machine())
            engine.add_object_file(llvm.ObjectFileRef.from_data(data))
            engine.finalize_object()
            return cls(engine, data, names)


Progress = Callable[[int, int], None]
"""Told (kernels ready, kernels in all) as a compile goes on."""


def checked_lowering(lower: Callable[..., ModuleOp]) -> tuple[bool, Callable[[ModuleOp], ModuleOp]]:
    """Whether kernels compiled now are checked (`NIMBLE_CHECK_BOUNDS`), and `lower` set
    to check them if so."""
    checked = bounds.enabled()
    return checked, partial(lower, check_bounds=True) if checked else lower


class KernelCode:
    """The machine code of a program's CPU kernels, by name. `compile_all` compiles every
    kernel not compiled yet on worker processes (what `nimble.compile` does by default);
    otherwise a kernel is compiled when first launched (`address`: a kernel no run
    launches, the form of a conv for sizes it never sees, costs no LLVM time).
    `objects()` compiles the rest for a saved model; a loaded one has every kernel from
    its object code (`from_objects`). Kernels in the kernel cache are loaded from it."""

    def __init__(self, kernels: list[loop.KernelOp], lower: Callable[[ModuleOp], ModuleOp],
                 cpu: CpuTarget | None = None, cache: KernelCache | None = kernel_cache.DEFAULT):
        self._pending = {k.sym_name.data: k for k in kernels}
        self.checked, self._lower = checked_lowering(lower)
        """Whether the kernels are compiled with bounds checks (`runtime.bounds`)."""
        # (loop-level kernels -> the `llvm` dialect)
        self.cpu = cpu or cpu_target.default()
        """The CPU the kernels are compiled for."""
        self.cache = kernel_cache.default_cache() if cache is kernel_cache.DEFAULT else cache
        """Where compiled kernels are kept between processes (None: nowhere)."""
        self.from_cache: list[str] = []
        """The kernels whose code came from the cache."""
        self.streamed: list[str] = []
        """The kernels whose compile began while the passes ran (`KernelStream`)."""
        self._modules: list[JitModule] = []
        self._texts: dict[str, str] = {}  # the loop-level IR of the kernels compiled here
        self._addresses: dict[str, int] = {}
        self._failed: dict[str, RuntimeError] = {}
        self._lock = threading.Lock()
        self._runs_here = False  # (checked at the first launch: code compiled for another CPU is not run)
        self.seconds = 0.0
        """Time spent compiling kernels so far."""

    @classmethod
    def from_objects(cls, objects: list[tuple[list[str], bytes]], cpu: CpuTarget | None = None) -> KernelCode:
        """Every kernel loaded from object code (compiled for `cpu`): (kernel names, ELF
        object) per object."""
        code = cls([], lambda m: m, cpu, cache=None)
        for names, data in objects:
            code._add(JitModule.from_object(data, names))
        code.checked = any(bounds.is_checked(data) for _, data in objects)
        return code

    @property
    def compiled(self) -> list[str]:
        """The kernels compiled (or loaded) so far."""
        return sorted(self._addresses)

    def __contains__(self, name: str) -> bool:
        return name in self._addresses or name in self._pending or name in self._failed

    def address(self, name: str) -> int:
        """Kernel `name`'s entry address, compiling it first if it is not yet (a kernel
        that failed to compile fails the same way at every launch)."""
        with self._lock:
            if name in self._failed:
                raise self._failed[name]
            if not self._runs_here:
                cpu_target.check_runs_here(self.cpu)
                self._runs_here = True
            if name not in self._addresses:
                self._compile([name])
            return self._addresses[name]

    def compile_all(self, workers: int | None = None, progress: Progress | None = None,
                    stream: KernelStream | None = None) -> None:
        """Compile every kernel not compiled yet, now: those in the cache loaded, those
        `stream` compiled taken from it, the others on `workers` processes (default:
        every core; `runtime/jit_pool.py`), `progress(done, total)` called as each is
        ready. A kernel that fails to compile fails at its launch, as one compiled there
        would."""
        with self._lock:
            t0 = time.perf_counter()
            streamed = stream.finish(set(self._pending)) if stream is not None else {}
            self.seconds += time.perf_counter() - t0
            if self._pending:
                self._compile(sorted(self._pending), workers, progress, streamed, stream.texts if stream else {})

    def objects(self) -> list[tuple[list[str], bytes]]:
        """The object code of every kernel (those not yet compiled, compiled now), as
        (kernel names, ELF object) per object."""
        self.compile_all()
        with self._lock:
            for error in self._failed.values():
                raise error
            return [(list(m.addresses), m.object_code()) for m in self._modules]

    def kernels_text(self) -> str:
        """An MLIR module of the loop-level kernels compiled here (empty if none was: a
        loaded program's), as their object code was compiled from."""
        if not self._texts:
            return ""
        return "builtin.module {\n" + "\n".join(self._texts[n] for n in sorted(self._texts)) + "\n}\n"

    def _compile(self, names: list[str], workers: int | None = 1, progress: Progress | None = None,
                 streamed: dict[str, tuple[bytes | Exception, bool]] | None = None,
                 known: dict[str, str] | None = None) -> None:
        """Kernels `names` from the cache, or from `streamed` (object code or exception,
        whether begun during the passes), or compiled (and stored there); one object
        each. `known`: the kernels' texts where already printed (by the stream). Raises
        the first one's error if it fails."""
        t0 = time.perf_counter()
        kernels = {n: self._pending.pop(n) for n in names}
        streamed, known = streamed or {}, known or {}
        try:
            with fewer_collections():
                texts = {n: known.get(n) or str(k) for n, k in kernels.items()}
                self._texts.update(texts)
                keys = {n: kernel_cache.kernel_key(t, self.cpu, self.checked) for n, t in texts.items()} \
                    if self.cache else {}
                missed = [n for n in names if not self._load_cached(n, keys.get(n))]
                ready = [(n, streamed[n][0]) for n in missed if n in streamed]
                self.streamed += [n for n, _ in ready if streamed[n][1]]
                missed = sorted(set(missed) - set(streamed), key=lambda n: -len(texts[n]))  # (the biggest first:
                with _LOCK:                                                                       # the workers end together)
                    built = jit_pool.build(missed, lambda n: self._object(kernels[n]), workers)
                    for done, (name, code) in enumerate(itertools.chain(ready, built)):
                        if progress is not None:
                            progress(len(names) - len(missed) - len(ready) + done + 1, len(names))
                        if isinstance(code, Exception):
                            self._failed[name] = RuntimeError(f"kernel '{name}' failed to compile: {code}")
                            self._failed[name].__cause__ = code.__cause__
                            continue
                        self._add(JitModule.from_object(code, [name]))
                        if self.cache:
                            self.cache.put(keys[name], code)
        finally:
            self.seconds += time.perf_counter() - t0
        if names[0] in self._failed:
            raise self._failed[names[0]]

    def _object(self, kernel: loop.KernelOp) -> bytes:
        return object_code(self._lower(ModuleOp([kernel.clone()])), self.cpu)  # (the kernel stays as it is)

    def _load_cached(self, name: str, key: bytes | None) -> bool:
        """Whether kernel `name`'s code came from the cache (loaded now)."""
        code = self.cache.get(key) if key else None
        if code is None:
            return False
        try:
            self._add(JitModule.from_object(code, [name]))
        except RuntimeError:  # (an entry of this key without this kernel: compiled again)
            return False
        self.from_cache.append(name)
        return True

    def _add(self, module: JitModule) -> None:
        self._modules.append(module)
        self._addresses.update(module.addresses)


class KernelStream:
    """CPU kernels compiled while the compile's passes make the next ones
    (`jit_pool.Stream`: on the cores the passes leave free): `add(kernel)` as each is
    final (`run_stages(on_kernel=...)`: nothing changes a kernel after), then
    `KernelCode.compile_all(stream=...)` takes their object code and their texts (each
    kernel printed once). Kernels already in `cache` are left to it."""

    def __init__(self, lower: Callable[[ModuleOp], ModuleOp], cpu: CpuTarget | None = None,
                 cache: KernelCache | None = None, workers: int | None = None):
        self.checked, self._lower = checked_lowering(lower)
        self.cpu = cpu or cpu_target.default()
        self.cache = cache
        self.texts: dict[str, str] = {}
        """The IR of each kernel added, printed."""
        self._kernels: dict[str, loop.KernelOp] = {}
        self._stream = jit_pool.Stream(self._object, workers, fork_lock=_LOCK)

    def add(self, kernel: loop.KernelOp) -> None:
        """`kernel` (a CPU kernel) is final: compile it."""
        name = kernel.sym_name.data
        self.texts[name] = text = str(kernel)
        if self.cache is not None \
                and self.cache.get(kernel_cache.kernel_key(text, self.cpu, self.checked)) is not None:
            return
        self._kernels[name] = kernel
        self._stream.add(name, weight=len(text))

    def finish(self, wanted: Collection[str] | None = None) -> dict[str, tuple[bytes | Exception, bool]]:
        """Per kernel compiled: (its object code or exception, whether its compile began
        before `finish`). Kernels not in `wanted` (if given: those the program launches)
        are not compiled unless begun already."""
        with fewer_collections():
            results = self._stream.finish(wanted)
        return {name: (code, name in self._stream.early) for name, code in results.items()}

    def cancel(self) -> None:
        """Stop compiling (the compile failed)."""
        self._stream.cancel()

    def _object(self, name: str) -> bytes:
        return object_code(self._lower(ModuleOp([self._kernels[name].clone()])), self.cpu)
