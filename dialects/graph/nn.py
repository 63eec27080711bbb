"""Neural-network operators: conv2d, pooling, normalisation and softmax (NCHW layout)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
from xdsl.dialects.builtin import (
    FloatAttr,
    BoolAttr,
    DenseArrayBase,
    I64,
    IntegerAttr,
    TensorType,
    f64,
    i1,
    i64,
)
from xdsl.ir import Attribute
from xdsl.irdl import (
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure

from nimble.dialects.interfaces import FusionKind
from nimble.dialects.graph.base import GraphOp, UnaryTensorOp, as_tensor, i64_array, normalize_axis
from nimble.dialects.graph.folding import GraphFolder
from nimble.dialects.graph.types import is_float
from nimble.dialects.shape_functions import DimAlgebra, ShapeError, StaticDims

_I64_ARRAY = DenseArrayBase.constr(i64)


def _ints(attr: DenseArrayBase, count: int, what: str, minimum: int) -> list[int]:
    values = list(attr.get_values())
    if len(values) != count:
        raise ShapeError(f"{what} must have {count} values, not {len(values)}")
    if any(v < minimum for v in values):
        raise ShapeError(f"{what} must be >= {minimum}, got {values}")
    return values


def _float_elements(op: GraphOp) -> list[Attribute]:
    element = op.operands[0].type.element_type
    if not is_float(element):
        raise ShapeError(f"operands must be float tensors, not {element}")
    if any(v.type.element_type != element for v in op.operands):
        raise ShapeError("operands must have the same element type")
    return [element]


def _window_out(k: DimAlgebra, size: Any, pad: int, kernel: Any, stride: int, dilation: int) -> Any:
    """Output size of a sliding window: floor((size + pad - dilation*(kernel-1) - 1)/stride) + 1."""
    span = k.add(k.mul(dilation, k.sub(kernel, 1)), 1)
    return k.add(k.floordiv(k.sub(k.add(size, pad), span), stride), 1)


def _patches(x: np.ndarray, kernel: Sequence[int], strides: Sequence[int],
             dilations: Sequence[int], out: Sequence[int]) -> np.ndarray:
    """Windows of a padded NCHW array as [N, C, KH*KW, OH, OW]."""
    (kh, kw), (sh, sw), (dh, dw), (oh, ow) = kernel, strides, dilations, out
    windows = [
        x[:, :, i * dh : i * dh + sh * (oh - 1) + 1 : sh, j * dw : j * dw + sw * (ow - 1) + 1 : sw]
        for i in range(kh)
        for j in range(kw)
    ]
    return np.stack(windows, axis=2)


def _pad_nchw(x: np.ndarray, pads: Sequence[int], value: float = 0.0) -> np.ndarray:
    top, left, bottom, right = pads
    return np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)), constant_values=value)


class _WindowOp(GraphOp):
    """Shared properties of sliding-window ops (strides, padding, dilations)."""

    strides = prop_def(_I64_ARRAY, default_value=i64_array([1, 1]))
    padding = prop_def(_I64_ARRAY, default_value=i64_array([0, 0, 0, 0]))
    dilations = prop_def(_I64_ARRAY, default_value=i64_array([1, 1]))
    irdl_options = (ParsePropInAttrDict(),)
    CLAMPS_READS: ClassVar[bool] = True

    def window(self) -> tuple[list[int], list[int], list[int]]:
        return (
            _ints(self.strides, 2, "strides", 1),
            _ints(self.padding, 4, "padding (top, left, bottom, right)", 0),
            _ints(self.dilations, 2, "dilations", 1),
        )

    def output_hw(self, k: DimAlgebra, h: Any, w: Any, kh: Any, kw: Any) -> list[Any]:
        strides, pads, dilations = self.window()
        oh = _window_out(k, h, pads[0] + pads[2], kh, strides[0], dilations[0])
        ow = _window_out(k, w, pads[1] + pads[3], kw, strides[1], dilations[1])
        for d in (oh, ow):
            if isinstance(d, int) and d < 1:
                raise ShapeError("the window does not fit in the padded input")
        return [oh, ow]


@irdl_op_definition
class Conv2dOp(_WindowOp):
    """2-D convolution, NCHW input, OIHW weight, optional per-channel bias.

    Example: `%y = graph.conv2d %x, %w {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : (tensor<?x3x?x?xf32>, tensor<64x3x3x3xf32>) -> tensor<?x64x?x?xf32>`
    """

    name = "graph.conv2d"
    input = operand_def(TensorType)
    weight = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    result = result_def(TensorType)
    groups = prop_def(IntegerAttr[I64], default_value=IntegerAttr(1, i64))
    assembly_format = (
        "$input `,` $weight (`,` $bias^)? attr-dict `:` functional-type(operands, results)"
    )
    traits = traits_def(Pure(), GraphFolder())
    FUSION: ClassVar[FusionKind] = FusionKind.OUT_FUSABLE
    SHARES_GROUP: ClassVar[bool] = False

    def shape_function(self, k: DimAlgebra) -> list[list[Any]]:
        x, w = k.dims(self.input), k.dims(self.weight)
        if len(x) != 4 or len(w) != 4:
            raise ShapeError("input and weight must have rank 4 (NCHW, OIHW)")
        groups = self.groups.value.data
        if groups < 1:
            raise ShapeError("groups must be >= 1")
        k.equal(x[1], k.mul(w[1], groups), "input channels differ from weight dim 1 * groups")
        if isinstance(w[0], int) and w[0] % groups:
            raise ShapeError(f"output channels {w[0]} are not divisible by groups {groups}")
        if self.bias is not None:
            b = k.dims(self.bias)
            if len(b) != 1:
                raise ShapeError("bias must have rank 1")
            k.equal(b[0], w[0], "bias size differs from output channels")
        return [[x[0], w[0], *self.output_hw(k, x[2], x[3], w[2], w[3])]]

    def result_element_types(self) -> list[Attribute]:
        return _float_elements(self)

    def reference(self, x: Any, w: Any, bias: Any = None) -> Sequence[Any]:
        strides, pads, dilations = self.window()
        groups = self.groups.value.data
        n, _, _, _ = x.shape
        o, cg, kh, kw = w.shape
        out = self.result_shape(x, w)
        cols = _patches(_pad_nchw(x.astype(np.float64), pads), (kh, kw), strides, dilations, out)
        cols = cols.reshape(n, groups, cg, kh * kw, *out)
        wg = w.astype(np.float64).reshape(groups, o // groups, cg, kh * kw)
        y = np.einsum("ngckhw,gock->ngohw", cols, wg).reshape(n, o, *out)
        if bias is not None:
            y = y + bias.reshape(1, o, 1, 1)
        return [as_tensor(y, self.result.type.element_type)]

    def result_shape(self, x: np.ndarray, w: np.ndarray) -> list[int]:
        return self.output_hw(StaticDims(), x.shape[2], x.shape[3], w.shape[2], w.shape[3])


class _PoolOp(_WindowOp, UnaryTensorOp):
    kernel = prop_def(_I64_ARRAY)
    traits = traits_def(Pure(), GraphFolder())
    FUSION: ClassVar[FusionKind] = FusionKind.OUT_FUSABLE

    def shape_function(self, k: DimAlgebra) -> list[list[Any]]:
        x = k.dims(self.input)
        if len(x) != 4:
            raise ShapeError("input must have rank 4 (NCHW)")
        kh, kw = _ints(self.kernel, 2, "kernel", 1)
        return [[x[0], x[1], *self.output_hw(k, x[2], x[3], kh, kw)]]

    def result_element_types(self) -> list[Attribute]:
        return _float_elements(self)

    def pooled(self, x: np.ndarray, pad_value: float) -> np.ndarray:
        strides, pads, dilations = self.window()
        kernel = _ints(self.kernel, 2, "kernel", 1)
        out = self.output_hw(StaticDims(), x.shape[2], x.shape[3], *kernel)
        return _patches(_pad_nchw(x, pads, pad_value), kernel, strides, dilations, out)


@irdl_op_definition
class MaxPool2dOp(_PoolOp):
    """2-D max pooling over NCHW; padding never wins the max.

    Example: `%y = graph.max_pool2d %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : tensor<1x64x112x112xf32> -> tensor<1x64x56x56xf32>`
    """

    name = "graph.max_pool2d"

    def reference(self, x: Any) -> Sequence[Any]:
        return [as_tensor(self.pooled(x, -np.inf).max(axis=2), self.result.type.element_type)]


@irdl_op_definition
class AvgPool2dOp(_PoolOp):
    """2-D average pooling over NCHW; padded cells are excluded from the count unless
    `count_include_pad`.

    Example: `%y = graph.avg_pool2d %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<?x8x?x?xf32> -> tensor<?x8x?x?xf32>`
    """

    name = "graph.avg_pool2d"
    count_include_pad = prop_def(BoolAttr, default_value=IntegerAttr(0, i1))

    def reference(self, x: Any) -> Sequence[Any]:
        total = self.pooled(x.astype(np.float64), 0.0).sum(axis=2)
        if self.count_include_pad.value.data:
            count = float(np.prod(list(self.kernel.get_values())))
        else:
            ones = np.ones((1, 1, *x.shape[2:]))
            count = self.pooled(ones, 0.0).sum(axis=2)
        return [as_tensor(total / count, self.result.type.element_type)]


@irdl_op_definition
class GlobalAvgPool2dOp(UnaryTensorOp):
    """Mean over H and W of an NCHW tensor, keeping them as 1x1.

    Example: `%y = graph.global_avg_pool2d %x : tensor<?x512x?x?xf32> -> tensor<?x512x1x1xf32>`
    """

    name = "graph.global_avg_pool2d"
    traits = traits_def(Pure(), GraphFolder())
    FUSION: ClassVar[FusionKind] = FusionKind.REDUCTION

    def shape_function(self, k: DimAlgebra) -> list[list[Any]]:
        x = k.dims(self.input)
        if len(x) != 4:
            raise ShapeError("input must have rank 4 (NCHW)")
        return [[x[0], x[1], 1, 1]]

    def result_element_types(self) -> list[Attribute]:
        return _float_elements(self)

    def reference(self, x: Any) -> Sequence[Any]:
        y = x.astype(np.float64).mean(axis=(2, 3), keepdims=True)
        return [as_tensor(y, self.result.type.element_type)]


_EPSILON = FloatAttr(1e-5, f64)


@irdl_op_definition
class BatchNormOp(GraphOp):
    """Inference batch normalisation over channel dim 1:
    `(x - mean) / sqrt(var + epsilon) * scale + bias`.

    Example: `%y = graph.batch_norm %x, %scale, %bias, %mean, %var {epsilon = 1.0e-05 : f64} : (tensor<?x64x?x?xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<?x64x?x?xf32>`
    """

    name = "graph.batch_norm"
    input = operand_def(TensorType)
    scale = operand_def(TensorType)
    bias = operand_def(TensorType)
    mean = operand_def(TensorType)
    variance = operand_def(TensorType)
    result = result_def(TensorType)
    epsilon = prop_def(FloatAttr, default_value=_EPSILON)
    assembly_format = "operands attr-dict `:` functional-type(operands, results)"
    irdl_options = (ParsePropInAttrDict(),)
    traits = traits_def(Pure(), GraphFolder())
    FUSION: ClassVar[FusionKind] = FusionKind.ELEMENTWISE

    def shape_function(self, k: DimAlgebra) -> list[list[Any]]:
        x = k.dims(self.input)
        if len(x) < 2:
            raise ShapeError("input must have rank >= 2")
        for name, v in (("scale", self.scale), ("bias", self.bias), ("mean", self.mean), ("variance", self.variance)):
            d = k.dims(v)
            if len(d) != 1:
                raise ShapeError(f"{name} must have rank 1")
            k.equal(d[0], x[1], f"{name} size differs from the channel dim")
        return [x]

    def result_element_types(self) -> list[Attribute]:
        return _float_elements(self)

    def reference(self, x: Any, scale: Any, bias: Any, mean: Any, var: Any) -> Sequence[Any]:
        shape = (1, -1) + (1,) * (x.ndim - 2)
        inv = 1.0 / np.sqrt(var.astype(np.float64) + self.epsilon.value.data)
        y = (x - mean.reshape(shape)) * (inv * scale).reshape(shape) + bias.reshape(shape)
        return [as_tensor(y, self.result.type.element_type)]


@irdl_op_definition
class LayerNormOp(GraphOp):
    """Normalise over dims `axis..rank-1`, then scale and (optionally) shift; scale and
    bias are shaped like those dims.

    Example: `%y = graph.layer_norm %x, %g, %b {axis = -1 : i64} : (tensor<?x768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<?x768xf32>`
    """

    name = "graph.layer_norm"
    input = operand_def(TensorType)
    scale = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    result = result_def(TensorType)
    axis = prop_def(IntegerAttr[I64], default_value=IntegerAttr(-1, i64))
    epsilon = prop_def(FloatAttr, default_value=_EPSILON)
    assembly_format = "operands attr-dict `:` functional-type(operands, results)"
    irdl_options = (ParsePropInAttrDict(),)
    traits = traits_def(Pure(), GraphFolder())
    FUSION: ClassVar[FusionKind] = FusionKind.REDUCTION

    def first_axis(self) -> int:
        return normalize_axis(self.axis.value.data, len(self.input.type.get_shape()))

    def shape_function(self, k: DimAlgebra) -> list[list[Any]]:
        x = k.dims(self.input)
        normalized = x[self.first_axis():]
        for name, v in (("scale", self.scale), ("bias", self.bias)):
            if v is None:
                continue
            d = k.dims(v)
            if len(d) != len(normalized):
                raise ShapeError(f"{name} must have rank {len(normalized)}")
            for a, b in zip(d, normalized):
                k.equal(a, b, f"{name} shape differs from the normalised dims")
        return [x]

    def result_element_types(self) -> list[Attribute]:
        return _float_elements(self)

    def reference(self, x: Any, scale: Any, bias: Any = None) -> Sequence[Any]:
        axes = tuple(range(self.first_axis(), x.ndim))
        x64 = x.astype(np.float64)
        mean = x64.mean(axis=axes, keepdims=True)
        var = ((x64 - mean) ** 2).mean(axis=axes, keepdims=True)
        y = (x64 - mean) / np.sqrt(var + self.epsilon.value.data) * scale
        if bias is not None:
            y = y + bias
        return [as_tensor(y, self.result.type.element_type)]


@irdl_op_definition
class SoftmaxOp(UnaryTensorOp):
    """Softmax along `axis` (default the last), computed stably.

    Example: `%p = graph.softmax %x {axis = -1 : i64} : tensor<?x?xf32> -> tensor<?x?xf32>`
    """

    name = "graph.softmax"
    axis = prop_def(IntegerAttr[I64], default_value=IntegerAttr(-1, i64))
    irdl_options = (ParsePropInAttrDict(),)
    traits = traits_def(Pure(), GraphFolder())
    FUSION: ClassVar[FusionKind] = FusionKind.REDUCTION

    def shape_function(self, k: DimAlgebra) -> list[list[Any]]:
        x = k.dims(self.input)
        normalize_axis(self.axis.value.data, len(x))
        return [x]

    def result_element_types(self) -> list[Attribute]:
        return _float_elements(self)

    def reference(self, x: Any) -> Sequence[Any]:
        axis = normalize_axis(self.axis.value.data, x.ndim)
        shifted = x.astype(np.float64) - x.max(axis=axis, keepdims=True, initial=-np.inf)
        e = np.exp(shifted)
        return [as_tensor(e / e.sum(axis=axis, keepdims=True), self.result.type.element_type)]
