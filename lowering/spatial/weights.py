"""Weights on chip in the chosen precision (used by `lower-rnn-to-spatial`).

`make_resident` copies a loop-invariant tensor from DRAM into an SRAM buffer: matrices
(rank >= 2) in the weight precision, vectors in f32. `bf16`: round to nearest even
(`arith.truncf`). `int8`: symmetric with one f32 scale per leading index (per output row
of a dense weight), `scale = max |w_row| / 127` (1 for an all-zero row), `q = clamp(
floor(w / scale + 0.5), -127, 127)`, computed by the program when it loads the weights.
`decode_loads` then widens every read of a narrow buffer back to f32 (`extf`, or
`sitofp(q) * scale[row]`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.builder import Builder
from xdsl.dialects import memref
from xdsl.dialects import math as xmath
from xdsl.dialects.builtin import (
    BFloat16Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    f32,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint

from nimble.dialects import arith
from nimble.dialects import loop

WEIGHT_TYPES: dict[str, Attribute] = {"f32": f32, "bf16": BFloat16Type(), "int8": IntegerType(8)}
INT8_MAX = 127


def const(b: Builder, value: int | float, t: Attribute = IndexType()) -> SSAValue:
    attr = FloatAttr(value, t) if isinstance(value, float) else IntegerAttr(value, t)
    return b.insert(arith.ConstantOp(attr)).result


def nest(b: Builder, dims: Sequence[SSAValue], body: Callable[[Builder, list[SSAValue]], None],
         zero: SSAValue, one: SSAValue) -> None:
    """`loop.foreach` over every index of `dims` (row-major)."""

    def level(b: Builder, i: int, ivs: list[SSAValue]) -> None:
        if i == len(dims):
            body(b, ivs)
            return
        block = Block(arg_types=[IndexType()])
        b.insert(loop.ForeachOp(zero, dims[i], one, Region(block)))
        inner = Builder(InsertPoint.at_end(block))
        level(inner, i + 1, [*ivs, block.args[0]])
        inner.insert(loop.YieldOp())

    level(b, 0, [])


def buffer_dims(b: Builder, buf: SSAValue) -> list[SSAValue]:
    return [const(b, d) if d >= 0 else b.insert(memref.DimOp(buf, const(b, i))).result
            for i, d in enumerate(buf.type.get_shape())]


def copy(b: Builder, src: SSAValue, dst: SSAValue, dims: list[SSAValue], zero: SSAValue, one: SSAValue) -> None:
    def body(b: Builder, ivs: list[SSAValue]) -> None:
        b.insert(memref.StoreOp.get(b.insert(memref.LoadOp.get(src, ivs)).res, dst, ivs))

    nest(b, dims, body, zero, one)


@dataclass
class Resident:
    """An invariant tensor in SRAM: its buffer, and for int8 the per-row scales."""

    buffer: SSAValue
    scale: SSAValue | None = None


def make_resident(b: Builder, src: SSAValue, precision: str, zero: SSAValue, one: SSAValue) -> Resident:
    """Copy `src` (DRAM) into SRAM, matrices in the weight precision."""
    t: MemRefType = src.type
    dims = buffer_dims(b, src)
    dynamic = [d for d, n in zip(dims, t.get_shape()) if n < 0]
    element = WEIGHT_TYPES[precision] if len(t.get_shape()) >= 2 else f32
    buf = b.insert(loop.AllocOp(loop.Level.SRAM, MemRefType(element, t.get_shape()), dynamic)).memref
    buf.name_hint = f"{src.name_hint}_sram" if src.name_hint else None
    if element == f32:
        copy(b, src, buf, dims, zero, one)
        return Resident(buf)
    if isinstance(element, BFloat16Type):
        def encode(b: Builder, ivs: list[SSAValue]) -> None:
            v = b.insert(memref.LoadOp.get(src, ivs)).res
            b.insert(memref.StoreOp.get(b.insert(arith.TruncFOp(v, element)).result, buf, ivs))

        nest(b, dims, encode, zero, one)
        return Resident(buf)
    # int8: scale[r] = max |src[r, ...]| / 127 (1 for an all-zero row); q = round(v / scale).
    rows = t.get_shape()[0]
    scale = b.insert(loop.AllocOp(loop.Level.SRAM, MemRefType(f32, [rows]), dynamic[:1] if rows < 0 else [])).memref
    scale.name_hint = f"{src.name_hint}_scale" if src.name_hint else None
    rest = dims[1:]

    def per_row(b: Builder, row: list[SSAValue]) -> None:
        amax = _max_over(b, rest, zero, one, lambda b, ivs: b.insert(
            xmath.AbsFOp(b.insert(memref.LoadOp.get(src, [*row, *ivs])).res)).result)
        zero_f = const(b, 0.0, f32)
        is_zero = b.insert(arith.CmpfOp(amax, zero_f, "oeq")).result
        s = b.insert(arith.DivfOp(amax, const(b, float(INT8_MAX), f32))).result
        s = b.insert(arith.SelectOp(is_zero, const(b, 1.0, f32), s)).result
        b.insert(memref.StoreOp.get(s, scale, row))

        def quantize(b: Builder, ivs: list[SSAValue]) -> None:
            v = b.insert(memref.LoadOp.get(src, [*row, *ivs])).res
            scaled = b.insert(arith.AddfOp(b.insert(arith.DivfOp(v, s)).result, const(b, 0.5, f32))).result
            rounded = b.insert(xmath.FloorOp(scaled)).result
            clamped = b.insert(arith.MinimumfOp(b.insert(arith.MaximumfOp(rounded, const(b, -float(INT8_MAX), f32))
                                                         ).result, const(b, float(INT8_MAX), f32))).result
            q = b.insert(arith.TruncIOp(b.insert(arith.FPToSIOp(clamped, IntegerType(32))).result, element)).result
            b.insert(memref.StoreOp.get(q, buf, [*row, *ivs]))

        nest(b, rest, quantize, zero, one)

    nest(b, dims[:1], per_row, zero, one)
    return Resident(buf, scale)


def _max_over(b: Builder, dims: Sequence[SSAValue], zero: SSAValue, one: SSAValue,
                 value: Callable[[Builder, list[SSAValue]], SSAValue]) -> SSAValue:
    """max over every index of `dims` of `value` (0 over no dims: `value` itself)."""

    def level(b: Builder, i: int, ivs: list[SSAValue]) -> SSAValue:
        if i == len(dims):
            return value(b, ivs)
        block = Block(arg_types=[IndexType()])
        inner = Builder(InsertPoint.at_end(block))
        inner.insert(loop.YieldOp([level(inner, i + 1, [*ivs, block.args[0]])]))
        return b.insert(loop.ReduceOp(zero, dims[i], one, [const(b, 0.0, f32)], [loop.Combiner.MAX], Region(block))).outs[0]

    return level(b, 0, [])


def decode_loads(scope: Operation, residents: dict[SSAValue, Resident]) -> None:
    """Loads of narrow-precision SRAM buffers widened back to f32 where they are read."""
    for load in [o for o in scope.walk() if isinstance(o, memref.LoadOp) and o.memref in residents]:
        resident = residents[load.memref]
        element = load.memref.type.get_element_type()
        if element == f32:
            continue
        b = Builder(InsertPoint.before(load))
        narrow = b.insert(memref.LoadOp.get(load.memref, list(load.indices))).res
        if isinstance(element, BFloat16Type):
            wide = b.insert(arith.ExtFOp(narrow, f32)).result
        else:
            q = b.insert(arith.SIToFPOp(narrow, f32)).result
            s = b.insert(memref.LoadOp.get(resident.scale, [load.indices[0]])).res
            wide = b.insert(arith.MulfOp(q, s)).result
        load.res.replace_all_uses_with(wide)
        load.detach()
        load.erase()
