"""Values the ONNX importer knows at import (frontend/onnx/importer.py): shape values whose
dims are all static are constants (torch's Pad computes its pads that way on an input
whose batch is dynamic), ops the graph dialect lacks are computed there from constants
(torchvision's Swin builds its shifted-window masks with ScatterND), and slices with a
negative step along a static axis are gathers. Each against ONNX Runtime."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import nimble
from nimble.frontend.onnx import OnnxImportError, import_onnx


def _model(nodes, inputs, outputs, initializers=()):
    graph = helper.make_graph(nodes, "g", inputs, outputs, [numpy_helper.from_array(a, n) for n, a in initializers])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    return model


def _ort(model, *args):
    ort = pytest.importorskip("onnxruntime")
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, {i.name: a for i, a in zip(session.get_inputs(), args)})


def _input(name, dims):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, dims)


def _i64(*values):
    return np.array(values, np.int64)


@pytest.mark.parametrize("batch", [1, 2, 5])
def test_pads_computed_from_static_dims_of_a_dynamic_batch_input(batch, rng):
    """pads = [0, 0, 0, 0, 0, dim2 - 4]: Shape -> Gather -> Sub -> Concat, every dim it
    reads static, though the batch is not."""
    nodes = [helper.make_node("Shape", ["x"], ["s"]),
             helper.make_node("Gather", ["s", "two"], ["d"]),
             helper.make_node("Sub", ["d", "four"], ["k"]),
             helper.make_node("Concat", ["zeros", "k"], ["pads"], axis=0),
             helper.make_node("Pad", ["x", "pads"], ["y"])]
    model = _model(nodes, [_input("x", ["n", 3, 6])], [_input("y", [None] * 3)],
                   [("two", _i64(2)), ("four", _i64(4)), ("zeros", _i64(0, 0, 0, 0, 0))])
    x = rng.standard_normal((batch, 3, 6)).astype(np.float32)
    (got,) = nimble.compile(import_onnx(model)).run(x)
    (want,) = _ort(model, x)
    assert got.shape == (batch, 3, 8)
    np.testing.assert_array_equal(got, want)


def _scatter_model(data_is_input: bool):
    nodes = [helper.make_node("ScatterND", ["data", "indices", "updates"], ["mask"]),
             helper.make_node("Add", ["x", "mask"], ["y"])]
    inputs = [_input("x", ["n", 4, 4])] + ([_input("data", [4, 4])] if data_is_input else [])
    initializers = [("indices", _i64([0, 1], [2, 3], [3, 0])), ("updates", np.array([5, 6, 7], np.float32))]
    if not data_is_input:
        initializers.append(("data", np.zeros((4, 4), np.float32)))
    return _model(nodes, inputs, [_input("y", [None] * 3)], initializers)


@pytest.mark.parametrize("batch", [1, 3])
def test_scatter_nd_on_constants_is_computed_at_import(batch, rng):
    model = _scatter_model(data_is_input=False)
    x = rng.standard_normal((batch, 4, 4)).astype(np.float32)
    (got,) = nimble.compile(import_onnx(model)).run(x)
    (want,) = _ort(model, x)
    np.testing.assert_array_equal(got, want)
    assert "ScatterND" not in str(import_onnx(model))


@pytest.mark.parametrize("batch", [1, 3])
def test_scatter_nd_on_values_given_at_run_time_is_a_graph_scatter(batch, rng):
    model = _scatter_model(data_is_input=True)
    assert "graph.scatter_nd" in str(import_onnx(model))
    x = rng.standard_normal((batch, 4, 4)).astype(np.float32)
    data = rng.standard_normal((4, 4)).astype(np.float32)
    (got,) = nimble.compile(import_onnx(model)).run(x, data)
    (want,) = _ort(model, x, data)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("n", [1, 4, 7])
@pytest.mark.parametrize("start, end, step", [(-1, -2**63 + 1, -1), (5, 0, -2), (4, -6, -1), (9, 2, -3), (0, 3, -1)])
def test_negative_slice_steps_along_a_static_axis(n, start, end, step, rng):
    nodes = [helper.make_node("Slice", ["x", "starts", "ends", "axes", "steps"], ["y"])]
    model = _model(nodes, [_input("x", ["n", 6])], [_input("y", [None] * 2)],
                   [("starts", _i64(start)), ("ends", _i64(end)), ("axes", _i64(1)), ("steps", _i64(step))])
    x = rng.standard_normal((n, 6)).astype(np.float32)
    (got,) = nimble.compile(import_onnx(model)).run(x)
    (want,) = _ort(model, x)
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def test_a_negative_slice_step_along_a_dynamic_axis_is_named():
    nodes = [helper.make_node("Slice", ["x", "starts", "ends", "axes", "steps"], ["y"])]
    model = _model(nodes, [_input("x", ["n", 6])], [_input("y", [None] * 2)],
                   [("starts", _i64(-1)), ("ends", _i64(-2**63 + 1)), ("axes", _i64(0)), ("steps", _i64(-1))])
    with pytest.raises(OnnxImportError, match="a negative slice step needs the axis and bounds known at compile time"):
        import_onnx(model)
