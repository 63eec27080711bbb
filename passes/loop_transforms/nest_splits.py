"""Splitting a loop nest at a point known at run time (schedule-loops: the rows or
columns a strategy takes, the rest scheduled apart). `split_nest` cuts the nest where a
`cut_of` function says (`whole_cut`: at whole tiles); an all-or-nothing cut keeps the
other side's bounds static."""

from __future__ import annotations

from collections.abc import Callable

from xdsl.builder import Builder
from xdsl.dialects.builtin import IndexType
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from nimble.dialects import arith, loop
from nimble.dialects.shape_functions import constant_index


def split_nest(outer: loop.ForeachOp, inner: loop.ForeachOp, rows: bool,
               cut_of: Callable[[Builder, SSAValue], SSAValue]) -> tuple[loop.ForeachOp, loop.ForeachOp] | None:
    """Split the nest's rows (`rows`) or columns at `cut_of(builder, rows)` (built before
    the nest). The nest keeps [0, cut) and returns a copy for [cut, n) (its iv counts from
    0; the body sees cut + iv). None if the bounds are computed inside the nest.

    A cut that is all or nothing (`select(c, n, 0)`: whole panels of columns that are
    whole panels, or none) keeps the copy's bounds as they are, in a loop that runs it
    once when not `c` (`_otherwise`): its columns stay static, so its tiles leave no
    run-time remainders (a dense layer of 128 columns at 8 rows: 4 x 4 tiles on 128
    columns, as a static shape would have them, not on 128 - cut)."""
    if any(outer.is_ancestor(v.owner) for v in (outer.upper, inner.upper) if isinstance(v.owner, Operation)):
        return None
    b = Builder(InsertPoint.before(outer))
    cut = cut_of(b, outer.upper)
    split = outer if rows else inner
    choice = cut.owner
    if isinstance(choice, arith.SelectOp) and choice.lhs is split.upper and constant_index(choice.rhs) == 0:
        rest = _otherwise(b, outer, choice.cond)
        split.operands = [split.lower, cut, split.step]
        return rest, next(o for o in rest.body.block.ops if isinstance(o, loop.ForeachOp))
    left = b.insert(arith.SubiOp(split.upper, cut)).result
    rest = outer.clone()
    Rewriter.insert_op(rest, InsertPoint.after(outer))
    rest_inner = next(o for o in rest.body.block.ops if isinstance(o, loop.ForeachOp))
    rest_split = rest if rows else rest_inner
    split.operands = [split.lower, cut, split.step]
    rest_split.operands = [rest_split.lower, left, rest_split.step]
    iv = rest_split.iv
    shifted = arith.AddiOp(cut, iv)
    rest_split.body.block.insert_op_before(shifted, rest_split.body.block.first_op)
    iv.replace_uses_with_if(shifted.result, lambda use: use.operation is not shifted)
    return rest, rest_inner


def index_constant(b: Builder, value: int) -> SSAValue:
    return b.insert(arith.ConstantOp.from_int_and_width(value, IndexType())).result


def _otherwise(b: Builder, nest: loop.ForeachOp, condition: SSAValue) -> loop.ForeachOp:
    """A copy of `nest` after it, in a loop that runs it once where `condition` is false."""
    trips = b.insert(arith.SelectOp(condition, index_constant(b, 0), index_constant(b, 1))).result
    block = Block(arg_types=[IndexType()])
    guard = loop.ForeachOp(index_constant(b, 0), trips, index_constant(b, 1), Region(block))
    Rewriter.insert_op(guard, InsertPoint.after(nest))
    copy = nest.clone()
    block.add_ops([copy, loop.YieldOp()])
    return copy


def whole_cut(n: SSAValue, width: int, least: int, most: int | None = None) -> Callable[[Builder, SSAValue], SSAValue]:
    """`cut_of` for `split_nest`: `n` rounded down to whole `width`s when the rows are at
    least `least` (and fewer than `most`), else 0 (`n` itself when whole: all or none)."""
    def cut_of(b: Builder, rows: SSAValue) -> SSAValue:
        static = constant_index(n)
        whole = n if static is not None and static % width == 0 else \
            b.insert(arith.SubiOp(n, b.insert(arith.RemSIOp(n, index_constant(b, width))).result)).result
        enough = b.insert(arith.CmpiOp(rows, index_constant(b, least), "sge")).result
        if most is not None:
            few = b.insert(arith.CmpiOp(rows, index_constant(b, most), "slt")).result
            enough = b.insert(arith.AndIOp(enough, few)).result
        return b.insert(arith.SelectOp(enough, whole, index_constant(b, 0))).result

    return cut_of
