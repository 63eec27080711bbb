"""`share-packs`: a kernel packs the same operand the same way once, not once per nest.

Register tiles copy their operands into packed buffers before the product (`loop.alloc`
then a loop nest filling it: a dense layer's rows transposed into panels for lanes along
the rows, passes/loop_transforms/row_lanes.py). A kernel with several such nests over one operand packs
it once per nest: a dense layer whose output is sliced into several outputs (BERT's
query, key and value from one weight matrix) is one nest per slice, each packing `x`.

After tile-vectorize (and CSE, so equal sizes are one value) a pack is a top-level
`loop.alloc` and the top-level nests that fill it (whole panels, then a partial one),
each writing nothing else, holding no parallel loop (a chunk of a split launch runs it
whole) and reading only buffers the kernel never writes. A later pack whose buffer has
the same type and sizes and whose nests do the same is dropped, its uses reading the
first buffer. Measured (BERT 4 x 256, S = 128,
ONNX, 2 threads): the query/key/value dense packed `x` three times per chunk; once,
its min went 262 -> 241 us.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass

from nimble.dialects import arith, kernel_analysis, loop
from nimble.passes.loop_transforms.tile_emitter import schedule_of


def _same(a: Operation, b: Operation, known: dict[SSAValue, SSAValue]) -> bool:
    """Whether `b` does what `a` does, `known` mapping values of `a`'s to `b`'s; constants
    compared by value (CSE may have left one nest its own and given the other the
    kernel's)."""
    def key(v: SSAValue, mapped: bool) -> object:
        if isinstance(v.owner, arith.ConstantOp):
            return "constant", v.owner.value, v.type
        return known.get(v, v) if mapped else v

    ops_a = [o for o in a.walk() if not isinstance(o, arith.ConstantOp)]
    ops_b = [o for o in b.walk() if not isinstance(o, arith.ConstantOp)]
    if len(ops_a) != len(ops_b):
        return False
    for x, y in zip(ops_a, ops_b):
        if type(x) is not type(y) or x.attributes != y.attributes or x.properties != y.properties \
                or len(x.operands) != len(y.operands) or len(x.results) != len(y.results) \
                or [len(r.blocks) for r in x.regions] != [len(r.blocks) for r in y.regions] \
                or any(key(u, True) != key(v, False) for u, v in zip(x.operands, y.operands)):
            return False
        known.update(zip(x.results, y.results))
        for rx, ry in zip(x.regions, y.regions):
            for bx, by in zip(rx.blocks, ry.blocks):
                if len(bx.args) != len(by.args):
                    return False
                known.update(zip(bx.args, by.args))
    return True


def share_packs(kernel: loop.KernelOp) -> int:
    """Drop the kernel's repeated packs; returns how many."""
    block = kernel.body.block
    writers: dict[SSAValue, list[Operation]] = {}
    for top in block.ops:
        for target in kernel_analysis.accessed_buffers(top)[1]:
            writers.setdefault(target, []).append(top)
    seen: list[tuple[loop.AllocOp, list[Operation]]] = []
    dropped = 0
    for alloc in [o for o in block.ops if isinstance(o, loop.AllocOp)]:
        fills = writers.get(alloc.memref, [])
        if not fills or any(not isinstance(f, loop.ForeachOp) or kernel_analysis.accessed_buffers(f)[1] != {alloc.memref}
                            or any(isinstance(o, loop.ForeachOp) and schedule_of(o).parallel for o in f.walk())
                            or any(r in writers for r in kernel_analysis.accessed_buffers(f)[0]) for f in fills):
            continue
        same = next((a for a, fs in seen if a.memref.type == alloc.memref.type
                     and list(a.dynamic_sizes) == list(alloc.dynamic_sizes) and len(fs) == len(fills)
                     and all(_same(f, g, {a.memref: alloc.memref}) for f, g in zip(fs, fills))), None)
        if same is None:
            seen.append((alloc, fills))
            continue
        for fill in fills:
            fill.detach()
            fill.erase()
        alloc.memref.replace_all_uses_with(same.memref)
        alloc.detach()
        alloc.erase()
        dropped += 1
    return dropped


@dataclass(frozen=True)
class SharePacksPass(ModulePass):
    """Reuse a kernel's packed buffer where a later nest packs the same operand again."""

    name = "share-packs"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in loop.kernels_of(op):
            share_packs(kernel)
