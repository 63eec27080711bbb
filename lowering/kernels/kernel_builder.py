"""Build one loop-nest kernel from a `graph.fused` group.

The kernel is a `loop.kernel` taking one `memref` per tensor input, one scalar per index
input, then one `memref` per output (destination passing). Its body computes every
output in a `loop.foreach` nest over the output's dims; inside, the value of any group
member at an index is *computed where it is needed* (`KernelBuilder.at`): elementwise ops
by the scalar table (`scalar.SCALAR`), injective ops by mapping the index to their input's
index, reductions and heavy ops (matmul, conv) by a `loop.reduce` at that point
(`index_rules.INDEX_RULES`). Intermediates of a group therefore never reach memory;
`hoist-invariant` then lifts reductions that do not depend on inner loops (softmax's row
max and sum) out of them.

Dims of inputs come from `memref.dim`; dims of members from their shape functions run
on a dim algebra that emits index arithmetic into the kernel. The kernel does not check
shapes: its caller does, with the same shape functions, before the call.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from xdsl.builder import Builder
from xdsl.dialects import memref
from xdsl.dialects.builtin import IndexType, IntegerAttr, TensorType
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint

from nimble.dialects import arith, loop
from nimble.dialects.dim_expr import Expr
from nimble.dialects.dynshape import ShapeType
from nimble.dialects.graph import Conv2dOp, FusedOp, GraphOp, YieldOp
from nimble.dialects.graph.types import symbolic_dims
from nimble.dialects.shape_functions import INT_BINARY
from nimble.lowering.kernels import winograd
from nimble.lowering.kernels.index_rules import FLATTEN_PIXELS, INDEX_RULES, INTO_OUTPUT, broadcast_index
from nimble.lowering.kernels.kernel_parts import (
    Dim,
    Frame,
    KernelDims,
    NoLoopLowering,
    Panel,
    Pixels,
    collapse_view,
    memref_of,
)
from nimble.lowering.kernels.scalar import SCALAR, NoScalarRule, const
from nimble.lowering.kernels.window_rules import PANEL_PIXELS, panel_rows


class KernelBuilder:
    """Turns one fused group into one kernel function (see the module docstring)."""

    def __init__(self, group: FusedOp, name: str, no_stretch: bool = False, pixel_panels: bool = False,
                 device: bool = False, winograd: bool = False):
        self.no_stretch = no_stretch
        """Assume no `?` dim is stretched by broadcasting (see `graph.broadcasting.broadcast_sites`)."""
        self.winograd = winograd
        """Compute a conv whose form sizes known only at run time decide (`winograd.wanted`)
        in the Winograd form: the host launches this kernel when they ask for it."""
        self.pixel_panels = pixel_panels
        """Run nests over flattened pixels panel by panel, `PANEL_PIXELS` at a time, the
        panel loop outside the channels: a member may then stage a buffer per panel (a
        conv's im2col rows for these pixels, `window_rules`) that stays in cache for every
        channel, instead of one buffer for the whole image. On a device only for a group
        with a conv (`graph_to_loops.kernel_options`: each panel a work-group's buffer)."""
        self.device = device
        """Built for a device, whose emitter allocates the staged buffers before the launch:
        their sizes must then be values the host computes (no loads): roi_align's sample
        tables then hold a fixed number of samples a bin (`roi_align_rules.DEVICE_TABLE_GRID`)."""
        self.group = group
        self.block = group.body.block
        yielded = self.block.last_op
        assert isinstance(yielded, YieldOp)
        self.outputs = list(yielded.operands)
        arg_types: list[Attribute] = [t for a in self.block.args for t in self._arg_types(a.type)]
        n_in = len(arg_types)
        arg_types += [memref_of(v.type) for v in self.outputs]
        entry = Block(arg_types=arg_types)
        self.func = loop.KernelOp(name, arg_types, Region(entry))
        # Constants and dims go to a prologue, staged buffers (im2col) to a staging block;
        # both are spliced before the loop nests at the end.
        self.prologue = Block()
        self.entry = Builder(InsertPoint.at_end(self.prologue))
        self.staging = Block()
        self._staged: dict[object, SSAValue] = {}
        self._staging_now: list[tuple[Block, Operation | None]] = []  # (block, the op its loops follow) per `make` running
        self.buffer_dims: dict[SSAValue, list[Dim]] = {}  # dims of staged buffers
        self.flatten = False
        self.pixels: Pixels | None = None
        self.panel: Panel | None = None
        self._panel_staging: Block | None = None
        self._panel_nests = 0  # keys buffers staged per panel apart from one nest to the next
        self.b = Builder(InsertPoint.at_end(entry))
        self.buffers: dict[SSAValue, SSAValue] = {}
        self.scalars: dict[SSAValue, SSAValue] = {}
        self.shapes: dict[SSAValue, list[SSAValue]] = {}
        args = iter(entry.args)
        for value in self.block.args:
            if isinstance(value.type, TensorType):
                self.buffers[value] = next(args)
            elif isinstance(value.type, ShapeType):
                self.shapes[value] = [next(args) for _ in range(value.type.rank.data)]
            else:
                self.scalars[value] = next(args)
        self.out_buffers = list(entry.args[n_in:])
        self.known: dict[SSAValue, list[Dim]] = {}
        self._by_name: dict[Expr, SSAValue] = {}
        self.k = KernelDims(self.entry, self.known, self.scalars, self.shapes, no_stretch)
        self._consts: dict[tuple[int, Attribute], SSAValue] = {}
        self._cache: list[dict[tuple[SSAValue, tuple], SSAValue]] = [{}]

    @staticmethod
    def _arg_types(t: Attribute) -> list[Attribute]:
        """Kernel arguments for one input: a buffer, an index, or a shape's dims."""
        if isinstance(t, TensorType):
            return [memref_of(t)]
        if isinstance(t, IndexType):
            return [t]
        if isinstance(t, ShapeType):
            return [IndexType()] * t.rank.data
        raise NoLoopLowering(f"a kernel cannot take a value of type {t}")

    # -- emission helpers -----------------------------------------------------------
    def emit(self, op: Operation) -> SSAValue:
        self.b.insert(op)
        return op.results[0] if op.results else None

    def index(self, d: Dim) -> SSAValue:
        """An index SSA value for a dim (constants live at the kernel entry)."""
        if isinstance(d, SSAValue):
            return d
        key = (d, IndexType())
        if key not in self._consts:
            op = arith.ConstantOp(IntegerAttr(d, IndexType()))
            self.entry.insert(op)
            self._consts[key] = op.result
        return self._consts[key]

    def iadd(self, a: Dim, b: Dim) -> Dim:
        return self._ibinary("add", a, b)

    def imul(self, a: Dim, b: Dim) -> Dim:
        return self._ibinary("mul", a, b)

    _IARITH = {"add": arith.AddiOp, "sub": arith.SubiOp, "mul": arith.MuliOp, "min": arith.MinSIOp,
               "max": arith.MaxSIOp, "div": arith.DivSIOp, "rem": arith.RemSIOp}

    def _ibinary(self, kind: str, a: Dim, b: Dim) -> Dim:
        if isinstance(a, int) and isinstance(b, int) and kind in INT_BINARY:
            return INT_BINARY[kind](a, b)
        if kind == "add" and b == 0 or kind == "mul" and b == 1:
            return a
        if kind == "add" and a == 0 or kind == "mul" and a == 1:
            return b
        return self.emit(self._IARITH[kind](self.index(a), self.index(b)))

    def ibinary(self, kind: str, a: Dim, b: Dim) -> Dim:
        return self._ibinary(kind, a, b)

    # -- dims -------------------------------------------------------------------------
    def dims(self, value: SSAValue) -> list[Dim]:
        if value not in self.known:
            for v in self._unknown(value):  # (operands first: no recursion along a chain of ops)
                if v not in self.known:
                    self._find_dims(v)
        return self.known[value]

    def _unknown(self, value: SSAValue) -> list[SSAValue]:
        """The tensor values `value`'s dims need whose dims are not known yet, each after
        the operands it needs, `value` last: the order in which a recursion over the
        operands (the first first) would find them."""
        order: list[SSAValue] = []
        seen: set[SSAValue] = set()
        stack: list[tuple[SSAValue, bool]] = [(value, False)]
        while stack:
            v, ready = stack.pop()
            if ready:
                order.append(v)
            elif v not in seen and v not in self.known:
                seen.add(v)
                stack.append((v, True))
                if v not in self.buffers:
                    stack += [(o, False) for o in reversed(v.owner.operands) if isinstance(o.type, TensorType)]
        return order

    def _find_dims(self, value: SSAValue) -> None:
        """`value`'s dims, its tensor operands' being known."""
        if value in self.buffers:
            buf = self.buffers[value]
            self.known[value] = self._named(value, [
                d if d >= 0 else self.entry.insert(memref.DimOp(buf, self.index(i))).result
                for i, d in enumerate(value.type.get_shape())
            ])
            return
        owner = value.owner
        assert isinstance(owner, GraphOp)
        shapes = owner.shape_function(self.k)
        for r, s in zip(owner.results, shapes):
            # A dim the result type fixes is that constant, whatever value the shape
            # function computes it from (a dynamic reshape's shape operand: `[s, 256] ->
            # [s, 4, 64]` then indexes by groups, not flat).
            static = r.type.get_shape() if isinstance(r.type, TensorType) else ()
            self.known[r] = self._named(r, [d if d >= 0 else x for d, x in zip(static, s)]
                                        if len(static) == len(s) else list(s))

    def _named(self, value: SSAValue, dims: list[Dim]) -> list[Dim]:
        """`dims` with each dim the types name alike (`#nimble.dims`: `seq` here and
        there) one SSA value, the first found: a reshape or a transpose between tensors
        whose `seq`s are different values at the kernel's entry would otherwise index
        through a division by one of them (`[b, s, 64] -> [b, s, 4, 16]` whole groups)."""
        named = symbolic_dims(value.type) if isinstance(value.type, TensorType) else ()
        if len(named) != len(dims):
            return dims
        return [self._by_name.setdefault(e, d) if isinstance(d, SSAValue) and isinstance(e, Expr) else d
                for d, e in zip(dims, named)]

    # -- loops ------------------------------------------------------------------------
    def foreach(self, upper: Dim, body: Callable[[SSAValue], None], step: Dim = 1) -> loop.ForeachOp:
        block = Block(arg_types=[IndexType()])
        op = loop.ForeachOp(self.index(0), self.index(upper), self.index(step), Region(block))
        self.emit(op)
        self._in_block(block, lambda: body(block.args[0]))
        Builder(InsertPoint.at_end(block)).insert(loop.YieldOp())
        return op

    def reduce(self, upper: Dim, inits: Sequence[SSAValue], kinds: Sequence[loop.Combiner],
               body: Callable[[SSAValue], Sequence[SSAValue]]) -> list[SSAValue]:
        block = Block(arg_types=[IndexType()])
        yielded: list[SSAValue] = []
        self._in_block(block, lambda: yielded.extend(body(block.args[0])))
        Builder(InsertPoint.at_end(block)).insert(loop.YieldOp(yielded))
        op = loop.ReduceOp(self.index(0), self.index(upper), self.index(1), inits, kinds, Region(block))
        self.emit(op)
        return list(op.results)

    def reduce_nest(self, uppers: Sequence[Dim], init: SSAValue, kind: loop.Combiner,
                    body: Callable[[list[SSAValue]], SSAValue]) -> SSAValue:
        """Combine `body(indices)` over the product of `uppers` (nested reduces)."""

        def level(i: int, outer: list[SSAValue]) -> SSAValue:
            if i == len(uppers):
                return body(outer)
            start = init if i == 0 else self.identity(kind, init.type)
            return self.reduce(uppers[i], [start], [kind], lambda iv: [level(i + 1, [*outer, iv])])[0]

        return level(0, [])

    def identity(self, kind: loop.Combiner, t: Attribute) -> SSAValue:
        """The combiner's identity (0 for add, -inf for max, ...) as a constant of type `t`."""
        return const(self.emit, loop.Combiner(kind).identity(t), t)

    def _in_block(self, block: Block, fn: Callable[[], Any]) -> None:
        saved = self.b
        self.b = Builder(InsertPoint.at_end(block))
        self._cache.append({})
        try:
            fn()
        finally:
            self._cache.pop()
            self.b = saved

    # -- values at an index -------------------------------------------------------------
    def load(self, value: SSAValue, idx: Sequence[Dim]) -> SSAValue:
        return self.load_buffer(self.buffers[value], idx)

    def at(self, value: SSAValue, idx: Sequence[Dim]) -> SSAValue:
        """The scalar of `value` at `idx` (index values of the value's rank)."""
        found = self._found(value, idx)
        if found is not None:
            return found
        if value in self.buffers:
            result = self.load(value, idx)
        elif type(value.owner) in SCALAR:
            result = self._elementwise(value, list(idx))
        else:
            result = self._compute(value, list(idx))
        self._cache[-1][value, tuple(idx)] = result
        return result

    def _found(self, value: SSAValue, idx: Sequence[Dim]) -> SSAValue | None:
        """The scalar of `value` at `idx` if made already (or given: `scalars`)."""
        if value in self.scalars:
            return self.scalars[value]
        key = (value, tuple(idx))
        for scope in reversed(self._cache):
            if key in scope:
                return scope[key]
        return None

    def _elementwise(self, value: SSAValue, idx: list[Dim]) -> SSAValue:
        """An elementwise op's scalar from its operands', made in the order a recursion
        would make them but with a stack of its own: a chain of thousands of elementwise
        ops fused into one nest does not reach Python's recursion limit."""
        frames = [Frame(value, idx, self.dims(value))]
        while True:
            frame = frames[-1]
            op = frame.value.owner
            if len(frame.args) < len(op.operands):
                operand = op.operands[len(frame.args)]
                at = broadcast_index(self, operand, frame.dims, frame.idx, op)
                found = self._found(operand, at)
                if found is None and operand not in self.buffers and type(operand.owner) in SCALAR:
                    frames.append(Frame(operand, list(at), self.dims(operand)))
                else:
                    frame.args.append(found if found is not None else self.at(operand, at))
                continue
            try:
                result = SCALAR[type(op)](self.emit, op, frame.args)
            except NoScalarRule as e:
                raise NoLoopLowering(str(e)) from None
            frames.pop()
            if not frames:
                return result
            self._cache[-1][frame.value, tuple(frame.idx)] = result
            frames[-1].args.append(result)

    def _compute(self, value: SSAValue, idx: list[Dim]) -> SSAValue:
        op = value.owner
        index_rule = INDEX_RULES.get(type(op))
        if index_rule is None:
            raise NoLoopLowering(f"{op.name} has no loop lowering")
        return index_rule(self, op, op.results.index(value), idx)

    # -- the kernel ---------------------------------------------------------------------
    def build(self) -> loop.KernelOp:
        for out in self.outputs:
            self.dims(out)
        nests: list[tuple[list[Dim], list[int]]] = []
        for i, out in enumerate(self.outputs):
            into = INTO_OUTPUT.get(type(out.owner))
            if into is not None and out.owner.parent_block() is self.block and out not in self.outputs[:i] \
                    and into(self, out.owner, self.out_buffers[i]):
                continue  # computed in its output buffer while staging: no nest copies it there
            dims = self.dims(out)
            for nest_dims, members in nests:
                if len(nest_dims) == len(dims) and all(a is b or a == b for a, b in zip(nest_dims, dims)):
                    members.append(i)
                    break
            else:
                nests.append((dims, [i]))
        for dims, members in nests:
            self.flatten = self._flatten_pixels(dims)
            order = self._loop_order(len(dims))
            if self.flatten and self.pixel_panels and order == list(range(len(dims))):
                if self._pairs_of(dims):
                    self._pair_panel_nest(dims, members)
                else:
                    self._panel_nest(dims, members)
            else:
                self._nest(dims, members, [], order)
            self.flatten = False
        self.emit(loop.ReturnOp())
        body = self.func.body.block
        first = body.first_op
        for op in [*self.prologue.ops, *self.staging.ops]:
            op.detach()
            body.insert_op_before(op, first)
        return self.func

    def _loop_order(self, rank: int) -> list[int]:
        return list(range(rank))

    def _flatten_pixels(self, dims: list[Dim]) -> bool:
        """Nest over (n, c, pixels) when a member asks for it (conv: the pixels of a small
        feature map fill the vector lanes) and produces exactly these dims."""
        for op in self.block.ops:
            if type(op) in FLATTEN_PIXELS and len(dims) == 4:
                out = self.dims(op.results[0])
                if all(a is b or (isinstance(a, int) and a == b) for a, b in zip(out, dims)):
                    return True
        return False

    def _nest(self, dims: list[Dim], members: list[int], ivs: list[SSAValue], order: list[int]) -> None:
        if len(ivs) == len(dims):
            idx: list[SSAValue] = [None] * len(dims)
            for axis, iv in zip(order, ivs):
                idx[axis] = iv
            for i in members:
                v = self.at(self.outputs[i], idx)
                self.store_buffer(v, self.out_buffers[i], idx)
            return
        if self.flatten and len(ivs) == len(dims) - 2:
            h, w = dims[-2], dims[-1]
            panel = self.panel

            def pixel(column: SSAValue) -> None:
                p = column if panel is None else self.emit(arith.AddiOp(self.index(panel.start), column))
                oh = self.ibinary("div", p, w) if w != 1 else p
                ow = self.ibinary("rem", p, w) if w != 1 else self.index(0)
                self.pixels = Pixels(p, oh, ow, h, w, None if panel is None else column)
                try:
                    self._nest(dims, members, [*ivs, oh, ow], order)
                finally:
                    self.pixels = None

            self.foreach(self.imul(h, w) if panel is None else panel.count, pixel)
            return
        self.foreach(dims[order[len(ivs)]], lambda iv: self._nest(dims, members, [*ivs, iv], order))

    def _panel_nest(self, dims: list[Dim], members: list[int]) -> None:
        """`foreach n { foreach panel { staging; foreach c { foreach column {...} } } }`:
        the nest over (n, c, pixels) with the pixels in panels of `PANEL_PIXELS` (the last
        one shorter), buffers staged for a panel (`staged`) made at its start. The panel
        loop steps over pixels, `PANEL_PIXELS` at a time, so a split between chunks can
        tell whole panels (`grain`: 4 panels of 64 split 2 + 2) from a short last one (14
        x 14 = 3 panels and 4 pixels: 128 + 68 pixels left one core idle a fifth of a call;
        split by rows instead, 256 channels on 2 threads took 0.573 -> 0.496 ms)."""
        pixels = self.imul(dims[-2], dims[-1])
        self._panels(dims[0], pixels, dims[1], False, lambda n, c: self._nest(dims, members, [n, c], list(range(4))))

    def _panels(self, batch: Dim, columns: Dim, channels: Dim, pairs: bool,
                body: Callable[[SSAValue, SSAValue], None]) -> None:
        """`foreach n { foreach panel { staging; foreach c { body(n, c) } } }` over
        `columns` (pixels, or the pair-flattened map's columns) in panels of
        `PANEL_PIXELS`, the buffers staged for a panel made at its start."""
        def panel(n: SSAValue, start: SSAValue) -> None:
            count = self.ibinary("min", self.ibinary("sub", columns, start), PANEL_PIXELS)
            self.panel = Panel(n, start, count, pairs)
            self._panel_staging = Block()
            self._panel_nests += 1
            try:
                nest = self.foreach(channels, lambda c: body(n, c))
            finally:
                self.panel = None
                staging, self._panel_staging = self._panel_staging, None
            for op in list(staging.ops):
                op.detach()
                nest.parent_block().insert_op_before(op, nest)

        self.foreach(batch, lambda n: self.foreach(columns, lambda start: panel(n, start), step=PANEL_PIXELS))

    def _pairs_of(self, dims: list[Dim]) -> bool:
        """Whether the nest's one conv takes the Winograd form (`winograd.wanted`, or
        `self.winograd` where run-time sizes decide): its panels are then panels of pairs
        of rows."""
        convs = [op for op in self.block.ops if isinstance(op, Conv2dOp)]
        if len(convs) != 1 or \
                not all(a is b or (isinstance(a, int) and a == b) for a, b in zip(self.dims(convs[0].result), dims)):
            return False
        if not winograd.applies(self, convs[0]):
            return False
        wanted = winograd.wanted(convs[0])
        return self.winograd if wanted is None else wanted

    def _pair_panel_nest(self, dims: list[Dim], members: list[int]) -> None:
        """`_panel_nest` over the pair-flattened map (`winograd`): a panel is
        `PANEL_PIXELS` columns (pair r, column ow) -> r * W + ow; the output nest of a
        panel runs, per channel, over each pair it spans, its one or two rows, the pair's
        columns in the panel (contiguous: a pixel's column `dest + ow`)."""
        h, w = dims[-2], dims[-1]
        columns = self.imul(self.ibinary("div", self.iadd(h, 1), 2), w)
        order = list(range(4))

        def pair(n: SSAValue, c: SSAValue, r: Dim, a: Dim, b: Dim, dest: Dim) -> None:
            def row(dy: SSAValue) -> None:
                oh = self.emit(arith.AddiOp(self.index(self.imul(r, 2)), dy))

                def pixel(t: SSAValue) -> None:
                    ow = self.emit(arith.AddiOp(t, self.index(a)))
                    p = self.emit(arith.AddiOp(ow, self.index(self.imul(oh, w))))
                    self.pixels = Pixels(p, oh, ow, h, w, self.emit(arith.AddiOp(ow, self.index(dest))))
                    try:
                        self._nest(dims, members, [n, c, oh, ow], order)
                    finally:
                        self.pixels = None

                self.foreach(self.ibinary("sub", b, a), pixel)

            self.foreach(self.ibinary("min", self.ibinary("sub", h, self.imul(r, 2)), 2), row)

        self._panels(dims[0], columns, dims[1], True,
                     lambda n, c: panel_rows(self, w, lambda *rows: pair(n, c, *rows)))

    # -- staged buffers ----------------------------------------------------------------------
    def staged(self, key: object, make: Callable[[], SSAValue], per_panel: bool = False) -> SSAValue:
        """A buffer computed once, before the output nests (`make` emits its loops); with
        `per_panel`, once per panel of pixels, at the panel's start (`self.panel` says
        which pixels; only inside a nest over panels)."""
        staging = self.staging
        if per_panel:
            assert self._panel_staging is not None and self.panel is not None
            staging, key = self._panel_staging, (key, "panel", self._panel_nests)
        if key not in self._staged:
            saved = self.b
            point = self._staging_point(staging)
            self.b = Builder(point)
            # (the op its loops follow: a buffer it stages in turn goes before them)
            before = staging.last_op if point.insert_before is None else point.insert_before.prev_op
            self._staging_now.append((staging, before))
            self._cache.append({})
            try:
                self._staged[key] = make()
            finally:
                self._cache.pop()
                self._staging_now.pop()
                self.b = saved
        return self._staged[key]

    def _staging_point(self, staging: Block) -> InsertPoint:
        """Where a staged buffer's loops go: the end of `staging`, or, asked for while
        another staged buffer of it is being made (a conv's packed input, read by the
        concat written part by part that it feeds), before that one's loops."""
        for block, before in reversed(self._staging_now):
            if block is staging:
                first = staging.first_op if before is None else before.next_op
                return InsertPoint.at_end(staging) if first is None else InsertPoint.before(first)
        return InsertPoint.at_end(staging)

    def collapsed(self, value: SSAValue, groups: list[list[int]]) -> SSAValue:
        """An input buffer viewed with groups of dims merged (no copy: row-major)."""
        key = ("collapse", value, tuple(map(tuple, groups)))
        if key not in self._staged:
            op = collapse_view(self.buffers[value], groups)
            self.entry.insert(op)
            self._staged[key] = op.results[0]
        return self._staged[key]

    def load_buffer(self, buf: SSAValue, idx: Sequence[Dim]) -> SSAValue:
        buf, idx = self._pixel_view(buf, idx)
        return self.emit(memref.LoadOp.get(buf, [self.index(i) for i in idx]))

    def store_buffer(self, value: SSAValue, buf: SSAValue, idx: Sequence[Dim]) -> None:
        buf, idx = self._pixel_view(buf, idx)
        self.emit(memref.StoreOp.get(value, buf, [self.index(i) for i in idx]))

    # -- flattened pixels ----------------------------------------------------------------------
    def _buffer_dims(self, buf: SSAValue) -> list[Dim]:
        if buf in self.buffer_dims:
            return self.buffer_dims[buf]
        for value, b in self.buffers.items():
            if b is buf:
                return self.dims(value)
        for i, b in enumerate(self.out_buffers):
            if b is buf:
                return self.dims(self.outputs[i])
        return []

    def _pixel_view(self, buf: SSAValue, idx: Sequence[Dim]) -> tuple[SSAValue, list[Dim]]:
        """In a nest over flattened pixels, `buf[..., oh, ow]` with the nest's own (oh, ow)
        and dims is `view[..., p]` (row-major: contiguous along p)."""
        px = self.pixels
        if px is None or len(idx) < 2 or idx[-2] is not px.oh or idx[-1] is not px.ow:
            return buf, list(idx)
        dims = self._buffer_dims(buf)
        same = self.k.same_dim
        if len(dims) != len(idx) or not (same(dims[-2], px.h) and same(dims[-1], px.w)):
            return buf, list(idx)
        rank = len(idx)
        key = ("pixels", buf)
        if key not in self._staged:
            op = collapse_view(buf, [[a] for a in range(rank - 2)] + [[rank - 2, rank - 1]])
            owner = buf.owner
            if isinstance(owner, Operation):  # a staged buffer: right after its allocation
                owner.parent_block().insert_op_after(op, owner)
            else:
                self.entry.insert(op)
            self._staged[key] = op.results[0]
        return self._staged[key], [*idx[:-2], px.p]
