"""Index-set splitting of loops: a `loop.reduce` or `loop.foreach` over `[lb, ub)` whose
body selects on `iv >= c` (a constant inside the range) becomes two loops, `[lb, c)`
then `[c, ub)` (a reduction's second part starts from the first's results), in each of
which the comparison is a constant.

A reduction over a concatenation is the case this is for: the LSTM cell's
`dense(concat(x, h), w)` reads `k < len(x) ? x[k] : h[k - len(x)]` with both indices
clamped into range, a gather the vectoriser cannot take. Split at `len(x)`, the range
facts of each part (`fold_index_ranges`) decide the comparison and the clamps, and each
part reads one operand contiguously. The accumulation order is unchanged (the second
part continues the first), so results are bit-identical.

A loop over a concatenation's axis is the other (`split-index-sets`): a kernel that
reads `concat(x_0, ..., x_k)` per element (a batch norm after it: DenseNet's layers)
selects over every operand at each channel; split at the seams, each part reads one
operand. (A concat of a heavy op's output with other large tensors no longer joins the
heavy op's kernel: `fuse_ops._copies_in`.)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from xdsl.dialects.builtin import IndexType, IntegerAttr
from xdsl.ir import Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from nimble.dialects import arith, loop

# arith.cmpi predicates comparing `iv` with `c` -> the first index of the upper part.
_SPLIT_AT = {2: 0, 5: 0, 3: 1, 4: 1}  # slt/sge: iv < c | iv >= c; sle/sgt: iv <= c | iv > c


def _constant(v: SSAValue) -> int | None:
    op = v.owner
    if isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr) and isinstance(v.type, IndexType):
        return op.value.value.data
    return None


def _split_point(red: loop.ReduceOp | loop.ForeachOp) -> int | None:
    """A constant `c`, `lb < c < ub` (a multiple of the step from `lb`), where a select
    in the body switches on `iv` against it."""
    lb, ub, step = _constant(red.lower), _constant(red.upper), _constant(red.step)
    if lb is None or ub is None or step is None or step < 1:
        return None
    for op in red.body.block.ops:
        if not isinstance(op, arith.CmpiOp) or op.lhs is not red.iv:
            continue
        c = _constant(op.rhs)
        shift = _SPLIT_AT.get(op.predicate.value.data)
        if c is None or shift is None or not any(isinstance(u.operation, arith.SelectOp) for u in op.result.uses):
            continue
        at = c + shift
        if lb < at < ub and (at - lb) % step == 0:
            return at
    return None


def _split(red: loop.ReduceOp, at: int) -> tuple[loop.ReduceOp, loop.ReduceOp]:
    point = arith.ConstantOp(IntegerAttr(at, IndexType()))
    lower = loop.ReduceOp(red.lower, point.result, red.step, list(red.inits), red.kinds, red.body.clone(), red.schedule)
    upper = loop.ReduceOp(point.result, red.upper, red.step, list(lower.outs), red.kinds, red.body.clone(), red.schedule)
    Rewriter.insert_op([point, lower, upper], InsertPoint.before(red))
    for old, new in zip(red.outs, upper.outs):
        old.replace_all_uses_with(new)
    Rewriter.erase_op(red)
    return lower, upper


def _split_foreach(foreach: loop.ForeachOp, at: int) -> tuple[loop.ForeachOp, loop.ForeachOp]:
    point = arith.ConstantOp(IntegerAttr(at, IndexType()))
    lower = loop.ForeachOp(foreach.lower, point.result, foreach.step, foreach.body.clone(), foreach.schedule)
    upper = loop.ForeachOp(point.result, foreach.upper, foreach.step, foreach.body.clone(), foreach.schedule)
    Rewriter.insert_op([point, lower, upper], InsertPoint.before(foreach))
    Rewriter.erase_op(foreach)
    return lower, upper


def split_loops(scope: Operation) -> int:
    """Split every foreach loop in `scope` at the selects on its induction variable (until
    none is left); returns how many splits were made."""
    return _split_all(scope, loop.ForeachOp, _split_foreach)


def split_reductions(scope: Operation) -> int:
    """Split every reduction in `scope` at the selects on its induction variable (until
    none is left); returns how many splits were made."""
    return _split_all(scope, loop.ReduceOp, _split)


def _split_all(scope: Operation, kind: type[loop.ForeachOp | loop.ReduceOp],
               split: Callable[[Any, int], tuple[Operation, Operation]]) -> int:
    splits = 0
    work = [o for o in scope.walk() if isinstance(o, kind)]
    while work:
        op = work.pop()
        at = _split_point(op)
        if at is None:
            continue
        work.extend(split(op, at))  # each part may hold another (a concatenation of three)
        splits += 1
    return splits
