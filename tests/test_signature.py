"""An entry's inputs and outputs as ONNX Runtime describes a session's
(`Executable.inputs()`, `.outputs()`, runtime/signature.py), and inputs given by name
(`exe.run({"x": ...})`), in memory and from a saved module."""

from __future__ import annotations

import numpy as np
import pytest

import nimble
from nimble import parse
from nimble.reference import InterpreterError
from nimble.runtime.signature import ValueInfo

MODEL = """
def @main(%x: f32[batch, 8], %b: f32[batch, 4], %w: f32[4, 8], %k: index, %m: i64[?]) -> (f32[batch, 4], i64[?]) {
  let %y = relu(dense(%x, %w)) + %b
  (%y * 2.0, %m)
}
"""


@pytest.fixture(scope="module")
def exe():
    return nimble.compile(parse(MODEL, "m.nb"), threads=1)


def test_inputs_and_outputs_name_their_dims(exe):
    assert exe.inputs() == [ValueInfo("x", "float32", ("batch", 8)), ValueInfo("b", "float32", ("batch", 4)),
                            ValueInfo("w", "float32", (4, 8)), ValueInfo("k", "index", None),
                            ValueInfo("m", "int64", (None,))]
    assert [o.name for o in exe.outputs()] == ["result_0", "result_1"]
    assert exe.outputs()[0].type == "float32" and exe.outputs()[0].shape[1] == 4
    assert exe.outputs()[1] == ValueInfo("result_1", "int64", (None,))


def test_inputs_by_name_are_the_positional_call(exe, tmp_path):
    rng = np.random.default_rng(0)
    x, w, m = rng.standard_normal((3, 8), np.float32), rng.standard_normal((4, 8), np.float32), np.arange(5)
    b = rng.standard_normal((3, 4), np.float32)
    by_position = exe.run(x, b, w, 2, m)
    by_name = exe.run({"m": m, "k": 2, "w": w, "x": x, "b": b})
    for got, want in zip(by_name, by_position):
        np.testing.assert_array_equal(got, want)
    exe.save(tmp_path / "m.nbc")
    loaded = nimble.load(tmp_path / "m.nbc")
    assert loaded.inputs() == exe.inputs() and loaded.outputs() == exe.outputs()
    np.testing.assert_array_equal(loaded.run({"m": m, "k": 2, "w": w, "x": x, "b": b})[0], by_position[0])


def test_a_wrong_dict_of_inputs_says_which_names(exe):
    with pytest.raises(InterpreterError, match="missing b, w, m; unknown z"):
        exe.run({"x": np.zeros((1, 8), np.float32), "k": 1, "z": 0})
    with pytest.raises(InterpreterError, match="no entry @nope"):
        exe.inputs("nope")
