"""ONNX function ops (frontend/onnx/functions.py): an op the importer has no converter
for but whose schema defines it as a function comes in as its body's nodes, at the
model's opset, built for the node's attributes and input types; dims known only at run
time stay dynamic through the body. Checked against ONNX Runtime at several sizes."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import nimble
from nimble.frontend.onnx import OnnxImportError, import_onnx
from nimble.frontend.onnx.functions import is_function

F = TensorProto.FLOAT


def _model(node, inputs, outputs, opset):
    model = helper.make_model(helper.make_graph([node], "g", inputs, outputs),
                              opset_imports=[helper.make_opsetid("", opset)])
    onnx.checker.check_model(model)
    return model


def _matches_onnxruntime(model, feeds_at_sizes, atol=1e-5):
    ort = pytest.importorskip("onnxruntime")
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    exe = nimble.compile(import_onnx(model))
    for feeds in feeds_at_sizes:
        want = session.run(None, feeds)
        got = exe.run(*feeds.values())
        for g, w in zip(got, want, strict=True):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=atol, equal_nan=True)


def test_function_ops_are_those_with_a_schema_function_at_the_opset():
    assert is_function("RMSNormalization", 23) and is_function("Attention", 23)
    assert not is_function("RMSNormalization", 22)  # (the op is new in opset 23)
    assert is_function("SoftmaxCrossEntropyLoss", 13) and not is_function("Conv", 23)
    assert not is_function("NoSuchOp", 23)


@pytest.mark.parametrize("axis", [-1, 1])
def test_rms_normalization_over_dynamic_dims(axis, rng):
    node = helper.make_node("RMSNormalization", ["x", "scale"], ["y"], axis=axis, epsilon=1e-3)
    scale_shape = [8] if axis == -1 else [5, 8]
    model = _model(node, [helper.make_tensor_value_info("x", F, ["b", 5, 8]),
                          helper.make_tensor_value_info("scale", F, scale_shape)],
                   [helper.make_tensor_value_info("y", F, ["b", 5, 8])], 23)
    _matches_onnxruntime(model, [{"x": rng.standard_normal((b, 5, 8)).astype(np.float32),
                                          "scale": rng.standard_normal(scale_shape).astype(np.float32)}
                                         for b in (1, 3, 7)])


@pytest.mark.parametrize("causal", [0, 1])
def test_attention_at_sequence_lengths_known_only_at_run_time(causal, rng):
    node = helper.make_node("Attention", ["q", "k", "v"], ["y"], is_causal=causal)
    model = _model(node, [helper.make_tensor_value_info(n, F, [1, 2, "s", 8]) for n in "qkv"],
                   [helper.make_tensor_value_info("y", F, [1, 2, "s", 8])], 23)
    _matches_onnxruntime(model, [{n: rng.standard_normal((1, 2, s, 8)).astype(np.float32) for n in "qkv"}
                                 for s in (1, 5, 13)])


def test_softmax_cross_entropy_expands_into_another_function_op(rng):
    """SoftmaxCrossEntropyLoss's body holds NegativeLogLikelihoodLoss, itself a function
    op: expanded in turn. A batch whose targets are all ignored gives NaN, as in ORT."""
    node = helper.make_node("SoftmaxCrossEntropyLoss", ["x", "t"], ["loss", "log_prob"], reduction="mean",
                            ignore_index=1)
    model = _model(node, [helper.make_tensor_value_info("x", F, ["b", 4]),
                          helper.make_tensor_value_info("t", TensorProto.INT64, ["b"])],
                   [helper.make_tensor_value_info("loss", F, []), helper.make_tensor_value_info("log_prob", F, ["b", 4])],
                   13)
    feeds = [{"x": rng.standard_normal((b, 4)).astype(np.float32), "t": t}
             for b, t in [(1, np.array([1])), (5, np.array([0, 1, 2, 3, 1])), (9, rng.integers(0, 4, 9))]]
    _matches_onnxruntime(model, feeds)


def test_an_error_inside_a_function_body_names_the_node_there():
    """At opset 23 Attention's mask must span the keys (opset 24 pads a shorter one):
    the error names the body's node, under the function op's output and op type."""
    node = helper.make_node("Attention", ["q", "k", "v", "mask"], ["y"])
    model = _model(node, [helper.make_tensor_value_info("q", F, [1, 2, 3, 8]),
                          helper.make_tensor_value_info("k", F, [1, 2, 6, 8]),
                          helper.make_tensor_value_info("v", F, [1, 2, 6, 8]),
                          helper.make_tensor_value_info("mask", F, [3, 4])],
                   [helper.make_tensor_value_info("y", F, [1, 2, 3, 8])], 23)
    with pytest.raises(OnnxImportError, match=r"node 'y/Attention/\w+' \(Add\): .*cannot be broadcast \(6 vs 4\)"):
        import_onnx(model)
