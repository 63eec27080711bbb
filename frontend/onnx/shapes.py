"""Shape computations in ONNX models, followed symbolically.

int64 tensors holding dims (`Shape`, then Gather/Concat/... of it) are lists of dims
(ints or `index` values) here and become `dynshape.from_dims` where a tensor op takes them
(ConstantOfShape, Reshape, Expand).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.ir import SSAValue

from nimble.dialects import arith
from nimble.dialects import graph, dynshape
from nimble.frontend.onnx.common import OnnxImportError, dense, onnx_package
from nimble.dialects.index_semantics import trunc_div

# ---------------------------------------------------------------------------------------
# Shape computations: int64 tensors holding dims (`Shape`, then Gather/Concat/... of it)
# are followed symbolically as lists of dims (ints or `index` values) and become
# `dynshape.from_dims` where a tensor op takes them (ConstantOfShape, Reshape, Expand).


@dataclass
class Sym:
    items: list[int | SSAValue]
    scalar: bool = False
    dtype: type = np.int64
    """The element type of the ONNX tensor (int64, or int32 after a Cast)."""


def _sym(b, name: str) -> Sym | None:
    """The dims an input holds, if it is a shape value or a small integer constant."""
    if not name:
        return None
    if name in b.shapes:
        return b.shapes[name]
    array = b.constants.get(name)
    if array is not None and np.issubdtype(array.dtype, np.integer) and array.ndim <= 1:
        return Sym([int(v) for v in np.atleast_1d(array)], array.ndim == 0, array.dtype.type)
    return None


def _index_of(b, item: int | SSAValue) -> SSAValue:
    return b.index(item) if isinstance(item, int) else item


def dim_of(b, x: SSAValue, axis: int) -> int | SSAValue:
    """Dim `axis` of `x`: its size if static, else a `dynshape.dim`."""
    d = x.type.get_shape()[axis]
    return d if d >= 0 else b.emit(dynshape.DimOp(x, axis)).result


def dims_of(b, x: SSAValue) -> list[int | SSAValue]:
    return [dim_of(b, x, k) for k in range(len(x.type.get_shape()))]


def shape_value(b, dims: Sequence[int | SSAValue]) -> SSAValue:
    """A `!dynshape.shape` of `dims` (ints or index values)."""
    return b.emit(dynshape.FromDimsOp([_index_of(b, d) for d in dims])).result


def _shape_value(b, sym: Sym) -> SSAValue:
    return shape_value(b, sym.items)


def materialize(b, sym: Sym) -> SSAValue:
    """A shape value used as data (a position offset, a scale, an index): its dims as a
    tensor computed at run time (a constant where they are all known)."""
    if all(isinstance(d, int) for d in sym.items):
        return b.const(np.array(sym.items[0] if sym.scalar else sym.items, dtype=sym.dtype))
    element = dense(np.zeros(1, sym.dtype)).get_element_type()
    vector = b.op(graph.FromElementsOp, [_index_of(b, d) for d in sym.items], element)
    return reshape(b, vector, []) if sym.scalar else vector


def _sym_shape(b, n, a):
    x = b.values.get(n.input[0])
    dims_in = b.shapes.get(n.input[0])
    if x is None and dims_in is not None:  # the shape of a shape value: its length
        items: list[int | SSAValue] = [] if dims_in.scalar else [len(dims_in.items)]
        return Sym(items[slice(a.get("start", 0), a.get("end", len(items)))])
    if x is None:
        return None
    items = dims_of(b, x)
    return Sym(items[slice(a.get("start", 0), a.get("end", len(items)))])


def _sym_size(b, n, a):
    """`Size`: the product of the input's dims, a dim like `Shape`'s."""
    dims = _sym_shape(b, n, {})
    if dims is None:
        return None
    return Sym([_product(b, dims.items)], True)


def _sym_gather(b, n, a):
    data = b.shapes.get(n.input[0])
    if data is None or a.get("axis", 0) != 0:
        return None
    index = b.static(n.input[1], "the index into a shape")
    picked = [data.items[int(i)] for i in np.atleast_1d(index)]
    return Sym(picked, index.ndim == 0, data.dtype)


def _sym_unsqueeze(b, n, a):
    sym = b.shapes.get(n.input[0])
    return Sym(sym.items, False, sym.dtype) if sym is not None and sym.scalar else None


def _sym_squeeze(b, n, a):
    sym = b.shapes.get(n.input[0])
    return Sym(sym.items, True, sym.dtype) if sym is not None and len(sym.items) == 1 and not sym.scalar else None


def _sym_concat(b, n, a):
    parts = [_sym(b, x) for x in n.input]
    if not any(x in b.shapes for x in n.input) or any(p is None for p in parts) or a.get("axis", 0) not in (0, -1):
        return None
    return Sym([d for p in parts for d in p.items], False, parts[0].dtype)


def _sym_cast(b, n, a):
    sym = b.shapes.get(n.input[0])
    if sym is None:
        return None
    integer = {onnx_package().TensorProto.INT64: np.int64, onnx_package().TensorProto.INT32: np.int32}.get(a.get("to"))
    if integer is not None:
        return Sym(list(sym.items), sym.scalar, integer)
    if all(isinstance(d, int) for d in sym.items):  # dims known now, as numbers (attention's 1/sqrt(d))
        dtype = onnx_package().helper.tensor_dtype_to_np_dtype(a["to"])
        b.known(n.output[0], np.array(sym.items[0] if sym.scalar else sym.items, dtype=dtype))
    return None


def _sym_slice(b, n, a):
    sym = b.shapes.get(n.input[0])
    if sym is None:
        return None
    starts, ends = (int(b.static(n.input[k], "a shape slice's bounds")[0]) for k in (1, 2))
    step = int(b.static(n.input[4], "a shape slice's step")[0]) if len(n.input) > 4 and n.input[4] else 1
    return Sym(sym.items[slice(starts, None if ends >= 2**62 else ends, step)], False, sym.dtype)


_SYM_ARITH = {"Add": ("add", arith.AddiOp), "Sub": ("sub", arith.SubiOp), "Mul": ("mul", arith.MuliOp),
              "Div": ("div", arith.DivSIOp)}


def _small_ints(b, name: str) -> np.ndarray | None:
    value = b.constants.get(name)
    return value if value is not None and np.issubdtype(value.dtype, np.integer) and value.size <= 64 else None


def _broadcast_dims(b, names: Sequence[str]) -> list[Sym] | None:
    """The shape values (or small integer constants) `names` hold, broadcast to one
    length, when at least one is a shape value."""
    if not any(x in b.shapes for x in names):
        return None
    syms = [_sym(b, x) for x in names]
    if any(s is None for s in syms):
        return None
    count = max(len(s.items) for s in syms)
    if any(len(s.items) not in (1, count) for s in syms):
        return None
    return [Sym(s.items * count if len(s.items) == 1 else list(s.items), s.scalar, s.dtype) for s in syms]


def _sym_arith(b, n, a):
    x, y = (_small_ints(b, name) for name in n.input[:2])
    if x is not None and y is not None:  # index arithmetic PyTorch exports on constants: folded
        kind = _SYM_ARITH[n.op_type][0]
        with np.errstate(all="ignore"):
            value = {"add": np.add, "sub": np.subtract, "mul": np.multiply,
                     "div": lambda p, q: np.trunc(p / np.where(q == 0, 1, q)).astype(p.dtype)}[kind](x, y)
        b.known(n.output[0], np.asarray(value, dtype=np.result_type(x, y)))
        return None
    both = _broadcast_dims(b, n.input[:2])
    if both is None:
        return None
    lhs, rhs = both
    kind, cls = _SYM_ARITH[n.op_type]
    items: list[int | SSAValue] = []
    for x, y in zip(lhs.items, rhs.items):
        if isinstance(x, int) and isinstance(y, int):
            items.append({"add": x + y, "sub": x - y, "mul": x * y, "div": trunc_div(x, y) if y else 0}[kind])
        else:
            items.append(b.emit(cls(_index_of(b, x), _index_of(b, y))).result)
    return Sym(items, lhs.scalar and rhs.scalar, lhs.dtype)


def _sym_mod(b, n, a):
    """`Mod` of constants (folded) or of dims (index arithmetic; `fmod=0` takes the
    divisor's sign, as Python's `%`); of other tensors, None (the tensor converter)."""
    fmod = bool(a.get("fmod", 0))
    if all(x in b.constants for x in n.input[:2]):
        x, y = (b.constants[name] for name in n.input[:2])
        with np.errstate(all="ignore"):
            b.known(n.output[0], np.fmod(x, y) if fmod else np.mod(x, y))
        return None
    if not any(x in b.shapes for x in n.input[:2]):
        return None
    both = _broadcast_dims(b, n.input[:2])
    if both is None:
        raise OnnxImportError(f"{b.where()}: Mod of a dim and a tensor computed at run time is not supported")
    lhs, rhs = both
    items: list[int | SSAValue] = []
    for x, y in zip(lhs.items, rhs.items):
        if isinstance(x, int) and isinstance(y, int):
            items.append(int(np.fmod(x, y)) if fmod else x % y)
            continue
        x, y = _index_of(b, x), _index_of(b, y)
        rem = b.emit(arith.RemSIOp(x, y)).result
        if not fmod:  # move a remainder whose sign differs from the divisor's onto it
            zero = b.index(0)
            differs = b.emit(arith.XOrIOp(b.emit(arith.CmpiOp(rem, zero, "slt")).result,
                                          b.emit(arith.CmpiOp(y, zero, "slt")).result)).result
            fix = b.emit(arith.AndIOp(differs, b.emit(arith.CmpiOp(rem, zero, "ne")).result)).result
            rem = b.emit(arith.SelectOp(fix, b.emit(arith.AddiOp(rem, y)).result, rem)).result
        items.append(rem)
    return Sym(items, lhs.scalar and rhs.scalar, lhs.dtype)


def _sym_constant_of_shape(b, n, a):
    sym = _sym(b, n.input[0])
    if sym is None:
        return None
    value = onnx_package().numpy_helper.to_array(a["value"]) if "value" in a else np.zeros(1, np.float32)
    if np.issubdtype(value.dtype, np.integer) and all(isinstance(d, int) for d in sym.items) \
            and int(np.prod(sym.items, dtype=np.int64)) <= 64:
        # Small integer vectors of known length (the ones and -1s of `expand(-1)`): known.
        b.known(n.output[0], np.full(sym.items, value.reshape(-1)[0], value.dtype))
        return None
    element = dense(value.reshape(-1)[:1]).get_element_type()
    fill = value.reshape(-1)[0].item()
    b.values[n.output[0]] = b.op(graph.FullOp, [_shape_value(b, sym)], element,
                                 value=float(fill) if isinstance(fill, float) else int(fill))
    return None


def _sym_reshape(b, n, a):
    data, target = _small_ints(b, n.input[0]), b.constants.get(n.input[1])
    if data is not None and target is not None:
        # A small integer constant (slice bounds PyTorch computes with Mod/Reshape): folded.
        dims = [data.shape[k] if d == 0 and not a.get("allowzero", 0) else int(d) for k, d in enumerate(target)]
        b.known(n.output[0], data.reshape(dims))
        return None
    dims_in = b.shapes.get(n.input[0])
    if dims_in is not None and target is not None and target.ndim == 1 and len(target) <= 1:
        # A shape value reshaped to a vector or a scalar (`cls_token.expand(batch, -1, -1)`
        # reshapes Concat(batch, 1, 1) to [-1] first): the same dims.
        count = len(dims_in.items)
        if len(target) == 0:
            return Sym(list(dims_in.items), True, dims_in.dtype) if count == 1 else None
        if int(target[0]) in (-1, count) or (int(target[0]) == 0 and not dims_in.scalar):
            return Sym(list(dims_in.items), False, dims_in.dtype)
    sym = b.shapes.get(n.input[1])
    x = b.values.get(n.input[0])
    if sym is None or x is None:
        return None
    b.values[n.output[0]] = reshape(b, x, sym.items, bool(a.get("allowzero", 0)))
    return None


def reshape(b, x: SSAValue, target: Sequence[int | SSAValue], allowzero: bool = False) -> SSAValue:
    """ONNX's Reshape of `x` to `target` (ints and `index` values): a 0 copies the input's
    dim at its place (unless `allowzero`), one -1 takes what is left of the input's
    elements. A `graph.reshape` when every dim is known at import (it infers the -1
    itself, from dims known or not), else a `graph.dynamic_reshape` whose target dims
    are computed at run time: the -1 as the input's element count over the product of
    the others (whether it divides evenly is checked when the reshape runs)."""
    items = list(target)
    if not allowzero:
        for k, d in enumerate(items):
            if isinstance(d, int) and d == 0:
                if k >= len(x.type.get_shape()):
                    raise OnnxImportError(f"{b.where()}: a 0 at target dim {k} copies no dim of a rank-"
                                          f"{len(x.type.get_shape())} input")
                items[k] = dim_of(b, x, k)
    if all(isinstance(d, int) for d in items):
        return b.op(graph.ReshapeOp, [x], shape=items)
    holes = [k for k, d in enumerate(items) if isinstance(d, int) and d == -1]
    if len(holes) > 1 or any(isinstance(d, int) and d < -1 for d in items):
        raise OnnxImportError(f"{b.where()}: a target shape needs non-negative dims and at most one -1, got "
                              f"{[d if isinstance(d, int) else '?' for d in items]}")
    if holes:
        items[holes[0]] = _rest(b, x, [d for k, d in enumerate(items) if k != holes[0]])
    return b.op(graph.DynamicReshapeOp, [x, _shape_value(b, Sym(items))])


def _rest(b, x: SSAValue, others: list[int | SSAValue]) -> int | SSAValue:
    """`x`'s element count over the product of `others`: a number when the unknown dims
    among `others` are `x`'s own unknown dims (a 0 copying them, `Shape` gathering them),
    which cancel; else computed at run time."""
    dims = x.type.get_shape()
    unknown = sorted(k for k, d in enumerate(dims) if d < 0)
    copied = sorted(_axis_of(x, d) for d in others if not isinstance(d, int))
    known = int(np.prod([d for d in others if isinstance(d, int)], dtype=np.int64))
    if copied == unknown and known > 0:
        numel = int(np.prod([d for d in dims if d >= 0], dtype=np.int64))
        if numel % known:
            raise OnnxImportError(f"{b.where()}: cannot reshape {x.type} to leave {known} dividing its elements")
        return numel // known
    return b.emit(arith.DivSIOp(_index_of(b, _product(b, dims_of(b, x))), _index_of(b, _product(b, others)))).result


def _axis_of(x: SSAValue, dim: SSAValue) -> int:
    """The axis of `x` that `dim` is the `dynshape.dim` of, or -1."""
    op = dim.owner
    return op.index.value.data if isinstance(op, dynshape.DimOp) and op.source is x else -1


def _product(b, items: Sequence[int | SSAValue]) -> int | SSAValue:
    """The product of dims, folded where they are known."""
    known = int(np.prod([d for d in items if isinstance(d, int)], dtype=np.int64))
    total: int | SSAValue = known
    for d in items:
        if not isinstance(d, int):
            total = d if total == 1 else b.emit(arith.MuliOp(_index_of(b, total), d)).result
    return total


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
        if isinstance(want, int) and want == 1 and have_axis >= 0:  # bidirectional: the input's dim
            want = dim_of(b, x, have_axis)
        target.append(want)
    b.values[n.output[0]] = b.op(graph.BroadcastToOp, [x, _shape_value(b, Sym(target))])
    return None


def _sym_equal(b, n, a):
    """`Equal` of dims, decided at import: equal numbers, the same value, or a dim (never
    negative) against a negative number (PyTorch's `expand(-1)` tests dims for -1)."""
    both = _broadcast_dims(b, n.input[:2])
    if both is None:
        return None
    lhs, rhs = both
    items: list[int | SSAValue] = []
    for x, y in zip(lhs.items, rhs.items):
        if isinstance(x, int) and isinstance(y, int) or x is y:
            items.append(int(x == y))
        elif isinstance(x, int) and x < 0 or isinstance(y, int) and y < 0:
            items.append(0)
        else:
            return None
    return Sym(items, lhs.scalar and rhs.scalar, np.bool_)


def _sym_where(b, n, a):
    """`Where` choosing between dims by a condition known at import."""
    cond = _sym(b, n.input[0])
    both = _broadcast_dims(b, n.input[1:3])
    if cond is None or both is None or not all(isinstance(c, int) for c in cond.items):
        return None
    x, y = both
    flags = cond.items * len(x.items) if len(cond.items) == 1 else cond.items
    if len(flags) != len(x.items):
        return None
    return Sym([p if c else q for c, p, q in zip(flags, x.items, y.items)], x.scalar and y.scalar, x.dtype)


SHAPE_CONVERTERS: dict[str, Callable[[Any, Any, dict[str, Any]], Sym | None]] = {
    "Shape": _sym_shape, "Size": _sym_size, "Gather": _sym_gather, "Unsqueeze": _sym_unsqueeze, "Squeeze": _sym_squeeze,
    "Concat": _sym_concat, "Cast": _sym_cast, "Slice": _sym_slice, "ConstantOfShape": _sym_constant_of_shape,
    "Reshape": _sym_reshape, "Expand": _sym_expand, "Mod": _sym_mod, "Equal": _sym_equal, "Where": _sym_where,
    **{k: _sym_arith for k in _SYM_ARITH},
}
"""Converters that follow shape values; each returns the symbolic result, or None when
its inputs are not shape values (the op is then converted as a tensor op), or defines
the node's tensor output itself (ConstantOfShape, Reshape, Expand) and returns None."""
