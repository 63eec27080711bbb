"""Data-movement operators: reshape, transpose, concat, split, gather, broadcast_to,
squeeze, unsqueeze. (slice, with its numpy-style syntax, lives in `slice.py`.)"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
from xdsl.dialects.builtin import DenseArrayBase, I64, IntegerAttr, TensorType, i64
from xdsl.ir import Attribute
from xdsl.irdl import (
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern
from xdsl.traits import HasCanonicalizationPatternsTrait, Pure

from nimble.dialects.interfaces import FusionKind
from nimble.dialects.graph.base import (
    LAYOUT_FOLD_LIMIT,
    GraphOp,
    as_tensor,
    broadcast_dims,
    normalize_axes,
    normalize_axis,
)
from nimble.dialects.graph.folding import GraphFolder
from nimble.dialects.graph.types import is_float
from nimble.dialects.dynshape import ShapeType
from nimble.dialects.shape_functions import DimAlgebra, ShapeError, StaticDims

_I64_ARRAY = DenseArrayBase.constr(i64)


def _reshaped(k: DimAlgebra, source: list[Any], target: list[Any]) -> list[Any]:
    """Check that `target` (with at most one -1) holds as many elements as `source`."""
    numel = k.product(source)
    holes = [i for i, d in enumerate(target) if isinstance(d, int) and d == -1]
    if len(holes) > 1:
        raise ShapeError("at most one target dim may be -1")
    if any(isinstance(d, int) and d < -1 for d in target):
        raise ShapeError(f"negative target dim in {target}")
    if not holes:
        k.equal(k.product(target), numel, "reshape changes the number of elements")
        return target
    known = k.product([d for i, d in enumerate(target) if i != holes[0]])
    if known == 0:
        raise ShapeError("cannot infer the -1 dim next to a zero dim")
    inferred = k.floordiv(numel, known)
    k.equal(k.mul(inferred, known), numel, "reshape changes the number of elements")
    return [inferred if i == holes[0] else d for i, d in enumerate(target)]


class _ReshapeCanonicalization(HasCanonicalizationPatternsTrait):
    @classmethod
    def get_canonicalization_patterns(cls) -> tuple[RewritePattern, ...]:
        return (ReshapeOfReshape(), NoOpReshape())


class _TransposeCanonicalization(HasCanonicalizationPatternsTrait):
    @classmethod
    def get_canonicalization_patterns(cls) -> tuple[RewritePattern, ...]:
        return (TransposeOfTranspose(),)


@irdl_op_definition
class ReshapeOp(GraphOp):
    """Reshape to a static target; one dim may be -1 (inferred from the element count).

    Example: `%y = graph.reshape %x [-1, 64] : tensor<?x8x8xf32> -> tensor<?x64xf32>`
    """

    name = "graph.reshape"
    input = operand_def(TensorType)
    shape = prop_def(_I64_ARRAY)
    result = result_def(TensorType)
    assembly_format = "$input $shape attr-dict `:` type($input) `->` type($result)"
    traits = traits_def(Pure(), GraphFolder(), _ReshapeCanonicalization())
    FUSION: ClassVar[FusionKind] = FusionKind.VIEW
    FOLD_LIMIT: ClassVar[int] = LAYOUT_FOLD_LIMIT
    POSITIONAL_PROPERTIES: ClassVar[tuple[str, ...]] = ("shape",)

    def shape_function(self, k: DimAlgebra) -> list[list[Any]]:
        return [_reshaped(k, k.dims(self.input), list(self.shape.get_values()))]

    def reference(self, x: Any) -> Sequence[Any]:
        target = _reshaped(StaticDims(), list(x.shape), list(self.shape.get_values()))
        return [np.reshape(x, target)]


@irdl_op_definition
class DynamicReshapeOp(GraphOp):
    """Reshape to a shape computed at run time.

    Example: `%y = graph.dynamic_reshape %x, %s : (tensor<?xf32>, !dynshape.shape<2>) -> tensor<?x?xf32>`
    """

    name = "graph.dynamic_reshape"
    input = operand_def(TensorType)
    shape = operand_def(ShapeType)
    result = result_def(TensorType)
    assembly_format = "$input `,` $shape attr-dict `:` functional-type(operands, results)"
    traits = traits_def(Pure())
    FUSION: ClassVar[FusionKind] = FusionKind.VIEW

    def shape_function(self, k: DimAlgebra) -> list[list[Any]]:
        # The result type's static dims are what its users (a kernel's loops) assume
        # (none yet while the result type is being inferred).
        dims = _reshaped(k, k.dims(self.input), k.shape(self.shape))
        if not isinstance(result := self.result.type, TensorType):
            return [dims]
        return [[d if s < 0 else k.equal(d, s, f"target dim {i} is not the result type's")
                 for i, (d, s) in enumerate(zip(dims, result.get_shape()))]]

    def reference(self, x: Any, shape: Any) -> Sequence[Any]:
        if int(np.prod(shape)) != x.size:
            raise ValueError(f"cannot reshape {x.shape} to {tuple(shape)}")
        return [as_tensor(np.reshape(x, shape), self.result.type.element_type)]


@irdl_op_definition
class TransposeOp(GraphOp):
    """Permute dims: result dim i is input dim `perm[i]`.

    Example: `%y = graph.transpose %x [0, 2, 1] : tensor<?x4x8xf32> -> tensor<?x8x4xf32>`
    """

    name = "graph.transpose"
    input = operand_def(TensorType)
    perm = prop_def(_I64_ARRAY)
    result = result_def(TensorType)
    assembly_format = "$input $perm attr-dict `:` type($input) `->` type($result)"
    traits = traits_def(Pure(), GraphFolder(), _TransposeCanonicalization())
    FUSION: ClassVar[FusionKind] = FusionKind.PERMUTE
    FOLD_LIMIT: ClassVar[int] = LAYOUT_FOLD_LIMIT
    POSITIONAL_PROPERTIES: ClassVar[tuple[str, ...]] = ("perm",)

    def shape_function(self, k: DimAlgebra) -> list[list[Any]]:
        x = k.dims(self.input)
        perm = list(self.perm.get_values())
        if sorted(perm) != list(range(len(x))):
            raise ShapeError(f"perm {perm} is not a permutation of the {len(x)} dims")
        return [[x[p] for p in perm]]

    def reference(self, x: Any) -> Sequence[Any]:
        return [np.transpose(x, list(self.perm.get_values()))]


@irdl_op_definition
class ConcatOp(GraphOp):
    """Join tensors along `axis`; all other dims must agree.

    Example: `%y = graph.concat %a, %b {axis = 1 : i64} : (tensor<?x256xf32>, tensor<?x256xf32>) -> tensor<?x512xf32>`
    """

    name = "graph.concat"
    inputs = var_operand_def(TensorType)
    result = result_def(TensorType)
    axis = prop_def(IntegerAttr[I64], default_value=IntegerAttr(0, i64))
    assembly_format = "$inputs attr-dict `:` functional-type($inputs, $result)"
    irdl_options = (ParsePropInAttrDict(),)
    traits = traits_def(Pure(), GraphFolder())
    FUSION: ClassVar[FusionKind] = FusionKind.INJECTIVE
    CLAMPS_READS: ClassVar[bool] = True  # per element (not as a kernel's output: part by part)

    def shape_function(self, k: DimAlgebra) -> list[list[Any]]:
        if not self.inputs:
            raise ShapeError("needs at least one input")
        shapes = [k.dims(v) for v in self.inputs]
        rank = len(shapes[0])
        if any(len(s) != rank for s in shapes):
            raise ShapeError("inputs must have the same rank")
        axis = normalize_axis(self.axis.value.data, rank)
        result = list(shapes[0])
        for s in shapes[1:]:
            for i in range(rank):
                if i == axis:
                    result[i] = k.add(result[i], s[i])
                else:
                    result[i] = k.equal(result[i], s[i], f"inputs differ in dim {i}")
        return [result]

    def result_element_types(self) -> list[Attribute]:
        elements = {v.type.element_type for v in self.inputs}
        if len(elements) != 1:
            raise ShapeError("inputs must have the same element type")
        return [self.inputs[0].type.element_type]

    def reference(self, *xs: Any) -> Sequence[Any]:
        axis = normalize_axis(self.axis.value.data, xs[0].ndim)
        return [np.concatenate(xs, axis=axis)]


@irdl_op_definition
class SplitOp(GraphOp):
    """Split along `axis`, into given `sizes` or into `num` equal parts.

    Example: `%i, %f, %o, %g = graph.split %x {axis = 1 : i64, num = 4 : i64} : tensor<?x1024xf32> -> (tensor<?x256xf32>, tensor<?x256xf32>, tensor<?x256xf32>, tensor<?x256xf32>)`
    """

    name = "graph.split"
    input = operand_def(TensorType)
    outputs = var_result_def(TensorType)
    axis = prop_def(IntegerAttr[I64], default_value=IntegerAttr(0, i64))
    sizes = opt_prop_def(_I64_ARRAY)
    num = opt_prop_def(IntegerAttr[I64])
    assembly_format = "$input attr-dict `:` type($input) `->` `(` type($outputs) `)`"
    irdl_options = (ParsePropInAttrDict(),)
    traits = traits_def(Pure(), GraphFolder())
    FUSION: ClassVar[FusionKind] = FusionKind.INJECTIVE

    @classmethod
    def result_count(cls, properties: dict[str, Attribute]) -> int:
        if "num" in properties:
            return max(properties["num"].value.data, 0)
        if "sizes" in properties:
            return len(properties["sizes"])
        return 1

    def part_sizes(self, k: DimAlgebra, dim: Any) -> list[Any]:
        if (self.sizes is None) == (self.num is None):
            raise ShapeError("exactly one of 'sizes' and 'num' must be given")
        if self.sizes is not None:
            sizes = list(self.sizes.get_values())
            if any(s < 0 for s in sizes):
                raise ShapeError(f"sizes must be >= 0, got {sizes}")
            k.equal(sum(sizes), dim, "sizes do not add up to the split dim")
            return sizes
        num = self.num.value.data
        if num < 1:
            raise ShapeError("num must be >= 1")
        part = k.floordiv(dim, num)
        k.equal(k.mul(part, num), dim, f"split dim is not divisible by {num}")
        return [part] * num

    def shape_function(self, k: DimAlgebra) -> list[list[Any]]:
        x = k.dims(self.input)
        axis = normalize_axis(self.axis.value.data, len(x))
        return [[p if i == axis else d for i, d in enumerate(x)] for p in self.part_sizes(k, x[axis])]

    def reference(self, x: Any) -> Sequence[Any]:
        axis = normalize_axis(self.axis.value.data, x.ndim)
        if self.sizes is not None:
            bounds = np.cumsum(list(self.sizes.get_values()))[:-1]
            return list(np.split(x, bounds, axis=axis))
        if x.shape[axis] % self.num.value.data:
            raise ValueError(f"dim {x.shape[axis]} is not divisible by {self.num.value.data}")
        return list(np.split(x, self.num.value.data, axis=axis))


@irdl_op_definition
class GatherOp(GraphOp):
    """Take slices of `input` along `axis` at integer `indices` (negative counts from the
    end): the result shape is `input[:axis] + indices + input[axis+1:]`.

    Example: `%e = graph.gather %table, %ids {axis = 0 : i64} : (tensor<30522x768xf32>, tensor<?xi64>) -> tensor<?x768xf32>`
    """

    name = "graph.gather"
    input = operand_def(TensorType)
    indices = operand_def(TensorType)
    result = result_def(TensorType)
    axis = prop_def(IntegerAttr[I64], default_value=IntegerAttr(0, i64))
    assembly_format = "$input `,` $indices attr-dict `:` functional-type(operands, results)"
    irdl_options = (ParsePropInAttrDict(),)
    CLAMPS_READS: ClassVar[bool] = True
    traits = traits_def(Pure(), GraphFolder())
    FUSION: ClassVar[FusionKind] = FusionKind.INJECTIVE

    def shape_function(self, k: DimAlgebra) -> list[list[Any]]:
        x, idx = k.dims(self.input), k.dims(self.indices)
        axis = normalize_axis(self.axis.value.data, len(x))
        if is_float(self.indices.type.element_type):
            raise ShapeError("indices must be integers")
        return [x[:axis] + idx + x[axis + 1 :]]

    def result_element_types(self) -> list[Attribute]:
        return [self.input.type.element_type]

    def reference(self, x: Any, indices: Any) -> Sequence[Any]:
        axis = normalize_axis(self.axis.value.data, x.ndim)
        n = x.shape[axis]
        if np.any((indices < -n) | (indices >= n)):
            raise IndexError(f"gather index out of range for dim of size {n}")
        return [np.take(x, np.where(indices < 0, indices + n, indices), axis=axis)]


@irdl_op_definition
class GatherElementsOp(GraphOp):
    """Pick one element of `input` per element of `indices` along `axis`:
    `result[i][j] = input[indices[i][j]][j]` for axis 0 (negative indices count from the
    end). `indices` has the input's rank and its dims off `axis` (this op requires them
    equal; ONNX and PyTorch also allow smaller); the result has the indices' shape.

    Example: `%y = graph.gather_elements %x, %idx {axis = 1 : i64} : (tensor<?x5xf32>, tensor<?x2xi64>) -> tensor<?x2xf32>`
    """

    name = "graph.gather_elements"
    input = operand_def(TensorType)
    indices = operand_def(TensorType)
    result = result_def(TensorType)
    axis = prop_def(IntegerAttr[I64], default_value=IntegerAttr(0, i64))
    assembly_format = "$input `,` $indices attr-dict `:` functional-type(operands, results)"
    irdl_options = (ParsePropInAttrDict(),)
    CLAMPS_READS: ClassVar[bool] = True
    traits = traits_def(Pure(), GraphFolder())
    FUSION: ClassVar[FusionKind] = FusionKind.INJECTIVE

    def shape_function(self, k: DimAlgebra) -> list[list[Any]]:
        x, idx = k.dims(self.input), k.dims(self.indices)
        if is_float(self.indices.type.element_type):
            raise ShapeError("indices must be integers")
        if len(x) != len(idx):
            raise ShapeError(f"indices must have the input's rank {len(x)}, not {len(idx)}")
        axis = normalize_axis(self.axis.value.data, len(x))
        return [[m if a == axis else k.equal(m, n, f"indices dim {a} must equal the input's")
                 for a, (n, m) in enumerate(zip(x, idx))]]

    def result_element_types(self) -> list[Attribute]:
        return [self.input.type.element_type]

    def reference(self, x: Any, indices: Any) -> Sequence[Any]:
        axis = normalize_axis(self.axis.value.data, x.ndim)
        n = x.shape[axis]
        if np.any((indices < -n) | (indices >= n)):
            raise IndexError(f"gather_elements index out of range for dim of size {n}")
        return [np.take_along_axis(x, np.where(indices < 0, indices + n, indices).astype(np.int64), axis=axis)]


@irdl_op_definition
class BroadcastToOp(GraphOp):
    """Broadcast to a shape computed at run time (numpy rules).

    Example: `%y = graph.broadcast_to %x, %s : (tensor<1x?xf32>, !dynshape.shape<2>) -> tensor<?x?xf32>`
    """

    name = "graph.broadcast_to"
    input = operand_def(TensorType)
    shape = operand_def(ShapeType)
    result = result_def(TensorType)
    assembly_format = "$input `,` $shape attr-dict `:` functional-type(operands, results)"
    traits = traits_def(Pure())
    FUSION: ClassVar[FusionKind] = FusionKind.INJECTIVE

    def shape_function(self, k: DimAlgebra) -> list[list[Any]]:
        x, target = k.dims(self.input), k.shape(self.shape)
        if len(x) > len(target):
            raise ShapeError(f"cannot broadcast rank {len(x)} to rank {len(target)}")
        merged = broadcast_dims(k, x, target)
        return [[k.equal(m, t, f"dim {i} cannot be broadcast to the target") for i, (m, t) in enumerate(zip(merged, target))]]

    def reference(self, x: Any, shape: Any) -> Sequence[Any]:
        return [np.broadcast_to(x, tuple(shape)).copy()]


class _AxesOp(GraphOp):
    """Shared declaration of squeeze and unsqueeze: a tensor and a list of axes."""

    input = operand_def(TensorType)
    axes = prop_def(_I64_ARRAY)
    result = result_def(TensorType)
    assembly_format = "$input $axes attr-dict `:` type($input) `->` type($result)"
    traits = traits_def(Pure(), GraphFolder())
    FUSION: ClassVar[FusionKind] = FusionKind.VIEW
    FOLD_LIMIT: ClassVar[int] = LAYOUT_FOLD_LIMIT
    POSITIONAL_PROPERTIES: ClassVar[tuple[str, ...]] = ("axes",)


@irdl_op_definition
class SqueezeOp(_AxesOp):
    """Remove the given dims, each of which must be 1.

    Example: `%y = graph.squeeze %x [1] : tensor<?x1x4xf32> -> tensor<?x4xf32>`
    """

    name = "graph.squeeze"

    def shape_function(self, k: DimAlgebra) -> list[list[Any]]:
        x = k.dims(self.input)
        axes = normalize_axes(list(self.axes.get_values()), len(x))
        for a in axes:
            k.equal(x[a], 1, f"squeezed dim {a} must be 1")
        return [[d for i, d in enumerate(x) if i not in axes]]

    def reference(self, x: Any) -> Sequence[Any]:
        axes = normalize_axes(list(self.axes.get_values()), x.ndim)
        return [np.squeeze(x, axis=tuple(axes))]


@irdl_op_definition
class UnsqueezeOp(_AxesOp):
    """Insert dims of size 1 at the given positions of the result.

    Example: `%y = graph.unsqueeze %x [0] : tensor<?x4xf32> -> tensor<1x?x4xf32>`
    """

    name = "graph.unsqueeze"

    def shape_function(self, k: DimAlgebra) -> list[list[Any]]:
        x = k.dims(self.input)
        rank = len(x) + len(self.axes)
        axes = normalize_axes(list(self.axes.get_values()), rank)
        rest = iter(x)
        return [[1 if i in axes else next(rest) for i in range(rank)]]

    def reference(self, x: Any) -> Sequence[Any]:
        rank = x.ndim + len(self.axes)
        axes = normalize_axes(list(self.axes.get_values()), rank)
        return [np.expand_dims(x, tuple(axes))]


# -- canonicalization -----------------------------------------------------------------


class ReshapeOfReshape(RewritePattern):
    """reshape(reshape(x)) -> reshape(x): only the last target matters (when the inner
    reshape cannot fail at run time)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ReshapeOp, rewriter: PatternRewriter) -> None:
        inner = op.input.owner
        # The inner reshape's element-count check is static only when its input is.
        if isinstance(inner, ReshapeOp) and inner.input.type.has_static_shape():
            rewriter.replace(
                op, ReshapeOp.create(operands=[inner.input], result_types=[op.result.type],
                                     properties={"shape": op.shape})
            )


class NoOpReshape(RewritePattern):
    """A reshape between identical static types does nothing."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ReshapeOp, rewriter: PatternRewriter) -> None:
        if op.input.type == op.result.type and op.result.type.has_static_shape():
            rewriter.replace(op, [], [op.input])


class TransposeOfTranspose(RewritePattern):
    """transpose(transpose(x, p), q) -> transpose(x, p[q]), or x when that is the identity."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: TransposeOp, rewriter: PatternRewriter) -> None:
        inner = op.input.owner
        if not isinstance(inner, TransposeOp):
            return
        p, q = list(inner.perm.get_values()), list(op.perm.get_values())
        composed = [p[i] for i in q]
        if composed == list(range(len(composed))) and inner.input.type == op.result.type:
            rewriter.replace(op, [], [inner.input])
            return
        rewriter.replace(
            op, TransposeOp.create(operands=[inner.input], result_types=[op.result.type],
                                   properties={"perm": DenseArrayBase.from_list(i64, composed)})
        )
