"""Converters of ONNX layout ops the graph dialect spells with its own ops: `Tile` and
`Pad` as concatenations of slices and fills (any mode, `?` dims included), `Range` as
`graph.arange` over dims or a constant, `GatherElements` as its graph op, `Trilu` as a
select with a mask, `Resize` as gathers (`resize.py`)."""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import i64
from xdsl.ir import SSAValue

from nimble.dialects import arith
from nimble.dialects import graph, dynshape
from nimble.dialects.graph.slice import END
from nimble.frontend.onnx.common import NeedsConstant, OnnxImportError, dtype_of, rank_of
from nimble.frontend.onnx.resize import resize
from nimble.frontend.onnx.shapes import Sym, _index_of, _shape_value, _sym, dims_of


def _slice(b, x: SSAValue, axis: int, start: int, end: int) -> SSAValue:
    """`x[start:end]` along `axis` (Python bounds: negative counts from the end)."""
    rank = rank_of(x)
    starts, ends = [0] * rank, [END] * rank
    starts[axis], ends[axis] = start, end
    return b.op(graph.SliceOp, [x], static_starts=starts, static_ends=ends, steps=[1] * rank)


def _concat(b, parts: list[SSAValue], axis: int) -> SSAValue:
    return parts[0] if len(parts) == 1 else b.op(graph.ConcatOp, parts, axis=axis)


def _tile(b, n, xs, a):
    x = xs[0]
    repeats = [int(r) for r in b.static(n.input[1], "Tile's repeats")]
    if len(repeats) != rank_of(x) or any(r < 0 for r in repeats):
        raise OnnxImportError(f"{b.where()}: repeats must be {rank_of(x)} counts >= 0, got {repeats}")
    for axis, r in enumerate(repeats):
        x = _concat(b, [x] * r, axis) if r else _slice(b, x, axis, 0, 0)
    return [x]


def _fill(b, x: SSAValue, axis: int, size: int, value: float | int) -> SSAValue:
    items = dims_of(b, x)
    items[axis] = size
    element = x.type.get_element_type()
    fill = float(value) if np.issubdtype(dtype_of(x), np.floating) else int(value)
    return b.op(graph.FullOp, [_shape_value(b, Sym(items))], element, value=fill)


def _rows(b, x: SSAValue, axis: int, rows: np.ndarray) -> list[SSAValue]:
    """Slices of `x` along `axis` that, concatenated, pick `rows` (runs of consecutive
    rows are one slice)."""
    parts, start = [], 0
    for k in range(1, len(rows) + 1):
        if k == len(rows) or rows[k] != rows[k - 1] + 1:
            parts.append(_slice(b, x, axis, int(rows[start]), int(rows[k - 1]) + 1))
            start = k
    return parts


def _at_least(b, x: SSAValue, axis: int, size: int, what: str) -> None:
    """A run-time check that dim `axis` of `x` is at least `size`."""
    dim = b.emit(dynshape.DimOp(x, axis)).result
    ok = b.emit(arith.CmpiOp(dim, b.index(size), "sge")).result
    b.emit(dynshape.AssertOp(ok, f"{b.where()}: {what} need dim {axis} to be at least {size}", [dim, b.index(size)]))


def _pad_parts(b, x: SSAValue, axis: int, before: int, after: int, mode: str, value: float | int) -> list[SSAValue]:
    """The pieces `x` padded along `axis` is the concatenation of (pads > 0)."""
    if mode == "constant":
        return [*([_fill(b, x, axis, before, value)] if before else []), x,
                *([_fill(b, x, axis, after, value)] if after else [])]
    if mode not in ("edge", "reflect", "wrap"):
        raise OnnxImportError(f"Pad mode '{mode}' is not supported")
    size = x.type.get_shape()[axis]
    if mode == "reflect" and size >= 0 and max(before, after) >= size:
        raise OnnxImportError(f"reflect pads of {max(before, after)} need more than {size} elements")
    if size >= 0:  # the rows numpy's pad picks, as slices
        return _rows(b, x, axis, np.pad(np.arange(size), (before, after), mode=mode))
    # A dim known only at run time: the pieces in Python slice bounds, and a check that
    # the dim is large enough for them.
    if mode == "edge":
        first, last = _slice(b, x, axis, 0, 1), _slice(b, x, axis, -1, END)
        return [first] * before + [x] + [last] * after
    if mode == "reflect":  # x[p], ..., x[1], x, x[n-2], ..., x[n-1-p]
        _at_least(b, x, axis, max(before, after) + 1, "reflect pads")
        head = [_slice(b, x, axis, k, k + 1) for k in range(before, 0, -1)]
        tail = [_slice(b, x, axis, -k - 1, -k) for k in range(1, after + 1)]
        return head + [x] + tail
    _at_least(b, x, axis, max(before, after), "wrap pads")  # x[n-p:], x, x[:p]
    return [*([_slice(b, x, axis, -before, END)] if before else []), x,
            *([_slice(b, x, axis, 0, after)] if after else [])]


def _pad(b, n, xs, a):
    x = xs[0]
    rank = rank_of(x)
    pads = [int(p) for p in (a["pads"] if "pads" in a else b.static(n.input[1], "Pad's pads"))]
    value: float | int = 0
    if len(n.input) > 2 and n.input[2]:
        value = np.asarray(b.static(n.input[2], "Pad's constant value")).reshape(-1)[0].item()
    elif "value" in a:
        value = a["value"]
    axes = [int(v) % rank for v in b.static(n.input[3], "Pad's axes")] if len(n.input) > 3 and n.input[3] \
        else list(range(rank))
    if len(pads) != 2 * len(axes):
        raise OnnxImportError(f"{b.where()}: {len(pads)} pads for {len(axes)} axes")
    mode = a.get("mode", b"constant")
    mode = mode.decode() if isinstance(mode, bytes) else mode
    for axis, before, after in zip(axes, pads[:len(axes)], pads[len(axes):]):
        if before < 0:  # negative pads remove elements
            x, before = _slice(b, x, axis, -before, END), 0
        if after < 0:
            x, after = _slice(b, x, axis, 0, after), 0
        if before or after:
            try:
                x = _concat(b, _pad_parts(b, x, axis, before, after, mode, value), axis)
            except OnnxImportError as e:
                raise OnnxImportError(f"{b.where()}: {e}") from None
    return [x]


def _range(b, n, xs, a):
    if all(name in b.constants for name in n.input[:3]):
        start, limit, delta = (b.constants[name] for name in n.input[:3])
        if delta == 0:
            raise OnnxImportError(f"{b.where()}: Range's delta is 0")
        return [b.known(n.output[0], np.arange(start, limit, delta, dtype=np.result_type(start, limit, delta)))]
    bounds = [_sym(b, name) for name in n.input[:3]]
    if any(s is None or len(s.items) != 1 for s in bounds):  # float bounds: all three needed now
        missing = next(name for name in n.input[:3] if name not in b.constants)
        raise NeedsConstant(f"{b.where()}: Range's bounds must be integer dims or constants", missing)
    typed = [x for x in xs[:3] if x is not None]  # dims computed at run time are int64, as ONNX shapes
    element = typed[0].type.get_element_type() if typed else i64
    start, limit, delta = (_index_of(b, s.items[0]) for s in bounds)
    return [b.op(graph.ArangeOp, [start, limit, delta], element)]


def _trilu(b, n, xs, a):
    """Upper (or lower) triangle from the k-th diagonal: a select with a mask over the
    last two dims, a constant where they are known, else built at run time from the
    column and row numbers (`arange`), as `j - i >= k` (upper) or `j - i <= k`."""
    x = xs[0]
    k = int(np.asarray(b.static(n.input[1], "Trilu's k")).reshape(-1)[0]) if len(n.input) > 1 and n.input[1] else 0
    upper = bool(a.get("upper", 1))
    rows, cols = x.type.get_shape()[-2:]
    zero = b.const(np.zeros((), dtype_of(x)))
    if rows >= 0 and cols >= 0:
        offset = np.arange(cols)[None, :] - np.arange(rows)[:, None]  # j - i
        return [b.op(graph.WhereOp, [b.const(offset >= k if upper else offset <= k), x, zero])]
    rank = rank_of(x)
    numbers = [b.op(graph.ArangeOp, [b.index(0), _index_of(b, dims_of(b, x)[axis]), b.index(1)], i64)
               for axis in (rank - 2, rank - 1)]
    offset = b.op(graph.SubOp, [numbers[1], b.op(graph.UnsqueezeOp, [numbers[0]], axes=[1])])  # j - i
    if upper:  # j - i > k - 1
        keep = b.op(graph.GreaterOp, [offset, b.const(np.array(k - 1, np.int64))])
    else:  # j - i < k + 1
        keep = b.op(graph.LessOp, [offset, b.const(np.array(k + 1, np.int64))])
    return [b.op(graph.WhereOp, [keep, x, zero])]


def _gather_elements(b, n, xs, a):
    return [b.op(graph.GatherElementsOp, xs[:2], axis=a.get("axis", 0))]


CONVERTERS = {"Tile": _tile, "Pad": _pad, "Range": _range, "GatherElements": _gather_elements, "Resize": resize,
              "Trilu": _trilu}
DIM_INPUTS = {"Range": {0, 1, 2}}
