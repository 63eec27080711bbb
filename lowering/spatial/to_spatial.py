"""`nimble-opt -t spatial`: spatial programs as a readable, Spatial-like listing.

One `Accel` block per program: its memories (`SRAM`, `DRAM` with element type, shape,
bytes and memory units), its controllers (`Foreach`, `Reduce`, `Sequential.Foreach` for
the time loop; `Pipe.` where iterations overlap) with trip counts, `par` factors and the
model's cycles, and for each straight-line body how many ops, reads and writes it holds.
The search's report (`spatial-dse`) heads the program; without one the program is costed
as written on the default machine at size 1 for every `?`.
"""

from __future__ import annotations

from xdsl.dialects import memref, scf
from xdsl.dialects.builtin import IndexType, ModuleOp, StringAttr
from xdsl.ir import Block, Operation, SSAValue

from nimble.dialects import arith, loop
from nimble.dialects.device import Device
from nimble.lowering.spatial.dse import MACHINE_ATTR, REPORT_ATTR, SIZES_ATTR, parse_sizes
from nimble.lowering.spatial.model import Estimate, ModelError, Sizes, estimate, is_compute, parse_machine


class _Printer:
    def __init__(self, program: loop.KernelOp, est: Estimate, sizes: Sizes):
        self.est = est
        self.sizes = sizes
        self.lines: list[str] = []
        self.names: dict[SSAValue, str] = {}
        for arg in program.args:
            self.name(arg)

    def name(self, v: SSAValue) -> str:
        if v not in self.names:
            hint = v.name_hint
            base = hint if hint and hint not in self.names.values() else f"{hint or 'v'}{len(self.names)}"
            self.names[v] = base
        return self.names[v]

    def bound(self, v: SSAValue) -> str:
        owner = v.owner
        if isinstance(owner, arith.ConstantOp):
            return str(owner.value.value.data)
        try:
            return f"{self.sizes.of(v)}"
        except ModelError:  # a bound the sizes do not decide
            return "?"

    def emit(self, depth: int, text: str, note: str = "") -> None:
        line = "  " * depth + text
        self.lines.append(f"{line:<60} // {note}" if note else line)

    def memory(self, depth: int, op: loop.AllocOp) -> None:
        t = op.memref.type
        shape = ", ".join(self.bound(s) if d < 0 else str(d) for d, s in zip(
            t.get_shape(), _dynamic_iter(op, t.get_shape())))
        kind = "SRAM" if op.level.data == loop.Level.SRAM else "DRAM" if op.level.data == loop.Level.DRAM else "Reg"
        name = self.name(op.memref)
        used = self.est.buffers.get(op.memref.name_hint or "", None)
        note = f"{used[0]} B, {used[1]} PMU{'s' if used[1] != 1 else ''}" if used and kind == "SRAM" else ""
        self.emit(depth, f"val {name} = {kind}[{t.get_element_type()}]({shape})", note)

    def block(self, depth: int, block: Block) -> None:
        straight: list[Operation] = []
        for op in block.ops:
            if isinstance(op, loop.AllocOp):
                self.memory(depth, op)
            elif isinstance(op, loop.ForeachOp | loop.ReduceOp | scf.ForOp):
                self.straight(depth, straight)
                straight = []
                self.controller(depth, op)
            elif not isinstance(op, loop.YieldOp | scf.YieldOp | loop.ReturnOp):
                straight.append(op)
        self.straight(depth, straight)

    def straight(self, depth: int, ops: list[Operation]) -> None:
        if not ops:
            return
        reads = [o for o in ops if isinstance(o, memref.LoadOp)]
        writes = [o for o in ops if isinstance(o, memref.StoreOp)]
        compute = [o for o in ops if is_compute(o)]
        parts = []
        if reads:
            parts.append(f"read {', '.join(sorted({self.name(o.memref) for o in reads}))}")
        if compute:
            parts.append(f"{len(compute)} ops")
        if writes:
            parts.append(f"write {', '.join(sorted({self.name(o.memref) for o in writes}))}")
        if parts:
            self.emit(depth, "; ".join(parts))

    def controller(self, depth: int, op: Operation) -> None:
        cost = self.est.loops.get(op)
        note = ""
        if isinstance(op, scf.ForOp):
            if cost is not None:
                each = cost.cycles // cost.trips if cost.trips else 0
                note = f"{cost.cycles} cycles ({cost.trips} x {each})"
            self.emit(depth, f"Sequential.Foreach({self.bound(op.ub)} by {self.bound(op.step)}) {{ "
                             f"{self.name(op.body.block.args[0])} =>", note)
            self.block(depth + 1, op.body.block)
            self.emit(depth, "}")
            return
        schedule = op.schedule.schedule if op.schedule is not None else loop.Schedule()
        innermost = not any(isinstance(o, loop.ForeachOp | loop.ReduceOp) for o in op.body.block.ops)
        pipe = "Pipe." if schedule.pipeline or innermost else ""
        par = f" par {schedule.par}" if schedule.par else ""
        if cost is not None:
            iterations = max(1, -(-cost.trips // cost.par))
            note = f"{cost.cycles} cycles" + (f", II {max(1, cost.issue // iterations)}" if pipe else "")
        iv = self.name(op.iv)
        if isinstance(op, loop.ReduceOp):
            accs = ", ".join(self.name(r) for r in op.outs)
            self.emit(depth, f"val {accs} = {pipe}Reduce({self.bound(op.upper)}{par})({', '.join(op.kinds)}) "
                             f"{{ {iv} =>", note)
        else:
            self.emit(depth, f"{pipe}Foreach({self.bound(op.upper)}{par}) {{ {iv} =>", note)
        self.block(depth + 1, op.body.block)
        self.emit(depth, "}")


def _dynamic_iter(op: loop.AllocOp, shape: tuple[int, ...]) -> list[SSAValue | None]:
    sizes = iter(op.dynamic_sizes)
    return [next(sizes) if d < 0 else None for d in shape]


def program_listing(program: loop.KernelOp) -> str:
    def text(attr: str) -> str:
        value = program.attributes.get(attr)
        return value.data if isinstance(value, StringAttr) else ""

    machine = parse_machine(text(MACHINE_ATTR))
    sizes = Sizes(program, parse_sizes(tuple(s for s in text(SIZES_ATTR).split(" ") if s)))
    est = estimate(program, machine, sizes)
    p = _Printer(program, est, sizes)
    name = program.sym_name.data
    header = text(REPORT_ATTR) or (f"machine: {machine.describe()}\nsizes: {sizes.describe() or '(static)'}\n"
                                   f"estimate: {est.summary()}")
    lines = [f"// @{name}"] + [f"// {line}" for line in header.splitlines()]
    params = ", ".join(f"{p.name(a)}: {'DRAM' if not isinstance(a.type, IndexType) else 'Int'}"
                       f"{'' if isinstance(a.type, IndexType) else f'[{a.type.get_element_type()}]'}"
                       for a in program.args)
    p.emit(0, f"Accel @{name}({params}) {{")
    p.block(1, program.body.block)
    p.emit(0, "}")
    return "\n".join(lines + p.lines) + "\n"


def spatial_listing(module: ModuleOp) -> str:
    programs = loop.kernels_of(module, Device.SPATIAL)
    return "\n".join(program_listing(p) for p in programs) if programs else "// no spatial programs\n"
