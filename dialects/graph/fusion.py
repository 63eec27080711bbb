"""`graph.fused`: a group of graph ops that later stages compile as one kernel.

Its region is isolated from above: the block arguments are the group's inputs, the
yielded values its outputs. `fuse-ops` creates these groups.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from xdsl.ir import Attribute, Block, Region, SSAValue
from xdsl.irdl import IRDLOperation, irdl_op_definition, region_def, traits_def, var_operand_def, var_result_def
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import IsolatedFromAbove, RecursiveMemoryEffect

from nimble.dialects.graph.base import op_error
from nimble.dialects.graph.control import YieldOp, check_terminator, check_yielded, parse_bindings, print_bindings
from nimble.dialects.interfaces import EvalContext, HasReference


@irdl_op_definition
class FusedOp(IRDLOperation, HasReference):
    """A fusion group: ops computed together, intermediates never leaving the kernel.

    Example:
    ```
    %y = graph.fused (%a = %x, %b = %w) : (tensor<?x8xf32>, tensor<4x8xf32>) -> (tensor<?x4xf32>) {
      %d = graph.dense %a, %b : (tensor<?x8xf32>, tensor<4x8xf32>) -> tensor<?x4xf32>
      %r = graph.relu %d : tensor<?x4xf32> -> tensor<?x4xf32>
      graph.yield %r : tensor<?x4xf32>
    }
    ```
    """

    name = "graph.fused"
    inputs = var_operand_def()
    outputs = var_result_def()
    body = region_def("single_block")
    traits = traits_def(IsolatedFromAbove(), RecursiveMemoryEffect())

    def __init__(self, inputs: Sequence[SSAValue], result_types: Sequence[Attribute], body: Region):
        super().__init__(operands=[inputs], result_types=[result_types], regions=[body])

    def verify_(self) -> None:
        args = [a.type for a in self.body.block.args]
        if args != [v.type for v in self.inputs]:
            raise op_error(self, "region arguments must have the types of the inputs")
        yielded = check_terminator(self, self.body, YieldOp, "body")
        check_yielded(self, yielded.operands, [r.type for r in self.outputs], "body")

    def evaluate(self, ctx: EvalContext, args: Sequence[Any]) -> Sequence[Any]:
        return ctx.run_region(self.body, args)

    def print(self, printer: Printer) -> None:
        print_bindings(printer, self.body.block.args, self.inputs, [r.type for r in self.outputs])
        printer.print_region(self.body, print_entry_block_args=False)
        printer.print_op_attributes(self.attributes, print_keyword=True)

    @classmethod
    def parse(cls, parser: Parser) -> FusedOp:
        args, operands, signature = parse_bindings(parser)
        body = parser.parse_region([a.resolve(t) for a, t in zip(args, signature.inputs.data)])
        op = cls(operands, signature.outputs.data, body)
        if (attrs := parser.parse_optional_attr_dict_with_keyword()) is not None:
            op.attributes |= attrs.data
        return op


def fused_region(arg_types: Sequence[Attribute]) -> Region:
    return Region(Block(arg_types=arg_types))
