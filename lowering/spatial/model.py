"""A parameterised model of a Plasticine-like spatial accelerator, and the cost of a
loop-level program on it.

Nimble cannot fabricate a CGRA: this model estimates what a program from
`lower-rnn-to-spatial` would use and take on one, from the program's loop nests, their
`par` factors and memory levels. It is an analytical model, not a simulator; every
formula is below and in `docs/spatial.md`.

**The machine** (`Machine`; defaults after Plasticine, Prabhakar et al., ISCA 2017: a
checkerboard of Pattern Compute Units and Pattern Memory Units at 1 GHz): `pcus` compute
units, each a SIMD pipeline of `lanes` lanes x `stages` stages; `pmus` memory units, each
a scratchpad of `pmu_kib` KiB in `banks` banks of one 4-byte word per cycle; a DRAM
interface of `dram_gbs` GB/s with `dram_latency` cycles of latency; `hop` cycles per
on-chip network hop between units.

**Mapping.** Every op of the program runs on as many lanes as the product of the `par`
factors of its enclosing loops (`P`). A group of consecutive compute ops (float
arithmetic, math, selects, casts; index arithmetic is address generation, done by the
memory units' address units) needs `ceil(P / lanes) * ceil(ops / stages)` PCUs. A
`loop.reduce` with `par = p` and `a` accumulators combines its lanes in a tree: inside a
PCU the reduction network of its last stages (free); across `u = ceil(P / lanes)`
units, `a * (u - 1)` further adds, packed into PCUs like other ops. Each SRAM buffer
(`loop.alloc sram`) takes `max(ceil(bytes / pmu_bytes), ceil(B / (banks * 4)))` PMUs,
`B` the bytes per cycle its busiest loop reads or writes (capacity or bandwidth, the
larger). Buffers in DRAM (the program's parameters, `loop.alloc dram`) cost traffic.

**Time.** A group of ops has a latency of its longest dependency chain (one stage per
op) plus one cycle per SRAM read on it and `dram_latency` when it reads DRAM; it accepts
one iteration per cycle. A loop of `n` trips and `par = p` issues `ceil(n / p)`
iterations: an innermost loop, or one marked `pipeline`, overlaps them (latency
`(ceil(n/p) - 1) * II + L`, `II` its body's slowest stage, `L` the body's latency);
other loops run them one after another (`ceil(n/p) * body`). A reduction adds its tree:
`ceil(log2 p)` levels (plus a hop per level across units). A block's latency is the sum
of its items (with a hop between consecutive stages). `scf.for` (the time loop) is
sequential: trips x body. Any loop is at least as long as its DRAM traffic at
`dram_gbs`. The program's resources are the sum over all its loops (everything is mapped
at once, as on Plasticine).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, fields, replace

from xdsl.dialects import math as xmath
from xdsl.dialects import memref, scf
from xdsl.dialects.builtin import AnyFloat, IndexType, IntegerType, MemRefType
from xdsl.ir import Block, Operation, SSAValue
from xdsl.utils.exceptions import DiagnosticException

from nimble.dialects import arith, loop
from nimble.dialects.index_semantics import INDEX_BINARY, INDEX_COMPARISONS
from nimble.errors import CompileError


@dataclass(frozen=True)
class Machine:
    """The accelerator's parameters (see the module docstring for where they come from)."""

    pcus: int = 64
    pmus: int = 64
    lanes: int = 16
    stages: int = 6
    clock_ghz: float = 1.0
    pmu_kib: int = 256
    banks: int = 16
    dram_gbs: float = 49.0
    dram_latency: int = 100
    hop: int = 2

    @property
    def pmu_bytes(self) -> int:
        return self.pmu_kib * 1024

    @property
    def dram_bytes_per_cycle(self) -> float:
        return self.dram_gbs / self.clock_ghz

    def describe(self) -> str:
        return (f"{self.pcus} PCUs ({self.lanes} lanes x {self.stages} stages), {self.pmus} PMUs "
                f"({self.pmu_kib} KiB, {self.banks} banks), {self.clock_ghz:g} GHz, DRAM {self.dram_gbs:g} GB/s")


def parse_machine(spec: str) -> Machine:
    """`"pcus=128,pmus=128"` -> the default machine with those parameters changed."""
    if not spec:
        return Machine()
    known = {f.name: f.type for f in fields(Machine)}
    changes: dict[str, float | int] = {}
    for item in spec.replace(" ", ",").split(","):
        if not item:
            continue
        key, _, value = item.partition("=")
        if key not in known:
            raise ValueError(f"unknown machine parameter '{key}' (known: {', '.join(known)})")
        try:
            changes[key] = float(value) if known[key] == "float" else int(value)
        except ValueError:
            raise ValueError(f"machine parameter '{key}' needs a number, got '{value}'") from None
        if changes[key] <= 0:
            raise ValueError(f"machine parameter '{key}' must be positive")
    return replace(Machine(), **changes)


class ModelError(DiagnosticException, CompileError):
    """A program the model cannot cost (an unknown size, an unexpected op)."""


# ---------------------------------------------------------------------------------------
# Sizes


class Sizes:
    """Values of a program's dynamic sizes: its index parameters and `?` dims of its
    buffer parameters, given by name (`steps=25`, `xs=25x1x64`; unnamed `?` dims take
    `default`)."""

    def __init__(self, program: loop.KernelOp, given: dict[str, str] | None = None, default: int = 1):
        given = dict(given or {})
        self.values: dict[SSAValue, int] = {}
        self.shapes: dict[SSAValue, list[int]] = {}
        for arg in program.args:
            name = arg.name_hint or f"arg{arg.index}"
            text = given.pop(name, None)
            if isinstance(arg.type, IndexType):
                self.values[arg] = _positive(text, name) if text is not None else default
            elif isinstance(arg.type, MemRefType):
                shape = arg.type.get_shape()
                if text is None:
                    self.shapes[arg] = [d if d >= 0 else default for d in shape]
                    continue
                dims = [_positive(d, name) for d in text.split("x")]
                if len(dims) != len(shape) or any(s >= 0 and s != d for s, d in zip(shape, dims)):
                    raise ModelError(f"size of '{name}': {text} does not match {arg.type}")
                self.shapes[arg] = dims
        self._described = [f"{a.name_hint}={self.values[a]}" for a in program.args if a in self.values]
        self._described += [f"{a.name_hint}={'x'.join(map(str, self.shapes[a]))}" for a in program.args
                            if a in self.shapes and any(d < 0 for d in a.type.get_shape())]
        if given:
            raise ModelError(f"no parameter named {', '.join(sorted(given))} in @{program.sym_name.data}")

    def describe(self) -> str:
        return ", ".join(self._described)

    def of(self, value: SSAValue) -> int:
        """The value of an index expression."""
        if value in self.values:
            return self.values[value]
        owner = value.owner
        if isinstance(owner, arith.ConstantOp):
            return owner.value.value.data
        if isinstance(owner, memref.DimOp):
            return self.dims(owner.source)[self.of(owner.index)]
        if isinstance(owner, Operation) and type(owner) in _INDEX_ARITH:
            result = _INDEX_ARITH[type(owner)](*(self.of(v) for v in owner.operands))
        elif isinstance(owner, arith.SelectOp):
            result = self.of(owner.true_value) if self.of(owner.cond) else self.of(owner.false_value)
        elif isinstance(owner, arith.CmpiOp):
            result = int(_CMP[owner.predicate.value.data](self.of(owner.lhs), self.of(owner.rhs)))
        else:
            source = owner.name if isinstance(owner, Operation) else "a block argument"
            raise ModelError(f"cannot evaluate {value} (from '{source}')")
        self.values[value] = result
        return result

    def dims(self, buffer: SSAValue) -> list[int]:
        if buffer in self.shapes:
            return self.shapes[buffer]
        owner = buffer.owner
        if not isinstance(owner, loop.AllocOp):
            raise ModelError(f"cannot size buffer {buffer}")
        sizes = iter(owner.dynamic_sizes)
        shape = [d if d >= 0 else self.of(next(sizes)) for d in buffer.type.get_shape()]
        self.shapes[buffer] = shape
        return shape


def _positive(text: str, name: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise ModelError(f"size of '{name}' must be an integer, got '{text}'") from None
    if value < 0:
        raise ModelError(f"size of '{name}' must not be negative")
    return value


_INDEX_ARITH = INDEX_BINARY  # (dialects/index_semantics.py: no float division, which loses exactness past 2^53)
_CMP = INDEX_COMPARISONS


# ---------------------------------------------------------------------------------------
# Costs


def element_bytes(t: MemRefType) -> int:
    e = t.get_element_type()
    width = e.bitwidth if isinstance(e, AnyFloat) else e.width.data if isinstance(e, IntegerType) else 64
    return max(1, width // 8)


Pars = tuple[tuple[SSAValue, int], ...]
"""The enclosing loops' induction variables and `par` factors, outermost first."""


@dataclass
class LoopCost:
    """One controller's cost: latency of one execution, and its initiation interval as a
    stage of an enclosing pipeline."""

    cycles: int
    issue: int
    trips: int = 1
    par: int = 1


@dataclass
class Estimate:
    """What a program uses and takes on the machine."""

    machine: Machine
    sizes: str
    pcus: int = 0
    pmus: int = 0
    lanes: int = 0  # the most lanes any op runs on
    sram_bytes: int = 0
    dram_bytes: int = 0
    setup_cycles: int = 0  # copying loop-invariant data on chip (once per program load)
    run_cycles: int = 0  # one run: states in, the time loop, states out
    buffers: dict[str, tuple[int, int]] = field(default_factory=dict)  # name -> (bytes, PMUs)
    loops: dict[Operation, LoopCost] = field(default_factory=dict)

    @property
    def fits(self) -> bool:
        return self.pcus <= self.machine.pcus and self.pmus <= self.machine.pmus

    @property
    def units(self) -> int:
        return self.pcus + self.pmus

    @property
    def run_us(self) -> float:
        return self.run_cycles / (self.machine.clock_ghz * 1e3)

    def summary(self) -> str:
        fit = "fits" if self.fits else f"does NOT fit ({self.machine.pcus} PCUs, {self.machine.pmus} PMUs)"
        return (f"{self.run_cycles} cycles per run ({self.run_us:.2f} us at {self.machine.clock_ghz:g} GHz), "
                f"{self.setup_cycles} cycles to load on chip; {self.pcus} PCUs, {self.pmus} PMUs, "
                f"SRAM {self.sram_bytes} B, DRAM traffic {self.dram_bytes} B per run and load; {fit}")


COMPUTE_OPS = (arith.AddfOp, arith.SubfOp, arith.MulfOp, arith.DivfOp, arith.MaximumfOp, arith.MinimumfOp,
               arith.NegfOp, arith.CmpfOp, arith.SIToFPOp, arith.FPToSIOp, arith.ExtFOp, arith.TruncFOp,
               arith.TruncIOp, arith.ExtSIOp, xmath.AbsFOp, xmath.CeilOp, xmath.ErfOp, xmath.ExpOp, xmath.FloorOp,
               xmath.LogOp, xmath.PowFOp, xmath.SqrtOp, xmath.TanhOp, xmath.RoundEvenOp, xmath.SinOp, xmath.CosOp,
               xmath.TanOp, xmath.AsinOp, xmath.AcosOp, xmath.AtanOp, xmath.SinhOp, xmath.CoshOp, xmath.AsinhOp,
               xmath.AcoshOp, xmath.AtanhOp)
"""Ops a PCU stage computes; index arithmetic (addresses) is the memory units' work."""


def is_compute(op: Operation) -> bool:
    if isinstance(op, arith.SelectOp):  # a select of data, not of an index
        return not isinstance(op.result.type, IndexType)
    if isinstance(op, arith.CmpiOp):
        return not isinstance(op.lhs.type, IndexType)
    return isinstance(op, COMPUTE_OPS)


@dataclass
class _Access:
    buffer: SSAValue
    nbytes: int
    address: frozenset[SSAValue]  # the loop ivs the address depends on
    load: bool


@dataclass
class _Group:
    """Straight-line ops: their longest dependency chain, compute ops, memory accesses."""

    longest: int
    compute: int
    accesses: list[_Access]


@dataclass
class _Loop:
    op: Operation
    trips: int
    body: list[_Group | _Loop]
    accumulators: int = 0  # of a loop.reduce
    sequential: bool = False  # scf.for

    @property
    def innermost(self) -> bool:
        return not any(isinstance(s, _Loop) for s in self.body)


class Plan:
    """The parts of the cost that do not depend on the schedule: the program's loop tree
    with trip counts, and per straight-line group its chain length, compute ops and
    memory accesses. `estimate` reads the `par` factors and memory levels written on the
    program at that moment, so a search builds one plan and costs many designs."""

    def __init__(self, program: loop.KernelOp, sizes: Sizes):
        self.program = program
        self.sizes = sizes
        self.params = set(program.args)
        self.trips: dict[Operation, int] = {}  # of every loop
        self._ivs: dict[SSAValue, frozenset[SSAValue]] = {}
        time_loops = [o for o in program.body.block.ops if isinstance(o, scf.ForOp)]
        written = {o.memref for t in time_loops for o in t.walk() if isinstance(o, memref.StoreOp)}
        self.top = [(self.loop(op), not isinstance(op, scf.ForOp) and _invariant_load(op, written))
                    for op in program.body.block.ops if isinstance(op, loop.ForeachOp | loop.ReduceOp | scf.ForOp)]
        self.allocs = [(op, math.prod(sizes.dims(op.memref)) * element_bytes(op.memref.type))
                       for op in program.walk() if isinstance(op, loop.AllocOp)]

    def ivs_of(self, values: Sequence[SSAValue]) -> frozenset[SSAValue]:
        """The block arguments (loop ivs) an index depends on."""
        found: frozenset[SSAValue] = frozenset()
        for v in values:
            if v not in self._ivs:
                owner = v.owner
                self._ivs[v] = frozenset({v}) if isinstance(owner, Block) else self.ivs_of(owner.operands)
            found |= self._ivs[v]
        return found

    def loop(self, op: Operation) -> _Loop:
        if isinstance(op, scf.ForOp):
            n = self.trips[op] = max(0, self.sizes.of(op.ub) - self.sizes.of(op.lb))
            return _Loop(op, n, self.block(op.body.block), sequential=True)
        lb, ub, step = (self.sizes.of(v) for v in (op.lower, op.upper, op.step))
        n = self.trips[op] = max(0, -(-(ub - lb) // step))
        accumulators = len(op.inits) if isinstance(op, loop.ReduceOp) else 0
        return _Loop(op, n, self.block(op.body.block), accumulators)

    def block(self, block: Block) -> list[_Group | _Loop]:
        stages: list[_Group | _Loop] = []
        group: list[Operation] = []
        for op in block.ops:
            if isinstance(op, loop.ForeachOp | loop.ReduceOp | scf.ForOp):
                if group:
                    stages.append(self.group(group))
                    group = []
                stages.append(self.loop(op))
            elif not isinstance(op, loop.YieldOp | scf.YieldOp | loop.ReturnOp | loop.AllocOp):
                group.append(op)
        if group:
            stages.append(self.group(group))
        return stages

    def group(self, ops: list[Operation]) -> _Group:
        depth: dict[SSAValue, int] = {}
        longest, compute = 0, 0
        accesses: list[_Access] = []
        for op in ops:
            start = max((depth.get(v, 0) for v in op.operands), default=0)
            if isinstance(op, memref.LoadOp | memref.StoreOp):
                accesses.append(_Access(op.memref, element_bytes(op.memref.type), self.ivs_of(op.indices),
                                        isinstance(op, memref.LoadOp)))
                end = start + 1
            elif is_compute(op):
                compute += 1
                end = start + 1
            else:  # index arithmetic: address generation
                end = start
            for r in op.results:
                depth[r] = end
            longest = max(longest, end)
        return _Group(longest, compute, accesses)

    def estimate(self, machine: Machine) -> Estimate:
        return _Costing(self, machine).run()


class _Costing:
    """One design of a plan on one machine (the formulas of the module docstring)."""

    def __init__(self, plan: Plan, machine: Machine):
        self.plan = plan
        self.m = machine
        self.est = Estimate(machine, plan.sizes.describe())
        self.demand: dict[SSAValue, float] = {}  # buffer -> bytes per cycle at its busiest
        self.dram = plan.params | {a.memref for a, _ in plan.allocs if a.level.data == loop.Level.DRAM}
        self.dram_bytes = 0

    def run(self) -> Estimate:
        for node, setup in self.plan.top:
            cost = self.loop(node, (), 1)
            if setup:
                self.est.setup_cycles += cost.cycles
            else:
                self.est.run_cycles += cost.cycles
        for alloc, nbytes in self.plan.allocs:
            if alloc.level.data != loop.Level.SRAM:
                continue
            bandwidth = self.demand.get(alloc.memref, 0) / (self.m.banks * 4)
            units = max(1, math.ceil(nbytes / self.m.pmu_bytes), math.ceil(bandwidth))
            self.est.pmus += units
            self.est.sram_bytes += nbytes
            self.est.buffers[alloc.memref.name_hint or f"buffer{len(self.est.buffers)}"] = (nbytes, units)
        self.est.dram_bytes = self.dram_bytes
        return self.est

    def add_pcus(self, lanes: int, ops: int) -> None:
        if ops:
            self.est.pcus += math.ceil(lanes / self.m.lanes) * math.ceil(ops / self.m.stages)
            self.est.lanes = max(self.est.lanes, lanes)

    def block(self, body: list[_Group | _Loop], pars: Pars, trips: int) -> LoopCost:
        stages = [self.loop(s, pars, trips) if isinstance(s, _Loop) else self.group(s, pars, trips) for s in body]
        if not stages:
            return LoopCost(0, 0)
        cycles = sum(s.cycles for s in stages) + self.m.hop * (len(stages) - 1)
        return LoopCost(cycles, max(s.issue for s in stages))

    def group(self, g: _Group, pars: Pars, trips: int) -> LoopCost:
        """Straight-line ops run `trips` times, on as many lanes as the enclosing `par`s
        make; a memory access reads as many distinct addresses per cycle as the `par`s of
        the loops its address depends on (the others read the same word: a broadcast)."""
        dram_read = False
        demand: dict[SSAValue, float] = {}
        for a in g.accesses:
            distinct = math.prod(p for iv, p in pars if iv in a.address)
            if a.buffer in self.dram:
                self.dram_bytes += a.nbytes * trips // (math.prod(p for _, p in pars) // distinct)
                dram_read |= a.load
            else:
                demand[a.buffer] = demand.get(a.buffer, 0) + a.nbytes * distinct
        for buffer, d in demand.items():
            self.demand[buffer] = max(self.demand.get(buffer, 0), d)
        self.add_pcus(math.prod(p for _, p in pars), g.compute)
        return LoopCost(max(g.longest + (self.m.dram_latency if dram_read else 0), 1), 1)

    def loop(self, node: _Loop, pars: Pars, trips: int) -> LoopCost:
        op, n = node.op, node.trips
        if node.sequential:
            body = self.block(node.body, pars, trips * max(n, 1))
            cost = LoopCost(n * body.cycles, n * body.cycles, n)
            self.est.loops[op] = cost
            return cost
        lanes = math.prod(p for _, p in pars)
        schedule = op.schedule.schedule if op.schedule is not None else loop.Schedule()
        p = max(1, min(schedule.par or 1, max(n, 1)))
        before = self.dram_bytes
        body = self.block(node.body, (*pars, (op.iv, p)), trips * max(n, 1))
        iters = -(-n // p)
        if node.innermost or schedule.pipeline:
            cycles = (iters - 1) * body.issue + body.cycles if iters else 0
            issue = iters * body.issue
        else:
            cycles = issue = iters * body.cycles
        if node.accumulators:
            units = math.ceil(lanes * p / self.m.lanes)
            levels = math.ceil(math.log2(p)) if p > 1 else 0
            cycles += levels + (self.m.hop * math.ceil(math.log2(units)) if units > 1 else 0) + 1
            if units > 1:
                extra = node.accumulators * (units - 1) * math.ceil(lanes / self.m.lanes)
                self.est.pcus += math.ceil(extra / (self.m.lanes * self.m.stages))
        traffic = (self.dram_bytes - before) / max(trips, 1)  # bytes per execution of this loop
        cycles = max(cycles, math.ceil(traffic / self.m.dram_bytes_per_cycle))
        cost = LoopCost(cycles, max(issue, 1), n, p)
        self.est.loops[op] = cost
        return cost


def _invariant_load(op: Operation, stored_in_time_loop: set[SSAValue]) -> bool:
    """A top-level nest that only fills on-chip copies of parameters (weights): setup."""
    stores = [o.memref for o in op.walk() if isinstance(o, memref.StoreOp)]
    return bool(stores) and all(isinstance(s.owner, loop.AllocOp) and s not in stored_in_time_loop for s in stores)


def estimate(program: loop.KernelOp, machine: Machine | None = None, sizes: Sizes | dict[str, str] | None = None
             ) -> Estimate:
    """Cost `program` (a spatial program: its loops' schedules and memory levels as
    written) on `machine` at `sizes`."""
    if not isinstance(sizes, Sizes):
        sizes = Sizes(program, sizes)
    return Plan(program, sizes).estimate(machine or Machine())
