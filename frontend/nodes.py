"""What the `.nb` builder's pieces share: the build error, scopes, literal nodes and
source positions of parse-tree nodes."""

from __future__ import annotations

from typing import Any

from lark import Token, Tree
from xdsl.ir import SSAValue

from nimble.errors import CompileError
from nimble.frontend.attributes import Literal

Value = SSAValue | list  # a list is a tuple expression not (yet) packed into one value

LITERAL_NODES = {"number", "true", "false", "string", "list", "dtype", "type_literal"}


class BuildError(CompileError):
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


def is_number(node: Tree) -> bool:
    """A number literal, possibly negated: typed by the context it appears in."""
    return node.data == "number" or (node.data == "neg" and is_number(node.children[0]))


def is_literal(node: Tree) -> bool:
    return node.data in LITERAL_NODES or (node.data == "neg" and node.children[0].data == "number")


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


def name_value(value: SSAValue, name: str) -> None:
    """Give `value` the source name `%name` as its SSA name hint, where MLIR allows it
    (a name such as `%4` is fine in .nb but not as an xdsl name hint)."""
    try:
        value.name_hint = name.removeprefix("%")
    except ValueError:
        value.name_hint = None
