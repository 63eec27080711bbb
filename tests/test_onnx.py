"""ONNX import: the node conformance cases that pass stay passing; models built with
onnx.helper (and exported from PyTorch when it is installed) match numpy and ONNX
Runtime at several sizes of their dynamic axes; errors list every problem at once."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr

import nimble
from nimble.compile import run_stages
from nimble.frontend.onnx import OnnxImportError, import_onnx
from nimble.onnx_conformance import node_cases, run_case
from nimble.reference import InterpreterError

EXPECTED = Path(__file__).resolve().parent / "onnx_conformance_pass.txt"


SHARDS = 8
"""The passing cases run as this many tests (every `SHARDS`-th case from each start), so
that a run on several cores (pytest -n auto) spreads them."""


@pytest.fixture(scope="module")
def passing_cases():
    """The listed cases (onnx builds all 1,884 in ~11 s: once per test process)."""
    listed = {line.strip() for line in EXPECTED.read_text().splitlines() if line.strip()}
    cases = [c for c in node_cases() if c.name in listed]
    assert len(cases) == len(listed), f"cases missing from the installed onnx: {listed - {c.name for c in cases}}"
    return cases


@pytest.mark.parametrize("shard", range(SHARDS))
def test_conformance_cases_that_passed_still_pass(shard, passing_cases):
    failed = [r for r in map(run_case, passing_cases[shard::SHARDS]) if r.status != "pass"]
    assert not failed, "\n".join(f"{r.name}: {r.status}: {r.message}" for r in failed[:20])


def _model(nodes, inputs, outputs, initializers=(), opset=17):
    graph = helper.make_graph(nodes, "g", inputs, outputs, [numpy_helper.from_array(a, n) for n, a in initializers])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    onnx.checker.check_model(model)
    return model


def _mlp(rng):
    w1, b1 = rng.standard_normal((64, 32)).astype(np.float32), rng.standard_normal(32).astype(np.float32)
    w2, b2 = rng.standard_normal((10, 32)).astype(np.float32), rng.standard_normal(10).astype(np.float32)
    nodes = [helper.make_node("MatMul", ["x", "w1"], ["h0"]), helper.make_node("Add", ["h0", "b1"], ["h1"]),
             helper.make_node("Relu", ["h1"], ["h"]),
             helper.make_node("Gemm", ["h", "w2", "b2"], ["logits"], transB=1),
             helper.make_node("Softmax", ["logits"], ["p"], axis=-1)]
    model = _model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 64])],
                   [helper.make_tensor_value_info("p", TensorProto.FLOAT, ["batch", 10])],
                   [("w1", w1), ("b1", b1), ("w2", w2), ("b2", b2)])

    def reference(x):
        logits = np.maximum(x @ w1 + b1, 0) @ w2.T + b2
        e = np.exp(logits - logits.max(-1, keepdims=True))
        return e / e.sum(-1, keepdims=True)
    return model, reference


def _cnn(rng):
    w = (rng.standard_normal((8, 3, 3, 3)) * 0.3).astype(np.float32)
    b = rng.standard_normal(8).astype(np.float32)
    fc, fb = rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal(4).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1], strides=[1, 1]),
             helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("MaxPool", ["r"], ["m"], kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("GlobalAveragePool", ["m"], ["g"]),
             helper.make_node("Flatten", ["g"], ["f"], axis=1),
             helper.make_node("Gemm", ["f", "fc", "fb"], ["y"], transB=1)]
    model = _model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 3, "h", "w"])],
                   [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 4])],
                   [("w", w), ("b", b), ("fc", fc), ("fb", fb)])
    return model, None


def _ort(model):
    ort = pytest.importorskip("onnxruntime")
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return lambda *args: session.run(None, {i.name: a for i, a in zip(session.get_inputs(), args)})


@pytest.mark.parametrize("batch", [1, 3, 7])
def test_mlp_with_a_dynamic_batch_matches_numpy_and_onnxruntime(batch, rng):
    model, reference = _mlp(rng)
    exe = nimble.compile(import_onnx(model))
    x = rng.standard_normal((batch, 64)).astype(np.float32)
    got = exe(x)
    np.testing.assert_allclose(got, reference(x), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got, _ort(model)(x)[0], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("size", [(1, 6, 6), (2, 9, 13)])
def test_cnn_with_dynamic_image_size_matches_onnxruntime(size, rng):
    model, _ = _cnn(rng)
    exe = nimble.compile(import_onnx(model))
    n, h, w = size
    x = rng.standard_normal((n, 3, h, w)).astype(np.float32)
    np.testing.assert_allclose(exe(x), _ort(model)(x)[0], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("n", [1, 3])
def test_dense_block_concatenations_match_onnxruntime(n, rng):
    """DenseNet's block: each layer's conv output concatenated after the features before
    it, batch-normalised and rectified as one (a kernel of its own: the conv's kernel
    copies no earlier features)."""
    nodes, inits, features = [], [], "x"
    channels = 8
    for layer in range(3):
        w = (rng.standard_normal((4, channels, 3, 3)) * 0.2).astype(np.float32)
        scale, bias = rng.uniform(0.5, 1.5, channels + 4).astype(np.float32), rng.standard_normal(channels + 4).astype(np.float32)
        mean, var = rng.standard_normal(channels + 4).astype(np.float32), rng.uniform(0.5, 2, channels + 4).astype(np.float32)
        inits += [(f"w{layer}", w), (f"s{layer}", scale), (f"b{layer}", bias), (f"m{layer}", mean), (f"v{layer}", var)]
        nodes += [helper.make_node("Conv", [features, f"w{layer}"], [f"c{layer}"], pads=[1, 1, 1, 1]),
                  helper.make_node("Concat", [features, f"c{layer}"], [f"cat{layer}"], axis=1),
                  helper.make_node("BatchNormalization", [f"cat{layer}", f"s{layer}", f"b{layer}", f"m{layer}",
                                                          f"v{layer}"], [f"bn{layer}"]),
                  helper.make_node("Relu", [f"bn{layer}"], [f"f{layer}"])]
        features, channels = f"f{layer}", channels + 4
    model = _model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 8, 10, 10])],
                   [helper.make_tensor_value_info(features, TensorProto.FLOAT, ["n", channels, 10, 10])], inits)
    x = rng.standard_normal((n, 8, 10, 10)).astype(np.float32)
    np.testing.assert_allclose(nimble.compile(import_onnx(model))(x), _ort(model)(x)[0], rtol=1e-4, atol=1e-4)


def test_dims_sharing_a_name_are_tied(rng):
    nodes = [helper.make_node("Add", ["a", "b"], ["c"])]
    model = _model(nodes, [helper.make_tensor_value_info("a", TensorProto.FLOAT, ["n", 4]),
                           helper.make_tensor_value_info("b", TensorProto.FLOAT, ["n", 4])],
                   [helper.make_tensor_value_info("c", TensorProto.FLOAT, ["n", 4])])
    exe = nimble.compile(import_onnx(model))
    a = rng.standard_normal((3, 4)).astype(np.float32)
    np.testing.assert_allclose(exe(a, a), a + a)
    # Checked at entry, where the symbol is bound: naming both inputs and the symbol.
    with pytest.raises(InterpreterError, match=r"argument #1 \(%b\): dim 0 is 1, but it is 'n' = 3, where 'n' is 3 "
                                               r"\(dim 0 of argument #0 \(%a\)\)"):
        exe(a, rng.standard_normal((1, 4)).astype(np.float32))


def test_initializers_are_constants_of_the_bytecode_not_text(rng, tmp_path):
    model, reference = _mlp(rng)
    exe = nimble.compile(import_onnx(model))
    assert len(exe.program.constants) == 4
    assert not any(isinstance(a, DenseIntOrFPElementsAttr) for op in exe.program.host_module.walk()
                   for a in [*op.properties.values(), *op.attributes.values()])
    exe.save(tmp_path / "mlp.nbc")
    x = rng.standard_normal((2, 64)).astype(np.float32)
    np.testing.assert_allclose(nimble.load(tmp_path / "mlp.nbc")(x), reference(x), rtol=1e-4, atol=1e-5)


def test_every_unsupported_op_is_listed_at_once():
    nodes = [helper.make_node("Relu", ["x"], ["a"]), helper.make_node("Hardmax", ["a"], ["b"], name="hm1"),
             helper.make_node("Det", ["b"], ["c"], name="det"), helper.make_node("Hardmax", ["c"], ["d"])]
    model = _model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                   [helper.make_tensor_value_info("d", TensorProto.FLOAT, [2, 3])])
    with pytest.raises(OnnxImportError) as e:
        import_onnx(model)
    text = str(e.value)
    assert "'Hardmax' used by 2 node(s): hm1, #3 -> d" in text and "'Det' used by 1 node(s): det" in text


_X = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 4])
_Y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 4])


def _unchecked(nodes, inputs=(_X,), opset=17):
    """A model as a careless or hostile writer makes it (`_model` checks its own)."""
    return helper.make_model(helper.make_graph(nodes, "g", list(inputs), [_Y]),
                             opset_imports=[helper.make_opsetid("", opset)])


@pytest.mark.parametrize(("nodes", "opset", "message"), [
    ([helper.make_node("Relu", ["undefined"], ["y"])], 17, "input 'undefined' of node"),
    ([helper.make_node("Relu", ["b"], ["a"]), helper.make_node("Relu", ["a"], ["b"]),
      helper.make_node("Relu", ["b"], ["y"])], 17, "topologically sorted"),
    ([helper.make_node("Relu", ["x"], ["y"]), helper.make_node("Sigmoid", ["x"], ["y"])], 17,
     "'y' has been used as output names multiple times"),
    ([helper.make_node("Relu", ["x"], ["y"])], 99, "opset 99 is newer than the newest this onnx defines"),
])
def test_models_onnx_runtime_refuses_are_refused(nodes, opset, message):
    """An undefined input, a cycle, a name defined twice (before: a traceback, or the first
    definition used), an opset from the future: each a clear error before any IR is built."""
    with pytest.raises(OnnxImportError, match=re.escape(message)):
        import_onnx(_unchecked(nodes, opset=opset))


def test_negative_dims_and_empty_files_are_refused(tmp_path):
    negative = helper.make_tensor_value_info("x", TensorProto.FLOAT, [-3, 4])
    with pytest.raises(OnnxImportError, match=re.escape("'x' has a negative dim (-3 at axis 0)")):
        import_onnx(_unchecked([helper.make_node("Relu", ["x"], ["y"])], [negative]))
    empty = tmp_path / "empty.onnx"
    empty.write_bytes(b"")
    with pytest.raises(OnnxImportError, match="not a valid ONNX model"):
        import_onnx(empty)


def _hostile_bytes(kind: str) -> bytes:
    """A model whose bytes a protobuf-level mutation changed past what onnx's checker sees."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 4])
    nodes = [helper.make_node("Conv", ["x4", "w"], ["c"], pads=[1, 1, 1, 1]), helper.make_node("Relu", ["x"], ["y"])]
    w = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[2, 1, 3, 3],
                    float_data=[1.0] * (20 if kind == "initializer size" else 18))  # (too many: the checker counts too few)
    model = helper.make_model(helper.make_graph(nodes[1:], "g", [x], [_Y], [w]),
                              opset_imports=[helper.make_opsetid("", 17)])
    if kind == "element type":
        model.graph.input[0].type.tensor_type.elem_type = 42
    data = model.SerializeToString()
    if kind == "dim name":  # not UTF-8: protobuf hands it over as bytes
        data = data.replace(b"\x12\x01n", b"\x12\x01\x82")
    if kind == "output name":  # (every use of the name: the node's output and the graph's)
        data = data.replace(b"\x12\x01y", b"\x12\x01\x8a")
    return data


@pytest.mark.parametrize(("kind", "message"), [
    ("initializer size", "initializer 'w': cannot read its data"),
    ("element type", "element type code 42 (not an ONNX type) is not supported"),
    ("dim name", "the dim name b'\\x82' is not UTF-8 text"),
    ("output name", "is not UTF-8 text"),
])
def test_mutated_model_bytes_get_a_clear_error(kind, message, tmp_path):
    """Found by `nimble-fuzz-coverage onnx`: each was a ValueError or TypeError traceback."""
    path = tmp_path / "model.onnx"
    path.write_bytes(_hostile_bytes(kind))
    try:
        import_onnx(path)
    except OnnxImportError as e:
        assert message in str(e)
    else:
        assert not message, "imported"


def test_an_attribute_of_another_type_than_the_schema_says_names_the_node():
    """Conv's `pads` as a float (the checker checks attribute names, not their types
    everywhere): a clear error naming the node, not an unpacking ValueError."""
    image = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 1, 5, 5])
    out = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 2, 5, 5])
    w = numpy_helper.from_array(np.ones((2, 1, 3, 3), np.float32), "w")
    conv = helper.make_node("Conv", ["x", "w"], ["y"], name="conv0", pads=[1, 1, 1, 1, 1, 1])
    model = helper.make_model(helper.make_graph([conv], "g", [image], [out], [w]),
                              opset_imports=[helper.make_opsetid("", 17)])
    with pytest.raises(OnnxImportError, match=r"node 'conv0' \(Conv\)"):
        import_onnx(model)


def _layout_model(rng):
    """Pad in every mode, Tile, Range over Size and over a dim, GatherElements and the
    rounding/trigonometric ops, on an input whose batch dim is known only at run time."""
    f32 = TensorProto.FLOAT
    i64 = TensorProto.INT64
    pads = {"constant": [1, 2, 0, 1], "reflect": [0, 2, 0, 1], "edge": [2, 0, 1, 0], "wrap": [1, 2, 1, 1]}
    nodes = [helper.make_node("Pad", ["x", f"pads_{m}", "value"], [f"pad_{m}"], mode=m) for m in pads]
    nodes += [
        helper.make_node("Pad", ["x", "crop"], ["pad_negative"]),
        helper.make_node("Tile", ["x", "repeats"], ["tiled"]),
        helper.make_node("Size", ["x"], ["size"]),
        helper.make_node("Range", ["zero", "size", "two"], ["range_size"]),
        helper.make_node("Shape", ["x"], ["shape"]),
        helper.make_node("Gather", ["shape", "zero"], ["rows"]),
        helper.make_node("Range", ["rows", "zero", "minus_one"], ["range_rows"]),
        helper.make_node("GatherElements", ["x", "idx"], ["picked"], axis=1),
        *[helper.make_node(op, ["x"], [op.lower()]) for op in ("Floor", "Ceil", "Round", "Sign", "Sin", "Cos")],
    ]
    initializers = [(f"pads_{m}", np.array(p, np.int64)) for m, p in pads.items()]
    initializers += [("value", np.array(1.5, np.float32)), ("crop", np.array([0, -1, -1, 0], np.int64)),
                     ("repeats", np.array([2, 3], np.int64)), ("zero", np.array(0, np.int64)),
                     ("two", np.array(2, np.int64)), ("minus_one", np.array(-1, np.int64))]
    outputs = [*(f"pad_{m}" for m in pads), "pad_negative", "tiled", "picked",
               "floor", "ceil", "round", "sign", "sin", "cos"]
    model = _model(nodes, [helper.make_tensor_value_info("x", f32, ["n", 5]),
                           helper.make_tensor_value_info("idx", i64, ["n", 3])],
                   [*(helper.make_tensor_value_info(o, f32, [None, None]) for o in outputs),
                    helper.make_tensor_value_info("range_size", i64, [None]),
                    helper.make_tensor_value_info("range_rows", i64, [None])], initializers, opset=19)
    return model


@pytest.mark.parametrize("n", [1, 4, 7])
def test_pad_tile_range_size_gather_elements_match_onnxruntime(n, rng):
    model = _layout_model(rng)
    exe = nimble.compile(import_onnx(model))
    x = (rng.standard_normal((n, 5)) * 3).astype(np.float32)
    x[0, :3] = [0.5, -2.5, 0.0]  # halves round to even; sign of zero
    idx = rng.integers(-5, 5, (n, 3)).astype(np.int64)
    got, want = exe(x, idx), _ort(model)(x, idx)
    assert len(got) == len(want) == 15
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("n", [1, 3])
def test_resize_in_its_modes_matches_onnxruntime(n, rng):
    """Nearest (scales), linear (sizes on two axes), cubic with align_corners, and a
    downsampling linear with antialias, on a batch known only at run time."""
    f32 = TensorProto.FLOAT
    nodes = [
        helper.make_node("Resize", ["x", "", "up2"], ["nearest"], mode="nearest",
                         coordinate_transformation_mode="asymmetric", nearest_mode="floor"),
        helper.make_node("Resize", ["x", "", "", "hw"], ["linear"], mode="linear", axes=[2, 3]),
        helper.make_node("Resize", ["x", "", "up2"], ["cubic"], mode="cubic",
                         coordinate_transformation_mode="align_corners"),
        helper.make_node("Resize", ["x", "", "down"], ["smooth"], mode="linear", antialias=1),
    ]
    initializers = [("up2", np.array([1, 1, 2, 2], np.float32)), ("hw", np.array([7, 3], np.int64)),
                    ("down", np.array([1, 1, 0.5, 0.6], np.float32))]
    outputs = [helper.make_tensor_value_info(o, f32, [None] * 4) for o in ("nearest", "linear", "cubic", "smooth")]
    model = _model(nodes, [helper.make_tensor_value_info("x", f32, ["n", 2, 4, 5])], outputs, initializers, opset=19)
    exe = nimble.compile(import_onnx(model))
    x = rng.standard_normal((n, 2, 4, 5)).astype(np.float32)
    got, want = exe(x), _ort(model)(x)
    for g, w in zip(got, want):
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


def test_resizing_a_dim_known_only_at_run_time_is_named():
    node = helper.make_node("Resize", ["x", "", "s"], ["y"], mode="nearest", name="up")
    model = _model([node], [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, "h", 4])],
                   [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None] * 4)],
                   [("s", np.array([1, 1, 2, 2], np.float32))])
    with pytest.raises(OnnxImportError, match="node 'up' .Resize.: resizing dim 2, known only at run time"):
        import_onnx(model)


@pytest.mark.parametrize("n", [1, 3])
def test_trilu_matches_onnxruntime(n, rng):
    f32 = TensorProto.FLOAT
    nodes = [helper.make_node("Trilu", ["x", "one"], ["upper"]),
             helper.make_node("Trilu", ["x", "minus_one"], ["lower"], upper=0)]
    model = _model(nodes, [helper.make_tensor_value_info("x", f32, ["n", 3, 4])],
                   [helper.make_tensor_value_info(o, f32, ["n", 3, 4]) for o in ("upper", "lower")],
                   [("one", np.array(1, np.int64)), ("minus_one", np.array(-1, np.int64))], opset=14)
    exe = nimble.compile(import_onnx(model))
    x = rng.standard_normal((n, 3, 4)).astype(np.float32)
    for got, want in zip(exe(x), _ort(model)(x)):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("k", [-2, 0, 1])
def test_trilu_of_a_matrix_known_only_at_run_time_matches_onnxruntime(k, rng):
    """GPT-2's causal mask: Trilu over (sequence, sequence) dims known only at run time,
    its mask built from column and row numbers at run time."""
    f32 = TensorProto.FLOAT
    nodes = [helper.make_node("Trilu", ["x", "k"], ["upper"]), helper.make_node("Trilu", ["x", "k"], ["lower"], upper=0)]
    model = _model(nodes, [helper.make_tensor_value_info("x", f32, ["b", "r", "c"])],
                   [helper.make_tensor_value_info(o, f32, ["b", "r", "c"]) for o in ("upper", "lower")],
                   [("k", np.array(k, np.int64))], opset=14)
    exe, ort = nimble.compile(import_onnx(model)), _ort(model)
    for shape in [(1, 1, 1), (2, 3, 5), (1, 6, 4), (3, 17, 17)]:
        x = rng.standard_normal(shape).astype(np.float32)
        for got, want in zip(exe(x), ort(x)):
            np.testing.assert_array_equal(got, want)


def test_pad_and_tile_arguments_that_cannot_work_are_named():
    f32 = TensorProto.FLOAT
    x = [helper.make_tensor_value_info("x", f32, [2, 3])]
    y = [helper.make_tensor_value_info("y", f32, [None, None])]
    reflect = _model([helper.make_node("Pad", ["x", "p"], ["y"], mode="reflect", name="pad")], x, y,
                     [("p", np.array([0, 3, 0, 0], np.int64))])
    with pytest.raises(OnnxImportError, match="node 'pad' .Pad.: reflect pads of 3 need more than 3 elements"):
        import_onnx(reflect)
    # Along a dim known only at run time, wrap pads larger than the dim are a run-time error.
    wrap = _model([helper.make_node("Pad", ["x", "p"], ["y"], mode="wrap", name="pad")],
                  [helper.make_tensor_value_info("x", f32, ["n", 3])], y, [("p", np.array([2, 0, 0, 0], np.int64))],
                  opset=19)
    exe = nimble.compile(import_onnx(wrap))
    assert exe(np.arange(9, dtype=np.float32).reshape(3, 3))[:2].tolist() == [[3, 4, 5], [6, 7, 8]]
    with pytest.raises(InterpreterError, match="node 'pad' .Pad.: wrap pads need dim 0 to be at least 2 .1 vs 2."):
        exe(np.zeros((1, 3), np.float32))
    tile = _model([helper.make_node("Tile", ["x", "r"], ["y"], name="tile")], x, y, [("r", np.array([2], np.int64))])
    with pytest.raises(OnnxImportError, match="node 'tile' .Tile.: repeats must be 2 counts"):
        import_onnx(tile)


@pytest.mark.parametrize("dtype,fmod", [(np.int64, 0), (np.int32, 1), (np.float32, 1)])
def test_mod_of_tensors_matches_onnxruntime(dtype, fmod, rng):
    """Mod of tensors computed at run time (mixed signs, a broadcast divisor): Python's
    % for fmod=0, C's fmod for fmod=1."""
    t = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    model = _model([helper.make_node("Mod", ["x", "y"], ["z"], fmod=fmod)],
                   [helper.make_tensor_value_info("x", t, ["n", 4]), helper.make_tensor_value_info("y", t, [4])],
                   [helper.make_tensor_value_info("z", t, ["n", 4])])
    exe = nimble.compile(import_onnx(model))
    y = np.array([3, -3, 7, -2], dtype)
    if dtype == np.float32:
        y = y * 1.5
    for n in (1, 5):
        x = (rng.integers(-20, 20, (n, 4)) * (1.25 if dtype == np.float32 else 1)).astype(dtype)
        got, want = exe(x, y), _ort(model)(x, y)[0]
        np.testing.assert_allclose(got, want, rtol=1e-6)


def test_mod_of_floats_without_fmod_is_named():
    node = helper.make_node("Mod", ["x", "x"], ["y"], name="mod")
    model = _model([node], [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
                   [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])])
    with pytest.raises(OnnxImportError, match="node 'mod' .Mod.: Mod of floats needs fmod=1"):
        import_onnx(model)


def test_tools_take_onnx_files(tmp_path, rng):
    model, _ = _mlp(rng)
    path = tmp_path / "mlp.onnx"
    onnx.save(model, str(path))
    # (cwd outside the checkout: its `nimble/` folder is not the installed package)
    opt = subprocess.run([sys.executable, "-m", "nimble.opt", str(path), "-p", "infer-shapes"],
                         capture_output=True, text=True, cwd=tmp_path)
    assert opt.returncode == 0, opt.stderr
    assert "graph.softmax" in opt.stdout
    run = subprocess.run([sys.executable, "-m", "nimble.run_cli", str(path), "--dim", "5", "--check"],
                         capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert "float32[5, 10]" in run.stdout
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"not a model")
    failed = subprocess.run([sys.executable, "-m", "nimble.run_cli", str(bad)], capture_output=True, text=True,
                            cwd=tmp_path)
    assert failed.returncode == 1 and "not an ONNX model" in failed.stderr and "Traceback" not in failed.stderr




@pytest.mark.parametrize("batch", [1, 4])
def test_pytorch_exported_mlp_and_cnn_match_onnxruntime(batch, tmp_path, rng):
    torch = pytest.importorskip("torch")

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
            self.fc = torch.nn.Linear(8, 5)

        def forward(self, x):
            y = torch.nn.functional.max_pool2d(torch.relu(self.conv(x)), 2)
            return torch.softmax(self.fc(y.mean(dim=(2, 3))), dim=-1)

    net = Net().eval()
    path = tmp_path / "net.onnx"
    x = torch.randn(batch, 3, 12, 12)
    torch.onnx.export(net, (x,), str(path), input_names=["x"], output_names=["y"], opset_version=17,
                      dynamic_axes={"x": {0: "n", 2: "h", 3: "w"}}, dynamo=False)
    model = onnx.load(str(path))
    exe = nimble.compile(str(path))
    for h, w in ((12, 12), (9, 14)):
        xi = rng.standard_normal((batch, 3, h, w)).astype(np.float32)
        np.testing.assert_allclose(exe(xi), _ort(model)(xi)[0], rtol=1e-4, atol=1e-5)


def _lstm_model(rng, hidden=16, inputs=8, with_states=True):
    w = (rng.standard_normal((1, 4 * hidden, inputs)) * 0.3).astype(np.float32)
    r = (rng.standard_normal((1, 4 * hidden, hidden)) * 0.3).astype(np.float32)
    b = (rng.standard_normal((1, 8 * hidden)) * 0.1).astype(np.float32)
    names = ["x", "W", "R", "B", "", "h0", "c0"] if with_states else ["x", "W", "R", "B"]
    node = helper.make_node("LSTM", names, ["y", "yh", "yc"], hidden_size=hidden)
    graph_inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["t", "n", inputs])]
    if with_states:
        graph_inputs += [helper.make_tensor_value_info(k, TensorProto.FLOAT, [1, "n", hidden]) for k in ("h0", "c0")]
    outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["t", 1, "n", hidden]),
               helper.make_tensor_value_info("yh", TensorProto.FLOAT, [1, "n", hidden]),
               helper.make_tensor_value_info("yc", TensorProto.FLOAT, [1, "n", hidden])]
    return _model([node], graph_inputs, outputs, [("W", w), ("R", r), ("B", b)], opset=14)


@pytest.mark.parametrize("with_states", [True, False])
def test_lstm_becomes_a_loop_over_a_fused_cell_and_matches_onnxruntime(with_states, rng):
    model = _lstm_model(rng, with_states=with_states)
    module = import_onnx(model)
    assert any(op.name == "graph.while" for op in module.walk())
    exe = nimble.compile(module)
    # One kernel projects the input of every step (hoisted, a dense layer over the
    # constant weights: `matmul-to-dense`), one runs the whole loop, stacking `y`.
    assert sum(k.startswith("main_dense") for k in exe.kernel_names) == 1, exe.kernel_names
    assert "main_rnn_0" in exe.kernel_names
    ort_run = _ort(model)
    for t, n in ((1, 1), (5, 3), (9, 2)):
        args = [rng.standard_normal((t, n, 8)).astype(np.float32)]
        if with_states:
            args += [rng.standard_normal((1, n, 16)).astype(np.float32) for _ in range(2)]
        for got, want in zip(exe.run(*args), ort_run(*args)):
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_lstm_without_its_stacked_output_keeps_only_what_is_used(rng):
    """Only the last hidden state is an output (as PyTorch's `lstm(x)[1][0]`): the
    stacked outputs are no longer carried (canonicalize drops dead carried values), and
    the weights' squeeze/transpose are folded at compile time (weights of 16k and 20k
    elements, above the fold limit of compute ops); still ONNX Runtime's result."""
    model = _lstm_model(rng, hidden=64, inputs=80, with_states=False)
    del model.graph.output[0]  # y
    del model.graph.output[1]  # yc
    module = import_onnx(model)
    graph_level = module.clone()
    run_stages(graph_level, ["graph"], {})
    (loop,) = [op for op in graph_level.walk() if op.name == "graph.while"]
    assert len(loop.results) == 3  # the counter, h and c; no stack of every step's h
    exe = nimble.compile(module)
    assert not any("squeeze" in k or "transpose" in k for k in exe.kernel_names), exe.kernel_names
    # The projection is one product over the T x batch rows (its reshapes are views), the
    # loop one recurrence kernel.
    assert [k for k in exe.kernel_names if "dense" in k or "matmul" in k or "reshape" in k] == ["main_dense_0"], \
        exe.kernel_names
    assert "main_rnn_0" in exe.kernel_names
    ort_run = _ort(model)
    for t, n in ((1, 1), (6, 3)):
        x = rng.standard_normal((t, n, 80)).astype(np.float32)
        np.testing.assert_allclose(exe.run(x)[0], ort_run(x)[0], rtol=1e-4, atol=1e-5)


def test_constant_recurrent_weights_are_padded_once_at_compile_time(tmp_path, rng):
    """Recurrent weights of 1 KB rows (hidden 256) are read with rows one cache line
    longer (`pad_rows`); when they are a constant, the padded matrix is a constant of the
    module made at compile time, not a copy the kernel makes at every call; the loop's
    reference semantics (its group) reads them sliced back. Constants start on cache
    lines, compiled and loaded: ONNX Runtime's results at 1 to 25 steps, batch 1 and 3."""
    from xdsl.dialects.builtin import MemRefType

    from nimble.dialects import loop
    from nimble.runtime.pointers import data_pointer

    model = _lstm_model(rng, hidden=256, inputs=8, with_states=False)
    del model.graph.output[0]  # y
    exe = nimble.compile(import_onnx(model))
    (kernel,) = [f for f in exe.module.ops if getattr(f, "sym_name", None) and f.sym_name.data == "main_rnn_0"]
    assert (1024, 272) in [tuple(t.get_shape()) for t in kernel.function_type.inputs if isinstance(t, MemRefType)]
    assert not [o for o in kernel.walk() if isinstance(o, loop.AllocOp) and o.memref.type.get_shape() == (1024, 272)]
    exe.save(tmp_path / "lstm.nbc")
    loaded = nimble.load(tmp_path / "lstm.nbc")
    ort_run = _ort(model)
    for runner in (exe, loaded):
        assert all(data_pointer(c) % 64 == 0 for c in runner.program.constants)
        for t, n in ((1, 1), (7, 3), (25, 1)):
            x = rng.standard_normal((t, n, 8)).astype(np.float32)
            for got, want in zip(runner.run(x), ort_run(x)):  # sums of 256 products in another order
                np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_pytorch_exported_lstm_with_a_dynamic_time_axis(tmp_path, rng):
    torch = pytest.importorskip("torch")
    lstm = torch.nn.LSTM(8, 16).eval()
    path = tmp_path / "lstm.onnx"
    torch.onnx.export(lstm, (torch.randn(5, 2, 8),), str(path), input_names=["x"], output_names=["y", "h", "c"],
                      opset_version=17, dynamic_axes={"x": {0: "t", 1: "n"}}, dynamo=False)
    model = onnx.load(str(path))
    exe = nimble.compile(str(path))
    for t, n in ((1, 1), (7, 3)):
        x = rng.standard_normal((t, n, 8)).astype(np.float32)
        for got, want in zip(exe.run(x), _ort(model)(x)):
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("kind", ["GRU", "LSTM"])
def test_pytorch_exported_bidirectional_two_layer_rnn_with_dynamic_time_and_batch(kind, tmp_path, rng):
    """The exporter joins the two directions' outputs with Reshape(y, [0, 0, -1]) over
    dims known only at run time (it failed to import: "a 0 in the target shape copies
    an unknown dim")."""
    torch = pytest.importorskip("torch")
    net = getattr(torch.nn, kind)(8, 16, num_layers=2, bidirectional=True).eval()
    path = tmp_path / "rnn.onnx"
    torch.onnx.export(net, (torch.randn(5, 2, 8),), str(path), input_names=["x"], output_names=["y"],
                      opset_version=17, dynamic_axes={"x": {0: "t", 1: "n"}}, dynamo=False)
    exe, ort = nimble.compile(str(path)), _ort(onnx.load(str(path)))
    for t, n in ((1, 1), (5, 3), (9, 2)):
        x = rng.standard_normal((t, n, 8)).astype(np.float32)
        np.testing.assert_allclose(exe.run(x)[0], ort(x)[0], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("linear_before_reset", [0, 1])
def test_gru_matches_onnxruntime(linear_before_reset, rng):
    hidden, inputs = 16, 8
    w = (rng.standard_normal((1, 3 * hidden, inputs)) * 0.3).astype(np.float32)
    r = (rng.standard_normal((1, 3 * hidden, hidden)) * 0.3).astype(np.float32)
    b = (rng.standard_normal((1, 6 * hidden)) * 0.1).astype(np.float32)
    node = helper.make_node("GRU", ["x", "W", "R", "B", "", "h0"], ["y", "yh"], hidden_size=hidden,
                            linear_before_reset=linear_before_reset)
    model = _model([node], [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["t", "n", inputs]),
                            helper.make_tensor_value_info("h0", TensorProto.FLOAT, [1, "n", hidden])],
                   [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["t", 1, "n", hidden]),
                    helper.make_tensor_value_info("yh", TensorProto.FLOAT, [1, "n", hidden])],
                   [("W", w), ("R", r), ("B", b)], opset=14)
    exe = nimble.compile(import_onnx(model))
    ort_run = _ort(model)
    for t, n in ((1, 1), (6, 3)):
        args = [rng.standard_normal((t, n, inputs)).astype(np.float32),
                rng.standard_normal((1, n, hidden)).astype(np.float32)]
        for got, want in zip(exe.run(*args), ort_run(*args)):
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}


def _recurrent_model(rng, op, direction="forward", layout=0, lengths=False, peepholes=False, activations=None,
                     hidden=5, inputs=3):
    d = 2 if direction == "bidirectional" else 1
    g = GATES[op]
    init = [("W", (rng.standard_normal((d, g * hidden, inputs)) * 0.5).astype(np.float32)),
            ("R", (rng.standard_normal((d, g * hidden, hidden)) * 0.5).astype(np.float32)),
            ("B", (rng.standard_normal((d, 2 * g * hidden)) * 0.2).astype(np.float32))]
    seq, batch = ("n", "t") if layout else ("t", "n")
    x_shape = [seq, batch, inputs] if not layout else ["n", "t", inputs]
    state = [d, "n", hidden] if not layout else ["n", d, hidden]
    names = ["x", "W", "R", "B", "lens" if lengths else "", "h0"]
    graph_inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)]
    if lengths:
        graph_inputs.append(helper.make_tensor_value_info("lens", TensorProto.INT32, ["n"]))
    graph_inputs.append(helper.make_tensor_value_info("h0", TensorProto.FLOAT, state))
    outputs = ["y", "yh"]
    if op == "LSTM":
        names.append("c0")
        graph_inputs.append(helper.make_tensor_value_info("c0", TensorProto.FLOAT, state))
        outputs.append("yc")
        if peepholes:
            names.append("P")
            init.append(("P", (rng.standard_normal((d, 3 * hidden)) * 0.5).astype(np.float32)))
    attrs = {"hidden_size": hidden, "direction": direction, "layout": layout}
    if activations:
        attrs["activations"] = activations * d
    node = helper.make_node(op, names, outputs, **attrs)
    y_shape = ["t", d, "n", hidden] if not layout else ["n", "t", d, hidden]
    outs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, y_shape)]
    outs += [helper.make_tensor_value_info(o, TensorProto.FLOAT, state) for o in outputs[1:]]
    return _model([node], graph_inputs, outs, init, opset=14), d


CASES = [
    ("RNN", {}), ("RNN", {"direction": "reverse"}), ("RNN", {"direction": "bidirectional", "layout": 1}),
    ("RNN", {"activations": ["Relu"]}), ("GRU", {"direction": "reverse"}), ("GRU", {"direction": "bidirectional"}),
    ("GRU", {"lengths": True}), ("LSTM", {"direction": "bidirectional"}), ("LSTM", {"layout": 1}),
    ("LSTM", {"lengths": True, "peepholes": True}), ("LSTM", {"activations": ["Sigmoid", "Relu", "Tanh"]}),
]


@pytest.mark.parametrize("op,options", CASES, ids=[f"{op}-{'-'.join(f'{k}={v}' for k, v in o.items())}"
                                                   for op, o in CASES])
def test_recurrent_ops_match_onnxruntime(op, options, rng):
    """RNN, GRU and LSTM in every direction and layout, with per-sequence lengths (steps
    past a sequence's length keep its state and output 0), peepholes and non-default
    activations, against ONNX Runtime at several lengths and batches (1 included)."""
    seed = int(rng.integers(1 << 30))
    model, d = _recurrent_model(np.random.default_rng(seed), op, **options)
    exe = nimble.compile(import_onnx(model))
    layout = options.get("layout", 0)
    if layout:  # ONNX Runtime has no batch-first recurrences: the same weights, time first
        twin, _ = _recurrent_model(np.random.default_rng(seed), op, **{**options, "layout": 0})
        time_first = _ort(twin)

        def ort_run(x, *states):
            y, *last = time_first(x.transpose(1, 0, 2), *(s.transpose(1, 0, 2) for s in states))
            return [y.transpose(2, 0, 1, 3), *(v.transpose(1, 0, 2) for v in last)]
    else:
        ort_run = _ort(model)
    for t, n in ((1, 1), (6, 3), (4, 2)):
        x = rng.standard_normal((n, t, 3) if layout else (t, n, 3)).astype(np.float32)
        args = [x]
        if options.get("lengths"):
            args.append(np.array([t, max(1, t - 2), t - 1 or 1][:n], np.int32))
        states = [rng.standard_normal((n, d, 5) if layout else (d, n, 5)).astype(np.float32)
                  for _ in range(2 if op == "LSTM" else 1)]
        args += states
        for got, want in zip(exe.run(*args), ort_run(*args)):
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_recurrent_options_that_are_not_supported_are_named(rng):
    model, _ = _recurrent_model(rng, "GRU", direction="reverse", lengths=True)
    with pytest.raises(OnnxImportError, match="sequence_lens with direction 'reverse'"):
        import_onnx(model)
    model, _ = _recurrent_model(rng, "RNN", activations=["Softsign"])
    with pytest.raises(OnnxImportError, match="activations Softsign"):
        import_onnx(model)


def _if_model(rng, else_op="Neg"):
    w = rng.standard_normal((4, 8)).astype(np.float32)
    small, large = np.arange(3, dtype=np.float32)[None], np.arange(6, dtype=np.float32).reshape(2, 3)

    def branch(name, nodes, outputs):
        return helper.make_graph(nodes, name, [], [helper.make_tensor_value_info(o, TensorProto.FLOAT, s)
                                                   for o, s in outputs])

    then_g = branch("then", [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("MatMul", ["r", "W"], ["a"]),
                             helper.make_node("Constant", [], ["k1"], value=numpy_helper.from_array(small))],
                    [("a", ["n", 8]), ("k1", [1, 3])])
    else_g = branch("else", [helper.make_node("MatMul", ["x", "W"], ["m"]), helper.make_node(else_op, ["m"], ["a2"]),
                             helper.make_node("Constant", [], ["k2"], value=numpy_helper.from_array(large))],
                    [("a2", ["n", 8]), ("k2", [2, 3])])
    node = helper.make_node("If", ["c"], ["y", "k"], then_branch=then_g, else_branch=else_g)
    return _model([node], [helper.make_tensor_value_info("c", TensorProto.BOOL, []),
                           helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 4])],
                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 8]),
                   helper.make_tensor_value_info("k", TensorProto.FLOAT, ["m", 3])], [("W", w)])


def test_if_becomes_graph_if_and_matches_onnxruntime(rng):
    """Branches read outer values (x, the initializer W) by name; an output whose shape
    differs between the branches (1x3 or 2x3) becomes ?x3."""
    model = _if_model(rng)
    module = import_onnx(model)
    (op,) = [o for o in module.walk() if o.name == "graph.if"]
    assert str(op.results[1].type) == "tensor<?x3xf32>"
    exe = nimble.compile(module)
    ort_run = _ort(model)
    for n in (1, 3):
        x = rng.standard_normal((n, 4)).astype(np.float32)
        for c in (True, False):
            for got, want in zip(exe.run(np.array(c), x), ort_run(np.array(c), x)):
                np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_unsupported_ops_inside_branches_are_listed(rng):
    with pytest.raises(OnnxImportError, match=r"unsupported op type 'Det'.*#0 -> y, k/else_branch/#1 -> a2"):
        import_onnx(_if_model(rng, else_op="Det"))


def _loop_model(threshold=1e9):
    """acc <- acc * 0.5 + x + iter while iter < M and sum(acc) < threshold; every step's
    acc stacked (its batch dim is known only at run time)."""
    body = helper.make_graph(
        [helper.make_node("Cast", ["iter"], ["fi"], to=TensorProto.FLOAT),
         helper.make_node("Constant", [], ["half"], value=numpy_helper.from_array(np.array(0.5, np.float32))),
         helper.make_node("Mul", ["acc_in", "half"], ["scaled"]),
         helper.make_node("Add", ["scaled", "x"], ["added"]),
         helper.make_node("Add", ["added", "fi"], ["acc_out"]),
         helper.make_node("ReduceSum", ["acc_out"], ["total"], keepdims=0),
         helper.make_node("Constant", [], ["limit"], value=numpy_helper.from_array(np.array(threshold, np.float32))),
         helper.make_node("Less", ["total", "limit"], ["cond_out"]),
         helper.make_node("Identity", ["acc_out"], ["scan"])],
        "body",
        [helper.make_tensor_value_info("iter", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc_in", TensorProto.FLOAT, ["n", 4])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc_out", TensorProto.FLOAT, ["n", 4]),
         helper.make_tensor_value_info("scan", TensorProto.FLOAT, ["n", 4])])
    node = helper.make_node("Loop", ["M", "", "acc0"], ["acc", "stack"], body=body)
    return _model([node], [helper.make_tensor_value_info("M", TensorProto.INT64, []),
                           helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 4]),
                           helper.make_tensor_value_info("acc0", TensorProto.FLOAT, ["n", 4])],
                  [helper.make_tensor_value_info("acc", TensorProto.FLOAT, ["n", 4]),
                   helper.make_tensor_value_info("stack", TensorProto.FLOAT, ["k", "n", 4])])


@pytest.mark.parametrize("threshold", [1e9, 12.0])
def test_loop_becomes_graph_while_and_matches_onnxruntime(threshold, rng):
    """A trip count given at run time (0 included), an early exit decided by the body
    (threshold 12), the iteration number used as a tensor, a scan output whose batch dim
    is known only at run time."""
    model = _loop_model(threshold)
    module = import_onnx(model)
    assert any(o.name == "graph.while" for o in module.walk())
    exe = nimble.compile(module)
    ort_run = _ort(model)
    for trips, n in ((0, 2), (1, 1), (5, 3)):
        args = [np.array(trips, np.int64), rng.standard_normal((n, 4)).astype(np.float32),
                rng.standard_normal((n, 4)).astype(np.float32)]
        got, want = exe.run(*args), ort_run(*args)
        assert got[1].shape[0] == want[1].shape[0]
        np.testing.assert_allclose(got[0], want[0], rtol=1e-5, atol=1e-5)
        if want[1].shape[0]:
            np.testing.assert_allclose(got[1], want[1], rtol=1e-5, atol=1e-5)


def test_scan_becomes_graph_while_and_matches_onnxruntime(rng):
    """A running sum over a sequence of dynamic length and batch: the state and the
    stacked scan output (twice the running sum) against ONNX Runtime."""
    body = helper.make_graph(
        [helper.make_node("Add", ["s_in", "x_t"], ["s_out"]),
         helper.make_node("Add", ["s_out", "s_out"], ["y_t"])],
        "body",
        [helper.make_tensor_value_info("s_in", TensorProto.FLOAT, ["n", 4]),
         helper.make_tensor_value_info("x_t", TensorProto.FLOAT, ["n", 4])],
        [helper.make_tensor_value_info("s_out", TensorProto.FLOAT, ["n", 4]),
         helper.make_tensor_value_info("y_t", TensorProto.FLOAT, ["n", 4])])
    node = helper.make_node("Scan", ["s0", "xs"], ["s", "ys"], body=body, num_scan_inputs=1)
    model = _model([node], [helper.make_tensor_value_info("s0", TensorProto.FLOAT, ["n", 4]),
                            helper.make_tensor_value_info("xs", TensorProto.FLOAT, ["t", "n", 4])],
                   [helper.make_tensor_value_info("s", TensorProto.FLOAT, ["n", 4]),
                    helper.make_tensor_value_info("ys", TensorProto.FLOAT, ["t", "n", 4])])
    exe = nimble.compile(import_onnx(model))
    ort_run = _ort(model)
    for t, n in ((1, 1), (5, 3)):
        args = [rng.standard_normal((n, 4)).astype(np.float32), rng.standard_normal((t, n, 4)).astype(np.float32)]
        for got, want in zip(exe.run(*args), ort_run(*args)):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def _encoder_block(torch):
    import math

    class Block(torch.nn.Module):
        """Self-attention (4 heads) + feed-forward with GELU, post-LayerNorm; reshapes
        written with the run-time batch and sequence sizes, as models usually are."""

        def __init__(self, d=32, heads=4):
            super().__init__()
            self.heads = heads
            self.qkv, self.out = torch.nn.Linear(d, 3 * d), torch.nn.Linear(d, d)
            self.ln1, self.ln2 = torch.nn.LayerNorm(d), torch.nn.LayerNorm(d)
            self.ff1, self.ff2 = torch.nn.Linear(d, 2 * d), torch.nn.Linear(2 * d, d)

        def forward(self, x):
            n, t, d = x.shape
            q, k, v = self.qkv(x).chunk(3, dim=-1)
            q, k, v = (z.reshape(n, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
            att = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(d // self.heads), dim=-1)
            x = self.ln1(x + self.out((att @ v).transpose(1, 2).reshape(n, t, d)))
            return self.ln2(x + self.ff2(torch.nn.functional.gelu(self.ff1(x))))

    return Block


def test_pytorch_transformer_encoder_with_a_dynamic_sequence_axis(tmp_path, rng):
    """Two encoder blocks exported with dynamic batch and sequence axes: the shape
    computations (Shape/Gather/Concat into Reshape, the 1/sqrt(head dim) scale) are
    followed, and the result matches ONNX Runtime at every size."""
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    block = _encoder_block(torch)
    model = torch.nn.Sequential(block(), block()).eval()
    path = tmp_path / "encoder.onnx"
    torch.onnx.export(model, (torch.randn(2, 7, 32),), str(path), input_names=["x"], output_names=["y"],
                      opset_version=17, dynamic_axes={"x": {0: "n", 1: "s"}}, dynamo=False)
    exe = nimble.compile(str(path))
    ort_run = _ort(onnx.load(str(path)))
    for n, s in ((1, 1), (2, 7), (3, 13)):
        x = rng.standard_normal((n, s, 32)).astype(np.float32)
        np.testing.assert_allclose(exe.run(x)[0], ort_run(x)[0], rtol=1e-4, atol=1e-5)


def test_pytorch_nn_transformer_encoder(tmp_path, rng):
    """`nn.TransformerEncoder` as the TorchScript exporter writes it (the head split's
    reshape keeps the export's sequence length as a constant, folded here from Mod and
    Reshape of constants): it matches ONNX Runtime at the export's size; at another
    sequence length both reject the reshape (Nimble with a shape error, not a crash)."""
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(d_model=32, nhead=4, dim_feedforward=64, dropout=0.0, batch_first=True)
    model = torch.nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False).eval()
    path = tmp_path / "encoder.onnx"
    torch.onnx.export(model, (torch.randn(2, 7, 32),), str(path), input_names=["x"], output_names=["y"],
                      opset_version=17, dynamic_axes={"x": {0: "n", 1: "s"}}, dynamo=False)
    exe = nimble.compile(str(path))
    x = rng.standard_normal((2, 7, 32)).astype(np.float32)
    np.testing.assert_allclose(exe.run(x)[0], _ort(onnx.load(str(path)))(x)[0], rtol=1e-4, atol=1e-5)
    with pytest.raises(InterpreterError, match="reshape changes the number of elements"):
        exe.run(rng.standard_normal((2, 9, 32)).astype(np.float32))


def test_mod_of_a_dim_is_index_arithmetic(rng):
    """x[: len(x) % 3]: the bound is Shape -> Gather -> Mod, computed at run time."""
    three = numpy_helper.from_array(np.array(3, np.int64))
    nodes = [helper.make_node("Shape", ["x"], ["s"]),
             helper.make_node("Constant", [], ["zero"], value=numpy_helper.from_array(np.array(0, np.int64))),
             helper.make_node("Gather", ["s", "zero"], ["n"]),
             helper.make_node("Constant", [], ["three"], value=three),
             helper.make_node("Mod", ["n", "three"], ["r"]),
             helper.make_node("Unsqueeze", ["r", "axes"], ["end"]),
             helper.make_node("Slice", ["x", "start", "end"], ["y"])]
    model = _model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 2])],
                   [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["m", 2])],
                   [("axes", np.array([0], np.int64)), ("start", np.array([0], np.int64))])
    exe = nimble.compile(import_onnx(model))
    for n in range(1, 8):
        x = rng.standard_normal((n, 2)).astype(np.float32)
        np.testing.assert_array_equal(exe.run(x)[0], x[: n % 3])


def _reshape_model(target_nodes, x_dims, out_rank):
    nodes = [*target_nodes, helper.make_node("Reshape", ["x", "target"], ["y"])]
    return _model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_dims)],
                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None] * out_rank)])


def _gathered_dims(*axes):
    """Nodes computing `target` = Concat(Shape(x)[axes...], rest): PyTorch's idiom."""
    nodes = [helper.make_node("Shape", ["x"], ["s"])]
    for k in axes:
        nodes += [helper.make_node("Constant", [], [f"i{k}"], value=numpy_helper.from_array(np.array([k], np.int64))),
                  helper.make_node("Gather", ["s", f"i{k}"], [f"d{k}"])]
    return nodes + [helper.make_node("Concat", [*(f"d{k}" for k in axes), "rest"], ["target"], axis=0)]


@pytest.mark.parametrize("case", ["zeros-copy-unknown-dims", "gathered-dims-and-minus-one", "minus-one-at-run-time"])
def test_reshape_to_zeros_and_minus_one_over_unknown_dims_matches_onnxruntime(case, rng):
    """nn.LSTM / nn.GRU exports reshape [T, B, 2, H] to [0, 0, -1]; GPT-2 and ViT put a -1
    into a target gathered from Shape: the 0s copy dims known only at run time, the -1
    is what is left (a number where the unknown dims cancel, else computed at run time)."""
    const = lambda name, v: helper.make_node("Constant", [], [name], value=numpy_helper.from_array(np.array(v, np.int64)))
    if case == "zeros-copy-unknown-dims":
        model, last = _reshape_model([const("target", [0, 0, -1])], ["t", "b", 2, 3], 3), 6
    elif case == "gathered-dims-and-minus-one":
        model, last = _reshape_model([const("rest", [2, -1]), *_gathered_dims(0, 1)], ["n", "s", 8], 4), 4
    else:
        model, last = _reshape_model([const("rest", [-1]), *_gathered_dims(0)], ["n", "s", 8], 2), None
    module = import_onnx(model)
    result = [op for op in module.walk() if op.name in ("graph.reshape", "graph.dynamic_reshape")][-1].results[0]
    inferred = result.type.get_shape()[-1]
    assert (inferred if inferred >= 0 else None) == last
    exe, ort = nimble.compile(module), _ort(model)
    dims = [1, 1, 2, 3] if case == "zeros-copy-unknown-dims" else [1, 1, 8]
    for a, c in [(1, 1), (4, 3), (7, 2)]:
        x = rng.standard_normal([a, c, *dims[2:]]).astype(np.float32)
        np.testing.assert_array_equal(exe.run(x)[0], ort(x)[0])


def test_expand_to_minus_ones_of_a_gathered_batch_matches_onnxruntime(rng):
    """PyTorch's `cls_token.expand(batch, -1, -1)` (ViT, BERT's position ids): the target
    Concat(batch, -1, -1) is reshaped to a vector, its -1s found by Equal and replaced by
    Where with ones from ConstantOfShape(Shape(target)), all over the batch dim known
    only at run time."""
    const = lambda name, v: helper.make_node("Constant", [], [name], value=numpy_helper.from_array(np.array(v, np.int64)))
    nodes = [helper.make_node("Shape", ["x"], ["s"]), const("zero", 0), helper.make_node("Gather", ["s", "zero"], ["b"]),
             const("axes", [0]), helper.make_node("Unsqueeze", ["b", "axes"], ["b1"]), const("minus", [-1, -1]),
             helper.make_node("Concat", ["b1", "minus"], ["cat"], axis=0), const("flat", [-1]),
             helper.make_node("Reshape", ["cat", "flat"], ["target"]),
             helper.make_node("Shape", ["target"], ["length"]),
             helper.make_node("ConstantOfShape", ["length"], ["ones"],
                              value=numpy_helper.from_array(np.array([1], np.int64))),
             const("neg", -1), helper.make_node("Mul", ["ones", "neg"], ["negs"]),
             helper.make_node("Equal", ["target", "negs"], ["is_free"]),
             helper.make_node("Where", ["is_free", "ones", "target"], ["shape"]),
             helper.make_node("Expand", ["token", "shape"], ["y"])]
    token = rng.standard_normal((1, 1, 8)).astype(np.float32)
    model = _model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 3])],
                   [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 1, 8])], [("token", token)])
    exe, ort = nimble.compile(import_onnx(model)), _ort(model)
    for n in (1, 2, 7):
        x = rng.standard_normal((n, 3)).astype(np.float32)
        got = exe.run(x)[0]
        assert got.shape == (n, 1, 8)
        np.testing.assert_array_equal(got, ort(x)[0])


@pytest.mark.parametrize("exclusive,reverse", [(0, 0), (1, 0), (0, 1), (1, 1)])
def test_cumsum_along_a_dim_known_only_at_run_time_matches_onnxruntime(exclusive, reverse, rng):
    """RoBERTa's position ids: a running sum over the sequence axis of an int mask."""
    nodes = [helper.make_node("CumSum", ["x", "axis"], ["y"], exclusive=exclusive, reverse=reverse),
             helper.make_node("CumSum", ["i", "axis"], ["j"], exclusive=exclusive, reverse=reverse)]
    model = _model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["b", "s"]),
                           helper.make_tensor_value_info("i", TensorProto.INT32, ["b", "s"])],
                   [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["b", "s"]),
                    helper.make_tensor_value_info("j", TensorProto.INT32, ["b", "s"])],
                   [("axis", np.array(1, np.int32))], opset=14)
    exe, ort = nimble.compile(import_onnx(model)), _ort(model)
    for shape in [(1, 1), (2, 7), (3, 17)]:
        x = rng.standard_normal(shape).astype(np.float32)
        i = rng.integers(-3, 4, shape).astype(np.int32)
        (y, j), (y_ort, j_ort) = exe(x, i), ort(x, i)
        np.testing.assert_allclose(y, y_ort, rtol=1e-5, atol=1e-5)
        np.testing.assert_array_equal(j, j_ort)


def test_is_nan_and_is_inf_match_onnxruntime(rng):
    nodes = [helper.make_node("IsNaN", ["x"], ["nan"]), helper.make_node("IsInf", ["x"], ["inf"]),
             helper.make_node("IsInf", ["x"], ["neg"], detect_positive=0)]
    model = _model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n"])],
                   [helper.make_tensor_value_info(o, TensorProto.BOOL, ["n"]) for o in ("nan", "inf", "neg")])
    exe, ort = nimble.compile(import_onnx(model)), _ort(model)
    for n in [1, 5, 37]:
        x = rng.standard_normal(n).astype(np.float32)
        x[rng.integers(0, n, 3)] = [np.nan, np.inf, -np.inf]
        for got, want in zip(exe(x), ort(x)):
            np.testing.assert_array_equal(got, want)


def test_dims_used_as_data_are_computed_at_run_time(rng):
    """GPT-2 with past key values adds the past length (a Gather of a Shape) to position
    ids; attention scales by the square root of a dim cast to float."""
    i64, f32 = TensorProto.INT64, TensorProto.FLOAT
    nodes = [helper.make_node("Shape", ["past"], ["past_shape"]),
             helper.make_node("Gather", ["past_shape", "two"], ["past_length"], axis=0),
             helper.make_node("Add", ["ids", "past_length"], ["positions"]),
             helper.make_node("Shape", ["ids"], ["ids_shape"]),
             helper.make_node("Cast", ["ids_shape"], ["ids_dims"], to=TensorProto.INT32),
             helper.make_node("Mul", ["ids_dims", "ids_dims"], ["squares"]),
             helper.make_node("Cast", ["past_length"], ["length_f"], to=f32),
             helper.make_node("Sqrt", ["length_f"], ["root"]),
             helper.make_node("Div", ["x", "root"], ["scaled"])]
    model = _model(nodes, [helper.make_tensor_value_info("ids", i64, ["b", "s"]),
                           helper.make_tensor_value_info("past", f32, ["b", 4, "p", 8]),
                           helper.make_tensor_value_info("x", f32, ["b", "s"])],
                   [helper.make_tensor_value_info("positions", i64, ["b", "s"]),
                    helper.make_tensor_value_info("squares", TensorProto.INT32, [2]),
                    helper.make_tensor_value_info("scaled", f32, ["b", "s"])],
                   [("two", np.array(2, np.int64))])
    exe, ort = nimble.compile(import_onnx(model)), _ort(model)
    for b, s, p in [(1, 1, 1), (2, 5, 3), (3, 4, 17)]:
        args = (rng.integers(0, 50, (b, s)), rng.standard_normal((b, 4, p, 8)).astype(np.float32),
                rng.standard_normal((b, s)).astype(np.float32))
        got, want = exe(*args), ort(*args)
        for g, w in zip(got, want):
            assert g.dtype == w.dtype
            np.testing.assert_allclose(g, w, rtol=1e-6)


def test_pools_in_ceil_mode_match_onnxruntime(rng):
    """SqueezeNet's and GoogLeNet's pools (`ceil_mode=1`): the last window overhangs the
    input at sizes the stride does not divide; image sizes known only at run time."""
    f32 = TensorProto.FLOAT
    nodes = [helper.make_node("MaxPool", ["x"], ["a"], kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1),
             helper.make_node("MaxPool", ["x"], ["b"], kernel_shape=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1],
                              ceil_mode=1),
             helper.make_node("AveragePool", ["x"], ["c"], kernel_shape=[3, 2], strides=[2, 2], pads=[1, 0, 1, 0],
                              ceil_mode=1),
             helper.make_node("AveragePool", ["x"], ["d"], kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1,
                              count_include_pad=1)]
    model = _model(nodes, [helper.make_tensor_value_info("x", f32, ["n", 2, "h", "w"])],
                   [helper.make_tensor_value_info(o, f32, ["n", 2, None, None]) for o in "abcd"])
    exe, ort = nimble.compile(import_onnx(model)), _ort(model)
    for shape in [(1, 2, 3, 3), (2, 2, 6, 9), (1, 2, 13, 8)]:
        x = rng.standard_normal(shape).astype(np.float32)
        for got, want in zip(exe(x), ort(x)):
            assert got.shape == want.shape
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(("node", "message"), [
    ({"kernel_shape": [2, 2], "strides": [2, 2], "pads": [0, 0, 1, 1]}, "window (2) shorter than the end padding (1)"),
    ({"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1], "count_include_pad": 1},
     "count_include_pad=1 and padding"),
])
def test_pools_in_ceil_mode_that_would_drop_windows_are_refused_at_import(node, message):
    """Where a window could start in the end padding (ONNX Runtime drops it; padding would
    keep it) the import fails naming the node, instead of computing other sizes."""
    f32 = TensorProto.FLOAT
    model = _model([helper.make_node("AveragePool", ["x"], ["y"], name="pool", ceil_mode=1, **node)],
                   [helper.make_tensor_value_info("x", f32, [1, 2, 7, 7])],
                   [helper.make_tensor_value_info("y", f32, [1, 2, None, None])])
    with pytest.raises(OnnxImportError, match=re.escape(message)) as error:
        import_onnx(model)
    assert "pool" in str(error.value)


def test_one_dimensional_convs_and_pools_over_a_time_axis_match_onnxruntime(rng):
    """Whisper's and wav2vec2's feature encoders: 1-D convs (strides, pads, dilations,
    groups, bias or none) and pools over a time axis known only at run time."""
    f32 = TensorProto.FLOAT
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1]),
             helper.make_node("Conv", ["c1", "w2"], ["c2"], strides=[2], dilations=[2], group=2, pads=[2, 0]),
             helper.make_node("MaxPool", ["c2"], ["p1"], kernel_shape=[3], strides=[2], pads=[1, 1]),
             helper.make_node("AveragePool", ["c2"], ["p2"], kernel_shape=[2])]
    model = _model(nodes, [helper.make_tensor_value_info("x", f32, ["b", 4, "t"])],
                   [helper.make_tensor_value_info(o, f32, ["b", 6, None]) for o in ("p1", "p2")],
                   [("w1", rng.standard_normal((6, 4, 3)).astype(np.float32)),
                    ("b1", rng.standard_normal(6).astype(np.float32)),
                    ("w2", rng.standard_normal((6, 3, 3)).astype(np.float32))])
    exe, ort = nimble.compile(import_onnx(model)), _ort(model)
    for shape in [(1, 4, 5), (2, 4, 16), (3, 4, 37)]:
        x = rng.standard_normal(shape).astype(np.float32)
        for got, want in zip(exe(x), ort(x)):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_instance_normalization_over_dims_known_only_at_run_time_matches_onnxruntime(rng):
    """wav2vec2's first feature layer (GroupNorm with a group per channel, exported as
    InstanceNormalization) over a time axis, and a 2-D image."""
    f32 = TensorProto.FLOAT
    nodes = [helper.make_node("InstanceNormalization", ["x", "s", "b"], ["y"], epsilon=1e-3),
             helper.make_node("InstanceNormalization", ["image", "s", "b"], ["z"])]
    model = _model(nodes, [helper.make_tensor_value_info("x", f32, ["n", 5, "t"]),
                           helper.make_tensor_value_info("image", f32, ["n", 5, "h", "w"])],
                   [helper.make_tensor_value_info("y", f32, ["n", 5, "t"]),
                    helper.make_tensor_value_info("z", f32, ["n", 5, "h", "w"])],
                   [("s", rng.standard_normal(5).astype(np.float32)), ("b", rng.standard_normal(5).astype(np.float32))])
    exe, ort = nimble.compile(import_onnx(model)), _ort(model)
    for n, t in [(1, 1), (2, 9), (3, 40)]:
        x = (3 * rng.standard_normal((n, 5, t)) + 1).astype(np.float32)
        image = rng.standard_normal((n, 5, t, 3)).astype(np.float32)
        for got, want in zip(exe(x, image), ort(x, image)):
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_shapes_computed_from_constants_are_folded_at_import(rng):
    """A fixed-shape export computes Expand's target from constants (BERT's token types:
    `Where(Equal(ConstantOfShape(s) * -1, -1), ConstantOfShape(s), -1)`): the importer
    evaluates such nodes (onnx's reference evaluator), so the target is a constant."""
    c = lambda name, value: helper.make_node(  # noqa: E731
        "Constant", [], [name], value=numpy_helper.from_array(np.array(value, np.int64)))
    nodes = [c("s", [2]), c("m1", -1), c("neg", [-1, -1]),
             helper.make_node("ConstantOfShape", ["s"], ["ones"], value=numpy_helper.from_array(np.array([1], np.int64))),
             helper.make_node("Mul", ["ones", "m1"], ["minus"]),
             helper.make_node("Equal", ["neg", "minus"], ["same"]),
             helper.make_node("Where", ["same", "ones", "neg"], ["target"]),
             helper.make_node("Expand", ["x", "target"], ["y"])]
    model = _model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 1])],
                   [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 1])])
    exe = nimble.compile(import_onnx(model))
    x = rng.standard_normal((3, 1)).astype(np.float32)
    np.testing.assert_array_equal(exe(x), _ort(model)(x)[0])


def test_group_normalization_matches_numpy(rng):
    """GroupNormalization (an ONNX function op, imported as its computation): 6 channels
    in 3 groups, per-channel scale and bias (opset 21), over a batch and a time axis
    known only at run time."""
    f32 = TensorProto.FLOAT
    scale, bias = rng.standard_normal(6).astype(np.float32), rng.standard_normal(6).astype(np.float32)
    node = helper.make_node("GroupNormalization", ["x", "s", "b"], ["y"], num_groups=3, epsilon=1e-4)
    model = _model([node], [helper.make_tensor_value_info("x", f32, ["n", 6, "t"])],
                   [helper.make_tensor_value_info("y", f32, ["n", 6, "t"])], [("s", scale), ("b", bias)], opset=21)
    exe = nimble.compile(import_onnx(model))
    for n, t in [(1, 1), (2, 7), (3, 17)]:
        x = (2 * rng.standard_normal((n, 6, t)) + 1).astype(np.float32)
        g = x.reshape(n, 3, -1).astype(np.float64)
        normal = ((g - g.mean(2, keepdims=True)) / np.sqrt(g.var(2, keepdims=True) + 1e-4)).reshape(n, 6, t)
        np.testing.assert_allclose(exe(x), normal * scale[:, None] + bias[:, None], rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("n", [1, 4, 7])
def test_scatters_of_indices_given_at_run_time_match_onnxruntime(n, rng):
    """ScatterElements (adding) and ScatterND (two leading index dims, flattened into
    rows) with indices that are inputs, over a dynamic dim."""
    nodes = [helper.make_node("ScatterElements", ["x", "i", "u"], ["y"], axis=1, reduction="add"),
             helper.make_node("ScatterND", ["y", "r", "v"], ["z"])]
    model = _model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 5]),
                           helper.make_tensor_value_info("i", TensorProto.INT64, ["n", 3]),
                           helper.make_tensor_value_info("u", TensorProto.FLOAT, ["n", 3]),
                           helper.make_tensor_value_info("r", TensorProto.INT64, [2, 1, 1]),
                           helper.make_tensor_value_info("v", TensorProto.FLOAT, [2, 1, 5])],
                   [helper.make_tensor_value_info("z", TensorProto.FLOAT, ["n", 5])], opset=18)
    exe = nimble.compile(import_onnx(model))
    args = [rng.standard_normal((n, 5)).astype(np.float32), rng.integers(-5, 5, (n, 3)),
            rng.standard_normal((n, 3)).astype(np.float32), np.array([[[0]], [[n - 1]]]),
            rng.standard_normal((2, 1, 5)).astype(np.float32)]
    np.testing.assert_allclose(exe(*args), _ort(model)(*args)[0], rtol=1e-5, atol=1e-6)
