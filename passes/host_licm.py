"""`host-licm`: move loop-invariant host computation out of `graph.while` loops.

Pure, speculatable ops (index arithmetic, constants, `dynshape.dim` of values defined
outside) whose operands are all defined outside a loop move in front of it, so the VM
runs them once rather than every iteration — e.g. the byte size of a buffer allocated
in each step of an LSTM. Integer division and remainder stay where they are: hoisted
out of a loop that runs zero times, a division by zero would fail a program that does
not divide. The invariance test is xdsl's (`can_be_hoisted`, as in its `licm` pass for
`scf.for`), applied to both regions of `graph.while`.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, Region
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import is_side_effect_free, is_speculatable
from xdsl.transforms.loop_invariant_code_motion import can_be_hoisted

from nimble.dialects import arith
from nimble.dialects.graph import WhileOp

MAY_TRAP = (arith.DivSIOp, arith.FloorDivSIOp, arith.CeilDivSIOp, arith.RemSIOp, arith.DivUIOp, arith.RemUIOp)
"""Ops that fail on some operands (division by zero): never moved out of a loop."""


def _hoist(region: Region, before: Operation) -> None:
    work = deque(op for block in region.blocks for op in block.ops)
    while work:
        op = work.popleft()
        if op.parent_region() is not region or isinstance(op, MAY_TRAP):
            continue
        if not (is_side_effect_free(op) and is_speculatable(op) and can_be_hoisted(op, region)):
            continue
        op.detach()
        Rewriter.insert_op(op, InsertPoint.before(before))
        work.extend(use.operation for r in op.results for use in r.uses if use.operation.parent_region() is region)


@dataclass(frozen=True)
class HostLicmPass(ModulePass):
    """Hoist pure, speculatable, non-trapping ops with outside operands out of `graph.while`."""

    name = "host-licm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        loops = [o for o in op.walk() if isinstance(o, WhileOp)]
        for loop in reversed(loops):  # inner loops first: what they hoist may move again
            for region in (loop.cond_region, loop.body_region):
                _hoist(region, loop)
