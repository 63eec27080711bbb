"""Tensor type helpers shared by the graph dialect, the interpreter and later levels.

Nimble's *Any* dimension is MLIR's `?`: xdsl stores it as `DYNAMIC_INDEX`. In Python we
speak of dims as `int | None` (None = unknown) and convert at the edges. A `?` may have
a name or an expression (`#nimble.dims` in the type's encoding, dialects/symbolic.py):
`symbolic_dims` reads them as `int | Expr | None`, and `tensor` writes them.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

import numpy as np
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerType,
    TensorType,
)
from xdsl.ir import Attribute

from nimble.dialects.dim_expr import Expr
from nimble.dialects.symbolic import DimsAttr, named_dims

Dim = int | None
SymDim = int | Expr | None
"""A dim with its name where it has one: an int, an expression over named symbols, or
None (an anonymous `?`)."""

# One table for every element type the graph level understands.
_NUMPY_DTYPES: tuple[tuple[Attribute, np.dtype], ...] = (
    (Float32Type(), np.dtype(np.float32)),
    (Float64Type(), np.dtype(np.float64)),
    (Float16Type(), np.dtype(np.float16)),
    (IntegerType(1), np.dtype(np.bool_)),
    (IntegerType(8), np.dtype(np.int8)),
    (IntegerType(32), np.dtype(np.int32)),
    (IntegerType(64), np.dtype(np.int64)),
    (IndexType(), np.dtype(np.int64)),
)


def numpy_dtype(element_type: Attribute) -> np.dtype:
    """The numpy dtype of an element type; ValueError if Nimble does not support it."""
    for attr, dtype in _NUMPY_DTYPES:
        if attr == element_type:
            return dtype
    raise ValueError(f"unsupported element type {element_type}")


def element_type_of(dtype: np.dtype) -> Attribute:
    """The element type of a numpy dtype (the first match in the table)."""
    for attr, known in _NUMPY_DTYPES:
        if known == np.dtype(dtype):
            return attr
    raise ValueError(f"unsupported numpy dtype {dtype}")


def is_float(element_type: Attribute) -> bool:
    return isinstance(element_type, Float16Type | Float32Type | Float64Type)


def is_bool(element_type: Attribute) -> bool:
    return element_type == IntegerType(1)


def dims(t: Attribute) -> list[Dim]:
    """The dims of a tensor type, None for `?`."""
    assert isinstance(t, TensorType)
    return [None if d == DYNAMIC_INDEX else d for d in t.get_shape()]


def symbolic_dims(t: Attribute) -> list[SymDim]:
    """The dims of a tensor type, an expression where `#nimble.dims` names a `?`."""
    return [d if d is not None or e is None or e.as_int() is not None else e for d, e in zip(dims(t), named_dims(t))]


def tensor(element_type: Attribute, shape: Sequence[SymDim]) -> TensorType:
    """Build `tensor<...>` from dims given as int, None or expressions (a `?` with
    `#nimble.dims` naming it). Types are immutable: cached, since verifying a new
    TensorType costs more than anything else in building IR."""
    return _tensor(element_type, tuple(d.as_int() if isinstance(d, Expr) and d.as_int() is not None else d
                                       for d in shape))


@lru_cache(maxsize=4096)
def _tensor(element_type: Attribute, shape: tuple[SymDim, ...]) -> TensorType:
    static = [d if isinstance(d, int) else DYNAMIC_INDEX for d in shape]
    if not any(isinstance(d, Expr) for d in shape):
        return TensorType(element_type, static)
    names = DimsAttr(tuple(Expr.of(d) if isinstance(d, int) else d for d in shape))
    return TensorType(element_type, static, names)


def format_dims(shape: Sequence[Dim]) -> str:
    return "x".join("?" if d is None else str(d) for d in shape) or "scalar"


def dims_compatible(a: Sequence[Dim], b: Sequence[Dim]) -> bool:
    """Same rank, and equal wherever both dims are known."""
    return len(a) == len(b) and all(x is None or y is None or x == y for x, y in zip(a, b))


def join_dims(a: Sequence[SymDim], b: Sequence[SymDim]) -> list[SymDim]:
    """The most precise dims both `a` and `b` conform to (differing dims become `?`)."""
    return [x if x == y else None for x, y in zip(a, b, strict=True)]


def types_compatible(a: Attribute, b: Attribute) -> bool:
    """Two types are compatible when they can describe the same run-time value."""
    if isinstance(a, TensorType) and isinstance(b, TensorType):
        return a.element_type == b.element_type and dims_compatible(dims(a), dims(b))
    return a == b


def join_types(a: Attribute, b: Attribute) -> Attribute | None:
    """The least static type describing values of both `a` and `b` (differing dims
    become `?`), or None if no type does (other element type, rank or kind)."""
    from xdsl.dialects.builtin import TupleType

    if a == b:
        return a
    if isinstance(a, TensorType) and isinstance(b, TensorType):
        if a.element_type != b.element_type or len(a.get_shape()) != len(b.get_shape()):
            return None
        return tensor(a.element_type, join_dims(symbolic_dims(a), symbolic_dims(b)))
    if isinstance(a, TupleType) and isinstance(b, TupleType) and len(a.types) == len(b.types):
        joined = [join_types(x, y) for x, y in zip(a.types.data, b.types.data)]
        return None if None in joined else TupleType(tuple(joined))
    return None
