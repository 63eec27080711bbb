"""The .nb text frontend: what it builds means what the source says (checked in the
reference interpreter), its errors are located and complete, and no input makes it
raise anything but FrontendError."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from conftest import SIZES
from nimble import interpret
from nimble.frontend import parse_nb
from nimble.frontend.errors import FrontendError
from nimble.reference import InterpreterError

ROOT = Path(__file__).resolve().parent.parent

CELL = """
def @cell(%x: f32[n, 4], %h: f32[n, 4], %c: f32[n, 4], %w: f32[16, 8], %b: f32[16]) -> (f32[n, 4], f32[n, 4]) {
  let %g = dense(concat(%x, %h, axis=1), %w, %b)
  let %i, %f, %o, %u = split(%g, axis=1, num=4)
  let %c2 = sigmoid(%f) * %c + sigmoid(%i) * tanh(%u)
  (sigmoid(%o) * tanh(%c2), %c2)
}
"""


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


@pytest.mark.parametrize("n", SIZES)
def test_lstm_cell_matches_numpy(n, rng):
    module = parse_nb(CELL)
    x, h, c = (rng.standard_normal((n, 4)).astype(np.float32) for _ in range(3))
    w = rng.standard_normal((16, 8)).astype(np.float32)
    b = rng.standard_normal(16).astype(np.float32)
    h2, c2 = interpret(module, x, h, c, w, b, entry="cell")
    g = np.concatenate([x, h], 1) @ w.T + b
    i, f, o, u = np.split(g, 4, axis=1)
    c_ref = sigmoid(f) * c + sigmoid(i) * np.tanh(u)
    np.testing.assert_allclose(c2, c_ref, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(h2, sigmoid(o) * np.tanh(c_ref), rtol=1e-5, atol=1e-5)


def test_named_dims_are_checked_at_run_time(rng):
    module = parse_nb(CELL)
    x = np.zeros((3, 4), np.float32)
    h = np.zeros((2, 4), np.float32)
    w, b = np.zeros((16, 8), np.float32), np.zeros(16, np.float32)
    with pytest.raises(InterpreterError, match=r"dim 0 of %h must equal dim 0 of %x \(both are 'n'\)"):
        interpret(module, x, h, x, w, b, entry="cell")


def test_recursion_and_control_flow():
    module = parse_nb("""
def @fact(%n: i64[]) -> i64[] {
  if %n < 2 { %n } else { %n * @fact(%n - 1) }
}
def @grow(%n: i64[], %h: f32[1, 2]) -> f32[1, ?] {
  let %i, %r = while (%i = 0, %h = %h) cond { %i < %n } do { (%i + 1, concat(%h, %h, axis=1)) }
  %r
}
""")
    assert interpret(module, np.array(5), entry="fact")[0] == 120
    (r,) = interpret(module, np.array(3), np.ones((1, 2), np.float32), entry="grow")
    assert r.shape == (1, 16)


def test_adt_list_sum(rng):
    module = parse_nb("""
type List = Nil | Cons(f32[4], List)
def @sum(%l: List, %acc: f32[4]) -> f32[4] {
  match %l {
    Nil => { %acc }
    Cons(%x, %rest) => { @sum(%rest, %acc + %x) }
  }
}
def @build(%a: f32[4], %b: f32[4]) -> List { Cons(%a, Cons(%b, Nil)) }
""")
    a, b = rng.standard_normal(4).astype(np.float32), rng.standard_normal(4).astype(np.float32)
    (lst,) = interpret(module, a, b, entry="build")
    (s,) = interpret(module, lst, np.zeros(4, np.float32), entry="sum")
    np.testing.assert_allclose(s, a + b, rtol=1e-6)


def test_all_errors_reported_together():
    with pytest.raises(FrontendError) as info:
        parse_nb("""def @f(%x: f32[4]) -> f32[4] {
  let %y = tanh(%nope)
  let %z = frobnicate(%x)
  %x
}
def @g(%x: f32[4]) -> f32[5] { %x }
""", "m.nb")
    messages = [(e.line, e.message) for e in info.value.errors]
    assert messages == [
        (2, "unknown value %nope"),
        (3, "unknown op 'frobnicate'"),
        (6, "function result #0 has type tensor<4xf32>, expected tensor<5xf32>"),
    ]
    assert "m.nb:2:17: error: unknown value %nope\n  let %y = tanh(%nope)\n                ^" in str(info.value)


def test_syntax_error_says_what_was_expected_in_words():
    with pytest.raises(FrontendError) as info:
        parse_nb("def @f(%x: f32[4]) -> f32[4] {\n  let = %x\n}\n", "s.nb")
    (error,) = info.value.errors
    assert (error.line, error.column) == (2, 7)
    assert "expected a value like %x" in error.message
    assert "__ANON" not in error.message and "VALUE" not in error.message


def _corpus() -> str:
    return "\n".join(p.read_text() for p in sorted((ROOT / "lit_tests/frontend").glob("*.nb")) if p.name != "errors.nb")


def test_fuzzed_inputs_raise_only_frontend_errors():
    source = _corpus()
    rnd = random.Random(7)
    alphabet = "%@:<>(){}[],=?0123456789 \n\"-+*/.abcdefgijklmnoprstuyACLNT#=>"
    inputs = [source[: rnd.randrange(len(source))] for _ in range(200)]
    for _ in range(200):
        chars = list(source)
        for _ in range(rnd.randrange(1, 6)):
            chars[rnd.randrange(len(chars))] = rnd.choice(alphabet)
        inputs.append("".join(chars))
    inputs += ["".join(rnd.choice(alphabet) for _ in range(rnd.randrange(1, 200))) for _ in range(200)]
    for text in inputs:
        try:
            parse_nb(text, "fuzz.nb")
        except FrontendError:
            pass


def test_syntax_errors_in_separate_definitions_are_all_reported():
    text = "def @f(%x: f32[4]) -> f32[4] {\n  let = %x\n}\ndef @g(%x: f32[4]) -> f32[4] {\n  %x +\n}\n"
    with pytest.raises(FrontendError) as info:
        parse_nb(text, "s.nb")
    assert [e.line for e in info.value.errors] == [2, 6]
