"""The reference interpreter: what every Nimble program means.

It evaluates a module's functions on numpy arrays and Python scalars, op by op, using
each op's own reference semantics (`HasReference`) and a table for the xdsl ops Nimble
uses as they are (`arith` on index/i1 values, `func.call`). Every lowering and backend
is tested against it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    TensorType,
    TupleType,
)
from xdsl.ir import Attribute, Operation, Region, SSAValue

from nimble.dialects import arith
from nimble.dialects.dim_expr import Expr
from nimble.dialects.dynshape import ShapeType
from nimble.dialects.graph.adt import AdtType, AdtValue
from nimble.dialects.graph.control import ConditionOp, YieldOp
from nimble.dialects.graph.types import dims, format_dims, numpy_dtype, symbolic_dims
from nimble.dialects.index_semantics import INDEX_BINARY, INDEX_COMPARISONS
from nimble.dialects.interfaces import EvalContext, HasReference
from nimble.errors import RunError
from nimble.parser import location_of


class InterpreterError(RunError):
    """A program could not be evaluated: bad inputs, a failed run-time check, or an op
    without reference semantics. The message names the op and its source location."""


def _constant(op: arith.ConstantOp, args: Sequence[Any]) -> list[Any]:
    value = op.value
    if isinstance(value, IntegerAttr):
        if value.type == IntegerType(1):
            return [bool(value.value.data)]
        return [value.value.data]
    if isinstance(value, FloatAttr):
        return [value.value.data]
    raise InterpreterError(f"unsupported arith.constant value {value}")


def _cmpi(op: arith.CmpiOp, args: Sequence[Any]) -> list[Any]:
    predicate = op.predicate.value.data
    if predicate not in INDEX_COMPARISONS:
        raise InterpreterError("only signed and equality index comparisons are supported")
    return [INDEX_COMPARISONS[predicate](*args)]


def _binary(fn: Callable[[Any, Any], Any]) -> Callable[[Operation, Sequence[Any]], list[Any]]:
    return lambda op, args: [fn(args[0], args[1])]


# The xdsl ops Nimble uses on scalars, by class (a table, not a chain of ifs).
XDSL_SEMANTICS: dict[type[Operation], Callable[[Any, Sequence[Any]], list[Any]]] = {
    arith.ConstantOp: _constant,
    **{cls: _binary(fn) for cls, fn in INDEX_BINARY.items()},
    arith.CmpiOp: _cmpi,
    arith.SelectOp: lambda op, args: [args[1] if args[0] else args[2]],
    arith.IndexCastOp: lambda op, args: [int(args[0])],
}


def describe(value: Any) -> str:
    """A short description of a run-time value for error messages."""
    if isinstance(value, np.ndarray):
        return f"an array of shape {format_dims(value.shape)} and dtype {value.dtype}"
    if isinstance(value, AdtValue):
        return f"an ADT value @{value.constructor}"
    return f"{type(value).__name__} {value!r}"


def tensor_mismatch(value: Any, type: TensorType) -> str | None:
    """None if a tensor (an ndarray, or a device tensor: anything with `shape` and
    `dtype`) has the dtype and dims of `type`, else why not."""
    expected = dims(type)
    got = f"a tensor of shape {format_dims(value.shape)} and dtype {value.dtype}"
    if value.dtype != numpy_dtype(type.element_type):
        return f"expected element type {type.element_type}, got {got}"
    if len(value.shape) != len(expected) or any(d is not None and d != n for d, n in zip(expected, value.shape)):
        return f"expected {type}, got {got}"
    return None


def conforms(value: Any, type: Attribute, device_tensors: tuple[Any, ...] = ()) -> str | None:
    """None if `value` is a valid run-time value of `type`, else why not (a tensor may
    also be an instance of one of `device_tensors`, tensors in device memory with a
    `shape` and a `dtype`)."""
    if isinstance(type, TensorType):
        if not isinstance(value, (np.ndarray, *device_tensors)):
            return f"expected {type}, got {describe(value)}"
        return tensor_mismatch(value, type)
    if isinstance(type, IndexType):
        return None if isinstance(value, int | np.integer) and not isinstance(value, bool) else f"expected an index, got {describe(value)}"
    if type == IntegerType(1):
        return None if isinstance(value, bool | np.bool_) else f"expected i1, got {describe(value)}"
    if isinstance(type, ShapeType):
        ok = isinstance(value, tuple) and len(value) == type.rank.data
        return None if ok else f"expected {type}, got {describe(value)}"
    if isinstance(type, TupleType):
        types = type.types.data
        if not isinstance(value, tuple) or len(value) != len(types):
            return f"expected {type}, got {describe(value)}"
        for v, t in zip(value, types):
            if (why := conforms(v, t)) is not None:
                return why
        return None
    if isinstance(type, AdtType):
        return None if isinstance(value, AdtValue) else f"expected {type}, got {describe(value)}"
    return None


BOUND_KEPT = 64


class SignatureCheck:
    """Checks arguments against parameter types, naming the parameter on a mismatch.
    Built once per signature: the common case (ndarrays of the right dtype and dims)
    compares precomputed dtypes and shapes (a whole tuple when every dim is static, the
    static dims one by one otherwise); only a mismatch formats a message."""

    def __init__(self, callee: str, types: Sequence[Attribute], names: Sequence[str],
                 device_tensors: tuple[type, ...] = ()):
        self.callee, self.types, self.names = callee, list(types), list(names)
        self.device_tensors = device_tensors  # classes of tensors in device memory (`conforms`)
        self.arrays: list[tuple[int, np.dtype, int, tuple[int, ...] | None, tuple[tuple[int, int], ...]]] = []
        """Per tensor parameter: position, dtype, rank, the shape when static, else its static (axis, dim)s."""
        for i, t in enumerate(self.types):
            if isinstance(t, TensorType):
                expected = tuple(dims(t))
                static = tuple((axis, n) for axis, n in enumerate(expected) if n is not None)
                whole = expected if len(static) == len(expected) else None
                self.arrays.append((i, numpy_dtype(t.element_type), len(expected), whole, static))
        self.others = [i for i, t in enumerate(self.types) if not isinstance(t, TensorType)]
        self.named = [(i, axis, d) for i, t in enumerate(self.types) if isinstance(t, TensorType)
                      for axis, d in enumerate(symbolic_dims(t)) if isinstance(d, Expr)]
        """Per named dim of a parameter (`#nimble.dims`): position, axis, expression."""
        self.named_inputs = sorted({i for i, _, _ in self.named})
        self.bound: set[tuple[tuple[int, ...], ...]] = set()
        """Shapes of the parameters with named dims that held: a call with the same ones
        needs no evaluation (at most `BOUND_KEPT` kept)."""

    def __call__(self, args: Sequence[Any]) -> None:
        if len(args) != len(self.types):
            raise InterpreterError(f"@{self.callee} takes {len(self.types)} arguments, got {len(args)}")
        for i, dtype, rank, whole, static in self.arrays:
            a = args[i]
            if a.__class__ is not np.ndarray or a.dtype != dtype:
                self._check(i, a)
                continue
            shape = a.shape
            if whole is not None:
                if shape != whole:
                    self._check(i, a)
            elif len(shape) != rank:
                self._check(i, a)
            else:
                for axis, n in static:
                    if shape[axis] != n:
                        self._check(i, a)
                        break
        for i in self.others:
            self._check(i, args[i])
        if self.named:
            key = tuple([np.shape(args[i]) if args[i].__class__ is not np.ndarray else args[i].shape
                         for i in self.named_inputs])
            if key not in self.bound:  # (the common case: shapes that held before)
                self._bind(args, key)

    def _bind(self, args: Sequence[Any], key: tuple[tuple[int, ...], ...]) -> None:
        """Each symbol takes its value from the first dim that is that symbol alone; every
        named dim must then equal its expression (those of symbols no dim binds alone
        are not checked). `key`: the shapes of the parameters with named dims."""
        env: dict[str, int] = {}
        source: dict[str, tuple[int, int]] = {}
        for i, axis, e in self.named:
            name = e.symbol_name()
            if name is not None and name not in env:
                env[name], source[name] = int(np.shape(args[i])[axis]), (i, axis)
        for i, axis, e in self.named:
            if not e.symbols() <= env.keys():
                continue
            actual, expected = int(np.shape(args[i])[axis]), e.evaluate(env)
            if actual != expected:
                bound = ", ".join(f"'{n}' is {env[n]} (dim {source[n][1]} of {self._label(source[n][0])})"
                                  for n in sorted(e.symbols()))
                raise InterpreterError(f"@{self.callee} {self._label(i)}: dim {axis} is {actual}, but it is "
                                       f"'{e}' = {expected}, where {bound}")
        if len(self.bound) >= BOUND_KEPT:
            self.bound.clear()
        self.bound.add(key)

    def _label(self, i: int) -> str:
        return f"argument #{i}" + (f" (%{self.names[i]})" if self.names[i] else "")

    def _check(self, i: int, arg: Any) -> None:
        if (why := conforms(arg, self.types[i], self.device_tensors)) is not None:
            label = f" (%{self.names[i]})" if self.names[i] else ""
            raise InterpreterError(f"@{self.callee} argument #{i}{label}: {why}")


def check_values(callee: str, args: Sequence[Any], types: Sequence[Attribute], names: Sequence[str]) -> None:
    """InterpreterError naming the parameter unless `args` fit `types` (count, dtype, dims)."""
    SignatureCheck(callee, types, names)(args)


def where(op: Operation) -> str:
    """`file:line:col: ` of an op for messages, or nothing when it has no location."""
    loc = location_of(op)
    return f"{loc[0]}:{loc[1]}:{loc[2]}: " if loc else ""


class Interpreter(EvalContext):
    """Evaluates functions of one module. Values are numpy arrays (tensors), Python ints
    (index), bools (i1), tuples (tuples and shapes) and `AdtValue`s."""

    def __init__(self, module: ModuleOp, base_dir: str | os.PathLike[str] = ".", check_types: bool = True):
        self.module = module
        self.base_dir = os.fspath(base_dir)
        self.check_types = check_types
        self.functions = {f.sym_name.data: f for f in module.ops if isinstance(f, func.FuncOp)}
        self._env: dict[SSAValue, Any] = {}
        self._npz: dict[str, Any] = {}

    # -- EvalContext --------------------------------------------------------------------
    def check_arguments(self, callee: str, args: Sequence[Any]) -> func.FuncOp:
        """The function `callee`, after checking `args` against its signature."""
        function = self.functions.get(callee)
        if function is None or function.is_declaration:
            raise InterpreterError(f"no function @{callee} with a body in the module")
        params = function.body.block.args
        check_values(callee, args, [p.type for p in params], [p.name_hint or "" for p in params])
        return function

    def call(self, callee: str, args: Sequence[Any]) -> list[Any]:
        function = self.check_arguments(callee, args)
        saved, self._env = self._env, {}
        try:
            return self.run_region(function.body, args)
        finally:
            self._env = saved

    def run_region(self, region: Region, args: Sequence[Any]) -> list[Any]:
        block = region.block
        for arg, value in zip(block.args, args, strict=True):
            self._env[arg] = value
        for op in block.ops:
            if isinstance(op, YieldOp | ConditionOp | func.ReturnOp):
                return [self._env[v] for v in op.operands]
            self._run_op(op)
        return []

    def load_external(self, file: str, key: str) -> Any:
        path = os.path.join(self.base_dir, file)
        if path not in self._npz:
            try:
                self._npz[path] = np.load(path)
            except OSError as e:
                raise InterpreterError(f"cannot read weights file '{path}': {e}") from None
        archive = self._npz[path]
        if key not in archive.files:
            raise InterpreterError(f"weights file '{path}' has no entry '{key}'")
        return archive[key]

    # -- evaluation -----------------------------------------------------------------------
    def _run_op(self, op: Operation) -> None:
        args = [self._env[v] for v in op.operands]
        try:
            with np.errstate(all="ignore"):
                results = list(self._evaluate(op, args))
        except InterpreterError:
            raise
        except RecursionError:
            raise InterpreterError(f"{where(op)}'{op.name}' op: calls nested too deeply for the reference "
                                   f"interpreter (it recurses in Python; the compiled module does not)") from None
        except (ArithmeticError, ValueError, IndexError, TypeError, RuntimeError) as e:
            raise InterpreterError(f"{where(op)}'{op.name}' op failed at run time: {e}") from None
        if len(results) != len(op.results):
            raise InterpreterError(f"{where(op)}'{op.name}' op produced {len(results)} values, expected {len(op.results)}")
        for result, value in zip(op.results, results):
            if self.check_types and (why := conforms(value, result.type)) is not None:
                raise InterpreterError(f"{where(op)}'{op.name}' op result: {why}")
            self._env[result] = value

    def _evaluate(self, op: Operation, args: list[Any]) -> Sequence[Any]:
        if isinstance(op, HasReference):
            return op.evaluate(self, args)
        if isinstance(op, func.CallOp):
            return self.call(op.callee.root_reference.data, args)
        semantics = XDSL_SEMANTICS.get(type(op))
        if semantics is None:
            raise InterpreterError(f"{where(op)}'{op.name}' has no reference semantics")
        return semantics(op, args)


def run(module: ModuleOp, *args: Any, entry: str = "main", base_dir: str = ".") -> list[Any]:
    """Evaluate function `entry` of `module` on `args`; returns the list of results."""
    return Interpreter(module, base_dir).call(entry, list(args))
