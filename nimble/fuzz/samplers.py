"""The generator's samplers: one per graph op, each adding its op (with the helpers it
needs) to a `ProgramGenerator`'s program, or raising `Reject` when the op cannot go here."""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects.builtin import FloatAttr, IndexType, IntegerAttr, StringAttr, f32, i1, i32, i64
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from nimble.dialects import graph, dynshape
from nimble.dialects.graph.base import bool_attr, i64_array, i64_attr
from nimble.fuzz.values import STATIC_SIZES, Reject, is_bool, value_dims, is_float, is_tensor, is_static

if TYPE_CHECKING:
    from nimble.fuzz.generate import ProgramGenerator


def _unary(cls: type[Operation]) -> Callable[[ProgramGenerator], None]:
    def sample(g: ProgramGenerator) -> None:
        g.make(cls, [g.pick(is_float)])
    return sample


def _binary(cls: type[Operation], operand: Callable[[SSAValue], bool] = is_float) -> Callable[[ProgramGenerator], None]:
    def sample(g: ProgramGenerator) -> None:
        lhs = g.pick(operand)
        if g.rng.random() < 0.3:  # a constant broadcast along some axes
            dims = [d if is_static(d) and g.rng.random() < 0.6 else 1 for d in value_dims(lhs)]
            rhs = g.weights(*dims[int(g.rng.integers(0, len(dims) + 1)):]) if operand is is_float else g.pick(operand)
        else:
            rhs = g.pick(operand)
        if g.rng.random() < 0.5:
            lhs, rhs = rhs, lhs
        g.make(cls, [lhs, rhs])
    return sample


def _compare(cls: type[Operation]) -> Callable[[ProgramGenerator], None]:
    return _binary(cls)


def _logical(cls: type[Operation]) -> Callable[[ProgramGenerator], None]:
    return _binary(cls, is_bool)


def _not(g: ProgramGenerator) -> None:
    g.make(graph.NotOp, [g.pick(is_bool)])


def _where(g: ProgramGenerator) -> None:
    g.make(graph.WhereOp, [g.pick(is_bool), g.pick(is_float), g.pick(is_float)])


def _clip(g: ProgramGenerator) -> None:
    low = float(g.rng.uniform(-1.5, 0.5))
    g.make(graph.ClipOp, [g.pick(is_float)], {"min": FloatAttr(low, f32), "max": FloatAttr(low + float(g.rng.uniform(0.1, 2)), f32)})


def _is_inf(g: ProgramGenerator) -> None:
    g.make(graph.IsInfOp, [g.pick(is_float)], {"detect_positive": bool_attr(bool(g.rng.random() < 0.7)),
                                             "detect_negative": bool_attr(bool(g.rng.random() < 0.7))})


def _cast(g: ProgramGenerator) -> None:
    value = g.pick()
    element = f32 if not is_float(value) else [i32, i64, i1, f32][int(g.rng.integers(4))]
    g.make(graph.CastOp, [value], element=element)


def _softmax(g: ProgramGenerator) -> None:
    x = g.pick(is_float)
    g.make(graph.SoftmaxOp, [x], {"axis": i64_attr(g.axis(x))})


def _running(cls: type[Operation]) -> Callable[[ProgramGenerator], None]:
    def sample(g: ProgramGenerator) -> None:
        x = g.pick(is_float)
        g.make(cls, [x], {"axis": i64_attr(g.axis(x)), "exclusive": bool_attr(bool(g.rng.random() < 0.5)),
                          "reverse": bool_attr(bool(g.rng.random() < 0.5))})
    return sample


def _argmax(g: ProgramGenerator) -> None:
    x = g.pick(is_float)
    g.make(graph.ArgmaxOp, [x], {"axis": i64_attr(g.axis(x)), "keepdims": bool_attr(bool(g.rng.random() < 0.5)),
                                 "select_last_index": bool_attr(bool(g.rng.random() < 0.5))})


def _reduce(cls: type[Operation]) -> Callable[[ProgramGenerator], None]:
    def sample(g: ProgramGenerator) -> None:
        x = g.pick(is_float)
        rank = len(value_dims(x))
        if rank == 0:
            raise Reject
        axes = sorted(g.rng.choice(rank, int(g.rng.integers(1, rank + 1)), replace=False).tolist())
        g.make(cls, [x], {"axes": i64_array(axes), "keepdims": bool_attr(bool(g.rng.random() < 0.5))})
    return sample


def _transpose(g: ProgramGenerator) -> None:
    x = g.pick()
    g.make(graph.TransposeOp, [x], {"perm": i64_array(g.rng.permutation(len(value_dims(x))).tolist())})


def _reshape(g: ProgramGenerator) -> None:
    x = g.pick()
    dims = value_dims(x)
    cut = int(g.rng.integers(0, len(dims) + 1))
    tail = dims[cut:]
    if not all(is_static(d) for d in tail):
        raise Reject
    size = int(np.prod(tail, dtype=np.int64))
    factors = [f for f in range(2, size) if size % f == 0]
    if factors and g.rng.random() < 0.5:  # the static tail unflattened into two dims
        f = factors[int(g.rng.integers(len(factors)))]
        new = [-1, f, size // f]
    else:
        new = [-1, size] if cut < len(dims) else [-1]
    g.make(graph.ReshapeOp, [x], {"shape": i64_array(new)})


def _squeeze(g: ProgramGenerator) -> None:
    x = g.pick()
    ones = [i for i, d in enumerate(value_dims(x)) if d == 1]
    if not ones:
        raise Reject
    g.make(graph.SqueezeOp, [x], {"axes": i64_array(ones[:int(g.rng.integers(1, len(ones) + 1))])})


def _unsqueeze(g: ProgramGenerator) -> None:
    x = g.pick()
    if len(value_dims(x)) >= 4:
        raise Reject
    g.make(graph.UnsqueezeOp, [x], {"axes": i64_array([int(g.rng.integers(0, len(value_dims(x)) + 1))])})


def _concat(g: ProgramGenerator) -> None:
    x = g.pick()
    axis = g.axis(x)
    a = axis % len(value_dims(x))
    others = [v for v in g.pool if v.type != x.type and is_tensor(v, x.type.element_type)
              and len(value_dims(v)) == len(value_dims(x)) and all(p == q for i, (p, q) in enumerate(zip(value_dims(v), value_dims(x))) if i != a)]
    inputs = [x, *(others[int(g.rng.integers(len(others)))] for _ in range(int(g.rng.integers(0, 2))) if others), x]
    g.make(graph.ConcatOp, g.rng.permutation(np.array(inputs, dtype=object)).tolist(), {"axis": i64_attr(axis)})


def _split(g: ProgramGenerator) -> None:
    x = g.pick()
    dims = value_dims(x)
    axes = [i for i, d in enumerate(dims) if is_static(d) and d >= 2]
    if not axes:
        raise Reject
    axis = axes[int(g.rng.integers(len(axes)))]
    d = dims[axis]
    if g.rng.random() < 0.5:
        nums = [k for k in range(2, d + 1) if d % k == 0]
        props = {"axis": i64_attr(axis), "num": i64_attr(nums[int(g.rng.integers(len(nums)))])}
    else:
        first = int(g.rng.integers(1, d))
        props = {"axis": i64_attr(axis), "sizes": i64_array([first, d - first])}
    g.make(graph.SplitOp, [x], props)


def _slice(g: ProgramGenerator) -> None:
    x = g.pick()
    starts, ends, steps = [], [], []
    for d in value_dims(x):
        if is_static(d) and d > 1 and g.rng.random() < 0.7:
            start = int(g.rng.integers(0, d))
            starts.append(start), ends.append(int(g.rng.integers(start + 1, d + 1))), steps.append(int(g.rng.integers(1, 3)))
        else:
            starts.append(0), ends.append(2**62), steps.append(1)
    g.make(graph.SliceOp, [x], {"static_starts": i64_array(starts), "static_ends": i64_array(ends),
                                "steps": i64_array(steps)})


def _gather(g: ProgramGenerator) -> None:
    x = g.pick()
    dims = value_dims(x)
    axes = [i for i, d in enumerate(dims) if is_static(d)]
    if not axes:
        raise Reject
    axis = axes[int(g.rng.integers(len(axes)))]
    shape = [int(s) for s in g.rng.integers(1, 4, int(g.rng.integers(0, 3)))]
    indices = g.constant(g.rng.integers(-dims[axis], dims[axis], shape).astype(np.int64))
    g.make(graph.GatherOp, [x, indices], {"axis": i64_attr(axis)})


def _gather_elements(g: ProgramGenerator) -> None:
    x = g.pick()
    dims = value_dims(x)
    if not dims or not all(is_static(d) for d in dims):
        raise Reject
    axis = int(g.rng.integers(len(dims)))
    shape = [int(g.rng.integers(1, d + 1)) if i != axis else int(g.rng.integers(1, 4)) for i, d in enumerate(dims)]
    indices = g.constant(g.rng.integers(0, dims[axis], shape).astype(np.int64))
    g.make(graph.GatherElementsOp, [x, indices], {"axis": i64_attr(axis)})


def _scatter_elements(g: ProgramGenerator) -> None:
    x = g.pick(is_float)
    dims = value_dims(x)
    if not dims or not all(is_static(d) and d > 0 for d in dims):
        raise Reject
    axis = int(g.rng.integers(len(dims)))
    shape = [int(g.rng.integers(1, d + 1)) if i != axis else int(g.rng.integers(1, 4)) for i, d in enumerate(dims)]
    indices = g.constant(g.rng.integers(-dims[axis], dims[axis], shape).astype(np.int64))
    reduction = str(g.rng.choice(["none", "add", "mul", "max", "min"]))
    g.make(graph.ScatterElementsOp, [x, indices, g.weights(*shape)],
           {"axis": i64_attr(axis), "reduction": StringAttr(reduction)})


def _scatter_nd(g: ProgramGenerator) -> None:
    x = g.pick(is_float)
    dims = value_dims(x)
    if not dims or not all(is_static(d) and d > 0 for d in dims):
        raise Reject
    depth, rows = int(g.rng.integers(1, len(dims) + 1)), int(g.rng.integers(1, 5))
    indices = np.stack([g.rng.integers(-d, d, rows) for d in dims[:depth]], axis=1).astype(np.int64)
    reduction = str(g.rng.choice(["none", "add", "max"]))
    g.make(graph.ScatterNDOp, [x, g.constant(indices), g.weights(rows, *dims[depth:])],
           {"reduction": StringAttr(reduction)})


def _gather_nd(g: ProgramGenerator) -> None:
    x = g.pick()
    dims = value_dims(x)
    if not dims or not all(is_static(d) and d > 0 for d in dims):
        raise Reject
    batch = int(g.rng.integers(0, len(dims)))
    depth = int(g.rng.integers(1, len(dims) - batch + 1))
    rows = [*dims[:batch], int(g.rng.integers(1, 4))]
    indices = np.stack([g.rng.integers(-d, d, rows) for d in dims[batch:batch + depth]], axis=-1)
    g.make(graph.GatherNDOp, [x, g.constant(indices.astype(np.int64))], {"batch_dims": i64_attr(batch)})


def _one_hot(g: ProgramGenerator) -> None:
    x = g.pick()
    dims = value_dims(x)
    if len(dims) > 3 or not all(is_static(d) for d in dims):
        raise Reject
    depth = int(g.rng.integers(1, 6))
    indices = g.constant(g.rng.integers(-depth - 1, depth + 1, dims).astype(np.int64))
    values = g.constant(g.rng.standard_normal(2).astype(np.float32))
    g.make(graph.OneHotOp, [indices, values], {"depth": i64_attr(depth),
                                                "axis": i64_attr(int(g.rng.integers(-len(dims) - 1, len(dims) + 1)))})


def _matmul(g: ProgramGenerator) -> None:
    lhs = g.pick(is_float)
    dims = value_dims(lhs)
    if not dims or not is_static(dims[-1]) or len(dims) > 3:
        raise Reject
    if g.rng.random() < 0.5:
        rhs = g.weights(dims[-1], int(g.rng.choice(STATIC_SIZES)))
    else:
        rhs = g.pick(is_float)
    g.make(graph.MatmulOp, [lhs, rhs])


def _einsum(g: ProgramGenerator) -> None:
    """A contraction with a weight along the last axis, or a product with a value of
    the same type, or one operand; the result keeps a random subset of the subscripts
    in a random order (transposes and sums)."""
    x = g.pick(is_float)
    dims = value_dims(x)
    if not 1 <= len(dims) <= 3:
        raise Reject
    letters = "abc"[:len(dims)]
    choice = g.rng.random()
    if choice < 0.4 and is_static(dims[-1]):
        operands, terms = [x, g.weights(dims[-1], int(g.rng.choice(STATIC_SIZES)))], [letters, letters[-1] + "z"]
        kept = [*letters[:-1], "z"]
    else:
        operands, terms, kept = [x], [letters], list(letters)
        if choice < 0.7:
            operands.append(g.pick(lambda v: v.type == x.type))
            terms.append(letters)
    out = [c for c in kept if g.rng.random() < 0.75]
    order = [out[i] for i in g.rng.permutation(len(out))]
    g.make(graph.EinsumOp, operands, {"equation": StringAttr(f"{','.join(terms)}->{''.join(order)}")})


def _dense(g: ProgramGenerator) -> None:
    x = g.pick(is_float)
    dims = value_dims(x)
    if not dims or not is_static(dims[-1]):
        raise Reject
    out = int(g.rng.choice(STATIC_SIZES))
    g.make(graph.DenseOp, [x, g.weights(out, dims[-1]), g.weights(out)])


def _layer_norm(g: ProgramGenerator) -> None:
    x = g.pick(is_float)
    dims = value_dims(x)
    axis = g.axis(x) % len(dims)
    if not all(is_static(d) for d in dims[axis:]):
        raise Reject
    g.make(graph.LayerNormOp, [x, g.weights(*dims[axis:]), g.weights(*dims[axis:])],
           {"axis": i64_attr(axis), "epsilon": FloatAttr(1e-5, f32)})


def _image(g: ProgramGenerator) -> SSAValue:
    return g.pick(lambda v: is_float(v) and len(value_dims(v)) == 4 and is_static(value_dims(v)[1]))


def _batch_norm(g: ProgramGenerator) -> None:
    x = g.pick(lambda v: is_float(v) and len(value_dims(v)) >= 2 and is_static(value_dims(v)[1]))
    c = value_dims(x)[1]
    g.make(graph.BatchNormOp, [x, g.weights(c), g.weights(c), g.weights(c), g.weights(c, positive=True)],
           {"epsilon": FloatAttr(1e-5, f32)})


def _window(g: ProgramGenerator, x: SSAValue) -> dict[str, Attribute]:
    kernel = [int(k) for k in g.rng.integers(1, 4, 2)]
    props = {"kernel": i64_array(kernel), "strides": i64_array([int(s) for s in g.rng.integers(1, 3, 2)]),
             "padding": i64_array([int(min(p, k - 1)) for p, k in zip(g.rng.integers(0, 2, 4), kernel * 2)]),
             "dilations": i64_array([int(d) for d in g.rng.integers(1, 3, 2)])}
    for d, k, dil in zip(value_dims(x)[2:], kernel, [1, 1]):
        if not is_static(d) or d < dil * (k - 1) + 1:
            raise Reject
    return props


def _conv2d(g: ProgramGenerator) -> None:
    x = _image(g)
    c = value_dims(x)[1]
    groups = int(g.rng.choice([k for k in range(1, c + 1) if c % k == 0]))
    out = groups * int(g.rng.integers(1, 4))
    props = _window(g, x)
    kh, kw = props.pop("kernel").get_values()
    props["groups"] = i64_attr(groups)
    if any(d < dil * (k - 1) + 1 for d, k, dil in zip(value_dims(x)[2:], (kh, kw), props["dilations"].get_values())):
        raise Reject
    bias = g.weights(out) if g.rng.random() < 0.7 else None
    operands = [x, g.weights(out, c // groups, kh, kw), *([bias] if bias is not None else [])]
    g.make(graph.Conv2dOp, operands, props)


def _pool(cls: type[Operation]) -> Callable[[ProgramGenerator], None]:
    def sample(g: ProgramGenerator) -> None:
        x = _image(g)
        props = _window(g, x)
        kernel = props["kernel"].get_values()
        if any(d < dil * (k - 1) + 1 for d, k, dil in zip(value_dims(x)[2:], kernel, props["dilations"].get_values())):
            raise Reject
        if cls is graph.AvgPool2dOp:
            props["count_include_pad"] = bool_attr(bool(g.rng.random() < 0.5))
        g.make(cls, [x], props)
    return sample


def _global_avg_pool(g: ProgramGenerator) -> None:
    g.make(graph.GlobalAvgPool2dOp, [_image(g)])


def _shape_of(g: ProgramGenerator, value: SSAValue) -> SSAValue:
    op = dynshape.OfOp.create(operands=[value], result_types=dynshape.OfOp.result_types_for([value], {}))
    g.block.add_op(op)
    return op.results[0]


def _fill(cls: type[Operation]) -> Callable[[ProgramGenerator], None]:
    def sample(g: ProgramGenerator) -> None:
        props = {"value": FloatAttr(float(g.rng.uniform(-2, 2)), f32)} if cls is graph.FullOp else {}
        g.make(cls, [_shape_of(g, g.pick())], props, element=f32)
    return sample


def _broadcast_to(g: ProgramGenerator) -> None:
    target = g.pick()
    dims = value_dims(target)
    x = g.pick(lambda v: is_tensor(v) and len(value_dims(v)) <= len(dims))
    g.make(graph.BroadcastToOp, [x, _shape_of(g, target)])


def _dynamic_reshape(g: ProgramGenerator) -> None:
    x = g.pick()
    like = [v for v in g.pool if is_tensor(v) and v is not x and _same_size(value_dims(v), value_dims(x))]
    if not like:
        raise Reject
    g.make(graph.DynamicReshapeOp, [x, _shape_of(g, like[int(g.rng.integers(len(like)))])])


def _same_size(a: list[Any], b: list[Any]) -> bool:
    """Whether two dim lists hold the same number of elements at every size of the symbols."""
    if None in a or None in b:
        return False
    return functools.reduce(operator.mul, a, 1) == functools.reduce(operator.mul, b, 1)


def _dim_of(g: ProgramGenerator) -> SSAValue:
    x = g.pick()
    dims = value_dims(x)
    if not dims:
        raise Reject
    axis = int(g.rng.integers(len(dims)))
    op = dynshape.DimOp.create(operands=[x], result_types=[IndexType()], properties={"index": IntegerAttr(axis, i64)})
    g.block.add_op(op)
    return op.results[0]


def _arange(g: ProgramGenerator) -> None:
    stop = _dim_of(g)
    g.make(graph.ArangeOp, [g.index(int(g.rng.integers(0, 2))), stop, g.index(int(g.rng.integers(1, 3)))], element=f32)


def _from_elements(g: ProgramGenerator) -> None:
    g.make(graph.FromElementsOp, [_dim_of(g), g.index(int(g.rng.integers(0, 9)))], element=i64)


def _constant(g: ProgramGenerator) -> None:
    g.weights(*[int(s) for s in g.rng.choice(STATIC_SIZES, int(g.rng.integers(0, 3)))])


def _tuple(g: ProgramGenerator) -> None:
    values = [g.pick() for _ in range(int(g.rng.integers(1, 4)))]
    t = graph.MakeTupleOp(values)
    g.block.add_op(t)
    g.emit(graph.GetItemOp(t.results[0], int(g.rng.integers(len(values)))))


def _condition(g: ProgramGenerator) -> SSAValue:
    """A scalar i1 computed from a value in scope (any of its elements true)."""
    flag = g.make(graph.CastOp, [g.pick(is_bool if g.rng.random() < 0.5 else is_float)], element=i1).results[0]
    rank = len(value_dims(flag))
    if rank:
        flag = g.make(graph.ReduceMaxOp, [flag], {"axes": i64_array(list(range(rank))),
                                                 "keepdims": bool_attr(False)}).results[0]
    return flag


def _if(g: ProgramGenerator) -> None:
    x = g.pick()
    condition = _condition(g)
    then_region = g.region([], lambda _: [g.chain(x)])
    else_region = g.region([], lambda _: [g.chain(x)])
    g.emit(graph.IfOp(condition, [x.type], then_region, else_region))


def _while(g: ProgramGenerator) -> None:
    x = g.pick(is_float)
    trips = g.index(int(g.rng.integers(0, 4)))
    counter = g.index(0)

    cond_block = Block(arg_types=[IndexType(), x.type])
    less = arith.CmpiOp(cond_block.args[0], trips, "slt")
    cond_block.add_ops([less, graph.ConditionOp.create(operands=[less.result])])

    def body(args: list[SSAValue]) -> list[SSAValue]:
        one = g.index(1)
        step = arith.AddiOp(args[0], one)
        g.block.add_op(step)
        return [step.result, g.chain(args[1])]

    body_region = g.region([IndexType(), x.type], body)
    op = graph.WhileOp([counter, x], [IndexType(), x.type], Region(cond_block), body_region)
    g.emit(op)


def _match(g: ProgramGenerator) -> None:
    x = g.pick()
    name = f"Adt{len(g.adts)}"
    g.adts.append(graph.AdtOp(name, [graph.ConstructorOp(f"{name}_some", [x.type]),
                                     graph.ConstructorOp(f"{name}_none", [])]))
    some = graph.ConstructOp(f"{name}_some", [x], name)
    none = graph.ConstructOp(f"{name}_none", [], name)
    condition = _condition(g)
    def made(op: Operation) -> list[SSAValue]:
        g.block.add_op(op)
        return [op.results[0]]

    chosen = graph.IfOp(condition, [some.results[0].type], g.region([], lambda _: made(some)),
                        g.region([], lambda _: made(none)))
    g.block.add_op(chosen)
    cases = [(f"{name}_some", g.region([x.type], lambda args: [g.chain(args[0])])),
             (f"{name}_none", g.region([], lambda _: [g.chain(x)]))]
    g.emit(graph.MatchOp(chosen.results[0], [x.type], cases))


def _nms(g: ProgramGenerator) -> None:
    count = int(g.rng.integers(1, 9))
    corners = g.rng.uniform(0, 10, (count, 2)).astype(np.float32)
    boxes = np.concatenate([corners, corners + g.rng.uniform(0.5, 4, (count, 2)).astype(np.float32)], axis=1)
    scores = g.pick(lambda v: is_float(v) and len(value_dims(v)) == 1 and value_dims(v)[0] == count) \
        if g.rng.random() < 0.5 else g.constant(g.rng.permutation(count).astype(np.float32) / count)
    g.make(graph.NmsOp, [g.constant(boxes), scores],
           {"iou_threshold": FloatAttr(float(g.rng.uniform(0.2, 0.8)), f32),
            "score_threshold": FloatAttr(float(g.rng.uniform(-0.5, 0.5)), f32),
            "max_output": i64_attr(int(g.rng.integers(1, count + 1)))})


def _roi_align(g: ProgramGenerator) -> None:
    x = g.pick(lambda v: is_float(v) and len(value_dims(v)) == 4 and all(is_static(d) for d in value_dims(v)[1:]))
    h, w = value_dims(x)[2:]
    count = int(g.rng.integers(1, 4))
    low = g.rng.uniform(0, [w - 1, h - 1], (count, 2))
    rois = np.concatenate([low, low + g.rng.uniform(0.5, 3, (count, 2))], axis=1).astype(np.float32)
    batch = value_dims(x)[0]
    if not is_static(batch):
        raise Reject
    g.make(graph.RoiAlignOp, [x, g.constant(rois), g.constant(g.rng.integers(0, batch, count).astype(np.int64))],
           {"output_height": i64_attr(int(g.rng.integers(1, 4))), "output_width": i64_attr(int(g.rng.integers(1, 4))),
            "sampling_ratio": i64_attr(int(g.rng.integers(0, 3))),
            "spatial_scale": FloatAttr(1.0, f32)})


SAMPLERS: dict[str, Callable[[ProgramGenerator], None]] = {
    **{cls.name: _unary(cls) for cls in (
        graph.AbsOp, graph.CeilOp, graph.CosOp, graph.ErfOp, graph.ExpOp, graph.FloorOp, graph.GeluOp,
        graph.LogOp, graph.NegOp, graph.ReluOp, graph.RoundOp, graph.RsqrtOp, graph.SigmoidOp, graph.SinOp,
        graph.SqrtOp, graph.TanhOp, graph.IsNanOp, *graph.TRIGONOMETRIC_OPS)},
    **{cls.name: _binary(cls) for cls in (
        graph.AddOp, graph.SubOp, graph.MulOp, graph.DivOp, graph.MaximumOp, graph.MinimumOp, graph.PowOp)},
    **{cls.name: _compare(cls) for cls in (graph.LessOp, graph.GreaterOp, graph.EqualOp)},
    **{cls.name: _logical(cls) for cls in (graph.AndOp, graph.OrOp)},
    **{cls.name: _reduce(cls) for cls in (
        graph.ReduceSumOp, graph.ReduceMeanOp, graph.ReduceMaxOp, graph.ReduceMinOp, graph.ReduceProdOp)},
    **{cls.name: _pool(cls) for cls in (graph.MaxPool2dOp, graph.AvgPool2dOp)},
    **{cls.name: _fill(cls) for cls in (graph.ZerosOp, graph.FullOp)},
    "graph.not": _not, "graph.where": _where, "graph.clip": _clip, "graph.is_inf": _is_inf, "graph.cast": _cast,
    "graph.cumsum": _running(graph.CumSumOp), "graph.cumprod": _running(graph.CumProdOp),
    "graph.softmax": _softmax, "graph.argmax": _argmax, "graph.transpose": _transpose,
    "graph.reshape": _reshape, "graph.squeeze": _squeeze, "graph.unsqueeze": _unsqueeze, "graph.concat": _concat,
    "graph.split": _split, "graph.slice": _slice, "graph.gather": _gather,
    "graph.gather_elements": _gather_elements, "graph.scatter_elements": _scatter_elements,
    "graph.scatter_nd": _scatter_nd, "graph.gather_nd": _gather_nd, "graph.one_hot": _one_hot,
    "graph.matmul": _matmul, "graph.dense": _dense,
    "graph.einsum": _einsum,
    "graph.layer_norm": _layer_norm, "graph.batch_norm": _batch_norm, "graph.conv2d": _conv2d,
    "graph.global_avg_pool2d": _global_avg_pool, "graph.broadcast_to": _broadcast_to,
    "graph.dynamic_reshape": _dynamic_reshape, "graph.arange": _arange, "graph.from_elements": _from_elements,
    "graph.constant": _constant, "graph.make_tuple": _tuple, "graph.if": _if, "graph.while": _while,
    "graph.match": _match, "graph.nms": _nms, "graph.roi_align": _roi_align,
}
"""The op each sampler adds (by name: `nimble-fuzz-differential` reports coverage in these)."""

NOT_GENERATED = {
    "graph.fused": "made by fuse-ops, not written by users",
    "graph.external_constant": "reads a weights file: the frontend tests cover it",
}
"""Graph ops no sampler makes, and why."""
