"""`hoist-invariant`: move loop-invariant computation out of `loop.foreach` bodies.

An op moves out of a loop when none of its operands (nor any value its regions use from
outside) is defined inside the loop, it has no side effect other than reading memory,
and the loop writes no buffer it reads. Whole `loop.reduce` nests move this way: this is
what turns softmax's per-element row max and sum into one per row.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import memref
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import is_side_effect_free

from nimble.dialects import loop

_READS = (memref.LoadOp, memref.DimOp)


def _movable(op: Operation) -> bool:
    """Pure, or reads memory only (loads, and reduces/arith over loads)."""
    for inner in op.walk():
        if isinstance(inner, (*_READS, loop.ReduceOp, loop.YieldOp)):
            continue
        if not is_side_effect_free(inner):
            return False
    return True


def _stored_buffers(scope: Operation) -> set[SSAValue]:
    return {o.memref for o in scope.walk() if isinstance(o, memref.StoreOp)}


def _loaded_buffers(op: Operation) -> set[SSAValue]:
    return {o.memref for o in op.walk() if isinstance(o, memref.LoadOp)}


def _uses_from_outside(op: Operation) -> list[SSAValue]:
    values = list(op.operands)
    for inner in op.walk():
        if inner is not op:
            values.extend(v for v in inner.operands if not loop.defined_inside(v, op))
    return values


def hoist_from(foreach: loop.ForeachOp) -> bool:
    stored = _stored_buffers(foreach)
    changed = False
    for op in list(foreach.body.block.ops):
        if isinstance(op, loop.YieldOp) or not _movable(op):
            continue
        if any(loop.defined_inside(v, foreach) for v in _uses_from_outside(op)):
            continue
        if _loaded_buffers(op) & stored:
            continue
        op.detach()
        Rewriter.insert_op(op, InsertPoint.before(foreach))
        changed = True
    return changed


@dataclass(frozen=True)
class HoistInvariantPass(ModulePass):
    """Hoist loop-invariant ops (including whole reductions) out of loop.foreach."""

    name = "hoist-invariant"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        changed = True
        while changed:
            changed = False
            # Innermost loops first, so that an op can travel out several levels.
            loops = [o for o in op.walk() if isinstance(o, loop.ForeachOp)]
            for foreach in reversed(loops):
                changed |= hoist_from(foreach)
