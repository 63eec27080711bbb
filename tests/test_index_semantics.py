"""One meaning for integer (index) arithmetic (`dialects/index_semantics.py`): every
evaluator of index code agrees with its tables on random expressions, negative operands
and truncating / flooring / ceiling divisions included: the reference interpreter, the
VM, the LLVM code of a kernel, and (sharing the tables) the OpenCL grid evaluator and the
spatial model."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import nimble
from nimble.compile import compile_kernels
from nimble.dialects.index_semantics import INDEX_BINARY, ceil_div, floor_div, trunc_div, trunc_rem

OPS = {cls.name: fn for cls, fn in INDEX_BINARY.items()}
INPUTS = ("a", "b", "c")
LIMIT = 1 << 62  # (intermediate values stay inside i64: LLVM's wrap-around is not the question)


def expressions():
    leaves = st.sampled_from(INPUTS) | st.integers(-9, 9)
    return st.recursive(leaves, lambda inner: st.tuples(st.sampled_from(sorted(OPS)), inner, inner), max_leaves=6)


def evaluate(e, env: dict[str, int]) -> int:
    """The tables' value of expression `e` (ZeroDivisionError, OverflowError past i64)."""
    if isinstance(e, str):
        return env[e]
    if isinstance(e, int):
        return e
    name, lhs, rhs = e
    value = OPS[name](evaluate(lhs, env), evaluate(rhs, env))
    if abs(value) >= LIMIT:
        raise OverflowError
    return value


def mlir(e, header: str, tail: str) -> str:
    """`e` as MLIR index code in a function with `header`, its value in `%r` before `tail`."""
    lines: list[str] = []

    def emit(node) -> str:
        if isinstance(node, str):
            return f"%{node}"
        if isinstance(node, int):
            lines.append(f"  %v{len(lines)} = arith.constant {node} : index")
            return f"%v{len(lines) - 1}"
        name, lhs, rhs = node
        x, y = emit(lhs), emit(rhs)
        lines.append(f"  %v{len(lines)} = {name} {x}, {y} : index")
        return f"%v{len(lines) - 1}"

    result = emit(e)
    return header + "\n".join(lines) + f"\n  %r = arith.addi {result}, %zero : index\n" + tail


def program(e) -> str:
    return mlir(e, "func.func @main(%a: index, %b: index, %c: index) -> index {\n"
                   "  %zero = arith.constant 0 : index\n", "  func.return %r : index\n}\n")


def kernel(e) -> str:
    return mlir(e, "loop.kernel @k(%a: index, %b: index, %c: index, %out: memref<1xi64>) "
                   "{\n  %zero = arith.constant 0 : index\n",
                "  %i = arith.index_cast %r : index to i64\n  memref.store %i, %out[%zero] : memref<1xi64>\n"
                "  loop.return\n}\n")


operands = st.integers(-(1 << 20), 1 << 20)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(expressions(), operands, operands, operands)
def test_every_evaluator_agrees_with_the_tables(e, a, b, c):
    env = {"a": a, "b": b, "c": c}
    try:
        want = evaluate(e, env)
    except (ZeroDivisionError, OverflowError):
        assume(False)
    text = program(e)
    assert nimble.interpret(nimble.parse(text), a, b, c) == [want]
    assert nimble.compile(text).run(a, b, c) == [want]
    out = np.zeros(1, np.int64)
    compile_kernels(kernel(e))["k"](a, b, c, out)
    assert int(out[0]) == want


@pytest.mark.parametrize("a,b,trunc,floor,ceil,rem", [
    (7, 2, 3, 3, 4, 1), (-7, 2, -3, -4, -3, -1), (7, -2, -3, -4, -3, 1), (-7, -2, 3, 3, 4, -1),
    (6, 3, 2, 2, 2, 0), (-6, 3, -2, -2, -2, 0), (0, -5, 0, 0, 0, 0),
    ((1 << 61) + 1, 3, 768614336404564651, 768614336404564651, 768614336404564651, 0),
    ((1 << 61) + 2, 3, 768614336404564651, 768614336404564651, 768614336404564652, 1),
])
def test_the_divisions_round_as_named(a, b, trunc, floor, ceil, rem):
    """Including a quotient past 2^53, where float division (the spatial model's, before)
    loses the last digits."""
    assert (trunc_div(a, b), floor_div(a, b), ceil_div(a, b), trunc_rem(a, b)) == (trunc, floor, ceil, rem)


def test_the_other_evaluators_read_the_same_tables():
    from nimble.dialects import vm
    from nimble.runtime.opencl_plan import BINARY
    from nimble.lowering.spatial import model as spatial_model
    from nimble.runtime.vm_steps import INDEX_STEPS

    assert spatial_model._INDEX_ARITH is INDEX_BINARY
    assert all(BINARY[op.name] is fn for op, fn in INDEX_BINARY.items())
    assert all(INDEX_STEPS[name] is INDEX_BINARY[op] for name, op in vm.BINARY_OPS.items())
