"""Elementwise operators: binary with numpy broadcasting, comparisons, where, unary math,
clip and cast. Each concrete op is a few lines: its name and its numpy function."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

import numpy as np
from xdsl.dialects.builtin import FloatAttr, IntegerType, TensorType, f64
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    result_def,
    traits_def,
)
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern
from xdsl.traits import HasCanonicalizationPatternsTrait, Pure

from nimble.dialects.interfaces import FusionKind
from nimble.dialects.graph.base import GraphOp, UnaryTensorOp, as_tensor, broadcast_dims
from nimble.dialects.graph.folding import GraphFolder
from nimble.dialects.graph.types import is_bool, is_float
from nimble.dialects.shape_functions import DimAlgebra, ShapeError

# -- numpy semantics that numpy does not spell directly ------------------------------


def _divide(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Float division, or integer division truncating toward zero (C, LLVM sdiv)."""
    if np.issubdtype(np.result_type(a, b), np.integer):
        if np.any(np.asarray(b) == 0):
            raise ZeroDivisionError("integer division by zero")
        q = np.abs(a) // np.abs(b)
        return np.where((np.asarray(a) < 0) != (np.asarray(b) < 0), -q, q)
    return np.divide(a, b)


_erf = np.frompyfunc(math.erf, 1, 1)


def _erf_array(x: np.ndarray) -> np.ndarray:
    return np.asarray(_erf(np.asarray(x, dtype=np.float64)), dtype=np.float64)  # (0-d: frompyfunc gives a float)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * x))  # exact identity, no overflow in exp


def _rsqrt(x: np.ndarray) -> np.ndarray:
    return 1.0 / np.sqrt(x)


def _relu(x: np.ndarray) -> np.ndarray:
    return np.maximum(x, 0)


def _gelu(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1.0 + _erf_array(x / math.sqrt(2.0)))


# -- binary ------------------------------------------------------------------------


class ElementwiseBinaryOp(GraphOp):
    """Base of binary elementwise ops with numpy broadcasting."""

    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)"
    traits = traits_def(Pure(), GraphFolder())
    FUSION: ClassVar[FusionKind] = FusionKind.ELEMENTWISE

    FN: ClassVar[Callable[[Any, Any], Any]]
    BOOL_ONLY: ClassVar[bool] = False
    ACCEPTS_BOOL: ClassVar[bool] = False
    """Whether i1 operands mean something (logic, comparisons, max/min); arithmetic on
    i1 (add, sub, mul, div, pow) is rejected rather than given numpy's accidents."""

    def shape_function(self, k: DimAlgebra) -> list[list[Any]]:
        return [broadcast_dims(k, k.dims(self.lhs), k.dims(self.rhs))]

    def operand_element_type(self) -> Attribute:
        lhs = self.lhs.type.element_type
        if lhs != self.rhs.type.element_type:
            raise ShapeError(
                f"operand element types differ ({lhs} vs {self.rhs.type.element_type})"
            )
        if self.BOOL_ONLY and not is_bool(lhs):
            raise ShapeError(f"operands must be i1 tensors, not {lhs}")
        if is_bool(lhs) and not (self.BOOL_ONLY or self.ACCEPTS_BOOL):
            raise ShapeError("arithmetic on i1 is not defined; use and/or/not or cast first")
        return lhs

    def result_element_types(self) -> list[Attribute]:
        return [self.operand_element_type()]

    def reference(self, a: Any, b: Any) -> Sequence[Any]:
        return [as_tensor(type(self).FN(a, b), self.result.type.element_type)]


class ComparisonOp(ElementwiseBinaryOp):
    """Base of comparisons: broadcasting, `i1` results."""

    def result_element_types(self) -> list[Attribute]:
        self.operand_element_type()
        return [IntegerType(1)]


@irdl_op_definition
class AddOp(ElementwiseBinaryOp):
    """Elementwise sum with broadcasting.

    Example: `%c = graph.add %a, %b : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>`
    """

    name = "graph.add"
    FN: ClassVar[Callable[[Any, Any], Any]] = staticmethod(np.add)
    RIGHT_IDENTITY: ClassVar[float | None] = 0.0
    COMMUTATIVE: ClassVar[bool] = True


@irdl_op_definition
class SubOp(ElementwiseBinaryOp):
    """Elementwise difference with broadcasting.

    Example: `%c = graph.sub %a, %b : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>`
    """

    name = "graph.sub"
    FN: ClassVar[Callable[[Any, Any], Any]] = staticmethod(np.subtract)
    RIGHT_IDENTITY: ClassVar[float | None] = 0.0


@irdl_op_definition
class MulOp(ElementwiseBinaryOp):
    """Elementwise product with broadcasting.

    Example: `%c = graph.mul %a, %b : (tensor<?x4xf32>, tensor<1xf32>) -> tensor<?x4xf32>`
    """

    name = "graph.mul"
    FN: ClassVar[Callable[[Any, Any], Any]] = staticmethod(np.multiply)
    RIGHT_IDENTITY: ClassVar[float | None] = 1.0
    COMMUTATIVE: ClassVar[bool] = True


@irdl_op_definition
class DivOp(ElementwiseBinaryOp):
    """Elementwise quotient (integers truncate toward zero).

    Example: `%c = graph.div %a, %b : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>`
    """

    name = "graph.div"
    FN: ClassVar[Callable[[Any, Any], Any]] = staticmethod(_divide)
    RIGHT_IDENTITY: ClassVar[float | None] = 1.0


@irdl_op_definition
class MaximumOp(ElementwiseBinaryOp):
    """Elementwise maximum (NaN propagates).

    Example: `%c = graph.maximum %a, %b : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>`
    """

    name = "graph.maximum"
    FN: ClassVar[Callable[[Any, Any], Any]] = staticmethod(np.maximum)
    ACCEPTS_BOOL: ClassVar[bool] = True


@irdl_op_definition
class MinimumOp(ElementwiseBinaryOp):
    """Elementwise minimum (NaN propagates).

    Example: `%c = graph.minimum %a, %b : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>`
    """

    name = "graph.minimum"
    FN: ClassVar[Callable[[Any, Any], Any]] = staticmethod(np.minimum)
    ACCEPTS_BOOL: ClassVar[bool] = True


@irdl_op_definition
class AndOp(ElementwiseBinaryOp):
    """Elementwise logical and of `i1` tensors.

    Example: `%c = graph.and %a, %b : (tensor<?xi1>, tensor<?xi1>) -> tensor<?xi1>`
    """

    name = "graph.and"
    FN: ClassVar[Callable[[Any, Any], Any]] = staticmethod(np.logical_and)
    BOOL_ONLY: ClassVar[bool] = True


@irdl_op_definition
class OrOp(ElementwiseBinaryOp):
    """Elementwise logical or of `i1` tensors.

    Example: `%c = graph.or %a, %b : (tensor<?xi1>, tensor<?xi1>) -> tensor<?xi1>`
    """

    name = "graph.or"
    FN: ClassVar[Callable[[Any, Any], Any]] = staticmethod(np.logical_or)
    BOOL_ONLY: ClassVar[bool] = True


@irdl_op_definition
class EqualOp(ComparisonOp):
    """Elementwise `==`, an `i1` tensor.

    Example: `%c = graph.equal %a, %b : (tensor<?xi64>, tensor<i64>) -> tensor<?xi1>`
    """

    name = "graph.equal"
    FN: ClassVar[Callable[[Any, Any], Any]] = staticmethod(np.equal)
    ACCEPTS_BOOL: ClassVar[bool] = True


@irdl_op_definition
class LessOp(ComparisonOp):
    """Elementwise `<`, an `i1` tensor.

    Example: `%c = graph.less %a, %b : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xi1>`
    """

    name = "graph.less"
    FN: ClassVar[Callable[[Any, Any], Any]] = staticmethod(np.less)
    ACCEPTS_BOOL: ClassVar[bool] = True


@irdl_op_definition
class GreaterOp(ComparisonOp):
    """Elementwise `>`, an `i1` tensor.

    Example: `%c = graph.greater %a, %b : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xi1>`
    """

    name = "graph.greater"
    FN: ClassVar[Callable[[Any, Any], Any]] = staticmethod(np.greater)
    ACCEPTS_BOOL: ClassVar[bool] = True


BINARY_OPS = [AddOp, SubOp, MulOp, DivOp, MaximumOp, MinimumOp, AndOp, OrOp]
COMPARISON_OPS = [EqualOp, LessOp, GreaterOp]


@irdl_op_definition
class WhereOp(GraphOp):
    """Select from `lhs` where `condition` is true, else from `rhs` (broadcasting all three).

    Example: `%r = graph.where %c, %a, %b : (tensor<?xi1>, tensor<?xf32>, tensor<f32>) -> tensor<?xf32>`
    """

    name = "graph.where"
    condition = operand_def(TensorType)
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = "$condition `,` $lhs `,` $rhs attr-dict `:` functional-type(operands, results)"
    traits = traits_def(Pure(), GraphFolder())
    FUSION: ClassVar[FusionKind] = FusionKind.ELEMENTWISE

    def shape_function(self, k: DimAlgebra) -> list[list[Any]]:
        return [broadcast_dims(k, k.dims(self.condition), k.dims(self.lhs), k.dims(self.rhs))]

    def result_element_types(self) -> list[Attribute]:
        if not is_bool(self.condition.type.element_type):
            raise ShapeError("condition must be an i1 tensor")
        if self.lhs.type.element_type != self.rhs.type.element_type:
            raise ShapeError("the two branches have different element types")
        return [self.lhs.type.element_type]

    def reference(self, c: Any, a: Any, b: Any) -> Sequence[Any]:
        return [as_tensor(np.where(c, a, b), self.result.type.element_type)]


# -- unary -------------------------------------------------------------------------


class ElementwiseUnaryOp(UnaryTensorOp):
    """Base of unary elementwise ops: the result has the operand's type."""

    traits = traits_def(Pure(), GraphFolder())
    FUSION: ClassVar[FusionKind] = FusionKind.ELEMENTWISE

    FN: ClassVar[Callable[[Any], Any]]
    FLOAT_ONLY: ClassVar[bool] = True
    ACCEPTS_BOOL: ClassVar[bool] = False

    def shape_function(self, k: DimAlgebra) -> list[list[Any]]:
        return [k.dims(self.input)]

    def result_element_types(self) -> list[Attribute]:
        element = self.input.type.element_type
        if self.FLOAT_ONLY and not is_float(element):
            raise ShapeError(f"operand must be a float tensor, not {element}")
        if is_bool(element) and not self.ACCEPTS_BOOL:
            raise ShapeError("arithmetic on i1 is not defined; use not, or cast first")
        return [element]

    def reference(self, x: Any) -> Sequence[Any]:
        return [as_tensor(type(self).FN(x), self.result.type.element_type)]


@irdl_op_definition
class NegOp(ElementwiseUnaryOp):
    """Elementwise negation.

    Example: `%y = graph.neg %x : tensor<?x4xf32> -> tensor<?x4xf32>`
    """

    name = "graph.neg"
    FN: ClassVar[Callable[[Any], Any]] = staticmethod(np.negative)
    FLOAT_ONLY: ClassVar[bool] = False


@irdl_op_definition
class AbsOp(ElementwiseUnaryOp):
    """Elementwise absolute value.

    Example: `%y = graph.abs %x : tensor<?x4xf32> -> tensor<?x4xf32>`
    """

    name = "graph.abs"
    FN: ClassVar[Callable[[Any], Any]] = staticmethod(np.abs)
    FLOAT_ONLY: ClassVar[bool] = False


@irdl_op_definition
class ExpOp(ElementwiseUnaryOp):
    """Elementwise e**x.

    Example: `%y = graph.exp %x : tensor<?x4xf32> -> tensor<?x4xf32>`
    """

    name = "graph.exp"
    FN: ClassVar[Callable[[Any], Any]] = staticmethod(np.exp)


@irdl_op_definition
class LogOp(ElementwiseUnaryOp):
    """Elementwise natural logarithm.

    Example: `%y = graph.log %x : tensor<?x4xf32> -> tensor<?x4xf32>`
    """

    name = "graph.log"
    FN: ClassVar[Callable[[Any], Any]] = staticmethod(np.log)


@irdl_op_definition
class SqrtOp(ElementwiseUnaryOp):
    """Elementwise square root.

    Example: `%y = graph.sqrt %x : tensor<?x4xf32> -> tensor<?x4xf32>`
    """

    name = "graph.sqrt"
    FN: ClassVar[Callable[[Any], Any]] = staticmethod(np.sqrt)


@irdl_op_definition
class RsqrtOp(ElementwiseUnaryOp):
    """Elementwise 1/sqrt(x).

    Example: `%y = graph.rsqrt %x : tensor<?x4xf32> -> tensor<?x4xf32>`
    """

    name = "graph.rsqrt"
    FN: ClassVar[Callable[[Any], Any]] = staticmethod(_rsqrt)


@irdl_op_definition
class TanhOp(ElementwiseUnaryOp):
    """Elementwise hyperbolic tangent.

    Example: `%y = graph.tanh %x : tensor<?x4xf32> -> tensor<?x4xf32>`
    """

    name = "graph.tanh"
    FN: ClassVar[Callable[[Any], Any]] = staticmethod(np.tanh)


@irdl_op_definition
class SigmoidOp(ElementwiseUnaryOp):
    """Elementwise logistic 1/(1+e**-x).

    Example: `%y = graph.sigmoid %x : tensor<?x4xf32> -> tensor<?x4xf32>`
    """

    name = "graph.sigmoid"
    FN: ClassVar[Callable[[Any], Any]] = staticmethod(_sigmoid)


@irdl_op_definition
class ReluOp(ElementwiseUnaryOp):
    """Elementwise max(x, 0).

    Example: `%y = graph.relu %x : tensor<?x4xf32> -> tensor<?x4xf32>`
    """

    name = "graph.relu"
    FN: ClassVar[Callable[[Any], Any]] = staticmethod(_relu)
    FLOAT_ONLY: ClassVar[bool] = False


@irdl_op_definition
class GeluOp(ElementwiseUnaryOp):
    """Elementwise GELU, exact form x*Phi(x).

    Example: `%y = graph.gelu %x : tensor<?x4xf32> -> tensor<?x4xf32>`
    """

    name = "graph.gelu"
    FN: ClassVar[Callable[[Any], Any]] = staticmethod(_gelu)


@irdl_op_definition
class ErfOp(ElementwiseUnaryOp):
    """Elementwise error function.

    Example: `%y = graph.erf %x : tensor<?x4xf32> -> tensor<?x4xf32>`
    """

    name = "graph.erf"
    FN: ClassVar[Callable[[Any], Any]] = staticmethod(_erf_array)


@irdl_op_definition
class NotOp(ElementwiseUnaryOp):
    """Elementwise logical not of an `i1` tensor.

    Example: `%y = graph.not %x : tensor<?xi1> -> tensor<?xi1>`
    """

    name = "graph.not"
    FN: ClassVar[Callable[[Any], Any]] = staticmethod(np.logical_not)
    FLOAT_ONLY: ClassVar[bool] = False
    ACCEPTS_BOOL: ClassVar[bool] = True


@irdl_op_definition
class FloorOp(ElementwiseUnaryOp):
    """Elementwise largest integer not greater than x (as a float).

    Example: `%y = graph.floor %x : tensor<?x4xf32> -> tensor<?x4xf32>`
    """

    name = "graph.floor"
    FN: ClassVar[Callable[[Any], Any]] = staticmethod(np.floor)


@irdl_op_definition
class CeilOp(ElementwiseUnaryOp):
    """Elementwise smallest integer not less than x (as a float).

    Example: `%y = graph.ceil %x : tensor<?x4xf32> -> tensor<?x4xf32>`
    """

    name = "graph.ceil"
    FN: ClassVar[Callable[[Any], Any]] = staticmethod(np.ceil)


@irdl_op_definition
class RoundOp(ElementwiseUnaryOp):
    """Elementwise nearest integer, halves to even (as a float).

    Example: `%y = graph.round %x : tensor<?x4xf32> -> tensor<?x4xf32>`
    """

    name = "graph.round"
    FN: ClassVar[Callable[[Any], Any]] = staticmethod(np.round)


@irdl_op_definition
class SinOp(ElementwiseUnaryOp):
    """Elementwise sine.

    Example: `%y = graph.sin %x : tensor<?x4xf32> -> tensor<?x4xf32>`
    """

    name = "graph.sin"
    FN: ClassVar[Callable[[Any], Any]] = staticmethod(np.sin)


@irdl_op_definition
class CosOp(ElementwiseUnaryOp):
    """Elementwise cosine.

    Example: `%y = graph.cos %x : tensor<?x4xf32> -> tensor<?x4xf32>`
    """

    name = "graph.cos"
    FN: ClassVar[Callable[[Any], Any]] = staticmethod(np.cos)



UNARY_OPS = [NegOp, AbsOp, ExpOp, LogOp, SqrtOp, RsqrtOp, TanhOp, SigmoidOp, ReluOp, GeluOp, ErfOp, NotOp,
             FloorOp, CeilOp, RoundOp, SinOp, CosOp]


@irdl_op_definition
class ClipOp(ElementwiseUnaryOp):
    """Clamp to `[min, max]` (either bound may be omitted).

    Example: `%y = graph.clip %x {min = 0.0 : f64, max = 6.0 : f64} : tensor<?xf32> -> tensor<?xf32>`
    """

    name = "graph.clip"
    min = opt_prop_def(FloatAttr)
    max = opt_prop_def(FloatAttr)
    irdl_options = (ParsePropInAttrDict(),)
    FLOAT_ONLY: ClassVar[bool] = False

    def __init__(self, input: Any, min: float | None = None, max: float | None = None):
        props = {}
        if min is not None:
            props["min"] = FloatAttr(min, f64)
        if max is not None:
            props["max"] = FloatAttr(max, f64)
        super().__init__(operands=[input], result_types=[input.type], properties=props)

    def shape_function(self, k: DimAlgebra) -> list[list[Any]]:
        if self.min is not None and self.max is not None and self.min.value.data > self.max.value.data:
            raise ShapeError("min must not exceed max")
        return [k.dims(self.input)]

    def reference(self, x: Any) -> Sequence[Any]:
        lo = None if self.min is None else self.min.value.data
        hi = None if self.max is None else self.max.value.data
        if lo is None and hi is None:
            return [x]
        return [as_tensor(np.clip(x, lo, hi), self.result.type.element_type)]


class _CastCanonicalization(HasCanonicalizationPatternsTrait):
    @classmethod
    def get_canonicalization_patterns(cls) -> tuple[RewritePattern, ...]:
        return (_IdentityCast(),)


@irdl_op_definition
class CastOp(UnaryTensorOp):
    """Convert elements to the result's element type (floats to ints truncate).

    Example: `%y = graph.cast %x : tensor<?xf32> -> tensor<?xi32>`
    """

    name = "graph.cast"
    traits = traits_def(Pure(), GraphFolder(), _CastCanonicalization())
    FUSION: ClassVar[FusionKind] = FusionKind.ELEMENTWISE
    ELEMENT_TYPE_FROM_RESULT: ClassVar[bool] = True

    @classmethod
    def to(cls, value: SSAValue, result_type: Attribute) -> CastOp:
        """A cast of `value` to `result_type` (another element type, or the same
        elements with `?` dims refined or widened)."""
        return cls.create(operands=[value], result_types=[result_type])

    def shape_function(self, k: DimAlgebra) -> list[list[Any]]:
        return [k.dims(self.input)]

    def result_element_types(self) -> list[Attribute]:
        return [self.result.type.element_type]

    def reference(self, x: Any) -> Sequence[Any]:
        return [as_tensor(x, self.result.type.element_type)]


class _IdentityCast(RewritePattern):
    """A cast to the type the value already has does nothing."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: CastOp, rewriter: PatternRewriter) -> None:
        if op.input.type == op.result.type:
            rewriter.replace(op, [], [op.input])
