"""Expressions of the `.nb` builder: values, literals, infix arithmetic (tensor ops, or
`arith` on index values), op calls resolved through the op registry, calls,
constructors, conversions and numpy-style indexing."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from lark import Token, Tree
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    NoneType,
    TensorType,
    TupleType,
    f32,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.utils.exceptions import VerifyException

from nimble.dialects import arith
from nimble.dialects import graph
from nimble.dialects.graph.base import GraphOp, i64_array
from nimble.dialects.graph.types import dims, numpy_dtype, tensor
from nimble.dialects.interfaces import InfersResultTypes
from nimble.frontend.attributes import Literal, property_names, to_property
from nimble.frontend.nodes import (
    POISON,
    BuildError,
    Poisoned,
    Value,
    describe_node,
    is_literal,
    literal,
    is_number,
)

if TYPE_CHECKING:
    from nimble.frontend.builder import ModuleBuilder

INFIX: dict[str, type[GraphOp]] = {
    "add": graph.AddOp, "sub": graph.SubOp, "mul": graph.MulOp, "div": graph.DivOp,
    "matmul": graph.MatmulOp, "less": graph.LessOp, "greater": graph.GreaterOp,
    "equal": graph.EqualOp,
}
INDEX_ARITH: dict[str, type[Operation]] = {
    "add": arith.AddiOp, "sub": arith.SubiOp, "mul": arith.MuliOp, "div": arith.DivSIOp,
}
INDEX_COMPARE = {"less": "slt", "greater": "sgt", "equal": "eq"}
SYMBOLS = {"add": "+", "sub": "-", "mul": "*", "div": "/", "matmul": "@", "less": "<", "greater": ">", "equal": "=="}
"""How each infix rule of nimble.lark is spelled (the printer reads these tables backwards)."""



class Expressions:
    """Mixin of ModuleBuilder: one `expr_<rule>` method per expression rule."""

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
        """A 0-d tensor constant; typed by context when `element` is given."""
        if element is None:
            element = IntegerType(1) if isinstance(value, bool) else IntegerType(64) if isinstance(value, int) else f32
        t = tensor(element, [])
        kind = numpy_dtype(element)
        if np.issubdtype(kind, np.integer) or kind == np.bool_:
            if isinstance(value, float):
                raise BuildError(node, f"{value!r} is not a value of {element} (an integer type)")
            info = np.iinfo(kind) if kind != np.bool_ else None
            if (info and not info.min <= value <= info.max) or (info is None and value not in (0, 1)):
                raise BuildError(node, f"{value} does not fit in {element}")
            python_value: float | int = int(value)
        else:
            python_value = float(value)
        attr = DenseIntOrFPElementsAttr.from_list(t, [python_value])
        return self.emit(graph.ConstantOp(attr), node).results[0]

    def expr_convert(self, node: Tree) -> Value:
        """`index(0)`, `i64(3)`, `f32(%x)`: a typed literal, or an elementwise cast."""
        dtype_token, operand = node.children
        if dtype_token.value == "index":
            if is_number(operand):
                return self.index_constant(literal(operand), node)
            raise BuildError(node, "index(...) takes an integer literal")
        element = self.types.element(dtype_token)
        if is_number(operand) or operand.data in ("true", "false"):
            return self.constant(literal(operand), element, node)
        value = self.single(operand)
        if not isinstance(value.type, TensorType):
            raise BuildError(operand, f"cannot convert {value.type} to {dtype_token.value}")
        cast = graph.CastOp.to(value, tensor(element, dims(value.type)))
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
        if is_number(node):
            value = literal(node)
            if not isinstance(value, int):
                raise BuildError(node, f"slice bounds are integers, not {value!r}")
            if not -(2**62) <= value < 2**62:
                raise BuildError(node, f"slice bound {value} is out of range")
            return value
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
        if is_number(operand):
            return self.constant(-literal(operand), None, node)
        return self.graph_op(graph.NegOp, [self.single(operand)], {}, node)

    def binary(self, node: Tree) -> Value:
        """`lhs OP rhs`. A chain `a + b - c * d ...` is a left spine of these nodes: it is
        built from the bottom up in a loop, so a long chain does not deepen Python's stack."""
        spine = [node]
        while isinstance(first := spine[-1].children[0], Tree) and first.data in INFIX:
            spine.append(first)
        lhs_node = spine[-1].children[0]
        lhs = None if is_number(lhs_node) else self.single(lhs_node)
        previous = self.node
        try:
            for n in reversed(spine):
                self.node = n
                value = self.binary_of(n, lhs)
                if n is not node:
                    lhs = self.pack(value, n)
        finally:
            self.node = previous
        return value

    def binary_of(self, node: Tree, lhs: SSAValue | None) -> Value:
        """`node` given its left operand's value (None: a literal)."""
        lhs_node, rhs_node = node.children
        rhs = None if is_number(rhs_node) else self.single(rhs_node)
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
        if isinstance(value, int) and not isinstance(value, bool) and not -(2**63) <= value < 2**63:
            raise BuildError(node, f"{value} does not fit in an index")
        if not isinstance(value, int) or isinstance(value, bool):
            raise BuildError(node, f"index values are integers, not {value!r}")
        return self.emit(arith.ConstantOp(IntegerAttr(value, IndexType())), node).results[0]

    def tensor_binary(self, node: Tree, lhs: SSAValue | None, rhs: SSAValue | None) -> Value:
        lhs_node, rhs_node = node.children
        op_class = INFIX[node.data]
        if lhs is None and rhs is None:
            # Two literals: a float one makes both f32, as in Python (2 + 1.5 is 3.5).
            any_float = any(isinstance(literal(n), float) for n in (lhs_node, rhs_node))
            lhs = self.constant(literal(lhs_node), f32 if any_float else None, lhs_node)
        element = (lhs or rhs).type.element_type if isinstance((lhs or rhs).type, TensorType) else None
        lhs = lhs or self.constant(literal(lhs_node), element, lhs_node)
        rhs = rhs or self.constant(literal(rhs_node), element, rhs_node)
        return self.graph_op(op_class, [lhs, rhs], {}, node)

    expr_add = expr_sub = expr_mul = expr_div = expr_matmul = binary
    expr_less = expr_greater = expr_equal = binary

    def graph_op(self, op_class: type[Operation], operands: list[SSAValue], properties: dict[str, Attribute],
                 node: Tree, element: Attribute | None = None,
                 result_type: Attribute | None = None) -> Value:
        """Create an op with inferred result types; a verifier error becomes a BuildError."""
        try:
            if result_type is not None:
                op = op_class.create(operands=operands, result_types=[result_type], properties=properties)
                op.verify()
            elif issubclass(op_class, GraphOp):
                # Result types come from the op's own inference, so only the declared
                # constraints (operand kinds, properties, traits) remain to check.
                op = self.inferred(op_class, operands, properties, node, element)
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
                 node: Tree, element: Attribute | None) -> GraphOp:
        if op_class.ELEMENT_TYPE_FROM_RESULT and element is None:
            raise BuildError(node, f"'{op_class.name}' needs the type of its result: dtype=f32 (or type=f32[2, 3])")
        try:
            types = op_class.result_types_for(operands, properties, element)
        except (AssertionError, AttributeError, TypeError):
            raise BuildError(node, f"'{op_class.name}' needs its whole result type: type=f32[2, 3]") from None
        return op_class.create(operands=operands, result_types=types, properties=properties)

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
        takes_type = op_class_takes_result_type(op_class)
        if "type" in keywords and takes_type:
            value_node, result_type = keywords.pop("type")
            if not isinstance(result_type, TensorType):
                raise BuildError(value_node, "type must be a tensor type such as f32[768, 768]")
            properties = self.properties(op_class, keywords)
            return self.graph_op(op_class, operands, properties, node, result_type=result_type)
        if "dtype" in keywords and takes_type:
            value_node, element = keywords.pop("dtype")
            if not (isinstance(element, Attribute) and is_element_type(element)):
                raise BuildError(value_node, "dtype must be an element type such as f32 or i64")
        positional = list(positional_properties(op_class))
        if len(literals) > len(positional):
            raise BuildError(literals[len(positional)][0], f"'{op_class.name}' takes {len(positional)} positional attributes")
        for (arg, value), prop in zip(literals, positional):
            keywords[prop] = (arg, value)
        properties = self.properties(op_class, keywords)
        return self.graph_op(op_class, operands, properties, node, element)

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


SLICE_END = 2**63 - 1  # graph.slice's "to the end of the dim"


def slice_end_after(start: int | SSAValue, builder: ModuleBuilder, node: Tree) -> int | SSAValue:
    """The end bound of the single index `start` (Python: -1 means the last element)."""
    if isinstance(start, int):
        return SLICE_END if start == -1 else start + 1
    one = builder.index_constant(1, node)
    return builder.emit(arith.AddiOp(start, one), node).results[0]


def is_element_type(t: Attribute) -> bool:
    """A tensor element type Nimble supports (not `index`, not a tensor)."""
    if isinstance(t, IndexType):
        return False
    try:
        numpy_dtype(t)
    except ValueError:
        return False
    return True


def op_class_takes_result_type(op_class: type[Operation]) -> bool:
    """Ops whose result element type the user chooses also accept a whole `type=`."""
    return issubclass(op_class, GraphOp) and op_class.ELEMENT_TYPE_FROM_RESULT


def positional_properties(op_class: type[Operation]) -> tuple[str, ...]:
    return op_class.POSITIONAL_PROPERTIES if issubclass(op_class, InfersResultTypes) else ()
