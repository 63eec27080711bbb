"""Dim algebras: one shape function, run statically or emitted as shape IR.

A shape function (`HasShapeFunction.shape_function`) computes result dims with the
operations of a `DimAlgebra`. `StaticDims` runs it on `int | None` (None is `?`) for type
inference and verification; `SymbolicDims` on `int | Expr | None`, expressions over the
named symbols of `#nimble.dims` (type inference: a reshape of `batch x seq x 768` to
`batch x seq x 12 x 64` keeps the names); `ReifyDims` runs it on `int | SSAValue` and
emits `arith` and `shape` ops that compute the dims at run time, turning conflicts it
cannot decide statically into `dynshape.assert`.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from xdsl.builder import Builder
from xdsl.dialects.builtin import IndexType, IntegerAttr, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.rewriter import InsertPoint

from nimble.dialects import arith, dim_expr, dynshape
from nimble.dialects.dim_expr import Expr
from nimble.dialects.index_semantics import ceil_div, floor_div
from nimble.errors import CompileError


class ShapeError(CompileError):
    """A static shape conflict found while running a shape function."""


class DimAlgebra(abc.ABC):
    """The operations a shape function may use on dims."""

    # -- reading operands ---------------------------------------------------------
    @abc.abstractmethod
    def dims(self, value: SSAValue) -> list[Any]:
        """The dims of a tensor value."""

    @abc.abstractmethod
    def index(self, value: SSAValue) -> Any:
        """The value of an `index` operand."""

    @abc.abstractmethod
    def shape(self, value: SSAValue) -> list[Any]:
        """The dims held by a `!dynshape.shape<N>` operand."""

    # -- arithmetic ---------------------------------------------------------------
    @abc.abstractmethod
    def binary(self, kind: str, a: Any, b: Any) -> Any:
        """`kind` is one of the keys of `INT_BINARY`."""

    def add(self, a: Any, b: Any) -> Any:
        return self.binary("add", a, b)

    def sub(self, a: Any, b: Any) -> Any:
        return self.binary("sub", a, b)

    def mul(self, a: Any, b: Any) -> Any:
        return self.binary("mul", a, b)

    def floordiv(self, a: Any, b: Any) -> Any:
        return self.binary("floordiv", a, b)

    def ceildiv(self, a: Any, b: Any) -> Any:
        return self.binary("ceildiv", a, b)

    def max(self, a: Any, b: Any) -> Any:
        return self.binary("max", a, b)

    def min(self, a: Any, b: Any) -> Any:
        return self.binary("min", a, b)

    def product(self, values: Sequence[Any]) -> Any:
        result: Any = 1
        for v in values:
            result = self.mul(result, v)
        return result

    # -- checks ---------------------------------------------------------------------
    @abc.abstractmethod
    def equal(self, a: Any, b: Any, message: str) -> Any:
        """Require `a == b`; return the better known of the two."""

    @abc.abstractmethod
    def broadcast(self, a: Any, b: Any, message: str) -> Any:
        """The numpy broadcast of two dims (equal, or one of them 1)."""

    @abc.abstractmethod
    def normalize_index(self, v: Any, n: Any) -> Any:
        """A Python-style index (negative counts from the end) clamped to [0, n]."""


INT_BINARY: dict[str, Callable[[int, int], int]] = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "floordiv": floor_div,
    "ceildiv": ceil_div,
    "max": max,
    "min": min,
}


def _locate(op: Operation, anchor: Operation) -> None:
    op.location = anchor.location


def _clamp_index(v: int, n: int) -> int:
    if v < 0:
        v += n
    return min(max(v, 0), n)


class StaticDims(DimAlgebra):
    """Dims as `int | None`: what is known before running."""

    def dims(self, value: SSAValue) -> list[int | None]:
        if not isinstance(value.type, TensorType):
            raise ShapeError(f"expected a tensor, got {value.type}")
        return static_dims(value.type)

    def index(self, value: SSAValue) -> int | None:
        return constant_index(value)

    def size(self, value: SSAValue) -> int | None:
        """A constant usable as a dim: negative constants are not sizes (left unknown,
        the run-time checks report them)."""
        known = constant_index(value)
        return known if known is not None and known >= 0 else None

    def shape(self, value: SSAValue) -> list[int | None]:
        if not isinstance(value.type, dynshape.ShapeType):
            raise ShapeError(f"expected a !dynshape.shape, got {value.type}")
        owner = value.owner
        if isinstance(owner, dynshape.FromDimsOp):
            return [self.size(d) for d in owner.dims]
        if isinstance(owner, dynshape.OfOp):
            return self.dims(owner.source)
        return [None] * value.type.rank.data

    def binary(self, kind: str, a: int | None, b: int | None) -> int | None:
        if a is None or b is None:
            return None
        if kind in ("floordiv", "ceildiv") and b == 0:
            raise ShapeError("division by zero in a shape computation")
        return INT_BINARY[kind](a, b)

    def equal(self, a: int | None, b: int | None, message: str) -> int | None:
        if a is not None and b is not None and a != b:
            raise ShapeError(f"{message} ({a} vs {b})")
        return a if a is not None else b

    def broadcast(self, a: int | None, b: int | None, message: str) -> int | None:
        if a == 1:
            return b
        if b == 1:
            return a
        if a is not None and b is not None:
            if a != b:
                raise ShapeError(f"{message} ({a} vs {b})")
            return a
        # One unknown: it must be 1 or equal to the other; the result is the known
        # one unless that is also unknown.
        return a if b is None and a is not None else b if a is None and b is not None else None

    def normalize_index(self, v: int | None, n: int | None) -> int | None:
        if v is None or n is None:
            # A non-negative constant within a dim we do not know stays unknown too.
            return None
        return _clamp_index(v, n)


class ConcreteDims(StaticDims):
    """Dims of actual run-time values: the interpreter runs each op's shape function on
    them, so that a reference never accepts what the shape function rejects."""

    def __init__(self, values: dict[SSAValue, Any]):
        self.values = values

    def dims(self, value: SSAValue) -> list[int | None]:
        return [int(d) for d in np.shape(self.values[value])]

    def index(self, value: SSAValue) -> int | None:
        return int(self.values[value])

    def size(self, value: SSAValue) -> int | None:
        return int(self.values[value])

    def shape(self, value: SSAValue) -> list[int | None]:
        return [int(d) for d in self.values[value]]


_NO_DIM_REACHES = 1 << 62
"""No tensor dim is this large (no memory holds it): a bound from here on is the end."""


class SymbolicDims(StaticDims):
    """Dims as `int | Expr | None`: numbers where known, expressions over the symbols
    that `#nimble.dims` names, None for an anonymous `?`. Only what holds for every
    value of the symbols is concluded; a symbolic dim may be 1 at run time."""

    _INDEX_OPS: dict[type[Operation], str] = {
        arith.AddiOp: "add", arith.SubiOp: "sub", arith.MuliOp: "mul", arith.FloorDivSIOp: "floordiv",
        arith.CeilDivSIOp: "ceildiv", arith.MaxSIOp: "max", arith.MinSIOp: "min",
    }
    _TRUNCATING_OPS: dict[type[Operation], str] = {arith.DivSIOp: "floordiv", arith.RemSIOp: "mod"}

    def dims(self, value: SSAValue) -> list[int | Expr | None]:
        if not isinstance(value.type, TensorType):
            raise ShapeError(f"expected a tensor, got {value.type}")
        return symbolic_dims(value.type)

    def index(self, value: SSAValue) -> int | Expr | None:
        """An index value's dim: a constant, a `dynshape.dim` of a tensor, or index
        arithmetic on those."""
        known = constant_index(value)
        if known is not None:
            return known
        owner = value.owner
        if isinstance(owner, dynshape.DimOp) and isinstance(owner.source.type, TensorType):
            dims = self.dims(owner.source)
            axis = owner.index.value.data
            return dims[axis] if 0 <= axis < len(dims) else None
        kind = self._INDEX_OPS.get(type(owner))
        if kind is not None:
            return self.binary(kind, self.index(owner.operands[0]), self.index(owner.operands[1]))
        kind = self._TRUNCATING_OPS.get(type(owner))
        if kind is not None:  # truncating = flooring on dims (both operands >= 0)
            a, b = self.index(owner.operands[0]), self.index(owner.operands[1])
            if _nonnegative(a) and _nonnegative(b):
                return self.binary(kind, a, b)
        return None

    def size(self, value: SSAValue) -> int | Expr | None:
        known = self.index(value)
        return None if isinstance(known, int) and known < 0 else known

    def binary(self, kind: str, a: int | Expr | None, b: int | Expr | None) -> int | Expr | None:
        if a is None or b is None:
            return None
        if isinstance(a, int) and isinstance(b, int):
            return super().binary(kind, a, b)
        try:
            result = dim_expr.BINARY[kind](a, b)
        except ZeroDivisionError:
            raise ShapeError("division by zero in a shape computation") from None
        known = result.as_int()
        return result if known is None else known

    def equal(self, a: int | Expr | None, b: int | Expr | None, message: str) -> int | Expr | None:
        if isinstance(a, int) and isinstance(b, int):
            return super().equal(a, b, message)
        if a is None or isinstance(b, int):
            return b
        return a

    def broadcast(self, a: int | Expr | None, b: int | Expr | None, message: str) -> int | Expr | None:
        if isinstance(a, Expr) or isinstance(b, Expr):
            if a == 1 or a == b:
                return b
            if b == 1:
                return a
            # `x` against `min(x, n)` (n >= 1: a slice of the first n, the positions of
            # a sequence): they are 1 together, else they must be equal: `x`.
            if _clamps(b, a):
                return a
            if _clamps(a, b):
                return b
            # A number other than 1 against a name: the name must be 1 or that number.
            return a if isinstance(a, int) else b if isinstance(b, int) else None
        return super().broadcast(a, b, message)

    def normalize_index(self, v: int | Expr | None, n: int | Expr | None) -> int | Expr | None:
        if isinstance(n, Expr) and isinstance(v, int):
            if v >= _NO_DIM_REACHES:  # "to the end" (slice bounds past any real dim)
                return n
            return dim_expr.minimum(v, n) if v >= 0 else dim_expr.maximum(n + v, 0)
        if isinstance(v, Expr):  # a bound >= 0 (a dim): clamped to the dim
            if v == n:
                return v
            return dim_expr.minimum(v, n) if dim_expr.nonnegative(v) and n is not None else None
        return super().normalize_index(v, n)


def _nonnegative(d: int | Expr | None) -> bool:
    return d is not None and (d >= 0 if isinstance(d, int) else dim_expr.nonnegative(d))


def _clamps(d: int | Expr | None, x: int | Expr | None) -> bool:
    """Whether `d` is `min(x, n)` with `n >= 1` (so `d == 1` exactly when `x == 1`)."""
    if not isinstance(d, Expr) or d.constant != 0 or len(d.terms) != 1:
        return False
    (monomial, coefficient), = d.terms
    if coefficient != 1 or len(monomial) != 1 or monomial[0].kind != "min":
        return False
    args = monomial[0].args
    return x is not None and any(a == Expr.of(x) and dim_expr.nonnegative(b - 1) for a, b in (args, args[::-1]))


def constant_index(value: SSAValue) -> int | None:
    """The value of an index SSA value if it is an `arith.constant`, else None."""
    owner = value.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    return None


class ReifyDims(DimAlgebra):
    """Dims as `int | SSAValue`, emitting the IR that computes them before `anchor`."""

    _ARITH: dict[str, type[Operation]] = {
        "add": arith.AddiOp,
        "sub": arith.SubiOp,
        "mul": arith.MuliOp,
        "floordiv": arith.FloorDivSIOp,
        "ceildiv": arith.CeilDivSIOp,
        "max": arith.MaxSIOp,
        "min": arith.MinSIOp,
    }

    def __init__(self, anchor: Operation, known: dict[SSAValue, list[int | SSAValue]] | None = None):
        self.builder = Builder(InsertPoint.before(anchor))
        # Shape IR reports errors (a failed dynshape.assert) where the op it serves is.
        self.builder.operation_insertion_handler.append(lambda op: _locate(op, anchor))
        self.known = {} if known is None else known
        """Dims already reified for some values: used instead of `dynshape.dim` of them, so
        that shape IR chains back to the function's inputs."""
        self._dim_cache: dict[tuple[SSAValue, int], SSAValue] = {}
        self._const_cache: dict[int, SSAValue] = {}

    # -- emission helpers -----------------------------------------------------------
    def value(self, d: int | SSAValue) -> SSAValue:
        """Materialise a dim as an index SSA value."""
        if isinstance(d, SSAValue):
            return d
        if d not in self._const_cache:
            op = self.builder.insert(arith.ConstantOp(IntegerAttr(d, IndexType())))
            self._const_cache[d] = op.result
        return self._const_cache[d]

    def _emit(self, op: Operation) -> SSAValue:
        return self.builder.insert(op).results[0]

    # -- DimAlgebra -----------------------------------------------------------------
    def dims(self, value: SSAValue) -> list[int | SSAValue]:
        if value in self.known:
            return list(self.known[value])
        result: list[int | SSAValue] = []
        for i, d in enumerate(static_dims(value.type)):
            if d is not None:
                result.append(d)
                continue
            key = (value, i)
            if key not in self._dim_cache:
                self._dim_cache[key] = self._emit(dynshape.DimOp(value, i))
            result.append(self._dim_cache[key])
        return result

    def index(self, value: SSAValue) -> int | SSAValue:
        known = constant_index(value)
        return value if known is None else known

    def shape(self, value: SSAValue) -> list[int | SSAValue]:
        assert isinstance(value.type, dynshape.ShapeType)
        owner = value.owner
        if isinstance(owner, dynshape.FromDimsOp):
            return [self.index(d) for d in owner.dims]
        if isinstance(owner, dynshape.OfOp):
            return self.dims(owner.source)
        return [self._emit(dynshape.GetOp(value, i)) for i in range(value.type.rank.data)]

    def binary(self, kind: str, a: int | SSAValue, b: int | SSAValue) -> int | SSAValue:
        if isinstance(a, int) and isinstance(b, int):
            return INT_BINARY[kind](a, b)
        if kind == "mul" and (a == 1 or b == 1):
            return b if a == 1 else a
        if kind in ("add", "sub") and b == 0:
            return a
        if kind in ("max", "min") and a is b:
            return a
        if kind == "sub" and a is b:
            return 0
        return self._emit(self._ARITH[kind](self.value(a), self.value(b)))

    def compare(self, predicate: str, a: int | SSAValue, b: int | SSAValue) -> SSAValue:
        """i1: `a <predicate> b` (an `arith.cmpi` predicate: "eq", "sge", ...)."""
        return self._emit(arith.CmpiOp(self.value(a), self.value(b), predicate))

    def all_of(self, conditions: Sequence[SSAValue]) -> SSAValue | bool:
        """i1: every one of `conditions` holds (True when there are none)."""
        if not conditions:
            return True
        cond = conditions[0]
        for c in conditions[1:]:
            cond = self._emit(arith.AndIOp(cond, c))
        return cond

    def equal(self, a: int | SSAValue, b: int | SSAValue, message: str) -> int | SSAValue:
        if isinstance(a, int) and isinstance(b, int):
            if a != b:
                raise ShapeError(f"{message} ({a} vs {b})")
            return a
        if a is b:
            return a
        self.builder.insert(dynshape.AssertOp(self.compare("eq", a, b), message, [self.value(a), self.value(b)]))
        return a if isinstance(a, int) else b

    def broadcast(self, a: int | SSAValue, b: int | SSAValue, message: str) -> int | SSAValue:
        if a == 1 or a is b:
            return b
        if b == 1:
            return a
        if isinstance(a, int) and isinstance(b, int):
            if a != b:
                raise ShapeError(f"{message} ({a} vs {b})")
            return a
        a_is_1 = self.compare("eq", a, 1)
        b_is_1 = self.compare("eq", b, 1)
        same = self.compare("eq", a, b)
        ok = self._emit(arith.OrIOp(self._emit(arith.OrIOp(a_is_1, b_is_1)), same))
        self.builder.insert(dynshape.AssertOp(ok, message, [self.value(a), self.value(b)]))
        return self._emit(arith.SelectOp(a_is_1, self.value(b), self.value(a)))

    def normalize_index(self, v: int | SSAValue, n: int | SSAValue) -> int | SSAValue:
        if isinstance(v, int) and isinstance(n, int):
            return _clamp_index(v, n)
        if v == 0 or v is n:  # dims are never negative: 0 and n are in range
            return v
        negative = self.compare("slt", v, 0)
        shifted = self._emit(
            arith.SelectOp(negative, self.value(self.add(v, n)), self.value(v))
        )
        return self.min(self.max(shifted, 0), n)


# Last: the graph dialect's package imports this module's classes (`graph.base`), so its
# types module is imported once they exist, whichever of the two is imported first.
from nimble.dialects.graph.types import dims as static_dims  # noqa: E402
from nimble.dialects.graph.types import symbolic_dims  # noqa: E402
