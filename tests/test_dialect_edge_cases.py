"""Inputs found by review of the dialects and the interpreter: each is now a clear
error or keeps its meaning."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import run_mlir
from nimble import interpret, parse
from nimble.reference import InterpreterError


def test_references_check_what_shape_functions_check():
    split = """func.func @main(%x: tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>) {
  %a, %b = graph.split %x {axis = 0 : i64, sizes = array<i64: 1, 2>} : tensor<?xf32> -> (tensor<?xf32>, tensor<?xf32>)
  func.return %a, %b : tensor<?xf32>, tensor<?xf32>
}"""
    run_mlir(split, np.zeros(3, np.float32))
    with pytest.raises(InterpreterError, match="sizes do not add up"):
        run_mlir(split, np.zeros(4, np.float32))
    dense = """func.func @main(%x: tensor<?x3xf32>, %w: tensor<?x3xf32>, %b: tensor<?xf32>) -> tensor<?x?xf32> {
  %y = graph.dense %x, %w, %b : (tensor<?x3xf32>, tensor<?x3xf32>, tensor<?xf32>) -> tensor<?x?xf32>
  func.return %y : tensor<?x?xf32>
}"""
    with pytest.raises(InterpreterError, match="bias size and weight dim 0 differ"):
        run_mlir(dense, np.zeros((2, 3), np.float32), np.zeros((4, 3), np.float32), np.zeros(1, np.float32))


def test_window_that_does_not_fit_is_an_interpreter_error():
    text = """func.func @main(%x: tensor<1x1x?x?xf32>) -> tensor<1x1x?x?xf32> {
  %y = graph.max_pool2d %x {kernel = array<i64: 3, 3>} : tensor<1x1x?x?xf32> -> tensor<1x1x?x?xf32>
  func.return %y : tensor<1x1x?x?xf32>
}"""
    with pytest.raises(InterpreterError, match="window does not fit"):
        run_mlir(text, np.zeros((1, 1, 2, 2), np.float32))


def test_softmax_of_an_empty_axis_is_empty():
    text = """func.func @main(%x: tensor<2x?xf32>) -> tensor<2x?xf32> {
  %y = graph.softmax %x : tensor<2x?xf32> -> tensor<2x?xf32>
  func.return %y : tensor<2x?xf32>
}"""
    assert run_mlir(text, np.zeros((2, 0), np.float32))[0].shape == (2, 0)


def test_infer_shapes_leaves_negative_constant_dims_unknown():
    from xdsl.passes import PassPipeline

    from nimble.registry import all_passes, make_context

    module = parse("""func.func @main() -> tensor<?xf32> {
  %c = arith.constant -2 : index
  %s = dynshape.from_dims %c : !dynshape.shape<1>
  %y = graph.zeros %s : !dynshape.shape<1> -> tensor<?xf32>
  func.return %y : tensor<?xf32>
}""")
    PassPipeline.parse_spec(all_passes(), "infer-shapes").apply(make_context(), module)
    assert "tensor<-2" not in str(module)
    with pytest.raises(InterpreterError, match="negative dim"):
        interpret(module)
