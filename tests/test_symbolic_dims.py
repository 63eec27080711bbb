"""Symbolic dims end to end: ONNX `dim_param`s become named dims of the function's
types, type inference carries the names through the graph, and at run time each symbol
is bound from the first dim that is that symbol alone, every other named dim checked
against it before anything runs (an error naming both inputs and the symbol)."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

import nimble
from nimble.dialects.dim_expr import symbol, symbol_name
from nimble.dialects.graph.types import symbolic_dims
from nimble.frontend.onnx import import_onnx
from nimble.reference import InterpreterError

BIND = """func.func @main(%x: tensor<?x?xf32, #nimble.dims<[batch, seq]>>, %y: tensor<?x?xf32, #nimble.dims<[batch, seq * 2]>>) -> tensor<?x?xf32> {
  %c = graph.concat %x, %x {axis = 1 : i64} : (tensor<?x?xf32, #nimble.dims<[batch, seq]>>, tensor<?x?xf32, #nimble.dims<[batch, seq]>>) -> tensor<?x?xf32>
  %a = graph.add %c, %y : (tensor<?x?xf32>, tensor<?x?xf32, #nimble.dims<[batch, seq * 2]>>) -> tensor<?x?xf32>
  func.return %a : tensor<?x?xf32>
}"""


def _onnx_model():
    f32 = TensorProto.FLOAT
    nodes = [helper.make_node("MatMul", ["x", "w"], ["h"]), helper.make_node("Relu", ["h"], ["y"])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", f32, ["batch size", "seq", 8])],
                              [helper.make_tensor_value_info("y", f32, ["batch size", "seq", 4])],
                              [helper.make_tensor("w", f32, [8, 4], np.ones(32, np.float32).tolist())])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_onnx_dim_params_name_the_dims_of_the_whole_graph():
    from nimble.compile import run_stages

    module = import_onnx(_onnx_model())
    main = next(iter(module.ops))
    assert symbolic_dims(main.function_type.inputs.data[0]) == [symbol("batch_size"), symbol("seq"), 8]
    run_stages(module, ["graph"])
    assert symbolic_dims(main.function_type.outputs.data[0]) == [symbol("batch_size"), symbol("seq"), 4]
    exe = nimble.compile(import_onnx(_onnx_model()))  # the names stay valid through every stage
    x = np.ones((2, 3, 8), np.float32)
    np.testing.assert_array_equal(exe(x), np.full((2, 3, 4), 8, np.float32))


@pytest.mark.parametrize("text, name", [("batch", "batch"), ("batch size", "batch_size"), ("2d", "_2d"),
                                        ("min", "min_"), ("mod", "mod_"), ("unk__0", "unk__0")])
def test_free_form_dim_params_become_symbols_that_parse_back(text, name):
    assert symbol_name(text) == name


@pytest.mark.parametrize("target", ["reference", "llvm"])
def test_symbols_are_bound_at_entry_and_every_named_dim_checked(target):
    run = (lambda *a: nimble.interpret(nimble.parse(BIND), *a)[0]) if target == "reference" \
        else nimble.compile(nimble.parse(BIND))
    x = np.ones((2, 3), np.float32)
    assert run(x, np.ones((2, 6), np.float32)).shape == (2, 6)
    with pytest.raises(InterpreterError, match=r"argument #1 \(%y\): dim 1 is 5, but it is 'seq \* 2' = 6, "
                                               r"where 'seq' is 3 \(dim 1 of argument #0 \(%x\)\)"):
        run(x, np.ones((2, 5), np.float32))
    with pytest.raises(InterpreterError, match=r"dim 0 is 3, but it is 'batch' = 2"):
        run(x, np.ones((3, 6), np.float32))


def test_one_compiled_module_serves_every_size_of_its_symbols(rng):
    exe = nimble.compile(nimble.parse(BIND))
    for batch, seq in [(1, 1), (3, 7), (2, 16)]:
        x, y = rng.standard_normal((batch, seq)).astype(np.float32), rng.standard_normal((batch, 2 * seq)).astype(np.float32)
        np.testing.assert_allclose(exe(x, y), np.concatenate([x, x], 1) + y, rtol=1e-6)


def test_named_dims_survive_a_saved_module(tmp_path):
    nimble.compile(nimble.parse(BIND)).save(tmp_path / "bind.nbc")
    loaded = nimble.load(tmp_path / "bind.nbc")
    x = np.ones((2, 3), np.float32)
    assert loaded(x, np.ones((2, 6), np.float32)).shape == (2, 6)
    with pytest.raises(InterpreterError, match="'seq' is 3"):
        loaded(x, np.ones((2, 5), np.float32))
