"""`spatial-dse`: choose the `par` factors and memory levels of spatial programs.

For each program of `lower-rnn-to-spatial`, at the problem sizes given (`sizes`: index
parameters and parameter shapes by name, `steps=25`, `xs=25x1x64`; other `?` dims are 1)
and on the machine given (`machine`: `pcus=128,pmus=128`, else the default, see
`lowering/spatial/model.py`):

- **searched loops**: each loop inside the time loop whose nest holds a reduction (for an
  RNN: the hidden units, and the reduction over input+hidden: the paper's `hu` and `ru`).
  Candidates: powers of two below the trip count and the trip count (at most `max_par`).
- **residency**: each on-chip copy of loop-invariant matrices (weights) stays in SRAM or,
  when on-chip memory is short, lives in DRAM and is read at each step; every choice is
  tried.
- **fixed**: the innermost loop of every other nest (copies, staging, quantisation) gets
  `par` = one PCU's lanes (capped by its trip count): it saturates a memory unit's banks.

Every point is costed by the machine model; points that do not fit are dropped. The
chosen design has the fewest run cycles, then the fewest units (PCUs + PMUs), then the
smallest factors (so the search is deterministic). Its `par` factors (and `pipeline` on
searched loops that hold another loop) and memory levels are written into the program,
and a report (the design, and the Pareto front of run cycles against units) into its
`nimble.spatial_report` attribute, which `nimble-opt -t spatial` prints. If no point
fits, the pass fails naming the smallest requirement.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import memref, scf
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from nimble.dialects import loop
from nimble.dialects.device import Device
from nimble.dialects.discardable import SPATIAL_MACHINE_ATTR as MACHINE_ATTR
from nimble.dialects.discardable import SPATIAL_REPORT_ATTR as REPORT_ATTR
from nimble.dialects.discardable import SPATIAL_SIZES_ATTR as SIZES_ATTR
from nimble.dialects.loop import LevelAttr, Schedule, ScheduleAttr
from nimble.errors import CompileError
from nimble.lowering.spatial.model import Estimate, Machine, ModelError, Plan, Sizes, parse_machine


class SearchError(DiagnosticException, CompileError):
    """No design fits, or the sizes or machine given are wrong."""


@dataclass(frozen=True)
class Point:
    pars: tuple[int, ...]
    dram: tuple[bool, ...]  # per weight copy: moved to DRAM
    estimate: Estimate

    @property
    def key(self) -> tuple:
        return (self.estimate.run_cycles, self.estimate.units, self.pars, self.dram)


def _powers(limit: int, cap: int) -> list[int]:
    """1, 2, 4, ... below `limit`, then `limit` itself (all its iterations at once), at
    most `cap`."""
    values = [1]
    while values[-1] * 2 < limit and values[-1] * 2 <= cap:
        values.append(values[-1] * 2)
    if values[-1] < limit <= cap:
        values.append(limit)
    return values


def _label(plan: Plan, op: loop._LoopOp) -> str:
    kind = "reduce" if isinstance(op, loop.ReduceOp) else "foreach"
    return f"{kind}({plan.trips[op]})"


def search(program: loop.KernelOp, machine: Machine, sizes: Sizes, max_par: int = 1024
           ) -> tuple[Point, list[Point], int]:
    """(the chosen point, the Pareto front, how many points were costed); the program
    keeps the chosen schedules and levels."""
    plan = Plan(program, sizes)
    time_loops = [o for o in program.body.block.ops if isinstance(o, scf.ForOp)]
    inside = {o for t in time_loops for o in t.walk()}
    searched = [o for o in program.walk() if isinstance(o, loop.ForeachOp | loop.ReduceOp) and o in inside
                and any(isinstance(r, loop.ReduceOp) for r in o.walk())]
    for op in program.walk():  # the fixed choice for every other innermost loop
        if isinstance(op, loop.ForeachOp | loop.ReduceOp) and op not in searched and not any(
                isinstance(i, loop.ForeachOp | loop.ReduceOp) for i in op.body.block.ops):
            op.schedule = ScheduleAttr(Schedule(par=max(1, min(machine.lanes, plan.trips[op]))))
    stored_inside = {o.memref for t in time_loops for o in t.walk() if isinstance(o, memref.StoreOp)}
    weights = [a for a in program.body.block.ops if isinstance(a, loop.AllocOp)
               and len(a.memref.type.get_shape()) >= 2 and a.memref not in stored_inside]
    choices = [_powers(plan.trips[op], max_par) for op in searched]
    points: list[Point] = []
    costed = 0
    smallest: Estimate | None = None
    for dram in itertools.product((False, True), repeat=len(weights)):
        for alloc, moved in zip(weights, dram):
            alloc.level = LevelAttr(loop.Level.DRAM if moved else loop.Level.SRAM)
        for pars in itertools.product(*choices):
            for op, p in zip(searched, pars):
                op.schedule = _searched_schedule(op, p)
            est = plan.estimate(machine)
            costed += 1
            if est.fits:
                points.append(Point(pars, dram, est))
            elif smallest is None or est.units < smallest.units:
                smallest = est
    if not points:
        need = f"{smallest.pcus} PCUs and {smallest.pmus} PMUs" if smallest else "nothing"
        raise SearchError(f"spatial-dse: no design of @{program.sym_name.data} fits on {machine.describe()} "
                          f"(the smallest needs {need})")
    best = min(points, key=lambda p: p.key)
    front = pareto(points)
    for alloc, moved in zip(weights, best.dram):
        alloc.level = LevelAttr(loop.Level.DRAM if moved else loop.Level.SRAM)
    for op, p in zip(searched, best.pars):
        op.schedule = _searched_schedule(op, p)
    labels = [_label(plan, op) for op in searched]
    names = [a.memref.name_hint or "weights" for a in weights]
    program.attributes[REPORT_ATTR] = StringAttr(report(best, front, costed, labels, names))
    return best, front, costed


def _searched_schedule(op: loop._LoopOp, par: int) -> ScheduleAttr:
    nested = any(isinstance(i, loop.ForeachOp | loop.ReduceOp) for i in op.body.block.ops)
    return ScheduleAttr(Schedule(par=par, pipeline=nested))


def pareto(points: list[Point]) -> list[Point]:
    """The points no other point beats in both run cycles and units, by units."""
    front: list[Point] = []
    for p in sorted(points, key=lambda p: (p.estimate.units, p.estimate.run_cycles, p.pars, p.dram)):
        if not front or p.estimate.run_cycles < front[-1].estimate.run_cycles:
            front.append(p)
    return front


def _design(point: Point, labels: list[str], names: list[str]) -> str:
    parts = [f"{label} par {p}" for label, p in zip(labels, point.pars)]
    parts += [f"{n} in {'DRAM' if d else 'SRAM'}" for n, d in zip(names, point.dram)]
    return ", ".join(parts) or "(nothing to choose)"


def report(best: Point, front: list[Point], costed: int, labels: list[str], names: list[str]) -> str:
    e = best.estimate
    lines = [f"machine: {e.machine.describe()}", f"sizes: {e.sizes or '(static)'}",
             f"searched {costed} designs, {len(front)} on the Pareto front",
             f"chosen: {_design(best, labels, names)}", f"estimate: {e.summary()}",
             "Pareto front (run cycles vs units):"]
    for p in front:
        lines.append(f"  {p.estimate.run_cycles:>12} cycles  {p.estimate.units:>4} units "
                     f"({p.estimate.pcus} PCUs, {p.estimate.pmus} PMUs)  {_design(p, labels, names)}")
    return "\n".join(lines)


def parse_sizes(entries: tuple[str, ...]) -> dict[str, str]:
    given: dict[str, str] = {}
    for entry in entries:
        name, eq, value = entry.partition("=")
        if not eq or not name or not value:
            raise SearchError(f"spatial-dse: a size is 'name=value' or 'name=AxB', got '{entry}'")
        given[name] = value
    return given


@dataclass(frozen=True)
class SpatialDsePass(ModulePass):
    """Search `par` factors and memory levels of every spatial program."""

    name = "spatial-dse"
    sizes: tuple[str, ...] = ()
    machine: str = ""
    max_par: int = 1024

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        try:
            machine = parse_machine(self.machine)
        except ValueError as e:
            raise SearchError(f"spatial-dse: {e}") from None
        for program in loop.kernels_of(op, Device.SPATIAL):
            try:
                sizes = Sizes(program, parse_sizes(self.sizes))
                search(program, machine, sizes, self.max_par)
            except ModelError as e:
                raise SearchError(f"spatial-dse: @{program.sym_name.data}: {e}") from None
            program.attributes[SIZES_ATTR] = StringAttr(" ".join(self.sizes))
            program.attributes[MACHINE_ATTR] = StringAttr(self.machine)
