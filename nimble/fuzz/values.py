"""What the fuzzer's generator and its samplers share: the symbols and sizes of dims, and
what a value is (its dims, a tensor, a float or bool one, a static dim); `Reject` a choice."""

from __future__ import annotations

from typing import Any

from xdsl.dialects.builtin import (
    AnyFloat,
    TensorType,
    i1,
)
from xdsl.ir import Attribute, SSAValue

from nimble.dialects.shape_functions import symbolic_dims

SYMBOLS = ("n", "m")
STATIC_SIZES = (1, 2, 3, 4, 5, 7, 8, 16)


class Reject(Exception):
    """This choice of op, operands or properties is not legal here: draw another."""


def value_dims(value: SSAValue) -> list[Any]:
    return symbolic_dims(value.type)


def is_tensor(value: SSAValue, element: Attribute | None = None) -> bool:
    t = value.type
    return isinstance(t, TensorType) and (element is None or t.element_type == element)


def is_float(value: SSAValue) -> bool:
    return isinstance(value.type, TensorType) and isinstance(value.type.element_type, AnyFloat)


def is_bool(value: SSAValue) -> bool:
    return is_tensor(value, i1)


def is_static(d: Any) -> bool:
    return isinstance(d, int)
