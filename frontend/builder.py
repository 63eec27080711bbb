"""Builds graph/shape IR from the parse tree of a `.nb` file.

Two passes: declarations first (ADTs, function signatures, so calls and recursion
resolve in any order), then bodies. Every op gets the result types its shape function
infers and a `file:line:col` location. Errors are collected, not raised one by one: a
wrong name, arity or type in one function does not hide the errors of the next.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from lark import Token, Tree
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    FileLineColLoc,
    FunctionType,
    IntegerAttr,
    IndexType,
    IntAttr,
    IntegerType,
    ModuleOp,
    NoneType,
    StringAttr,
    TensorType,
    TupleType,
    f32,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.utils.exceptions import VerifyException

from nimble.dialects import graph, shape
from nimble.dialects.graph.base import GraphOp, i64_array
from nimble.dialects.graph.types import dims, join_dims, tensor, types_compatible
from nimble.dialects.interfaces import InfersResultTypes
from nimble.dialects.shape_functions import ShapeError, StaticDims
from nimble.frontend.attributes import Literal, property_names, to_property
from nimble.frontend.errors import SourceError, source_line
from nimble.frontend.types import TypeBuilder

# Infix operators of the text format and the ops they build (a table, not branches).
INFIX: dict[str, type[GraphOp]] = {
    "add": graph.AddOp, "sub": graph.SubOp, "mul": graph.MulOp, "div": graph.DivOp,
    "matmul": graph.MatmulOp, "less": graph.LessOp, "greater": graph.GreaterOp,
    "equal": graph.EqualOp,
}
INDEX_ARITH: dict[str, type[Operation]] = {
    "add": arith.AddiOp, "sub": arith.SubiOp, "mul": arith.MuliOp, "div": arith.DivSIOp,
}
INDEX_COMPARE = {"less": "slt", "greater": "sgt", "equal": "eq"}
LITERAL_NODES = {"number", "true", "false", "string", "list", "dtype", "type_literal"}


class BuildError(Exception):
    """An error at a tree node; collected by the builder."""

    def __init__(self, node: Tree | Token, message: str):
        super().__init__(message)
        self.node = node


class Poisoned(BuildError):
    """A use of a name whose definition already failed: not reported again."""


POISON = object()  # bound to names whose `let` failed, so later uses stay quiet


class Scope:
    """SSA names visible in a block; inner scopes see outer names."""

    def __init__(self, parent: Scope | None = None):
        self.parent = parent
        self.values: dict[str, SSAValue] = {}

    def lookup(self, name: str) -> Any:
        scope: Scope | None = self
        while scope is not None:
            if name in scope.values:
                return scope.values[name]
            scope = scope.parent
        return None


Value = SSAValue | list  # a list is a tuple expression not (yet) packed into one value


class ModuleBuilder:
    def __init__(self, ops: dict[str, type[Operation]], text: str, file: str):
        self.ops = ops
        self.text = text
        self.file = file
        self.errors: list[SourceError] = []
        self.types = TypeBuilder(self)
        self.functions: dict[str, func.FuncOp] = {}
        self.named_dims: dict[str, list[tuple[str, int, int]]] = {}
        self.pending_results: set[str] = set()
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
        return FileLineColLoc(StringAttr(self.file), IntAttr(line), IntAttr(column))

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
            if item.data == "funcdef" and item.children[0].value[1:] in self.functions:
                self.guard(lambda: self.function_body(item), item)
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
            arg.name_hint = n[1:]
        self.named_dims[name] = self.types.take_named_dims()
        module.body.block.add_op(function)
        self.functions[name] = function

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
        """One `shape.assert` per repeated use of a named dim, naming both places."""
        first: dict[str, tuple[int, int]] = {}
        dims: dict[tuple[int, int], SSAValue] = {}

        def dim(param: int, index: int) -> SSAValue:
            if (param, index) not in dims:
                dims[param, index] = self.emit(shape.DimOp(args[param], index)).results[0]
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
            self.emit(shape.AssertOp(ok, message))

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
                for name in stmt.children[:-1]:
                    self.scope.values.setdefault(name.value, POISON)
        if failed:
            if result is not None:
                self.guard(lambda: self.expr(result), result)
            raise Poisoned(node, "block has errors")
        if result is None:
            return []
        return self.values_of(self.expr(result), result)

    def let(self, node: Tree) -> None:
        *names, expr = node.children
        value = self.expr(expr)
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
            value.name_hint = name.value[1:]

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
                result.append(self.emit(graph.CastOp.create(operands=[v], result_types=[t]), node).results[0])
            else:
                raise BuildError(node, f"{what} #{i} has type {v.type}, expected {t}")
        return result

    # -- expressions -------------------------------------------------------------------
    def expr(self, node: Tree | Token) -> Value:
        previous, self.node = self.node, node
        try:
            method = getattr(self, f"expr_{node.data}", None)
            if method is None:
                raise BuildError(node, f"{describe_node(node)} cannot be used as a value here")
            return method(node)
        finally:
            self.node = previous

    def single(self, node: Tree) -> SSAValue:
        return self.pack(self.expr(node), node)

    def expr_var(self, node: Tree) -> Value:
        token = node.children[0]
        value = self.scope.lookup(token.value)
        if value is None:
            raise BuildError(token, f"unknown value {token.value}")
        if value is POISON:
            raise Poisoned(token, "poisoned")
        return value

    def expr_tuple(self, node: Tree) -> Value:
        return [self.expr(c) for c in node.children if c is not None]

    def expr_get_item(self, node: Tree) -> Value:
        base, index_token = node.children
        value = self.expr(base)
        index = int(index_token.value)
        items = value if isinstance(value, list) else None
        if items is None and isinstance(value.type, TupleType):
            if index >= len(value.type.types):
                raise BuildError(index_token, f"index {index} out of range for {value.type}")
            return self.emit(graph.GetItemOp(value, index), node).results[0]
        if items is None:
            raise BuildError(index_token, f"cannot take element {index} of a value of type {value.type}")
        if index >= len(items):
            raise BuildError(index_token, f"index {index} out of range for a tuple of {len(items)}")
        return items[index]

    def expr_number(self, node: Tree) -> Value:
        return self.constant(literal(node), None, node)

    def constant(self, value: float | int | bool, element: Attribute | None, node: Tree) -> SSAValue:
        if element is None:
            element = IntegerType(1) if isinstance(value, bool) else IntegerType(64) if isinstance(value, int) else f32
        t = tensor(element, [])
        python_value = float(value) if element not in (IntegerType(1), IntegerType(8), IntegerType(32), IntegerType(64)) else int(value)
        attr = DenseIntOrFPElementsAttr.from_list(t, [python_value])
        return self.emit(graph.ConstantOp(attr), node).results[0]

    def expr_convert(self, node: Tree) -> Value:
        """`index(0)`, `i64(3)`, `f32(%x)`: a typed literal, or an elementwise cast."""
        dtype_token, operand = node.children
        if dtype_token.value == "index":
            if operand.data in ("number", "neg"):
                return self.index_constant(literal(operand), node)
            raise BuildError(node, "index(...) takes an integer literal")
        element = self.types.element(dtype_token)
        if operand.data in ("number", "neg", "true", "false"):
            return self.constant(literal(operand), element, node)
        value = self.single(operand)
        if not isinstance(value.type, TensorType):
            raise BuildError(operand, f"cannot convert {value.type} to {dtype_token.value}")
        cast = graph.CastOp.create(operands=[value], result_types=[tensor(element, dims(value.type))])
        return self.emit(cast, node).results[0]

    def expr_subscript(self, node: Tree) -> Value:
        """numpy-style `%x[i, a:b, ::2]`: a graph.slice, squeezing the indexed dims."""
        base_node, *items = node.children
        value = self.single(base_node)
        if not isinstance(value.type, TensorType):
            raise BuildError(base_node, f"cannot index a value of type {value.type}")
        rank = len(value.type.get_shape())
        if len(items) > rank:
            raise BuildError(node, f"{len(items)} indices for a tensor of rank {rank}")
        starts, ends, steps, squeezed = [], [], [], []
        for axis, item in enumerate(items):
            if item.data == "index_item":
                start = self.bound(item.children[0])
                starts.append(start)
                ends.append(slice_end_after(start, self, item))
                steps.append(1)
                squeezed.append(axis)
                continue
            start_node, end_node, step_token = item.children
            starts.append(0 if start_node is None else self.bound(start_node))
            ends.append(SLICE_END if end_node is None else self.bound(end_node))
            steps.append(1 if step_token is None else int(step_token.value))
        for _ in range(rank - len(items)):
            starts.append(0)
            ends.append(SLICE_END)
            steps.append(1)
        probe = graph.SliceOp(value, starts, ends, steps, NoneType())
        try:
            result_type = probe.infer_result_types()[0]
        except VerifyException as e:
            raise BuildError(node, str(e)) from None
        finally:
            probe.drop_all_references()
        sliced = self.emit(graph.SliceOp(value, starts, ends, steps, result_type), node).results[0]
        if not squeezed:
            return sliced
        return self.graph_op(graph.SqueezeOp, [sliced], {"axes": i64_array(squeezed)}, node)

    def bound(self, node: Tree) -> int | SSAValue:
        if node.data in ("number", "neg") and isinstance(literal_or_none(node), int):
            return literal(node)
        value = self.single(node)
        if not isinstance(value.type, IndexType):
            raise BuildError(node, f"slice bounds are integers or index values, not {value.type}")
        return value

    def expr_true(self, node: Tree) -> Value:
        return self.constant(True, IntegerType(1), node)

    def expr_false(self, node: Tree) -> Value:
        return self.constant(False, IntegerType(1), node)

    def expr_neg(self, node: Tree) -> Value:
        (operand,) = node.children
        if operand.data == "number":
            return self.constant(-literal(operand), None, node)
        return self.graph_op(graph.NegOp, [self.single(operand)], {}, node)

    def binary(self, node: Tree) -> Value:
        lhs_node, rhs_node = node.children
        lhs = None if lhs_node.data == "number" else self.single(lhs_node)
        rhs = None if rhs_node.data == "number" else self.single(rhs_node)
        if any(isinstance(v.type, IndexType) for v in (lhs, rhs) if v is not None):
            return self.index_binary(node, lhs or self.index_constant(literal(lhs_node), lhs_node),
                                     rhs or self.index_constant(literal(rhs_node), rhs_node))
        return self.tensor_binary(node, lhs, rhs)

    def index_binary(self, node: Tree, lhs: SSAValue, rhs: SSAValue) -> SSAValue:
        """Arithmetic and comparisons on `index` values (dims, loop counters) use arith."""
        if not (isinstance(lhs.type, IndexType) and isinstance(rhs.type, IndexType)):
            raise BuildError(node, f"cannot combine {lhs.type} and {rhs.type}; convert with index(...) or i64(...)")
        if node.data in INDEX_COMPARE:
            return self.emit(arith.CmpiOp(lhs, rhs, INDEX_COMPARE[node.data]), node).results[0]
        if node.data not in INDEX_ARITH:
            raise BuildError(node, f"'{node.data}' is not defined on index values")
        return self.emit(INDEX_ARITH[node.data](lhs, rhs), node).results[0]

    def index_constant(self, value: Literal, node: Tree) -> SSAValue:
        if not isinstance(value, int) or isinstance(value, bool):
            raise BuildError(node, f"index values are integers, not {value!r}")
        return self.emit(arith.ConstantOp(IntegerAttr(value, IndexType())), node).results[0]

    def tensor_binary(self, node: Tree, lhs: SSAValue | None, rhs: SSAValue | None) -> Value:
        lhs_node, rhs_node = node.children
        op_class = INFIX[node.data]
        if lhs is None and rhs is None:
            lhs = self.single(lhs_node)
        element = (lhs or rhs).type.element_type if isinstance((lhs or rhs).type, TensorType) else None
        lhs = lhs or self.constant(literal(lhs_node), element, lhs_node)
        rhs = rhs or self.constant(literal(rhs_node), element, rhs_node)
        return self.graph_op(op_class, [lhs, rhs], {}, node)

    expr_add = expr_sub = expr_mul = expr_div = expr_matmul = binary
    expr_less = expr_greater = expr_equal = binary

    def graph_op(self, op_class: type[Operation], operands: list[SSAValue], properties: dict[str, Attribute],
                 node: Tree, num_results: int = 1, element: Attribute | None = None,
                 result_type: Attribute | None = None) -> Value:
        """Create an op with inferred result types; a verifier error becomes a BuildError."""
        try:
            if result_type is not None:
                op = op_class.create(operands=operands, result_types=[result_type], properties=properties)
                op.verify()
            elif issubclass(op_class, GraphOp):
                # Result types come from the op's own inference, so only the declared
                # constraints (operand kinds, properties, traits) remain to check.
                op = self.inferred(op_class, operands, properties, node, num_results, element)
                op.get_irdl_definition().verify(op)
            elif issubclass(op_class, InfersResultTypes):
                types = op_class.result_types_for(operands, properties)
                op = op_class.create(operands=operands, result_types=types, properties=properties)
                op.verify()
            else:
                raise BuildError(node, f"'{op_class.name}' cannot be written in the text format: "
                                       "it does not implement InfersResultTypes")
        except VerifyException as e:
            raise BuildError(node, str(e).removeprefix("Operation does not verify: ")) from None
        except (AttributeError, TypeError, ValueError, IndexError):
            # An operand of the wrong kind (a tuple, an index...) where a tensor belongs.
            kinds = ", ".join(str(v.type) for v in operands)
            raise BuildError(node, f"'{op_class.name}' cannot take operands of types ({kinds})") from None
        self.emit(op, node)
        return list(op.results) if len(op.results) != 1 else op.results[0]

    def inferred(self, op_class: type[GraphOp], operands: list[SSAValue], properties: dict[str, Attribute],
                 node: Tree, num_results: int, element: Attribute | None) -> GraphOp:
        if not op_class.ELEMENT_TYPE_FROM_RESULT:
            return op_class.create_inferred(operands, properties, num_results)
        if element is None:
            raise BuildError(node, f"'{op_class.name}' needs the type of its result: dtype=f32 (or type=f32[2, 3])")
        probe = op_class.create(operands=operands, result_types=[NoneType()], properties=properties)
        try:
            shapes = probe.shape_function(StaticDims())
        except ShapeError as e:
            raise BuildError(node, f"'{op_class.name}' op {e}") from None
        finally:
            probe.drop_all_references()
        return op_class.create(operands=operands, result_types=[tensor(element, shapes[0])], properties=properties)

    def expr_op_call(self, node: Tree) -> Value:
        name_node, *args = node.children
        name = ".".join(t.value for t in name_node.children)
        op_class = self.ops.get(name if "." in name else f"graph.{name}")
        if op_class is None:
            raise BuildError(name_node, f"unknown op '{name}'")
        operands: list[SSAValue] = []
        literals: list[tuple[Tree, Literal]] = []
        keywords: dict[str, tuple[Tree, Any]] = {}
        for arg in args:
            if arg is None:
                continue
            if arg.data == "kwarg":
                key, value = arg.children
                if key.value in keywords:
                    raise BuildError(key, f"keyword '{key.value}' given twice")
                keywords[key.value] = (value, self.keyword_value(value))
            elif is_literal(arg) and (literals or positional_properties(op_class)):
                literals.append((arg, literal(arg)))
            else:
                if literals:
                    raise BuildError(arg, "operands must come before positional attributes")
                operands.append(self.single(arg))
        element = None
        if "type" in keywords and op_class_takes_result_type(op_class):
            value_node, result_type = keywords.pop("type")
            if not isinstance(result_type, TensorType):
                raise BuildError(value_node, "type must be a tensor type such as f32[768, 768]")
            properties = self.properties(op_class, keywords)
            return self.graph_op(op_class, operands, properties, node, 1, result_type=result_type)
        if "dtype" in keywords:
            value_node, element = keywords.pop("dtype")
            if not isinstance(element, Attribute):
                raise BuildError(value_node, "dtype must be an element type such as f32 or i64")
        positional = list(positional_properties(op_class))
        if len(literals) > len(positional):
            raise BuildError(literals[len(positional)][0], f"'{op_class.name}' takes {len(positional)} positional attributes")
        for (arg, value), prop in zip(literals, positional):
            keywords[prop] = (arg, value)
        properties = self.properties(op_class, keywords)
        results = op_class.result_count(properties) if issubclass(op_class, GraphOp) else 1
        value = self.graph_op(op_class, operands, properties, node, results, element)
        return value if value != [] else []

    def keyword_value(self, node: Tree) -> Any:
        if node.data == "type_literal":
            return self.types.build(Tree("tensor_type", node.children))
        if node.data == "dtype":
            return self.types.build(Tree("scalar_type", node.children)).element_type \
                if node.children[0].value != "index" else IndexType()
        if is_literal(node):
            return literal(node)
        raise BuildError(node, "keyword arguments must be literals (numbers, lists, strings, true/false, types)")

    def properties(self, op_class: type[Operation], keywords: dict[str, tuple[Tree, Any]]) -> dict[str, Attribute]:
        known = property_names(op_class)
        result = {}
        for key, (node, value) in keywords.items():
            if key not in known:
                listed = ", ".join(known) if known else "none"
                raise BuildError(node, f"'{op_class.name}' has no attribute '{key}' (it has: {listed})")
            try:
                result[key] = to_property(op_class, key, value)
            except ValueError as e:
                raise BuildError(node, f"'{op_class.name}': {e}") from None
        return result

    def expr_call(self, node: Tree) -> Value:
        name_token, *arg_nodes = node.children
        callee = self.functions.get(name_token.value[1:])
        if callee is None:
            raise BuildError(name_token, f"unknown function {name_token.value}")
        if callee.sym_name.data in self.pending_results:
            raise BuildError(name_token, f"{name_token.value} is called before its result types are known: "
                                         "declare them with `-> type` to call it here")
        args = [self.single(a) for a in arg_nodes if a is not None]
        params = list(callee.function_type.inputs.data)
        if len(args) != len(params):
            raise BuildError(node, f"{name_token.value} takes {len(params)} arguments, got {len(args)}")
        args = self.conform(args, params, node, f"argument of {name_token.value}")
        results = list(callee.function_type.outputs.data)
        call = self.emit(func.CallOp(name_token.value[1:], args, results), node)
        return list(call.results) if len(call.results) != 1 else call.results[0]

    def expr_construct(self, node: Tree) -> Value:
        name_token, *field_nodes = node.children
        if name_token.value not in self.constructors:
            raise BuildError(name_token, f"unknown constructor {name_token.value}")
        adt, fields = self.constructors[name_token.value]
        args = [self.single(a) for a in field_nodes if a is not None]
        if len(args) != len(fields):
            raise BuildError(node, f"{name_token.value} takes {len(fields)} fields, got {len(args)}")
        args = self.conform(args, fields, node, f"field of {name_token.value}")
        return self.emit(graph.ConstructOp(name_token.value, args, adt), node).results[0]

    # -- control flow ---------------------------------------------------------------------
    def region(self, body: Tree, args: Sequence[tuple[str, Attribute]] = ()) -> tuple[Region, list[SSAValue]]:
        block = Block(arg_types=[t for _, t in args])
        scope = Scope(self.scope)
        for (name, _), arg in zip(args, block.args):
            scope.values[name] = arg
            arg.name_hint = name[1:]
        with self.in_block(block, scope):
            values = self.block_values(body)
        return Region(block), values

    def expr_if_expr(self, node: Tree) -> Value:
        cond_node, then_node, else_node = node.children
        cond = self.single(cond_node)
        then_region, then_values = self.region(then_node)
        else_region, else_values = self.region(else_node)
        types = self.join(then_values, else_values, node, "the two branches of if")
        for region, values, branch in ((then_region, then_values, then_node), (else_region, else_values, else_node)):
            self.yield_in(region, values, branch)
        op = self.emit(graph.IfOp(cond, types, then_region, else_region), node)
        return list(op.results) if len(op.results) != 1 else op.results[0]

    def join(self, a: list[SSAValue], b: list[SSAValue], node: Tree, what: str) -> list[Attribute]:
        if len(a) != len(b):
            raise BuildError(node, f"{what} give {len(a)} and {len(b)} values")
        return [join_types(x.type, y.type, node, what) for x, y in zip(a, b)]

    def yield_in(self, region: Region, values: list[SSAValue], node: Tree) -> None:
        with self.in_block(region.block, self.scope):
            self.emit(graph.YieldOp(values), node)

    def expr_while_expr(self, node: Tree) -> Value:
        *inits, cond_node, body_node = node.children
        names = [i.children[0].value for i in inits]
        init_values = [self.single(i.children[1]) for i in inits]
        carried = [v.type for v in init_values]
        # Widen carried types until the body yields what it receives (dims that change
        # between iterations become `?`); two rounds suffice, a third proves it.
        for _ in range(3):
            mark = len(self.errors)
            cond_region, cond_values = self.region(cond_node, list(zip(names, carried)))
            body_region, body_values = self.region(body_node, list(zip(names, carried)))
            if len(body_values) != len(carried):
                raise BuildError(body_node, f"the loop body gives {len(body_values)} values for {len(carried)} carried values")
            widened = [join_types(t, v.type, body_node, "a carried value") for t, v in zip(carried, body_values)]
            if widened == carried:
                break
            del self.errors[mark:]
            carried = widened
        if len(cond_values) != 1:
            raise BuildError(cond_node, "the loop condition must give one value")
        with self.in_block(cond_region.block, self.scope):
            self.emit(graph.ConditionOp.create(operands=cond_values), cond_node)
        self.yield_in(body_region, body_values, body_node)
        op = self.emit(graph.WhileOp(init_values, carried, cond_region, body_region), node)
        return list(op.results) if len(op.results) != 1 else op.results[0]

    def expr_match_expr(self, node: Tree) -> Value:
        subject_node, *cases = node.children
        subject = self.single(subject_node)
        if not isinstance(subject.type, graph.AdtType):
            raise BuildError(subject_node, f"match needs a value of an ADT type, not {subject.type}")
        regions, all_values = [], []
        for case in cases:
            ctor_token, *binders, body = case.children
            binders = [b for b in binders if b is not None]
            if ctor_token.value not in self.constructors:
                raise BuildError(ctor_token, f"unknown constructor {ctor_token.value}")
            adt, fields = self.constructors[ctor_token.value]
            if adt != subject.type.adt_name:
                raise BuildError(ctor_token, f"{ctor_token.value} is a constructor of {adt}, not {subject.type.adt_name}")
            if len(binders) != len(fields):
                raise BuildError(case, f"{ctor_token.value} has {len(fields)} fields, {len(binders)} names given")
            region, values = self.region(body, [(b.value, t) for b, t in zip(binders, fields)])
            regions.append((ctor_token.value, region, body))
            all_values.append(values)
        types = [v.type for v in all_values[0]]
        for values in all_values[1:]:
            if len(values) != len(types):
                raise BuildError(node, f"the cases of match give {len(types)} and {len(values)} values")
            types = [join_types(t, v.type, node, "the cases of match") for t, v in zip(types, values)]
        for (_, region, body), values in zip(regions, all_values):
            self.yield_in(region, values, body)
        declared = {c.sym_name.data for c in self.adts[subject.type.adt_name].constructors}
        missing = sorted(declared - {name for name, _, _ in regions})
        if missing:
            raise BuildError(node, f"match does not cover {', '.join(missing)}")
        op = self.emit(graph.MatchOp(subject, types, [(name, region) for name, region, _ in regions]), node)
        return list(op.results) if len(op.results) != 1 else op.results[0]


def join_types(a: Attribute, b: Attribute, node: Tree, what: str) -> Attribute:
    if a == b:
        return a
    if isinstance(a, TensorType) and isinstance(b, TensorType) and a.element_type == b.element_type \
            and len(a.get_shape()) == len(b.get_shape()):
        return tensor(a.element_type, join_dims(dims(a), dims(b)))
    raise BuildError(node, f"{what} have different types: {a} and {b}")


SLICE_END = 2**63 - 1  # graph.slice's "to the end of the dim"


def slice_end_after(start: int | SSAValue, builder: ModuleBuilder, node: Tree) -> int | SSAValue:
    """The end bound of the single index `start` (Python: -1 means the last element)."""
    if isinstance(start, int):
        return SLICE_END if start == -1 else start + 1
    one = builder.index_constant(1, node)
    return builder.emit(arith.AddiOp(start, one), node).results[0]


def is_literal(node: Tree) -> bool:
    return node.data in LITERAL_NODES or (node.data == "neg" and node.children[0].data == "number")


def literal_or_none(node: Tree) -> Literal | None:
    try:
        return literal(node)
    except BuildError:
        return None


def op_class_takes_result_type(op_class: type[Operation]) -> bool:
    """Ops whose result element type the user chooses also accept a whole `type=`."""
    return issubclass(op_class, GraphOp) and op_class.ELEMENT_TYPE_FROM_RESULT


def positional_properties(op_class: type[Operation]) -> tuple[str, ...]:
    return op_class.POSITIONAL_PROPERTIES if issubclass(op_class, InfersResultTypes) else ()


def literal(node: Tree) -> Literal:
    """The Python value of a literal node."""
    kind = node.data
    if kind == "number":
        text = node.children[0].value
        return float(text) if any(c in text for c in ".eE") else int(text)
    if kind == "neg":
        return -literal(node.children[0])
    if kind in ("true", "false"):
        return kind == "true"
    if kind == "string":
        return node.children[0].value[1:-1].encode().decode("unicode_escape")
    if kind == "list":
        return [literal(c) for c in node.children if c is not None]
    raise BuildError(node, f"{describe_node(node)} is not a literal")


def describe_node(node: Tree | Token) -> str:
    names = {"dtype": "an element type", "type_literal": "a type", "list": "a list", "string": "a string"}
    return names.get(getattr(node, "data", ""), "this expression")


def position(node: Tree | Token | None) -> tuple[int, int]:
    if isinstance(node, Token):
        return node.line or 1, node.column or 1
    if isinstance(node, Tree):
        meta = node.meta
        if not meta.empty:
            return meta.line, meta.column
        for child in node.children:
            if child is not None:
                return position(child)
    return 1, 1
