"""What the ONNX importer's modules share: errors, the ONNX package, element types,
dense constants."""

from __future__ import annotations

from typing import Any

import numpy as np
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    TensorType,
    f16,
    f32,
    f64,
    i1,
    i8,
    i32,
    i64,
)
from xdsl.ir import Attribute, SSAValue

from nimble.dialects import graph
from nimble.dialects.dim_expr import Expr, symbol, symbol_name
from nimble.dialects.graph.folding import array_to_dense
from nimble.dialects.graph.types import tensor
from nimble.errors import CompileError

MIN_OPSET = 13


class OnnxImportError(CompileError):
    """The model cannot be imported; the message lists every problem found."""


class NeedsConstant(OnnxImportError):
    """A node input the graph dialect takes as an attribute is not a constant."""

    def __init__(self, message: str, name: str):
        super().__init__(message)
        self.name = name


def onnx_package():
    try:
        import onnx
    except ImportError as e:  # pragma: no cover (onnx is a dependency)
        raise OnnxImportError(f"the onnx package is not installed: {e}") from None
    return onnx


# ---------------------------------------------------------------------------------------
# Types


def element_types() -> dict[int, Attribute]:
    T = onnx_package().TensorProto
    return {T.FLOAT: f32, T.DOUBLE: f64, T.FLOAT16: f16, T.INT64: i64, T.INT32: i32, T.INT8: i8, T.BOOL: i1}


def tensor_type(type_proto: Any, where: str, named: dict[str, list[tuple[int, int]]], param: int) -> TensorType:
    if not type_proto.HasField("tensor_type"):
        raise OnnxImportError(f"{where}: only tensor inputs are supported")
    t = type_proto.tensor_type
    element = element_types().get(t.elem_type)
    if element is None:
        names = onnx_package().TensorProto.DataType
        known = names.Name(t.elem_type) if t.elem_type in names.values() else f"code {t.elem_type} (not an ONNX type)"
        raise OnnxImportError(f"{where}: element type {known} is not supported")
    if not t.HasField("shape"):
        raise OnnxImportError(f"{where}: the rank is unknown (Nimble needs the rank of every input)")
    dims: list[int | Expr | None] = []
    for axis, d in enumerate(t.shape.dim):
        if d.HasField("dim_value"):
            dims.append(d.dim_value)
        elif d.HasField("dim_param") and d.dim_param:  # a named dim: a symbol of the types
            name = d.dim_param if isinstance(d.dim_param, str) else d.dim_param.decode(errors="replace")
            dims.append(symbol(symbol_name(name)))  # (protobuf gives bytes for a name not UTF-8)
            named.setdefault(name, []).append((param, axis))
        else:
            dims.append(None)
    return tensor(element, dims)


def dense(array: np.ndarray) -> DenseIntOrFPElementsAttr:
    element = {np.dtype(np.float32): f32, np.dtype(np.float64): f64, np.dtype(np.float16): f16,
               np.dtype(np.int64): i64, np.dtype(np.int32): i32, np.dtype(np.int8): i8,
               np.dtype(np.bool_): i1}.get(array.dtype)
    if element is None:
        raise OnnxImportError(f"constant of dtype {array.dtype} is not supported")
    return array_to_dense(array, TensorType(element, list(array.shape)))


def rank_of(v: SSAValue) -> int:
    return len(v.type.get_shape())


def dtype_of(v: SSAValue) -> np.dtype:
    from nimble.dialects.graph.types import numpy_dtype

    return numpy_dtype(v.type.element_type)


def scalar(b, value: float, like: SSAValue) -> SSAValue:
    return b.const(np.array(value, dtype_of(like)))


def conform(b, values: list[SSAValue], types: list) -> list[SSAValue]:
    """Values relaxed to the (less static) types a loop carries or branches yield."""
    out = []
    for v, t in zip(values, types):
        if v.type != t:
            v = b.emit(graph.CastOp.create(operands=[v], result_types=[t])).results[0]
        out.append(v)
    return out
