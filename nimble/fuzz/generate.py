"""Random, well-typed graph-dialect programs for differential testing (as NNSmith does).

A program is one `@main` over 1-3 f32 parameters whose dims are small constants or the
symbols `n` and `m` (bound to sizes at run time, 1 among them). Ops are added one at a
time: the op is drawn first (uniformly over `SAMPLERS`, so every op is exercised as
often as any other), then its operands from the values in scope and its properties at
random; the op's own result-type inference decides whether the choice is legal, and a
result with a dim the types cannot name (an anonymous `?`) is refused, so every op of a
kept program is legal at every size of the symbols. Control flow (`graph.if`,
`graph.while`, `graph.match` on an ADT, tuples) holds nested ops of the same kind.
Values are kept away from undefined behaviour by construction (indices in range,
positive variances, pool windows that fit).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    IndexType,
    IntegerAttr,
    ModuleOp,
    TensorType,
    f32,
    i1,
    i32,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from nimble.dialects import graph, dynshape
from nimble.dialects.dim_expr import symbol
from nimble.dialects.interfaces import HasShapeFunction
from nimble.dialects.graph.types import tensor
from nimble.dialects.shape_functions import ConcreteDims, symbolic_dims
from nimble.fuzz.samplers import SAMPLERS
from nimble.fuzz.values import STATIC_SIZES, SYMBOLS, Reject, value_dims, is_tensor


@dataclass
class Program:
    module: ModuleOp
    ops: frozenset[str]
    """The names of the graph ops the program holds (the generator's coverage)."""

    @property
    def text(self) -> str:
        return str(self.module)


def _known(types: Sequence[Attribute]) -> bool:
    """Every dim of every tensor type static or named (no anonymous `?`)."""
    for t in types:
        if isinstance(t, TensorType) and any(d is None for d in symbolic_dims(t)):
            return False
    return True


PROBES = ({"n": 1, "m": 1}, {"n": 2, "m": 3}, {"n": 3, "m": 2}, {"n": 5, "m": 5})
"""Bindings of the symbols at which every op's shape function must accept its operands
(a type may promise a dim that only holds at some sizes: `2` for the broadcast of 2
and `m`, which needs `m` to be 1 or 2 at run time)."""


def _legal_at_every_size(op: graph.GraphOp) -> bool:
    for sizes in PROBES:
        try:
            values = {v: _stand_in(v, sizes) for v in op.operands}
        except (KeyError, TypeError):
            return True  # an operand this check cannot evaluate (the types decide alone)
        try:
            op.shape_function(ConcreteDims(values))
        except Exception:  # noqa: BLE001 (a ShapeError, in whatever words)
            return False
    return True


def _stand_in(value: SSAValue, sizes: dict[str, int]) -> Any:
    """Something with `value`'s run-time dims (a tensor), or its value (an index or a shape)."""
    if isinstance(value.type, TensorType):
        dims = [d if isinstance(d, int) else d.evaluate(sizes) for d in symbolic_dims(value.type)]
        return np.broadcast_to(np.float32(0), dims)
    owner = value.owner
    if isinstance(owner, arith.ConstantOp):
        return owner.value.value.data
    if isinstance(owner, dynshape.OfOp):
        return np.shape(_stand_in(owner.operands[0], sizes))
    if isinstance(owner, dynshape.DimOp):
        return np.shape(_stand_in(owner.operands[0], sizes))[owner.index.value.data]
    raise KeyError(value)


class ProgramGenerator:
    """`program()` draws a new random program from `rng`."""

    def __init__(self, rng: np.random.Generator, max_ops: int = 10):
        self.rng = rng
        self.max_ops = max_ops

    # -- the program ------------------------------------------------------------------
    def program(self) -> Program:
        self.adts: list[graph.AdtOp] = []
        params = [self._param_type() for _ in range(int(self.rng.integers(1, 4)))]
        block = Block(arg_types=params)
        self.block, self.pool, self.depth = block, list(block.args), 0
        self._fill(int(self.rng.integers(2, self.max_ops + 1)))
        outputs = self._outputs()
        block.add_op(func.ReturnOp(*outputs))
        main = func.FuncOp("main", (params, [v.type for v in outputs]), Region(block))
        module = ModuleOp([*self.adts, main])
        ops = frozenset(op.name for op in module.walk() if op.name.startswith("graph."))
        return Program(module, ops)

    def _param_type(self) -> TensorType:
        if self.rng.random() < 0.2:  # an image, NCHW
            dims = [self._dim(0.5), int(self.rng.choice([1, 2, 3, 4, 8])), *self.rng.choice([5, 6, 7, 9], 2)]
        else:
            dims = [self._dim(0.35) for _ in range(int(self.rng.integers(1, 4)))]
        return tensor(f32, [d if not isinstance(d, np.integer) else int(d) for d in dims])

    def _dim(self, p_symbol: float) -> Any:
        if self.rng.random() < p_symbol:
            return symbol(str(self.rng.choice(SYMBOLS)))
        return int(self.rng.choice(STATIC_SIZES))

    def _fill(self, count: int) -> None:
        names = list(SAMPLERS)
        made = tries = 0
        while made < count and tries < 40 * count:
            tries += 1
            sampler = SAMPLERS[names[int(self.rng.integers(len(names)))]]
            mark = len(self.block.ops)
            try:
                sampler(self)
                made += 1
            except Reject:
                for op in list(self.block.ops)[mark:][::-1]:  # helpers of a refused op
                    self.pool = [v for v in self.pool if v.owner is not op]
                    op.detach()
                    op.erase(safe_erase=False)  # (a refused region may still use it)

    def _outputs(self) -> list[SSAValue]:
        """The function's results: the last (up to 3) values nothing uses, so that few ops are dead."""
        tensors = [v for v in self.pool if is_tensor(v)]
        unused = [v for v in tensors if not v.uses and not isinstance(v.owner, Block)]
        return unused[-3:] or tensors[-1:]

    # -- helpers the samplers use -----------------------------------------------------
    def pick(self, predicate: Callable[[SSAValue], bool] = is_tensor) -> SSAValue:
        options = [v for v in self.pool if predicate(v)]
        if not options:
            raise Reject
        # Later values more often: deeper programs, fewer dead ops.
        weights = np.arange(1, len(options) + 1, dtype=float)
        return options[int(self.rng.choice(len(options), p=weights / weights.sum()))]

    def emit(self, op: Operation) -> Operation:
        self.block.add_op(op)
        self.pool.extend(r for r in op.results if isinstance(r.type, TensorType))
        return op

    def make(self, cls: type[Operation], operands: Sequence[SSAValue], properties: dict[str, Attribute] | None = None,
             element: Attribute | None = None) -> Operation:
        """`cls` on these operands, its result types inferred; Reject if illegal."""
        properties = properties or {}
        try:
            if issubclass(cls, graph.GraphOp):
                types = cls.result_types_for(list(operands), properties, element)
            else:
                types = cls.result_types_for(list(operands), properties)
            if not _known(types) and not (issubclass(cls, HasShapeFunction) and cls.DATA_DEPENDENT) \
                    and _known([v.type for v in operands]):
                raise Reject  # (a `?` only a data-dependent op, or one downstream of it, may make)
            op = cls.create(operands=list(operands), result_types=types, properties=properties)
            op.verify()
            if isinstance(op, graph.GraphOp) and not _legal_at_every_size(op):
                op.drop_all_references()
                raise Reject
        except Reject:
            raise
        except Exception:  # noqa: BLE001 (the op's own checks say no, in whatever words)
            raise Reject from None
        return self.emit(op)

    def index(self, value: int) -> SSAValue:
        op = arith.ConstantOp(IntegerAttr(value, IndexType()))
        self.block.add_op(op)
        return op.result

    def constant(self, array: np.ndarray) -> SSAValue:
        element = {np.dtype(np.float32): f32, np.dtype(np.int64): i64, np.dtype(np.int32): i32,
                   np.dtype(np.bool_): i1}[array.dtype]
        t = TensorType(element, array.shape)
        values = array.astype(np.int64).ravel().tolist() if element != f32 else array.ravel().tolist()
        return self.emit(graph.ConstantOp(DenseIntOrFPElementsAttr.from_list(t, values))).results[0]

    def weights(self, *shape: int, positive: bool = False) -> SSAValue:
        array = self.rng.standard_normal(shape).astype(np.float32) * np.float32(0.5)
        return self.constant(np.abs(array) + np.float32(0.5) if positive else array)

    def axis(self, value: SSAValue) -> int:
        rank = len(value_dims(value))
        if rank == 0:
            raise Reject
        return int(self.rng.integers(-rank, rank))

    def region(self, args: Sequence[Attribute], body: Callable[[list[SSAValue]], list[SSAValue]]) -> Region:
        """A one-block region with arguments of types `args`: `body` fills it (the values in
        scope are the enclosing ones and the arguments) and returns what it yields."""
        if self.depth >= 2:
            raise Reject
        saved = self.block, self.pool
        block = Block(arg_types=args)
        self.block, self.pool = block, [*self.pool, *block.args]
        self.depth += 1
        try:
            values = body(list(block.args))
            block.add_op(graph.YieldOp(values))
        finally:
            self.block, self.pool = saved
            self.depth -= 1
        return Region(block)

    def chain(self, value: SSAValue) -> SSAValue:
        """A few random ops ending in a value of `value`'s type (within a region)."""
        start = len(self.pool)
        self._fill(int(self.rng.integers(1, 4)))
        same = [v for v in self.pool[start:] if v.type == value.type]
        return same[-1] if same else value
