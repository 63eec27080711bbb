"""Register tiles for C-family kernels: one thread computes `rows` x `lanes` outputs.

The two innermost grid loops of a nest (`i` over rows, `j` over lanes) are given to
each thread as a tile: values that depend on `j` become `vectors` vectors of `width`
elements each (`floatN`, lanes = vectors x width; width 1 is scalar code), values that depend on `i` get one
copy per row, and a reduction inside the body runs once for the whole tile
(unroll-and-jam), so an operand loaded for one row or one lane is reused by the others
from registers — the register blocking of a hand-tuned GEMM, derived from the loop nest.
A *copy* is one (row, vector) pair; each value has a name per copy, copies whose
expressions read alike share one name (a row operand is loaded once for all vectors
of its row, a lane operand once for all rows). The caller handles a thread whose tile
overhangs the iteration space (`CEmitter.tiled_phase`).

`TileEmitter.emit` raises `NotTileable` for bodies it does not vectorise (a `j` index
outside the last position of an access, integer or comparison code on vectors, nested
loops, buffers); the caller then emits the scalar form.
"""

from __future__ import annotations

from xdsl.dialects import memref
from xdsl.ir import Block, Operation, SSAValue

from nimble.dialects import arith
from nimble.dialects import loop


class NotTileable(Exception):
    pass


_VECTOR_FLOAT_OPS: dict[type[Operation], str] = {
    arith.AddfOp: "+", arith.SubfOp: "-", arith.MulfOp: "*", arith.DivfOp: "/",
}


class TileEmitter:
    """Emits the tile body of `inner` (the `j` loop) nested in `outer` (the `i` loop)
    through the scalar emitter `e` (its names, buffers and output lines): `rows` rows,
    `vectors` vectors of `width` lanes per row."""

    def __init__(self, e, outer: loop.ForeachOp, inner: loop.ForeachOp, rows: int, width: int, vectors: int,
                 i0: str, j0: str):
        self.e = e
        self.rows, self.width, self.vectors = rows, width, vectors
        self.copies = rows * vectors
        self.inst: dict[SSAValue, list[str]] = {}  # a value varying over the tile: one name per copy
        self.vector: set[SSAValue] = set()  # lane-varying values (vectors)
        self.lane_base: dict[SSAValue, str] = {inner.iv: j0}  # `j + uniform`: the tile's first lane's index
        self.inst[outer.iv] = [f"({i0} + {c // vectors})" for c in range(self.copies)]
        self.outer, self.inner = outer, inner

    # -- classification -------------------------------------------------------------

    def varies(self, v: SSAValue) -> bool:
        return v in self.inst

    def name(self, v: SSAValue, c: int) -> str:
        if v in self.lane_base:
            raise NotTileable("a lane index used as a value")
        return self.inst[v][c] if v in self.inst else self.e.v(v)

    def vtype(self, v: SSAValue) -> str:
        return f"{self.e.ctype(v.type)}{self.width if self.width > 1 else ''}"

    def as_vector(self, v: SSAValue, c: int) -> str:
        n = self.name(v, c)
        return n if v in self.vector else f"({self.vtype(v)})({n})"

    def lane(self, v: SSAValue, c: int) -> str:
        """The first lane's index of copy `c`'s vector."""
        k = c % self.vectors
        return self.lane_base[v] if k == 0 else f"({self.lane_base[v]} + {k * self.width})"

    # -- emission ---------------------------------------------------------------------

    def emit(self) -> None:
        for block in (self.outer.body.block, self.inner.body.block):
            self.block(block, skip=self.inner)

    def block(self, block: Block, skip: Operation | None = None) -> None:
        for op in block.ops:
            if op is skip or isinstance(op, loop.YieldOp):
                continue
            self.op(op)

    def op(self, op: Operation) -> None:
        if isinstance(op, loop.ForeachOp | loop.AllocOp) or (op.regions and not isinstance(op, loop.ReduceOp)):
            raise NotTileable(op.name)
        if isinstance(op, loop.ReduceOp):
            self.reduce(op)
            return
        if isinstance(op, memref.LoadOp):
            self.load(op)
            return
        if isinstance(op, memref.StoreOp):
            self.store(op)
            return
        if isinstance(op, memref.DimOp | memref.CollapseShapeOp) or not any(
                self.varies(o) or o in self.lane_base for o in op.operands):
            self.e.op(op)  # uniform over the tile: once, as scalar code
            return
        if isinstance(op, arith.AddiOp) and sum(o in self.lane_base for o in op.operands) == 1 \
                and not any(self.varies(o) for o in op.operands):
            lane, other = (op.operands[0], op.operands[1]) if op.operands[0] in self.lane_base else op.operands[::-1]
            self.lane_base[op.results[0]] = f"({self.lane_base[lane]} + {self.e.v(other)})"
            return
        if any(o in self.lane_base for o in op.operands) or len(op.results) != 1:
            raise NotTileable(op.name)
        self.compute(op)

    def define(self, v: SSAValue, exprs: list[str], vector: bool) -> None:
        """Names `v` in every copy, from one expression per copy: copies whose
        expressions read alike share one variable."""
        ctype = self.vtype(v) if vector else self.e.ctype(v.type)
        named: dict[str, str] = {}
        for expr in exprs:
            if expr not in named:
                named[expr] = self.e.fresh()
                self.e.line(f"{ctype} {named[expr]} = {expr};")
        self.inst[v] = [named[expr] for expr in exprs]
        if vector:
            self.vector.add(v)

    def compute(self, op: Operation) -> None:
        """An op some operand of which varies over the tile."""
        result = op.results[0]
        if any(o in self.vector for o in op.operands):
            self.define(result, [self.vector_expression(op, c) for c in range(self.copies)], True)
            return
        exprs = []
        for c in range(self.copies):
            saved = {o: self.e.names.get(o) for o in op.operands}
            for o in op.operands:
                if o in self.inst:
                    self.e.names[o] = self.inst[o][c]
            expr = self.e.expression(op)
            for o, n in saved.items():
                if n is None:
                    self.e.names.pop(o, None)
                else:
                    self.e.names[o] = n
            if expr is None:
                raise NotTileable(op.name)
            exprs.append(expr)
        self.define(result, exprs, False)

    def vector_expression(self, op: Operation, c: int) -> str:
        kind = type(op)
        if kind in _VECTOR_FLOAT_OPS:
            a, b = (self.as_vector(o, c) for o in op.operands)
            return f"{a} {_VECTOR_FLOAT_OPS[kind]} {b}"
        if isinstance(op, arith.NegfOp):
            return f"-{self.as_vector(op.operand, c)}"
        if isinstance(op, arith.MaximumfOp | arith.MinimumfOp):
            a, b = (self.as_vector(o, c) for o in op.operands)
            test = "isgreater" if isinstance(op, arith.MaximumfOp) else "isless"
            return f"select({b}, {a}, isnan({a}) | {test}({a}, {b}))"
        if kind in self.e.f.functions:
            args = ", ".join(self.as_vector(o, c) for o in op.operands)
            return f"{self.e.f.functions[kind]}({args})"
        raise NotTileable(op.name)

    def address(self, buffer: SSAValue, indices, c: int) -> tuple[str, bool]:
        """Copy `c`'s element offset (its vector's first lane's) and whether the lanes
        run along it."""
        buf = self.e.buffer(buffer)
        parts, lanes = [], False
        for k, i in enumerate(indices):
            if i in self.lane_base:
                if k != len(indices) - 1:
                    raise NotTileable("lanes along a strided axis")
                parts.append(self.lane(i, c))
                lanes = True
            else:
                parts.append(self.name(i, c))
        return f"{buf.pointer} + {buf.offset(parts)}", lanes

    def load(self, op: memref.LoadOp) -> None:
        exprs, vector = [], False
        for c in range(self.copies):
            at, vector = self.address(op.memref, op.indices, c)
            exprs.append(f"vload{self.width}(0, {at})" if vector and self.width > 1 else f"*({at})")
        if vector and self.e.ctype(op.res.type) in ("uchar", "bool"):
            raise NotTileable("a vector of i1")
        self.define(op.res, exprs, vector)

    def store(self, op: memref.StoreOp) -> None:
        for c in range(self.copies):
            at, lanes = self.address(op.memref, op.indices, c)
            if not lanes:
                raise NotTileable("a store that does not follow the lanes")
            value = self.as_vector(op.value, c)
            self.e.line(f"vstore{self.width}({value}, 0, {at});" if self.width > 1 else f"*({at}) = {value};")

    def reduce(self, op: loop.ReduceOp) -> None:
        if any(self.varies(b) or b in self.lane_base for b in (op.lower, op.upper, op.step)):
            raise NotTileable("reduction bounds vary over the tile")
        body = op.body.block
        yielded = body.last_op.values
        # The accumulators are declared at the loop's header once the body shows which
        # copies of each yielded value differ: one accumulator per distinct value.
        accs: list[tuple[SSAValue, SSAValue, list[str], bool]] = []
        e = self.e
        iv = e.fresh("i")
        e.names[op.iv] = iv
        header_at = len(e.lines)
        e.line(f"for (long {iv} = {e.v(op.lower)}; {iv} < {e.v(op.upper)}; {iv} += {e.v(op.step)}) {{")
        e.depth += 1
        self.block(body)
        for init, out, kind, y in zip(op.inits, op.outs, op.kinds, yielded):
            vector = y in self.vector
            values = [self.as_vector(y, c) if vector else self.name(y, c) for c in range(self.copies)]
            acc_of = {value: e.fresh("acc") for value in values}
            for value, acc in acc_of.items():
                e.line(f"{acc} = {self.combine(kind, acc, value, vector)};")
            accs.append((init, out, [acc_of[value] for value in values], vector))
        e.depth -= 1
        e.line("}")
        declarations = []
        for init, out, names, vector in accs:
            ctype = self.vtype(init) if vector else e.ctype(init.type)
            start = f"({ctype})({e.v(init)})" if vector else e.v(init)
            declarations += ["  " * e.depth + f"{ctype} {acc} = {start};" for acc in dict.fromkeys(names)]
            self.inst[out] = names
            if vector:
                self.vector.add(out)
        e.lines[header_at:header_at] = declarations

    @staticmethod
    def combine(kind: loop.Combiner, acc: str, value: str, vector: bool) -> str:
        if kind == loop.Combiner.ADD:
            return f"{acc} + {value}"
        if kind == loop.Combiner.MUL:
            return f"{acc} * {value}"
        test = "isgreater" if kind == loop.Combiner.MAX else "isless"
        if vector:
            return f"select({acc}, {value}, isnan({value}) | {test}({value}, {acc}))"
        op = ">" if kind == loop.Combiner.MAX else "<"
        return f"(isnan({value}) || {value} {op} {acc}) ? {value} : {acc}"
