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


def _onnx_model(path):
    """x -> (relu(x) named 'activated', x + 1 named 'out/plus.one': not a plain file name)."""
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper, numpy_helper

    one = numpy_helper.from_array(np.array(1.0, np.float32), "one")
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["activated"]), helper.make_node("Add", ["x", "one"], ["out/plus.one"])],
        "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 3])],
        [helper.make_tensor_value_info("activated", TensorProto.FLOAT, ["n", 3]),
         helper.make_tensor_value_info("out/plus.one", TensorProto.FLOAT, ["n", 3])], [one])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    return str(path)


def test_an_onnx_models_outputs_keep_their_names(tmp_path):
    exe = nimble.compile(_onnx_model(tmp_path / "m.onnx"))
    assert [o.name for o in exe.outputs()] == ["activated", "out/plus.one"]
    exe.save(tmp_path / "m.nbc")
    loaded = nimble.load(tmp_path / "m.nbc")
    assert loaded.outputs() == exe.outputs()
    x = np.array([[-1.0, 0.5, 2.0]], np.float32)
    plus, relu = loaded.run(["out/plus.one", "activated"], {"x": x})  # (ONNX Runtime's run(output_names, feeds))
    np.testing.assert_array_equal(relu, np.maximum(x, 0))
    np.testing.assert_array_equal(plus, x + 1)
    assert len(loaded.run(None, {"x": x})) == 2
    with pytest.raises(InterpreterError, match="no output named y"):
        loaded.run(["y"], {"x": x})


def test_nimble_run_writes_results_by_output_name(tmp_path, capsys):
    from nimble.run_cli import main

    model = _onnx_model(tmp_path / "m.onnx")
    assert main([model, "--input", "x=2x3xf32=1.5", "--output-dir", str(tmp_path / "out")]) == 0
    capsys.readouterr()
    written = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert written == ["result_0.npy", "result_1.npy"]  # ('out/plus.one' is not a plain file name: all by position)
    np.testing.assert_array_equal(np.load(tmp_path / "out" / "result_1.npy"), np.full((2, 3), 2.5, np.float32))


def test_nimble_run_names_the_files_after_plain_output_names(tmp_path, capsys):
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper

    from nimble.run_cli import main

    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["activated"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 3])],
                              [helper.make_tensor_value_info("activated", TensorProto.FLOAT, ["n", 3])])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(tmp_path / "m.onnx"))
    assert main([str(tmp_path / "m.onnx"), "--input", "x=2x3xf32=-1", "--output-dir", str(tmp_path / "out")]) == 0
    capsys.readouterr()
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["activated.npy"]


def test_nimble_run_writes_an_npz_archive(tmp_path, capsys):
    from nimble.run_cli import main

    model = _onnx_model(tmp_path / "m.onnx")
    assert main([model, "--input", "x=2x3xf32=-1.5", "--output-dir", str(tmp_path / "out.npz")]) == 0
    capsys.readouterr()
    with np.load(tmp_path / "out.npz") as archive:
        assert sorted(archive.files) == ["result_0", "result_1"]
        np.testing.assert_array_equal(archive["result_0"], np.zeros((2, 3), np.float32))
