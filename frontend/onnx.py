"""ONNX models → graph IR: `import_onnx(path_or_model)`.

The graph's inputs become the parameters of `@main` (initializers excluded): a
`dim_value` is a static dim, a `dim_param` or unknown dim is `?`, and dims sharing a
`dim_param` name are tied (a `shape.assert` at entry, like named dims in `.nb`).
Initializers and `Constant` nodes become `graph.constant`s (the bytecode keeps them in
its constant section). Each node is converted by the entry of `CONVERTERS` for its op
type (one function per op, or per family of ops, reading ONNX attributes with their
defaults); inputs that ONNX passes as tensors but the graph dialect takes as attributes
(a reshape's shape, slice bounds, axes) must be constants. Before anything is built,
every node is checked: an unsupported op type, or a model above the opsets this
importer knows, is one `OnnxImportError` listing every problem with the nodes it is in.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    DenseIntOrFPElementsAttr,
    FunctionType,
    IndexType,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    TensorType,
    f16,
    f32,
    f64,
    i1,
    i8,
    i32,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.utils.exceptions import VerifyException

from nimble.dialects import graph, shape
from nimble.dialects.graph.slice import END
from nimble.frontend.attributes import to_property

MIN_OPSET = 13


class OnnxImportError(Exception):
    """The model cannot be imported; the message lists every problem found."""


class NeedsConstant(OnnxImportError):
    """A node input the graph dialect takes as an attribute is not a constant."""

    def __init__(self, message: str, name: str):
        super().__init__(message)
        self.name = name


def _onnx():
    try:
        import onnx
    except ImportError as e:  # pragma: no cover (onnx is a dependency)
        raise OnnxImportError(f"the onnx package is not installed: {e}") from None
    return onnx


# ---------------------------------------------------------------------------------------
# Types


def _element_types() -> dict[int, Attribute]:
    T = _onnx().TensorProto
    return {T.FLOAT: f32, T.DOUBLE: f64, T.FLOAT16: f16, T.INT64: i64, T.INT32: i32, T.INT8: i8, T.BOOL: i1}


def _tensor_type(type_proto: Any, where: str, named: dict[str, list[tuple[int, int]]], param: int) -> TensorType:
    if not type_proto.HasField("tensor_type"):
        raise OnnxImportError(f"{where}: only tensor inputs are supported")
    t = type_proto.tensor_type
    element = _element_types().get(t.elem_type)
    if element is None:
        raise OnnxImportError(f"{where}: element type {_onnx().TensorProto.DataType.Name(t.elem_type)} is not supported")
    if not t.HasField("shape"):
        raise OnnxImportError(f"{where}: the rank is unknown (Nimble needs the rank of every input)")
    dims = []
    for axis, d in enumerate(t.shape.dim):
        if d.HasField("dim_value"):
            dims.append(d.dim_value)
        else:
            dims.append(DYNAMIC_INDEX)
            if d.HasField("dim_param") and d.dim_param:
                named.setdefault(d.dim_param, []).append((param, axis))
    return TensorType(element, dims)


def _dense(array: np.ndarray) -> DenseIntOrFPElementsAttr:
    element = {np.dtype(np.float32): f32, np.dtype(np.float64): f64, np.dtype(np.float16): f16,
               np.dtype(np.int64): i64, np.dtype(np.int32): i32, np.dtype(np.int8): i8,
               np.dtype(np.bool_): i1}.get(array.dtype)
    if element is None:
        raise OnnxImportError(f"constant of dtype {array.dtype} is not supported")
    t = TensorType(element, list(array.shape))
    values = array.reshape(-1)
    if element == i1:
        values = values.astype(np.int64)
    return DenseIntOrFPElementsAttr.from_list(t, values.tolist())


# ---------------------------------------------------------------------------------------
# The importer


class Importer:
    """Builds `@main` from an ONNX graph, one node at a time."""

    def __init__(self, model: Any):
        self.model = model
        self.values: dict[str, SSAValue] = {}
        self.constants: dict[str, np.ndarray] = {}  # values known at import time
        self.shapes: dict[str, Sym] = {}  # int64 tensors that are shapes or dims (`Shape` and friends)
        self.block: Block | None = None
        self.node: Any = None

    # -- building ---------------------------------------------------------------------

    def emit(self, op: Operation) -> Operation:
        self.block.add_op(op)
        return op

    def op(self, cls: type[Operation], operands: Sequence[SSAValue], element: Attribute | None = None,
           **props: Any) -> SSAValue | list[SSAValue]:
        """A graph op with inferred result types; keyword properties are Python values
        (or attributes) encoded as the op declares them."""
        properties = {k: v if isinstance(v, Attribute) else to_property(cls, k, v) for k, v in props.items()
                      if v is not None}
        try:
            types = cls.result_types_for(list(operands), properties, element)
            op = cls.create(operands=list(operands), result_types=types, properties=properties)
            op.verify()
        except VerifyException as e:
            raise OnnxImportError(f"{self.where()}: {e}") from None
        self.emit(op)
        return op.results[0] if len(op.results) == 1 else list(op.results)

    def const(self, array: np.ndarray) -> SSAValue:
        array = np.asarray(array)
        return self.emit(graph.ConstantOp(_dense(array))).results[0]

    def index(self, value: int) -> SSAValue:
        return self.emit(arith.ConstantOp(IntegerAttr(value, IndexType()))).result

    def static(self, name: str, what: str) -> np.ndarray:
        """The value of input `name`, which the graph dialect needs at compile time."""
        if name not in self.constants:
            raise NeedsConstant(f"{self.where()}: {what} must be a constant (an initializer or a Constant node)", name)
        return self.constants[name]

    def where(self) -> str:
        n = self.node
        if n is None:
            return "model"
        return f"node '{n.name or n.output[0]}' ({n.op_type})"

    # -- the graph ---------------------------------------------------------------------

    def run(self) -> ModuleOp:
        g = self.model.graph
        initializers = {t.name for t in g.initializer}
        inputs = [i for i in g.input if i.name not in initializers]
        named: dict[str, list[tuple[int, int]]] = {}
        types = [_tensor_type(i.type, f"input '{i.name}'", named, k) for k, i in enumerate(inputs)]
        self.block = Block(arg_types=types)
        for i, arg in zip(inputs, self.block.args):
            self.values[i.name] = arg
            arg.name_hint = _hint(i.name)
        self.tie_named_dims(named)
        numpy_helper = _onnx().numpy_helper
        for t in g.initializer:
            array = numpy_helper.to_array(t)
            self.constants[t.name] = array
            self.values[t.name] = self.const(array)
        for node in g.node:
            self.node = node
            attrs = _attributes(node)
            symbolic = SHAPE_CONVERTERS.get(node.op_type)
            result = symbolic(self, node, attrs) if symbolic is not None else None
            if result is not None:  # a shape computation, followed symbolically
                self.shapes[node.output[0]] = result
                continue
            if node.output[0] in self.values:  # a tensor op on a shape, built by its shape converter
                continue
            if node.op_type not in CONVERTERS:
                raise OnnxImportError(f"{self.where()}: needs its shape input as a constant or a computed shape")
            for x in node.input:
                if x in self.shapes and x not in self.values:
                    raise OnnxImportError(f"{self.where()}: takes '{x}', a shape computed at run time, as a tensor "
                                          "(only shape ops may use it)")
            outputs = CONVERTERS[node.op_type](self, node, [self.values.get(x) if x else None for x in node.input],
                                               attrs)
            for name, value in zip(node.output, outputs):
                if name:
                    self.values[name] = value
        self.node = None
        results = []
        for o in g.output:
            if o.name in self.shapes and o.name not in self.values:
                raise OnnxImportError(f"graph output '{o.name}' is a shape computed at run time (not supported)")
            if o.name not in self.values:
                raise OnnxImportError(f"graph output '{o.name}' is not computed by any node")
            results.append(self.values[o.name])
        self.block.add_op(func.ReturnOp(*results))
        fn = func.FuncOp("main", FunctionType.from_lists(types, [r.type for r in results]), Region(self.block))
        return ModuleOp([fn])

    def tie_named_dims(self, named: dict[str, list[tuple[int, int]]]) -> None:
        """Dims that share a `dim_param` must agree at run time."""
        for name, places in named.items():
            (p0, a0), *rest = places
            first = self.emit(shape.DimOp(self.block.args[p0], a0)).result
            for p, a in rest:
                other = self.emit(shape.DimOp(self.block.args[p], a)).result
                same = self.emit(arith.CmpiOp(first, other, "eq")).result
                self.emit(shape.AssertOp(same, f"dims named '{name}' differ", [first, other]))


def _hint(name: str) -> str | None:
    cleaned = "".join(c if c.isalnum() or c == "_" else "_" for c in name)
    return cleaned if cleaned and not cleaned[0].isdigit() else None


def _attributes(node: Any) -> dict[str, Any]:
    helper = _onnx().helper
    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


# ---------------------------------------------------------------------------------------
# Converters: (importer, node, inputs, attributes) -> outputs


Converter = Callable[[Importer, Any, list[SSAValue | None], dict[str, Any]], list[SSAValue]]

_UNARY: dict[str, type[Operation]] = {
    "Abs": graph.AbsOp, "Neg": graph.NegOp, "Exp": graph.ExpOp, "Log": graph.LogOp, "Sqrt": graph.SqrtOp,
    "Tanh": graph.TanhOp, "Sigmoid": graph.SigmoidOp, "Relu": graph.ReluOp, "Erf": graph.ErfOp, "Not": graph.NotOp,
}
_BINARY: dict[str, type[Operation]] = {
    "Add": graph.AddOp, "Sub": graph.SubOp, "Mul": graph.MulOp, "Div": graph.DivOp,
    "And": graph.AndOp, "Or": graph.OrOp, "Equal": graph.EqualOp, "Less": graph.LessOp, "Greater": graph.GreaterOp,
}
_VARIADIC: dict[str, type[Operation]] = {"Max": graph.MaximumOp, "Min": graph.MinimumOp, "Sum": graph.AddOp}
_REDUCE: dict[str, type[Operation]] = {"ReduceSum": graph.ReduceSumOp, "ReduceMean": graph.ReduceMeanOp,
                                       "ReduceMax": graph.ReduceMaxOp}
_AXES_AS_INPUT = {"ReduceSum": 13}  # opset from which axes is an input (the others: 18)


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


def _rank(v: SSAValue) -> int:
    return len(v.type.get_shape())


def _pow(b, n, xs, a):
    base, exponent = xs[0], xs[1]
    if exponent.type.element_type != base.type.element_type:  # the result has the base's type
        exponent = b.op(graph.CastOp, [exponent], base.type.element_type)
    return [b.op(graph.PowOp, [base, exponent])]


def _identity(b, n, xs, a):
    return [xs[0]]


def _constant(b, n, xs, a):
    numpy_helper = _onnx().numpy_helper
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
    b.constants[n.output[0]] = array
    return [b.const(array)]


def _cast(b, n, xs, a):
    element = _element_types().get(a["to"])
    if element is None:
        raise OnnxImportError(f"{b.where()}: cast to {_onnx().TensorProto.DataType.Name(a['to'])} is not supported")
    return [b.op(graph.CastOp, [xs[0]], element)]


def _reciprocal(b, n, xs, a):
    one = b.const(np.array(1, _numpy_dtype(xs[0])))
    return [b.op(graph.DivOp, [one, xs[0]])]


def _numpy_dtype(v: SSAValue) -> np.dtype:
    from nimble.dialects.graph.types import numpy_dtype

    return numpy_dtype(v.type.element_type)


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
    alpha = b.const(np.array(a.get("alpha", 0.01), _numpy_dtype(x)))
    zero = b.const(np.array(0, _numpy_dtype(x)))
    return [b.op(graph.WhereOp, [b.op(graph.GreaterOp, [x, zero]), x, b.op(graph.MulOp, [x, alpha])])]


def _gelu(b, n, xs, a):
    if a.get("approximate", b"none") not in (b"none", "none"):
        raise OnnxImportError(f"{b.where()}: only the exact Gelu is supported")
    return [b.op(graph.GeluOp, [xs[0]])]


def _matmul(b, n, xs, a):
    return [b.op(graph.MatmulOp, xs[:2])]


def _gemm(b, n, xs, a):
    x, w = xs[0], xs[1]
    if a.get("transA", 0):
        x = b.op(graph.TransposeOp, [x], perm=[1, 0])
    if a.get("transB", 0):
        w = b.op(graph.TransposeOp, [w], perm=[1, 0])
    y = b.op(graph.MatmulOp, [x, w])
    alpha, beta = a.get("alpha", 1.0), a.get("beta", 1.0)
    if alpha != 1.0:
        y = b.op(graph.MulOp, [y, b.const(np.array(alpha, _numpy_dtype(y)))])
    if len(xs) > 2 and xs[2] is not None:
        c = xs[2]
        if beta != 1.0:
            c = b.op(graph.MulOp, [c, b.const(np.array(beta, _numpy_dtype(c)))])
        y = b.op(graph.AddOp, [y, c])
    return [y]


def _window(b, a, kernel: Sequence[int]) -> dict[str, Any]:
    if len(kernel) != 2:
        raise OnnxImportError(f"{b.where()}: only 2-D windows are supported")
    if a.get("auto_pad", b"NOTSET") not in (b"NOTSET", "NOTSET", b"VALID", "VALID"):
        raise OnnxImportError(f"{b.where()}: auto_pad {a['auto_pad']!r} is not supported")
    if a.get("ceil_mode", 0):
        raise OnnxImportError(f"{b.where()}: ceil_mode=1 is not supported")
    return {"strides": list(a.get("strides", [1, 1])), "padding": list(a.get("pads", [0, 0, 0, 0])),
            "dilations": list(a.get("dilations", [1, 1]))}


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
    return [b.op(graph.AvgPool2dOp, [xs[0]], kernel=list(a["kernel_shape"]),
                 count_include_pad=bool(a.get("count_include_pad", 0)), **props)]


def _global_avg_pool(b, n, xs, a):
    return [b.op(graph.GlobalAvgPool2dOp, [xs[0]])]


def _batch_norm(b, n, xs, a):
    if a.get("training_mode", 0):
        raise OnnxImportError(f"{b.where()}: training mode is not supported")
    return [b.op(graph.BatchNormOp, xs[:5], epsilon=float(a.get("epsilon", 1e-5)))]


def _softmax(b, n, xs, a):
    return [b.op(graph.SoftmaxOp, [xs[0]], axis=a.get("axis", -1))]


def _layer_norm(b, n, xs, a):
    x, scale = xs[0], xs[1]
    axis, epsilon = a.get("axis", -1), float(a.get("epsilon", 1e-5))
    bias = xs[2] if len(xs) > 2 and xs[2] is not None else b.const(np.zeros(scale.type.get_shape(), _numpy_dtype(x)))
    y = b.op(graph.LayerNormOp, [x, scale, bias], axis=axis, epsilon=epsilon)
    if len(n.output) == 1 or not any(n.output[1:]):
        return [y]
    # The optional Mean and InvStdDev outputs (over the normalised dims, kept as 1s).
    rank = _rank(x)
    axes = list(range(axis % rank, rank))
    mean = b.op(graph.ReduceMeanOp, [x], axes=axes, keepdims=True)
    centred = b.op(graph.SubOp, [x, mean])
    variance = b.op(graph.ReduceMeanOp, [b.op(graph.MulOp, [centred, centred])], axes=axes, keepdims=True)
    eps = b.const(np.array(epsilon, _numpy_dtype(x)))
    return [y, mean, b.op(graph.RsqrtOp, [b.op(graph.AddOp, [variance, eps])])]


def _reshape(b, n, xs, a):
    target = [int(d) for d in b.static(n.input[1], "the target shape")]
    source = xs[0].type.get_shape()
    if not a.get("allowzero", 0):
        for i, d in enumerate(target):
            if d == 0:
                if i >= len(source) or source[i] < 0:
                    raise OnnxImportError(f"{b.where()}: a 0 in the target shape copies an unknown dim")
                target[i] = source[i]
    return [b.op(graph.ReshapeOp, [xs[0]], shape=target)]


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
    perm = list(a.get("perm", range(_rank(xs[0]) - 1, -1, -1)))
    return [b.op(graph.TransposeOp, [xs[0]], perm=perm)]


def _concat(b, n, xs, a):
    return [b.op(graph.ConcatOp, [x for x in xs if x is not None], axis=a["axis"])]


def _axes(b, n, a, index: int, what: str) -> list[int] | None:
    if "axes" in a:
        return [int(x) for x in a["axes"]]
    if len(n.input) > index and n.input[index]:
        axes = [int(x) for x in b.static(n.input[index], what)]
        return axes or None  # an empty axes input means none given
    return None


def _squeeze(b, n, xs, a):
    axes = _axes(b, n, a, 1, "Squeeze's axes")
    if axes is None:
        shape_ = xs[0].type.get_shape()
        if any(d < 0 for d in shape_):
            raise OnnxImportError(f"{b.where()}: Squeeze without axes needs every dim known")
        axes = [i for i, d in enumerate(shape_) if d == 1]
    rank = _rank(xs[0])
    return [b.op(graph.SqueezeOp, [xs[0]], axes=sorted(x % rank for x in axes))]


def _unsqueeze(b, n, xs, a):
    axes = _axes(b, n, a, 1, "Unsqueeze's axes")
    rank = _rank(xs[0]) + len(axes)
    return [b.op(graph.UnsqueezeOp, [xs[0]], axes=sorted(x % rank for x in axes))]


def _split(b, n, xs, a):
    axis = a.get("axis", 0)
    sizes = _axes(b, n, {"axes": a["split"]} if "split" in a else {}, 1, "Split's sizes")
    if sizes is not None:
        return b.op(graph.SplitOp, [xs[0]], axis=axis, sizes=sizes) if len(sizes) > 1 else [xs[0]]
    count = a.get("num_outputs", len(n.output))
    result = b.op(graph.SplitOp, [xs[0]], axis=axis, num=count)
    return result if isinstance(result, list) else [result]


def _slice(b, n, xs, a):
    x = xs[0]
    rank = _rank(x)
    starts = [int(v) for v in b.static(n.input[1], "Slice's starts")]
    ends = [int(v) for v in b.static(n.input[2], "Slice's ends")]
    axes = [int(v) for v in b.static(n.input[3], "Slice's axes")] if len(n.input) > 3 and n.input[3] \
        else list(range(len(starts)))
    steps = [int(v) for v in b.static(n.input[4], "Slice's steps")] if len(n.input) > 4 and n.input[4] \
        else [1] * len(starts)
    full_starts, full_ends, full_steps = [0] * rank, [END] * rank, [1] * rank
    for s, e, axis, step in zip(starts, ends, axes, steps):
        if step <= 0:
            raise OnnxImportError(f"{b.where()}: only positive slice steps are supported")
        axis %= rank
        full_starts[axis], full_ends[axis], full_steps[axis] = s, (END if e >= 2**62 else e), step
    return [b.op(graph.SliceOp, [x], static_starts=full_starts, static_ends=full_ends, steps=full_steps)]


def _gather(b, n, xs, a):
    return [b.op(graph.GatherOp, xs[:2], axis=a.get("axis", 0))]


def _reduce(cls, name):
    def convert(b, n, xs, a):
        axes = _axes(b, n, a, 1, f"{name}'s axes")
        if axes is None:
            if a.get("noop_with_empty_axes", 0):
                return [xs[0]]
            axes = list(range(_rank(xs[0])))
        rank = _rank(xs[0])
        return [b.op(cls, [xs[0]], axes=sorted(x % rank for x in axes), keepdims=bool(a.get("keepdims", 1)))]
    return convert


def _argmax(b, n, xs, a):
    if a.get("select_last_index", 0):
        raise OnnxImportError(f"{b.where()}: select_last_index=1 is not supported")
    return [b.op(graph.ArgmaxOp, [xs[0]], axis=a.get("axis", 0), keepdims=bool(a.get("keepdims", 1)))]


def _scalar(b, value: float, like: SSAValue) -> SSAValue:
    return b.const(np.array(value, _numpy_dtype(like)))


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
    elementwise steps (ReduceMin = -max(-x), ReduceL2 = sqrt(sum(x*x)), ...)."""
    inner = _reduce(reduce_cls, name)

    def convert(b, n, xs, a):
        x = before(b, xs[0]) if before else xs[0]
        (y,) = inner(b, n, [x, *xs[1:]], a)
        return [after(b, y) if after else y]
    return convert


def _neg(b, x):
    return b.op(graph.NegOp, [x])


def _square(b, x):
    return b.op(graph.MulOp, [x, x])


def _log_sum_exp(b, n, xs, a):
    x = xs[0]
    axes = _axes(b, n, a, 1, "ReduceLogSumExp's axes") or list(range(_rank(x)))
    rank = _rank(x)
    axes = sorted(v % rank for v in axes)
    top = b.op(graph.ReduceMaxOp, [x], axes=axes, keepdims=True)
    total = b.op(graph.ReduceSumOp, [b.op(graph.ExpOp, [b.op(graph.SubOp, [x, top])])], axes=axes,
                 keepdims=bool(a.get("keepdims", 1)))
    if not a.get("keepdims", 1):
        top = b.op(graph.SqueezeOp, [top], axes=axes)
    return [b.op(graph.AddOp, [b.op(graph.LogOp, [total]), top])]


def _log_softmax(b, n, xs, a):
    x, axis = xs[0], a.get("axis", -1)
    top = b.op(graph.ReduceMaxOp, [x], axes=[axis % _rank(x)], keepdims=True)
    shifted = b.op(graph.SubOp, [x, top])
    total = b.op(graph.ReduceSumOp, [b.op(graph.ExpOp, [shifted])], axes=[axis % _rank(x)], keepdims=True)
    return [b.op(graph.SubOp, [shifted, b.op(graph.LogOp, [total])])]


def _xor(b, n, xs, a):
    return [b.op(graph.NotOp, [b.op(graph.EqualOp, xs[:2])])]


def _argmin(b, n, xs, a):
    if a.get("select_last_index", 0):
        raise OnnxImportError(f"{b.where()}: select_last_index=1 is not supported")
    x = xs[0]
    if x.type.element_type == i1:
        raise OnnxImportError(f"{b.where()}: ArgMin of booleans is not supported")
    return [b.op(graph.ArgmaxOp, [b.op(graph.NegOp, [x])], axis=a.get("axis", 0), keepdims=bool(a.get("keepdims", 1)))]


def _activation(f):
    """An elementwise activation written with graph ops: f(b, x, attributes)."""
    return lambda b, n, xs, a: [f(b, xs[0], a)]


def _softplus(b, x, a):  # log(1 + exp(x)), stable: max(x, 0) + log(1 + exp(-|x|))
    zero, one = _scalar(b, 0, x), _scalar(b, 1, x)
    tail = b.op(graph.LogOp, [b.op(graph.AddOp, [one, b.op(graph.ExpOp, [b.op(graph.NegOp, [b.op(graph.AbsOp, [x])])])])])
    return b.op(graph.AddOp, [b.op(graph.MaximumOp, [x, zero]), tail])


def _softsign(b, x, a):
    return b.op(graph.DivOp, [x, b.op(graph.AddOp, [_scalar(b, 1, x), b.op(graph.AbsOp, [x])])])


def _hard_sigmoid(b, x, a):
    alpha, beta = a.get("alpha", 0.2), a.get("beta", 0.5)
    y = b.op(graph.AddOp, [b.op(graph.MulOp, [x, _scalar(b, alpha, x)]), _scalar(b, beta, x)])
    return b.op(graph.ClipOp, [y], min=0.0, max=1.0)


def _hard_swish(b, x, a):
    return b.op(graph.MulOp, [x, _hard_sigmoid(b, x, {"alpha": 1 / 6, "beta": 0.5})])


def _elu(b, x, a):
    alpha = _scalar(b, a.get("alpha", 1.0), x)
    negative = b.op(graph.MulOp, [alpha, b.op(graph.SubOp, [b.op(graph.ExpOp, [x]), _scalar(b, 1, x)])])
    return b.op(graph.WhereOp, [b.op(graph.LessOp, [x, _scalar(b, 0, x)]), negative, x])


def _selu(b, x, a):
    alpha, gamma = a.get("alpha", 1.67326319217681884765625), a.get("gamma", 1.05070102214813232421875)
    return b.op(graph.MulOp, [_elu(b, x, {"alpha": alpha}), _scalar(b, gamma, x)])


def _thresholded_relu(b, x, a):
    return b.op(graph.WhereOp, [b.op(graph.GreaterOp, [x, _scalar(b, a.get("alpha", 1.0), x)]), x, _scalar(b, 0, x)])


def _prelu(b, n, xs, a):
    x, slope = xs[0], xs[1]
    return [b.op(graph.WhereOp, [b.op(graph.LessOp, [x, _scalar(b, 0, x)]), b.op(graph.MulOp, [x, slope]), x])]


# ---------------------------------------------------------------------------------------
# Shape computations: int64 tensors holding dims (`Shape`, then Gather/Concat/... of it)
# are followed symbolically as lists of dims (ints or `index` values) and become
# `shape.from_dims` where a tensor op takes them (ConstantOfShape, Reshape, Expand).


@dataclass
class Sym:
    items: list[int | SSAValue]
    scalar: bool = False


def _sym(b, name: str) -> Sym | None:
    """The dims an input holds, if it is a shape value or a small integer constant."""
    if not name:
        return None
    if name in b.shapes:
        return b.shapes[name]
    array = b.constants.get(name)
    if array is not None and np.issubdtype(array.dtype, np.integer) and array.ndim <= 1:
        return Sym([int(v) for v in np.atleast_1d(array)], array.ndim == 0)
    return None


def _index_of(b, item: int | SSAValue) -> SSAValue:
    return b.index(item) if isinstance(item, int) else item


def _shape_value(b, sym: Sym) -> SSAValue:
    return b.emit(shape.FromDimsOp([_index_of(b, d) for d in sym.items])).result


def _sym_shape(b, n, a):
    x = b.values.get(n.input[0])
    if x is None:
        return None
    dims = x.type.get_shape()
    start, end = a.get("start", 0), a.get("end", len(dims))
    items = [d if d >= 0 else b.emit(shape.DimOp(x, k)).result for k, d in enumerate(dims)]
    return Sym(items[slice(start, end)])


def _sym_gather(b, n, a):
    data = b.shapes.get(n.input[0])
    if data is None or a.get("axis", 0) != 0:
        return None
    index = b.static(n.input[1], "the index into a shape")
    picked = [data.items[int(i)] for i in np.atleast_1d(index)]
    return Sym(picked, index.ndim == 0)


def _sym_unsqueeze(b, n, a):
    sym = b.shapes.get(n.input[0])
    return Sym(sym.items) if sym is not None and sym.scalar else None


def _sym_squeeze(b, n, a):
    sym = b.shapes.get(n.input[0])
    return Sym(sym.items, True) if sym is not None and len(sym.items) == 1 and not sym.scalar else None


def _sym_concat(b, n, a):
    parts = [_sym(b, x) for x in n.input]
    if not any(x in b.shapes for x in n.input) or any(p is None for p in parts) or a.get("axis", 0) not in (0, -1):
        return None
    return Sym([d for p in parts for d in p.items])


def _sym_cast(b, n, a):
    sym = b.shapes.get(n.input[0])
    integer = a.get("to") in (_onnx().TensorProto.INT64, _onnx().TensorProto.INT32)
    return Sym(list(sym.items), sym.scalar) if sym is not None and integer else None


def _sym_slice(b, n, a):
    sym = b.shapes.get(n.input[0])
    if sym is None:
        return None
    starts, ends = (int(b.static(n.input[k], "a shape slice's bounds")[0]) for k in (1, 2))
    step = int(b.static(n.input[4], "a shape slice's step")[0]) if len(n.input) > 4 and n.input[4] else 1
    return Sym(sym.items[slice(starts, None if ends >= 2**62 else ends, step)])


_SYM_ARITH = {"Add": ("add", arith.AddiOp), "Sub": ("sub", arith.SubiOp), "Mul": ("mul", arith.MuliOp),
              "Div": ("div", arith.DivSIOp)}


def _sym_arith(b, n, a):
    if not any(x in b.shapes for x in n.input[:2]):
        return None
    lhs, rhs = (_sym(b, x) for x in n.input[:2])
    if lhs is None or rhs is None:
        return None
    kind, cls = _SYM_ARITH[n.op_type]
    count = max(len(lhs.items), len(rhs.items))
    pick = lambda s, k: s.items[0] if len(s.items) == 1 else s.items[k]  # noqa: E731 (broadcast a single dim)
    items: list[int | SSAValue] = []
    for k in range(count):
        x, y = pick(lhs, k), pick(rhs, k)
        if isinstance(x, int) and isinstance(y, int):
            items.append({"add": x + y, "sub": x - y, "mul": x * y, "div": int(x / y) if y else 0}[kind])
        else:
            items.append(b.emit(cls(_index_of(b, x), _index_of(b, y))).result)
    return Sym(items, lhs.scalar and rhs.scalar)


def _sym_constant_of_shape(b, n, a):
    sym = _sym(b, n.input[0])
    if sym is None:
        return None
    value = _onnx().numpy_helper.to_array(a["value"]) if "value" in a else np.zeros(1, np.float32)
    element = _dense(value.reshape(-1)[:1]).get_element_type()
    fill = value.reshape(-1)[0].item()
    b.values[n.output[0]] = b.op(graph.FullOp, [_shape_value(b, sym)], element,
                                 value=float(fill) if isinstance(fill, float) else int(fill))
    return None


def _sym_reshape(b, n, a):
    sym = b.shapes.get(n.input[1])
    x = b.values.get(n.input[0])
    if sym is None or x is None:
        return None
    items = list(sym.items)
    if not a.get("allowzero", 0):
        for k, d in enumerate(items):
            if isinstance(d, int) and d == 0:
                items[k] = x.type.get_shape()[k] if x.type.get_shape()[k] >= 0 else b.emit(shape.DimOp(x, k)).result
    if all(isinstance(d, int) for d in items):
        b.values[n.output[0]] = b.op(graph.ReshapeOp, [x], shape=items)
    else:
        if any(isinstance(d, int) and d < 0 for d in items):
            raise OnnxImportError(f"{b.where()}: a -1 in a shape computed at run time is not supported")
        b.values[n.output[0]] = b.op(graph.DynamicReshapeOp, [x, _shape_value(b, Sym(items))])
    return None


def _sym_expand(b, n, a):
    sym = _sym(b, n.input[1])
    x = b.values.get(n.input[0])
    if sym is None or x is None:
        return None
    dims = x.type.get_shape()
    rank = max(len(dims), len(sym.items))
    target: list[int | SSAValue] = []
    for k in range(rank):
        want = sym.items[k - (rank - len(sym.items))] if k >= rank - len(sym.items) else 1
        have_axis = k - (rank - len(dims))
        have = dims[have_axis] if have_axis >= 0 else 1
        if isinstance(want, int) and want == 1 and have_axis >= 0:  # bidirectional: the input's dim
            want = have if have >= 0 else b.emit(shape.DimOp(x, have_axis)).result
        target.append(want)
    b.values[n.output[0]] = b.op(graph.BroadcastToOp, [x, _shape_value(b, Sym(target))])
    return None


SHAPE_CONVERTERS: dict[str, Callable[[Importer, Any, dict[str, Any]], Sym | None]] = {
    "Shape": _sym_shape, "Gather": _sym_gather, "Unsqueeze": _sym_unsqueeze, "Squeeze": _sym_squeeze,
    "Concat": _sym_concat, "Cast": _sym_cast, "Slice": _sym_slice, "ConstantOfShape": _sym_constant_of_shape,
    "Reshape": _sym_reshape, "Expand": _sym_expand, **{k: _sym_arith for k in _SYM_ARITH},
}
"""Converters that follow shape values; each returns the symbolic result, or None when
its inputs are not shape values (the op is then converted as a tensor op), or defines
the node's tensor output itself (ConstantOfShape, Reshape, Expand) and returns None."""


def _lstm(b, n, xs, a):
    """A forward LSTM as a `graph.while` over the time steps: the input projection of all
    steps is one matmul before the loop; the loop body is the cell (recurrent matmul,
    gates, state update), which `fuse-ops` fuses into one kernel."""
    unsupported = [k for k in ("activations", "clip", "input_forget") if a.get(k)]
    if a.get("direction", b"forward") not in (b"forward", "forward"):
        unsupported.append(f"direction {a['direction']!r}")
    if a.get("layout", 0):
        unsupported.append("layout=1")
    optional = {name: xs[k] if len(xs) > k else None for k, name in ((3, "B"), (4, "sequence_lens"), (5, "initial_h"),
                                                                    (6, "initial_c"), (7, "P"))}
    if optional["sequence_lens"] is not None:
        unsupported.append("sequence_lens")
    if optional["P"] is not None:
        unsupported.append("peepholes (P)")
    if unsupported:
        raise OnnxImportError(f"{b.where()}: {', '.join(unsupported)} not supported")
    x, w, r = xs[0], xs[1], xs[2]
    hidden = a.get("hidden_size", r.type.get_shape()[-1])
    t = x.type.element_type
    first = lambda v: b.op(graph.SqueezeOp, [v], axes=[0])  # noqa: E731 (drop the direction axis)
    w_t = b.op(graph.TransposeOp, [first(w)], perm=[1, 0])  # [input, 4h]
    r_t = b.op(graph.TransposeOp, [first(r)], perm=[1, 0])  # [hidden, 4h]
    projected = b.op(graph.MatmulOp, [x, w_t])  # [T, batch, 4h], all steps at once
    if optional["B"] is not None:
        wb, rb = b.op(graph.SplitOp, [first(optional["B"])], axis=0, num=2)
        projected = b.op(graph.AddOp, [projected, b.op(graph.AddOp, [wb, rb])])
    steps = b.emit(shape.DimOp(x, 0)).result
    batch = b.emit(shape.DimOp(x, 1)).result
    state_shape = b.emit(shape.FromDimsOp([batch, b.index(hidden)])).result
    states = [first(optional[k]) if optional[k] is not None else b.op(graph.ZerosOp, [state_shape], t)
              for k in ("initial_h", "initial_c")]
    none_yet = b.op(graph.ZerosOp, [b.emit(shape.FromDimsOp([b.index(0), batch, b.index(hidden)])).result], t)
    state_type = TensorType(t, [x.type.get_shape()[1], hidden])
    ys_type = TensorType(t, [DYNAMIC_INDEX, x.type.get_shape()[1], hidden])
    carried = [IndexType(), state_type, state_type, ys_type]
    cond, body = Block(arg_types=carried), Block(arg_types=carried)
    outer = b.block
    b.block = cond
    more = b.emit(arith.CmpiOp(cond.args[0], steps, "slt")).result
    b.emit(graph.ConditionOp.create(operands=[more]))
    b.block = body
    i, h, c, ys = body.args
    next_i = b.emit(arith.AddiOp(i, b.index(1))).result
    step_type = TensorType(t, [1, *projected.type.get_shape()[1:]])
    row = b.emit(graph.SliceOp(projected, [i, 0, 0], [next_i, END, END], [1, 1, 1], step_type)).results[0]
    gates = b.op(graph.AddOp, [first(row), b.op(graph.MatmulOp, [h, r_t])])
    gi, go, gf, gc = b.op(graph.SplitOp, [gates], axis=1, num=4)
    sig = lambda v: b.op(graph.SigmoidOp, [v])  # noqa: E731
    tanh = lambda v: b.op(graph.TanhOp, [v])  # noqa: E731
    c_next = b.op(graph.AddOp, [b.op(graph.MulOp, [sig(gf), c]), b.op(graph.MulOp, [sig(gi), tanh(gc)])])
    h_next = b.op(graph.MulOp, [sig(go), tanh(c_next)])
    ys_next = b.op(graph.ConcatOp, [ys, b.op(graph.UnsqueezeOp, [h_next], axes=[0])], axis=0)
    b.emit(graph.YieldOp([next_i, *_conform(b, [h_next, c_next, ys_next], carried[1:])]))
    b.block = outer
    loop_op = b.emit(graph.WhileOp([b.index(0), *_conform(b, [*states, none_yet], carried[1:])], carried,
                                   Region(cond), Region(body)))
    _, h_last, c_last, ys_all = loop_op.results
    y = b.op(graph.UnsqueezeOp, [ys_all], axes=[1])  # [T, directions=1, batch, hidden]
    unsqueeze0 = lambda v: b.op(graph.UnsqueezeOp, [v], axes=[0])  # noqa: E731
    return [y, unsqueeze0(h_last), unsqueeze0(c_last)]


def _conform(b, values: list[SSAValue], types: Sequence[Attribute]) -> list[SSAValue]:
    """Values relaxed to the (less static) carried types of a loop."""
    out = []
    for v, t in zip(values, types):
        if v.type != t:
            v = b.emit(graph.CastOp.create(operands=[v], result_types=[t])).results[0]
        out.append(v)
    return out


CONVERTERS: dict[str, Converter] = {
    **{k: _unary(v) for k, v in _UNARY.items()},
    **{k: _binary(v) for k, v in _BINARY.items()},
    **{k: _variadic(v) for k, v in _VARIADIC.items()},
    **{k: _reduce(v, k) for k, v in _REDUCE.items()},
    "LessOrEqual": _compare_or_equal(graph.LessOp), "GreaterOrEqual": _compare_or_equal(graph.GreaterOp),
    "Pow": _pow, "Identity": _identity, "Constant": _constant, "Cast": _cast, "Reciprocal": _reciprocal, "Where": _where,
    "Clip": _clip, "LeakyRelu": _leaky_relu, "Gelu": _gelu, "MatMul": _matmul, "Gemm": _gemm, "Conv": _conv,
    "MaxPool": _max_pool, "AveragePool": _avg_pool, "GlobalAveragePool": _global_avg_pool,
    "BatchNormalization": _batch_norm, "Softmax": _softmax, "LayerNormalization": _layer_norm,
    "Reshape": _reshape, "Flatten": _flatten, "Transpose": _transpose, "Concat": _concat, "Squeeze": _squeeze,
    "Unsqueeze": _unsqueeze, "Split": _split, "Slice": _slice, "Gather": _gather, "ArgMax": _argmax,
    "ArgMin": _argmin, "CastLike": _cast_like, "Dropout": _dropout, "Xor": _xor, "LogSoftmax": _log_softmax,
    "ReduceMin": _composite_reduce(_neg, graph.ReduceMaxOp, _neg, "ReduceMin"),
    "ReduceSumSquare": _composite_reduce(_square, graph.ReduceSumOp, None, "ReduceSumSquare"),
    "ReduceL1": _composite_reduce(lambda b, x: b.op(graph.AbsOp, [x]), graph.ReduceSumOp, None, "ReduceL1"),
    "ReduceL2": _composite_reduce(_square, graph.ReduceSumOp, lambda b, y: b.op(graph.SqrtOp, [y]), "ReduceL2"),
    "ReduceLogSum": _composite_reduce(None, graph.ReduceSumOp, lambda b, y: b.op(graph.LogOp, [y]), "ReduceLogSum"),
    "ReduceLogSumExp": _log_sum_exp, "Softplus": _activation(_softplus), "Softsign": _activation(_softsign),
    "HardSigmoid": _activation(_hard_sigmoid), "HardSwish": _activation(_hard_swish), "Elu": _activation(_elu),
    "Selu": _activation(_selu), "ThresholdedRelu": _activation(_thresholded_relu), "PRelu": _prelu,
    "LSTM": _lstm,
}
"""Every ONNX op type the importer converts."""


# ---------------------------------------------------------------------------------------
# Entry point


def load_model(source: str | os.PathLike[str] | Any) -> Any:
    onnx = _onnx()
    if isinstance(source, onnx.ModelProto):
        return source
    try:
        return onnx.load(os.fspath(source))
    except Exception as e:  # noqa: BLE001 (protobuf reports a bad file in many ways)
        raise OnnxImportError(f"{source}: not an ONNX model ({type(e).__name__}: {e})") from None


def upgraded(model: Any) -> Any:
    """A model of an opset below `MIN_OPSET` converted up to it by onnx's version
    converter (the converters here follow opset 13 and later)."""
    onnx = _onnx()
    version = max((e.version for e in model.opset_import if e.domain in ("", "ai.onnx")), default=MIN_OPSET)
    if version >= MIN_OPSET:
        return model
    try:
        return onnx.version_converter.convert_version(model, MIN_OPSET)
    except Exception as e:  # noqa: BLE001 (the converter fails in many ways)
        raise OnnxImportError(f"opset {version} is below {MIN_OPSET} and onnx's converter could not upgrade the "
                              f"model ({type(e).__name__}: {e}); re-export it with opset >= {MIN_OPSET}") from None


def check_supported(model: Any) -> None:
    """One error listing every unsupported op type (with the nodes using it) and opset."""
    problems = []
    for entry in model.opset_import:
        if entry.domain not in ("", "ai.onnx"):
            problems.append(f"operator set domain '{entry.domain}' is not supported")
    unsupported: dict[str, list[str]] = {}
    for i, node in enumerate(model.graph.node):
        if node.domain not in ("", "ai.onnx") or (node.op_type not in CONVERTERS and node.op_type not in SHAPE_CONVERTERS):
            unsupported.setdefault(node.op_type, []).append(node.name or f"#{i} -> {', '.join(node.output)}")
    for op_type, nodes in sorted(unsupported.items()):
        shown = ", ".join(nodes[:5]) + (f" and {len(nodes) - 5} more" if len(nodes) > 5 else "")
        problems.append(f"unsupported op type '{op_type}' used by {len(nodes)} node(s): {shown}")
    if problems:
        raise OnnxImportError("cannot import the model:\n  " + "\n  ".join(problems))


def import_onnx(source: str | os.PathLike[str] | Any) -> ModuleOp:
    """The graph IR of an ONNX model (a path or a `ModelProto`): one function `@main`."""
    model = load_model(source)
    check_supported(model)
    model = upgraded(model)
    module = Importer(model).run()
    try:
        module.verify()
    except VerifyException as e:
        raise OnnxImportError(f"the imported module does not verify: {e}") from None
    module.attributes["nimble.source"] = StringAttr("onnx")
    return module

