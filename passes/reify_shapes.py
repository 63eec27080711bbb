"""`reify-shapes`: make the run-time shape of every dynamically shaped tensor explicit.

Before each op whose results have `?` dims, emit the shape IR its shape function
computes (`dynshape.dim`, `arith` on index, `dynshape.assert` for checks that could not be
decided statically) and a `dynshape.from_dims`; after it, `dynshape.bind` ties the result to
that shape. Dims chain through already reified values back to the function's inputs
(and to results of calls and control flow, whose dims are read with `dynshape.dim`). For a
data-dependent op (nms) the bound shape is an `upper_bound`, and consumers use the
actual dims, read after the op. The emitted IR is then cleaned with `canonicalize` and
`cse`: no duplicate `dynshape.dim` of a value, constant dims folded.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Block, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.transforms.canonicalize import CanonicalizePass
from xdsl.transforms.common_subexpression_elimination import CommonSubexpressionElimination

from nimble.diagnostics import OpError
from nimble.dialects import dynshape
from nimble.dialects.graph import GraphOp
from nimble.dialects.shape_functions import ReifyDims, ShapeError

Known = dict[SSAValue, list[int | SSAValue]]


def _is_dynamic(value: SSAValue) -> bool:
    return isinstance(value.type, TensorType) and not value.type.has_static_shape()


def _reify_block(block: Block, known: Known) -> None:
    for op in list(block.ops):
        for region in op.regions:
            for inner in region.blocks:
                _reify_block(inner, dict(known))
        if not isinstance(op, GraphOp) or not any(_is_dynamic(r) for r in op.results):
            continue
        k = ReifyDims(op, known)
        try:
            shapes = op.shape_function(k)
        except ShapeError as e:
            raise OpError(op, str(e)) from None
        after = InsertPoint.after(op)
        for result, dims in zip(op.results, shapes):
            if not _is_dynamic(result):
                continue
            values = [k.value(d) for d in dims]
            shape_value = k.builder.insert(dynshape.FromDimsOp(values)).results[0]
            bind = dynshape.BindOp(result, shape_value, upper_bound=op.DATA_DEPENDENT)
            bind.location = op.location
            Rewriter.insert_op(bind, after)
            if not op.DATA_DEPENDENT:
                known[result] = dims


@dataclass(frozen=True)
class ReifyShapesPass(ModulePass):
    """Emit the shape IR computing every dynamic dim, bound with dynshape.bind."""

    name = "reify-shapes"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for function in op.ops:
            if isinstance(function, func.FuncOp) and not function.is_declaration:
                _reify_block(function.body.block, {})
        # canonicalize folds (x*1 -> x) can make two binds identical; the walker does not
        # revisit a bind whose operand changed, so a last canonicalize drops them.
        CanonicalizePass().apply(ctx, op)
        CommonSubexpressionElimination().apply(ctx, op)
        CanonicalizePass().apply(ctx, op)
