"""Ops that address elements through index tensors: the scatters, a copy of `data` with
elements at given indices replaced by (or combined with) `updates` (ONNX's
ScatterElements and ScatterND; PyTorch's `scatter`, `index_put`, `scatter_reduce`), and
`gather_nd`, slices picked by index rows (ONNX's GatherND).

`reduction` is how an update meets the element it lands on: `none` replaces it (where
indices repeat, the last update wins, as in ONNX Runtime), `add`, `mul`, `max`, `min`
combine with it. Negative indices count from the end of their dim; an index out of
range is an error of the reference and, compiled, an update that lands nowhere.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
from xdsl.dialects.builtin import I64, IntegerAttr, StringAttr, TensorType, i64
from xdsl.ir import SSAValue
from xdsl.irdl import ParsePropInAttrDict, irdl_op_definition, operand_def, prop_def, result_def, traits_def
from xdsl.traits import Pure

from nimble.dialects.graph.base import GraphOp, normalize_axis
from nimble.dialects.graph.folding import GraphFolder
from nimble.dialects.graph.types import is_float
from nimble.dialects.interfaces import FusionKind
from nimble.dialects.shape_functions import DimAlgebra, ShapeError

REDUCTIONS: dict[str, Any] = {
    "none": lambda old, new: new,
    "add": np.add,
    "mul": np.multiply,
    "max": np.maximum,
    "min": np.minimum,
}
"""Each `reduction` and how the reference combines an element with an update."""


class _ScatterOp(GraphOp):
    data = operand_def(TensorType)
    indices = operand_def(TensorType)
    updates = operand_def(TensorType)
    result = result_def(TensorType)
    reduction = prop_def(StringAttr, default_value=StringAttr("none"))
    assembly_format = "$data `,` $indices `,` $updates attr-dict `:` functional-type(operands, results)"
    irdl_options = (ParsePropInAttrDict(),)
    traits = traits_def(Pure(), GraphFolder())
    FUSION: ClassVar[FusionKind] = FusionKind.REDUCTION  # (each element reduces over the updates)

    def check(self) -> None:
        if self.reduction.data not in REDUCTIONS:
            raise ShapeError(f"reduction must be one of {', '.join(REDUCTIONS)}, not '{self.reduction.data}'")
        if is_float(self.indices.type.element_type):
            raise ShapeError("indices must be integers")
        if self.updates.type.element_type != self.data.type.element_type:
            raise ShapeError("updates must have the data's element type")

    def result_element_types(self) -> list[Any]:
        return [self.data.type.element_type]

    def combine(self, out: np.ndarray, at: tuple, update: Any) -> None:
        out[at] = REDUCTIONS[self.reduction.data](out[at], update)


def _index_length(indices: SSAValue) -> int | None:
    """How many leading dims of the data an index row names: the indices' last dim,
    None where it is not static."""
    shape = indices.type.get_shape()
    return shape[-1] if shape and shape[-1] >= 0 else None


def _wrapped(i: int, n: int) -> int:
    if not -n <= i < n:
        raise IndexError(f"index {i} out of range for a dim of size {n}")
    return i + n if i < 0 else i


@irdl_op_definition
class ScatterElementsOp(_ScatterOp):
    """`result[..., indices[p], ...] = updates[p]` along `axis` for every position `p`
    of `indices` (whose shape `updates` has; the data's rank, each dim at most the
    data's).

    Example: `%y = graph.scatter_elements %x, %i, %u {axis = 1 : i64, reduction = "add"} : (tensor<?x5xf32>, tensor<?x2xi64>, tensor<?x2xf32>) -> tensor<?x5xf32>`
    """

    name = "graph.scatter_elements"
    axis = prop_def(IntegerAttr[I64], default_value=IntegerAttr(0, i64))

    def shape_function(self, k: DimAlgebra) -> list[list[Any]]:
        self.check()
        x, idx, upd = k.dims(self.data), k.dims(self.indices), k.dims(self.updates)
        if len(idx) != len(x) or len(upd) != len(x):
            raise ShapeError(f"indices and updates must have the data's rank {len(x)}")
        normalize_axis(self.axis.value.data, len(x))
        for a, (i, u) in enumerate(zip(idx, upd)):
            k.equal(i, u, f"updates dim {a} must equal the indices'")
        return [x]

    def reference(self, data: Any, indices: Any, updates: Any) -> Sequence[Any]:
        axis = normalize_axis(self.axis.value.data, data.ndim)
        out = np.array(data, copy=True)
        for p in np.ndindex(*indices.shape):
            at = list(p)
            at[axis] = _wrapped(int(indices[p]), data.shape[axis])
            self.combine(out, tuple(at), updates[p])
        return [out]


@irdl_op_definition
class ScatterNDOp(_ScatterOp):
    """`result[indices[m, 0], ..., indices[m, K-1], ...] = updates[m, ...]` for each row
    `m` of `indices` (`[M, K]`, K at most the data's rank; `updates` is `[M]` followed by
    the data's dims from K on). ONNX's ScatterND with its leading index dims flattened.

    Example: `%y = graph.scatter_nd %x, %i, %u : (tensor<4x?xf32>, tensor<?x1xi64>, tensor<?x?xf32>) -> tensor<4x?xf32>`
    """

    name = "graph.scatter_nd"

    def shape_function(self, k: DimAlgebra) -> list[list[Any]]:
        self.check()
        x, idx, upd = k.dims(self.data), k.dims(self.indices), k.dims(self.updates)
        if len(idx) != 2:
            raise ShapeError("indices must be [rows, index length]")
        depth = self.depth()
        if depth is None or not 1 <= depth <= len(x):
            raise ShapeError(f"the index length must be static and from 1 to the data's rank {len(x)}")
        if len(upd) != 1 + len(x) - depth:
            raise ShapeError(f"updates must have rank {1 + len(x) - depth}")
        k.equal(upd[0], idx[0], "updates must have a row per index row")
        for a, (u, d) in enumerate(zip(upd[1:], x[depth:]), start=1):
            k.equal(u, d, f"updates dim {a} must equal the data's dim {depth + a - 1}")
        return [x]

    def depth(self) -> int | None:
        """K: how many leading dims of the data an index row names."""
        return _index_length(self.indices)

    def reference(self, data: Any, indices: Any, updates: Any) -> Sequence[Any]:
        out = np.array(data, copy=True)
        for m in range(indices.shape[0]):
            at = tuple(_wrapped(int(i), n) for i, n in zip(indices[m], data.shape))
            self.combine(out, at, updates[m])
        return [out]


@irdl_op_definition
class GatherNDOp(GraphOp):
    """Slices of `data` picked by the rows of `indices` (its last dim K, static): the
    result is `indices[..., :-1] + data[batch_dims + K:]`, element `[p, rest]` being
    `data[p[:batch_dims], indices[p], rest]`; the first `batch_dims` dims of `data` and
    `indices` are shared (ONNX's GatherND). Negative indices count from the end;
    compiled, one out of range is clamped (as `gather`).

    Example: `%y = graph.gather_nd %x, %i : (tensor<?x4x8xf32>, tensor<?x2xi64>) -> tensor<?x8xf32>`
    """

    name = "graph.gather_nd"
    data = operand_def(TensorType)
    indices = operand_def(TensorType)
    result = result_def(TensorType)
    batch_dims = prop_def(IntegerAttr[I64], default_value=IntegerAttr(0, i64))
    assembly_format = "$data `,` $indices attr-dict `:` functional-type(operands, results)"
    irdl_options = (ParsePropInAttrDict(),)
    traits = traits_def(Pure(), GraphFolder())
    FUSION: ClassVar[FusionKind] = FusionKind.INJECTIVE
    CLAMPS_READS: ClassVar[bool] = True

    def depth(self) -> int | None:
        """K: how many dims of the data after the batch dims an index row names."""
        return _index_length(self.indices)

    def shape_function(self, k: DimAlgebra) -> list[list[Any]]:
        x, idx = k.dims(self.data), k.dims(self.indices)
        if is_float(self.indices.type.element_type):
            raise ShapeError("indices must be integers")
        batch, depth = self.batch_dims.value.data, self.depth()
        if depth is None or depth < 1:
            raise ShapeError("the indices' last dim (the index length) must be static and >= 1")
        if batch < 0 or batch >= len(idx) or batch + depth > len(x):
            raise ShapeError(f"batch_dims {batch} and index length {depth} do not fit ranks {len(x)} and {len(idx)}")
        for a in range(batch):
            k.equal(idx[a], x[a], f"indices dim {a} must equal the data's (a batch dim)")
        return [[*idx[:-1], *x[batch + depth:]]]

    def result_element_types(self) -> list[Any]:
        return [self.data.type.element_type]

    def reference(self, data: Any, indices: Any) -> Sequence[Any]:
        batch, depth = self.batch_dims.value.data, self.depth()
        out = np.empty((*indices.shape[:-1], *data.shape[batch + depth:]), data.dtype)
        for p in np.ndindex(*indices.shape[:-1]):
            at = tuple(_wrapped(int(i), n) for i, n in zip(indices[p], data.shape[batch:]))
            out[p] = data[(*p[:batch], *at)]
        return [out]


@irdl_op_definition
class OneHotOp(GraphOp):
    """`values[1]` where an index names the position along the new axis `axis` (of
    `depth` positions), `values[0]` elsewhere: the result is the indices' shape with
    `depth` inserted at `axis`. Negative indices count from `depth`; one out of range
    names no position (ONNX's OneHot).

    Example: `%y = graph.one_hot %i, %v {depth = 10 : i64, axis = -1 : i64} : (tensor<?xi64>, tensor<2xf32>) -> tensor<?x10xf32>`
    """

    name = "graph.one_hot"
    indices = operand_def(TensorType)
    values = operand_def(TensorType)
    result = result_def(TensorType)
    depth = prop_def(IntegerAttr[I64])
    axis = prop_def(IntegerAttr[I64], default_value=IntegerAttr(-1, i64))
    assembly_format = "$indices `,` $values attr-dict `:` functional-type(operands, results)"
    irdl_options = (ParsePropInAttrDict(),)
    traits = traits_def(Pure(), GraphFolder())
    FUSION: ClassVar[FusionKind] = FusionKind.INJECTIVE

    def new_axis(self) -> int:
        return normalize_axis(self.axis.value.data, len(self.indices.type.get_shape()) + 1)

    def shape_function(self, k: DimAlgebra) -> list[list[Any]]:
        idx, values = k.dims(self.indices), k.dims(self.values)
        if is_float(self.indices.type.element_type):
            raise ShapeError("indices must be integers")
        if len(values) != 1:
            raise ShapeError("values must be [off, on]")
        k.equal(values[0], 2, "values must be [off, on]")
        depth = self.depth.value.data
        if depth < 1:
            raise ShapeError(f"depth must be >= 1, not {depth}")
        axis = self.new_axis()
        return [[*idx[:axis], depth, *idx[axis:]]]

    def result_element_types(self) -> list[Any]:
        return [self.values.type.element_type]

    def reference(self, indices: Any, values: Any) -> Sequence[Any]:
        depth, axis = self.depth.value.data, self.new_axis()
        wrapped = np.where(indices < 0, indices + depth, indices)
        positions = np.arange(depth).reshape([depth if a == axis else 1 for a in range(indices.ndim + 1)])
        hit = np.expand_dims(wrapped, axis) == positions
        return [np.where(hit, values[1], values[0]).astype(values.dtype)]


INDEXED_OPS = [ScatterElementsOp, ScatterNDOp, GatherNDOp, OneHotOp]
