"""Structured control flow and tuples: `graph.if`, `graph.while`, their terminators,
`graph.make_tuple` and `graph.get_item`. Calls and recursion use xdsl's `func`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import I64, FunctionType, IntegerAttr, IntegerType, TensorType, TupleType, i64
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern
from xdsl.traits import HasCanonicalizationPatternsTrait, IsTerminator, Pure, RecursiveMemoryEffect, is_side_effect_free

from nimble.dialects.graph.base import op_error
from nimble.dialects.graph.layout import ConcatOp
from nimble.dialects.graph.types import types_compatible
from nimble.dialects.interfaces import EvalContext, HasReference


def _is_condition_type(t: Attribute) -> bool:
    """`i1`, or a one-element `i1` tensor (`tensor<i1>`, `tensor<1xi1>`)."""
    if t == IntegerType(1):
        return True
    return (
        isinstance(t, TensorType)
        and t.element_type == IntegerType(1)
        and all(d == 1 for d in t.get_shape())
    )


def truth(value: Any) -> bool:
    """The Python truth of a condition value (an i1 scalar or one-element tensor)."""
    return bool(np.asarray(value).reshape(-1)[0])


def check_terminator(op: Operation, region: Region, terminator: type[Operation], what: str) -> Operation:
    """The terminator of the single block of `region`, checked to be a `terminator`."""
    if len(region.blocks) != 1:
        raise op_error(op, f"{what} must have exactly one block")
    last = region.block.last_op
    if not isinstance(last, terminator):
        raise op_error(op, f"{what} must end with '{terminator.name}'")
    return last


def check_yielded(op: Operation, values: Sequence[SSAValue], types: Sequence[Attribute], what: str) -> None:
    """Yielded values must match `types` in count and be compatible with each."""
    if len(values) != len(types):
        raise op_error(op, f"{what} yields {len(values)} values, expected {len(types)}")
    for i, (v, t) in enumerate(zip(values, types)):
        if not types_compatible(v.type, t):
            raise op_error(op, f"{what} yields {v.type} as value #{i}, incompatible with {t}")


def print_bindings(printer: Printer, args: Sequence[SSAValue], values: Sequence[SSAValue], results: Sequence[Attribute]) -> None:
    """` (%arg = %value, ...) : (value types) -> (result types) `: region arguments bound
    to operands, as graph.while and graph.fused write them."""
    printer.print_string(" (")
    for i, (arg, value) in enumerate(zip(args, values)):
        if i:
            printer.print_string(", ")
        printer.print_operand(arg)
        printer.print_string(" = ")
        printer.print_operand(value)
    printer.print_string(") : ")
    printer.print_function_type([v.type for v in values], results)
    printer.print_string(" ")


def parse_bindings(parser: Parser) -> tuple[list[Any], list[SSAValue], FunctionType]:
    """Parse what `print_bindings` prints: (unresolved region arguments, operands, signature)."""

    def binding() -> tuple[Any, Any]:
        arg = parser.parse_argument(expect_type=False)
        parser.parse_punctuation("=")
        return arg, parser.parse_unresolved_operand()

    pairs = parser.parse_comma_separated_list(parser.Delimiter.PAREN, binding)
    parser.parse_punctuation(":")
    pos = parser.pos
    signature = parser.parse_function_type()
    inputs = signature.inputs.data
    if len(pairs) != len(inputs):
        parser.raise_error(f"{len(pairs)} bound values but {len(inputs)} types", pos, parser.pos)
    operands = [parser.resolve_operand(o, t) for (_, o), t in zip(pairs, inputs)]
    return [a for a, _ in pairs], operands, signature


@irdl_op_definition
class YieldOp(IRDLOperation):
    """Ends a region of `graph.if`, `graph.while` (body) or `graph.match`, giving its values.

    Example: `graph.yield %a, %b : tensor<?xf32>, tensor<i64>`
    """

    name = "graph.yield"
    values = var_operand_def()
    assembly_format = "attr-dict ($values^ `:` type($values))?"
    traits = traits_def(IsTerminator(), Pure())

    def __init__(self, values: Sequence[SSAValue] = ()):
        super().__init__(operands=[values])


@irdl_op_definition
class ConditionOp(IRDLOperation):
    """Ends the condition region of `graph.while`: continue while the value is true.

    Example: `graph.condition %keep_going : tensor<i1>`
    """

    name = "graph.condition"
    condition = operand_def()
    assembly_format = "$condition attr-dict `:` type($condition)"
    traits = traits_def(IsTerminator(), Pure())

    def verify_(self) -> None:
        if not _is_condition_type(self.condition.type):
            raise op_error(self, f"condition must be i1 or tensor<i1>, not {self.condition.type}")


@irdl_op_definition
class IfOp(IRDLOperation, HasReference):
    """Run one of two regions on a run-time condition; both yield the results.

    Example:
    ```
    %r = graph.if %c : tensor<i1> -> (tensor<?xf32>) {
      graph.yield %a : tensor<?xf32>
    } else {
      graph.yield %b : tensor<?xf32>
    }
    ```
    """

    name = "graph.if"
    condition = operand_def()
    outputs = var_result_def()
    then_region = region_def("single_block")
    else_region = region_def("single_block")
    assembly_format = (
        "$condition `:` type($condition) (`->` `(` type($outputs)^ `)`)? "
        "$then_region `else` $else_region attr-dict"
    )
    traits = traits_def(RecursiveMemoryEffect())

    def __init__(self, condition: SSAValue, result_types: Sequence[Attribute], then_region: Region, else_region: Region):
        super().__init__(operands=[condition], result_types=[result_types], regions=[then_region, else_region])

    def verify_(self) -> None:
        if not _is_condition_type(self.condition.type):
            raise op_error(self, f"condition must be i1 or tensor<i1>, not {self.condition.type}")
        types = [r.type for r in self.outputs]
        for region, what in ((self.then_region, "then region"), (self.else_region, "else region")):
            if region.block.args:
                raise op_error(self, f"{what} must not take arguments")
            yielded = check_terminator(self, region, YieldOp, what)
            check_yielded(self, yielded.operands, types, what)

    def evaluate(self, ctx: EvalContext, args: Sequence[Any]) -> Sequence[Any]:
        region = self.then_region if truth(args[0]) else self.else_region
        return ctx.run_region(region, [])


class _WhileCanonicalization(HasCanonicalizationPatternsTrait):
    @classmethod
    def get_canonicalization_patterns(cls) -> tuple[RewritePattern, ...]:
        return (DropDeadCarriedValues(),)


def stacked_rows(body: Block) -> dict[int, tuple[SSAValue, bool]]:
    """The carried values that each step of a loop body grows by rows along axis 0: the
    body yields `concat(itself, rows, axis=0)` (rows after the earlier steps', as ONNX's
    LSTM stacks `Y`) or `concat(rows, itself, axis=0)` (before them: a reverse
    direction's). Position -> (the rows, whether they go first)."""
    found: dict[int, tuple[SSAValue, bool]] = {}
    for i, value in enumerate(body.last_op.operands if body.last_op is not None else ()):
        op = value.owner
        if not isinstance(op, ConcatOp) or op.axis.value.data != 0 or len(op.operands) != 2:
            continue
        first, second = op.operands
        if (first is body.args[i]) != (second is body.args[i]):
            found[i] = (first, True) if second is body.args[i] else (second, False)
    return found


@irdl_op_definition
class WhileOp(IRDLOperation, HasReference):
    """Loop with carried values: the condition region decides, the body yields the next
    values. A carried type may be less static than its initial value (a dim that changes
    between iterations is `?`).

    Example:
    ```
    %i, %h = graph.while (%i0 = %zero, %h0 = %init) : (tensor<i64>, tensor<1x?xf32>) -> (tensor<i64>, tensor<1x?xf32>) {
      %c = graph.less %i0, %n : (tensor<i64>, tensor<i64>) -> tensor<i1>
      graph.condition %c : tensor<i1>
    } do {
    ^bb0(%i1: tensor<i64>, %h1: tensor<1x?xf32>):
      graph.yield %i1, %h1 : tensor<i64>, tensor<1x?xf32>
    }
    ```
    """

    name = "graph.while"
    inits = var_operand_def()
    outputs = var_result_def()
    cond_region = region_def("single_block")
    body_region = region_def("single_block")
    traits = traits_def(RecursiveMemoryEffect(), _WhileCanonicalization())

    def __init__(self, inits: Sequence[SSAValue], result_types: Sequence[Attribute], cond: Region, body: Region):
        super().__init__(operands=[inits], result_types=[result_types], regions=[cond, body])

    def verify_(self) -> None:
        types = [r.type for r in self.outputs]
        check_yielded(self, self.inits, types, "initial values:")
        for region, what in ((self.cond_region, "condition region"), (self.body_region, "body region")):
            arg_types = [a.type for a in region.block.args]
            if arg_types != types:
                raise op_error(self, f"{what} arguments must have the carried types ({len(types)} values)")
        check_terminator(self, self.cond_region, ConditionOp, "condition region")
        yielded = check_terminator(self, self.body_region, YieldOp, "body region")
        check_yielded(self, yielded.operands, types, "body region")

    def stacked(self) -> dict[int, tuple[SSAValue, bool]]:
        """The carried values that each step grows by rows (`stacked_rows` of the body)."""
        return stacked_rows(self.body_region.block)

    def evaluate(self, ctx: EvalContext, args: Sequence[Any]) -> Sequence[Any]:
        values = list(args)
        while truth(ctx.run_region(self.cond_region, values)[0]):
            values = ctx.run_region(self.body_region, values)
        return values

    def print(self, printer: Printer) -> None:
        print_bindings(printer, self.cond_region.block.args, self.inits, [r.type for r in self.outputs])
        printer.print_region(self.cond_region, print_entry_block_args=False)
        printer.print_string(" do ")
        printer.print_region(self.body_region)
        printer.print_op_attributes(self.attributes, print_keyword=True)

    @classmethod
    def parse(cls, parser: Parser) -> WhileOp:
        pos = parser.pos
        args, inits, signature = parse_bindings(parser)
        outputs = signature.outputs.data
        if len(outputs) != len(inits):
            parser.raise_error(f"{len(inits)} carried values but {len(outputs)} result types", pos, parser.pos)
        cond = parser.parse_region([a.resolve(t) for a, t in zip(args, outputs)])
        parser.parse_keyword("do")
        body = parser.parse_region()
        op = cls(inits, outputs, cond, body)
        if (attrs := parser.parse_optional_attr_dict_with_keyword()) is not None:
            op.attributes |= attrs.data
        return op


@irdl_op_definition
class MakeTupleOp(IRDLOperation, HasReference):
    """Group values into a tuple.

    Example: `%t = graph.make_tuple %h, %c : (tensor<1x256xf32>, tensor<1x256xf32>) -> tuple<tensor<1x256xf32>, tensor<1x256xf32>>`
    """

    name = "graph.make_tuple"
    elements = var_operand_def()
    result = result_def(TupleType)
    assembly_format = "$elements attr-dict `:` functional-type($elements, $result)"
    traits = traits_def(Pure())

    def __init__(self, elements: Sequence[SSAValue]):
        super().__init__(operands=[elements], result_types=[TupleType(tuple(e.type for e in elements))])

    def verify_(self) -> None:
        declared = list(self.result.type.types.data)
        check_yielded(self, self.elements, declared, "tuple")

    def evaluate(self, ctx: EvalContext, args: Sequence[Any]) -> Sequence[Any]:
        return [tuple(args)]


@irdl_op_definition
class GetItemOp(IRDLOperation, HasReference):
    """Element `index` of a tuple.

    Example: `%h = graph.get_item %t, 0 : tuple<tensor<1x256xf32>, tensor<1x256xf32>> -> tensor<1x256xf32>`
    """

    name = "graph.get_item"
    tuple = operand_def(TupleType)
    index = prop_def(IntegerAttr[I64])
    result = result_def()
    assembly_format = "$tuple `,` $index attr-dict `:` type($tuple) `->` type($result)"
    traits = traits_def(Pure())

    def __init__(self, tuple_value: SSAValue, index: int):
        element = tuple_value.type.types.data[index]
        super().__init__(operands=[tuple_value], result_types=[element], properties={"index": IntegerAttr(index, i64)})

    def verify_(self) -> None:
        types = self.tuple.type.types.data
        i = self.index.value.data
        if not 0 <= i < len(types):
            raise op_error(self, f"index {i} out of range for a tuple of {len(types)}")
        if not types_compatible(self.result.type, types[i]):
            raise op_error(self, f"result type {self.result.type} differs from element type {types[i]}")

    def evaluate(self, ctx: EvalContext, args: Sequence[Any]) -> Sequence[Any]:
        return [args[0][self.index.value.data]]


def single_block_region(ops: Sequence[Operation], arg_types: Sequence[Attribute] = ()) -> Region:
    """A region of one block holding `ops` (helper for builders)."""
    return Region(Block(ops, arg_types=arg_types))

# ---------------------------------------------------------------------------------------
# Canonicalization of `graph.while`: carried values nothing needs are dropped.
#
# A carried value is dead when the loop's result for it is unused, the condition does not
# read it, and no other carried value, nor any op with effects, depends on it in the body:
# then its initial value, its block arguments, the body ops computing only its next value
# (an ONNX recurrence's stacked outputs `Y` when only `Y_h` is used: a concatenation that
# grows every step) and its result all go.


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
