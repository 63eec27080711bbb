"""Inputs found by review that once escaped the frontend's error type, built wrong IR or
failed to round-trip: each must now be a FrontendError, or work."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from nimble import interpret
from nimble.frontend import parse_nb
from nimble.frontend.errors import FrontendError
from nimble.frontend.printer import PrintError, print_nb
from nimble.parser import parse_mlir
from nimble.registry import make_context

REJECTED = {
    "i1 literal out of range": "def @f(%x: f32[2]) { i1(2) }",
    "i8 literal out of range": "def @f(%x: f32[2]) { i8(300) }",
    "literal too big for the other operand": "def @f(%x: i64[2]) { %x * 99999999999999999999999 }",
    "float literal with an integer tensor": "def @f(%x: i64[2]) { %x * 0.5 }",
    "huge slice bound": "def @f(%x: f32[2]) { %x[99999999999999999999] }",
    "huge attribute": "def @f(%x: f32[2]) { concat(%x, %x, axis=99999999999999999999) }",
    "match on a type whose declaration failed": "type T = A | B(Bogus)\ndef @f(%t: T, %x: f32[2]) -> f32[2] { match %t { A => { %x } } }",
    "dtype where a whole type is needed": 'def @f(%x: f32[2]) { external_constant(key="w", file="w.npz", dtype=f32) }',
    "a tensor type as dtype": "def @f(%x: f32[2]) { cast(%x, dtype=f32[2]) }",
    "index as dtype": "def @f(%x: f32[2]) { cast(%x, dtype=index) }",
    "dtype on an op that does not take it": "def @f(%x: f32[2]) { relu(%x, dtype=i32) }",
    "expressions nested too deeply": "def @f(%x: f32[2]) -> f32[2] { " + "%x + (" * 8000 + "%x" + ")" * 8000 + " }",
    "calls nested too deeply": "def @f(%x: f32[2]) -> f32[2] { " + "relu(" * 3000 + "%x" + ")" * 3000 + " }",
}


@pytest.mark.parametrize("source", REJECTED.values(), ids=REJECTED.keys())
def test_rejected_with_a_frontend_error(source):
    with pytest.raises(FrontendError):
        parse_nb(source)


def test_a_long_chain_of_infix_ops_builds_at_the_default_recursion_limit():
    """`a + b - c * d ...` is a left spine of infix nodes, built in a loop: 8,000 terms
    take no deeper a Python stack than two (and the builder leaves the limit alone)."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)
    try:
        chain = "%x" + "".join(" + %x" if i % 2 else " - %x * %x" for i in range(8000))
        module = parse_nb("def @f(%x: f32[2]) -> f32[2] { " + chain + " }")
        assert sys.getrecursionlimit() == 1000
    finally:
        sys.setrecursionlimit(limit)
    x = np.array([0.5, -1.0], np.float32)
    expected = x.copy()
    for i in range(8000):
        expected = expected + x if i % 2 else expected - x * x
    np.testing.assert_allclose(interpret(module, x, entry="f")[0], expected, rtol=1e-6)


def test_negative_literals_take_the_other_operands_type():
    module = parse_nb("def @f(%x: f32[2], %i: index) -> (f32[2], index) { (%x * -1, %i + -1) }")
    y, j = interpret(module, np.array([1.0, 2.0], np.float32), 5, entry="f")
    assert y.tolist() == [-1.0, -2.0] and j == 4
    (z,) = interpret(parse_nb("def @g(%x: f32[2]) -> f32[2] { f32(-%x) }"), np.ones(2, np.float32), entry="g")
    assert z.tolist() == [-1.0, -1.0]


def test_while_chains_of_carried_values_converge():
    module = parse_nb("""def @f(%a0: f32[1], %n: index) {
  let %i, %a, %b, %c, %d = while (%i = index(0), %a = %a0, %b = %a0, %c = %a0, %d = %a0)
    cond { %i < %n } do { (%i + 1, concat(%a, %a, axis=0), %a, %b, %c) }
  %d
}""")
    (d,) = interpret(module, np.ones(1, np.float32), 6, entry="f")
    assert d.shape == (8,)  # d trails a by three doublings


def test_discarded_loop_rounds_leave_no_uses():
    module = parse_nb("""def @f(%h: f32[1], %n: index) {
  let %k = %n + index(1)
  let %i, %g = while (%i = index(0), %g = %h) cond { %i < %k } do { (%i + 1, concat(%g, %g, axis=0)) }
  %g
}""")
    for op in module.walk():
        for result in op.results:
            assert all(use.operation.parent_op() is not None for use in result.uses)


def test_tuple_values_are_returned_and_yielded_whole():
    module = parse_nb("""def @f(%t: tuple<f32[2], f32[2]>, %c: i1) -> tuple<f32[2], f32[2]> {
  if %c { %t } else { %t }
}""")
    t = (np.zeros(2, np.float32), np.ones(2, np.float32))
    (r,) = interpret(module, t, np.array(True), entry="f")
    assert r[1].tolist() == [1.0, 1.0]


def test_named_dims_only_at_top_level():
    parse_nb("def @f(%t: tuple<f32[n]>, %x: f32[n]) -> f32[n] { %x }")


def test_printer_refuses_what_it_cannot_say():
    ctx = make_context()
    for text in ("func.func private @ext(tensor<2xf32>) -> tensor<2xf32>",
                 "func.func @f(%x: tensor<2xbf16>) -> tensor<2xbf16> {\n  func.return %x : tensor<2xbf16>\n}"):
        with pytest.raises(PrintError):
            print_nb(parse_mlir(ctx, text))
    with pytest.raises(PrintError):
        print_nb(parse_nb("def @f(%x: f32[2]) -> f32[2] { %x * 1e400 }"))


def test_printer_makes_names_the_format_accepts():
    module = parse_mlir(make_context(), """func.func @f(%x.y: tensor<2xf32>) -> tensor<2xf32> {
  func.return %x.y : tensor<2xf32>
}""")
    parse_nb(print_nb(module))


def test_tuple_results_round_trip():
    module = parse_mlir(make_context(), """func.func @f(%a: tensor<2xf32>) -> tuple<tensor<2xf32>, tensor<2xf32>> {
  %t = graph.make_tuple %a, %a : (tensor<2xf32>, tensor<2xf32>) -> tuple<tensor<2xf32>, tensor<2xf32>>
  func.return %t : tuple<tensor<2xf32>, tensor<2xf32>>
}""")
    again = parse_nb(print_nb(module))
    assert "tuple<tensor<2xf32>, tensor<2xf32>>" in str(again)


def test_passes_accept_tuple_values():
    from xdsl.passes import PassPipeline

    from nimble.registry import all_passes

    module = parse_nb("def @main(%x: f32[2]) -> f32[?] {\n  let %t = (%x, cast(%x, type=f32[?]))\n  %t.1\n}")
    PassPipeline.parse_spec(all_passes(), "infer-shapes,reify-shapes,cse,canonicalize").apply(make_context(), module)
    module.verify()


def test_two_literals_follow_python_typing():
    (x,) = interpret(parse_nb("def @f() -> f32[] { 2 + 1.5 }"), entry="f")
    (y,) = interpret(parse_nb("def @g() -> i64[] { 2 * 3 }"), entry="g")
    assert float(x) == 3.5 and int(y) == 6
