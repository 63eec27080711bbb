"""Index rules: how a non-elementwise graph op's element at an index is computed.

One rule per op kind, `rule(kb, op, result_number, idx) -> scalar`:
- injective ops map the output index to an input index (transpose, reshape, slice,
  concat, split, squeeze/unsqueeze, gather) and read the input there;
- reductions and heavy ops (reduce_*, argmax, softmax, layer_norm, matmul, dense, conv2d,
  pooling) emit `loop.reduce` nests at that point, with the producer's value computed
  inside (so an elementwise prologue is fused for free).
Elementwise ops are in `scalar.SCALAR`; the operand index of an elementwise op is
`broadcast_index` (numpy broadcasting, plus per-op maps such as batch_norm's channel axis).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.dialects import arith, memref
from xdsl.dialects import math as xmath
from xdsl.dialects.builtin import DYNAMIC_INDEX, Float64Type, IndexType, IntegerType, MemRefType, TensorType
from xdsl.ir import Operation, SSAValue

from nimble.dialects import graph, loop
from nimble.dialects.graph.base import normalize_axes, normalize_axis
from nimble.lowering.kernel_builder import Dim, KernelBuilder, NoLoopLowering
from nimble.lowering.scalar import SCALAR, const, convert, is_float

Rule = Callable[[KernelBuilder, Operation, int, list[Dim]], SSAValue]


# ------------------------------------------------------------------------------------
# Broadcasting


def _bcast_axis(kb: KernelBuilder, d: Dim, out: Dim, i: Dim) -> Dim:
    if d == 1:
        return 0
    if isinstance(d, int) or d is out or kb.no_stretch:
        return i
    is_one = kb.emit(arith.CmpiOp(d, kb.index(1), "eq"))
    return kb.emit(arith.SelectOp(is_one, kb.index(0), kb.index(i)))


def numpy_broadcast(kb: KernelBuilder, value: SSAValue, out_dims: Sequence[Dim], idx: Sequence[Dim]) -> list[Dim]:
    dims = kb.dims(value)
    lead = len(out_dims) - len(dims)
    return [_bcast_axis(kb, d, out_dims[lead + j], idx[lead + j]) for j, d in enumerate(dims)]


def broadcast_index(kb: KernelBuilder, value: SSAValue, out_dims: Sequence[Dim], idx: Sequence[Dim],
                    op: Operation) -> list[Dim]:
    if not hasattr(value.type, "get_shape"):
        return []
    if isinstance(op, graph.BatchNormOp) and value is not op.input:
        return [idx[1]]  # per-channel parameters
    return numpy_broadcast(kb, value, out_dims, idx)


def broadcast_sites(op: Operation) -> list[tuple[SSAValue, int, SSAValue, int]]:
    """(operand, axis, result, axis) pairs where a `?` operand dim may be stretched
    (a 1 broadcast to the result's size) by numpy broadcasting in `op`. The
    `no_stretch` kernel variant assumes none is; its caller checks that before use."""
    if isinstance(op, graph.MatmulOp):
        result = op.result
        out_batch = len(result.type.get_shape()) - (len(op.lhs.type.get_shape()) > 1) - (len(op.rhs.type.get_shape()) > 1)
        sites = []
        for operand in (op.lhs, op.rhs):
            shape = operand.type.get_shape()
            batch = shape[:-2]
            for j, d in enumerate(batch):
                if d < 0:
                    sites.append((operand, j, result, out_batch - len(batch) + j))
        return sites
    if type(op) not in SCALAR and not isinstance(op, graph.BroadcastToOp) or isinstance(op, graph.BatchNormOp):
        return []
    tensors = [v for v in op.operands if isinstance(v.type, TensorType)]
    if len(tensors) < 2 and not isinstance(op, graph.BroadcastToOp):
        return []  # one operand: its shape is the result's, nothing stretches
    result = op.results[0]
    rank = len(result.type.get_shape())
    sites = []
    for operand in op.operands:
        if not isinstance(operand.type, TensorType):
            continue
        shape = operand.type.get_shape()
        for j, d in enumerate(shape):
            if d < 0:
                sites.append((operand, j, result, rank - len(shape) + j))
    return sites


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
    out: list[Dim] = []
    for d in reversed(dims):
        if d == 1:
            out.append(0)
            continue
        out.append(kb.ibinary("rem", flat, d))
        flat = kb.ibinary("div", flat, d)
    return out[::-1]


def _reshape(kb: KernelBuilder, op: Operation, r: int, idx: list[Dim]) -> SSAValue:
    flat = linearize(kb, idx, kb.dims(op.results[0]))
    return kb.at(op.input, delinearize(kb, flat, kb.dims(op.input)))


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


def _gather(kb: KernelBuilder, op: graph.GatherOp, r: int, idx: list[Dim]) -> SSAValue:
    dims = kb.dims(op.input)
    axis = normalize_axis(op.axis.value.data, len(dims))
    irank = len(kb.dims(op.indices))
    raw = kb.at(op.indices, idx[axis:axis + irank])
    i = kb.emit(arith.IndexCastOp(raw, IndexType()))
    n = kb.index(dims[axis])
    # Negative indices count from the end; out-of-range ones are clamped (never read
    # outside the input). The host checks the range before running when it can.
    wrapped = kb.emit(arith.SelectOp(kb.emit(arith.CmpiOp(i, kb.index(0), "slt")), kb.emit(arith.AddiOp(i, n)), i))
    safe = kb.ibinary("min", kb.ibinary("max", wrapped, 0), kb.ibinary("sub", n, 1))
    return kb.at(op.input, [*idx[:axis], safe, *idx[axis + irank:]])


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
                 kind: str, value: Callable[[SSAValue], SSAValue] = lambda v: v) -> SSAValue:
    dims = kb.dims(x)
    t = x.type.get_element_type()
    init = kb._identity(kind, t)
    return kb.reduce_nest([dims[a] for a in axes], init, kind,
                          lambda ivs: value(kb.at(x, _with_axes(idx, axes, ivs, keepdims))))


def _count(kb: KernelBuilder, dims: Sequence[Dim], t) -> SSAValue:
    n: Dim = 1
    for d in dims:
        n = kb.imul(n, d)
    as_int = kb.emit(arith.IndexCastOp(kb.index(n), IntegerType(64)))
    return kb.emit(arith.SIToFPOp(as_int, t))


_REDUCE_KIND = {graph.ReduceSumOp: "add", graph.ReduceMeanOp: "add", graph.ReduceMaxOp: "max"}


def _reduce(kb: KernelBuilder, op: graph.ReduceOp, r: int, idx: list[Dim]) -> SSAValue:
    axes = op.reduced_axes()
    keep = bool(op.keepdims.value.data)
    total = _reduce_axes(kb, op.input, idx, axes, keep, _REDUCE_KIND[type(op)])
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
    best = _reduce_axes(kb, op.input, idx, [axis], keep, "max")
    n = kb.index(dims[axis])
    # The first position holding the maximum (numpy's tie rule).

    def first(k: SSAValue) -> list[SSAValue]:
        x = kb.at(op.input, _with_axes(idx, [axis], [k], keep))
        hit = kb.emit(arith.CmpfOp(x, best, "oeq") if is_float(x.type) else arith.CmpiOp(x, best, "eq"))
        return [kb.emit(arith.SelectOp(hit, k, n))]

    pos = kb.reduce(dims[axis], [n], ["min"], first)[0]
    return kb.emit(arith.IndexCastOp(pos, op.result.type.get_element_type()))


def _softmax(kb: KernelBuilder, op: graph.SoftmaxOp, r: int, idx: list[Dim]) -> SSAValue:
    axis = normalize_axis(op.axis.value.data, len(idx))
    x = op.input
    row_max = _reduce_axes(kb, x, idx, [axis], True, "max")
    total = _reduce_axes(kb, x, idx, [axis], True, "add",
                         lambda v: kb.emit(xmath.ExpOp(kb.emit(arith.SubfOp(v, row_max)))))
    e = kb.emit(xmath.ExpOp(kb.emit(arith.SubfOp(kb.at(x, idx), row_max))))
    return kb.emit(arith.DivfOp(e, total))


def _layer_norm(kb: KernelBuilder, op: graph.LayerNormOp, r: int, idx: list[Dim]) -> SSAValue:
    x = op.input
    dims = kb.dims(x)
    axes = list(range(op.first_axis(), len(dims)))
    t = x.type.get_element_type()
    count = _count(kb, [dims[a] for a in axes], t)
    mean = kb.emit(arith.DivfOp(_reduce_axes(kb, x, idx, axes, True, "add"), count))

    def square(v: SSAValue) -> SSAValue:
        d = kb.emit(arith.SubfOp(v, mean))
        return kb.emit(arith.MulfOp(d, d))

    var = kb.emit(arith.DivfOp(_reduce_axes(kb, x, idx, axes, True, "add", square), count))
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
    total = _reduce_axes(kb, op.input, idx, [2, 3], True, "add")
    return kb.emit(arith.DivfOp(total, _count(kb, dims[2:], total.type)))


# ------------------------------------------------------------------------------------
# Contractions and windows


def _mac(kb: KernelBuilder, a: SSAValue, b: SSAValue) -> SSAValue:
    if is_float(a.type):
        return kb.emit(arith.MulfOp(a, b))
    return kb.emit(arith.MuliOp(a, b))


def _matmul(kb: KernelBuilder, op: graph.MatmulOp, r: int, idx: list[Dim]) -> SSAValue:
    a_dims, b_dims = kb.dims(op.lhs), kb.dims(op.rhs)
    out_dims = kb.dims(op.result)
    rows = [] if len(a_dims) == 1 else [idx[len(idx) - 1 - (len(b_dims) > 1)]]
    cols = [] if len(b_dims) == 1 else [idx[-1]]
    batch = idx[:len(idx) - len(rows) - len(cols)]
    batch_dims = out_dims[:len(batch)]
    a_batch = _batch_index(kb, a_dims[:-2], batch_dims, batch)
    b_batch = _batch_index(kb, b_dims[:-2], batch_dims, batch)
    t = op.result.type.get_element_type()
    return kb.reduce_nest([a_dims[-1]], kb._identity("add", t), "add", lambda k: _mac(
        kb, kb.at(op.lhs, [*a_batch, *rows, k[0]]), kb.at(op.rhs, [*b_batch, k[0], *cols])))


def _batch_index(kb: KernelBuilder, dims: Sequence[Dim], out: Sequence[Dim], idx: Sequence[Dim]) -> list[Dim]:
    lead = len(out) - len(dims)
    return [_bcast_axis(kb, d, out[lead + j], idx[lead + j]) for j, d in enumerate(dims)]


def _dense(kb: KernelBuilder, op: graph.DenseOp, r: int, idx: list[Dim]) -> SSAValue:
    x_dims = kb.dims(op.input)
    t = op.result.type.get_element_type()
    n = idx[-1]
    acc = kb.reduce_nest([x_dims[-1]], kb._identity("add", t), "add", lambda k: _mac(
        kb, kb.at(op.input, [*idx[:-1], k[0]]), kb.at(op.weight, [n, k[0]])))
    if op.bias is not None:
        acc = kb.emit(arith.AddfOp(acc, kb.at(op.bias, [n])) if is_float(t) else arith.AddiOp(acc, kb.at(op.bias, [n])))
    return acc


def _window_source(kb: KernelBuilder, op: Operation, out_hw: Sequence[Dim], k_hw: Sequence[SSAValue],
                   in_hw: Sequence[Dim]) -> tuple[list[Dim], SSAValue]:
    """Input (h, w) of a window tap, clamped into range, and whether it is inside."""
    strides, pads, dilations = op.window()
    coords: list[Dim] = []
    inside: SSAValue | None = None
    for axis in range(2):
        pos = kb.ibinary("sub", kb.iadd(kb.imul(out_hw[axis], strides[axis]), kb.imul(k_hw[axis], dilations[axis])),
                         pads[axis])
        if pads[axis] or pads[axis + 2]:
            ok_lo = kb.emit(arith.CmpiOp(kb.index(pos), kb.index(0), "sge"))
            ok_hi = kb.emit(arith.CmpiOp(kb.index(pos), kb.index(in_hw[axis]), "slt"))
            ok = kb.emit(arith.AndIOp(ok_lo, ok_hi))
            inside = ok if inside is None else kb.emit(arith.AndIOp(inside, ok))
            pos = kb.ibinary("min", kb.ibinary("max", pos, 0), kb.ibinary("sub", in_hw[axis], 1))
        coords.append(pos)
    return coords, inside


def _im2col(kb: KernelBuilder, op: graph.Conv2dOp) -> SSAValue:
    """The staged patch buffer `col[n, (c, kh, kw), oh, ow]` (zeros where the window
    overhangs the padding). Each row is split into zeros / a copy / zeros, so the copy
    is contiguous along `ow` for stride 1 (it vectorises)."""
    n_, c_, h_, w_ = kb.dims(op.input)
    _o, _c, kh_, kw_ = kb.dims(op.weight)
    _n, _o2, oh_, ow_ = kb.dims(op.result)
    (s0, s1), pads, (d0, d1) = op.window()
    t = op.result.type.get_element_type()
    taps = kb.imul(kh_, kw_)
    ckk = kb.imul(c_, taps)
    dims = [n_, ckk, oh_, ow_]
    col_type = MemRefType(t, [d if isinstance(d, int) else DYNAMIC_INDEX for d in dims])
    col = kb.emit(loop.AllocOp("dram", col_type, [kb.index(d) for d in dims if not isinstance(d, int)]))
    zero = const(kb.emit, 0.0, t)

    kb.buffer_dims[col] = dims

    def store(n, oh, k, ow, value):
        kb.emit(memref.StoreOp.get(value, col, [kb.index(i) for i in (n, k, oh, ow)]))

    def row(n: SSAValue, oh: SSAValue, k: SSAValue) -> None:
        c = kb.ibinary("div", k, taps)
        tap = kb.ibinary("rem", k, taps)
        kh = kb.ibinary("div", tap, kw_)
        kw = kb.ibinary("rem", tap, kw_)
        ih = kb.ibinary("sub", kb.iadd(kb.imul(oh, s0), kb.imul(kh, d0)), pads[0])
        row_ok = kb.emit(arith.AndIOp(kb.emit(arith.CmpiOp(kb.index(ih), kb.index(0), "sge")),
                                      kb.emit(arith.CmpiOp(kb.index(ih), kb.index(h_), "slt"))))
        ih_safe = kb.ibinary("min", kb.ibinary("max", ih, 0), kb.ibinary("sub", h_, 1))
        # iw = ow * s1 + off lies in [0, W) for ow in [lo, hi).
        off = kb.ibinary("sub", kb.imul(kw, d1), pads[1])
        lo = kb.emit(arith.CeilDivSIOp(kb.index(kb.ibinary("sub", 0, off)), kb.index(s1)))
        hi = kb.iadd(kb.emit(arith.FloorDivSIOp(kb.index(kb.ibinary("sub", kb.ibinary("sub", w_, 1), off)),
                                                kb.index(s1))), 1)
        lo = kb.ibinary("min", kb.ibinary("max", lo, 0), ow_)
        hi = kb.ibinary("min", kb.ibinary("max", hi, lo), ow_)
        lo = kb.emit(arith.SelectOp(row_ok, kb.index(lo), kb.index(0)))
        hi = kb.emit(arith.SelectOp(row_ok, kb.index(hi), kb.index(0)))
        kb.foreach(lo, lambda ow: store(n, oh, k, ow, zero))
        base = kb.iadd(kb.imul(lo, s1), off)

        def copy(t_: SSAValue) -> None:
            iw = kb.iadd(kb.imul(t_, s1), base) if s1 != 1 else kb.emit(arith.AddiOp(t_, kb.index(base)))
            ow = kb.emit(arith.AddiOp(t_, kb.index(lo)))
            store(n, oh, k, ow, kb.at(op.input, [n, c, ih_safe, iw]))

        kb.foreach(kb.ibinary("sub", hi, lo), copy)
        kb.foreach(kb.ibinary("sub", ow_, hi), lambda t_: store(n, oh, k, kb.emit(arith.AddiOp(t_, kb.index(hi))), zero))

    kb.foreach(n_, lambda n: kb.foreach(ckk, lambda k: kb.foreach(oh_, lambda oh: row(n, oh, k))))
    return col


def _conv2d(kb: KernelBuilder, op: graph.Conv2dOp, r: int, idx: list[Dim]) -> SSAValue:
    if op.groups.value.data == 1 and op.weight in kb.buffers:
        # im2col: a staged patch buffer, then a matrix product over (c, kh, kw), which
        # `schedule-loops` tiles like a matmul (pixels as lanes, channels as rows).
        n, o, oh, ow = idx
        col = kb.staged(("im2col", op), lambda: _im2col(kb, op))
        weights = kb.collapsed(op.weight, [[0], [1, 2, 3]])
        _o, c_, kh_, kw_ = kb.dims(op.weight)
        ckk = kb.imul(c_, kb.imul(kh_, kw_))
        t = op.result.type.get_element_type()
        acc = kb.reduce_nest([ckk], kb._identity("add", t), "add", lambda k: kb.emit(arith.MulfOp(
            kb.load_buffer(weights, [o, k[0]]), kb.load_buffer(col, [n, k[0], oh, ow]))))
        if op.bias is not None:
            acc = kb.emit(arith.AddfOp(acc, kb.at(op.bias, [o])))
        return acc
    n, o, oh, ow = idx
    x_dims, w_dims = kb.dims(op.input), kb.dims(op.weight)
    t = op.result.type.get_element_type()
    groups = op.groups.value.data
    cg = w_dims[1]
    per_group = kb.ibinary("div", w_dims[0], groups) if groups > 1 else w_dims[0]
    base_c = kb.imul(kb.ibinary("div", o, per_group), cg) if groups > 1 else 0

    def tap(ivs: list[SSAValue]) -> SSAValue:
        c, kh, kw = ivs
        (h, w), inside = _window_source(kb, op, [oh, ow], [kh, kw], x_dims[2:])
        x = kb.at(op.input, [n, kb.iadd(base_c, c), h, w])
        if inside is not None:
            x = kb.emit(arith.SelectOp(inside, x, const(kb.emit, 0.0, t)))
        return kb.emit(arith.MulfOp(x, kb.at(op.weight, [o, c, kh, kw])))

    acc = kb.reduce_nest([cg, w_dims[2], w_dims[3]], kb._identity("add", t), "add", tap)
    if op.bias is not None:
        acc = kb.emit(arith.AddfOp(acc, kb.at(op.bias, [o])))
    return acc


def _pool(kb: KernelBuilder, op: graph.MaxPool2dOp | graph.AvgPool2dOp, r: int, idx: list[Dim]) -> SSAValue:
    n, c, oh, ow = idx
    x_dims = kb.dims(op.input)
    t = op.result.type.get_element_type()
    kh_, kw_ = list(op.kernel.get_values())
    is_max = isinstance(op, graph.MaxPool2dOp)
    pad_value = float("-inf") if is_max else 0.0

    def tap(ivs: list[SSAValue]) -> list[SSAValue]:
        (h, w), inside = _window_source(kb, op, [oh, ow], ivs, x_dims[2:])
        x = kb.at(op.input, [n, c, h, w])
        one = const(kb.emit, 1.0, t)
        if inside is None:
            return [x, one]
        return [kb.emit(arith.SelectOp(inside, x, const(kb.emit, pad_value, t))),
                kb.emit(arith.SelectOp(inside, one, const(kb.emit, 0.0, t)))]

    kind = "max" if is_max else "add"

    def level_h(h: SSAValue) -> list[SSAValue]:
        return kb.reduce(kw_, [kb._identity(kind, t), kb._identity("add", t)], [kind, "add"],
                         lambda w: tap([h, w]))

    total, count = kb.reduce(kh_, [kb._identity(kind, t), kb._identity("add", t)], [kind, "add"], level_h)
    if is_max:
        return total
    if op.count_include_pad.value.data:
        count = const(kb.emit, float(kh_ * kw_), t)
    return kb.emit(arith.DivfOp(total, count))


def _roi_align(kb: KernelBuilder, op: graph.RoiAlignOp, r: int, idx: list[Dim]) -> SSAValue:
    """Average of bilinear samples over a bin (ROIAlign, half-pixel): coordinates in f64
    like the reference; the sample grid may depend on the box (sampling_ratio 0)."""
    k, c, ph, pw = idx
    _n, _c, h_, w_ = kb.dims(op.input)
    f64, t = Float64Type(), op.result.type.get_element_type()
    e = kb.emit

    def f(x: float) -> SSAValue:
        return const(e, x, f64)

    def to_f64(v: SSAValue) -> SSAValue:
        if isinstance(v.type, IndexType):
            v = e(arith.IndexCastOp(v, IntegerType(64)))
        return e(arith.SIToFPOp(v, f64)) if isinstance(v.type, IntegerType) else convert(e, v, f64)

    scale = op.spatial_scale.value.data
    box = [e(arith.SubfOp(e(arith.MulfOp(to_f64(kb.at(op.rois, [k, i])), f(scale))), f(0.5))) for i in range(4)]
    x1, y1, x2, y2 = box
    oh, ow = op.output_height.value.data, op.output_width.value.data
    bin_h = e(arith.DivfOp(e(arith.SubfOp(y2, y1)), f(oh)))
    bin_w = e(arith.DivfOp(e(arith.SubfOp(x2, x1)), f(ow)))
    ratio = op.sampling_ratio.value.data

    def grid(size: SSAValue, bins: int) -> Dim:
        if ratio > 0:
            return ratio
        n = e(xmath.CeilOp(e(arith.DivfOp(size, f(bins)))))
        n = e(arith.IndexCastOp(e(arith.FPToSIOp(n, IntegerType(64))), IndexType()))
        return kb.ibinary("max", n, 1)

    gh, gw = grid(e(arith.SubfOp(y2, y1)), oh), grid(e(arith.SubfOp(x2, x1)), ow)
    batch = e(arith.IndexCastOp(kb.at(op.batch_indices, [k]), IndexType()))
    batch = kb.ibinary("min", kb.ibinary("max", batch, 0), kb.ibinary("sub", _n, 1))  # never read outside
    height, width = to_f64(kb.index(h_)), to_f64(kb.index(w_))

    def coordinate(start, bin_size, p, i, g) -> SSAValue:
        offset = e(arith.DivfOp(e(arith.AddfOp(to_f64(kb.index(i)), f(0.5))), to_f64(kb.index(g))))
        return e(arith.AddfOp(start, e(arith.MulfOp(e(arith.AddfOp(to_f64(kb.index(p)), offset)), bin_size))))

    def sample(ivs: list[SSAValue]) -> SSAValue:
        iy, ix = ivs
        y = coordinate(y1, bin_h, ph, iy, gh)
        x = coordinate(x1, bin_w, pw, ix, gw)
        return _bilinear(kb, op.input, batch, c, y, x, height, width, h_, w_, f)

    total = kb.reduce_nest([gh, gw], f(0.0), "add", sample)
    count = e(arith.MulfOp(to_f64(kb.index(gh)), to_f64(kb.index(gw))))
    return convert(e, e(arith.DivfOp(total, count)), t)


def _bilinear(kb, feature, batch, c, y, x, height, width, h_, w_, f) -> SSAValue:
    """The reference's `_bilinear` for one point: zero outside [-1, size], clamped."""
    e = kb.emit
    outside = e(arith.OrIOp(e(arith.OrIOp(e(arith.CmpfOp(y, f(-1.0), "olt")), e(arith.CmpfOp(y, height, "ogt")))),
                            e(arith.OrIOp(e(arith.CmpfOp(x, f(-1.0), "olt")), e(arith.CmpfOp(x, width, "ogt"))))))

    def axis(v: SSAValue, size: Dim):
        v = e(arith.MaximumfOp(v, f(0.0)))
        low = e(arith.IndexCastOp(e(arith.FPToSIOp(e(xmath.FloorOp(v)), IntegerType(64))), IndexType()))
        last = kb.ibinary("sub", size, 1)
        low = kb.ibinary("min", low, last)
        high = kb.ibinary("min", kb.iadd(low, 1), last)
        at_edge = e(arith.CmpiOp(kb.index(low), kb.index(last), "sge"))
        low_f = e(arith.SIToFPOp(e(arith.IndexCastOp(kb.index(low), IntegerType(64))), v.type))
        v = e(arith.SelectOp(at_edge, low_f, v))
        frac = e(arith.SubfOp(v, low_f))
        return low, high, frac, e(arith.SubfOp(f(1.0), frac))

    y0, y1, ly, hy = axis(y, h_)
    x0, x1, lx, hx = axis(x, w_)

    def tap(yi, xi, wy, wx) -> SSAValue:
        value = convert(e, kb.at(feature, [batch, c, yi, xi]), wy.type)
        return e(arith.MulfOp(e(arith.MulfOp(wy, wx)), value))

    value = e(arith.AddfOp(e(arith.AddfOp(tap(y0, x0, hy, hx), tap(y0, x1, hy, lx))),
                           e(arith.AddfOp(tap(y1, x0, ly, hx), tap(y1, x1, ly, lx)))))
    return e(arith.SelectOp(outside, f(0.0), value))


# Ops whose output nests run over (n, c, flattened pixels): with im2col, conv is a matrix
# product whose columns are the pixels (contiguous in the patch buffer and the output),
# so even a 7x7 map fills vector lanes.
FLATTEN_PIXELS: set[type[Operation]] = {graph.Conv2dOp}

INDEX_RULES: dict[type[Operation], Rule] = {
    graph.TransposeOp: _transpose,
    graph.ReshapeOp: _reshape,
    graph.DynamicReshapeOp: _reshape,
    graph.BroadcastToOp: _broadcast_to,
    graph.SqueezeOp: _squeeze,
    graph.UnsqueezeOp: _unsqueeze,
    graph.SliceOp: _slice,
    graph.SplitOp: _split,
    graph.ConcatOp: _concat,
    graph.GatherOp: _gather,
    graph.ReduceSumOp: _reduce,
    graph.ReduceMeanOp: _reduce,
    graph.ReduceMaxOp: _reduce,
    graph.ArgmaxOp: _argmax,
    graph.SoftmaxOp: _softmax,
    graph.LayerNormOp: _layer_norm,
    graph.GlobalAvgPool2dOp: _global_avg_pool,
    graph.MatmulOp: _matmul,
    graph.DenseOp: _dense,
    graph.Conv2dOp: _conv2d,
    graph.MaxPool2dOp: _pool,
    graph.AvgPool2dOp: _pool,
    graph.RoiAlignOp: _roi_align,
}
