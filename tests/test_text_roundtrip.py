"""Printing a module as .nb text and parsing it back gives the same IR: on every
example, and on random well-formed models (hypothesis)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nimble import parse
from nimble.frontend import parse_nb
from nimble.frontend.printer import print_nb

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def anonymous(module) -> str:
    """The module's text with SSA names dropped (names are not part of the IR's meaning)."""
    for op in module.walk():
        for r in op.results:
            r.name_hint = None
        for region in op.regions:
            for block in region.blocks:
                for arg in block.args:
                    arg.name_hint = None
    return str(module)


def assert_round_trip(module, name="m.nb"):
    text = print_nb(module)
    again = parse_nb(text, name)
    assert anonymous(again) == anonymous(module), text


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.nb")), ids=lambda p: p.stem)
def test_examples_round_trip(path):
    assert_round_trip(parse(path), path.name)


UNARY = ["relu", "tanh", "sigmoid", "exp", "neg", "abs"]
BINARY = ["+", "-", "*"]


@st.composite
def models(draw) -> str:
    """A random function over tensors of random (partly dynamic) shapes."""
    rank = draw(st.integers(1, 3))
    shape = [draw(st.sampled_from(["?", "n", "1", "3", "4"])) for _ in range(rank)]
    params = [f"%p{i}: f32[{', '.join(shape)}]" for i in range(draw(st.integers(1, 3)))]
    values = [f"%p{i}" for i in range(len(params))]
    lines = []
    for i in range(draw(st.integers(1, 12))):
        kind = draw(st.sampled_from(["unary", "binary", "scale", "tuple", "if", "softmax", "reduce"]))
        a = draw(st.sampled_from(values))
        b = draw(st.sampled_from(values))
        if kind == "unary":
            expr = f"{draw(st.sampled_from(UNARY))}({a})"
        elif kind == "binary":
            expr = f"{a} {draw(st.sampled_from(BINARY))} {b}"
        elif kind == "scale":
            expr = f"{a} * {draw(st.floats(-4, 4, allow_nan=False, width=32))}"
        elif kind == "tuple":
            lines.append(f"  let %t{i} = ({a}, {b})")
            expr = f"%t{i}.{draw(st.integers(0, 1))}"
        elif kind == "if":
            expr = f"if true {{ relu({a}) }} else {{ {b} }}"
        elif kind == "softmax":
            expr = f"softmax({a}, axis={draw(st.integers(-rank, rank - 1))})"
        else:
            lines.append(f"  let %r{i} = reduce_sum({a}, axes=[0], keepdims=true)")
            expr = f"%r{i} + {a}"
        lines.append(f"  let %v{i} = {expr}")
        values.append(f"%v{i}")
    body = "\n".join(lines)
    return f"def @main({', '.join(params)}) {{\n{body}\n  {values[-1]}\n}}\n"


@settings(max_examples=60, deadline=None)
@given(models())
def test_random_models_round_trip(source):
    assert_round_trip(parse_nb(source, "random.nb"))
