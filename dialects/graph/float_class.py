"""Tests of a float's class, elementwise: NaN and infinities, as `i1` tensors."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar

import numpy as np
from xdsl.dialects.builtin import BoolAttr, IntegerType
from xdsl.ir import Attribute
from xdsl.irdl import ParsePropInAttrDict, irdl_op_definition, prop_def

from nimble.dialects.graph.base import as_tensor
from nimble.dialects.graph.elementwise import ElementwiseUnaryOp
from nimble.dialects.graph.types import is_float
from nimble.dialects.shape_functions import ShapeError


class FloatClassOp(ElementwiseUnaryOp):
    """Base of tests of a float's class (NaN, infinity): `i1` results."""

    def result_element_types(self) -> list[Attribute]:
        element = self.input.type.element_type
        if not is_float(element):
            raise ShapeError(f"operand must be a float tensor, not {element}")
        return [IntegerType(1)]


@irdl_op_definition
class IsNanOp(FloatClassOp):
    """Elementwise "x is NaN", an `i1` tensor (ONNX IsNaN).

    Example: `%m = graph.is_nan %x : tensor<?x4xf32> -> tensor<?x4xi1>`
    """

    name = "graph.is_nan"
    FN: ClassVar[Callable[[Any], Any]] = staticmethod(np.isnan)


@irdl_op_definition
class IsInfOp(FloatClassOp):
    """Elementwise "x is an infinity", an `i1` tensor; `detect_positive` /
    `detect_negative` set to false leave out +inf / -inf (ONNX IsInf).

    Example: `%m = graph.is_inf %x {detect_negative = false} : tensor<?xf32> -> tensor<?xi1>`
    """

    name = "graph.is_inf"
    detect_positive = prop_def(BoolAttr, default_value=BoolAttr.from_bool(True))
    detect_negative = prop_def(BoolAttr, default_value=BoolAttr.from_bool(True))
    irdl_options = (ParsePropInAttrDict(),)

    def detects(self) -> tuple[bool, bool]:
        """(+inf counts, -inf counts)."""
        return bool(self.detect_positive.value.data), bool(self.detect_negative.value.data)

    def reference(self, x: Any) -> Sequence[Any]:
        positive, negative = self.detects()
        return [as_tensor((np.isposinf(x) & positive) | (np.isneginf(x) & negative), IntegerType(1))]

FLOAT_CLASS_OPS = [IsNanOp, IsInfOp]
