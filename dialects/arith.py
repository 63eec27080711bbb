"""`arith` as MLIR specifies it: xdsl's arith dialect, with the ops whose xdsl 0.75
declaration takes scalars only re-declared to take vectors and tensors too.

MLIR's comparisons, `select` and casts are elementwise: `arith.cmpf olt, %a, %b :
vector<16xf32>` gives a `vector<16xi1>`, `arith.select` takes a `vector<16xi1>`
condition, `arith.fptosi` casts a `vector<16xf32>` to a `vector<16xi32>`. xdsl 0.75
constrains their results, conditions and casts to scalars, so IR that Nimble's
vectorizer writes (and upstream MLIR reads) failed xdsl's verifier. The ops here keep
xdsl's classes as their bases (an `isinstance` check or canonicalization pattern written
for xdsl's op matches them) and their names, so `nimble.registry` registers this dialect
as `arith` in place of xdsl's. Nimble's code imports `arith` from here; every other op is
xdsl's own (`arith.AddfOp` is `xdsl.dialects.arith.AddfOp`).

    %m = arith.cmpf olt, %a, %b : vector<16xf32>
    %s = arith.select %m, %a, %b : vector<16xi1>, vector<16xf32>
    %i = arith.fptosi %a : vector<16xf32> to vector<16xi32>
"""

from __future__ import annotations

from typing import Any, ClassVar

from xdsl.dialects import arith as _xdsl
from xdsl.dialects.builtin import (
    AnyFloat,
    ContainerType,
    IndexType,
    IntegerAttr,
    IntegerType,
    ShapedType,
    TensorType,
    VectorType,
    container_of,
    i1,
)
from xdsl.ir import Attribute, Dialect, Operation, SSAValue
from xdsl.irdl import (
    AnyAttr,
    IRDLOperation,
    VarConstraint,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.type import get_element_type_or_self

BOOL_LIKE = container_of(IntegerType(1))
INTEGER_LIKE = container_of(IntegerType)
INDEX_OR_INTEGER_LIKE = container_of(IntegerType | IndexType)
FLOAT_LIKE = container_of(AnyFloat)


def with_element(t: Attribute, element: Attribute) -> Attribute:
    """`t`'s shape with another element type: `vector<16xf32>`, i1 -> `vector<16xi1>`."""
    if isinstance(t, VectorType):
        return VectorType(element, t.get_shape(), t.scalable_dims)
    if isinstance(t, TensorType):
        return TensorType(element, t.get_shape(), t.encoding)
    return element


def _shape(t: Attribute) -> tuple[str, tuple[int, ...]] | None:
    """The container kind and shape of a type; None for a scalar."""
    if isinstance(t, ContainerType) and isinstance(t, ShapedType):
        return type(t).__name__, tuple(t.get_shape())
    return None


def verify_same_shape(op: Operation, a: Attribute, b: Attribute, what: str) -> None:
    """MLIR's `AllShapesMatch` for elementwise ops: both scalars or containers of one shape."""
    if _shape(a) != _shape(b):
        raise VerifyException(f"'{op.name}' op {what} must have the same shape, got {a} and {b}")


# -- comparisons ------------------------------------------------------------------------


def _verify_comparison(op: CmpiOp | CmpfOp) -> None:
    if op.lhs.type != op.rhs.type:
        raise VerifyException(f"'{op.name}' op operands must have the same type, got {op.lhs.type} and {op.rhs.type}")
    if op.result.type != with_element(op.lhs.type, i1):
        raise VerifyException(f"'{op.name}' op result must be i1 of the operands' shape, got {op.result.type}")


@irdl_op_definition
class CmpiOp(_xdsl.CmpiOp):
    """Elementwise integer comparison; the result is i1 of the operands' shape.

    Example: `%m = arith.cmpi slt, %a, %b : vector<4xi64>`
    """

    name = "arith.cmpi"
    predicate = prop_def(IntegerAttr)
    lhs = operand_def(_xdsl.signlessIntegerLike)
    rhs = operand_def(_xdsl.signlessIntegerLike)
    result = result_def(BOOL_LIKE)

    def __init__(self, operand1: Operation | SSAValue, operand2: Operation | SSAValue, arg: int | str):
        if isinstance(arg, str):
            arg = _xdsl.CMPI_COMPARISON_OPERATIONS.index(arg)
        lhs = SSAValue.get(operand1)
        IRDLOperation.__init__(self, operands=[lhs, operand2], result_types=[with_element(lhs.type, i1)],
                               properties={"predicate": IntegerAttr(arg, 64)})

    def verify_(self) -> None:
        _verify_comparison(self)


@irdl_op_definition
class CmpfOp(_xdsl.CmpfOp):
    """Elementwise float comparison; the result is i1 of the operands' shape.

    Example: `%m = arith.cmpf olt, %a, %b : vector<16xf32>`
    """

    name = "arith.cmpf"
    predicate = prop_def(IntegerAttr)
    lhs = operand_def(_xdsl.floatingPointLike)
    rhs = operand_def(_xdsl.floatingPointLike)
    fastmath = prop_def(_xdsl.FastMathFlagsAttr, default_value=_xdsl.FastMathFlagsAttr("none"))
    result = result_def(BOOL_LIKE)

    def __init__(self, operand1: Operation | SSAValue, operand2: Operation | SSAValue, arg: int | str,
                 fastmath: _xdsl.FastMathFlagsAttr = _xdsl.FastMathFlagsAttr("none")):
        if isinstance(arg, str):
            arg = _xdsl.CMPF_COMPARISON_OPERATIONS.index(arg)
        lhs = SSAValue.get(operand1)
        IRDLOperation.__init__(self, operands=[lhs, operand2], result_types=[with_element(lhs.type, i1)],
                               properties={"predicate": IntegerAttr(arg, 64), "fastmath": fastmath})

    def verify_(self) -> None:
        _verify_comparison(self)


# -- select -----------------------------------------------------------------------------


@irdl_op_definition
class SelectOp(_xdsl.SelectOp):
    """Chooses `lhs` where `cond` holds, else `rhs`; `cond` is one i1 or i1 of the
    operands' shape (elementwise).

    Example: `%s = arith.select %m, %a, %b : vector<16xi1>, vector<16xf32>`
    (`: f32` alone when the condition is a scalar i1)
    """

    name = "arith.select"
    _T: ClassVar = VarConstraint("_T", AnyAttr())
    cond = operand_def(BOOL_LIKE)
    lhs = operand_def(_T)
    rhs = operand_def(_T)
    result = result_def(_T)
    traits = traits_def(Pure(), _xdsl.SelectHasCanonicalizationPatterns())

    assembly_format = None

    def verify_(self) -> None:
        if self.cond.type != i1:
            verify_same_shape(self, self.cond.type, self.result.type, "a vector condition and the result")

    @classmethod
    def parse(cls, parser: Parser) -> SelectOp:
        cond = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        lhs = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        rhs = parser.parse_unresolved_operand()
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        first = parser.parse_type()
        if parser.parse_optional_punctuation(",") is not None:
            cond_type, result_type = first, parser.parse_type()
        else:
            cond_type, result_type = i1, first
        operands = parser.resolve_operands([cond, lhs, rhs], [cond_type, result_type, result_type], parser.pos)
        op = cls(*operands)
        op.attributes.update(attributes)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_list([self.cond, self.lhs, self.rhs], printer.print_operand)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        if self.cond.type != i1:
            printer.print_attribute(self.cond.type)
            printer.print_string(", ")
        printer.print_attribute(self.result.type)


# -- casts ------------------------------------------------------------------------------


def _any_elements(source: Attribute, target: Attribute) -> str | None:
    return None


def _narrower(source: Attribute, target: Attribute) -> str | None:
    assert isinstance(source, IntegerType) and isinstance(target, IntegerType)
    return None if target.width.data < source.width.data else "the result must be narrower than the operand"


def _wider(source: Attribute, target: Attribute) -> str | None:
    assert isinstance(source, IntegerType) and isinstance(target, IntegerType)
    return None if target.width.data > source.width.data else "the result must be wider than the operand"


def _one_side_index(source: Attribute, target: Attribute) -> str | None:
    if isinstance(source, IndexType) == isinstance(target, IndexType):
        return "casts between index and an integer type (exactly one side index)"
    return None


class _Cast:
    """An elementwise cast: scalar to scalar, or a vector / tensor to one of its shape.
    Subclasses say which element types may go in and out (`elements`)."""

    elements = staticmethod(_any_elements)
    # The base class's format-built printer and parser give way to this class's format.
    parse = Operation.__dict__["parse"]
    print = Operation.print

    def verify_(self: Any) -> None:
        verify_same_shape(self, self.input.type, self.result.type, "operand and result")
        a, b = get_element_type_or_self(self.input.type), get_element_type_or_self(self.result.type)
        problem = self.elements(a, b)
        if problem:
            raise VerifyException(f"'{self.name}' op {problem}, got {a} to {b}")


class _FloatToInteger(_Cast):
    input = operand_def(FLOAT_LIKE)
    result = result_def(INTEGER_LIKE)


class _IntegerToFloat(_Cast):
    input = operand_def(INTEGER_LIKE)
    result = result_def(FLOAT_LIKE)


class _IntegerToInteger(_Cast):
    input = operand_def(INTEGER_LIKE)
    result = result_def(INTEGER_LIKE)


@irdl_op_definition
class FPToSIOp(_FloatToInteger, _xdsl.FPToSIOp):
    """Float to signed integer, rounding toward zero, elementwise.

    Example: `%i = arith.fptosi %x : vector<16xf32> to vector<16xi32>`
    """

    name = "arith.fptosi"


@irdl_op_definition
class FPToUIOp(_FloatToInteger, _xdsl.FPToUIOp):
    """Float to unsigned integer, rounding toward zero, elementwise.

    Example: `%i = arith.fptoui %x : vector<16xf32> to vector<16xi32>`
    """

    name = "arith.fptoui"


@irdl_op_definition
class SIToFPOp(_IntegerToFloat, _xdsl.SIToFPOp):
    """Signed integer to float, elementwise.

    Example: `%x = arith.sitofp %i : vector<16xi32> to vector<16xf32>`
    """

    name = "arith.sitofp"


@irdl_op_definition
class UIToFPOp(_IntegerToFloat, _xdsl.UIToFPOp):
    """Unsigned integer to float, elementwise.

    Example: `%x = arith.uitofp %i : vector<16xi32> to vector<16xf32>`
    """

    name = "arith.uitofp"


@irdl_op_definition
class IndexCastOp(_Cast, _xdsl.IndexCastOp):
    """Between `index` and a signless integer (sign-extending or truncating), elementwise.

    Example: `%i = arith.index_cast %n : vector<4xindex> to vector<4xi64>`
    """

    name = "arith.index_cast"
    input = operand_def(INDEX_OR_INTEGER_LIKE)
    result = result_def(INDEX_OR_INTEGER_LIKE)
    elements = staticmethod(_one_side_index)


@irdl_op_definition
class TruncIOp(_IntegerToInteger, _xdsl.TruncIOp):
    """Integer to a narrower integer, elementwise.

    Example: `%t = arith.trunci %i : vector<16xi64> to vector<16xi32>`
    """

    name = "arith.trunci"
    elements = staticmethod(_narrower)


@irdl_op_definition
class ExtSIOp(_IntegerToInteger, _xdsl.ExtSIOp):
    """Integer to a wider integer, sign-extending, elementwise.

    Example: `%w = arith.extsi %i : vector<16xi32> to vector<16xi64>`
    """

    name = "arith.extsi"
    elements = staticmethod(_wider)


@irdl_op_definition
class ExtUIOp(_IntegerToInteger, _xdsl.ExtUIOp):
    """Integer to a wider integer, zero-extending, elementwise.

    Example: `%w = arith.extui %b : vector<16xi1> to vector<16xi32>`
    """

    name = "arith.extui"
    elements = staticmethod(_wider)


REDECLARED: tuple[type[Operation], ...] = (
    CmpiOp, CmpfOp, SelectOp, FPToSIOp, FPToUIOp, SIToFPOp, UIToFPOp, IndexCastOp, TruncIOp, ExtSIOp, ExtUIOp,
)
"""The ops declared here in place of xdsl's."""

_BY_NAME = {op.name: op for op in REDECLARED}
Arith = Dialect("arith", [_BY_NAME.get(op.name, op) for op in _xdsl.Arith.operations], list(_xdsl.Arith.attributes))


def __getattr__(name: str) -> Any:
    """Every other name is xdsl's (`arith.AddfOp`, `arith.ConstantOp`, ...)."""
    return getattr(_xdsl, name)
