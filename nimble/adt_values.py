"""Values of algebraic data types for the tools: from JSON (`nimble-run --input
t=tree.json`) and at random (an ADT input without `--input`).

JSON spells a value as its constructor's name with the list of its fields, a tensor
field as nested lists of numbers (or a `.npy` path, or the inline `SHAPExTYPE=VALUES` of
`--input`), an ADT field as a value again:

    {"Node": [[[0.1, ...]], {"Leaf": [[[0.5, ...]]]}, {"Leaf": ["x.npy"]}]}

Each field is checked against the constructor's declared type (element type, rank,
static dims); an error names the path to the field (`t.Node.1.Leaf.0`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Attribute

from nimble.dialects.graph.adt import AdtOp, AdtType, AdtValue
from nimble.dialects.graph.types import numpy_dtype
from nimble.errors import InputError

MAX_NODES = 100_000
"""Values a JSON input or a random one may hold (a tree's nodes)."""


class AdtInputError(InputError, ValueError):
    """A JSON value that is not one of its ADT's (the message names where)."""


def _constructors(adts: Mapping[str, AdtOp], t: AdtType) -> dict[str, list[Attribute]]:
    adt = adts.get(t.adt.root_reference.data)
    if adt is None:
        raise AdtInputError(f"no ADT @{t.adt.root_reference.data} in the module")
    return {c.sym_name.data: list(c.fields.data) for c in adt.constructors}


def from_json(adts: Mapping[str, AdtOp], t: Attribute, data: Any, where: str,
              tensor: Callable[[str, str], Any]) -> Any:
    """The value of type `t` that JSON `data` spells (`tensor(where, spec)` reads a
    field given as a string)."""
    count = [0]

    def value(t: Attribute, data: Any, where: str) -> Any:
        if isinstance(t, AdtType):
            count[0] += 1
            if count[0] > MAX_NODES:
                raise AdtInputError(f"{where}: more than {MAX_NODES:,} values")
            constructors = _constructors(adts, t)
            if not (isinstance(data, dict) and len(data) == 1):
                raise AdtInputError(f"{where}: expected {{\"Constructor\": [fields]}} ({', '.join(constructors)}), "
                                    f"got {type(data).__name__}")
            (name, fields), = data.items()
            if name not in constructors:
                raise AdtInputError(f"{where}: no constructor {name} (known: {', '.join(constructors)})")
            types = constructors[name]
            if not isinstance(fields, list) or len(fields) != len(types):
                raise AdtInputError(f"{where}.{name}: expected a list of {len(types)} fields")
            return AdtValue(name, tuple(value(ft, f, f"{where}.{name}.{i}")
                                        for i, (ft, f) in enumerate(zip(types, fields))))
        if not isinstance(t, TensorType):
            raise AdtInputError(f"{where}: fields of type {t} are not read from JSON")
        array = tensor(where, data) if isinstance(data, str) else _array(data, t, where)
        return _checked(array, t, where)

    return value(t, data, where)


def _array(data: Any, t: TensorType, where: str) -> np.ndarray:
    try:
        return np.asarray(data, dtype=numpy_dtype(t.element_type))
    except (ValueError, TypeError) as e:
        raise AdtInputError(f"{where}: not a {t} ({e})") from None


def _checked(array: Any, t: TensorType, where: str) -> np.ndarray:
    shape = t.get_shape()
    if not isinstance(array, np.ndarray) or array.dtype != numpy_dtype(t.element_type) or array.ndim != len(shape) \
            or any(d >= 0 and d != n for d, n in zip(shape, array.shape)):
        got = f"{array.dtype}{list(array.shape)}" if isinstance(array, np.ndarray) else type(array).__name__
        raise AdtInputError(f"{where}: expected {t}, got {got}")
    return array


def random(adts: Mapping[str, AdtOp], t: AdtType, size: int, rng: np.random.Generator,
           tensor: Callable[[Attribute], Any]) -> AdtValue:
    """A random value of ADT `t` with about `size` constructors (at least one): while
    the budget lasts a constructor is drawn among all, then among those without ADT
    fields (a leaf), so a recursive type gives a finite value. `tensor(t)` makes a
    tensor field."""
    budget = [max(1, min(size, MAX_NODES))]

    def value(t: AdtType) -> AdtValue:
        constructors = _constructors(adts, t)
        leaves = [n for n, fs in constructors.items() if not any(isinstance(f, AdtType) for f in fs)]
        budget[0] -= 1
        names = list(constructors) if budget[0] > 0 or not leaves else leaves
        name = names[rng.integers(len(names))]
        return AdtValue(name, tuple(value(f) if isinstance(f, AdtType) else tensor(f) for f in constructors[name]))

    return value(t)
