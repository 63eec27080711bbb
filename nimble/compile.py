"""`nimble.compile`: a model in, an executable on numpy arrays out.

The pipeline is a table of named stages (each a flat list of passes); a target picks
stages, it does not branch inside them. For `target="llvm"` every fusion group becomes
an LLVM kernel; the host part of the program (the order of kernel calls, constants,
and any group without a loop lowering, which runs on the reference semantics as a CPU
fallback listed in `Executable.fallbacks`) is run by the reference interpreter, with
each `graph.fused` op calling its kernel. The VM (issue #5) replaces that host loop.

Before a kernel runs, the shape functions of its ops run on the actual input shapes:
a call with shapes the kernel cannot handle is an error naming the op, never an
out-of-bounds access.
"""

from __future__ import annotations

import ctypes
import os
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import MemRefType, ModuleOp, SymbolRefAttr, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.passes import PassPipeline

from nimble.dialects import loop
from nimble.dialects.graph import FusedOp, GraphOp, YieldOp
from nimble.dialects.graph.types import numpy_dtype
from nimble.dialects.shape import ShapeType
from nimble.dialects.shape_functions import ShapeError, StaticDims, constant_index
from nimble.lowering.graph_to_loops import HOST_ATTR, KERNEL_ATTR, VARIANT_ATTR
from nimble.lowering.index_rules import broadcast_sites
from nimble.reference import Interpreter, InterpreterError, where
from nimble.registry import all_passes, make_context

STAGES: dict[str, list[str]] = {
    "graph": ["infer-shapes", "canonicalize", "cse", "fuse-ops"],
    "loops": ["lower-graph-to-loops", "expand-math", "hoist-invariant", "canonicalize", "cse", "schedule-loops",
              "tile-vectorize", "canonicalize", "cse"],
    "llvm": ["lower-loops-to-llvm"],
    # Hand-written kernels: realise the schedules they carry (no default schedules).
    "realize": ["expand-math", "tile-vectorize", "canonicalize", "cse"],
}
TARGETS: dict[str, list[str]] = {"llvm": ["graph", "loops", "llvm"]}

_KERNEL_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
PARALLEL_MIN_WORK = 1 << 16
"""Output elements x reduction steps per element below which a kernel runs on one
thread (a thread hand-off costs about as much as this much work)."""


def reduction_work(kernel: Operation) -> int:
    """Reduction steps per output element of a kernel (dynamic trip counts count 64)."""

    def trips(op: loop.ReduceOp) -> int:
        n = constant_index(op.upper)
        return 64 if n is None else max(n, 1)

    def work(block) -> int:
        total = 0
        for op in block.ops:
            if isinstance(op, loop.ReduceOp):
                total += trips(op) * max(1, work(op.body.block))
            elif isinstance(op, loop.ForeachOp):
                total += work(op.body.block)
        return total

    return max(1, work(kernel.body.block))


def run_stages(module: ModuleOp, stages: Sequence[str], options: dict[str, str] | None = None) -> ModuleOp:
    """Run the named stages; `options` adds pass options (`{"schedule-loops": "remainder=masked"}`)."""
    options = options or {}
    passes = ",".join(f"{p}{{{options[p]}}}" if p in options else p for s in stages for p in STAGES[s])
    PassPipeline.parse_spec(all_passes(), passes).apply(make_context(), module)
    return module


class _ShapeOnly(StaticDims):
    """Dims of values known only by shape (kernel intermediates and outputs)."""

    def __init__(self, shapes: dict[SSAValue, tuple[int, ...]], scalars: dict[SSAValue, int]):
        self.shapes = shapes
        self.scalars = scalars

    def dims(self, value: SSAValue) -> list[int]:
        return list(self.shapes[value])

    def index(self, value: SSAValue) -> int:
        return int(self.scalars[value])

    def shape(self, value: SSAValue) -> list[int]:
        return [int(d) for d in self.scalars[value]]


@dataclass
class KernelLauncher:
    """Calls one compiled kernel for one `graph.fused` op."""

    group: FusedOp
    name: str
    address: int | None  # None: compiled on first use (`compile_general`)
    parallel: bool
    pool: ThreadPoolExecutor | None
    threads: int
    variant_address: int | None = None  # the no-stretch variant, when there is one
    work: int = 1  # reduction steps per output element
    compile_general: Any = None  # () -> address, for a general kernel compiled lazily
    members: list[GraphOp] = field(init=False)
    outputs: list[SSAValue] = field(init=False)

    def __post_init__(self) -> None:
        block = self.group.body.block
        self.members = [o for o in block.ops if isinstance(o, GraphOp)]
        yielded = block.last_op
        assert isinstance(yielded, YieldOp)
        self.outputs = list(yielded.operands)
        self._fn = _KERNEL_FN(self.address) if self.address is not None else None
        self.variant = _KERNEL_FN(self.variant_address) if self.variant_address else None
        self.sites = [site for op in self.members for site in broadcast_sites(op)]
        self.params = list(block.args)
        self.dtypes = [numpy_dtype(v.type.get_element_type()) for v in self.outputs]
        self.out_dynamic = [[i for i, d in enumerate(v.type.get_shape()) if d < 0] for v in self.outputs]
        self.arg_kinds = ["tensor" if isinstance(p.type, TensorType) else "shape" if isinstance(p.type, ShapeType)
                          else "index" for p in self.params]
        self.arg_dynamic = [[i for i, d in enumerate(p.type.get_shape()) if d < 0] if isinstance(p.type, TensorType)
                            else [] for p in self.params]
        self._plans: dict[tuple, _LaunchPlan] = {}

    def _plan(self, args: Sequence[Any]) -> _LaunchPlan:
        """Output shapes, the kernel to run and the chunk count for these argument
        shapes, from the ops' shape functions (memoised: shape functions are pure)."""
        key = tuple(a.shape if isinstance(a, np.ndarray) else a for a in args)
        plan = self._plans.get(key)
        if plan is not None:
            return plan
        shapes: dict[SSAValue, tuple[int, ...]] = {}
        scalars: dict[SSAValue, Any] = {}
        for param, arg in zip(self.params, args):
            if isinstance(param.type, TensorType):
                shapes[param] = np.shape(arg)
            else:
                scalars[param] = arg
        k = _ShapeOnly(shapes, scalars)
        for op in self.members:
            try:
                result_shapes = op.shape_function(k)
            except ShapeError as e:
                raise InterpreterError(f"{where(op)}'{op.name}' op: {e} (kernel @{self.name})") from None
            for result, s in zip(op.results, result_shapes):
                shapes[result] = tuple(int(d) for d in s)
        out_shapes = [shapes[v] for v in self.outputs]
        stretched = any(shapes[a][i] != shapes[r][j] for a, i, r, j in self.sites)
        fn = self.variant if self.variant is not None and not stretched else self.fn
        size = max((int(np.prod(s)) for s in out_shapes), default=0)
        big = size * self.work >= PARALLEL_MIN_WORK
        chunks = self.threads if self.parallel and self.pool is not None and big else 1
        plan = _LaunchPlan(out_shapes, fn, chunks)
        if len(self._plans) < 256:
            self._plans[key] = plan
        return plan

    @property
    def fn(self) -> Any:
        """The general kernel (compiled on first use when a variant exists: most calls
        never stretch a dim, and the variant serves them)."""
        if self._fn is None:
            self.address = self.compile_general()
            self._fn = _KERNEL_FN(self.address)
        return self._fn

    def kernel_for_shapes(self, args: Sequence[Any]):
        """The no-stretch variant if no `?` dim is broadcast from 1 here, else the general one."""
        return self._plan(args).fn

    def __call__(self, args: Sequence[Any]) -> list[np.ndarray]:
        plan = self._plan(args)
        slots: list[int] = []
        keep: list[np.ndarray] = []
        for kind, dynamic, arg in zip(self.arg_kinds, self.arg_dynamic, args):
            if kind == "tensor":
                if not arg.flags.c_contiguous:
                    arg = np.ascontiguousarray(arg)
                    keep.append(arg)
                slots.append(arg.__array_interface__["data"][0])
                shape = arg.shape
                slots += [shape[i] for i in dynamic]
            elif kind == "shape":
                slots += [int(d) for d in arg]
            else:
                slots.append(int(arg))
        results = [np.empty(shape, dtype) for shape, dtype in zip(plan.shapes, self.dtypes)]
        for out, dynamic in zip(results, self.out_dynamic):
            slots.append(out.__array_interface__["data"][0])
            shape = out.shape
            slots += [shape[i] for i in dynamic]
        if plan.chunks == 1:
            slots += (0, 1)
            packed = np.array(slots, dtype=np.int64)
            plan.fn(packed.__array_interface__["data"][0])
            return results
        packed = [np.array([*slots, c, plan.chunks], dtype=np.int64) for c in range(plan.chunks)]
        # ctypes releases the GIL: the other chunks run on the pool's threads meanwhile.
        others = [self.pool.submit(plan.fn, p.__array_interface__["data"][0]) for p in packed[1:]]
        plan.fn(packed[0].__array_interface__["data"][0])
        for other in others:
            other.result()
        return results


@dataclass
class _LaunchPlan:
    shapes: list[tuple[int, ...]]
    fn: Any
    chunks: int


class _Host(Interpreter):
    """The reference interpreter, calling kernels for the groups that have one."""

    def __init__(self, module: ModuleOp, launchers: dict[FusedOp, KernelLauncher], base_dir: str):
        # Kernels produce results of their declared types: only the reference-run ops
        # would need the per-value type checks, and the entry's arguments are checked.
        super().__init__(module, base_dir, check_types=False)
        self.launchers = launchers

    def _evaluate(self, op: Operation, args: list[Any]) -> Sequence[Any]:
        launcher = self.launchers.get(op) if isinstance(op, FusedOp) else None
        # An empty input tensor goes to the reference: kernels clamp indices into their
        # inputs (gather, concat, window taps), and a clamp into nothing reads outside.
        if launcher is not None and not any(isinstance(a, np.ndarray) and a.size == 0 for a in args):
            return launcher(args)
        return super()._evaluate(op, args)


@dataclass
class CompileStats:
    kernels: int
    seconds_passes: float
    seconds_llvm: float


class Executable:
    """A compiled model: call it on numpy arrays (`exe(a, b)`); any `?` dims."""

    def __init__(self, module: ModuleOp, jit: Any, entry: str, base_dir: str, stats: CompileStats,
                 threads: int | None = None):
        self.module = module
        self.jit = jit
        self.entry = entry
        self.stats = stats
        self.lazy_jits: list[Any] = []
        kernels = {f.sym_name.data: f for f in module.ops if isinstance(f, func.FuncOp) and loop.KERNEL_MARK in f.attributes}
        self.threads = max(1, threads if threads is not None else min(2, os.cpu_count() or 1))
        self.pool = ThreadPoolExecutor(max_workers=self.threads - 1) if self.threads > 1 else None
        launchers: dict[FusedOp, KernelLauncher] = {}
        self.fallbacks: list[tuple[str, str]] = []
        for op in module.walk():
            if not isinstance(op, FusedOp):
                continue
            ref = op.attributes.get(KERNEL_ATTR)
            if isinstance(ref, SymbolRefAttr):
                name = ref.root_reference.data
                parallel = any(isinstance(o, loop.ForeachOp) and o.schedule is not None and o.schedule.schedule.parallel
                               for o in kernels[name].walk())
                variant = op.attributes.get(VARIANT_ATTR)
                variant_address = jit.addresses[variant.root_reference.data] if isinstance(variant, SymbolRefAttr) else None
                launchers[op] = KernelLauncher(op, name, jit.addresses.get(name), parallel, self.pool, self.threads,
                                               variant_address, reduction_work(kernels[name]),
                                               lambda kernel=kernels[name]: self._compile_lazily(kernel))
            elif HOST_ATTR in op.attributes:
                self.fallbacks.append((f"{where(op)}graph.fused", op.attributes[HOST_ATTR].data))
        self.launchers = launchers
        self.host = _Host(module, launchers, base_dir)
        if entry not in self.host.functions:
            raise ValueError(f"the module has no function @{entry}")
        self.straight = self._straight_line(self.host.functions[entry])

    def _compile_lazily(self, kernel: func.FuncOp) -> int:
        from nimble.lowering.loops_to_llvm import lower_kernels
        from nimble.runtime.llvm_jit import JitModule

        jit = JitModule.compile(lower_kernels(ModuleOp([kernel.clone()])))
        self.lazy_jits.append(jit)  # keeps the machine code alive
        return jit.addresses[kernel.sym_name.data]

    @property
    def kernel_names(self) -> list[str]:
        return sorted(launcher.name for launcher in self.launchers.values())

    def _straight_line(self, function: func.FuncOp) -> list[tuple[KernelLauncher, list[SSAValue], list[SSAValue]]] | None:
        """The kernel calls of an entry that is nothing but kernel calls (the common case
        for a model without control flow), run without the interpreter; else None."""
        steps = []
        for op in function.body.block.ops:
            if isinstance(op, func.ReturnOp):
                return steps
            launcher = self.launchers.get(op) if isinstance(op, FusedOp) else None
            if launcher is None:
                return None
            steps.append((launcher, list(op.operands), list(op.results)))
        return None

    def run(self, *args: Any) -> list[Any]:
        """All results of the entry function, as a list."""
        values = [np.asarray(a) if isinstance(a, list | float) else a for a in args]
        if self.straight is None or any(isinstance(v, np.ndarray) and v.size == 0 for v in values):
            return self.host.call(self.entry, values)
        function = self.host.check_arguments(self.entry, values)
        env: dict[SSAValue, Any] = dict(zip(function.body.block.args, values))
        for launcher, operands, results in self.straight:
            inputs = [env[v] for v in operands]
            if any(isinstance(v, np.ndarray) and v.size == 0 for v in inputs):
                return self.host.call(self.entry, values)  # the reference handles empty inputs
            for result, value in zip(results, launcher(inputs)):
                env[result] = value
        return [env[v] for v in function.body.block.last_op.operands]

    def __call__(self, *args: Any) -> Any:
        results = self.run(*args)
        return results[0] if len(results) == 1 else tuple(results)


def compile(source: Any, target: str = "llvm", entry: str | None = None, threads: int | None = None,
            remainder: str = "peeled") -> Executable:
    """Compile a model (path to `.nb`/`.mlir`, MLIR text, or a parsed module) for `target`.

    `entry` defaults to `main`, or the module's only function. `threads` (default: up
    to 2, the cores of the CI machine kind) is how many chunks a parallel loop runs in.
    `remainder` (`peeled` or `masked`) is how vector loops finish sizes that are not a
    multiple of the vector width.
    """
    from nimble.api import parse
    from nimble.lowering.loops_to_llvm import lower_kernels
    from nimble.runtime.llvm_jit import JitModule

    if target not in TARGETS:
        raise ValueError(f"unknown target '{target}' (known: {', '.join(TARGETS)})")
    base_dir = os.path.dirname(os.fspath(source)) if isinstance(source, str | os.PathLike) and os.path.exists(source) else "."
    module = source.clone() if isinstance(source, ModuleOp) else parse(source)
    t0 = time.perf_counter()
    stages = TARGETS[target]
    if remainder not in ("peeled", "masked"):
        raise ValueError(f"remainder must be 'peeled' or 'masked', not '{remainder}'")
    run_stages(module, [s for s in stages if s != "llvm"], {"schedule-loops": f"remainder={remainder}"})
    t1 = time.perf_counter()
    # General kernels that have a no-stretch variant are compiled on first use.
    lazy = {g.attributes[KERNEL_ATTR].root_reference.data for g in module.walk()
            if isinstance(g, FusedOp) and VARIANT_ATTR in g.attributes}
    eager = [f.clone() for f in module.ops if isinstance(f, func.FuncOp) and loop.KERNEL_MARK in f.attributes
             and f.sym_name.data not in lazy]
    jit = JitModule.compile(lower_kernels(ModuleOp(eager)))
    t2 = time.perf_counter()
    functions = [f.sym_name.data for f in module.ops if isinstance(f, func.FuncOp) and loop.KERNEL_MARK not in f.attributes]
    if entry is None:
        entry = "main" if "main" in functions or len(functions) != 1 else functions[0]
    stats = CompileStats(len(jit.addresses), t1 - t0, t2 - t1)
    return Executable(module, jit, entry, base_dir, stats, threads)





class KernelFunction:
    """A compiled kernel called directly on numpy arrays (one per memref argument, an
    int per index argument); checks dtypes, ranks and static dims before the call."""

    def __init__(self, kernel: func.FuncOp, jit: Any):
        self.jit = jit  # keeps the machine code alive
        self.name = kernel.sym_name.data
        self.types = [a.type for a in kernel.args]
        self.fn = _KERNEL_FN(jit.addresses[self.name])

    def __call__(self, *args: Any) -> None:
        if len(args) != len(self.types):
            raise TypeError(f"kernel @{self.name} takes {len(self.types)} arguments, got {len(args)}")
        slots: list[int] = []
        for i, (t, arg) in enumerate(zip(self.types, args)):
            if not isinstance(t, MemRefType):
                slots.append(int(arg))
                continue
            expected = numpy_dtype(t.get_element_type())
            shape = t.get_shape()
            if not isinstance(arg, np.ndarray) or arg.dtype != expected or arg.ndim != len(shape) \
                    or any(d >= 0 and d != n for d, n in zip(shape, arg.shape)) or not arg.flags.c_contiguous:
                got = f"{arg.dtype}{list(arg.shape)}" if isinstance(arg, np.ndarray) else type(arg).__name__
                raise ValueError(f"kernel @{self.name} argument #{i}: expected a C-contiguous {t}, got {got}")
            slots.append(arg.ctypes.data)
            slots += [n for n, d in zip(arg.shape, shape) if d < 0]
        packed = np.array([*slots, 0, 1], dtype=np.int64)
        self.fn(packed.ctypes.data)


def compile_kernels(source: Any) -> dict[str, KernelFunction]:
    """JIT every `nimble.kernel` function of a loop-level module (a `.nb`/`.mlir` path,
    text, or a module), realising the schedules written on its loops."""
    from nimble.api import parse
    from nimble.lowering.loops_to_llvm import lower_kernels
    from nimble.runtime.llvm_jit import JitModule

    module = source.clone() if isinstance(source, ModuleOp) else parse(source)
    run_stages(module, ["realize"])
    jit = JitModule.compile(lower_kernels(module))
    return {f.sym_name.data: KernelFunction(f, jit)
            for f in module.ops if isinstance(f, func.FuncOp) and loop.KERNEL_MARK in f.attributes}
