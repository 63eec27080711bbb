"""`graph.slice`: numpy basic slicing with static or run-time bounds.

Syntax: one `start:end(:step)` entry per dim, each bound an integer, an `index` SSA value,
or omitted (start 0, end = the dim): `graph.slice %x[1:%n, :, ::2] : A -> B`.
Negative bounds count from the end and bounds are clamped, as in Python.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from xdsl.dialects.builtin import DenseArrayBase, IndexType, TensorType, i64
from xdsl.ir import SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, prop_def, result_def, traits_def, var_operand_def
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import Pure

from nimble.dialects.interfaces import FusionKind
from nimble.dialects.graph.base import GraphOp, i64_array
from nimble.dialects.graph.folding import GraphFolder
from nimble.dialects.shape_functions import DimAlgebra, ShapeError

DYNAMIC = -(2**63)
"""A bound held by the next `dynamic_bounds` operand."""
END = 2**63 - 1
"""An omitted end: the whole dim."""

Bound = int | SSAValue


@irdl_op_definition
class SliceOp(GraphOp):
    """Basic slicing with a positive step; bounds may be run-time `index` values.

    Example: `%y = graph.slice %x[0:%n, 2:-1, ::2] : tensor<?x8x8xf32> -> tensor<?x5x4xf32>`
    """

    name = "graph.slice"
    input = operand_def(TensorType)
    dynamic_bounds = var_operand_def(IndexType)
    result = result_def(TensorType)
    static_starts = prop_def(DenseArrayBase.constr(i64))
    static_ends = prop_def(DenseArrayBase.constr(i64))
    steps = prop_def(DenseArrayBase.constr(i64))
    traits = traits_def(Pure(), GraphFolder())
    FUSION: ClassVar[FusionKind] = FusionKind.INJECTIVE

    def __init__(
        self,
        input: SSAValue,
        starts: Sequence[Bound],
        ends: Sequence[Bound],
        steps: Sequence[int],
        result_type: TensorType,
    ):
        dynamic = [b for pair in zip(starts, ends) for b in pair if isinstance(b, SSAValue)]
        super().__init__(
            operands=[input, dynamic],
            result_types=[result_type],
            properties={
                "static_starts": i64_array([DYNAMIC if isinstance(b, SSAValue) else b for b in starts]),
                "static_ends": i64_array([DYNAMIC if isinstance(b, SSAValue) else b for b in ends]),
                "steps": i64_array(steps),
            },
        )

    # -- bounds as (start, end) per dim, SSA values where dynamic ----------------------
    def bounds(self) -> list[tuple[Bound, Bound]]:
        dynamic = iter(self.dynamic_bounds)
        result = []
        for s, e in zip(self.static_starts.get_values(), self.static_ends.get_values()):
            start = next(dynamic) if s == DYNAMIC else s
            end = next(dynamic) if e == DYNAMIC else e
            result.append((start, end))
        return result

    def shape_function(self, k: DimAlgebra) -> list[list[Any]]:
        x = k.dims(self.input)
        starts, ends = self.static_starts.get_values(), self.static_ends.get_values()
        steps = self.steps.get_values()
        if not len(starts) == len(ends) == len(steps) == len(x):
            raise ShapeError(f"needs one start:end:step entry per dim ({len(x)})")
        if any(s < 1 for s in steps):
            raise ShapeError(f"steps must be >= 1, got {list(steps)}")
        needed = sum(v == DYNAMIC for v in (*starts, *ends))
        if needed != len(self.dynamic_bounds):
            raise ShapeError(f"expected {needed} dynamic bounds, got {len(self.dynamic_bounds)}")
        out = []
        for n, (start, end), step in zip(x, self.bounds(), steps):
            s = k.normalize_index(self._bound(k, start), n)
            e = n if end == END else k.normalize_index(self._bound(k, end), n)
            out.append(k.ceildiv(k.max(k.sub(e, s), 0), step))
        return [out]

    @staticmethod
    def _bound(k: DimAlgebra, b: Bound) -> Any:
        return k.index(b) if isinstance(b, SSAValue) else b

    def reference(self, x: Any, *dynamic: Any) -> Sequence[Any]:
        values = iter(int(d) for d in dynamic)
        index = []
        for s, e, step in zip(self.static_starts.get_values(), self.static_ends.get_values(), self.steps.get_values()):
            start = next(values) if s == DYNAMIC else s
            end = next(values) if e == DYNAMIC else e
            index.append(slice(start, None if end == END else end, step))
        return [np.array(x[tuple(index)])]  # (a copy; 0-d stays an array, not a numpy scalar)

    # -- custom syntax -----------------------------------------------------------------
    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.input)
        printer.print_string("[")
        entries = zip(self.bounds(), self.steps.get_values())
        for i, ((start, end), step) in enumerate(entries):
            if i:
                printer.print_string(", ")
            if start != 0:
                self._print_bound(printer, start)
            printer.print_string(":")
            if end != END:
                self._print_bound(printer, end)
            if step != 1:
                printer.print_string(f":{step}")
        printer.print_string("]")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.input.type)
        printer.print_string(" -> ")
        printer.print_attribute(self.result.type)

    @staticmethod
    def _print_bound(printer: Printer, b: Bound) -> None:
        if isinstance(b, SSAValue):
            printer.print_operand(b)
        else:
            printer.print_string(str(b))

    @classmethod
    def parse(cls, parser: Parser) -> SliceOp:
        source = parser.parse_unresolved_operand()
        entries = parser.parse_comma_separated_list(
            parser.Delimiter.SQUARE, lambda: _parse_entry(parser)
        )
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        input_type = parser.parse_type()
        parser.parse_punctuation("->")
        result_type = parser.parse_type()
        op = cls(
            parser.resolve_operand(source, input_type),
            [s for s, _, _ in entries],
            [e for _, e, _ in entries],
            [st for _, _, st in entries],
            result_type,
        )
        op.attributes |= attrs
        return op


def _parse_bound(parser: Parser, default: int) -> Bound:
    if (operand := parser.parse_optional_operand(IndexType())) is not None:
        return operand
    value = parser.parse_optional_integer(allow_boolean=False, allow_negative=True)
    return default if value is None else value


def _parse_entry(parser: Parser) -> tuple[Bound, Bound, int]:
    start = _parse_bound(parser, 0)
    parser.parse_punctuation(":")
    end = _parse_bound(parser, END)
    step = 1
    if parser.parse_optional_punctuation(":") is not None:
        step = parser.parse_integer(allow_boolean=False, allow_negative=True)
    return start, end, step

