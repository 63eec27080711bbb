"""A small out-of-tree dialect and pass, exactly as docs/adding-a-dialect.md builds them."""

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Dialect
from xdsl.irdl import IRDLOperation, irdl_op_definition, operand_def, result_def, traits_def
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.traits import Pure

from nimble.dialects.graph import AddOp
from nimble.dialects.interfaces import InfersResultTypes


@irdl_op_definition
class DoubleOp(IRDLOperation, InfersResultTypes):
    """Twice the input.

    Example: `%y = toy.double %x : tensor<?xf32> -> tensor<?xf32>`
    """

    name = "toy.double"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"
    traits = traits_def(Pure())

    @classmethod
    def result_types_for(cls, operands, properties):
        """What makes `toy.double(%x)` usable in .nb files."""
        return [operands[0].type]


Toy = Dialect("toy", [DoubleOp])


class _LowerDouble(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: DoubleOp, rewriter: PatternRewriter) -> None:
        rewriter.replace_op(op, AddOp(operands=[op.input, op.input], result_types=[op.result.type]))


@dataclass(frozen=True)
class LowerToyToGraph(ModulePass):
    """Rewrite toy.double x as graph.add x, x."""

    name = "lower-toy-to-graph"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(_LowerDouble()).rewrite_module(op)


def register(registry) -> None:
    """The entry point Nimble calls (group `nimble.plugins`)."""
    registry.add_dialect("toy", lambda: Toy)
    registry.add_pass(LowerToyToGraph.name, lambda: LowerToyToGraph)
