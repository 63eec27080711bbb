"""Control flow of the `.nb` builder: regions for `if`, `while` and `match`, and the
joins that give their result types."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from lark import Tree
from xdsl.ir import Attribute, Block, Region, SSAValue

from nimble.dialects import graph
from nimble.dialects.graph.types import join_types

from nimble.frontend.nodes import BuildError, Scope, Value, name_value


if TYPE_CHECKING:
    pass


class ControlFlow:
    """Mixin of ModuleBuilder: expressions with regions."""

    def region(self, body: Tree, args: Sequence[tuple[str, Attribute]] = ()) -> tuple[Region, list[SSAValue]]:
        block = Block(arg_types=[t for _, t in args])
        scope = Scope(self.scope)
        for (name, _), arg in zip(args, block.args):
            scope.values[name] = arg
            name_value(arg, name)
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
        return [join_or_error(x.type, y.type, node, what) for x, y in zip(a, b)]

    def yield_in(self, region: Region, values: list[SSAValue], node: Tree) -> None:
        with self.in_block(region.block, self.scope):
            self.emit(graph.YieldOp(values), node)

    def expr_while_expr(self, node: Tree) -> Value:
        *inits, cond_node, body_node = node.children
        names = [i.children[0].value for i in inits]
        init_values = [self.single(i.children[1]) for i in inits]
        carried = [v.type for v in init_values]
        # Widen the carried types until the body yields what it receives: a dim that
        # changes between iterations becomes `?`. Each round makes at least one more
        # dim `?`, so this ends; the regions of rounds that did not fit are discarded.
        while True:
            mark = len(self.errors)
            cond_region, cond_values = self.region(cond_node, list(zip(names, carried)))
            body_region, body_values = self.region(body_node, list(zip(names, carried)))
            if len(body_values) != len(carried):
                raise BuildError(body_node, f"the loop body gives {len(body_values)} values for {len(carried)} carried values")
            widened = [join_or_error(t, v.type, body_node, "a carried value") for t, v in zip(carried, body_values)]
            if widened == carried:
                break
            del self.errors[mark:]
            for region in (cond_region, body_region):
                region.drop_all_references()
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
            types = [join_or_error(t, v.type, node, "the cases of match") for t, v in zip(types, values)]
        for (_, region, body), values in zip(regions, all_values):
            self.yield_in(region, values, body)
        declared = {c.sym_name.data for c in self.adts[subject.type.adt_name].constructors}
        missing = sorted(declared - {name for name, _, _ in regions})
        if missing:
            raise BuildError(node, f"match does not cover {', '.join(missing)}")
        op = self.emit(graph.MatchOp(subject, types, [(name, region) for name, region, _ in regions]), node)
        return list(op.results) if len(op.results) != 1 else op.results[0]


def join_or_error(a: Attribute, b: Attribute, node: Tree, what: str) -> Attribute:
    joined = join_types(a, b)
    if joined is None:
        raise BuildError(node, f"{what} have different types: {a} and {b}")
    return joined
