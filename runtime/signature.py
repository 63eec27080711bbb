"""What an entry of a compiled module takes and gives, as ONNX Runtime's session describes
its inputs and outputs: a name, an element type and a shape whose dims are ints, the
names of named dims (`n`, `batch`) or None for an unnamed `?`. `Executable.inputs()` and
`Executable.outputs()` read them from the entry's signature; `Executable.run(feeds)` takes
a dict of inputs by name."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Attribute

from nimble.dialects.graph.types import numpy_dtype, symbolic_dims


@dataclass(frozen=True)
class ValueInfo:
    """One parameter or result of an entry."""

    name: str
    type: str
    """The numpy dtype's name of a tensor's elements (`float32`), else the IR type
    (`index`, a tuple, an ADT)."""
    shape: tuple[int | str | None, ...] | None
    """A tensor's dims (None for a value that is not a tensor)."""


def _info(name: str, t: Attribute, named: Mapping[int, str]) -> ValueInfo:
    if not isinstance(t, TensorType):
        return ValueInfo(name, str(t), None)
    shape = []
    for axis, d in enumerate(symbolic_dims(t)):
        if isinstance(d, int):
            shape.append(d)
        elif axis in named:
            shape.append(named[axis])
        else:
            shape.append(str(d) if d is not None else None)
    try:
        element = numpy_dtype(t.element_type).name
    except ValueError:
        element = str(t.element_type)
    return ValueInfo(name, element, tuple(shape))


def inputs(signature: Any, names: Sequence[str], dim_names: Mapping[str, str]) -> list[ValueInfo]:
    """The parameters, their dims named as the signature's `vm.dim_names` say (keys
    `<parameter position>.<axis>`)."""
    infos = []
    for position, (name, t) in enumerate(zip(names, signature.inputs.data)):
        named = {int(axis): v for k, v in dim_names.items() for at, axis in [k.split(".")] if int(at) == position}
        infos.append(_info(name, t, named))
    return infos


def outputs(signature: Any, names: Sequence[str] | None = None) -> list[ValueInfo]:
    """The results, by `names` (an ONNX graph's outputs), else `result_<i>`."""
    return [_info(names[i] if names else f"result_{i}", t, {}) for i, t in enumerate(signature.outputs.data)]


def feeds_in_order(feeds: Mapping[str, Any], names: Sequence[str], entry: str) -> list[Any]:
    """The values of a dict of inputs in the entry's parameter order; ValueError naming
    what is missing or unknown."""
    missing = [n for n in names if n not in feeds]
    unknown = [n for n in feeds if n not in names]
    if missing or unknown:
        parts = ([f"missing {', '.join(missing)}"] if missing else []) + \
                ([f"unknown {', '.join(unknown)}"] if unknown else [])
        raise ValueError(f"@{entry}'s inputs are {', '.join(names)}: {'; '.join(parts)}")
    return [feeds[n] for n in names]
