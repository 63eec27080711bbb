"""Strips of reductions: how `tile-vectorize` realises `tile = T` on a loop whose body
holds several reductions (the LSTM cell: eight dot products per output element).

The loop is strip-mined by T; in each strip every reduction runs for the whole strip
first, into a `reg`-level buffer of T values, and the rest of the body (the gate
epilogue) runs after, reading those buffers. Each reduction then streams its operand
rows contiguously for T columns (instead of switching between eight weight matrices at
every column), and the intermediates stay on chip. The new strip loops carry the
schedules their tiles need (columns unrolled, reductions vectorised), so `tile-vectorize`
goes on with them.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.builder import Builder
from xdsl.dialects import memref
from xdsl.dialects.builtin import IndexType, IntegerAttr, MemRefType
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint

from nimble.dialects import arith, loop
from nimble.dialects.shape_functions import constant_index


def _slice(op: Operation, body: Sequence[Operation]) -> list[Operation]:
    """The body ops `op` depends on (transitively, through operands and region uses)."""
    members = set(body)
    needed: set[Operation] = set()
    work = [op]
    while work:
        current = work.pop()
        for inner in current.walk():
            for v in inner.operands:
                owner = v.owner
                if isinstance(owner, Operation) and owner in members and owner not in needed:
                    needed.add(owner)
                    work.append(owner)
    return [o for o in body if o in needed]


def distribute(foreach: loop.ForeachOp, columns: int, lanes: int) -> list[loop.ForeachOp] | None:
    """Rewrite `foreach` (schedule `tile = T`) into strips; the new innermost loops, or
    None when it does not apply (fewer than two reduction results, non-unit bounds,
    stores inside reductions)."""
    schedule = foreach.schedule.schedule if foreach.schedule is not None else None
    if schedule is None or schedule.tile < 2:
        return None
    if constant_index(foreach.lower) != 0 or constant_index(foreach.step) != 1:
        return None
    body = [o for o in foreach.body.block.ops if not isinstance(o, loop.YieldOp)]
    reduces = [o for o in body if isinstance(o, loop.ReduceOp)]
    if sum(len(r.results) for r in reduces) < 2:
        return None
    if any(isinstance(o, memref.StoreOp) for r in reduces for o in r.walk()):
        return None
    strip = schedule.tile
    anchor = foreach
    b = Builder(InsertPoint.before(anchor))

    def const(n: int) -> SSAValue:
        return b.insert(arith.ConstantOp(IntegerAttr(n, IndexType()))).result

    new_loops: list[loop.ForeachOp] = []
    outer_block = Block(arg_types=[IndexType()])
    j0 = outer_block.args[0]
    ob = Builder(InsertPoint.at_end(outer_block))
    size = ob.insert(arith.MinSIOp(const(strip), ob.insert(arith.SubiOp(foreach.upper, j0)).result)).result
    zero, one = const(0), const(1)
    buffers: dict[SSAValue, SSAValue] = {}
    for result in (v for r in reduces for v in r.results):
        buffers[result] = ob.insert(loop.AllocOp(loop.Level.REG, MemRefType(result.type, [strip]))).memref

    def strip_loop(ops: Sequence[Operation], finish, sched: loop.Schedule) -> loop.ForeachOp:
        block = Block(arg_types=[IndexType()])
        jj = block.args[0]
        lb = Builder(InsertPoint.at_end(block))
        j = lb.insert(arith.AddiOp(j0, jj)).result
        mapping: dict[SSAValue, SSAValue] = {foreach.iv: j}
        for value, buf in buffers.items():
            if any(value in o.operands or any(value in i.operands for i in o.walk()) for o in ops):
                mapping[value] = lb.insert(memref.LoadOp.get(buf, [jj])).res
        for o in ops:
            lb.insert(o.clone(value_mapper=mapping))
        finish(lb, mapping, jj)
        lb.insert(loop.YieldOp())
        new = loop.ForeachOp(zero, size, one, Region(block), loop.ScheduleAttr(sched))
        ob.insert(new)
        new_loops.append(new)
        return new

    for r in reduces:
        ops = [*_slice(r, body), r]

        def store_result(lb: Builder, mapping, jj, r=r) -> None:
            for result in r.results:
                lb.insert(memref.StoreOp.get(mapping[result], buffers[result], [jj]))

        strip_loop(ops, store_result, loop.Schedule(unroll=columns if columns > 1 else 0))
    rest = [o for o in body if not isinstance(o, loop.ReduceOp)]
    strip_loop(rest, lambda lb, mapping, jj: None, loop.Schedule(vector=lanes))
    ob.insert(loop.YieldOp())
    kept = loop.Schedule(parallel=schedule.parallel)
    b.insert(loop.ForeachOp(zero, foreach.upper, const(strip), Region(outer_block),
                            loop.ScheduleAttr(kept) if kept != loop.Schedule() else None))
    # The reductions keep their own schedules (vector lanes along k) through the clone.
    foreach.detach()
    foreach.erase()
    return new_loops
