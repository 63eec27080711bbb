"""Ops that create tensors: inline constants, weights in `.npz` files, zeros/full of a
run-time shape, arange, and vectors of `index` values."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
from xdsl.dialect_interfaces.constant_materialization import ConstantMaterializationInterface
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IndexType,
    IntegerAttr,
    StringAttr,
    TensorType,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import (
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import ConstantLike, HasFolder, Pure

from nimble.dialects.graph.base import GraphOp, as_tensor, op_error
from nimble.dialects.graph.folding import array_to_dense, dense_to_array
from nimble.dialects.graph.types import dims, format_dims, numpy_dtype
from nimble.dialects.interfaces import EvalContext, FusionKind
from nimble.dialects.dynshape import ShapeType
from nimble.dialects.shape_functions import DimAlgebra, ShapeError


class _ConstantFolder(HasFolder):
    @classmethod
    def fold(cls, op: Operation) -> Sequence[SSAValue | Attribute] | None:
        assert isinstance(op, ConstantOp)
        return [op.value]


@irdl_op_definition
class ConstantOp(GraphOp):
    """A tensor constant held inline (use `graph.external_constant` for large weights).

    Example: `%c = graph.constant dense<[1.0, 2.0]> : tensor<2xf32>`
    """

    name = "graph.constant"
    value = prop_def(DenseIntOrFPElementsAttr)
    result = result_def(TensorType)
    traits = traits_def(Pure(), ConstantLike(), _ConstantFolder())

    def __init__(self, value: DenseIntOrFPElementsAttr):
        super().__init__(result_types=[value.type], properties={"value": value})

    def shape_function(self, k: DimAlgebra) -> list[list[Any]]:
        return [dims(self.value.type)]

    def result_element_types(self) -> list[Attribute]:
        return [self.value.get_element_type()]

    def verify_(self) -> None:
        if self.result.type != self.value.type:
            raise op_error(self, f"result type {self.result.type} differs from the value's type {self.value.type}")
        super().verify_()

    def reference(self) -> Sequence[Any]:
        return [dense_to_array(self.value)]

    def print(self, printer: Printer) -> None:
        printer.print_op_attributes(self.attributes)
        printer.print_string(" ")
        printer.print_attribute(self.value)

    @classmethod
    def parse(cls, parser: Parser) -> ConstantOp:
        attrs = parser.parse_optional_attr_dict()
        pos = parser.pos
        value = parser.parse_attribute()
        if not isinstance(value, DenseIntOrFPElementsAttr):
            parser.raise_error("expected a dense<...> : tensor<...> value", pos, parser.pos)
        op = cls(value)
        op.attributes |= attrs
        return op


@irdl_op_definition
class ExternalConstantOp(GraphOp):
    """A tensor stored as entry `key` of an `.npz` file (path relative to the module).

    Example: `%w = graph.external_constant "encoder.0.weight" from "bert.npz" : tensor<768x768xf32>`
    """

    name = "graph.external_constant"
    key = prop_def(StringAttr)
    file = prop_def(StringAttr)
    result = result_def(TensorType)
    assembly_format = "$key `from` $file attr-dict `:` type($result)"
    traits = traits_def(Pure())
    ELEMENT_TYPE_FROM_RESULT: ClassVar[bool] = True

    def shape_function(self, k: DimAlgebra) -> list[list[Any]]:
        d = dims(self.result.type)
        if None in d:
            raise ShapeError("an external constant must have a static shape")
        return [d]

    def result_element_types(self) -> list[Attribute]:
        return [self.result.type.element_type]

    def evaluate(self, ctx: EvalContext, args: Sequence[Any]) -> Sequence[Any]:
        array = ctx.load_external(self.file.data, self.key.data)
        expected = self.result.type
        if list(array.shape) != dims(expected):
            raise ValueError(
                f"'{self.file.data}' entry '{self.key.data}' has shape {format_dims(array.shape)}, "
                f"expected {format_dims(dims(expected))}"
            )
        if array.dtype != numpy_dtype(expected.element_type):
            raise ValueError(
                f"'{self.file.data}' entry '{self.key.data}' has dtype {array.dtype}, "
                f"expected {numpy_dtype(expected.element_type)}"
            )
        return [array]


class _FillFolder(HasFolder):
    """A fill whose result type is static becomes a constant (an LSTM's zero initial
    state: otherwise a host call per run, through the reference interpreter)."""

    @classmethod
    def fold(cls, op: Operation) -> Sequence[SSAValue | Attribute] | None:
        assert isinstance(op, _FillOp)
        t = op.result.type
        if not (isinstance(t, TensorType) and t.has_static_shape()) or int(np.prod(t.get_shape())) > op.FOLD_LIMIT:
            return None
        return [array_to_dense(np.full(t.get_shape(), op.fill_value(), numpy_dtype(t.element_type)), t)]


class _FillOp(GraphOp):
    shape = operand_def(ShapeType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), _FillFolder())
    ELEMENT_TYPE_FROM_RESULT: ClassVar[bool] = True
    FUSION: ClassVar[FusionKind] = FusionKind.INJECTIVE
    """A kernel writes it (alone, or inside its consumers' group), not a host call per run."""

    def shape_function(self, k: DimAlgebra) -> list[list[Any]]:
        target = k.shape(self.shape)
        if isinstance(self.result.type, TensorType) and len(target) != len(self.result.type.get_shape()):
            raise ShapeError("result rank differs from the shape's rank")
        return [target]

    def result_element_types(self) -> list[Attribute]:
        return [self.result.type.element_type]

    def fill_value(self) -> float | int:
        return 0

    def reference(self, shape: Any) -> Sequence[Any]:
        return [np.full(tuple(shape), self.fill_value(), dtype=numpy_dtype(self.result.type.element_type))]


@irdl_op_definition
class ZerosOp(_FillOp):
    """A tensor of zeros of a run-time shape.

    Example: `%z = graph.zeros %s : !dynshape.shape<2> -> tensor<?x256xf32>`
    """

    name = "graph.zeros"
    assembly_format = "$shape attr-dict `:` type($shape) `->` type($result)"


@irdl_op_definition
class FullOp(_FillOp):
    """A tensor of a run-time shape filled with `value`.

    Example: `%f = graph.full %s {value = 1.0 : f32} : !dynshape.shape<1> -> tensor<?xf32>`
    """

    name = "graph.full"
    value = prop_def(FloatAttr | IntegerAttr)
    assembly_format = "$shape attr-dict `:` type($shape) `->` type($result)"
    irdl_options = (ParsePropInAttrDict(),)

    def fill_value(self) -> float | int:
        return self.value.value.data


@irdl_op_definition
class ArangeOp(GraphOp):
    """`[start, start+step, ...)` up to `stop` (exclusive), from `index` operands.

    Example: `%r = graph.arange %start, %stop, %step : tensor<?xi64>`
    """

    name = "graph.arange"
    start = operand_def(IndexType)
    stop = operand_def(IndexType)
    step = operand_def(IndexType)
    result = result_def(TensorType)
    assembly_format = "$start `,` $stop `,` $step attr-dict `:` type($result)"
    traits = traits_def(Pure())
    ELEMENT_TYPE_FROM_RESULT: ClassVar[bool] = True
    FUSION: ClassVar[FusionKind] = FusionKind.INJECTIVE
    """A kernel writes it (GPT-2's and T5's positions), not a host call per run."""

    def shape_function(self, k: DimAlgebra) -> list[list[Any]]:
        if isinstance(self.result.type, TensorType) and len(self.result.type.get_shape()) != 1:
            raise ShapeError("result must have rank 1")
        step = k.index(self.step)
        if step == 0:
            raise ShapeError("step must not be 0")
        span = k.sub(k.index(self.stop), k.index(self.start))
        return [[k.max(k.ceildiv(span, step), 0)]]

    def result_element_types(self) -> list[Attribute]:
        return [self.result.type.element_type]

    def reference(self, start: int, stop: int, step: int) -> Sequence[Any]:
        if step == 0:
            raise ValueError("arange step is 0")
        return [as_tensor(np.arange(start, stop, step), self.result.type.element_type)]


@irdl_op_definition
class FromElementsOp(GraphOp):
    """A vector of `index` values, as data: dims computed at run time that a model uses
    as numbers (a position offset, a scale), as an ONNX shape tensor is.

    Example: `%t = graph.from_elements %n, %c64 : tensor<2xi64>`
    """

    name = "graph.from_elements"
    elements = var_operand_def(IndexType)
    result = result_def(TensorType)
    assembly_format = "$elements attr-dict `:` type($result)"
    traits = traits_def(Pure())
    ELEMENT_TYPE_FROM_RESULT: ClassVar[bool] = True
    FUSION: ClassVar[FusionKind] = FusionKind.INJECTIVE

    def shape_function(self, k: DimAlgebra) -> list[list[Any]]:
        if isinstance(self.result.type, TensorType) and len(self.result.type.get_shape()) != 1:
            raise ShapeError("result must have rank 1")
        return [[len(self.elements)]]

    def result_element_types(self) -> list[Attribute]:
        element = self.result.type.element_type
        if numpy_dtype(element) == np.bool_:
            raise ShapeError("result elements must be numbers, not i1")
        return [element]

    def reference(self, *values: int) -> Sequence[Any]:
        return [as_tensor(np.array(values, dtype=np.int64), self.result.type.element_type)]


class GraphConstantMaterialization(ConstantMaterializationInterface):
    """Folded values become `graph.constant` ops."""

    def materialize_constant(self, value: Attribute, type: Attribute) -> Operation | None:
        if isinstance(value, DenseIntOrFPElementsAttr) and value.type == type:
            return ConstantOp(value)
        return None
