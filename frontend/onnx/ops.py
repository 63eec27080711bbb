"""Converters of ONNX tensor ops: one function per op type or family, and the table
`CONVERTERS` the importer reads. Ops the graph dialect lacks are composed of its ops."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import DYNAMIC_INDEX, i1
from xdsl.ir import Operation, SSAValue

from nimble.dialects import graph
from nimble.dialects.graph.slice import DYNAMIC, END
from nimble.frontend.onnx import activations, indexed, layout, linalg, shapes
from nimble.frontend.onnx.common import (
    OnnxImportError,
    dtype_of,
    element_types,
    onnx_package,
    rank_of,
    scalar,
)
from nimble.frontend.onnx.control import if_, loop, scan
from nimble.frontend.onnx.recurrent import gru, lstm, rnn

# ---------------------------------------------------------------------------------------
# Converters: (importer, node, inputs, attributes) -> outputs


Converter = Callable[[Any, Any, list[SSAValue | None], dict[str, Any]], list[SSAValue]]

_UNARY: dict[str, type[Operation]] = {
    "Abs": graph.AbsOp, "Neg": graph.NegOp, "Exp": graph.ExpOp, "Log": graph.LogOp, "Sqrt": graph.SqrtOp,
    "Tanh": graph.TanhOp, "Sigmoid": graph.SigmoidOp, "Relu": graph.ReluOp, "Erf": graph.ErfOp, "Not": graph.NotOp,
    "Floor": graph.FloorOp, "Ceil": graph.CeilOp, "Round": graph.RoundOp, "Sin": graph.SinOp, "Cos": graph.CosOp,
    "Tan": graph.TanOp, "Asin": graph.AsinOp, "Acos": graph.AcosOp, "Atan": graph.AtanOp, "Sinh": graph.SinhOp,
    "Cosh": graph.CoshOp, "Asinh": graph.AsinhOp, "Acosh": graph.AcoshOp, "Atanh": graph.AtanhOp,
    "IsNaN": graph.IsNanOp,
}
_BINARY: dict[str, type[Operation]] = {
    "Add": graph.AddOp, "Sub": graph.SubOp, "Mul": graph.MulOp, "Div": graph.DivOp,
    "And": graph.AndOp, "Or": graph.OrOp, "Equal": graph.EqualOp, "Less": graph.LessOp, "Greater": graph.GreaterOp,
}
_VARIADIC: dict[str, type[Operation]] = {"Max": graph.MaximumOp, "Min": graph.MinimumOp, "Sum": graph.AddOp}
_REDUCE: dict[str, type[Operation]] = {"ReduceSum": graph.ReduceSumOp, "ReduceMean": graph.ReduceMeanOp,
                                       "ReduceMax": graph.ReduceMaxOp, "ReduceMin": graph.ReduceMinOp,
                                       "ReduceProd": graph.ReduceProdOp}


def _unary(cls):
    return lambda b, n, xs, a: [b.op(cls, [xs[0]])]


def _binary(cls):
    return lambda b, n, xs, a: [b.op(cls, xs[:2])]


def _variadic(cls):
    def convert(b, n, xs, a):
        acc = xs[0]
        for x in xs[1:]:
            acc = b.op(cls, [acc, x])
        return [acc]
    return convert


def _pow(b, n, xs, a):
    base, exponent = xs[0], xs[1]
    if exponent.type.element_type != base.type.element_type:  # the result has the base's type
        exponent = b.op(graph.CastOp, [exponent], base.type.element_type)
    return [b.op(graph.PowOp, [base, exponent])]


def _identity(b, n, xs, a):
    return [xs[0]]


def _constant(b, n, xs, a):
    numpy_helper = onnx_package().numpy_helper
    if "value" in a:
        array = numpy_helper.to_array(a["value"])
    elif "value_float" in a:
        array = np.array(a["value_float"], np.float32)
    elif "value_int" in a:
        array = np.array(a["value_int"], np.int64)
    elif "value_floats" in a:
        array = np.array(a["value_floats"], np.float32)
    elif "value_ints" in a:
        array = np.array(a["value_ints"], np.int64)
    else:
        raise OnnxImportError(f"{b.where()}: only tensor, float(s) and int(s) values are supported")
    return [b.known(n.output[0], array)]


def _cast(b, n, xs, a):
    element = element_types().get(a["to"])
    if element is None:
        raise OnnxImportError(f"{b.where()}: cast to {onnx_package().TensorProto.DataType.Name(a['to'])} is not supported")
    return [b.op(graph.CastOp, [xs[0]], element)]


def _reciprocal(b, n, xs, a):
    one = b.const(np.array(1, dtype_of(xs[0])))
    return [b.op(graph.DivOp, [one, xs[0]])]


def _compare_or_equal(cls):
    """LessOrEqual / GreaterOrEqual: the strict comparison or equality."""
    def convert(b, n, xs, a):
        return [b.op(graph.OrOp, [b.op(cls, xs[:2]), b.op(graph.EqualOp, xs[:2])])]
    return convert


def _where(b, n, xs, a):
    return [b.op(graph.WhereOp, xs[:3])]


def _clip(b, n, xs, a):
    bounds = {}
    for key, x in (("min", xs[1] if len(xs) > 1 else None), ("max", xs[2] if len(xs) > 2 else None)):
        if x is not None:
            bounds[key] = float(b.static(n.input[1 if key == "min" else 2], f"Clip's {key}"))
    return [b.op(graph.ClipOp, [xs[0]], **bounds)]


def _leaky_relu(b, n, xs, a):
    x = xs[0]
    alpha = b.const(np.array(a.get("alpha", 0.01), dtype_of(x)))
    zero = b.const(np.array(0, dtype_of(x)))
    return [b.op(graph.WhereOp, [b.op(graph.GreaterOp, [x, zero]), x, b.op(graph.MulOp, [x, alpha])])]


def _gelu(b, n, xs, a):
    if a.get("approximate", b"none") not in (b"none", "none"):
        raise OnnxImportError(f"{b.where()}: only the exact Gelu is supported")
    return [b.op(graph.GeluOp, [xs[0]])]


def _window(b, a, kernel: Sequence[int]) -> dict[str, Any]:
    if len(kernel) != 2:
        raise OnnxImportError(f"{b.where()}: only 2-D windows are supported")
    if a.get("auto_pad", b"NOTSET") not in (b"NOTSET", "NOTSET", b"VALID", "VALID"):
        raise OnnxImportError(f"{b.where()}: auto_pad {a['auto_pad']!r} is not supported")
    strides, pads, dilations = list(a.get("strides", [1, 1])), list(a.get("pads", [0, 0, 0, 0])), \
        list(a.get("dilations", [1, 1]))
    if a.get("ceil_mode", 0):
        pads = _ceil_mode_pads(b, kernel, strides, pads, dilations)
    return {"strides": strides, "padding": pads, "dilations": dilations}


def _ceil_mode_pads(b, kernel: Sequence[int], strides: list[int], pads: list[int], dilations: list[int]) -> list[int]:
    """A pool's `ceil_mode=1` as `stride - 1` more padding at each axis's end: the output
    then has ceil((size + pads - window) / stride) + 1 positions, at any size, and the
    cells the windows overhang count as padding, which a max never takes and an average
    without `count_include_pad` does not count. Exact where no window can start in the
    end padding (whose windows ONNX Runtime and PyTorch drop): window >= end pad +
    stride (SqueezeNet's and GoogLeNet's 3 x 3 windows, stride 2 or 1, no padding)."""
    pads = list(pads)
    for axis, (k, s, d) in enumerate(zip(kernel, strides, dilations)):
        window = d * (k - 1) + 1
        if window < pads[axis + 2] + s:
            raise OnnxImportError(f"{b.where()}: ceil_mode=1 with a window ({window}) shorter than the end padding "
                                  f"({pads[axis + 2]}) plus the stride ({s}) is not supported")
        pads[axis + 2] += s - 1
    return pads


def _one_dimensional(convert: Converter) -> Converter:
    """A converter of 2-D windows that also takes 1-D ones (Whisper's and wav2vec2's
    convs over time): (N, C, L) as (N, C, 1, L), the window 1 high, then squeezed."""

    def converter(b, n, xs, a):
        if rank_of(xs[0]) != 3:
            return convert(b, n, xs, a)
        begin, end = a.get("pads", [0, 0])
        a = {**a, "strides": [1, *a.get("strides", [1])], "dilations": [1, *a.get("dilations", [1])],
             "pads": [0, begin, 0, end]}
        if "kernel_shape" in a:
            a["kernel_shape"] = [1, *a["kernel_shape"]]
        xs = list(xs)
        xs[0] = b.op(graph.UnsqueezeOp, [xs[0]], axes=[2])
        if n.op_type == "Conv":  # the weights (M, C / groups, K) too
            xs[1] = b.op(graph.UnsqueezeOp, [xs[1]], axes=[2])
        return [b.op(graph.SqueezeOp, [y], axes=[2]) for y in convert(b, n, xs, a)]

    return converter


def _conv(b, n, xs, a):
    w = xs[1]
    kernel = a.get("kernel_shape", w.type.get_shape()[2:])
    props = _window(b, a, kernel)
    operands = [xs[0], w] + ([xs[2]] if len(xs) > 2 and xs[2] is not None else [])
    return [b.op(graph.Conv2dOp, operands, groups=a.get("group", 1), **props)]


def _max_pool(b, n, xs, a):
    if len(n.output) > 1 and n.output[1]:
        raise OnnxImportError(f"{b.where()}: the Indices output is not supported")
    return [b.op(graph.MaxPool2dOp, [xs[0]], kernel=list(a["kernel_shape"]), **_window(b, a, a["kernel_shape"]))]


def _avg_pool(b, n, xs, a):
    props = _window(b, a, a["kernel_shape"])
    include_pad = bool(a.get("count_include_pad", 0))
    if a.get("ceil_mode", 0) and include_pad:
        if any(a.get("pads", [0, 0, 0, 0])):
            raise OnnxImportError(f"{b.where()}: ceil_mode=1 with count_include_pad=1 and padding is not supported")
        include_pad = False  # (no padding to count; the cells the windows overhang are not counted either way)
    return [b.op(graph.AvgPool2dOp, [xs[0]], kernel=list(a["kernel_shape"]), count_include_pad=include_pad, **props)]


def _global_avg_pool(b, n, xs, a):
    return [b.op(graph.GlobalAvgPool2dOp, [xs[0]])]


def _global_max_pool(b, n, xs, a):
    """The max over every spatial dim, kept as 1s: a reduce_max (any rank from 3)."""
    rank = rank_of(xs[0])
    if rank < 3:
        raise OnnxImportError(f"{b.where()}: the input must have rank >= 3 (N, C, spatial dims)")
    return [b.op(graph.ReduceMaxOp, [xs[0]], axes=list(range(2, rank)), keepdims=True)]


def _mean(b, n, xs, a):
    """The inputs' sum (broadcast together) over their count."""
    (total,) = _variadic(graph.AddOp)(b, n, xs, a)
    return [b.op(graph.DivOp, [total, scalar(b, float(len(xs)), total)])]


def _batch_norm(b, n, xs, a):
    if a.get("training_mode", 0):
        raise OnnxImportError(f"{b.where()}: training mode is not supported")
    return [b.op(graph.BatchNormOp, xs[:5], epsilon=float(a.get("epsilon", 1e-5)))]


def _instance_norm(b, n, xs, a):
    """Each (sample, channel) normalised over its spatial dims, then the channel's scale
    and bias: mean and variance as reductions (what layer_norm computes, with the affine
    per channel instead of per normalised element); one fusion group."""
    x, scale, bias = xs[:3]
    rank = rank_of(x)
    if rank < 3:
        raise OnnxImportError(f"{b.where()}: the input must have rank >= 3 (N, C, spatial dims)")
    axes, per_channel = list(range(2, rank)), [-1] + [1] * (rank - 2)
    mean = b.op(graph.ReduceMeanOp, [x], axes=axes, keepdims=True)
    centred = b.op(graph.SubOp, [x, mean])
    variance = b.op(graph.ReduceMeanOp, [b.op(graph.MulOp, [centred, centred])], axes=axes, keepdims=True)
    epsilon = scalar(b, float(a.get("epsilon", 1e-5)), x)
    normal = b.op(graph.MulOp, [centred, b.op(graph.RsqrtOp, [b.op(graph.AddOp, [variance, epsilon])])])
    scale, bias = (shapes.reshape(b, v, per_channel) for v in (scale, bias))
    return [b.op(graph.AddOp, [b.op(graph.MulOp, [normal, scale]), bias])]


def _group_norm(b, n, xs, a):
    """Groups of channels normalised over their channels and spatial dims together, then
    each channel's scale and bias (opset 21: onnx's checker refuses opset 18's, whose
    scale and bias were per group): the function body's computation, on the graph
    dialect's reductions."""
    x, scale, bias = xs[:3]
    rank, groups = rank_of(x), int(a.get("num_groups", 0))
    channels = x.type.get_shape()[1] if rank >= 3 else -1
    if groups < 1 or channels < 0 or channels % groups:
        raise OnnxImportError(f"{b.where()}: needs an input of rank >= 3 whose channel count is known and a "
                              f"multiple of num_groups ({groups})")
    grouped = shapes.reshape(b, x, [0, groups, -1])
    mean = b.op(graph.ReduceMeanOp, [grouped], axes=[2], keepdims=True)
    centred = b.op(graph.SubOp, [grouped, mean])
    variance = b.op(graph.ReduceMeanOp, [b.op(graph.MulOp, [centred, centred])], axes=[2], keepdims=True)
    epsilon = scalar(b, float(a.get("epsilon", 1e-5)), x)
    normal = b.op(graph.MulOp, [centred, b.op(graph.RsqrtOp, [b.op(graph.AddOp, [variance, epsilon])])])
    per_channel = [-1] + [1] * (rank - 2)
    normal = shapes.reshape(b, normal, shapes.dims_of(b, x))
    return [b.op(graph.AddOp, [b.op(graph.MulOp, [normal, shapes.reshape(b, scale, per_channel)]),
                               shapes.reshape(b, bias, per_channel)])]


def _softmax(b, n, xs, a):
    return [b.op(graph.SoftmaxOp, [xs[0]], axis=a.get("axis", -1))]


def _layer_norm(b, n, xs, a):
    x, scale = xs[0], xs[1]
    axis, epsilon = a.get("axis", -1), float(a.get("epsilon", 1e-5))
    bias = xs[2] if len(xs) > 2 and xs[2] is not None else b.const(np.zeros(scale.type.get_shape(), dtype_of(x)))
    y = b.op(graph.LayerNormOp, [x, scale, bias], axis=axis, epsilon=epsilon)
    if len(n.output) == 1 or not any(n.output[1:]):
        return [y]
    # The optional Mean and InvStdDev outputs (over the normalised dims, kept as 1s).
    rank = rank_of(x)
    axes = list(range(axis % rank, rank))
    mean = b.op(graph.ReduceMeanOp, [x], axes=axes, keepdims=True)
    centred = b.op(graph.SubOp, [x, mean])
    variance = b.op(graph.ReduceMeanOp, [b.op(graph.MulOp, [centred, centred])], axes=axes, keepdims=True)
    eps = b.const(np.array(epsilon, dtype_of(x)))
    return [y, mean, b.op(graph.RsqrtOp, [b.op(graph.AddOp, [variance, eps])])]


def _reshape(b, n, xs, a):
    target = [int(d) for d in b.static(n.input[1], "the target shape")]
    return [shapes.reshape(b, xs[0], target, bool(a.get("allowzero", 0)))]


def _flatten(b, n, xs, a):
    shape_ = xs[0].type.get_shape()
    axis = a.get("axis", 1)
    axis = axis + len(shape_) if axis < 0 else axis
    head, tail = shape_[:axis], shape_[axis:]
    inner = int(np.prod(tail)) if all(d >= 0 for d in tail) else -1
    outer = int(np.prod(head)) if all(d >= 0 for d in head) else -1
    if inner < 0 and outer < 0:
        raise OnnxImportError(f"{b.where()}: both sides of the flatten axis have unknown dims")
    return [b.op(graph.ReshapeOp, [xs[0]], shape=[outer, inner])]


def _transpose(b, n, xs, a):
    perm = list(a.get("perm", range(rank_of(xs[0]) - 1, -1, -1)))
    return [b.op(graph.TransposeOp, [xs[0]], perm=perm)]


def _concat(b, n, xs, a):
    return [b.op(graph.ConcatOp, [x for x in xs if x is not None], axis=a["axis"])]


def _ints(b, n, a, key: str, index: int, what: str) -> list[int] | None:
    """A list of ints an op takes as attribute `key` (older opsets) or as constant input
    `index` (newer ones); None if neither is given (or the input is empty)."""
    if key in a:
        return [int(x) for x in a[key]]
    if len(n.input) > index and n.input[index]:
        values = [int(x) for x in b.static(n.input[index], what)]
        return values or None
    return None


def _squeeze(b, n, xs, a):
    axes = _ints(b, n, a, "axes", 1, "Squeeze's axes")
    if axes is None:
        shape_ = xs[0].type.get_shape()
        if any(d < 0 for d in shape_):
            raise OnnxImportError(f"{b.where()}: Squeeze without axes needs every dim known")
        axes = [i for i, d in enumerate(shape_) if d == 1]
    rank = rank_of(xs[0])
    return [b.op(graph.SqueezeOp, [xs[0]], axes=sorted(x % rank for x in axes))]


def _unsqueeze(b, n, xs, a):
    axes = _ints(b, n, a, "axes", 1, "Unsqueeze's axes")
    rank = rank_of(xs[0]) + len(axes)
    return [b.op(graph.UnsqueezeOp, [xs[0]], axes=sorted(x % rank for x in axes))]


def _split(b, n, xs, a):
    axis = a.get("axis", 0)
    sizes = _ints(b, n, a, "split", 1, "Split's sizes")
    if sizes is not None:
        return b.op(graph.SplitOp, [xs[0]], axis=axis, sizes=sizes) if len(sizes) > 1 else [xs[0]]
    count = a.get("num_outputs", len(n.output))
    dim = xs[0].type.get_shape()[axis] if -rank_of(xs[0]) <= axis < rank_of(xs[0]) else -1
    if dim >= 0 and dim % count:  # (opset 18: the last part smaller)
        part = -(-dim // count)
        return b.op(graph.SplitOp, [xs[0]], axis=axis, sizes=[part] * (count - 1) + [dim - part * (count - 1)])
    result = b.op(graph.SplitOp, [xs[0]], axis=axis, num=count)
    return result if isinstance(result, list) else [result]


def _bounds(b, name: str, what: str) -> list[int | SSAValue]:
    """Slice bounds: constants, or dims computed at run time (a shape value, a Loop's
    iteration number)."""
    sym = b.shapes.get(name)
    if sym is not None:
        return list(sym.items)
    return [int(v) for v in b.static(name, what)]


def _slice(b, n, xs, a):
    x = xs[0]
    rank = rank_of(x)
    starts = _bounds(b, n.input[1], "Slice's starts")
    ends = _bounds(b, n.input[2], "Slice's ends")
    axes = [int(v) for v in b.static(n.input[3], "Slice's axes")] if len(n.input) > 3 and n.input[3] \
        else list(range(len(starts)))
    steps = [int(v) for v in b.static(n.input[4], "Slice's steps")] if len(n.input) > 4 and n.input[4] \
        else [1] * len(starts)
    full_starts, full_ends, full_steps = [0] * rank, [END] * rank, [1] * rank
    backwards: list[tuple[int, np.ndarray]] = []  # (axis, the positions a negative step takes)
    for s, e, axis, step in zip(starts, ends, axes, steps):
        axis %= rank
        if step < 0:
            backwards.append((axis, _backward_positions(b, x, axis, s, e, step)))
            continue
        if step == 0:
            raise OnnxImportError(f"{b.where()}: a slice step must not be 0")
        full_starts[axis], full_ends[axis], full_steps[axis] = s, (END if isinstance(e, int) and e >= 2**62 else e), step
    dynamic = [v for pair in zip(full_starts, full_ends) for v in pair if isinstance(v, SSAValue)]
    y = x
    if not backwards or dynamic or full_starts != [0] * rank or full_ends != [END] * rank or full_steps != [1] * rank:
        y = b.op(graph.SliceOp, [x, *dynamic], static_starts=[DYNAMIC if isinstance(v, SSAValue) else v for v in full_starts],
                 static_ends=[DYNAMIC if isinstance(v, SSAValue) else v for v in full_ends], steps=full_steps)
    for axis, positions in backwards:
        y = b.op(graph.GatherOp, [y, b.const(positions)], axis=axis)
    return [y]


def _backward_positions(b, x: SSAValue, axis: int, start: Any, end: Any, step: int) -> np.ndarray:
    """The positions a negative-step slice takes along a static axis, in order (ONNX's
    clamping is Python's for these bounds); they are gathered."""
    size = x.type.get_shape()[axis]
    if size == DYNAMIC_INDEX or not isinstance(start, int) or not isinstance(end, int):
        raise OnnxImportError(f"{b.where()}: a negative slice step needs the axis and bounds known at compile time")
    return np.arange(size, dtype=np.int64)[start:end:step]


def _gather(b, n, xs, a):
    return [b.op(graph.GatherOp, xs[:2], axis=a.get("axis", 0))]


def _reduce(cls, name):
    def convert(b, n, xs, a):
        axes = _ints(b, n, a, "axes", 1, f"{name}'s axes")
        if axes is None:
            if a.get("noop_with_empty_axes", 0):
                return [xs[0]]
            axes = list(range(rank_of(xs[0])))
        rank = rank_of(xs[0])
        return [b.op(cls, [xs[0]], axes=sorted(x % rank for x in axes), keepdims=bool(a.get("keepdims", 1)))]
    return convert


def _argmax(b, n, xs, a):
    return [b.op(graph.ArgmaxOp, [xs[0]], axis=a.get("axis", 0), keepdims=bool(a.get("keepdims", 1)),
                 select_last_index=bool(a.get("select_last_index", 0)))]


def _is_inf(b, n, xs, a):
    return [b.op(graph.IsInfOp, [xs[0]], detect_positive=bool(a.get("detect_positive", 1)),
                 detect_negative=bool(a.get("detect_negative", 1)))]


def _running(cls):
    def convert(b, n, xs, a):
        axis = int(np.asarray(b.static(n.input[1], f"{n.op_type}'s axis")).reshape(()))
        return [b.op(cls, [xs[0]], axis=axis, exclusive=bool(a.get("exclusive", 0)), reverse=bool(a.get("reverse", 0)))]
    return convert


def _cast_like(b, n, xs, a):
    return [b.op(graph.CastOp, [xs[0]], xs[1].type.element_type)]


def _dropout(b, n, xs, a):
    if len(n.input) > 2 and n.input[2] and bool(b.static(n.input[2], "Dropout's training_mode")):
        raise OnnxImportError(f"{b.where()}: training mode is not supported")
    if len(n.output) > 1 and n.output[1]:
        raise OnnxImportError(f"{b.where()}: the mask output is not supported")
    return [xs[0]]


def _composite_reduce(before, reduce_cls, after, name):
    """Reductions ONNX has and the graph dialect spells as a reduction between two
    elementwise steps (ReduceL2 = sqrt(sum(x*x)), ...)."""
    inner = _reduce(reduce_cls, name)

    def convert(b, n, xs, a):
        x = before(b, xs[0]) if before else xs[0]
        (y,) = inner(b, n, [x, *xs[1:]], a)
        return [after(b, y) if after else y]
    return convert


def _square(b, x):
    return b.op(graph.MulOp, [x, x])


def _log_sum_exp(b, n, xs, a):
    x = xs[0]
    axes = _ints(b, n, a, "axes", 1, "ReduceLogSumExp's axes") or list(range(rank_of(x)))
    rank = rank_of(x)
    axes = sorted(v % rank for v in axes)
    top = b.op(graph.ReduceMaxOp, [x], axes=axes, keepdims=True)
    total = b.op(graph.ReduceSumOp, [b.op(graph.ExpOp, [b.op(graph.SubOp, [x, top])])], axes=axes,
                 keepdims=bool(a.get("keepdims", 1)))
    if not a.get("keepdims", 1):
        top = b.op(graph.SqueezeOp, [top], axes=axes)
    return [b.op(graph.AddOp, [b.op(graph.LogOp, [total]), top])]


def _log_softmax(b, n, xs, a):
    x, axis = xs[0], a.get("axis", -1)
    top = b.op(graph.ReduceMaxOp, [x], axes=[axis % rank_of(x)], keepdims=True)
    shifted = b.op(graph.SubOp, [x, top])
    total = b.op(graph.ReduceSumOp, [b.op(graph.ExpOp, [shifted])], axes=[axis % rank_of(x)], keepdims=True)
    return [b.op(graph.SubOp, [shifted, b.op(graph.LogOp, [total])])]


def _xor(b, n, xs, a):
    return [b.op(graph.NotOp, [b.op(graph.EqualOp, xs[:2])])]


def _argmin(b, n, xs, a):
    x = xs[0]
    if x.type.element_type == i1:
        raise OnnxImportError(f"{b.where()}: ArgMin of booleans is not supported")
    return [b.op(graph.ArgmaxOp, [b.op(graph.NegOp, [x])], axis=a.get("axis", 0), keepdims=bool(a.get("keepdims", 1)),
                 select_last_index=bool(a.get("select_last_index", 0)))]


def _mod(b, n, xs, a):
    """`x - y * q`, q the quotient rounded toward zero (`fmod=1`, C's fmod: the sign of
    x) or toward minus infinity (`fmod=0`, Python's %: the sign of y; integers only, as
    ONNX requires)."""
    x, y = xs[:2]
    fmod = bool(a.get("fmod", 0))
    floating = np.issubdtype(dtype_of(x), np.floating)
    if floating and not fmod:
        raise OnnxImportError(f"{b.where()}: Mod of floats needs fmod=1 (the ONNX spec)")
    q = b.op(graph.DivOp, [x, y])  # integers: truncating division
    if floating:
        zero = scalar(b, 0, q)
        q = b.op(graph.WhereOp, [b.op(graph.LessOp, [q, zero]), b.op(graph.CeilOp, [q]), b.op(graph.FloorOp, [q])])
    r = b.op(graph.SubOp, [x, b.op(graph.MulOp, [y, q])])
    if fmod:
        return [r]
    zero = scalar(b, 0, r)
    signs_differ = b.op(graph.NotOp, [b.op(graph.EqualOp, [b.op(graph.LessOp, [r, zero]), b.op(graph.LessOp, [y, zero])])])
    fix = b.op(graph.AndOp, [signs_differ, b.op(graph.NotOp, [b.op(graph.EqualOp, [r, zero])])])
    return [b.op(graph.WhereOp, [fix, b.op(graph.AddOp, [r, y]), r])]


DIM_INPUTS: dict[str, set[int]] = {"Slice": {1, 2, 3, 4}, **layout.DIM_INPUTS}
"""Inputs a converter reads as dims, so they may be shapes computed at run time."""

CONVERTERS: dict[str, Converter] = {
    **{k: _unary(v) for k, v in _UNARY.items()},
    **{k: _binary(v) for k, v in _BINARY.items()},
    **{k: _variadic(v) for k, v in _VARIADIC.items()},
    **{k: _reduce(v, k) for k, v in _REDUCE.items()},
    "LessOrEqual": _compare_or_equal(graph.LessOp), "GreaterOrEqual": _compare_or_equal(graph.GreaterOp),
    "Pow": _pow, "Identity": _identity, "Constant": _constant, "Cast": _cast, "Reciprocal": _reciprocal, "Where": _where,
    "Clip": _clip, "LeakyRelu": _leaky_relu, "Gelu": _gelu,
    "Conv": _one_dimensional(_conv), "MaxPool": _one_dimensional(_max_pool),
    "AveragePool": _one_dimensional(_avg_pool), "GlobalAveragePool": _global_avg_pool,
    "GlobalMaxPool": _global_max_pool, "Mean": _mean,
    "BatchNormalization": _batch_norm, "InstanceNormalization": _instance_norm, "Softmax": _softmax,
    "LayerNormalization": _layer_norm,
    "Reshape": _reshape, "Flatten": _flatten, "Transpose": _transpose, "Concat": _concat, "Squeeze": _squeeze,
    "Unsqueeze": _unsqueeze, "Split": _split, "Slice": _slice, "Gather": _gather, "ArgMax": _argmax,
    "CumSum": _running(graph.CumSumOp), "CumProd": _running(graph.CumProdOp),
    "ArgMin": _argmin, "IsInf": _is_inf, "CastLike": _cast_like, "Dropout": _dropout, "Xor": _xor,
    "LogSoftmax": _log_softmax,
    "ReduceSumSquare": _composite_reduce(_square, graph.ReduceSumOp, None, "ReduceSumSquare"),
    "ReduceL1": _composite_reduce(lambda b, x: b.op(graph.AbsOp, [x]), graph.ReduceSumOp, None, "ReduceL1"),
    "ReduceL2": _composite_reduce(_square, graph.ReduceSumOp, lambda b, y: b.op(graph.SqrtOp, [y]), "ReduceL2"),
    "ReduceLogSum": _composite_reduce(None, graph.ReduceSumOp, lambda b, y: b.op(graph.LogOp, [y]), "ReduceLogSum"),
    "ReduceLogSumExp": _log_sum_exp, "GroupNormalization": _group_norm, "Mod": _mod, "LSTM": lstm, "GRU": gru, "RNN": rnn, "If": if_, "Loop": loop, "Scan": scan,
    **layout.CONVERTERS,
    **linalg.CONVERTERS,
    **indexed.CONVERTERS,
    **activations.CONVERTERS,
}
"""Every ONNX op type the importer converts."""
