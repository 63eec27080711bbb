"""Literal values of the text format (`4`, `0.5`, `[0, 2, 1]`, `true`, `"w.npz"`, `f32`)
turned into the attribute an op's property declares, by trying the usual encodings
against the property's own IRDL constraint (no per-op code)."""

from __future__ import annotations

from collections.abc import Iterator

from xdsl.dialects.builtin import (
    BoolAttr,
    DenseArrayBase,
    FloatAttr,
    IntegerAttr,
    StringAttr,
    f32,
    f64,
    i64,
)
from xdsl.ir import Attribute, Operation
from xdsl.irdl import VerificationContext
from xdsl.utils.exceptions import VerifyException

Literal = int | float | bool | str | list


def candidates(value: Literal) -> Iterator[Attribute]:
    """Encodings of a literal, most natural first."""
    if isinstance(value, bool):
        yield BoolAttr.from_bool(value)
    elif isinstance(value, int):
        yield IntegerAttr(value, i64)
        yield FloatAttr(float(value), f64)
        yield FloatAttr(float(value), f32)
    elif isinstance(value, float):
        yield FloatAttr(value, f64)
        yield FloatAttr(value, f32)
    elif isinstance(value, str):
        yield StringAttr(value)
    elif isinstance(value, list) and all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        yield DenseArrayBase.from_list(i64, value)


def property_names(op_class: type[Operation]) -> list[str]:
    return list(op_class.get_irdl_definition().properties)


def to_property(op_class: type[Operation], name: str, value: Literal) -> Attribute:
    """The attribute for property `name` of `op_class` holding `value`.

    Raises KeyError for an unknown property and ValueError for a value that fits none
    of the encodings the property accepts.
    """
    definition = op_class.get_irdl_definition().properties[name]
    try:
        encodings = list(candidates(value))
    except VerifyException:  # e.g. an integer too large for i64
        raise ValueError(f"{value!r} is out of range for '{name}'") from None
    for attr in encodings:
        try:
            definition.constr.verify(attr, VerificationContext())
        except VerifyException:
            continue
        return attr
    raise ValueError(f"{value!r} is not a valid value for '{name}'")
