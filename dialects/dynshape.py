"""The `dynshape` dialect: tensor dims as SSA `index` values, and run-time shape checks.

Arithmetic on dims uses xdsl's `arith` on `index`. A whole shape is a `!dynshape.shape<N>`
(rank N is static: Nimble's unknowns are dims, not ranks). Not named `shape`: upstream
MLIR has a `shape` dialect of other ops, and upstream `mlir-opt` must read Nimble's IR
(tests/test_upstream_mlir.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    I1,
    I64,
    IndexType,
    IntAttr,
    IntegerAttr,
    StringAttr,
    TensorType,
    UnitAttr,
    i64,
)
from xdsl.ir import Attribute, Dialect, Operation, ParametrizedAttribute, SSAValue, TypeAttribute
from xdsl.irdl import (
    IRDLOperation,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    param_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import AttrParser
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern
from xdsl.printer import Printer
from xdsl.traits import HasCanonicalizationPatternsTrait, IsolatedFromAbove, Pure
from xdsl.utils.exceptions import VerifyException

from nimble.dialects import arith
from nimble.dialects.interfaces import EvalContext, HasReference, InfersResultTypes
from nimble.dialects.symbolic import named_dims
from nimble.errors import RunError


class ShapeAssertionError(RunError, RuntimeError):
    """A `dynshape.assert` failed while running: the inputs have incompatible shapes."""


def _tensor_shape(value: SSAValue) -> tuple[int, ...]:
    if not isinstance(value.type, TensorType):
        raise VerifyException(f"expected a tensor, got {value.type}")
    return value.type.get_shape()


def _shape_rank(value: SSAValue) -> int:
    if not isinstance(value.type, ShapeType):
        raise VerifyException(f"expected a !dynshape.shape, got {value.type}")
    return value.type.rank.data


def _error(op: Operation, message: str) -> VerifyException:
    return VerifyException(f"'{op.name}' op {message}")


@irdl_attr_definition
class ShapeType(ParametrizedAttribute, TypeAttribute):
    """The dims of a tensor of rank N, as a run-time value: `!dynshape.shape<2>`."""

    name = "dynshape.shape"
    rank: IntAttr = param_def()

    def __init__(self, rank: int | IntAttr):
        super().__init__(IntAttr(rank) if isinstance(rank, int) else rank)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            return (IntAttr(parser.parse_integer(allow_boolean=False, allow_negative=False)),)

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<{self.rank.data}>")


class _CanonicalizeBind(HasCanonicalizationPatternsTrait):
    @classmethod
    def get_canonicalization_patterns(cls) -> tuple[RewritePattern, ...]:
        return (RedundantBind(),)


class _CanonicalizeShape(HasCanonicalizationPatternsTrait):
    @classmethod
    def get_canonicalization_patterns(cls) -> tuple[RewritePattern, ...]:
        return (FoldStaticDim(), DimOfNamedDim(), FoldGetOfKnownShape(), FoldTrueAssert())


class _DimIndexOp(IRDLOperation, HasReference, InfersResultTypes):
    """Shared declaration of `dynshape.dim` and `dynshape.get`: dim `index` of a source."""

    index = prop_def(IntegerAttr[I64])
    result = result_def(IndexType)
    assembly_format = "$source `,` $index attr-dict `:` type($source)"
    traits = traits_def(Pure(), _CanonicalizeShape())

    POSITIONAL_PROPERTIES: ClassVar[tuple[str, ...]] = ("index",)

    @classmethod
    def result_types_for(cls, operands: Sequence[SSAValue], properties: dict[str, Attribute]) -> list[Attribute]:
        return [IndexType()]

    def __init__(self, source: SSAValue, index: int):
        super().__init__(
            operands=[source],
            result_types=[IndexType()],
            properties={"index": IntegerAttr(index, i64)},
        )

    def source_rank(self) -> int:
        raise NotImplementedError

    def verify_(self) -> None:
        rank = self.source_rank()
        if not 0 <= self.index.value.data < rank:
            raise _error(self, f"index {self.index.value.data} out of range for rank {rank}")


@irdl_op_definition
class DimOp(_DimIndexOp):
    """Dim `index` of a tensor, as an `index` value.

    Example: `%n = dynshape.dim %x, 0 : tensor<?x256xf32>`
    """

    name = "dynshape.dim"
    source = operand_def(TensorType)

    def source_rank(self) -> int:
        return len(self.source.type.get_shape())

    def evaluate(self, ctx: EvalContext, args: Sequence[Any]) -> list[Any]:
        return [int(np.shape(args[0])[self.index.value.data])]


@irdl_op_definition
class OfOp(IRDLOperation, HasReference, InfersResultTypes):
    """The whole shape of a tensor.

    Example: `%s = dynshape.of %x : tensor<?x256xf32> -> !dynshape.shape<2>`
    """

    name = "dynshape.of"
    source = operand_def(TensorType)
    result = result_def(ShapeType)
    assembly_format = "$source attr-dict `:` type($source) `->` type($result)"
    traits = traits_def(Pure())

    @classmethod
    def result_types_for(cls, operands: Sequence[SSAValue], properties: dict[str, Attribute]) -> list[Attribute]:
        return [ShapeType(len(_tensor_shape(operands[0])))]

    def __init__(self, source: SSAValue):
        rank = len(source.type.get_shape())
        super().__init__(operands=[source], result_types=[ShapeType(rank)])

    def verify_(self) -> None:
        rank = len(self.source.type.get_shape())
        if self.result.type.rank.data != rank:
            raise _error(self, f"result rank {self.result.type.rank.data} != source rank {rank}")

    def evaluate(self, ctx: EvalContext, args: Sequence[Any]) -> list[Any]:
        return [tuple(int(d) for d in np.shape(args[0]))]


@irdl_op_definition
class FromDimsOp(IRDLOperation, HasReference, InfersResultTypes):
    """A shape built from `index` dims.

    Example: `%s = dynshape.from_dims %n, %m : !dynshape.shape<2>`
    """

    name = "dynshape.from_dims"
    dims = var_operand_def(IndexType)
    result = result_def(ShapeType)
    assembly_format = "$dims attr-dict `:` type($result)"
    traits = traits_def(Pure())

    @classmethod
    def result_types_for(cls, operands: Sequence[SSAValue], properties: dict[str, Attribute]) -> list[Attribute]:
        return [ShapeType(len(operands))]

    def __init__(self, dims: Sequence[SSAValue]):
        super().__init__(operands=[dims], result_types=[ShapeType(len(dims))])

    def verify_(self) -> None:
        if self.result.type.rank.data != len(self.dims):
            raise _error(
                self, f"{len(self.dims)} dims do not make a !dynshape.shape<{self.result.type.rank.data}>"
            )

    def evaluate(self, ctx: EvalContext, args: Sequence[Any]) -> list[Any]:
        if any(d < 0 for d in args):
            raise ShapeAssertionError(f"negative dim in shape {tuple(args)}")
        return [tuple(int(d) for d in args)]


@irdl_op_definition
class GetOp(_DimIndexOp):
    """Dim `index` of a shape value.

    Example: `%n = dynshape.get %s, 1 : !dynshape.shape<2>`
    """

    name = "dynshape.get"
    source = operand_def(ShapeType)

    def source_rank(self) -> int:
        return self.source.type.rank.data

    def evaluate(self, ctx: EvalContext, args: Sequence[Any]) -> list[Any]:
        return [args[0][self.index.value.data]]


@irdl_op_definition
class NumElementsOp(IRDLOperation, HasReference, InfersResultTypes):
    """The number of elements of a shape (the product of its dims).

    Example: `%n = dynshape.num_elements %s : !dynshape.shape<2>`
    """

    name = "dynshape.num_elements"
    source = operand_def(ShapeType)
    result = result_def(IndexType)
    assembly_format = "$source attr-dict `:` type($source)"
    traits = traits_def(Pure())

    @classmethod
    def result_types_for(cls, operands: Sequence[SSAValue], properties: dict[str, Attribute]) -> list[Attribute]:
        return [IndexType()]

    def __init__(self, source: SSAValue):
        super().__init__(operands=[source], result_types=[IndexType()])

    def evaluate(self, ctx: EvalContext, args: Sequence[Any]) -> list[Any]:
        return [int(np.prod(args[0], dtype=np.int64))]


def broadcast_shapes(a: Sequence[int], b: Sequence[int]) -> tuple[int, ...]:
    """numpy broadcasting of two concrete shapes; ShapeAssertionError if incompatible."""
    try:
        return tuple(np.broadcast_shapes(tuple(a), tuple(b)))
    except ValueError:
        raise ShapeAssertionError(
            f"shapes {tuple(a)} and {tuple(b)} cannot be broadcast together"
        ) from None


@irdl_op_definition
class BroadcastOp(IRDLOperation, HasReference, InfersResultTypes):
    """The numpy broadcast of two shapes; fails at run time if they are incompatible.

    Example: `%s = dynshape.broadcast %a, %b : !dynshape.shape<2>, !dynshape.shape<1> -> !dynshape.shape<2>`
    """

    name = "dynshape.broadcast"
    lhs = operand_def(ShapeType)
    rhs = operand_def(ShapeType)
    result = result_def(ShapeType)
    assembly_format = "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)"
    traits = traits_def(Pure())

    @classmethod
    def result_types_for(cls, operands: Sequence[SSAValue], properties: dict[str, Attribute]) -> list[Attribute]:
        return [ShapeType(max(_shape_rank(v) for v in operands))]

    def __init__(self, lhs: SSAValue, rhs: SSAValue):
        rank = max(lhs.type.rank.data, rhs.type.rank.data)
        super().__init__(operands=[lhs, rhs], result_types=[ShapeType(rank)])

    def verify_(self) -> None:
        rank = max(self.lhs.type.rank.data, self.rhs.type.rank.data)
        if self.result.type.rank.data != rank:
            raise _error(self, f"result rank must be {rank}, the larger operand rank")

    def evaluate(self, ctx: EvalContext, args: Sequence[Any]) -> list[Any]:
        return [broadcast_shapes(args[0], args[1])]


@irdl_op_definition
class AssertOp(IRDLOperation, HasReference, InfersResultTypes):
    """Stop the program with `message` unless `condition` holds (a run-time shape check);
    the `dims` are shown in the message.

    Example: `dynshape.assert %ok, "dim 0 of %x must equal dim 0 of %h" dims(%n, %m)`
    """

    name = "dynshape.assert"
    condition = operand_def(I1)
    values = var_operand_def(IndexType)
    message = prop_def(StringAttr)
    assembly_format = "$condition `,` $message (`dims` `(` $values^ `)`)? attr-dict"
    traits = traits_def(_CanonicalizeShape())

    @classmethod
    def result_types_for(cls, operands: Sequence[SSAValue], properties: dict[str, Attribute]) -> list[Attribute]:
        return []

    def __init__(self, condition: SSAValue, message: str, values: Sequence[SSAValue] = ()):
        super().__init__(operands=[condition, values], properties={"message": StringAttr(message)})

    def verify_(self) -> None:
        if not self.message.data:
            raise _error(self, "needs a non-empty message")

    def evaluate(self, ctx: EvalContext, args: Sequence[Any]) -> list[Any]:
        if not bool(args[0]):
            raise ShapeAssertionError(failure_message(self.message.data, args[1:]))
        return []


def failure_message(message: str, dims: Sequence[int]) -> str:
    """A failed check's message with the dims it compared: `... (8 vs 9)`."""
    return f"{message} ({' vs '.join(str(d) for d in dims)})" if dims else message


@irdl_op_definition
class BindOp(IRDLOperation, HasReference):
    """States the run-time shape of a tensor, as computed by reified shape IR (or an
    upper bound of it, for data-dependent results). Later stages allocate from it; the
    interpreter checks it.

    Example: `dynshape.bind %y, %s : tensor<?x4xf32>, !dynshape.shape<2>`
    """

    name = "dynshape.bind"
    value = operand_def(TensorType)
    shape = operand_def(ShapeType)
    upper_bound = opt_prop_def(UnitAttr)
    assembly_format = "$value `,` $shape (`upper_bound` $upper_bound^)? attr-dict `:` type($value) `,` type($shape)"
    traits = traits_def(_CanonicalizeBind())

    def __init__(self, value: SSAValue, shape: SSAValue, upper_bound: bool = False):
        super().__init__(operands=[value, shape], properties={"upper_bound": UnitAttr()} if upper_bound else {})

    def verify_(self) -> None:
        rank = len(self.value.type.get_shape())
        if self.shape.type.rank.data != rank:
            raise _error(self, f"binds a !dynshape.shape<{self.shape.type.rank.data}> to a tensor of rank {rank}")

    def evaluate(self, ctx: EvalContext, args: Sequence[Any]) -> list[Any]:
        actual, expected = tuple(np.shape(args[0])), tuple(args[1])
        if self.upper_bound is not None:
            if any(a > b for a, b in zip(actual, expected)):
                raise ShapeAssertionError(f"shape {actual} exceeds its reified upper bound {expected}")
        elif actual != expected:
            raise ShapeAssertionError(f"shape {actual} differs from its reified shape {expected}")
        return []


# -- canonicalization -------------------------------------------------------------


class FoldStaticDim(RewritePattern):
    """`dynshape.dim` of a static dim is a constant."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: DimOp, rewriter: PatternRewriter) -> None:
        d = op.source.type.get_shape()[op.index.value.data]
        if d >= 0:
            rewriter.replace(op, arith.ConstantOp(IntegerAttr(d, IndexType())))


class DimOfNamedDim(RewritePattern):
    """`dynshape.dim` of a dim that `#nimble.dims` names (`seq`) is the first parameter dim of
    the function with that name: the tensor it read is then not kept for its shape (a
    fusion group would otherwise write it out too: BERT's unscaled queries, read only
    for their length)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: DimOp, rewriter: PatternRewriter) -> None:
        names = named_dims(op.source.type)  # (none for a buffer: a recurrence's kernel reads dims of memrefs)
        name = names[op.index.value.data] if op.index.value.data < len(names) else None
        if name is None or name.as_int() is not None:
            return
        function = op.parent_op()
        while function is not None and not isinstance(function, func.FuncOp):
            if function.has_trait(IsolatedFromAbove):
                return  # (a parameter cannot be read from here)
            function = function.parent_op()
        if function is None or not function.body.blocks:
            return
        for arg in function.body.block.args:
            for axis, d in enumerate(named_dims(arg.type)):
                if d == name:
                    if arg is not op.source or axis != op.index.value.data:
                        rewriter.replace(op, DimOp(arg, axis))
                    return


class FoldGetOfKnownShape(RewritePattern):
    """`dynshape.get` of `dynshape.from_dims` is the dim; of `dynshape.of` it is `dynshape.dim`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: GetOp, rewriter: PatternRewriter) -> None:
        owner = op.source.owner
        i = op.index.value.data
        if isinstance(owner, FromDimsOp):
            rewriter.replace(op, [], [owner.dims[i]])
        elif isinstance(owner, OfOp):
            rewriter.replace(op, DimOp(owner.source, i))


class FoldTrueAssert(RewritePattern):
    """An assert of a constant true condition checks nothing."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: AssertOp, rewriter: PatternRewriter) -> None:
        owner = op.condition.owner
        if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
            if owner.value.value.data != 0:
                rewriter.erase(op)


class RedundantBind(RewritePattern):
    """A bind already stated earlier in the block, or of a static shape, says nothing."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: BindOp, rewriter: PatternRewriter) -> None:
        if op.value.type.has_static_shape() and op.upper_bound is None:
            rewriter.erase(op)
            return
        previous = op.prev_op
        while previous is not None:
            if isinstance(previous, BindOp) and tuple(previous.operands) == tuple(op.operands) \
                    and (previous.upper_bound is None) == (op.upper_bound is None):
                rewriter.erase(op)
                return
            previous = previous.prev_op


DynShape = Dialect(
    "dynshape",
    [DimOp, OfOp, FromDimsOp, GetOp, NumElementsOp, BroadcastOp, AssertOp, BindOp],
    [ShapeType],
)
