"""Canonicalization of `graph.while`: carried values nothing needs are dropped.

A carried value is dead when the loop's result for it is unused, the condition does not
read it, and no other carried value, nor any op with effects, depends on it in the body:
then its initial value, its block arguments, the body ops computing only its next value
(an ONNX recurrence's stacked outputs `Y` when only `Y_h` is used: a concatenation that
grows every step) and its result all go.
"""

from __future__ import annotations

from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern
from xdsl.traits import is_side_effect_free

from nimble.dialects.graph.control import WhileOp, YieldOp


def _needed(body: Block, roots: list[SSAValue]) -> set[Operation]:
    """Ops of `body` (top level) that the `roots` or any op with effects depend on."""
    needed: set[Operation] = set()
    work: list[Operation] = [o for o in body.ops if not isinstance(o, YieldOp) and not is_side_effect_free(o)]
    work += [v.owner for v in roots if isinstance(v.owner, Operation)]
    while work:
        op = body.find_ancestor_op_in_block(work.pop())
        if op is None or op in needed:
            continue
        needed.add(op)
        for inner in op.walk():
            work += [v.owner for v in inner.operands if isinstance(v.owner, Operation)]
    return needed


class DropDeadCarriedValues(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: WhileOp, rewriter: PatternRewriter) -> None:
        cond, body = op.cond_region.block, op.body_region.block
        yielded = body.last_op
        count = len(op.outputs)
        dead = [k for k in range(count) if not op.outputs[k].uses and not cond.args[k].uses]
        if not dead or not isinstance(yielded, YieldOp):
            return
        while True:  # a value kept alive keeps what computes its next value: to a fixpoint
            needed = _needed(body, [yielded.operands[k] for k in range(count) if k not in dead])
            alive = [k for k in dead if any(use.index not in dead if use.operation is yielded
                                            else body.find_ancestor_op_in_block(use.operation) in needed
                                            for use in body.args[k].uses)]
            if not alive:
                break
            dead = [k for k in dead if k not in alive]
        if not dead:
            return
        keep = [k for k in range(count) if k not in dead]
        rewriter.replace(yielded, YieldOp([yielded.operands[k] for k in keep]))
        for o in reversed(list(body.ops)[:-1]):  # what only the dead values needed (pure, by `_needed`)
            if o not in needed:
                rewriter.erase(o, safe_erase=False)
        for k in reversed(dead):
            rewriter.erase_block_argument(body.args[k])
            rewriter.erase_block_argument(cond.args[k])
        new_cond, new_body = Region(), Region()
        op.cond_region.move_blocks(new_cond)
        op.body_region.move_blocks(new_body)
        new = WhileOp([op.inits[k] for k in keep], [op.outputs[k].type for k in keep], new_cond, new_body)
        new.attributes.update(op.attributes)
        results = iter(new.outputs)
        rewriter.replace(op, new, [next(results) if k in keep else None for k in range(count)])
