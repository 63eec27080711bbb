"""Depthwise and narrow grouped convs in *wide rows*, and the padded copies of a conv's
input they read.

A depthwise or narrow grouped conv on a small map (7 x 7, 14 x 14) computed row by row
runs each row of 7 or 14 pixels as one 8-lane vector step and 7 or 6 scalar ones per
tap where vectors have no masks (AVX2). In wide rows each channel's output rows are one run of
`(oh - 1) * wq + ow` pixels over a padded plane `wq` wide: the pixels past each row's
end (`wq - ow` of them) are computed too and dropped when the rows are copied out, and
every tap is a load along the run at a fixed offset (`_offset`). A stride of 2
reads the input's *phases* (`phases`: the s x s planes of every s-th row and column,
a polyphase copy), each tap from the plane of its phase, so the run is contiguous there
too. `pays` decides per conv, from the CPU's lanes and masks.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from xdsl.dialects import memref
from xdsl.ir import SSAValue

from nimble.dialects import graph
from nimble.dialects.target import target_of
from nimble.lowering.kernels.kernel_parts import Dim, collapse_view, sum_of_products
from nimble.lowering.kernels.scalar import const
from nimble.lowering.kernels.window_rules import dram_buffer

if TYPE_CHECKING:
    from nimble.lowering.kernels.kernel_builder import KernelBuilder


def padded(kb: KernelBuilder, op: graph.Conv2dOp) -> SSAValue:
    """A copy of `op`'s input with its padding written out as zeros (a staged buffer)."""
    n_, c_, h_, w_ = kb.dims(op.input)
    _strides, (top, left, bottom, right), _dilations = op.window()
    t = op.result.type.get_element_type()
    hp, wp = kb.iadd(h_, top + bottom), kb.iadd(w_, left + right)
    buffer = dram_buffer(kb, [n_, c_, hp, wp], t)
    zero = const(kb.emit, 0.0, t)

    def zeros(n: SSAValue, c: SSAValue, h: Dim, a: Dim, b: Dim) -> None:
        kb.foreach(kb.ibinary("sub", b, a),
                   lambda i: kb.emit(memref.StoreOp.get(zero, buffer, [kb.index(j) for j in (n, c, h, kb.iadd(i, a))])))

    def row(n: SSAValue, c: SSAValue, h: Dim) -> None:
        zeros(n, c, kb.iadd(h, top), 0, left)
        kb.foreach(w_, lambda w: kb.emit(memref.StoreOp.get(
            kb.at(op.input, [n, c, h, w]), buffer, [kb.index(j) for j in (n, c, kb.iadd(h, top), kb.iadd(w, left))])))
        zeros(n, c, kb.iadd(h, top), kb.iadd(w_, left), wp)

    def channel(n: SSAValue, c: SSAValue) -> None:
        kb.foreach(top, lambda h: zeros(n, c, h, 0, wp))
        kb.foreach(h_, lambda h: row(n, c, h))
        kb.foreach(bottom, lambda h: zeros(n, c, kb.iadd(h, kb.iadd(h_, top)), 0, wp))

    kb.foreach(n_, lambda n: kb.foreach(c_, lambda c: channel(n, c)))
    return buffer


def _plane_size(op: graph.Conv2dOp, h: int, w: int) -> tuple[int, int]:
    """Rows and columns of each phase plane of the padded input (the padded input itself
    at stride 1)."""
    (s0, s1), (top, left, bottom, right), _d = op.window()
    return -(-(h + top + bottom) // s0), -(-(w + left + right) // s1)


def _inside(phase: int, pad: int, stride: int, size: int, planes: int) -> tuple[int, int]:
    """The plane rows (or columns) [lo, hi) of `phase` that hold input rows: padded row
    `stride * i + phase`, input row that minus `pad`, in [0, size)."""
    lo = min(max(0, -(-(pad - phase) // stride)), planes)
    return lo, min(max(lo, (size - 1 + pad - phase) // stride + 1), planes)


def phases(kb: KernelBuilder, op: graph.Conv2dOp) -> SSAValue:
    """The padded input of a strided conv as its `s0 * s1` phase planes (a staged buffer
    `[n, c, s0 * s1, hq, wq]`): plane `a * s1 + b` holds padded row `s0 * i + a`,
    column `s1 * j + b` at `(i, j)`, zeros outside the input (static sizes)."""
    n_, c_, h_, w_ = kb.dims(op.input)
    (s0, s1), (top, left, _bottom, _right), _d = op.window()
    hq, wq = _plane_size(op, h_, w_)
    t = op.result.type.get_element_type()
    buffer = dram_buffer(kb, [n_, c_, s0 * s1, hq, wq], t)
    zero = const(kb.emit, 0.0, t)

    def span(a: int, b: int, body: Callable[[Dim], None]) -> None:
        if b > a:
            kb.foreach(b - a, lambda i: body(kb.iadd(i, a)))

    def plane(n: SSAValue, c: SSAValue, a: int, b: int) -> None:
        def store(value: SSAValue, i: Dim, j: Dim) -> None:
            kb.emit(memref.StoreOp.get(value, buffer, [kb.index(k) for k in (n, c, a * s1 + b, i, j)]))

        def zero_row(i: Dim) -> None:
            span(0, wq, lambda j: store(zero, i, j))

        def row(i: Dim) -> None:
            h = kb.iadd(kb.imul(i, s0), a - top)
            span(0, j_lo, lambda j: store(zero, i, j))
            span(j_lo, j_hi, lambda j: store(kb.at(op.input, [n, c, h, kb.iadd(kb.imul(j, s1), b - left)]), i, j))
            span(j_hi, wq, lambda j: store(zero, i, j))

        i_lo, i_hi = _inside(a, top, s0, h_, hq)
        j_lo, j_hi = _inside(b, left, s1, w_, wq)
        span(0, i_lo, zero_row)
        span(i_lo, i_hi, row)
        span(i_hi, hq, zero_row)

    def channel(n: SSAValue, c: SSAValue) -> None:
        for a in range(s0):
            for b in range(s1):
                plane(n, c, a, b)

    kb.foreach(n_, lambda n: kb.foreach(c_, lambda c: channel(n, c)))
    return buffer


def pays(kb: KernelBuilder, op: graph.Conv2dOp, copied: bool) -> bool:
    """Whether a depthwise or narrow grouped conv on a map of known size takes fewer steps
    in wide rows than row by row on the module's CPU, counting as one step a tap's vector
    step along a row (or scalar one, or one masked one), a pixel's copy out of the wide
    rows, and unless the other form copies the input too (`copied`) or there is nothing to
    copy (stride 1, no padding), an element of the padded copy or the phase planes."""
    _n, _c, h_, w_ = kb.dims(op.input)
    _o, cg, kh_, kw_ = kb.dims(op.weight)
    _n, _o, oh_, ow_ = kb.dims(op.result)
    (s0, s1), pads, _d = op.window()
    if kb.device or not all(isinstance(d, int) for d in (h_, w_, oh_, ow_)):
        return False
    cpu = target_of(op)
    lanes, masks = cpu.lanes(32), cpu.masks

    def steps(n: int) -> int:
        return n // lanes + (min(n % lanes, 1) if masks else n % lanes)

    hq, wq = _plane_size(op, h_, w_)
    copies = (s0, s1) != (1, 1) or any(pads)
    copy = hq * wq * s0 * s1 if copies and not copied else 0
    taps = cg * kh_ * kw_
    wide = steps((oh_ - 1) * wq + ow_) * taps + oh_ * ow_ + copy
    return wide < oh_ * steps(ow_) * taps


def conv(kb: KernelBuilder, op: graph.Conv2dOp, out: SSAValue | None) -> SSAValue:
    """The staged result `out[n, o, oh, ow]` of a depthwise or narrow grouped conv in wide
    rows (a new buffer, or `out`: the kernel's output buffer): per output channel, each
    pixel `p` of the run takes tap (ci, kh, kw) from the plane of its phase of input
    channel ci of its group at `p + _offset(...)`, into a
    buffer of the channel's own whose rows are then copied out."""
    (s0, s1), pads, _d = op.window()
    n_, o_, oh_, ow_ = kb.dims(op.result)
    _n, c_, h_, w_ = kb.dims(op.input)
    _o, cg, kh_, kw_ = kb.dims(op.weight)
    hq, wq = _plane_size(op, h_, w_)
    if (s0, s1) != (1, 1):
        source = kb.staged(("phases", op), lambda: phases(kb, op))
    else:
        source = kb.staged(("padded", op), lambda: padded(kb, op)) if any(pads) else kb.buffers[op.input]
    flat = _flat(kb, source, [n_, c_, s0 * s1 * hq * wq])
    per_group = kb.ibinary("div", o_, op.groups.value.data)
    t = op.result.type.get_element_type()
    run = (oh_ - 1) * wq + ow_
    if out is None:
        out = dram_buffer(kb, [n_, o_, oh_, ow_], t)
    taps = [(ci, kh, kw) for ci in range(cg) for kh in range(kh_) for kw in range(kw_)]

    def channel(n: SSAValue, o: SSAValue) -> None:
        first = kb.imul(kb.ibinary("div", o, per_group), cg)  # (the group's first input channel)
        weights = [kb.at(op.weight, [o, ci, kh, kw]) for ci, kh, kw in taps]
        bias = kb.at(op.bias, [o]) if op.bias is not None else const(kb.emit, 0.0, t)
        wide = dram_buffer(kb, [run], t)

        def pixel(p: SSAValue) -> None:
            kb.store_buffer(sum_of_products(kb, bias, [
                (kb.load_buffer(flat, [n, kb.iadd(first, ci), kb.iadd(p, _offset(op, kh, kw, hq, wq))]), w)
                for (ci, kh, kw), w in zip(taps, weights)]), wide, [p])

        kb.foreach(run, pixel)
        kb.foreach(oh_, lambda oh: kb.foreach(ow_, lambda ow: kb.emit(memref.StoreOp.get(
            kb.load_buffer(wide, [kb.iadd(kb.imul(oh, wq), ow)]), out, [kb.index(i) for i in (n, o, oh, ow)]))))

    kb.foreach(n_, lambda n: kb.foreach(o_, lambda o: channel(n, o)))
    return out


def _offset(op: graph.Conv2dOp, kh: int, kw: int, hq: int, wq: int) -> int:
    """Where tap (kh, kw) of output pixel `p` (row-major in rows `wq` wide) is in the
    channel's planes, after `p`: padded row `s0 * oh + kh * d0` is row `oh + kh * d0 //
    s0` of the plane of phase `kh * d0 % s0` (columns alike). The last tap of the run's
    last pixel is its plane's last element or before it."""
    (s0, s1), _pads, (d0, d1) = op.window()
    (down, a), (right, b) = divmod(kh * d0, s0), divmod(kw * d1, s1)
    return (a * s1 + b) * hq * wq + down * wq + right


def _flat(kb: KernelBuilder, buffer: SSAValue, dims: list[Dim]) -> SSAValue:
    """`buffer` (n, c, ...) viewed as (n, c, the rest in one dim), here."""
    view = kb.emit(collapse_view(buffer, [[0], [1], list(range(2, len(buffer.type.get_shape())))]))
    kb.buffer_dims[view] = dims
    return view
