"""Work-group phases: a grid loop each iteration of which stages buffers for its nests.

A kernel over panels of pixels (a conv2d with im2col, `KernelBuilder.pixel_panels`)
allocates, per panel, the buffers its output nest reads (the panel's im2col rows) and
fills them with nests of its own: `foreach n { foreach panel { alloc; fill nests;
foreach channel { foreach pixel { ... } } } }`. On a device each iteration of such a
phase's grid loops goes to one work-group:

- the grid loops deal their iterations out to work-groups (strided by the number of
  groups), so any number of groups computes the same result;
- a `sram` buffer is work-group memory (OpenCL `__local`), declared at the function's
  scope (its shape must be static); a `dram` buffer is a slice of device memory the host
  provides per work-group (`Param.per_group`), reused by the group from one iteration to
  the next, so it stays in the cache of the core or compute unit running the group;
- each nest of the body is shared out among the group's work-items: a nest of two loops
  whose body fits a register tile (the output nest: channels x pixels) deals out its
  tiles, any other nest the iterations of its outermost loop; a barrier follows each
  nest (the next nest reads what it wrote, the next iteration overwrites the buffers).

The host picks the work-group size (`OpenCLRuntime.launch_shape`): one work-item on a
CPU device, where a group runs on one core anyway (the im2col rows of a panel are then
written and read from that core's cache, instead of an image-wide buffer written to
memory and read back).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from xdsl.dialects import memref
from xdsl.dialects.builtin import IndexType

from nimble.dialects import loop
from nimble.dialects import kernel_analysis
from nimble.lowering.opencl.c_source import CBuffer, NoDeviceLowering, Param, is_one, is_pure_scalar, sole_inner
from nimble.lowering.opencl.c_tiles import NotTileable

if TYPE_CHECKING:
    from nimble.lowering.opencl.c_emitter import CEmitter


def group_phase(e: CEmitter, params: list[Param], name: str, mapped: list[loop.ForeachOp]) -> tuple[list[str], bool]:
    """The body of the phase whose grid loops are `mapped` (the last one's body stages
    buffers), as source lines, and whether it splits its iterations' tiles between
    groups along the next grid axis (`split_axis`)."""
    f = e.f
    body = [op for op in mapped[-1].body.block.ops if not isinstance(op, loop.YieldOp)]
    split = split_axis(e, mapped)
    for op in body:
        if isinstance(op, loop.AllocOp) and op.level.data == loop.Level.SRAM:
            t = op.memref.type
            if any(d < 0 for d in t.get_shape()):
                raise NoDeviceLowering(f"a sram-level buffer of @{e.name} with a `?` dim (work-group memory "
                                       "has a size fixed when compiling)")
            local = e.fresh("l")
            e.line(f"{f.local_space} {e.ctype(t.element_type)} {local}[{max(1, math.prod(t.get_shape()))}];")
            e.buffers[op.memref] = CBuffer(local, [str(d) for d in t.get_shape()])
    group = e.fresh("g")
    axes = range(len(mapped) + (split is not None))
    linear = "0"
    for axis in reversed(axes):
        linear = f"(long){f.group_id.format(axis)}" if linear == "0" else \
            f"(long){f.group_id.format(axis)} + (long){f.group_count.format(axis)} * ({linear})"
    e.line(f"long {group} = {linear};")
    for axis, m in zip(reversed(range(len(mapped))), mapped):
        if m is mapped[-1]:
            e.open_strided(m, f.group_id, f.group_count, axis)
        else:
            e.open_grid_loop(m, axis, mapped[mapped.index(m) + 1], groups=True)
    slices = {p.alloc: p for p in params if p.per_group}
    for op in body:
        if isinstance(op, loop.AllocOp) and op in slices:
            t = op.memref.type
            sizes = iter(op.dynamic_sizes)
            dims = [e.v(next(sizes)) if d < 0 else str(d) for d in t.get_shape()]
            elements = " * ".join(f"({d})" for d in dims) or "1"
            e.buffers[op.memref] = CBuffer(f"({slices[op].name} + {group} * {elements})", dims)
        elif isinstance(op, loop.AllocOp):
            if op.level.data != loop.Level.SRAM:
                e.op(op)  # a register buffer: private to each work-item
        elif isinstance(op, loop.ForeachOp):
            shared_nest(e, op, split)
            e.line(f.barrier)
        elif is_pure_scalar(op):
            e.op(op)
        else:
            raise NoDeviceLowering(f"'{op.name}' between the nests of a work-group phase of @{e.name}")
    for _ in mapped:
        e.depth -= 1
        e.line("}")
    return [e.signature(params, name) + " {", *e.lines, "}", ""], split is not None


def split_axis(e: CEmitter, mapped: list[loop.ForeachOp]) -> int | None:
    """The grid axis along which groups may split an iteration's register tiles (each
    such group stages the iteration's buffers itself): the axis after the mapped
    loops, if there is one and every nest of the body either has register tiles or
    writes only the iteration's own buffers (so a group repeating it races with none)."""
    if len(mapped) >= e.f.grid_dims or e.f.tile is None:
        return None
    body = mapped[-1].body.block
    own = {op.memref for op in body.ops if isinstance(op, loop.AllocOp)}
    for nest in body.ops:
        if isinstance(nest, loop.ForeachOp) and _tile_pair(nest) is None:
            stored = {kernel_analysis.viewed_buffer(op.memref) for op in nest.walk() if isinstance(op, memref.StoreOp)}
            if not stored <= own:
                return None
    return len(mapped)


def shared_nest(e: CEmitter, nest: loop.ForeachOp, split: int | None) -> None:
    """`nest` run by the work-items of a group together: its register tiles dealt out
    (between the groups along `split` too), else its outermost loop's iterations."""
    f = e.f
    inner = _tile_pair(nest)
    if f.tile is not None and inner is not None:
        state = e.save()
        rows, lanes = f.tile
        first, stride = f.local_id, f.local_size
        if split is not None:
            first = f"(long){f.group_id.format(split)} * {f.local_size} + {f.local_id}"
            stride = f"(long){f.group_count.format(split)} * {f.local_size}"
        try:
            row_tiles, lane_tiles, t, i0, j0 = (e.fresh(s) for s in ("n", "n", "t", "i", "j"))
            for count, m, size in ((row_tiles, nest, rows), (lane_tiles, inner, lanes)):
                lb, ub = e.v(m.lower), e.v(m.upper)
                e.line(f"long {count} = {f.int_max}({ub} - {lb} + {size - 1}, 0L) / {size};")
            e.line(f"for (long {t} = {first}; {t} < {row_tiles} * {lane_tiles}; {t} += {stride}) {{")
            e.depth += 1
            e.line(f"long {i0} = {e.v(nest.lower)} + {t} / {lane_tiles} * {rows};")
            e.line(f"long {j0} = {e.v(inner.lower)} + {t} % {lane_tiles} * {lanes};")
            e.tile_at(nest, inner, i0, j0)
            e.depth -= 1
            e.line("}")
            return
        except NotTileable:
            e.restore(state)
    e.open_strided(nest, f.local_id, f.local_size)
    e.region(nest.body.block)
    e.depth -= 1
    e.line("}")


def _tile_pair(nest: loop.ForeachOp) -> loop.ForeachOp | None:
    """The inner loop of a two-loop nest a register tile can cover: unit steps, pure
    scalar code around the inner loop, whose bounds do not depend on the outer one."""
    m = sole_inner(nest)
    if m is None or not (is_one(nest.step) and is_one(m.step)) or not isinstance(m.lower.type, IndexType):
        return None
    if any(loop.defined_inside(v, nest) for v in (m.lower, m.upper)):
        return None
    return m
