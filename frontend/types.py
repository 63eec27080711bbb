"""Type syntax of the text format: `f32[n, ?, 256]`, `i64[]`, `index`, `shape<2>`,
`tuple<...>` and ADT names. Named dims (`n`) are `?` in the IR; the builder records where
each name is used so that it can check at run time that all uses agree."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lark import Token, Tree
from xdsl.dialects.builtin import IndexType, TupleType
from xdsl.ir import Attribute

from nimble.dialects.graph import AdtType
from nimble.dialects.graph.types import element_type_of, tensor
from nimble.dialects.shape import ShapeType

if TYPE_CHECKING:
    from nimble.frontend.builder import ModuleBuilder

ELEMENT_TYPES = {
    "f16": "float16", "f32": "float32", "f64": "float64", "i1": "bool", "bool": "bool",
    "i8": "int8", "i32": "int32", "i64": "int64",
}


class TypeBuilder:
    def __init__(self, builder: ModuleBuilder):
        self.builder = builder
        self.named: list[tuple[str, int, int]] = []  # (dim name, parameter, dim index)

    def take_named_dims(self) -> list[tuple[str, int, int]]:
        named, self.named = self.named, []
        return named

    def build(self, node: Tree, param: int | None = None) -> Attribute:
        from nimble.frontend.builder import BuildError

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
        import numpy as np

        return element_type_of(np.dtype(ELEMENT_TYPES[token.value]))
