"""`simplify-host`: canonicalize (and optionally CSE) the host functions only.

The memory stage (`manifest-alloc`, `int-range-optimizations`, `plan-memory`) rewrites
host code: the allocations, shape arithmetic and launches around kernels. Kernels were
simplified at the end of the loops stage and are not changed after, but xdsl's
`canonicalize` and `cse` walk the whole module: with register tiles and packed panels
the kernels hold most of its ops (BERT 4x256: ~20x the host code), so each whole-module
run cost more than the memory stage's own passes. This runs the same patterns, on the
functions that are not kernels, with one more: index offsets folded across chains of
`addi`/`subi` by constants (`FoldIndexOffsets`, MLIR's `AddIAddConstant` family, which
xdsl's arith patterns lack) and into floor and ceiling divisions by constants
(`FoldOffsetIntoDivision`). A convolution's output extent `(h + 2 * pad - k) // s + 1`
reaches the host as four such ops: at `s = 1` it is `h` again, at `s = 2` (k = 3,
pad = 1) `(h + 1) // 2`, and the VM runs one division or nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import IndexType, IntegerAttr, ModuleOp
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.transforms.canonicalize import CanonicalizationRewritePattern
from xdsl.transforms.common_subexpression_elimination import cse
from xdsl.transforms.dead_code_elimination import region_dce

from nimble.dialects import arith
from nimble.dialects.shape_functions import constant_index


def _offset(op: object) -> tuple[SSAValue, int] | None:
    """(x, c) when `op` computes `x + c` on index values: `x + c`, `c + x` or `x - c`
    with `c` a constant (`c - x` is not an offset of `x`)."""
    if not isinstance(op, arith.AddiOp | arith.SubiOp) or not isinstance(op.result.type, IndexType):
        return None
    if (c := constant_index(op.rhs)) is not None:
        return op.lhs, c if isinstance(op, arith.AddiOp) else -c
    if isinstance(op, arith.AddiOp) and (c := constant_index(op.lhs)) is not None:
        return op.rhs, c
    return None


class FoldIndexOffsets(RewritePattern):
    """`(x + c1) + c2` -> `x + (c1 + c2)`, and alike with subtractions (`_offset`): the
    constant folded, exact on the VM's unbounded index integers. `x + 0` then folds to
    `x` (xdsl's `SignlessIntegerBinaryOperationZeroOrUnitRight`)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.AddiOp | arith.SubiOp, rewriter: PatternRewriter, /) -> None:
        outer = _offset(op)
        if outer is None or (inner := _offset(outer[0].owner)) is None:
            return
        value, first = inner
        total = arith.ConstantOp(IntegerAttr(first + outer[1], IndexType()))
        rewriter.replace(op, [total, arith.AddiOp(value, total.result)])


class FoldOffsetIntoDivision(RewritePattern):
    """`floordiv(x, b) + c` -> `floordiv(x + b * c, b)` for a constant `b` (and alike
    for `ceildiv`): exact for any integer `c`, and the new offset of `x` folds with one
    it had (`FoldIndexOffsets`): a 2x2 pooling's output extent `(h - 2) // 2 + 1` is
    `h // 2`. Only when the division has no other use (else it would stay, and the VM
    run one more division)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.AddiOp | arith.SubiOp, rewriter: PatternRewriter, /) -> None:
        outer = _offset(op)
        if outer is None:
            return
        quotient, c = outer
        division = quotient.owner
        if not isinstance(division, arith.FloorDivSIOp | arith.CeilDivSIOp) or quotient.get_user_of_unique_use() is not op:
            return
        b = constant_index(division.rhs)
        if not b:
            return
        shift = arith.ConstantOp(IntegerAttr(b * c, IndexType()))
        shifted = arith.AddiOp(division.lhs, shift.result)
        rewriter.replace(op, [shift, shifted, type(division)(shifted.result, division.rhs)])


@dataclass(frozen=True)
class SimplifyHostPass(ModulePass):
    """Canonicalization patterns (and CSE with `cse=true`) on every non-kernel function."""

    name = "simplify-host"

    cse: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        pattern = GreedyRewritePatternApplier([CanonicalizationRewritePattern(), FoldIndexOffsets(), FoldOffsetIntoDivision()], ctx=ctx,
                                              folding_enabled=True)
        for f in op.body.block.ops:
            if not isinstance(f, func.FuncOp) or not f.body.blocks:
                continue
            PatternRewriteWalker(pattern, post_walk_func=region_dce).rewrite_region(f.body)
            if self.cse:
                cse(f)
