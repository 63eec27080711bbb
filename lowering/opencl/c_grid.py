"""Grid sizes on the host: a kernel's top-level index code evaluated on a launch's
arguments (`GridEvaluator`), and which values it can compute (`host_computable`)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from xdsl.dialects import func, memref
from xdsl.dialects.builtin import (
    IndexType,
    MemRefType,
)
from xdsl.ir import Block, Operation, SSAValue

from nimble.dialects import arith
from nimble.dialects import kernel_analysis, loop
from nimble.dialects.index_semantics import INDEX_BINARY, INDEX_COMPARISONS, ceil_div
from nimble.lowering.opencl.c_source import KernelSource, NoDeviceLowering, type_key


def host_computable(value: SSAValue) -> bool:
    """Whether `GridEvaluator` can compute `value` from a launch's arguments."""
    if isinstance(value.owner, Block):
        return isinstance(value.owner.parent_op(), func.FuncOp) and isinstance(value.type, IndexType)
    op = value.owner
    if isinstance(op, arith.ConstantOp):
        return True
    if isinstance(op, memref.DimOp):
        source = kernel_analysis.viewed_buffer(op.source)
        return isinstance(source.owner, Block) and isinstance(op.index.owner, arith.ConstantOp)
    if type(op) in INDEX_OPS or isinstance(op, arith.CmpiOp):
        return all(host_computable(o) for o in op.operands)
    return False


# ---------------------------------------------------------------------------------------
# Grid sizes on the host


INDEX_OPS: dict[type[Operation], Callable[..., int]] = {
    **INDEX_BINARY,
    arith.IndexCastOp: lambda a: a, arith.ExtSIOp: lambda a: a,
    arith.SelectOp: lambda c, a, b: a if c else b,
}


ITEMSIZE = {"f32": 4, "f64": 8, "f16": 2, "bf16": 2, "i64": 8, "index": 8, "i32": 4, "i16": 2, "i8": 1, "i1": 1}


class GridEvaluator:
    """Evaluates a kernel's top-level index code on a launch's arguments (arrays by
    shape, ints), to size the grid of each phase."""

    def __init__(self, source: KernelSource):
        self.kernel = source.kernel
        self.args = list(self.kernel.args)
        self.grids = [p.grid for p in source.phases]
        self.tiles = [p.tile for p in source.phases]

    def __call__(self, args: Sequence[object]) -> list[tuple[int, ...]]:
        """Per phase, the number of iterations of each mapped loop (at least 1)."""
        known: dict[SSAValue, object] = {}
        for value, arg in zip(self.args, args):
            known[value] = arg.shape if isinstance(value.type, MemRefType) else int(arg)
        sizes = []
        for grid, tile in zip(self.grids, self.tiles):
            trips = []
            for axis, (lb, ub, step) in enumerate(grid):
                lo, hi, st = (self.value(v, known) for v in (lb, ub, step))
                per_thread = tile[axis] if axis < len(tile) else 1
                trips.append(max(1, ceil_div(ceil_div(hi - lo, st), per_thread)) if st > 0 else 1)
            sizes.append(tuple(trips) or (1,))
        return sizes

    def scratch_bytes(self, args: Sequence[object], allocs: Sequence[loop.AllocOp]) -> list[int]:
        """The size of each staging buffer for a launch on `args`."""
        known: dict[SSAValue, object] = {}
        for value, arg in zip(self.args, args):
            known[value] = arg.shape if isinstance(value.type, MemRefType) else int(arg)
        out = []
        for alloc in allocs:
            sizes = iter(alloc.dynamic_sizes)
            t = alloc.memref.type
            n = math.prod(self.value(next(sizes), known) if d < 0 else d for d in t.get_shape())
            out.append(max(n, 1) * ITEMSIZE[type_key(t.element_type)])
        return out

    def value(self, v: SSAValue, known: dict[SSAValue, object]) -> int:
        if v in known:
            return known[v]
        op = v.owner
        if isinstance(op, arith.ConstantOp):
            result = op.value.value.data
        elif isinstance(op, memref.DimOp):
            result = self.shape(op.source, known)[self.value(op.index, known)]
        elif isinstance(op, arith.CmpiOp):
            a, b = self.value(op.lhs, known), self.value(op.rhs, known)
            result = INDEX_COMPARISONS[op.predicate.value.data](a, b)
        elif type(op) in INDEX_OPS:
            result = INDEX_OPS[type(op)](*(self.value(o, known) for o in op.operands))
        else:
            raise NoDeviceLowering(f"a grid bound computed by '{op.name}'")
        known[v] = result
        return result

    def shape(self, buffer: SSAValue, known: dict[SSAValue, object]) -> tuple[int, ...]:
        if buffer in known:
            return known[buffer]
        op = buffer.owner
        if isinstance(op, memref.CollapseShapeOp):
            inner = self.shape(op.src, known)
            return tuple(math.prod(inner[a.value.data] for a in group) for group in op.reassociation)
        raise NoDeviceLowering("a grid bound reads the dims of a buffer that is not an argument")


