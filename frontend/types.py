"""Type syntax of the text format: `f32[n, ?, 256]`, `i64[]`, `index`, `shape<2>`,
`tuple<...>` and ADT names. Named dims (`n`) are `?` in the IR; the builder records where
each name is used so that it can check at run time that all uses agree."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lark import Token, Tree
from xdsl.dialects.builtin import Float16Type, Float32Type, Float64Type, IndexType, IntegerType, TupleType
from xdsl.ir import Attribute

from nimble.dialects.graph import AdtType
from nimble.dialects.graph.types import tensor
from nimble.dialects.dynshape import ShapeType
from nimble.frontend.nodes import BuildError

if TYPE_CHECKING:
    from nimble.frontend.builder import ModuleBuilder

ELEMENT_TYPES: dict[str, Attribute] = {
    "f16": Float16Type(), "f32": Float32Type(), "f64": Float64Type(), "i1": IntegerType(1),
    "bool": IntegerType(1), "i8": IntegerType(8), "i32": IntegerType(32), "i64": IntegerType(64),
}
"""Element type names of the text format (the printer reads this table backwards)."""


class TypeBuilder:
    def __init__(self, builder: ModuleBuilder):
        self.builder = builder
        self.named: list[tuple[str, int, int]] = []  # (dim name, parameter, dim index)

    def take_named_dims(self) -> list[tuple[str, int, int]]:
        named, self.named = self.named, []
        return named

    def build(self, node: Tree, param: int | None = None) -> Attribute:
        kind = node.data
        if kind == "tensor_type":
            dtype, *dim_nodes = node.children
            dims = []
            for i, d in enumerate(n for n in dim_nodes if n is not None):
                if d.data == "static_dim":
                    dims.append(int(d.children[0].value))
                else:
                    dims.append(None)
                    if d.data == "named_dim" and param is not None:
                        self.named.append((d.children[0].value, param, i))
            if dtype.value == "index":
                raise BuildError(dtype, "index is a scalar type; tensors hold f32, i64, ...")
            return tensor(self.element(dtype), dims)
        if kind == "scalar_type":
            (dtype,) = node.children
            if dtype.value == "index":
                return IndexType()
            return tensor(self.element(dtype), [])
        if kind == "shape_type":
            return ShapeType(int(node.children[0].value))
        if kind == "tuple_type":
            return TupleType(tuple(self.build(t) for t in node.children if t is not None))
        if kind == "adt_type":
            name: Token = node.children[0]
            if name.value not in self.builder.adts:
                raise BuildError(name, f"unknown type {name.value}")
            return AdtType(name.value)
        raise BuildError(node, f"not a type: {kind}")

    @staticmethod
    def element(token: Token) -> Attribute:
        return ELEMENT_TYPES[token.value]
