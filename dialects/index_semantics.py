"""What Nimble's integer (index) ops compute, defined once.

Division truncates toward zero (`arith.divsi`, C's `/`, LLVM's `sdiv`) and the remainder
takes the dividend's sign (`arith.remsi`, C's `%`, LLVM's `srem`); `floordivsi` and
`ceildivsi` round toward -inf and +inf; comparisons are signed. Python's own `//` and
`%` floor, and float division loses exactness past 2^53: evaluators use these tables,
never those operators. The reference interpreter, the VM, the OpenCL launch plans'
evaluator (`runtime/opencl_plan.py`) and the spatial model evaluate index code with `INDEX_BINARY` and
`INDEX_COMPARISONS`; `tests/test_index_semantics.py` checks them, and the LLVM and OpenCL
code Nimble generates, against these tables on random expressions with negative
operands.
"""

from __future__ import annotations

import operator
from collections.abc import Callable

from xdsl.ir import Operation

from nimble.dialects import arith


def trunc_div(a: int, b: int) -> int:
    """a / b rounded toward zero."""
    if b == 0:
        raise ZeroDivisionError("index division by zero")
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def trunc_rem(a: int, b: int) -> int:
    """The remainder of `trunc_div`: the sign of `a`."""
    return a - b * trunc_div(a, b)


def floor_div(a: int, b: int) -> int:
    """a / b rounded toward -inf."""
    if b == 0:
        raise ZeroDivisionError("index division by zero")
    return a // b


def ceil_div(a: int, b: int) -> int:
    """a / b rounded toward +inf."""
    return -floor_div(-a, b)


INDEX_BINARY: dict[type[Operation], Callable[[int, int], int]] = {
    arith.AddiOp: operator.add, arith.SubiOp: operator.sub, arith.MuliOp: operator.mul,
    arith.DivSIOp: trunc_div, arith.RemSIOp: trunc_rem,
    arith.FloorDivSIOp: floor_div, arith.CeilDivSIOp: ceil_div,
    arith.MaxSIOp: max, arith.MinSIOp: min,
    arith.AndIOp: operator.and_, arith.OrIOp: operator.or_, arith.XOrIOp: operator.xor,
}
"""Each binary integer op's meaning on Python ints (exact: no wrap-around)."""

INDEX_COMPARISONS: dict[int, Callable[[int, int], bool]] = {
    # arith.cmpi's signed and equality predicates (eq, ne, slt, sle, sgt, sge)
    0: operator.eq, 1: operator.ne, 2: operator.lt, 3: operator.le, 4: operator.gt, 5: operator.ge,
}
