"""Index rules: how a non-elementwise graph op's element at an index is computed.

One rule per op kind, `rule(kb, op, result_number, idx) -> scalar`:
- injective ops map the output index to an input index (transpose, reshape, slice,
  concat, split, squeeze/unsqueeze, gather) and read the input there;
- reductions and heavy ops (reduce_*, argmax, softmax, layer_norm; matmul, dense and
  einsum in `contraction_rules.py`; conv2d, pooling and roi_align in `window_rules.py`,
  depthwise and narrow grouped convs in `grouped_conv.py`) emit `loop.reduce` nests at
  that point, with the producer's value computed inside (so an elementwise prologue is
  fused for free).
Elementwise ops are in `scalar.SCALAR`; the operand index of an elementwise op is
`broadcast_index` (numpy broadcasting, plus per-op maps such as batch_norm's channel axis).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from xdsl.dialects import math as xmath
from xdsl.dialects.builtin import Float32Type, IntegerType, ShapedType
from xdsl.ir import Operation, SSAValue

from nimble.dialects import arith, graph, loop
from nimble.dialects.graph.base import normalize_axes, normalize_axis
from nimble.lowering.kernels.contraction_rules import dense, einsum, matmul
from nimble.lowering.kernels.grouped_conv import conv2d, conv2d_into
from nimble.lowering.kernels.indexed_rules import INDEXED_RULES
from nimble.lowering.kernels.kernel_parts import Dim, NoLoopLowering, broadcast_axes, clamped_index
from nimble.lowering.kernels.roi_align_rules import roi_align
from nimble.lowering.kernels.scalar import const, is_float
from nimble.lowering.kernels.window_rules import pool, pool_into

if TYPE_CHECKING:
    from nimble.lowering.kernels.kernel_builder import KernelBuilder

Rule = Callable[["KernelBuilder", Operation, int, list[Dim]], SSAValue]


# ------------------------------------------------------------------------------------
# Broadcasting


def numpy_broadcast(kb: KernelBuilder, value: SSAValue, out_dims: Sequence[Dim], idx: Sequence[Dim]) -> list[Dim]:
    return broadcast_axes(kb, kb.dims(value), out_dims, idx)


def broadcast_index(kb: KernelBuilder, value: SSAValue, out_dims: Sequence[Dim], idx: Sequence[Dim],
                    op: Operation) -> list[Dim]:
    if not isinstance(value.type, ShapedType):
        return []
    if isinstance(op, graph.BatchNormOp) and value is not op.input:
        return [idx[1]]  # per-channel parameters
    return numpy_broadcast(kb, value, out_dims, idx)


# ------------------------------------------------------------------------------------
# Injective ops


def _transpose(kb: KernelBuilder, op: graph.TransposeOp, r: int, idx: list[Dim]) -> SSAValue:
    perm = list(op.perm.get_values())
    src: list[Dim] = [0] * len(perm)
    for out_axis, in_axis in enumerate(perm):
        src[in_axis] = idx[out_axis]
    return kb.at(op.input, src)


def linearize(kb: KernelBuilder, idx: Sequence[Dim], dims: Sequence[Dim]) -> Dim:
    flat: Dim = 0
    for i, d in zip(idx, dims):
        flat = kb.iadd(kb.imul(flat, d), i)
    return flat


def delinearize(kb: KernelBuilder, flat: Dim, dims: Sequence[Dim]) -> list[Dim]:
    """The index of the in-range position `flat` in `dims` (the outermost needs no `rem`)."""
    out: list[Dim] = []
    for n, d in enumerate(reversed(dims)):
        if d == 1:
            out.append(0)
        elif n == len(dims) - 1:
            out.append(flat)
        else:
            out.append(kb.ibinary("rem", flat, d))
            flat = kb.ibinary("div", flat, d)
    return out[::-1]


def _product(dims: Sequence[Dim]) -> int | None:
    total = 1
    for d in dims:
        if not isinstance(d, int):
            return None
        total *= d
    return total


def _peel(a: Sequence[Dim], b: Sequence[Dim]) -> tuple[int, int] | None:
    """The shortest prefixes of `a` and `b` with the same static number of elements, or
    the first dims alone when they are one run-time value (a dim kept by name)."""
    if a and b and isinstance(a[0], SSAValue) and a[0] is b[0]:
        return 1, 1
    n = m = 1
    while n <= len(a) and m <= len(b):
        pa, pb = _product(a[:n]), _product(b[:m])
        if pa is None or pb is None:
            return None
        if pa == pb:
            return n, m
        if pa < pb:
            n += 1
        else:
            m += 1
    return None


def reshape_groups(src: Sequence[Dim], out: Sequence[Dim]) -> list[tuple[slice, slice]]:
    """Groups of consecutive source and output axes holding the same elements: static
    groups peeled from both ends, the rest one group. An output index maps to the source
    group by group: a dim split or merged costs no division outside its group (BERT's
    `[s, 768] -> [s, 12, 64]` reads row s at h * 64 + d)."""
    head: list[tuple[slice, slice]] = []
    tail: list[tuple[slice, slice]] = []
    i, o, i_end, o_end = 0, 0, len(src), len(out)
    while (step := _peel(src[i:i_end], out[o:o_end])) is not None:
        head.append((slice(i, i + step[0]), slice(o, o + step[1])))
        i, o = i + step[0], o + step[1]
    while (step := _peel(src[i:i_end][::-1], out[o:o_end][::-1])) is not None:
        tail.append((slice(i_end - step[0], i_end), slice(o_end - step[1], o_end)))
        i_end, o_end = i_end - step[0], o_end - step[1]
    middle = [(slice(i, i_end), slice(o, o_end))] if i < i_end or o < o_end else []
    return head + middle + tail[::-1]


def _reshape(kb: KernelBuilder, op: Operation, r: int, idx: list[Dim]) -> SSAValue:
    out_dims, in_dims = kb.dims(op.results[0]), kb.dims(op.input)
    src: list[Dim] = []
    for in_axes, out_axes in reshape_groups(in_dims, out_dims):
        flat = linearize(kb, idx[out_axes], out_dims[out_axes])
        src += delinearize(kb, flat, in_dims[in_axes])
    return kb.at(op.input, src)


def _broadcast_to(kb: KernelBuilder, op: graph.BroadcastToOp, r: int, idx: list[Dim]) -> SSAValue:
    return kb.at(op.input, numpy_broadcast(kb, op.input, kb.dims(op.result), idx))


def _squeeze(kb: KernelBuilder, op: graph.SqueezeOp, r: int, idx: list[Dim]) -> SSAValue:
    rank = len(kb.dims(op.input))
    axes = set(normalize_axes(list(op.axes.get_values()), rank))
    it = iter(idx)
    return kb.at(op.input, [0 if a in axes else next(it) for a in range(rank)])


def _unsqueeze(kb: KernelBuilder, op: graph.UnsqueezeOp, r: int, idx: list[Dim]) -> SSAValue:
    rank = len(idx)
    axes = set(normalize_axes(list(op.axes.get_values()), rank))
    return kb.at(op.input, [i for a, i in enumerate(idx) if a not in axes])


def _slice(kb: KernelBuilder, op: graph.SliceOp, r: int, idx: list[Dim]) -> SSAValue:
    dims = kb.dims(op.input)
    src: list[Dim] = []
    for n, (start, _end), step, i in zip(dims, op.bounds(), op.steps.get_values(), idx):
        s = kb.k.normalize_index(kb.k.index(start) if isinstance(start, SSAValue) else start, n)
        src.append(kb.iadd(s, kb.imul(i, step)))
    return kb.at(op.input, src)


def _split(kb: KernelBuilder, op: graph.SplitOp, r: int, idx: list[Dim]) -> SSAValue:
    axis = normalize_axis(op.axis.value.data, len(idx))
    offset: Dim = 0
    for prev in op.outputs[:r]:
        offset = kb.iadd(offset, kb.dims(prev)[axis])
    return kb.at(op.input, [kb.iadd(i, offset) if a == axis else i for a, i in enumerate(idx)])


def _concat(kb: KernelBuilder, op: graph.ConcatOp, r: int, idx: list[Dim]) -> SSAValue:
    axis = normalize_axis(op.axis.value.data, len(idx))
    i = idx[axis]
    offset: Dim = 0
    result: SSAValue | None = None
    for part in op.inputs:
        size = kb.dims(part)[axis]
        local = kb.ibinary("sub", i, offset)
        clamped = kb.ibinary("min", kb.ibinary("max", local, 0), kb.ibinary("sub", size, 1))
        value = kb.at(part, [clamped if a == axis else j for a, j in enumerate(idx)])
        if result is None:
            result = value
        else:  # parts are in order: from this part's offset on, take this part
            inside = kb.emit(arith.CmpiOp(kb.index(i), kb.index(offset), "sge"))
            result = kb.emit(arith.SelectOp(inside, value, result))
        offset = kb.iadd(offset, size)
    return result


def _concat_into(kb: KernelBuilder, op: graph.ConcatOp, buffer: SSAValue) -> bool:
    """A concat that is a kernel output, written part by part into its slice of the
    buffer (see `INTO_OUTPUT`): each element computes its own part only, where the
    per-element form (`_concat`) computes every part, with its fused producers, and
    selects one (12 relus concatenated, 32 x 28 x 28 each, 1 thread: 0.276 ms a call in
    that form, 0.102 part by part)."""
    axis = normalize_axis(op.axis.value.data, len(kb.dims(op.result)))

    def level(part: SSAValue, dims: list[Dim], offset: Dim, idx: list[SSAValue]) -> None:
        if len(idx) < len(dims):
            kb.foreach(dims[len(idx)], lambda i: level(part, dims, offset, [*idx, i]))
            return
        dest = [kb.iadd(i, offset) if a == axis else i for a, i in enumerate(idx)]
        kb.store_buffer(kb.at(part, idx), buffer, dest)

    def parts() -> None:  # (offsets computed where the nests are: staged before the body)
        offset: Dim = 0
        for part in op.inputs:
            dims = kb.dims(part)
            level(part, dims, offset, [])
            offset = kb.iadd(offset, dims[axis])

    kb.staged(("concat", op), parts)
    return True


def _gather(kb: KernelBuilder, op: graph.GatherOp, r: int, idx: list[Dim]) -> SSAValue:
    dims = kb.dims(op.input)
    axis = normalize_axis(op.axis.value.data, len(dims))
    irank = len(kb.dims(op.indices))
    safe = clamped_index(kb, kb.at(op.indices, idx[axis:axis + irank]), dims[axis])
    return kb.at(op.input, [*idx[:axis], safe, *idx[axis + irank:]])


def _gather_elements(kb: KernelBuilder, op: graph.GatherElementsOp, r: int, idx: list[Dim]) -> SSAValue:
    dims = kb.dims(op.input)
    axis = normalize_axis(op.axis.value.data, len(dims))
    safe = clamped_index(kb, kb.at(op.indices, idx), dims[axis])
    return kb.at(op.input, [*idx[:axis], safe, *idx[axis + 1:]])


# ------------------------------------------------------------------------------------
# Reductions


def _with_axes(idx: Sequence[Dim], axes: Sequence[int], ivs: Sequence[SSAValue], keepdims: bool) -> list[Dim]:
    """The input index of a reduction: the output index with the reduced axes' ivs."""
    src: list[Dim] = []
    it_out = iter(idx)
    it_iv = iter(ivs)
    rank = len(idx) if keepdims else len(idx) + len(axes)
    for a in range(rank):
        if a in axes:
            src.append(next(it_iv))
            if keepdims:
                next(it_out)
        else:
            src.append(next(it_out))
    return src


def _reduce_axes(kb: KernelBuilder, x: SSAValue, idx: Sequence[Dim], axes: Sequence[int], keepdims: bool,
                 kind: loop.Combiner, value: Callable[[SSAValue], SSAValue] = lambda v: v) -> SSAValue:
    dims = kb.dims(x)
    t = x.type.get_element_type()
    init = kb.identity(kind, t)
    return kb.reduce_nest([dims[a] for a in axes], init, kind,
                          lambda ivs: value(kb.at(x, _with_axes(idx, axes, ivs, keepdims))))


def _count(kb: KernelBuilder, dims: Sequence[Dim], t) -> SSAValue:
    n: Dim = 1
    for d in dims:
        n = kb.imul(n, d)
    as_int = kb.emit(arith.IndexCastOp(kb.index(n), IntegerType(64)))
    return kb.emit(arith.SIToFPOp(as_int, t))


COMBINER = {graph.ReduceSumOp: loop.Combiner.ADD, graph.ReduceMeanOp: loop.Combiner.ADD,
            graph.ReduceProdOp: loop.Combiner.MUL, graph.ReduceMaxOp: loop.Combiner.MAX,
            graph.ReduceMinOp: loop.Combiner.MIN, graph.CumSumOp: loop.Combiner.ADD,
            graph.CumProdOp: loop.Combiner.MUL}
"""How each reduction and running reduction combines its elements."""


def _reduce(kb: KernelBuilder, op: graph.ReduceOp, r: int, idx: list[Dim]) -> SSAValue:
    axes = op.reduced_axes()
    keep = bool(op.keepdims.value.data)
    total = _reduce_axes(kb, op.input, idx, axes, keep, COMBINER[type(op)])
    if isinstance(op, graph.ReduceMeanOp):
        if not is_float(total.type):
            raise NoLoopLowering("reduce_mean of integers")
        dims = kb.dims(op.input)
        total = kb.emit(arith.DivfOp(total, _count(kb, [dims[a] for a in axes], total.type)))
    return total


def _argmax(kb: KernelBuilder, op: graph.ArgmaxOp, r: int, idx: list[Dim]) -> SSAValue:
    dims = kb.dims(op.input)
    axis = normalize_axis(op.axis.value.data, len(dims))
    keep = bool(op.keepdims.value.data)
    best = _reduce_axes(kb, op.input, idx, [axis], keep, loop.Combiner.MAX)
    last = bool(op.select_last_index.value.data)
    n = kb.index(-1) if last else kb.index(dims[axis])
    # The first position holding the maximum (numpy's tie rule), or the last; with a NaN
    # in the row the maximum is NaN and numpy answers the first NaN (or the last).

    def first(k: SSAValue) -> list[SSAValue]:
        x = kb.at(op.input, _with_axes(idx, [axis], [k], keep))
        if is_float(x.type):
            hit = kb.emit(arith.OrIOp(kb.emit(arith.CmpfOp(x, best, "oeq")), kb.emit(arith.CmpfOp(x, x, "uno"))))
        else:
            hit = kb.emit(arith.CmpiOp(x, best, "eq"))
        return [kb.emit(arith.SelectOp(hit, k, n))]

    pos = kb.reduce(dims[axis], [n], [loop.Combiner.MAX if last else loop.Combiner.MIN], first)[0]
    return kb.emit(arith.IndexCastOp(pos, op.result.type.get_element_type()))


def _running(kb: KernelBuilder, op: graph.RunningOp, r: int, idx: list[Dim]) -> SSAValue:
    """Each element combines its prefix (or suffix) along the axis: a reduction whose
    trip count is the element's position, quadratic in the axis length (CumSum in
    exported models runs over position ids, not activations)."""
    axis = op.scan_axis()
    at = idx[axis]
    exclusive, reverse = bool(op.exclusive.value.data), bool(op.reverse.value.data)
    if reverse:
        first = kb.iadd(at, 1) if exclusive else at
        count = kb.ibinary("sub", kb.dims(op.input)[axis], first)
    else:
        first, count = 0, at if exclusive else kb.iadd(at, 1)

    def term(k: SSAValue) -> list[SSAValue]:
        src = list(idx)
        src[axis] = kb.iadd(first, k)
        return [kb.at(op.input, src)]

    kind = COMBINER[type(op)]
    return kb.reduce(count, [kb.identity(kind, op.result.type.element_type)], [kind], term)[0]


SOFTMAX_EXP_FLOOR = -87.0
"""Where a softmax's f32 exponentials become 0: e^-87 = 1.6e-38, just above the smallest
normal f32 (1.2e-38; exp's polynomial reaches it through 2^-126 times a factor < 1)."""


def _softmax_exp(kb: KernelBuilder, v: SSAValue, row_max: SSAValue) -> SSAValue:
    """exp(v - max) for a softmax. In f32 a difference below `SOFTMAX_EXP_FLOOR` gives 0
    (off by < 1.6e-38, as XNNPACK's softmax flushes), never a denormal: a causal mask
    makes half the differences ~-1e38, and arithmetic on denormals takes microcode
    assists in every lane that meets one (4 x 4 x 24 x 24, half masked, 1 thread)."""
    d = kb.emit(arith.SubfOp(v, row_max))
    if not isinstance(d.type, Float32Type):
        return kb.emit(xmath.ExpOp(d))
    low = const(kb.emit, SOFTMAX_EXP_FLOOR, d.type)
    e = kb.emit(xmath.ExpOp(kb.emit(arith.MaximumfOp(d, low))))
    return kb.emit(arith.SelectOp(kb.emit(arith.CmpfOp(d, low, "olt")), const(kb.emit, 0.0, d.type), e))


def _softmax(kb: KernelBuilder, op: graph.SoftmaxOp, r: int, idx: list[Dim]) -> SSAValue:
    axis = normalize_axis(op.axis.value.data, len(idx))
    x = op.input
    row_max = _reduce_axes(kb, x, idx, [axis], True, loop.Combiner.MAX)
    total = _reduce_axes(kb, x, idx, [axis], True, loop.Combiner.ADD, lambda v: _softmax_exp(kb, v, row_max))
    e = _softmax_exp(kb, kb.at(x, idx), row_max)
    # Times the reciprocal, taken once per row: 4 x 128 x 128 at 1 thread 75.5 us, 88.9
    # with a division per element.
    inverse = kb.emit(arith.DivfOp(const(kb.emit, 1.0, e.type), total))
    return kb.emit(arith.MulfOp(e, inverse))


def _softmax_into(kb: KernelBuilder, op: graph.SoftmaxOp, buffer: SSAValue) -> bool:
    """A softmax along the last axis that is a kernel output, computed in that buffer (see
    `INTO_OUTPUT`): per row the max, then `out[k] = exp(x[k] - max)` summed as it is
    stored, then `out[k] *= 1 / sum`: one exponential per element, where the per-element
    form (`_softmax`, for a softmax its group reads on) takes it for the sum and again for
    the element."""
    dims = kb.dims(op.result)
    t = op.result.type.get_element_type()
    n, last = dims[-1], len(dims) - 1
    if normalize_axis(op.axis.value.data, len(dims)) != last or not is_float(t):
        return False

    def row(outer: list[SSAValue]) -> None:
        row_max = _reduce_axes(kb, op.input, [*outer, 0], [last], True, loop.Combiner.MAX)

        def exp_stored(k: SSAValue) -> list[SSAValue]:
            e = _softmax_exp(kb, kb.at(op.input, [*outer, k]), row_max)
            kb.store_buffer(e, buffer, [*outer, k])
            return [e]

        total = kb.reduce(n, [kb.identity(loop.Combiner.ADD, t)], [loop.Combiner.ADD], exp_stored)[0]
        inverse = kb.emit(arith.DivfOp(const(kb.emit, 1.0, t), total))
        kb.foreach(n, lambda k: kb.store_buffer(kb.emit(arith.MulfOp(kb.load_buffer(buffer, [*outer, k]), inverse)),
                                                buffer, [*outer, k]))

    def level(outer: list[SSAValue]) -> None:
        if len(outer) == last:
            row(outer)
        else:
            kb.foreach(dims[len(outer)], lambda i: level([*outer, i]))

    kb.staged(("softmax", op), lambda: level([]))
    return True


def _layer_norm(kb: KernelBuilder, op: graph.LayerNormOp, r: int, idx: list[Dim]) -> SSAValue:
    x = op.input
    dims = kb.dims(x)
    axes = list(range(op.first_axis(), len(dims)))
    t = x.type.get_element_type()
    count = _count(kb, [dims[a] for a in axes], t)
    mean = kb.emit(arith.DivfOp(_reduce_axes(kb, x, idx, axes, True, loop.Combiner.ADD), count))

    def square(v: SSAValue) -> SSAValue:
        d = kb.emit(arith.SubfOp(v, mean))
        return kb.emit(arith.MulfOp(d, d))

    var = kb.emit(arith.DivfOp(_reduce_axes(kb, x, idx, axes, True, loop.Combiner.ADD, square), count))
    eps = const(kb.emit, op.epsilon.value.data, t)
    inv = kb.emit(arith.DivfOp(const(kb.emit, 1.0, t), kb.emit(xmath.SqrtOp(kb.emit(arith.AddfOp(var, eps))))))
    y = kb.emit(arith.MulfOp(kb.emit(arith.SubfOp(kb.at(x, idx), mean)), inv))
    tail = idx[axes[0]:]
    y = kb.emit(arith.MulfOp(y, kb.at(op.scale, tail)))
    if op.bias is not None:
        y = kb.emit(arith.AddfOp(y, kb.at(op.bias, tail)))
    return y


def _global_avg_pool(kb: KernelBuilder, op: graph.GlobalAvgPool2dOp, r: int, idx: list[Dim]) -> SSAValue:
    dims = kb.dims(op.input)
    total = _reduce_axes(kb, op.input, idx, [2, 3], True, loop.Combiner.ADD)
    return kb.emit(arith.DivfOp(total, _count(kb, dims[2:], total.type)))


# ------------------------------------------------------------------------------------
# Constants and ranges


def _splat(kb: KernelBuilder, op: graph.ConstantOp, r: int, idx: list[Dim]) -> SSAValue:
    """A constant whose elements are all equal (a literal inside a group: the spatial
    lowering's cells; `fuse-ops` keeps constants out of groups)."""
    values = op.value.get_values()
    if not values or any(v != values[0] for v in values):
        raise NoLoopLowering(f"{op.name} with distinct elements has no loop lowering inside a group")
    return const(kb.emit, values[0], op.result.type.element_type)


def _fill(kb: KernelBuilder, op: graph.ZerosOp | graph.FullOp, r: int, idx: list[Dim]) -> SSAValue:
    return const(kb.emit, op.fill_value(), op.result.type.element_type)


def _arange(kb: KernelBuilder, op: graph.ArangeOp, r: int, idx: list[Dim]) -> SSAValue:
    """start + i * step, exact in index arithmetic, then converted as the reference does."""
    value = kb.index(kb.iadd(kb.k.index(op.start), kb.imul(idx[0], kb.k.index(op.step))))
    t = op.result.type.get_element_type()
    if is_float(t):
        return kb.emit(arith.SIToFPOp(kb.emit(arith.IndexCastOp(value, IntegerType(64))), t))
    if isinstance(t, IntegerType) and t.width.data == 1:
        raise NoLoopLowering(f"{op.name} of i1 has no loop lowering")
    return kb.emit(arith.IndexCastOp(value, t))


def _from_elements(kb: KernelBuilder, op: graph.FromElementsOp, r: int, idx: list[Dim]) -> SSAValue:
    """Element i of the operands: a chain of selects on i (a handful of dims)."""
    t = op.result.type.get_element_type()

    def convert(v: SSAValue) -> SSAValue:
        if is_float(t):
            return kb.emit(arith.SIToFPOp(kb.emit(arith.IndexCastOp(v, IntegerType(64))), t))
        return kb.emit(arith.IndexCastOp(v, t))

    values = [convert(kb.index(kb.k.index(e))) for e in op.elements]
    value = values[0]
    i = kb.index(idx[0])
    for k, v in enumerate(values[1:], start=1):
        value = kb.emit(arith.SelectOp(kb.emit(arith.CmpiOp(i, kb.index(k), "eq")), v, value))
    return value


# Ops whose output nests run over (n, c, flattened pixels): with im2col, conv is a matrix
# product whose columns are the pixels (contiguous in the patch buffer and the output),
# so even a 7x7 map fills vector lanes.
FLATTEN_PIXELS: set[type[Operation]] = {graph.Conv2dOp}

INDEX_RULES: dict[type[Operation], Rule] = {
    graph.ConstantOp: _splat,
    graph.ZerosOp: _fill,
    graph.FullOp: _fill,
    graph.ArangeOp: _arange,
    graph.FromElementsOp: _from_elements,
    graph.TransposeOp: _transpose,
    graph.EinsumOp: einsum,
    graph.ReshapeOp: _reshape,
    graph.DynamicReshapeOp: _reshape,
    graph.BroadcastToOp: _broadcast_to,
    graph.SqueezeOp: _squeeze,
    graph.UnsqueezeOp: _unsqueeze,
    graph.SliceOp: _slice,
    graph.SplitOp: _split,
    graph.ConcatOp: _concat,
    graph.GatherOp: _gather,
    graph.GatherElementsOp: _gather_elements,
    graph.ReduceSumOp: _reduce,
    graph.ReduceMeanOp: _reduce,
    graph.ReduceMaxOp: _reduce,
    graph.ReduceMinOp: _reduce,
    graph.ReduceProdOp: _reduce,
    graph.ArgmaxOp: _argmax,
    graph.CumSumOp: _running,
    graph.CumProdOp: _running,
    graph.SoftmaxOp: _softmax,
    graph.LayerNormOp: _layer_norm,
    graph.GlobalAvgPool2dOp: _global_avg_pool,
    graph.MatmulOp: matmul,
    graph.DenseOp: dense,
    graph.Conv2dOp: conv2d,
    graph.MaxPool2dOp: pool,
    graph.AvgPool2dOp: pool,
    graph.RoiAlignOp: roi_align,
    **INDEXED_RULES,
}


INTO_OUTPUT: dict[type[Operation], Callable[[KernelBuilder, Operation, SSAValue], bool]] = {
    graph.MaxPool2dOp: pool_into,
    graph.AvgPool2dOp: pool_into,
    graph.Conv2dOp: conv2d_into,
    graph.SoftmaxOp: _softmax_into,
    graph.ConcatOp: _concat_into,
}
"""Ops whose result, when it is a kernel output, can be computed in the output buffer
itself while staging (`KernelBuilder.build`), no output nest copying it there. A max pool
read from a kernel input then has no staged buffer to copy out of (ResNet-18's stem
pool, 64 channels 112 x 112 -> 56 x 56, 2 threads, min / median of 150 calls: 177 / 218
-> 164 / 193 us); a softmax keeps its exponentials there between the sum and the
scaling. The rule says whether it applies (False: the output nest computes the value as
usual)."""
