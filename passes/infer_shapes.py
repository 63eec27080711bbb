"""`infer-shapes`: refine `?` dims to static sizes wherever operands determine them.

Types flow forward through every op with a shape function, through calls (a callee's
refined results reach its call sites), `graph.if`/`graph.match` (the join of what the
branches yield), `graph.while` (the join of the initial and the yielded values: a dim
that changes between iterations stays `?`), tuples, and function results (refined to
what the body returns). The pass only ever makes types more static; a static conflict
is an error at the op. Values passed where an exact type is required (call arguments)
get a `graph.cast` back to that type; `canonicalize` removes the casts that become
identities.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, ModuleOp, TensorType, TupleType
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import VerifyException

from nimble.diagnostics import OpError
from nimble.dialects.graph import (
    CastOp,
    GetItemOp,
    GraphOp,
    IfOp,
    MakeTupleOp,
    MatchOp,
    WhileOp,
)
from nimble.dialects.graph.types import join_types, symbolic_dims, tensor, types_compatible

MAX_ROUNDS = 32
"""Each round makes at least one dim static, so this bounds real programs loosely; it
only guards against a bug turning the fixpoint into a loop."""


class Conflict(Exception):
    """Two static dims disagree."""


def meet(current: Attribute, known: Attribute) -> Attribute:
    """The most static type that both describe (`known` fills `current`'s `?`)."""
    if isinstance(current, TensorType) and isinstance(known, TensorType):
        if current.element_type != known.element_type or len(current.get_shape()) != len(known.get_shape()):
            raise Conflict(f"{known} does not fit {current}")
        merged = []
        for a, b in zip(symbolic_dims(current), symbolic_dims(known)):
            if isinstance(a, int) and isinstance(b, int) and a != b:
                raise Conflict(f"{known} does not fit {current}")
            # A number over a name, a name over an anonymous `?`.
            keep = isinstance(a, int) or b is None or (a is not None and not isinstance(b, int))
            merged.append(a if keep else b)
        return tensor(current.element_type, merged)
    if isinstance(current, TupleType) and isinstance(known, TupleType) and len(current.types) == len(known.types):
        return TupleType(tuple(meet(a, b) for a, b in zip(current.types.data, known.types.data)))
    return current


def join(types: list[Attribute]) -> Attribute:
    """The least static type describing all of `types`; the first if none does (the
    verifier then reports the mismatch)."""
    result = types[0]
    for t in types[1:]:
        joined = join_types(result, t)
        if joined is None:
            return result
        result = joined
    return result


@dataclass
class _Refiner:
    functions: dict[str, func.FuncOp]
    changed: bool = False

    def set_type(self, value: SSAValue, new: Attribute, op: Operation) -> SSAValue:
        try:
            refined = meet(value.type, new)
        except Conflict as e:
            raise OpError(op, f"type conflict: {e}") from None
        if refined == value.type:
            return value
        self.changed = True
        return Rewriter.replace_value_with_new_type(value, refined)

    def region(self, region: Region) -> None:
        for block in region.blocks:
            self.block(block)

    def block(self, block: Block) -> None:
        for op in list(block.ops):
            self.op(op)

    def op(self, op: Operation) -> None:
        if isinstance(op, GraphOp):
            try:
                inferred = op.infer_result_types()
            except VerifyException as e:
                raise OpError(op, str(e)) from None
            for result, t in zip(list(op.results), inferred):
                self.set_type(result, t, op)
        elif isinstance(op, IfOp):
            self.region(op.then_region)
            self.region(op.else_region)
            self.results_from_yields(op, [op.then_region, op.else_region])
        elif isinstance(op, MatchOp):
            for region in op.case_regions:
                self.region(region)
            self.results_from_yields(op, list(op.case_regions))
        elif isinstance(op, WhileOp):
            self.while_loop(op)
        elif isinstance(op, func.CallOp):
            callee = self.functions.get(op.callee.root_reference.data)
            if callee is not None:
                for result, t in zip(list(op.results), callee.function_type.outputs.data):
                    self.set_type(result, t, op)
        elif isinstance(op, MakeTupleOp):
            self.set_type(op.result, TupleType(tuple(v.type for v in op.elements)), op)
        elif isinstance(op, GetItemOp) and isinstance(op.tuple.type, TupleType):
            self.set_type(op.result, op.tuple.type.types.data[op.index.value.data], op)
        else:
            for region in op.regions:
                self.region(region)

    def results_from_yields(self, op: Operation, regions: list[Region]) -> None:
        yielded = [[v.type for v in r.block.last_op.operands] for r in regions]
        for i, result in enumerate(list(op.results)):
            self.set_type(result, join([y[i] for y in yielded]), op)

    def while_loop(self, op: WhileOp) -> None:
        """Carried types are the fixpoint of `join(initial, yielded under carried)`,
        starting from the initial values' types; found on a scratch copy of the body so
        the real body is only ever refined, never widened back."""
        carried = [meet(r.type, init.type) for r, init in zip(op.results, op.inits)]
        for _ in range(MAX_ROUNDS):
            yielded = self.dry_run(op.body_region, carried)
            widened = [join([init.type, y, c]) for init, y, c in zip(op.inits, yielded, carried)]
            if widened == carried:
                break
            carried = widened
        for i, t in enumerate(carried):
            refined = self.set_type(op.results[i], t, op)
            for region in (op.cond_region, op.body_region):
                self.set_type(region.block.args[i], refined.type, op)
        self.region(op.cond_region)
        self.region(op.body_region)

    def dry_run(self, body: Region, carried: list[Attribute]) -> list[Attribute]:
        """What the body yields when its arguments have the `carried` types."""
        scratch = body.clone()
        try:
            for arg, t in zip(list(scratch.block.args), carried):
                meet_type = meet(arg.type, t) if types_compatible(arg.type, t) else arg.type
                if meet_type != arg.type:
                    Rewriter.replace_value_with_new_type(arg, meet_type)
            _Refiner(self.functions).region(scratch)
            return [v.type for v in scratch.block.last_op.operands]
        except (OpError, Conflict):
            return [arg.type for arg in body.block.args]
        finally:
            scratch.drop_all_references()

    def signature(self, function: func.FuncOp) -> None:
        returns = [op for op in function.walk() if isinstance(op, func.ReturnOp) and op.parent_op() is function]
        if not returns:
            return
        declared = list(function.function_type.outputs.data)
        refined = []
        for i, t in enumerate(declared):
            try:
                refined.append(meet(t, join([r.operands[i].type for r in returns])))
            except Conflict as e:
                raise OpError(returns[0], f"returns a value that conflicts with the declared result: {e}") from None
        if refined != declared:
            self.changed = True
            function.function_type = FunctionType.from_lists(list(function.function_type.inputs.data), refined)


def _exact_types(function: func.FuncOp, functions: dict[str, func.FuncOp]) -> None:
    """Call arguments and returned values must match signatures exactly: cast back."""
    for op in list(function.walk()):
        if isinstance(op, func.CallOp) and (callee := functions.get(op.callee.root_reference.data)):
            expected = list(callee.function_type.inputs.data)
        elif isinstance(op, func.ReturnOp) and op.parent_op() is function:
            expected = list(function.function_type.outputs.data)
        else:
            continue
        for i, (value, t) in enumerate(zip(list(op.operands), expected)):
            if value.type != t and isinstance(t, TensorType):
                cast = CastOp.to(value, t)
                cast.location = op.location
                Rewriter.insert_op(cast, InsertPoint.before(op))
                op.operands[i] = cast.result


@dataclass(frozen=True)
class InferShapesPass(ModulePass):
    """Refine `?` dims to static sizes through ops, calls, control flow and ADTs."""

    name = "infer-shapes"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        functions = {f.sym_name.data: f for f in op.ops if isinstance(f, func.FuncOp) and not f.is_declaration}
        refiner = _Refiner(functions)
        for _ in range(MAX_ROUNDS):
            refiner.changed = False
            for function in functions.values():
                refiner.region(function.body)
                refiner.signature(function)
            if not refiner.changed:
                break
        for function in functions.values():
            _exact_types(function, functions)
