"""`kernel` definitions of the text format: loop-level kernels written by hand.

```
kernel @softmax_rows(%x: f32[n, 64], %out: f32[n, 64]) {
  foreach %i = 0 to %n schedule(parallel) {
    let %m = reduce(max) %k = 0 to 64 init(-1.0e30) { %x[%i, %k] }
    let %s = reduce(add) %k = 0 to 64 init(0.0) { exp(%x[%i, %k] - %m) }
    foreach %j = 0 to 64 schedule(vector=16) { %out[%i, %j] = exp(%x[%i, %j] - %m) / %s }
  }
}
```

Parameters are buffers (`memref`s with the parameter's element type and dims); a named
dim of a parameter is an index value `%n` in the body. A kernel becomes a `loop.kernel`
holding `loop.foreach` / `loop.reduce` / `loop.alloc` with
`arith`, `math` and `memref` ops, so `nimble.compile.compile_kernels` can JIT it.
Numbers take the type of the other operand (index in index arithmetic, else f32).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from lark import Token, Tree
from xdsl.dialects import math as xmath
from xdsl.dialects import memref
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    AnyFloat,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    f32,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from nimble.dialects import arith, loop
from nimble.frontend.nodes import BuildError
from nimble.frontend.types import ELEMENT_TYPES

if TYPE_CHECKING:
    from nimble.frontend.builder import ModuleBuilder

_BINARY: dict[str, tuple[type[Operation], type[Operation] | None]] = {
    "add": (arith.AddfOp, arith.AddiOp), "sub": (arith.SubfOp, arith.SubiOp),
    "mul": (arith.MulfOp, arith.MuliOp), "div": (arith.DivfOp, arith.DivSIOp),
}
_COMPARE: dict[str, tuple[str, str]] = {"less": ("olt", "slt"), "greater": ("ogt", "sgt"), "equal": ("oeq", "eq")}
_FUNCTIONS: dict[str, Callable[..., Operation]] = {
    "exp": xmath.ExpOp, "log": xmath.LogOp, "sqrt": xmath.SqrtOp, "tanh": xmath.TanhOp, "abs": xmath.AbsFOp,
    "erf": xmath.ErfOp, "max": arith.MaximumfOp, "min": arith.MinimumfOp, "select": arith.SelectOp,
}


class KernelDefinition:
    """Builds one `kernel` definition (errors are `BuildError`s at tree nodes)."""

    def __init__(self, module: ModuleBuilder):
        self.m = module
        self.block: Block | None = None
        self.scopes: list[dict[str, SSAValue]] = []

    # -- helpers --------------------------------------------------------------------------
    def emit(self, op: Operation, node: Tree | Token) -> SSAValue | None:
        op.location = self.m.location(node)
        assert self.block is not None
        self.block.add_op(op)
        return op.results[0] if op.results else None

    def lookup(self, token: Token) -> SSAValue:
        for scope in reversed(self.scopes):
            if token.value in scope:
                return scope[token.value]
        raise BuildError(token, f"unknown value {token.value}")

    def bind(self, token: Token, value: SSAValue) -> None:
        if token.value in self.scopes[-1]:
            raise BuildError(token, f"{token.value} is already defined here")
        self.scopes[-1][token.value] = value

    def in_block(self, block: Block, body: Callable[[], None]) -> None:
        saved = self.block
        self.block = block
        self.scopes.append({})
        try:
            body()
        finally:
            self.scopes.pop()
            self.block = saved

    # -- the definition -----------------------------------------------------------------------
    def build(self, node: Tree) -> loop.KernelOp:
        name, *params, body = node.children
        params = [p for p in params if p is not None]
        types: list[Attribute] = []
        for p in params:
            types.append(self.param_type(p.children[1]))
        entry = Block(arg_types=types)
        kernel = loop.KernelOp(name.value[1:], types, Region(entry))
        kernel.location = self.m.location(name)
        self.block = entry
        self.scopes = [{}]
        for p, arg in zip(params, entry.args):
            arg.name_hint = p.children[0].value[1:]
            self.bind(p.children[0], arg)
        self.bind_named_dims(params, entry)
        self.statements(body)
        self.emit(loop.ReturnOp(), body)
        return kernel

    def param_type(self, node: Tree) -> MemRefType:
        if node.data != "tensor_type":
            raise BuildError(node, "kernel parameters are buffers, like f32[n, 64]")
        dtype, *dims = node.children
        if dtype.value == "index":
            raise BuildError(dtype, "buffers hold f32, i64, ..., not index")
        shape = [int(d.children[0].value) if d.data == "static_dim" else DYNAMIC_INDEX for d in dims if d is not None]
        return MemRefType(ELEMENT_TYPES[dtype.value], shape)

    def bind_named_dims(self, params: list[Tree], entry: Block) -> None:
        for p, arg in zip(params, entry.args):
            dims = [d for d in p.children[1].children[1:] if d is not None]
            for axis, d in enumerate(dims):
                if d.data != "named_dim" or f"%{d.children[0].value}" in self.scopes[0]:
                    continue
                index = self.emit(arith.ConstantOp(IntegerAttr(axis, IndexType())), d)
                self.scopes[0][f"%{d.children[0].value}"] = self.emit(memref.DimOp(arg, index), d)

    # -- statements -----------------------------------------------------------------------------
    def statements(self, block: Tree) -> None:
        for stmt in block.children:
            if stmt is not None:
                getattr(self, f"stmt_{stmt.data}", self.unsupported)(stmt)

    def unsupported(self, node: Tree) -> None:
        raise BuildError(node, f"'{node.data}' is not available in a kernel")

    def stmt_klet(self, node: Tree) -> None:
        name, expr = node.children
        self.bind(name, self.expr(expr))

    def stmt_kalloc(self, node: Tree) -> None:
        name, level, dtype, *sizes = node.children
        dims: list[int] = []
        dynamic: list[SSAValue] = []
        for s in (s for s in sizes if s is not None):
            if s.data == "number" and "." not in s.children[0].value:
                dims.append(int(s.children[0].value))
            else:
                dims.append(DYNAMIC_INDEX)
                dynamic.append(self.index(s))
        t = MemRefType(ELEMENT_TYPES[dtype.value], dims)
        self.bind(name, self.emit(loop.AllocOp(level.value, t, dynamic), node))

    def stmt_kstore(self, node: Tree) -> None:
        name, *indices, value = node.children
        buf = self.buffer(name)
        idx = [self.index(i) for i in indices if i is not None]
        self.check_rank(name, buf, idx)
        v = self.expr(value, buf.type.get_element_type())
        self.emit(memref.StoreOp.get(v, buf, idx), node)

    def stmt_kforeach(self, node: Tree) -> None:
        iv, lower, upper, step, schedule, body = node.children
        block = Block(arg_types=[IndexType()])
        bounds = [self.index(lower), self.index(upper), self.index(step) if step is not None else self.const(1, IndexType(), node)]

        def build() -> None:
            self.bind(iv, block.args[0])
            self.statements(body)
            self.emit(loop.YieldOp(), body)

        self.in_block(block, build)
        self.emit(loop.ForeachOp(*bounds, Region(block), self.schedule(schedule)), node)

    def schedule(self, node: Tree | None) -> loop.ScheduleAttr | None:
        if node is None:
            return None
        values: dict[str, int] = {}
        known = {f: t for f, t in loop.Schedule.__annotations__.items()}
        for item in node.children:
            key, value = item.children
            if key.value not in known:
                raise BuildError(key, f"unknown schedule entry '{key.value}' (known: {', '.join(known)})")
            flag = known[key.value] == "bool"
            if flag != (value is None):
                raise BuildError(key, f"'{key.value}' {'takes no value' if flag else 'needs a value, like vector=16'}")
            values[key.value] = True if flag else int(value.value)
        return loop.ScheduleAttr(loop.Schedule(**values))

    # -- expressions ------------------------------------------------------------------------------
    def buffer(self, token: Token) -> SSAValue:
        value = self.lookup(token)
        if not isinstance(value.type, MemRefType):
            raise BuildError(token, f"{token.value} is not a buffer")
        return value

    def check_rank(self, node: Tree | Token, buf: SSAValue, idx: list[SSAValue]) -> None:
        rank = len(buf.type.get_shape())
        if len(idx) != rank:
            raise BuildError(node, f"a buffer of rank {rank} needs {rank} indices, got {len(idx)}")

    def index(self, node: Tree) -> SSAValue:
        value = self.expr(node, IndexType())
        if not isinstance(value.type, IndexType):
            raise BuildError(node, f"expected an index value, got {value.type}")
        return value

    def const(self, value: float | int, t: Attribute, node: Tree | Token) -> SSAValue:
        if isinstance(t, AnyFloat):
            return self.emit(arith.ConstantOp(FloatAttr(float(value), t)), node)
        return self.emit(arith.ConstantOp(IntegerAttr(int(value), t)), node)

    def expr(self, node: Tree, hint: Attribute | None = None) -> SSAValue:
        kind = node.data
        if kind == "number":
            text = node.children[0].value
            t = hint if hint is not None else (f32 if any(c in text for c in ".eE") else IndexType())
            if not isinstance(t, AnyFloat) and any(c in text for c in ".eE"):
                raise BuildError(node, f"{text} is not an integer")
            return self.const(float(text) if isinstance(t, AnyFloat) else int(text), t, node)
        if kind == "var":
            return self.lookup(node.children[0])
        if kind == "neg":
            x = self.expr(node.children[0], hint)
            if isinstance(x.type, AnyFloat):
                return self.emit(arith.NegfOp(x), node)
            return self.emit(arith.SubiOp(self.const(0, x.type, node), x), node)
        if kind in _BINARY or kind in _COMPARE:
            return self.binary(node, hint)
        if kind == "subscript":
            return self.load(node)
        if kind == "op_call":
            return self.call(node)
        if kind == "convert":
            return self.convert(node)
        if kind == "reduce_expr":
            return self.reduce(node, hint)
        raise BuildError(node, f"'{kind}' is not available in a kernel")

    def binary(self, node: Tree, hint: Attribute | None) -> SSAValue:
        left, right = node.children
        # The operand that is not a bare number decides the type of the other.
        if left.data == "number" and right.data != "number":
            b = self.expr(right, hint)
            a = self.expr(left, b.type)
        else:
            a = self.expr(left, hint if node.data in _BINARY else None)
            b = self.expr(right, a.type)
        if a.type != b.type:
            raise BuildError(node, f"operands differ in type: {a.type} and {b.type}")
        is_float = isinstance(a.type, AnyFloat)
        if node.data in _COMPARE:
            fp, ip = _COMPARE[node.data]
            return self.emit(arith.CmpfOp(a, b, fp) if is_float else arith.CmpiOp(a, b, ip), node)
        float_op, int_op = _BINARY[node.data]
        return self.emit(float_op(a, b) if is_float else int_op(a, b), node)

    def load(self, node: Tree) -> SSAValue:
        target, *items = node.children
        if target.data != "var":
            raise BuildError(node, "only buffers can be indexed in a kernel")
        buf = self.buffer(target.children[0])
        idx = []
        for item in items:
            if item.data != "index_item":
                raise BuildError(item, "kernels index buffers element by element (no ranges)")
            idx.append(self.index(item.children[0]))
        self.check_rank(node, buf, idx)
        return self.emit(memref.LoadOp.get(buf, idx), node)

    def call(self, node: Tree) -> SSAValue:
        name_node, *args = node.children
        name = ".".join(t.value for t in name_node.children)
        if name not in _FUNCTIONS:
            raise BuildError(name_node, f"unknown kernel function '{name}' (known: {', '.join(_FUNCTIONS)})")
        values: list[SSAValue] = []
        for a in (a for a in args if a is not None):
            values.append(self.expr(a, values[-1].type if values else None))
        return self.emit(_FUNCTIONS[name](*values), node)

    def convert(self, node: Tree) -> SSAValue:
        dtype, value = node.children
        t = IndexType() if dtype.value == "index" else ELEMENT_TYPES[dtype.value]
        x = self.expr(value)
        if x.type == t:
            return x
        if isinstance(x.type, IndexType) and isinstance(t, AnyFloat):
            as_int = self.emit(arith.IndexCastOp(x, IntegerType(64)), node)
            return self.emit(arith.SIToFPOp(as_int, t), node)
        if isinstance(t, IndexType) and isinstance(x.type, IntegerType):
            return self.emit(arith.IndexCastOp(x, t), node)
        raise BuildError(node, f"cannot convert {x.type} to {t} in a kernel")

    def reduce(self, node: Tree, hint: Attribute | None) -> SSAValue:
        kind, iv, lower, upper, step, init, schedule, body = node.children
        if kind.value not in loop.COMBINERS:
            raise BuildError(kind, f"unknown combiner '{kind.value}' (known: {', '.join(loop.COMBINERS)})")
        bounds = [self.index(lower), self.index(upper), self.index(step) if step is not None else self.const(1, IndexType(), node)]
        start = self.expr(init, hint)
        block = Block(arg_types=[IndexType()])
        stmts, result = body.children[:-1], body.children[-1]
        if result is None:
            raise BuildError(body, "a reduce body ends with the value it contributes")

        def build() -> None:
            self.bind(iv, block.args[0])
            for stmt in stmts:
                if stmt.data != "let" or len(stmt.children) != 3 or stmt.children[2] is not None:
                    raise BuildError(stmt, "a reduce body holds `let`s (one name, no device) and ends with a value")
                self.bind(stmt.children[0], self.expr(stmt.children[1]))
            value = self.expr(result, start.type)
            if value.type != start.type:
                raise BuildError(result, f"contributes {value.type} to an accumulator of {start.type}")
            self.emit(loop.YieldOp([value]), result)

        self.in_block(block, build)
        return self.emit(loop.ReduceOp(*bounds, [start], [kind.value], Region(block), self.schedule(schedule)), node)
