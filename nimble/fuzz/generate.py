"""Random, well-typed graph-dialect programs for differential testing (as NNSmith does).

A program is one `@main` over 1-3 f32 parameters whose dims are small constants or the
symbols `n` and `m` (bound to sizes at run time, 1 among them). Ops are added one at a
time: the op is drawn first (uniformly over `SAMPLERS`, so every op is exercised as
often as any other), then its operands from the values in scope and its properties at
random; the op's own result-type inference decides whether the choice is legal, and a
result with a dim the types cannot name (an anonymous `?`) is refused, so every op of a
kept program is legal at every size of the symbols. Control flow (`graph.if`,
`graph.while`, `graph.match` on an ADT, tuples) holds nested ops of the same kind.
Values are kept away from undefined behaviour by construction (indices in range,
positive variances, pool windows that fit).
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import (
    AnyFloat,
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IndexType,
    IntegerAttr,
    ModuleOp,
    TensorType,
    f32,
    i1,
    i32,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from nimble.dialects import graph, shape
from nimble.dialects.dim_expr import symbol
from nimble.dialects.graph.base import bool_attr, i64_array, i64_attr
from nimble.dialects.graph.types import tensor
from nimble.dialects.shape_functions import ConcreteDims, symbolic_dims

SYMBOLS = ("n", "m")
STATIC_SIZES = (1, 2, 3, 4, 5, 7, 8, 16)


class Reject(Exception):
    """This choice of op, operands or properties is not legal here: draw another."""


@dataclass
class Program:
    module: ModuleOp
    ops: frozenset[str]
    """The names of the graph ops the program holds (the generator's coverage)."""

    @property
    def text(self) -> str:
        return str(self.module)


def _dims(value: SSAValue) -> list[Any]:
    return symbolic_dims(value.type)


def _is_tensor(value: SSAValue, element: Attribute | None = None) -> bool:
    t = value.type
    return isinstance(t, TensorType) and (element is None or t.element_type == element)


def _float(value: SSAValue) -> bool:
    return isinstance(value.type, TensorType) and isinstance(value.type.element_type, AnyFloat)


def _bool(value: SSAValue) -> bool:
    return _is_tensor(value, i1)


def _known(types: Sequence[Attribute]) -> bool:
    """Every dim of every tensor type static or named (no anonymous `?`)."""
    for t in types:
        if isinstance(t, TensorType) and any(d is None for d in symbolic_dims(t)):
            return False
    return True


def _static(d: Any) -> bool:
    return isinstance(d, int)


PROBES = ({"n": 1, "m": 1}, {"n": 2, "m": 3}, {"n": 3, "m": 2}, {"n": 5, "m": 5})
"""Bindings of the symbols at which every op's shape function must accept its operands
(a type may promise a dim that only holds at some sizes: `2` for the broadcast of 2
and `m`, which needs `m` to be 1 or 2 at run time)."""


def _legal_at_every_size(op: graph.GraphOp) -> bool:
    for sizes in PROBES:
        try:
            values = {v: _stand_in(v, sizes) for v in op.operands}
        except (KeyError, TypeError):
            return True  # an operand this check cannot evaluate (the types decide alone)
        try:
            op.shape_function(ConcreteDims(values))
        except Exception:  # noqa: BLE001 (a ShapeError, in whatever words)
            return False
    return True


def _stand_in(value: SSAValue, sizes: dict[str, int]) -> Any:
    """Something with `value`'s run-time dims (a tensor), or its value (an index or a shape)."""
    if isinstance(value.type, TensorType):
        dims = [d if isinstance(d, int) else d.evaluate(sizes) for d in symbolic_dims(value.type)]
        return np.broadcast_to(np.float32(0), dims)
    owner = value.owner
    if isinstance(owner, arith.ConstantOp):
        return owner.value.value.data
    if isinstance(owner, shape.OfOp):
        return np.shape(_stand_in(owner.operands[0], sizes))
    if isinstance(owner, shape.DimOp):
        return np.shape(_stand_in(owner.operands[0], sizes))[owner.index.value.data]
    raise KeyError(value)


class ProgramGenerator:
    """`program()` draws a new random program from `rng`."""

    def __init__(self, rng: np.random.Generator, max_ops: int = 10):
        self.rng = rng
        self.max_ops = max_ops

    # -- the program ------------------------------------------------------------------
    def program(self) -> Program:
        self.adts: list[graph.AdtOp] = []
        params = [self._param_type() for _ in range(int(self.rng.integers(1, 4)))]
        block = Block(arg_types=params)
        self.block, self.pool, self.depth = block, list(block.args), 0
        self._fill(int(self.rng.integers(2, self.max_ops + 1)))
        outputs = self._outputs()
        block.add_op(func.ReturnOp(*outputs))
        main = func.FuncOp("main", (params, [v.type for v in outputs]), Region(block))
        module = ModuleOp([*self.adts, main])
        ops = frozenset(op.name for op in module.walk() if op.name.startswith("graph."))
        return Program(module, ops)

    def _param_type(self) -> TensorType:
        if self.rng.random() < 0.2:  # an image, NCHW
            dims = [self._dim(0.5), int(self.rng.choice([1, 2, 3, 4, 8])), *self.rng.choice([5, 6, 7, 9], 2)]
        else:
            dims = [self._dim(0.35) for _ in range(int(self.rng.integers(1, 4)))]
        return tensor(f32, [d if not isinstance(d, np.integer) else int(d) for d in dims])

    def _dim(self, p_symbol: float) -> Any:
        if self.rng.random() < p_symbol:
            return symbol(str(self.rng.choice(SYMBOLS)))
        return int(self.rng.choice(STATIC_SIZES))

    def _fill(self, count: int) -> None:
        names = list(SAMPLERS)
        made = tries = 0
        while made < count and tries < 40 * count:
            tries += 1
            sampler = SAMPLERS[names[int(self.rng.integers(len(names)))]]
            mark = len(self.block.ops)
            try:
                sampler(self)
                made += 1
            except Reject:
                for op in list(self.block.ops)[mark:][::-1]:  # helpers of a refused op
                    self.pool = [v for v in self.pool if v.owner is not op]
                    op.detach()
                    op.erase(safe_erase=False)  # (a refused region may still use it)

    def _outputs(self) -> list[SSAValue]:
        """The function's results: the last (up to 3) values nothing uses, so that few ops are dead."""
        tensors = [v for v in self.pool if _is_tensor(v)]
        unused = [v for v in tensors if not v.uses and not isinstance(v.owner, Block)]
        return unused[-3:] or tensors[-1:]

    # -- helpers the samplers use -----------------------------------------------------
    def pick(self, predicate: Callable[[SSAValue], bool] = _is_tensor) -> SSAValue:
        options = [v for v in self.pool if predicate(v)]
        if not options:
            raise Reject
        # Later values more often: deeper programs, fewer dead ops.
        weights = np.arange(1, len(options) + 1, dtype=float)
        return options[int(self.rng.choice(len(options), p=weights / weights.sum()))]

    def emit(self, op: Operation) -> Operation:
        self.block.add_op(op)
        self.pool.extend(r for r in op.results if isinstance(r.type, TensorType))
        return op

    def make(self, cls: type[Operation], operands: Sequence[SSAValue], properties: dict[str, Attribute] | None = None,
             element: Attribute | None = None) -> Operation:
        """`cls` on these operands, its result types inferred; Reject if illegal."""
        properties = properties or {}
        try:
            if issubclass(cls, graph.GraphOp):
                types = cls.result_types_for(list(operands), properties, element)
            else:
                types = cls.result_types_for(list(operands), properties)
            if not _known(types) and not getattr(cls, "DATA_DEPENDENT", False) \
                    and _known([v.type for v in operands]):
                raise Reject  # (a `?` only a data-dependent op, or one downstream of it, may make)
            op = cls.create(operands=list(operands), result_types=types, properties=properties)
            op.verify()
            if isinstance(op, graph.GraphOp) and not _legal_at_every_size(op):
                op.drop_all_references()
                raise Reject
        except Reject:
            raise
        except Exception:  # noqa: BLE001 (the op's own checks say no, in whatever words)
            raise Reject from None
        return self.emit(op)

    def index(self, value: int) -> SSAValue:
        op = arith.ConstantOp(IntegerAttr(value, IndexType()))
        self.block.add_op(op)
        return op.result

    def constant(self, array: np.ndarray) -> SSAValue:
        element = {np.dtype(np.float32): f32, np.dtype(np.int64): i64, np.dtype(np.int32): i32,
                   np.dtype(np.bool_): i1}[array.dtype]
        t = TensorType(element, array.shape)
        values = array.astype(np.int64).ravel().tolist() if element != f32 else array.ravel().tolist()
        return self.emit(graph.ConstantOp(DenseIntOrFPElementsAttr.from_list(t, values))).results[0]

    def weights(self, *shape: int, positive: bool = False) -> SSAValue:
        array = self.rng.standard_normal(shape).astype(np.float32) * np.float32(0.5)
        return self.constant(np.abs(array) + np.float32(0.5) if positive else array)

    def axis(self, value: SSAValue) -> int:
        rank = len(_dims(value))
        if rank == 0:
            raise Reject
        return int(self.rng.integers(-rank, rank))

    def region(self, args: Sequence[Attribute], body: Callable[[list[SSAValue]], list[SSAValue]]) -> Region:
        """A one-block region with arguments of types `args`: `body` fills it (the values in
        scope are the enclosing ones and the arguments) and returns what it yields."""
        if self.depth >= 2:
            raise Reject
        saved = self.block, self.pool
        block = Block(arg_types=args)
        self.block, self.pool = block, [*self.pool, *block.args]
        self.depth += 1
        try:
            values = body(list(block.args))
            block.add_op(graph.YieldOp(values))
        finally:
            self.block, self.pool = saved
            self.depth -= 1
        return Region(block)

    def chain(self, value: SSAValue) -> SSAValue:
        """A few random ops ending in a value of `value`'s type (within a region)."""
        start = len(self.pool)
        self._fill(int(self.rng.integers(1, 4)))
        same = [v for v in self.pool[start:] if v.type == value.type]
        return same[-1] if same else value


# -- samplers: one per op, each adds its op (and the helpers it needs) or raises Reject --

def _unary(cls: type[Operation]) -> Callable[[ProgramGenerator], None]:
    def sample(g: ProgramGenerator) -> None:
        g.make(cls, [g.pick(_float)])
    return sample


def _binary(cls: type[Operation], operand: Callable[[SSAValue], bool] = _float) -> Callable[[ProgramGenerator], None]:
    def sample(g: ProgramGenerator) -> None:
        lhs = g.pick(operand)
        if g.rng.random() < 0.3:  # a constant broadcast along some axes
            dims = [d if _static(d) and g.rng.random() < 0.6 else 1 for d in _dims(lhs)]
            rhs = g.weights(*dims[int(g.rng.integers(0, len(dims) + 1)):]) if operand is _float else g.pick(operand)
        else:
            rhs = g.pick(operand)
        if g.rng.random() < 0.5:
            lhs, rhs = rhs, lhs
        g.make(cls, [lhs, rhs])
    return sample


def _compare(cls: type[Operation]) -> Callable[[ProgramGenerator], None]:
    return _binary(cls)


def _logical(cls: type[Operation]) -> Callable[[ProgramGenerator], None]:
    return _binary(cls, _bool)


def _not(g: ProgramGenerator) -> None:
    g.make(graph.NotOp, [g.pick(_bool)])


def _where(g: ProgramGenerator) -> None:
    g.make(graph.WhereOp, [g.pick(_bool), g.pick(_float), g.pick(_float)])


def _clip(g: ProgramGenerator) -> None:
    low = float(g.rng.uniform(-1.5, 0.5))
    g.make(graph.ClipOp, [g.pick(_float)], {"min": FloatAttr(low, f32), "max": FloatAttr(low + float(g.rng.uniform(0.1, 2)), f32)})


def _is_inf(g: ProgramGenerator) -> None:
    g.make(graph.IsInfOp, [g.pick(_float)], {"detect_positive": bool_attr(bool(g.rng.random() < 0.7)),
                                             "detect_negative": bool_attr(bool(g.rng.random() < 0.7))})


def _cast(g: ProgramGenerator) -> None:
    value = g.pick()
    element = f32 if not _float(value) else [i32, i64, i1, f32][int(g.rng.integers(4))]
    g.make(graph.CastOp, [value], element=element)


def _softmax(g: ProgramGenerator) -> None:
    x = g.pick(_float)
    g.make(graph.SoftmaxOp, [x], {"axis": i64_attr(g.axis(x))})


def _cumsum(g: ProgramGenerator) -> None:
    x = g.pick(_float)
    g.make(graph.CumSumOp, [x], {"axis": i64_attr(g.axis(x)), "exclusive": bool_attr(bool(g.rng.random() < 0.5)),
                                 "reverse": bool_attr(bool(g.rng.random() < 0.5))})


def _argmax(g: ProgramGenerator) -> None:
    x = g.pick(_float)
    g.make(graph.ArgmaxOp, [x], {"axis": i64_attr(g.axis(x)), "keepdims": bool_attr(bool(g.rng.random() < 0.5))})


def _reduce(cls: type[Operation]) -> Callable[[ProgramGenerator], None]:
    def sample(g: ProgramGenerator) -> None:
        x = g.pick(_float)
        rank = len(_dims(x))
        if rank == 0:
            raise Reject
        axes = sorted(g.rng.choice(rank, int(g.rng.integers(1, rank + 1)), replace=False).tolist())
        g.make(cls, [x], {"axes": i64_array(axes), "keepdims": bool_attr(bool(g.rng.random() < 0.5))})
    return sample


def _transpose(g: ProgramGenerator) -> None:
    x = g.pick()
    g.make(graph.TransposeOp, [x], {"perm": i64_array(g.rng.permutation(len(_dims(x))).tolist())})


def _reshape(g: ProgramGenerator) -> None:
    x = g.pick()
    dims = _dims(x)
    cut = int(g.rng.integers(0, len(dims) + 1))
    tail = dims[cut:]
    if not all(_static(d) for d in tail):
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
    ones = [i for i, d in enumerate(_dims(x)) if d == 1]
    if not ones:
        raise Reject
    g.make(graph.SqueezeOp, [x], {"axes": i64_array(ones[:int(g.rng.integers(1, len(ones) + 1))])})


def _unsqueeze(g: ProgramGenerator) -> None:
    x = g.pick()
    if len(_dims(x)) >= 4:
        raise Reject
    g.make(graph.UnsqueezeOp, [x], {"axes": i64_array([int(g.rng.integers(0, len(_dims(x)) + 1))])})


def _concat(g: ProgramGenerator) -> None:
    x = g.pick()
    axis = g.axis(x)
    a = axis % len(_dims(x))
    others = [v for v in g.pool if v.type != x.type and _is_tensor(v, x.type.element_type)
              and len(_dims(v)) == len(_dims(x)) and all(p == q for i, (p, q) in enumerate(zip(_dims(v), _dims(x))) if i != a)]
    inputs = [x, *(others[int(g.rng.integers(len(others)))] for _ in range(int(g.rng.integers(0, 2))) if others), x]
    g.make(graph.ConcatOp, g.rng.permutation(np.array(inputs, dtype=object)).tolist(), {"axis": i64_attr(axis)})


def _split(g: ProgramGenerator) -> None:
    x = g.pick()
    dims = _dims(x)
    axes = [i for i, d in enumerate(dims) if _static(d) and d >= 2]
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
    for d in _dims(x):
        if _static(d) and d > 1 and g.rng.random() < 0.7:
            start = int(g.rng.integers(0, d))
            starts.append(start), ends.append(int(g.rng.integers(start + 1, d + 1))), steps.append(int(g.rng.integers(1, 3)))
        else:
            starts.append(0), ends.append(2**62), steps.append(1)
    g.make(graph.SliceOp, [x], {"static_starts": i64_array(starts), "static_ends": i64_array(ends),
                                "steps": i64_array(steps)})


def _gather(g: ProgramGenerator) -> None:
    x = g.pick()
    dims = _dims(x)
    axes = [i for i, d in enumerate(dims) if _static(d)]
    if not axes:
        raise Reject
    axis = axes[int(g.rng.integers(len(axes)))]
    shape = [int(s) for s in g.rng.integers(1, 4, int(g.rng.integers(0, 3)))]
    indices = g.constant(g.rng.integers(-dims[axis], dims[axis], shape).astype(np.int64))
    g.make(graph.GatherOp, [x, indices], {"axis": i64_attr(axis)})


def _gather_elements(g: ProgramGenerator) -> None:
    x = g.pick()
    dims = _dims(x)
    if not dims or not all(_static(d) for d in dims):
        raise Reject
    axis = int(g.rng.integers(len(dims)))
    shape = [int(g.rng.integers(1, d + 1)) if i != axis else int(g.rng.integers(1, 4)) for i, d in enumerate(dims)]
    indices = g.constant(g.rng.integers(0, dims[axis], shape).astype(np.int64))
    g.make(graph.GatherElementsOp, [x, indices], {"axis": i64_attr(axis)})


def _matmul(g: ProgramGenerator) -> None:
    lhs = g.pick(_float)
    dims = _dims(lhs)
    if not dims or not _static(dims[-1]) or len(dims) > 3:
        raise Reject
    if g.rng.random() < 0.5:
        rhs = g.weights(dims[-1], int(g.rng.choice(STATIC_SIZES)))
    else:
        rhs = g.pick(_float)
    g.make(graph.MatmulOp, [lhs, rhs])


def _dense(g: ProgramGenerator) -> None:
    x = g.pick(_float)
    dims = _dims(x)
    if not dims or not _static(dims[-1]):
        raise Reject
    out = int(g.rng.choice(STATIC_SIZES))
    g.make(graph.DenseOp, [x, g.weights(out, dims[-1]), g.weights(out)])


def _layer_norm(g: ProgramGenerator) -> None:
    x = g.pick(_float)
    dims = _dims(x)
    axis = g.axis(x) % len(dims)
    if not all(_static(d) for d in dims[axis:]):
        raise Reject
    g.make(graph.LayerNormOp, [x, g.weights(*dims[axis:]), g.weights(*dims[axis:])],
           {"axis": i64_attr(axis), "epsilon": FloatAttr(1e-5, f32)})


def _image(g: ProgramGenerator) -> SSAValue:
    return g.pick(lambda v: _float(v) and len(_dims(v)) == 4 and _static(_dims(v)[1]))


def _batch_norm(g: ProgramGenerator) -> None:
    x = g.pick(lambda v: _float(v) and len(_dims(v)) >= 2 and _static(_dims(v)[1]))
    c = _dims(x)[1]
    g.make(graph.BatchNormOp, [x, g.weights(c), g.weights(c), g.weights(c), g.weights(c, positive=True)],
           {"epsilon": FloatAttr(1e-5, f32)})


def _window(g: ProgramGenerator, x: SSAValue) -> dict[str, Attribute]:
    kernel = [int(k) for k in g.rng.integers(1, 4, 2)]
    props = {"kernel": i64_array(kernel), "strides": i64_array([int(s) for s in g.rng.integers(1, 3, 2)]),
             "padding": i64_array([int(min(p, k - 1)) for p, k in zip(g.rng.integers(0, 2, 4), kernel * 2)]),
             "dilations": i64_array([int(d) for d in g.rng.integers(1, 3, 2)])}
    for d, k, dil in zip(_dims(x)[2:], kernel, [1, 1]):
        if not _static(d) or d < dil * (k - 1) + 1:
            raise Reject
    return props


def _conv2d(g: ProgramGenerator) -> None:
    x = _image(g)
    c = _dims(x)[1]
    groups = int(g.rng.choice([k for k in range(1, c + 1) if c % k == 0]))
    out = groups * int(g.rng.integers(1, 4))
    props = _window(g, x)
    kh, kw = props.pop("kernel").get_values()
    props["groups"] = i64_attr(groups)
    if any(d < dil * (k - 1) + 1 for d, k, dil in zip(_dims(x)[2:], (kh, kw), props["dilations"].get_values())):
        raise Reject
    bias = g.weights(out) if g.rng.random() < 0.7 else None
    operands = [x, g.weights(out, c // groups, kh, kw), *([bias] if bias is not None else [])]
    g.make(graph.Conv2dOp, operands, props)


def _pool(cls: type[Operation]) -> Callable[[ProgramGenerator], None]:
    def sample(g: ProgramGenerator) -> None:
        x = _image(g)
        props = _window(g, x)
        kernel = props["kernel"].get_values()
        if any(d < dil * (k - 1) + 1 for d, k, dil in zip(_dims(x)[2:], kernel, props["dilations"].get_values())):
            raise Reject
        if cls is graph.AvgPool2dOp:
            props["count_include_pad"] = bool_attr(bool(g.rng.random() < 0.5))
        g.make(cls, [x], props)
    return sample


def _global_avg_pool(g: ProgramGenerator) -> None:
    g.make(graph.GlobalAvgPool2dOp, [_image(g)])


def _shape_of(g: ProgramGenerator, value: SSAValue) -> SSAValue:
    op = shape.OfOp.create(operands=[value], result_types=shape.OfOp.result_types_for([value], {}))
    g.block.add_op(op)
    return op.results[0]


def _fill(cls: type[Operation]) -> Callable[[ProgramGenerator], None]:
    def sample(g: ProgramGenerator) -> None:
        props = {"value": FloatAttr(float(g.rng.uniform(-2, 2)), f32)} if cls is graph.FullOp else {}
        g.make(cls, [_shape_of(g, g.pick())], props, element=f32)
    return sample


def _broadcast_to(g: ProgramGenerator) -> None:
    target = g.pick()
    dims = _dims(target)
    x = g.pick(lambda v: _is_tensor(v) and len(_dims(v)) <= len(dims))
    g.make(graph.BroadcastToOp, [x, _shape_of(g, target)])


def _dynamic_reshape(g: ProgramGenerator) -> None:
    x = g.pick()
    like = [v for v in g.pool if _is_tensor(v) and v is not x and _same_size(_dims(v), _dims(x))]
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
    dims = _dims(x)
    if not dims:
        raise Reject
    axis = int(g.rng.integers(len(dims)))
    op = shape.DimOp.create(operands=[x], result_types=[IndexType()], properties={"index": IntegerAttr(axis, i64)})
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
    flag = g.make(graph.CastOp, [g.pick(_bool if g.rng.random() < 0.5 else _float)], element=i1).results[0]
    rank = len(_dims(flag))
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
    x = g.pick(_float)
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
    scores = g.pick(lambda v: _float(v) and len(_dims(v)) == 1 and _dims(v)[0] == count) \
        if g.rng.random() < 0.5 else g.constant(g.rng.permutation(count).astype(np.float32) / count)
    g.make(graph.NmsOp, [g.constant(boxes), scores],
           {"iou_threshold": FloatAttr(float(g.rng.uniform(0.2, 0.8)), f32),
            "score_threshold": FloatAttr(float(g.rng.uniform(-0.5, 0.5)), f32),
            "max_output": i64_attr(int(g.rng.integers(1, count + 1)))})


def _roi_align(g: ProgramGenerator) -> None:
    x = g.pick(lambda v: _float(v) and len(_dims(v)) == 4 and all(_static(d) for d in _dims(v)[1:]))
    h, w = _dims(x)[2:]
    count = int(g.rng.integers(1, 4))
    low = g.rng.uniform(0, [w - 1, h - 1], (count, 2))
    rois = np.concatenate([low, low + g.rng.uniform(0.5, 3, (count, 2))], axis=1).astype(np.float32)
    batch = _dims(x)[0]
    if not _static(batch):
        raise Reject
    g.make(graph.RoiAlignOp, [x, g.constant(rois), g.constant(g.rng.integers(0, batch, count).astype(np.int64))],
           {"output_height": i64_attr(int(g.rng.integers(1, 4))), "output_width": i64_attr(int(g.rng.integers(1, 4))),
            "sampling_ratio": i64_attr(int(g.rng.integers(0, 3))),
            "spatial_scale": FloatAttr(1.0, f32)})


SAMPLERS: dict[str, Callable[[ProgramGenerator], None]] = {
    **{cls.name: _unary(cls) for cls in (
        graph.AbsOp, graph.CeilOp, graph.CosOp, graph.ErfOp, graph.ExpOp, graph.FloorOp, graph.GeluOp,
        graph.LogOp, graph.NegOp, graph.ReluOp, graph.RoundOp, graph.RsqrtOp, graph.SigmoidOp, graph.SinOp,
        graph.SqrtOp, graph.TanhOp, graph.IsNanOp)},
    **{cls.name: _binary(cls) for cls in (
        graph.AddOp, graph.SubOp, graph.MulOp, graph.DivOp, graph.MaximumOp, graph.MinimumOp, graph.PowOp)},
    **{cls.name: _compare(cls) for cls in (graph.LessOp, graph.GreaterOp, graph.EqualOp)},
    **{cls.name: _logical(cls) for cls in (graph.AndOp, graph.OrOp)},
    **{cls.name: _reduce(cls) for cls in (graph.ReduceSumOp, graph.ReduceMeanOp, graph.ReduceMaxOp)},
    **{cls.name: _pool(cls) for cls in (graph.MaxPool2dOp, graph.AvgPool2dOp)},
    **{cls.name: _fill(cls) for cls in (graph.ZerosOp, graph.FullOp)},
    "graph.not": _not, "graph.where": _where, "graph.clip": _clip, "graph.is_inf": _is_inf, "graph.cast": _cast,
    "graph.softmax": _softmax, "graph.cumsum": _cumsum, "graph.argmax": _argmax, "graph.transpose": _transpose,
    "graph.reshape": _reshape, "graph.squeeze": _squeeze, "graph.unsqueeze": _unsqueeze, "graph.concat": _concat,
    "graph.split": _split, "graph.slice": _slice, "graph.gather": _gather,
    "graph.gather_elements": _gather_elements, "graph.matmul": _matmul, "graph.dense": _dense,
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
