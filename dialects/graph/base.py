"""The abstract base of graph operators and the helpers their definitions share.

A `GraphOp` declares its operands, results and properties like any xdsl op and adds:
- `shape_function(k)`: result dims from operand dims (see `shape_functions.py`);
- `result_element_types()`: result element types (default: the first operand's);
- `reference(*arrays)`: the numpy meaning, used by the interpreter and constant folding.
From these three, the base derives type inference, verification, reification and
evaluation, so that no generic pass needs to know any operator by name.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, Self

import numpy as np
from xdsl.dialects.builtin import (
    BoolAttr,
    DenseArrayBase,
    IntegerAttr,
    NoneType,
    TensorType,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import IRDLOperation, operand_def, result_def
from xdsl.utils.exceptions import VerifyException

from nimble.dialects.graph.types import numpy_dtype, tensor, types_compatible
from nimble.dialects.symbolic import check_dims_encoding
from nimble.dialects.interfaces import EvalContext, FusionKind, HasReference, HasShapeFunction, InfersResultTypes
from nimble.dialects.shape_functions import ConcreteDims, DimAlgebra, ReifyDims, ShapeError, SymbolicDims


def op_error(op: Operation, message: str) -> VerifyException:
    """A verifier error worded like MLIR's: `'graph.add' op <message>`."""
    return VerifyException(f"'{op.name}' op {message}")


def i64_array(values: Sequence[int]) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, list(values))


def i64_attr(value: int) -> IntegerAttr:
    return IntegerAttr(value, i64)


def bool_attr(value: bool) -> IntegerAttr:
    return BoolAttr.from_bool(value)


def normalize_axis(axis: int, rank: int, what: str = "axis") -> int:
    """A Python-style axis in [-rank, rank) made non-negative; ShapeError otherwise."""
    if not -rank <= axis < rank:
        raise ShapeError(f"{what} {axis} is out of range for rank {rank}")
    return axis + rank if axis < 0 else axis


def normalize_axes(axes: Sequence[int], rank: int) -> list[int]:
    result = [normalize_axis(a, rank) for a in axes]
    if len(set(result)) != len(result):
        raise ShapeError(f"axes {list(axes)} repeat an axis")
    return result


def broadcast_dims(k: DimAlgebra, *shapes: list[Any]) -> list[Any]:
    """numpy broadcasting of several dim lists (right-aligned)."""
    rank = max(len(s) for s in shapes)
    result: list[Any] = [1] * rank
    for s in shapes:
        padded = [1] * (rank - len(s)) + list(s)
        result = [
            k.broadcast(r, d, f"dim {i} cannot be broadcast")
            for i, (r, d) in enumerate(zip(result, padded))
        ]
    return result


LAYOUT_FOLD_LIMIT = 1 << 24
"""`FOLD_LIMIT` of ops that only move data (reshape, squeeze, transpose): a weight's
layout is settled at compile time, not on every call (the folded constant replaces the
original one, so nothing is stored twice)."""


class GraphOp(IRDLOperation, HasShapeFunction, HasReference, InfersResultTypes):
    """Base of every graph operator with a shape function and a numpy reference."""

    FOLD_LIMIT: ClassVar[int] = 4096
    """Largest result (in elements) that constant folding materialises."""
    RIGHT_IDENTITY: ClassVar[float | None] = None
    """A scalar c with `x op c == x` (folded away by canonicalize)."""
    COMMUTATIVE: ClassVar[bool] = False
    FUSION: ClassVar[FusionKind] = FusionKind.OPAQUE
    """How `fuse-ops` may group this op with its producers and consumers."""
    SHARES_GROUP: ClassVar[bool] = True
    """Whether the group of this op may merge with another producer group (through a
    consumer of both). A conv does not: its kernel is a staged im2col buffer and one
    matrix product, and a second conv in the group would be computed per output element
    (ResNet's projection shortcut)."""
    CLAMPS_READS: ClassVar[bool] = False
    """Whether its loop lowering clamps computed indices into an operand (gathers,
    windows over padding, a concat read per element): with an empty operand a clamped
    index still falls outside, so a launch with an empty input runs such a group by its
    reference semantics instead (`runtime/kernels.py`)."""
    ELEMENT_TYPE_FROM_RESULT: ClassVar[bool] = False
    """True when the result element type is chosen by the user, not the operands
    (cast, zeros, full, arange, external_constant): builders must supply it."""

    # -- what each operator defines ------------------------------------------------
    def shape_function(self, k: DimAlgebra) -> list[list[Any]]:
        raise NotImplementedError(f"{self.name} has no shape function")

    def result_element_types(self) -> list[Attribute]:
        element = self.operands[0].type.get_element_type()
        return [element] * len(self.results)

    def reference(self, *args: Any) -> Sequence[Any]:
        raise NotImplementedError(f"{self.name} has no reference semantics")

    # -- what the base derives -----------------------------------------------------
    def infer_result_types(self) -> list[TensorType]:
        """Static result types (with `?` where unknown); VerifyException on conflicts."""
        try:
            shapes = self.shape_function(SymbolicDims())
            elements = self.result_element_types()
        except ShapeError as e:
            raise op_error(self, str(e)) from None
        if len(shapes) != len(elements):
            raise op_error(self, f"expected {len(shapes)} results, got {len(self.results)}")
        if self.DATA_DEPENDENT:
            # The shape function gave upper bounds; the true dims come at run time.
            shapes = [[None] * len(s) for s in shapes]
        return [tensor(e, s) for e, s in zip(elements, shapes, strict=True)]

    def verify_(self) -> None:
        for i, operand in enumerate(self.operands):
            if isinstance(operand.type, TensorType):
                try:
                    numpy_dtype(operand.type.element_type)
                except ValueError as e:
                    raise op_error(self, f"operand #{i}: {e}") from None
        for what, values in (("operand", self.operands), ("result", self.results)):
            for i, v in enumerate(values):
                wrong = check_dims_encoding(v.type)
                if wrong is not None:
                    raise op_error(self, f"{what} #{i}: {wrong}")
        inferred = self.infer_result_types()
        if len(inferred) != len(self.results):
            raise op_error(self, f"expected {len(inferred)} results, got {len(self.results)}")
        for i, (result, expected) in enumerate(zip(self.results, inferred)):
            if not types_compatible(result.type, expected):
                raise op_error(
                    self,
                    f"result #{i} has type {result.type}, incompatible with the "
                    f"inferred type {expected}",
                )

    @classmethod
    def result_count(cls, properties: dict[str, Attribute]) -> int:
        """How many results an op with these properties has (variadic ops override)."""
        return 1

    def reify(self) -> list[list[SSAValue]]:
        """Emit, before this op, the shape IR computing every result dim."""
        k = ReifyDims(self)
        try:
            shapes = self.shape_function(k)
        except ShapeError as e:
            raise op_error(self, str(e)) from None
        return [[k.value(d) for d in s] for s in shapes]

    def evaluate(self, ctx: EvalContext, args: Sequence[Any]) -> Sequence[Any]:
        """The reference, guarded by the shape function run on the actual operands: the
        run-time checks are exactly the static ones, and the result shapes are checked."""
        try:
            expected = self.shape_function(ConcreteDims(dict(zip(self.operands, args))))
        except ShapeError as e:
            raise ValueError(str(e)) from None
        # (numpy gives a 0-d result as a scalar: a tensor<f32> is a 0-d array)
        results = [np.asarray(r) if isinstance(r, np.generic) else r for r in self.reference(*args)]
        for i, (value, dims) in enumerate(zip(results, expected)):
            actual = tuple(np.shape(value))
            fits = len(actual) == len(dims) and all(
                d is None or (a <= d if self.DATA_DEPENDENT else a == d) for a, d in zip(actual, dims)
            )
            if not fits:
                raise RuntimeError(f"result #{i} has shape {actual}, its shape function says {tuple(dims)}")
        return results

    @classmethod
    def result_types_for(
        cls, operands: Sequence[SSAValue], properties: dict[str, Attribute], element: Attribute | None = None
    ) -> list[Attribute]:
        """Result types on these operands; `element` is the user's choice of result
        element type for ELEMENT_TYPE_FROM_RESULT ops. VerifyException if invalid."""
        probe = cls.create(operands=list(operands), result_types=[NoneType()] * cls.result_count(properties),
                           properties=properties)
        try:
            if not cls.ELEMENT_TYPE_FROM_RESULT:
                return list(probe.infer_result_types())
            if element is None:
                raise op_error(probe, "needs the element type of its result")
            try:
                shapes = probe.shape_function(SymbolicDims())
            except ShapeError as e:
                raise op_error(probe, str(e)) from None
            return [tensor(element, s) for s in shapes]
        finally:
            probe.drop_all_references()

    @classmethod
    def create_inferred(
        cls, operands: Sequence[SSAValue | Sequence[SSAValue]], properties: dict[str, Attribute] | None = None
    ) -> Self:
        """Create the op with its result types inferred from operands and properties."""
        properties = properties or {}
        flat = _flatten(operands)
        return cls.create(operands=flat, result_types=cls.result_types_for(flat, properties), properties=properties)


class UnaryTensorOp(GraphOp):
    """Base of ops with one tensor operand and one tensor result (the common format)."""

    input = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"


def _flatten(operands: Sequence[SSAValue | Sequence[SSAValue]]) -> list[SSAValue]:
    flat: list[SSAValue] = []
    for o in operands:
        if isinstance(o, SSAValue):
            flat.append(o)
        else:
            flat.extend(o)
    return flat


def as_tensor(value: Any, element_type: Attribute) -> np.ndarray:
    """A reference result as an array of the op's declared element type."""
    return np.asarray(value).astype(numpy_dtype(element_type), copy=False)
