"""Builds graph/shape IR from the parse tree of a `.nb` file.

Two passes: declarations first (ADTs, function signatures, so calls and recursion
resolve in any order), then bodies. Every op gets the result types its shape function
infers and a `file:line:col` location. Errors are collected, not raised one by one: a
wrong name, arity or type in one function does not hide the errors of the next.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from functools import lru_cache

from lark import Token, Tree
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    DictionaryAttr,
    FileLineColLoc,
    FunctionType,
    IntAttr,
    ModuleOp,
    StringAttr,
    TensorType,
    TupleType,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue

from nimble.dialects import arith, dynshape, graph, vm
from nimble.dialects.device import PLACEMENT
from nimble.dialects.discardable import NAMED_DIM_ATTR
from nimble.dialects.graph import GraphOp
from nimble.dialects.graph.types import types_compatible
from nimble.frontend.control import ControlFlow
from nimble.frontend.errors import SourceError, source_line
from nimble.frontend.expressions import Expressions
from nimble.frontend.kernels import KernelDefinition
from nimble.frontend.nodes import (
    POISON,
    BuildError,
    Poisoned,
    Scope,
    Value,
    name_value,
    position,
)
from nimble.frontend.types import TypeBuilder


class ModuleBuilder(Expressions, ControlFlow):
    def __init__(self, ops: dict[str, type[Operation]], text: str, file: str):
        self.ops = ops
        self.text = text
        self.file = file
        self.errors: list[SourceError] = []
        self.file_attr = StringAttr(file)
        self.types = TypeBuilder(self)
        self.functions: dict[str, func.FuncOp] = {}
        self.named_dims: dict[str, list[tuple[str, int, int]]] = {}
        self.pending_results: set[str] = set()
        self.definitions: dict[str, Tree] = {}  # the `def` that declared each function
        self.constructors: dict[str, tuple[str, list[Attribute]]] = {}
        self.adts: dict[str, graph.AdtOp] = {}
        self.block: Block | None = None
        self.scope = Scope()
        self.node: Tree | Token | None = None

    # -- errors and locations ---------------------------------------------------------
    def error(self, node: Tree | Token | None, message: str) -> None:
        line, column = position(node)
        self.errors.append(SourceError(self.file, line, column, message, source_line(self.text, line)))

    def location(self, node: Tree | Token | None) -> FileLineColLoc:
        line, column = position(node)
        return FileLineColLoc(self.file_attr, _int_attr(line), _int_attr(column))

    def emit(self, op: Operation, node: Tree | Token | None = None) -> Operation:
        op.location = self.location(node or self.node)
        assert self.block is not None
        self.block.add_op(op)
        return op

    # -- module -------------------------------------------------------------------------
    def build(self, tree: Tree) -> ModuleOp:
        module = ModuleOp([])
        items = list(tree.children)
        for item in items:
            if item.data == "typedef":
                self.guard(lambda: module.body.block.add_op(self.typedef(item)), item)
        for item in items:
            if item.data == "funcdef":
                self.guard(lambda: self.declare_function(item, module), item)
        for item in items:
            if item.data == "funcdef" and self.definitions.get(item.children[0].value[1:]) is item:
                self.guard(lambda: self.function_body(item), item)
        for item in items:
            if item.data == "kerneldef":
                self.guard(lambda: module.body.block.add_op(KernelDefinition(self).build(item)), item)
        return module

    def guard(self, action, node: Tree) -> None:
        try:
            action()
        except Poisoned:
            pass
        except BuildError as e:
            self.error(e.node, str(e))

    def typedef(self, node: Tree) -> graph.AdtOp:
        name = node.children[0].value
        if name in self.adts:
            raise BuildError(node.children[0], f"type {name} is declared twice")
        self.adts[name] = None  # type: ignore[assignment]  # visible to its own constructors
        try:
            return self._typedef_body(node, name)
        except BuildError:
            del self.adts[name]
            for ctor, (adt, _) in list(self.constructors.items()):
                if adt == name:
                    del self.constructors[ctor]
            raise

    def _typedef_body(self, node: Tree, name: str) -> graph.AdtOp:
        ctors = []
        for ctor in node.children[1:]:
            ctor_name = ctor.children[0]
            fields = [self.types.build(t) for t in ctor.children[1:] if t is not None]
            if ctor_name.value in self.constructors:
                raise BuildError(ctor_name, f"constructor {ctor_name.value} is declared twice")
            self.constructors[ctor_name.value] = (name, fields)
            op = graph.ConstructorOp(ctor_name.value, fields)
            op.location = self.location(ctor_name)
            ctors.append(op)
        adt = graph.AdtOp(name, ctors)
        adt.location = self.location(node)
        self.adts[name] = adt
        return adt

    def declare_function(self, node: Tree, module: ModuleOp) -> None:
        name_token, params, results = node.children[0], node.children[1:-2], node.children[-2]
        name = name_token.value[1:]
        if name in self.functions:
            raise BuildError(name_token, f"function @{name} is defined twice")
        self.types.take_named_dims()
        names, types = [], []
        for p in params:
            if p is None:
                continue
            value, type_node = p.children
            if value.value in names:
                raise BuildError(value, f"parameter {value.value} is declared twice")
            names.append(value.value)
            types.append(self.types.build(type_node, param=len(names) - 1))
        if results is None:
            self.pending_results.add(name)  # no `->`: the body's value decides
        result_types = [] if results is None else [self.types.build(t) for t in results.children if t is not None]
        function = func.FuncOp(name, FunctionType.from_lists(types, result_types))
        function.location = self.location(name_token)
        for arg, n in zip(function.body.block.args, names):
            name_value(arg, n)
        self.named_dims[name] = self.types.take_named_dims()
        module.body.block.add_op(function)
        self.functions[name] = function
        self.definitions[name] = node

    def function_body(self, node: Tree) -> None:
        function = self.functions[node.children[0].value[1:]]
        named = self.named_dims[function.sym_name.data]
        block = function.body.block
        self.scope = Scope()
        for arg in block.args:
            self.scope.values[f"%{arg.name_hint}"] = arg
        with self.in_block(block, self.scope):
            self.node = node
            self.check_named_dims(named, block.args, node)
            once = [(n, p, i) for n, p, i in named if sum(m == n for m, _, _ in named) == 1]
            if once:  # (a name two dims share is its check's; one used once has nothing to check)
                function.attributes[vm.DIM_NAMES] = DictionaryAttr({f"{p}.{i}": StringAttr(n) for n, p, i in once})
            body = node.children[-1]
            values = self.block_values(body)
            result_node = body.children[-1] if body.children[-1] is not None else body
            if function.sym_name.data in self.pending_results:
                inputs = list(function.function_type.inputs.data)
                function.function_type = FunctionType.from_lists(inputs, [v.type for v in values])
                self.pending_results.discard(function.sym_name.data)
            declared = list(function.function_type.outputs.data)
            returned = self.conform(values, declared, result_node, "function result")
            self.emit(func.ReturnOp(*returned), result_node)

    def check_named_dims(self, named: list[tuple[str, int, int]], args: Sequence[SSAValue], node: Tree) -> None:
        """One `dynshape.assert` per repeated use of a named dim, naming both places."""
        first: dict[str, tuple[int, int]] = {}
        dims: dict[tuple[int, int], SSAValue] = {}

        def dim(param: int, index: int) -> SSAValue:
            if (param, index) not in dims:
                dims[param, index] = self.emit(dynshape.DimOp(args[param], index)).results[0]
            return dims[param, index]

        for dim_name, param, index in named:
            if dim_name not in first:
                first[dim_name] = (param, index)
                continue
            p0, i0 = first[dim_name]
            a, b = dim(p0, i0), dim(param, index)
            ok = self.emit(arith.CmpiOp(a, b, "eq")).results[0]
            message = (f"dim {index} of %{args[param].name_hint} must equal dim {i0} of "
                       f"%{args[p0].name_hint} (both are '{dim_name}')")
            check = self.emit(dynshape.AssertOp(ok, message, [b, a]))
            check.attributes[NAMED_DIM_ATTR] = StringAttr(dim_name)

    @contextmanager
    def in_block(self, block: Block, scope: Scope) -> Iterator[None]:
        saved = self.block, self.scope
        self.block, self.scope = block, scope
        try:
            yield
        finally:
            self.block, self.scope = saved

    # -- blocks and statements -----------------------------------------------------------
    def block_values(self, node: Tree) -> list[SSAValue]:
        """Run the statements of a `{ ... }` block; its value is its last expression."""
        *stmts, result = node.children
        failed = False
        for stmt in stmts:
            try:
                self.let(stmt)
            except BuildError as e:
                # Report, poison the names it would bind, and go on with the block.
                failed = True
                if not isinstance(e, Poisoned):
                    self.error(e.node, str(e))
                for name in stmt.children[:-2]:
                    self.scope.values.setdefault(name.value, POISON)
        if failed:
            if result is not None:
                self.guard(lambda: self.expr(result), result)
            raise Poisoned(node, "block has errors")
        if result is None:
            return []
        value = self.expr(result)
        # A tuple expression `(a, b)` gives several values; any other value is one,
        # a tuple-typed value included.
        return [self.pack(v, result) for v in value] if isinstance(value, list) else [value]

    def let(self, node: Tree) -> None:
        *names, expr, device = node.children
        before = self.block.last_op
        value = self.expr(expr)
        if device is not None:
            op = before.next_op if before is not None else self.block.first_op
            for emitted in _ops_from(op):
                if isinstance(emitted, GraphOp):
                    emitted.attributes[PLACEMENT] = StringAttr(device.value)
        if len(names) == 1:
            self.bind(names[0], self.pack(value, expr))
            return
        values = self.values_of(value, expr)
        if len(values) != len(names):
            raise BuildError(node, f"cannot bind {len(names)} names to {len(values)} values")
        for n, v in zip(names, values):
            self.bind(n, v)

    def bind(self, name: Token, value: SSAValue) -> None:
        if name.value in self.scope.values:
            raise BuildError(name, f"{name.value} is already defined in this block")
        self.scope.values[name.value] = value
        if isinstance(value.owner, Operation) and value.name_hint is None:
            name_value(value, name.value)

    def values_of(self, value: Value, node: Tree) -> list[SSAValue]:
        """A value as a list: tuple expressions and tuple-typed values are unpacked."""
        if isinstance(value, list):
            return [self.pack(v, node) for v in value]
        if isinstance(value.type, TupleType):
            return [self.emit(graph.GetItemOp(value, i), node).results[0] for i in range(len(value.type.types))]
        return [value]

    def pack(self, value: Value, node: Tree) -> SSAValue:
        """A value as one SSA value: tuple expressions become `graph.make_tuple`."""
        if isinstance(value, list):
            return self.emit(graph.MakeTupleOp([self.pack(v, node) for v in value]), node).results[0]
        return value

    def conform(self, values: list[SSAValue], types: Sequence[Attribute], node: Tree, what: str) -> list[SSAValue]:
        """Check values against declared types, refining `?` to static with graph.cast."""
        if len(values) != len(types):
            raise BuildError(node, f"{what} has {len(values)} values, expected {len(types)}")
        result = []
        for i, (v, t) in enumerate(zip(values, types)):
            if v.type == t:
                result.append(v)
            elif types_compatible(v.type, t) and isinstance(t, TensorType):
                result.append(self.emit(graph.CastOp.to(v, t), node).results[0])
            else:
                raise BuildError(node, f"{what} #{i} has type {v.type}, expected {t}")
        return result


def _ops_from(op: Operation | None) -> Iterator[Operation]:
    """`op`, the ops after it in its block, and every op nested in them."""
    while op is not None:
        yield from op.walk()
        op = op.next_op


@lru_cache(maxsize=65536)
def _int_attr(value: int) -> IntAttr:
    return IntAttr(value)
