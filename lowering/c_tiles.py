"""Register tiles for C-family kernels: one thread computes `rows` x `lanes` outputs.

The two innermost grid loops of a nest (`i` over rows, `j` over lanes) are given to
each thread as a tile: values that depend on `j` become vectors of `lanes` elements
(`floatN`), values that depend on `i` get one copy per row, and a reduction inside the
body runs once for the whole tile (unroll-and-jam), so an operand loaded for one row or
one lane is reused by the others from registers — the register blocking of a hand-tuned
GEMM, derived from the loop nest. A thread whose tile overhangs the iteration space runs
the plain scalar body for the elements inside it.

`TileEmitter.emit` raises `NotTileable` for bodies it does not vectorise (a `j` index
outside the last position of an access, integer or comparison code on vectors, nested
loops, buffers); the caller then emits the scalar form.
"""

from __future__ import annotations

from xdsl.dialects import arith, memref
from xdsl.ir import Block, Operation, SSAValue

from nimble.dialects import loop


class NotTileable(Exception):
    pass


_VECTOR_FLOAT_OPS: dict[type[Operation], str] = {
    arith.AddfOp: "+", arith.SubfOp: "-", arith.MulfOp: "*", arith.DivfOp: "/",
}


class TileEmitter:
    """Emits the tile body of `inner` (the `j` loop) nested in `outer` (the `i` loop)
    through the scalar emitter `e` (its names, buffers and output lines)."""

    def __init__(self, e, outer: loop.ForeachOp, inner: loop.ForeachOp, rows: int, lanes: int, i0: str, j0: str):
        self.e = e
        self.rows = rows
        self.lanes = lanes
        self.inst: dict[SSAValue, list[str]] = {}  # a row-varying value: one name per row
        self.vector: set[SSAValue] = set()  # lane-varying values (vectors)
        self.lane_base: dict[SSAValue, str] = {inner.iv: j0}  # `j + uniform`: the first lane's index
        self.inst[outer.iv] = [f"({i0} + {r})" for r in range(rows)]
        self.outer, self.inner = outer, inner

    # -- classification -------------------------------------------------------------

    def varies(self, v: SSAValue) -> bool:
        return v in self.inst

    def name(self, v: SSAValue, r: int) -> str:
        if v in self.lane_base:
            raise NotTileable("a lane index used as a value")
        return self.inst[v][r] if v in self.inst else self.e.v(v)

    def vtype(self, v: SSAValue) -> str:
        return f"{self.e.ctype(v.type)}{self.lanes}"

    def as_vector(self, v: SSAValue, r: int) -> str:
        n = self.name(v, r)
        return n if v in self.vector else f"({self.vtype(v)})({n})"

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
        names = []
        ctype = self.vtype(v) if vector else self.e.ctype(v.type)
        for expr in exprs:
            name = self.e.fresh()
            self.e.line(f"{ctype} {name} = {expr};")
            names.append(name)
        self.inst[v] = names if len(names) == self.rows else names * self.rows
        if vector:
            self.vector.add(v)

    def compute(self, op: Operation) -> None:
        """An op some operand of which varies over the tile."""
        result = op.results[0]
        vector = any(o in self.vector for o in op.operands)
        per_row = range(self.rows) if any(o in self.inst and len(set(self.inst[o])) > 1 for o in op.operands) else [0]
        if not vector:
            exprs = []
            for r in per_row:
                saved = {o: self.e.names.get(o) for o in op.operands}
                for o in op.operands:
                    if o in self.inst:
                        self.e.names[o] = self.inst[o][r]
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
            return
        exprs = [self.vector_expression(op, r) for r in per_row]
        self.define(result, exprs, True)

    def vector_expression(self, op: Operation, r: int) -> str:
        kind = type(op)
        if kind in _VECTOR_FLOAT_OPS:
            a, b = (self.as_vector(o, r) for o in op.operands)
            return f"{a} {_VECTOR_FLOAT_OPS[kind]} {b}"
        if isinstance(op, arith.NegfOp):
            return f"-{self.as_vector(op.operand, r)}"
        if isinstance(op, arith.MaximumfOp | arith.MinimumfOp):
            a, b = (self.as_vector(o, r) for o in op.operands)
            test = "isgreater" if isinstance(op, arith.MaximumfOp) else "isless"
            return f"select({b}, {a}, isnan({a}) | {test}({a}, {b}))"
        if kind in self.e.f.functions:
            args = ", ".join(self.as_vector(o, r) for o in op.operands)
            return f"{self.e.f.functions[kind]}({args})"
        raise NotTileable(op.name)

    def address(self, buffer: SSAValue, indices, r: int) -> tuple[str, bool]:
        """The element offset (first lane's) and whether the lanes run along it."""
        buf = self.e.buffer(buffer)
        parts, lanes = [], False
        for k, i in enumerate(indices):
            if i in self.lane_base:
                if k != len(indices) - 1:
                    raise NotTileable("lanes along a strided axis")
                parts.append(self.lane_base[i])
                lanes = True
            else:
                parts.append(self.name(i, r))
        return f"{buf.pointer} + {buf.offset(parts)}", lanes

    def load(self, op: memref.LoadOp) -> None:
        per_row = range(self.rows) if any(self.varies(i) for i in op.indices) else [0]
        exprs, vector = [], False
        for r in per_row:
            at, lanes = self.address(op.memref, op.indices, r)
            vector = lanes
            exprs.append(f"vload{self.lanes}(0, {at})" if lanes else f"*({at})")
        if vector and self.e.ctype(op.res.type) in ("uchar", "bool"):
            raise NotTileable("a vector of i1")
        self.define(op.res, exprs, vector)

    def store(self, op: memref.StoreOp) -> None:
        for r in range(self.rows):
            at, lanes = self.address(op.memref, op.indices, r)
            if not lanes:
                raise NotTileable("a store that does not follow the lanes")
            self.e.line(f"vstore{self.lanes}({self.as_vector(op.value, r)}, 0, {at});")

    def reduce(self, op: loop.ReduceOp) -> None:
        if any(self.varies(b) or b in self.lane_base for b in (op.lower, op.upper, op.step)):
            raise NotTileable("reduction bounds vary over the tile")
        body = op.body.block
        yielded = body.last_op.values
        # The accumulators are declared at the loop's header once the body shows which
        # of them vary over rows or lanes.
        accs: list[tuple[SSAValue, SSAValue, str, list[str], bool]] = []
        e = self.e
        iv = e.fresh("i")
        e.names[op.iv] = iv
        header_at = len(e.lines)
        e.line(f"for (long {iv} = {e.v(op.lower)}; {iv} < {e.v(op.upper)}; {iv} += {e.v(op.step)}) {{")
        e.depth += 1
        self.block(body)
        for init, out, kind, y in zip(op.inits, op.outs, op.kinds, yielded):
            vector = y in self.vector
            rows = self.rows if y in self.inst and len(set(self.inst[y])) > 1 else 1
            names = [e.fresh("acc") for _ in range(rows)]
            accs.append((init, out, kind, names, vector))
            for r, acc in enumerate(names):
                value = self.as_vector(y, r) if vector else self.name(y, r)
                e.line(f"{acc} = {self.combine(kind, acc, value, vector)};")
        e.depth -= 1
        e.line("}")
        declarations = []
        for init, out, kind, names, vector in accs:
            ctype = self.vtype(init) if vector else e.ctype(init.type)
            start = f"({ctype})({e.v(init)})" if vector else e.v(init)
            declarations += ["  " * e.depth + f"{ctype} {acc} = {start};" for acc in names]
            self.inst[out] = names if len(names) == self.rows else names * self.rows
            if vector:
                self.vector.add(out)
        e.lines[header_at:header_at] = declarations

    @staticmethod
    def combine(kind: str, acc: str, value: str, vector: bool) -> str:
        if kind == "add":
            return f"{acc} + {value}"
        if kind == "mul":
            return f"{acc} * {value}"
        test = "isgreater" if kind == "max" else "isless"
        if vector:
            return f"select({acc}, {value}, isnan({value}) | {test}({value}, {acc}))"
        op = ">" if kind == "max" else "<"
        return f"(isnan({value}) || {value} {op} {acc}) ? {value} : {acc}"
