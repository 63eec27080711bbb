"""Loop-level kernels → C-like source: the base emitter every C-family backend shares.

A kernel (a `loop.kernel`, holding `loop.foreach`/`loop.reduce`
nests over `memref` buffers with `arith`/`math` bodies) becomes one or more device
functions, one per *phase*: each top-level `loop.foreach` is a phase whose perfectly
nested leading loops (up to `Flavor.grid_dims`, bounds defined outside the nest) are
spread over the launch grid as grid-stride loops, so any grid size computes the same
result; the top-level statements that are not loops (a whole-tensor reduction and its
store) run in one serial phase. Phases run one after another (a launch boundary is the
only barrier a grid has), and the pure scalar code at the top of the kernel is repeated
in each phase (the device compiler drops what a phase does not use).

Buffers are row-major; each buffer argument is passed as a pointer, an element offset
(the tensor's place in its storage) and its `?` dims; index arguments as 64-bit ints.
`KernelSource.phases[i].grid` holds the trip-count expressions of the mapped loops; the
module carries them as the kernel's launch plan (`c_grid.kernel_plan`), which the host
evaluates on a launch's dims to size the grid.

What a target changes is a `Flavor` (a table): qualifiers, address spaces, how a thread
reads its grid position, type names, math function names, a preamble. The OpenCL table
is in `lowering/opencl/to_opencl.py`; CUDA or Metal would be another table.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from xdsl.dialects import math as xmath
from xdsl.dialects import memref, vector
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    NoneAttr,
    VectorType,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue

from nimble.dialects import arith, loop
from nimble.lowering.opencl.c_grid import host_computable
from nimble.lowering.opencl.c_groups import group_phase
from nimble.lowering.opencl.c_source import (
    C_PREAMBLE,
    CASTS,
    CMPF,
    CMPI,
    COMBINE,
    HELPERS,
    INFIX,
    NAN_MINMAX,
    UNSIGNED_CASTS,
    UNSIGNED_INFIX,
    VECTOR_TESTS,
    CBuffer,
    Flavor,
    KernelSource,
    NoDeviceLowering,
    Param,
    Phase,
    float_literal,
    is_float,
    is_one,
    is_pure_scalar,
    sole_inner,
    stages_buffers,
    trip,
    type_key,
    unsigned_type,
    vector_pick,
)
from nimble.lowering.opencl.c_tiles import NotTileable, tile_block
from nimble.passes.loop_transforms.tile_emitter import discard

REMAINDER_WIDTH = 4
"""The narrowest vector of a tile's lane remainder before single lanes (`tile_at`)."""


# ---------------------------------------------------------------------------------------
# The emitter


class CEmitter:
    """Emits one kernel for one `Flavor`."""

    def __init__(self, flavor: Flavor, kernel: loop.KernelOp):
        self.f = flavor
        self.kernel = kernel
        self.name = kernel.sym_name.data
        self.names: dict[SSAValue, str] = {}
        self.buffers: dict[SSAValue, CBuffer] = {}
        self.lines: list[str] = []
        self.depth = 1
        self.counter = 0

    # -- names and types --------------------------------------------------------------

    def ctype(self, t: Attribute) -> str:
        if isinstance(t, VectorType):
            return f"{self.ctype(t.element_type)}{t.get_shape()[0]}"
        key = type_key(t)
        if key not in self.f.types:
            raise NoDeviceLowering(f"element type {t} on {self.f.name}")
        return self.f.types[key]

    def fresh(self, stem: str = "v") -> str:
        self.counter += 1
        return f"{stem}{self.counter}"

    def v(self, value: SSAValue) -> str:
        if value not in self.names:
            raise NoDeviceLowering(f"a value used before it is defined in @{self.name}")
        return self.names[value]

    def line(self, text: str) -> None:
        self.lines.append("  " * self.depth + text)

    def define(self, value: SSAValue, expr: str) -> None:
        name = self.fresh()
        self.names[value] = name
        self.line(f"{self.ctype(value.type)} {name} = {expr};")

    def define_exact(self, value: SSAValue, expr: str) -> None:
        """`define`, in a compound statement where the float op is not contracted."""
        name = self.fresh()
        self.names[value] = name
        self.line(f"{self.ctype(value.type)} {name};")
        self.line("{")
        self.lines.append(self.f.no_contract)
        self.line(f"  {name} = {expr};")
        self.line("}")

    # -- the kernel ---------------------------------------------------------------------

    def params(self) -> list[Param]:
        params = []
        for i, arg in enumerate(self.kernel.args):
            if isinstance(arg.type, MemRefType):
                if not isinstance(arg.type.layout, NoneAttr):
                    raise NoDeviceLowering(f"buffer argument #{i} has a non-default layout")
                shape = arg.type.get_shape()
                params.append(Param("buffer", f"a{i}", self.ctype(arg.type.element_type),
                                    tuple(k for k, d in enumerate(shape) if d < 0)))
            elif isinstance(arg.type, IndexType):
                params.append(Param("index", f"a{i}"))
            else:
                raise NoDeviceLowering(f"argument #{i} of type {arg.type}")
        return params

    def signature(self, params: list[Param], name: str) -> str:
        parts = [declaration for p in params for declaration, _ in p.arguments(self.f)]
        return f"{self.f.kernel} void {name}({', '.join(parts)})"

    def bind_params(self, params: list[Param]) -> None:
        for arg, p in zip(self.kernel.args, params):
            if p.kind == "buffer":
                shape = arg.type.get_shape()
                dims = [f"{p.name}_d{k}" if d < 0 else str(d) for k, d in enumerate(shape)]
                self.buffers[arg] = CBuffer(f"({p.name} + {p.name}_off)", dims)
            else:
                self.names[arg] = p.name

    def bind_scratch(self, p: Param) -> None:
        """A staging buffer, at its place in the prologue (after its dims)."""
        t = p.alloc.memref.type
        sizes = iter(p.alloc.dynamic_sizes)
        dims = [self.v(next(sizes)) if d < 0 else str(d) for d in t.get_shape()]
        self.buffers[p.alloc.memref] = CBuffer(p.name, dims)

    def emit(self) -> KernelSource:
        params = self.params()
        block = self.kernel.body.block
        for op in block.ops:
            if isinstance(op, loop.AllocOp) and op.level.data == loop.Level.DRAM:
                if not all(host_computable(d) for d in op.dynamic_sizes):
                    raise NoDeviceLowering(f"a staging buffer of @{self.name} sized by values the host cannot compute")
                params.append(Param("scratch", f"s{len(params)}", self.ctype(op.memref.type.element_type), alloc=op))
        for nest in block.ops:
            if isinstance(nest, loop.ForeachOp):
                for op in nest.walk():
                    if isinstance(op, loop.AllocOp) and op.level.data == loop.Level.DRAM:
                        if not all(host_computable(d) for d in op.dynamic_sizes):
                            raise NoDeviceLowering(f"a buffer inside a loop of @{self.name} sized by values the host "
                                                   "cannot compute")
                        params.append(Param("scratch", f"s{len(params)}", self.ctype(op.memref.type.element_type),
                                            alloc=op, per_group=True))
        staged = {p.alloc: p for p in params if p.kind == "scratch"}
        pure = [op for op in block.ops if is_pure_scalar(op) or op in staged]
        loops = [op for op in block.ops if isinstance(op, loop.ForeachOp)]
        serial = [op for op in block.ops if op not in pure and op not in staged
                  and not isinstance(op, loop.ForeachOp | loop.ReturnOp)]
        position = {op: i for i, op in enumerate(block.ops)}
        defined = {r for op in serial for r in op.results}
        for op in list(pure):  # (in block order) scalar code on a statement's values is a statement too
            if op not in staged and any(o in defined for o in op.operands):
                pure.remove(op)
                serial.append(op)
                defined.update(op.results)
        # Phases in block order: each nest, and each run of statements between them. A
        # phase's values do not outlive it: where one phase uses what another computed
        # (a reduction hoist-invariant took out of a one-trip loop), everything runs as
        # one phase, on one work item.
        runs: list[list[Operation] | loop.ForeachOp] = []
        for op in sorted(serial + loops, key=position.__getitem__):
            if isinstance(op, loop.ForeachOp):
                runs.append(op)
            elif runs and isinstance(runs[-1], list):
                runs[-1].append(op)
            else:
                runs.append([op])
        made_in = {r: i for i, run in enumerate(runs) for op in (run if isinstance(run, list) else [run])
                   for r in op.results}
        if any(made_in.get(o, i) != i for i, run in enumerate(runs)
               for op in (run if isinstance(run, list) else [run]) for inner in op.walk() for o in inner.operands):
            runs = [sorted(serial + loops, key=position.__getitem__)]
        phases: list[Phase] = []
        for run in runs:
            name = f"{self.name}_p{len(phases)}"
            phases.append(self.phase(params, pure, run, None, name) if isinstance(run, list)
                          else self.phase(params, pure, [], run, name))
        text = "\n".join("\n".join(p.body) for p in phases)
        return KernelSource(self.name, params, phases, text, self.kernel)

    def phase(self, params: list[Param], pure: list[Operation], serial: list[Operation],
              nest: loop.ForeachOp | None, name: str) -> Phase:
        self.names, self.buffers, self.lines, self.depth = {}, {}, [], 1
        self.bind_params(params)
        staged = {p.alloc: p for p in params if p.kind == "scratch"}
        for op in pure:
            if op in staged:
                self.bind_scratch(staged[op])
            else:
                self.op(op)
        mapped = self.grid_loops(nest) if nest is not None else []
        if nest is not None and not mapped:
            serial = [nest]
        grid = [trip(m) for m in reversed(mapped)]
        if mapped and self.f.group_id is not None and stages_buffers(mapped[-1]):
            allocs = tuple(p.alloc for p in params if p.per_group and p.alloc.parent_op() is mapped[-1])
            body, split = group_phase(self, params, name, mapped)
            return Phase(name, grid, body=body, group=True, allocs=allocs, split=split)
        if len(mapped) >= 2 and self.f.tile is not None and all(is_one(m.step) for m in mapped[-2:]):
            tiled = self.tiled_phase(params, name, mapped)
            if tiled is not None:
                return Phase(name, grid, tile=(self.f.tile[1], self.f.tile[0]), body=tiled)
        for axis, m in zip(range(len(mapped) - 1, -1, -1), mapped):
            self.open_grid_loop(m, axis, mapped[mapped.index(m) + 1] if m is not mapped[-1] else None)
        for op in serial:
            self.op(op)
        for _ in mapped:
            self.depth -= 1
            self.line("}")
        body = [self.signature(params, name) + " {", *self.lines, "}", ""]
        return Phase(name, grid, body=body)

    def open_grid_loop(self, m: loop.ForeachOp, axis: int, inner: Operation | None, groups: bool = False) -> None:
        """A grid-stride loop over grid axis `axis` (over work-groups with `groups`), and
        `m`'s body but `inner`."""
        self.open_strided(m, self.f.group_id if groups else self.f.grid_id,
                          self.f.group_count if groups else self.f.grid_size, axis)
        for op in m.body.block.ops:
            if op is not inner and not isinstance(op, loop.YieldOp):
                self.op(op)

    def open_strided(self, m: loop.ForeachOp, position: str, count: str, axis: int = 0) -> None:
        """`m`'s loop header, its iterations dealt out: iteration `position` first, then
        every `count`-th (the two spelled with `{}` for the axis)."""
        iv = self.fresh("i")
        self.names[m.iv] = iv
        lb, ub, st = self.v(m.lower), self.v(m.upper), self.v(m.step)
        at, n = position.format(axis), count.format(axis)
        self.line(f"for (long {iv} = {lb} + (long){at} * {st}; {iv} < {ub}; {iv} += (long){n} * {st}) {{")
        self.depth += 1

    def tiled_phase(self, params: list[Param], name: str, mapped: list[loop.ForeachOp]) -> list[str] | None:
        """The phase with a register tile on its two innermost grid loops, or None if
        their body does not vectorise (nothing emitted then)."""
        rows, lanes = self.f.tile
        state = self.save()
        outer_loops, (rows_loop, lanes_loop) = mapped[:-2], mapped[-2:]
        try:
            for axis, m in zip(range(len(mapped) - 1, 1, -1), outer_loops):
                self.open_grid_loop(m, axis, mapped[mapped.index(m) + 1])
            i0, j0 = self.fresh("i"), self.fresh("j")
            self.line(f"long {i0} = {self.v(rows_loop.lower)} + (long){self.f.grid_id.format(1)} * {rows};")
            self.line(f"long {j0} = {self.v(lanes_loop.lower)} + (long){self.f.grid_id.format(0)} * {lanes};")
            self.tile_at(rows_loop, lanes_loop, i0, j0)
        except NotTileable:
            self.restore(state)
            return None
        for _ in outer_loops:
            self.depth -= 1
            self.line("}")
        return [self.signature(params, name) + " {", *self.lines, "}", ""]

    def save(self) -> tuple:
        return len(self.lines), dict(self.names), dict(self.buffers), self.depth

    def restore(self, state: tuple) -> None:
        at, self.names, self.buffers, self.depth = state
        del self.lines[at:]

    def tile_at(self, rows_loop: loop.ForeachOp, lanes_loop: loop.ForeachOp, i0: str, j0: str) -> None:
        """The register tile whose first row is `i0` and first lane `j0` (`c_tiles`;
        raises `NotTileable` if the body does not vectorise).

        A thread whose tile overhangs the iteration space covers what is inside with
        narrower tiles: all its rows (when inside) over one vector at a time, then over
        8, 4 and single lanes; else one row at a time, over one vector at a time, then
        single lanes. (Scalar code for a remainder of up to 15 lanes made a 3 x 3 conv
        of 256 channels at 14 x 14 on pocl, whose last panel has 4 pixels, 1.8x slower
        than the LLVM kernel.)"""
        rows, lanes = self.f.tile
        width = self.f.tile_vector
        ni, nj = self.v(rows_loop.upper), self.v(lanes_loop.upper)
        self.line(f"if ({i0} + {rows} <= {ni} && {j0} + {lanes} <= {nj}) {{")
        self.depth += 1
        self.print_tile(tile_block(self.f, rows_loop, lanes_loop, rows, width, lanes // width), i0, j0)
        self.depth -= 1
        self.line("} else {")
        self.depth += 1
        end = self.fresh("j")
        self.line(f"long {end} = {self.f.int_max}({self.f.int_min}({j0} + {lanes}, {nj}), {j0});")
        self.line(f"if ({i0} + {rows} <= {ni}) {{")
        self.depth += 1
        narrower = [w for w in self.f.vector_widths if w < width and w >= REMAINDER_WIDTH]
        self.lane_tiles(rows_loop, lanes_loop, rows, i0, j0, end, [width, *sorted(narrower, reverse=True)])
        self.depth -= 1
        self.line("} else {")
        self.depth += 1
        i = self.fresh("i")
        self.line(f"for (long {i} = {i0}; {i} < {ni}; {i}++) {{")  # (here i0 + rows > ni)
        self.depth += 1
        self.lane_tiles(rows_loop, lanes_loop, 1, i, j0, end, [width])
        for _ in range(3):  # the row loop, the rows' test, the overhanging tile's branch
            self.depth -= 1
            self.line("}")

    def lane_tiles(self, rows_loop: loop.ForeachOp, lanes_loop: loop.ForeachOp, rows: int, i0: str, j0: str,
                   end: str, widths: list[int]) -> None:
        """Tiles of `rows` rows over lanes [`j0`, `end`): as many of the first width as
        fit, then at most one of each other width, then single lanes."""
        j = self.fresh("j")
        self.line(f"long {j} = {j0};")
        for k, w in enumerate([*widths, 1]):
            repeat = k == 0 or w == 1
            self.line(f"for (; {j} + {w} <= {end}; {j} += {w}) {{" if repeat else f"if ({j} + {w} <= {end}) {{")
            self.depth += 1
            self.print_tile(tile_block(self.f, rows_loop, lanes_loop, rows, w, 1), i0, j)
            if not repeat:
                self.line(f"{j} += {w};")
            self.depth -= 1
            self.line("}")

    def print_tile(self, block: Block, i0: str, j0: str) -> None:
        """A tile's ops (`c_tiles.tile_block`), its first row `i0` and first lane `j0`;
        its scalar constants (the copies' offsets) written where they are used."""
        self.names[block.args[0]], self.names[block.args[1]] = i0, j0
        try:
            for op in block.ops:
                if isinstance(op, arith.ConstantOp) and not isinstance(op.result.type, VectorType):
                    self.names[op.result] = self.constant(op)
                else:
                    self.op(op)
        finally:
            discard(block)

    def grid_loops(self, nest: loop.ForeachOp) -> list[loop.ForeachOp]:
        """The leading perfectly nested loops of `nest` that go on the grid: each one's
        bounds defined outside the nest, its body pure code around one inner loop."""
        if not all(host_computable(v) for v in trip(nest)):
            return []
        mapped = [nest]
        current = nest
        while len(mapped) < self.f.grid_dims:
            candidate = sole_inner(current)
            if candidate is None or any(loop.defined_inside(v, nest) or not host_computable(v)
                                        for v in trip(candidate)):
                break
            mapped.append(candidate)
            current = candidate
        return mapped

    # -- statements ---------------------------------------------------------------------

    def op(self, op: Operation) -> None:
        handler = _STATEMENTS.get(type(op))
        if handler is not None:
            handler(self, op)
            return
        if len(op.results) == 1 and (expr := self.expression(op)) is not None:
            if loop.EXACT_MARK in op.attributes and self.f.no_contract:
                self.define_exact(op.results[0], expr)
            else:
                self.define(op.results[0], expr)
            return
        raise NoDeviceLowering(f"'{op.name}' in @{self.name} has no {self.f.name} lowering")

    def region(self, block: Block) -> None:
        for op in block.ops:
            if not isinstance(op, loop.YieldOp):
                self.op(op)

    def foreach(self, op: loop.ForeachOp) -> None:
        iv = self.fresh("i")
        self.names[op.iv] = iv
        lb, ub, st = self.v(op.lower), self.v(op.upper), self.v(op.step)
        self.line(f"for (long {iv} = {lb}; {iv} < {ub}; {iv} += {st}) {{")
        self.depth += 1
        self.region(op.body.block)
        self.depth -= 1
        self.line("}")

    def reduce(self, op: loop.ReduceOp) -> None:
        accs = []
        for init, out in zip(op.inits, op.outs):
            t = init.type.element_type if isinstance(init.type, VectorType) else init.type
            if not isinstance(t, IntegerType | IndexType) and not is_float(t):
                raise NoDeviceLowering(f"a {t} accumulator in @{self.name}")
            acc = self.fresh("acc")
            self.line(f"{self.ctype(init.type)} {acc} = {self.v(init)};")
            self.names[out] = acc
            accs.append(acc)
        iv = self.fresh("i")
        self.names[op.iv] = iv
        self.line(f"for (long {iv} = {self.v(op.lower)}; {iv} < {self.v(op.upper)}; {iv} += {self.v(op.step)}) {{")
        self.depth += 1
        self.region(op.body.block)
        yielded = op.body.block.last_op
        for acc, kind, value in zip(accs, op.kinds, yielded.values):
            if isinstance(value.type, VectorType) and kind in VECTOR_TESTS:
                self.line(f"{acc} = {vector_pick(VECTOR_TESTS[kind], acc, self.v(value))};")
            else:
                self.line(f"{acc} = {COMBINE[kind](acc, self.v(value), is_float(value.type))};")
        self.depth -= 1
        self.line("}")

    def load(self, op: memref.LoadOp) -> None:
        buf = self.buffer(op.memref)
        self.define(op.res, f"{buf.pointer}[{buf.offset([self.v(i) for i in op.indices])}]")

    def vector_load(self, op: vector.LoadOp) -> None:
        buf = self.buffer(op.base)
        at = buf.offset([self.v(i) for i in op.indices])
        self.define(op.result, f"vload{op.result.type.get_shape()[0]}(0, {buf.pointer} + {at})")

    def vector_store(self, op: vector.StoreOp) -> None:
        buf = self.buffer(op.base)
        at = buf.offset([self.v(i) for i in op.indices])
        self.line(f"vstore{op.vector.type.get_shape()[0]}({self.v(op.vector)}, 0, {buf.pointer} + {at});")

    def broadcast(self, op: vector.BroadcastOp) -> None:
        self.define(op.vector, f"({self.ctype(op.vector.type)})({self.v(op.source)})")

    def prefetch(self, op: loop.PrefetchOp) -> None:
        """A hint: C-like targets drop it (their compilers and caches decide)."""

    def store(self, op: memref.StoreOp) -> None:
        buf = self.buffer(op.memref)
        self.line(f"{buf.pointer}[{buf.offset([self.v(i) for i in op.indices])}] = {self.v(op.value)};")

    def dim(self, op: memref.DimOp) -> None:
        buf = self.buffer(op.source)
        index = op.index.owner
        if not isinstance(index, arith.ConstantOp):
            raise NoDeviceLowering("memref.dim with a computed axis")
        self.define(op.result, buf.dims[index.value.value.data])

    def collapse(self, op: memref.CollapseShapeOp) -> None:
        buf = self.buffer(op.src)
        dims = []
        for group in op.reassociation:
            dims.append(" * ".join(f"({buf.dims[a.value.data]})" for a in group) if len(group) else "1")
        self.buffers[op.result] = CBuffer(buf.pointer, dims)

    def alloc(self, op: loop.AllocOp) -> None:
        if op.level.data != loop.Level.REG:
            raise NoDeviceLowering(f"a {op.level.data}-level buffer inside @{self.name}")
        t = op.memref.type
        name = self.fresh("r")
        size = math.prod(t.get_shape())
        self.line(f"{self.ctype(t.element_type)} {name}[{max(size, 1)}];")
        self.buffers[op.memref] = CBuffer(name, [str(d) for d in t.get_shape()])

    def buffer(self, value: SSAValue) -> CBuffer:
        if value not in self.buffers:
            raise NoDeviceLowering(f"a buffer of @{self.name} that is not an argument or a register buffer")
        return self.buffers[value]

    # -- expressions --------------------------------------------------------------------

    def expression(self, op: Operation) -> str | None:
        kind = type(op)
        if isinstance(op, arith.ConstantOp):
            return self.constant(op)
        if kind in INFIX:
            return f"{self.v(op.operands[0])} {INFIX[kind]} {self.v(op.operands[1])}"
        if kind in UNSIGNED_INFIX:
            t = self.ctype(op.results[0].type)
            return f"({t})((u{t}){self.v(op.operands[0])} {UNSIGNED_INFIX[kind]} (u{t}){self.v(op.operands[1])})"
        if kind in HELPERS:
            return f"{HELPERS[kind]}({self.v(op.operands[0])}, {self.v(op.operands[1])})"
        if kind in (arith.MaxSIOp, arith.MinSIOp):
            fn = self.f.int_max if kind is arith.MaxSIOp else self.f.int_min
            return f"{fn}({self.v(op.operands[0])}, {self.v(op.operands[1])})"
        if kind in NAN_MINMAX:
            a, b = self.v(op.operands[0]), self.v(op.operands[1])
            if isinstance(op.results[0].type, VectorType):
                return vector_pick(VECTOR_TESTS[kind], b, a)
            return f"(isnan({a}) || {a} {NAN_MINMAX[kind]} {b}) ? {a} : {b}"
        if isinstance(op, arith.NegfOp):
            return f"-{self.v(op.operand)}"
        if isinstance(op, CASTS):
            return f"({self.ctype(op.results[0].type)}){self.v(op.operands[0])}"
        if isinstance(op, UNSIGNED_CASTS):
            source = self.ctype(op.operands[0].type)
            return f"({self.ctype(op.results[0].type)})({unsigned_type(source)}){self.v(op.operands[0])}"
        if isinstance(op, arith.SelectOp):
            return f"{self.v(op.cond)} ? {self.v(op.lhs)} : {self.v(op.rhs)}"
        if isinstance(op, arith.CmpiOp):
            name = arith.CMPI_COMPARISON_OPERATIONS[op.predicate.value.data]
            a, b = self.v(op.lhs), self.v(op.rhs)
            if name.startswith("u"):
                t = unsigned_type(self.ctype(op.lhs.type))
                a, b = f"({t}){a}", f"({t}){b}"
            return f"{a} {CMPI[name]} {b}"
        if isinstance(op, arith.CmpfOp):
            name = arith.CMPF_COMPARISON_OPERATIONS[op.predicate.value.data]
            return CMPF[name].format(a=self.v(op.lhs), b=self.v(op.rhs))
        if kind in self.f.functions:
            args = ", ".join(self.v(o) for o in op.operands)
            return f"{self.f.functions[kind]}({args})"
        if isinstance(op, xmath.AbsIOp):
            return f"({self.ctype(op.results[0].type)})abs({self.v(op.operand)})"
        return None

    def constant(self, op: arith.ConstantOp) -> str:
        value, t = op.value, op.result.type
        if isinstance(value, DenseIntOrFPElementsAttr) and isinstance(t, VectorType) and value.is_splat():
            element = value.get_attrs()[0]
            literal = float_literal(element.value.data, t.element_type) if isinstance(element, FloatAttr) \
                else str(element.value.data)
            return f"({self.ctype(t)})({literal})"
        if isinstance(value, FloatAttr):
            return float_literal(value.value.data, t)
        if isinstance(value, IntegerAttr):
            n = value.value.data
            if t == IntegerType(1):
                return "1" if n else "0"
            return f"{n}L" if type_key(t) in ("index", "i64") else str(n)
        raise NoDeviceLowering(f"a non-scalar constant in @{self.name}")


_STATEMENTS: dict[type[Operation], Callable[[CEmitter, Operation], None]] = {
    loop.ForeachOp: CEmitter.foreach,
    loop.ReduceOp: CEmitter.reduce,
    loop.AllocOp: CEmitter.alloc,
    memref.LoadOp: CEmitter.load,
    memref.StoreOp: CEmitter.store,
    loop.PrefetchOp: CEmitter.prefetch,
    memref.DimOp: CEmitter.dim,
    vector.LoadOp: CEmitter.vector_load,
    vector.StoreOp: CEmitter.vector_store,
    vector.BroadcastOp: CEmitter.broadcast,
    memref.CollapseShapeOp: CEmitter.collapse,
}


def emit_kernel(flavor: Flavor, kernel: loop.KernelOp) -> KernelSource:
    """The source of one kernel (raises `NoDeviceLowering` for what the flavour lacks)."""
    return CEmitter(flavor, kernel).emit()


def emit_module(flavor: Flavor, kernels: Sequence[loop.KernelOp]) -> str:
    """One translation unit: the flavour's preamble, then every kernel's phases."""
    return "\n".join([C_PREAMBLE, *(emit_kernel(flavor, k).text for k in kernels)])
