"""Folding for graph operators: constant folding through the reference semantics, and
algebraic identities (x*1, x+0, ...) declared as data on the op classes."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import AnyFloat, BytesAttr, DenseIntOrFPElementsAttr, IntegerType, TensorType
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.traits import ConstantLike, HasFolder

from nimble.dialects.graph.base import GraphOp
from nimble.dialects.graph.types import numpy_dtype


def constant_array(value: SSAValue) -> np.ndarray | None:
    """The array held by a constant-like graph op producing `value`, else None."""
    attr = ConstantLike.get_constant_value(value)
    if isinstance(attr, DenseIntOrFPElementsAttr):
        return dense_to_array(attr)
    return None


def _packed(element: Attribute) -> np.dtype | None:
    """The numpy dtype of an element type's packed bytes in a dense attribute
    (little-endian, `struct` format), read and written without a Python list (a weight
    of millions of floats: ~0.1 s per million each way through lists)."""
    return np.dtype(element.format) if isinstance(element, AnyFloat | IntegerType) else None


def dense_to_array(attr: DenseIntOrFPElementsAttr, copy: bool = True) -> np.ndarray:
    """The attribute's values; `copy=False`: read-only, a view of its bytes where they
    are the array's (a program's constants, copied once more into aligned storage)."""
    element = attr.get_element_type()
    dtype, shape = numpy_dtype(element), attr.get_shape()
    packed = _packed(element)
    if packed is None:
        return np.array(attr.get_values(), dtype=dtype).reshape(shape)
    values = np.frombuffer(attr.data.data, dtype=packed)
    if values.size == 1:  # a splat may hold one element
        values = np.broadcast_to(values, (int(np.prod(shape)),))
    return values.astype(dtype, copy=copy).reshape(shape)


def array_to_dense(array: np.ndarray, type: TensorType) -> DenseIntOrFPElementsAttr:
    flat = np.asarray(array, dtype=numpy_dtype(type.element_type)).reshape(-1)
    packed = _packed(type.element_type)
    if packed is None:
        return DenseIntOrFPElementsAttr.from_list(type, flat.tolist())
    return DenseIntOrFPElementsAttr(type, BytesAttr(flat.astype(packed, copy=False).tobytes()))


def is_identity_for(value: SSAValue, scalar: float, other: SSAValue) -> bool:
    """`value` is a constant splat of `scalar` that cannot broadcast `other` to a larger
    shape (every dim 1, rank not above `other`'s): then `other op value == other`."""
    array = constant_array(value)
    if array is None or array.size == 0 or not np.all(array == scalar):
        return False
    rank = len(other.type.get_shape()) if isinstance(other.type, TensorType) else -1
    return array.ndim <= rank and all(d == 1 for d in array.shape)


class GraphFolder(HasFolder):
    """Folds an op whose operands are all constants, or that is an identity.

    Identities are data on the op class: `RIGHT_IDENTITY` (x op c == x for the splat c)
    and `COMMUTATIVE` (then c op x == x too). The result replaces the op only when it
    has the op's exact type, so a broadcasting identity never changes a shape.
    """

    @classmethod
    def fold(cls, op: Operation) -> Sequence[SSAValue | Attribute] | None:
        if not isinstance(op, GraphOp):
            return None
        return cls._fold_identity(op) or cls._fold_constants(op)

    @classmethod
    def _fold_identity(cls, op: GraphOp) -> Sequence[SSAValue] | None:
        identity = op.RIGHT_IDENTITY
        if identity is None or len(op.operands) != 2:
            return None
        lhs, rhs = op.operands
        result_type = op.results[0].type
        if lhs.type == result_type and is_identity_for(rhs, identity, lhs):
            return [lhs]
        if op.COMMUTATIVE and rhs.type == result_type and is_identity_for(lhs, identity, rhs):
            return [rhs]
        return None

    @classmethod
    def _fold_constants(cls, op: GraphOp) -> Sequence[Attribute] | None:
        if not op.operands:
            return None
        arrays = [constant_array(v) for v in op.operands]
        if any(a is None for a in arrays):
            return None
        types = [r.type for r in op.results]
        if not all(isinstance(t, TensorType) and t.has_static_shape() for t in types):
            return None
        if sum(int(np.prod(t.get_shape())) for t in types) > op.FOLD_LIMIT:
            return None
        try:
            with np.errstate(all="ignore"):
                values = op.reference(*arrays)
        except Exception:  # whatever fails at compile time fails again, as it should, at run time
            return None
        return [array_to_dense(v, t) for v, t in zip(values, types, strict=True)]
