"""Reductions over axes: sum, mean, product, max, min (optionally keeping dims), argmax,
and the running sum and product."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar

import numpy as np
from xdsl.dialects.builtin import BoolAttr, DenseArrayBase, I64, IntegerAttr, IntegerType, i1, i64
from xdsl.ir import Attribute
from xdsl.irdl import (
    ParsePropInAttrDict,
    irdl_op_definition,
    opt_prop_def,
    prop_def,
    traits_def,
)
from xdsl.traits import Pure

from nimble.dialects.interfaces import FusionKind
from nimble.dialects.graph.base import UnaryTensorOp, as_tensor, normalize_axes, normalize_axis
from nimble.dialects.graph.folding import GraphFolder
from nimble.dialects.shape_functions import DimAlgebra, ShapeError

_FALSE = IntegerAttr(0, i1)


def _reduced(dims: list[Any], axes: Sequence[int], keepdims: bool) -> list[Any]:
    if keepdims:
        return [1 if i in axes else d for i, d in enumerate(dims)]
    return [d for i, d in enumerate(dims) if i not in axes]


class ReduceOp(UnaryTensorOp):
    """Base of reductions over `axes` (all axes when omitted)."""

    axes = opt_prop_def(DenseArrayBase.constr(i64))
    keepdims = prop_def(BoolAttr, default_value=_FALSE)
    irdl_options = (ParsePropInAttrDict(),)
    traits = traits_def(Pure(), GraphFolder())
    FUSION: ClassVar[FusionKind] = FusionKind.REDUCTION

    FN: ClassVar[Callable[..., Any]]

    def reduced_axes(self) -> list[int]:
        rank = len(self.input.type.get_shape())
        if self.axes is None:
            return list(range(rank))
        return normalize_axes(list(self.axes.get_values()), rank)

    def shape_function(self, k: DimAlgebra) -> list[list[Any]]:
        return [_reduced(k.dims(self.input), self.reduced_axes(), bool(self.keepdims.value.data))]

    def reference(self, x: Any) -> Sequence[Any]:
        y = type(self).FN(x, axis=tuple(self.reduced_axes()), keepdims=bool(self.keepdims.value.data))
        return [as_tensor(y, self.result.type.element_type)]


def _lowest(dtype: np.dtype) -> Any:
    if dtype == np.bool_:
        return False
    return -np.inf if np.issubdtype(dtype, np.floating) else np.iinfo(dtype).min


def _highest(dtype: np.dtype) -> Any:
    if dtype == np.bool_:
        return True
    return np.inf if np.issubdtype(dtype, np.floating) else np.iinfo(dtype).max


@irdl_op_definition
class ReduceSumOp(ReduceOp):
    """Sum over `axes`.

    Example: `%s = graph.reduce_sum %x {axes = array<i64: 1>, keepdims = true} : tensor<?x?xf32> -> tensor<?x1xf32>`
    """

    name = "graph.reduce_sum"
    FN: ClassVar[Callable[..., Any]] = staticmethod(np.sum)


@irdl_op_definition
class ReduceMeanOp(ReduceOp):
    """Arithmetic mean over `axes`.

    Example: `%m = graph.reduce_mean %x {axes = array<i64: -1>} : tensor<?x768xf32> -> tensor<?xf32>`
    """

    name = "graph.reduce_mean"
    FN: ClassVar[Callable[..., Any]] = staticmethod(np.mean)


@irdl_op_definition
class ReduceMaxOp(ReduceOp):
    """Maximum over `axes`; over an empty axis, the lowest value of the type (-inf for
    floats, as ONNX's ReduceMax).

    Example: `%m = graph.reduce_max %x {axes = array<i64: 0>} : tensor<?x4xf32> -> tensor<4xf32>`
    """

    name = "graph.reduce_max"
    FN: ClassVar[Callable[..., Any]] = staticmethod(
        lambda x, axis, keepdims: np.max(x, axis=axis, keepdims=keepdims, initial=_lowest(x.dtype)))


@irdl_op_definition
class ReduceMinOp(ReduceOp):
    """Minimum over `axes`; over an empty axis, the highest value of the type (inf for
    floats, as ONNX's ReduceMin).

    Example: `%m = graph.reduce_min %x {axes = array<i64: 1>} : tensor<?x4xf32> -> tensor<?xf32>`
    """

    name = "graph.reduce_min"
    FN: ClassVar[Callable[..., Any]] = staticmethod(
        lambda x, axis, keepdims: np.min(x, axis=axis, keepdims=keepdims, initial=_highest(x.dtype)))


@irdl_op_definition
class ReduceProdOp(ReduceOp):
    """Product over `axes` (1 over an empty axis), in the element type: integers wrap.

    Example: `%p = graph.reduce_prod %x {axes = array<i64: 0>} : tensor<?x4xi64> -> tensor<4xi64>`
    """

    name = "graph.reduce_prod"
    FN: ClassVar[Callable[..., Any]] = staticmethod(
        lambda x, axis, keepdims: np.prod(x, axis=axis, keepdims=keepdims, dtype=x.dtype))


@irdl_op_definition
class ArgmaxOp(UnaryTensorOp):
    """Index of the first maximum along `axis` (the last with `select_last_index`), as
    `i64`; a NaN counts as the maximum (numpy's rule).

    Example: `%i = graph.argmax %x {axis = 1 : i64} : tensor<?x10xf32> -> tensor<?xi64>`
    """

    name = "graph.argmax"
    axis = prop_def(IntegerAttr[I64], default_value=IntegerAttr(-1, i64))
    keepdims = prop_def(BoolAttr, default_value=_FALSE)
    select_last_index = prop_def(BoolAttr, default_value=_FALSE)
    irdl_options = (ParsePropInAttrDict(),)
    traits = traits_def(Pure(), GraphFolder())
    FUSION: ClassVar[FusionKind] = FusionKind.REDUCTION

    def shape_function(self, k: DimAlgebra) -> list[list[Any]]:
        x = k.dims(self.input)
        if not x:
            raise ShapeError("input must have rank >= 1")
        axis = normalize_axis(self.axis.value.data, len(x))
        return [_reduced(x, [axis], bool(self.keepdims.value.data))]

    def result_element_types(self) -> list[Attribute]:
        return [IntegerType(64)]

    def reference(self, x: Any) -> Sequence[Any]:
        axis = normalize_axis(self.axis.value.data, x.ndim)
        if self.select_last_index.value.data:
            y = x.shape[axis] - 1 - np.argmax(np.flip(x, axis), axis=axis)
        else:
            y = np.argmax(x, axis=axis)
        if self.keepdims.value.data:
            y = np.expand_dims(y, axis)
        return [as_tensor(y, self.result.type.element_type)]


class RunningOp(UnaryTensorOp):
    """Base of running reductions along `axis`: element i combines elements 0..i, 0..i-1
    when `exclusive` (the first then the identity), counted from the end when `reverse`."""

    axis = prop_def(IntegerAttr[I64], default_value=IntegerAttr(0, i64))
    exclusive = prop_def(BoolAttr, default_value=_FALSE)
    reverse = prop_def(BoolAttr, default_value=_FALSE)
    irdl_options = (ParsePropInAttrDict(),)
    traits = traits_def(Pure(), GraphFolder())
    FUSION: ClassVar[FusionKind] = FusionKind.REDUCTION
    FN: ClassVar[Callable[..., Any]]
    """numpy's running reduction (`np.cumsum`)."""
    IDENTITY: ClassVar[int]
    """What an exclusive scan's first element is."""
    WHAT: ClassVar[str]
    """The reduction, in words (for errors)."""

    def scan_axis(self) -> int:
        return normalize_axis(self.axis.value.data, len(self.input.type.get_shape()))

    def shape_function(self, k: DimAlgebra) -> list[list[Any]]:
        x = k.dims(self.input)
        if not x:
            raise ShapeError("input must have rank >= 1")
        normalize_axis(self.axis.value.data, len(x))
        if self.input.type.element_type == i1:
            raise ShapeError(f"a running {type(self).WHAT} of i1 is not defined; cast first")
        return [x]

    def reference(self, x: Any) -> Sequence[Any]:
        axis = normalize_axis(self.axis.value.data, x.ndim)
        reverse = bool(self.reverse.value.data)
        y = np.flip(x, axis) if reverse else x
        runs = type(self).FN(y, axis=axis, dtype=x.dtype)
        if self.exclusive.value.data and x.shape[axis]:
            # Shifted by one along the axis, the identity first: nothing undone, so floats
            # round as the running reduction does.
            head = [slice(None)] * x.ndim
            head[axis] = slice(0, -1)
            pad = [(0, 0)] * x.ndim
            pad[axis] = (1, 0)
            runs = np.pad(runs[tuple(head)], pad, constant_values=type(self).IDENTITY)
        return [as_tensor(np.flip(runs, axis) if reverse else runs, self.result.type.element_type)]


@irdl_op_definition
class CumSumOp(RunningOp):
    """Running sum along `axis` (ONNX CumSum).

    Example: `%c = graph.cumsum %x {axis = 1 : i64} : tensor<?x?xi64> -> tensor<?x?xi64>`
    """

    name = "graph.cumsum"
    FN: ClassVar[Callable[..., Any]] = staticmethod(np.cumsum)
    IDENTITY: ClassVar[int] = 0
    WHAT: ClassVar[str] = "sum"


@irdl_op_definition
class CumProdOp(RunningOp):
    """Running product along `axis`, in the element type (ONNX CumProd).

    Example: `%c = graph.cumprod %x {axis = 0 : i64, exclusive = true} : tensor<?xf32> -> tensor<?xf32>`
    """

    name = "graph.cumprod"
    FN: ClassVar[Callable[..., Any]] = staticmethod(np.cumprod)
    IDENTITY: ClassVar[int] = 1
    WHAT: ClassVar[str] = "product"
