"""The example models parse, verify and mean what their independent numpy versions
compute, at several dynamic sizes."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

from nimble import compile, interpret, parse
from nimble.dialects.graph import AdtValue
from nimble.reference import InterpreterError

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def weights(rng, *shapes, scale=0.1):
    return [(rng.standard_normal(s) * scale).astype(np.float32) for s in shapes]


@pytest.fixture(scope="module")
def modules():
    return {p.stem: parse(p) for p in EXAMPLES.glob("*.nb")}


_COMPILED: dict[tuple[str, str], object] = {}


@pytest.fixture(params=["reference", "llvm", "llvm@haswell", "llvm@x86-64-v2", "opencl", "hetero"])
def models(request, modules):
    """Each example as a function: run by the reference interpreter, or compiled for a
    target (fusion groups as kernels on the CPU or the OpenCL device, the host part on
    the VM). `llvm` compiles for this CPU (AVX-512 where it has it), `llvm@haswell` for
    AVX2 + FMA (8 lanes, 16 registers) and `llvm@x86-64-v2` for SSE4.2 (4 lanes, no FMA):
    both run on any host these tests run on."""
    if request.param == "reference":
        return {name: (lambda *a, m=m: interpret(m, *a)) for name, m in modules.items()}
    target, _, cpu = request.param.partition("@")
    for name in modules:
        if (name, request.param) not in _COMPILED:
            _COMPILED[name, request.param] = compile(EXAMPLES / f"{name}.nb", target=target, cpu=cpu or None)
    return {name: exe.run for (name, t), exe in _COMPILED.items() if t == request.param}


@pytest.mark.parametrize("t,n", [(1, 1), (3, 5), (7, 2)])
def test_lstm(models, t, n, rng):
    xs = rng.standard_normal((t, n, 64)).astype(np.float32)
    h0, c0 = weights(rng, (n, 128), (n, 128), scale=1.0)
    w, b = weights(rng, (512, 192), (512,))
    (h,) = models["lstm"](xs, h0, c0, w, b)
    h_ref, c_ref = h0.astype(np.float64), c0.astype(np.float64)
    for x in xs:
        i, f, o, u = np.split(np.concatenate([x, h_ref], 1) @ w.T + b, 4, axis=1)
        c_ref = sigmoid(f) * c_ref + sigmoid(i) * np.tanh(u)
        h_ref = sigmoid(o) * np.tanh(c_ref)
    np.testing.assert_allclose(h, h_ref, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("t,n", [(1, 1), (3, 5), (7, 2)])
def test_gru(models, t, n, rng):
    xs = rng.standard_normal((t, n, 64)).astype(np.float32)
    (h0,) = weights(rng, (n, 128), scale=1.0)
    wx, wh, bx, bh = weights(rng, (384, 64), (384, 128), (384,), (384,))
    (h,) = models["gru"](xs, h0, wx, wh, bx, bh)
    h_ref = h0.astype(np.float64)
    for x in xs:
        rx, zx, nx = np.split(x @ wx.T + bx, 3, axis=1)
        rh, zh, nh = np.split(h_ref @ wh.T + bh, 3, axis=1)
        r, z = sigmoid(rx + rh), sigmoid(zx + zh)
        h_ref = (1 - z) * np.tanh(nx + r * nh) + z * h_ref
    np.testing.assert_allclose(h, h_ref, rtol=1e-4, atol=1e-5)


def random_tree(rng, depth):
    x = rng.standard_normal((1, 64)).astype(np.float32)
    if depth == 0 or rng.random() < 0.25:
        return AdtValue("Leaf", (x,))
    return AdtValue("Node", (x, random_tree(rng, depth - 1), random_tree(rng, depth - 1)))


def tree_lstm_ref(t, w_iou, u_iou, b_iou, w_f, u_f, b_f):
    if t.constructor == "Leaf":
        return leaf_state(t.fields[0], w_iou, b_iou)
    x, left, right = t.fields
    params = (w_iou, u_iou, b_iou, w_f, u_f, b_f)
    return node_state(x, tree_lstm_ref(left, *params), tree_lstm_ref(right, *params), *params)


def leaf_state(x, w_iou, b_iou):
    i, o, u = np.split(x @ w_iou.T + b_iou, 3, axis=1)
    c = sigmoid(i) * np.tanh(u)
    return sigmoid(o) * np.tanh(c), c


def node_state(x, left, right, w_iou, u_iou, b_iou, w_f, u_f, b_f):
    (hl, cl), (hr, cr) = left, right
    i, o, u = np.split(x @ w_iou.T + b_iou + (hl + hr) @ u_iou.T, 3, axis=1)
    fl = sigmoid(x @ w_f.T + b_f + hl @ u_f.T)
    fr = sigmoid(x @ w_f.T + b_f + hr @ u_f.T)
    c = sigmoid(i) * np.tanh(u) + fl * cl + fr * cr
    return sigmoid(o) * np.tanh(c), c


@pytest.mark.parametrize("depth", [0, 2, 5])
def test_tree_lstm(models, depth, rng):
    tree = random_tree(rng, depth)
    params = weights(rng, (450, 64), (450, 150), (450,), (150, 64), (150, 150), (150,))
    (h,) = models["tree_lstm"](tree, *params)
    np.testing.assert_allclose(h, tree_lstm_ref(tree, *params)[0], rtol=1e-4, atol=1e-5)


def test_tree_lstm_over_a_10000_deep_tree(rng):
    """The VM's calls are frames on a list: a tree 10,000 deep runs in a process whose
    recursion limit is Python's default (and the limit is left as it was). The reference
    interpreter recurses in Python, and says so when that is too deep."""
    params = weights(rng, (450, 64), (450, 150), (450,), (150, 64), (150, 150), (150,))
    leaf = AdtValue("Leaf", (weights(rng, (1, 64), scale=1.0)[0],))
    leaf_hc = leaf_state(leaf.fields[0], params[0], params[2])
    tree, state = leaf, leaf_hc
    for x in weights(rng, *[(1, 64)] * 10_000, scale=1.0):
        tree = AdtValue("Node", (x, tree, leaf))
        state = node_state(x, state, leaf_hc, *params)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)
    try:
        h = compile(EXAMPLES / "tree_lstm.nb")(tree, *params)
        np.testing.assert_allclose(h, state[0], rtol=1e-4, atol=1e-5)
        assert sys.getrecursionlimit() == 1000
        with pytest.raises(InterpreterError, match="calls nested too deeply for the reference interpreter"):
            interpret(parse(EXAMPLES / "tree_lstm.nb"), tree, *params)
    finally:
        sys.setrecursionlimit(limit)


def layer_norm(x, g, b):
    mu, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + 1e-5) * g + b


def bert_layer(x, wq, bq, wk, bk, wv, bv, wo, bo, g1, e1, w1, b1, w2, b2, g2, e2):
    s = x.shape[0]
    heads = lambda y: y.reshape(s, 4, 64).transpose(1, 0, 2)
    q, k, v = heads(x @ wq.T + bq), heads(x @ wk.T + bk), heads(x @ wv.T + bv)
    scores = q @ k.transpose(0, 2, 1) / 8.0
    p = np.exp(scores - scores.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    context = (p @ v).transpose(1, 0, 2).reshape(s, 256)
    a = layer_norm(x + context @ wo.T + bo, g1, e1)
    hidden = a @ w1.T + b1
    gelu = 0.5 * hidden * (1 + np.vectorize(math.erf)(hidden / math.sqrt(2)))
    return layer_norm(a + gelu @ w2.T + b2, g2, e2)


def bert_inputs(rng, s):
    """ids, embedding table, positions, then one layer's weights (shared by both layers)."""
    ids = rng.integers(0, 1000, s).astype(np.int64)
    table, positions = weights(rng, (1000, 256), (512, 256), scale=1.0)
    layer = weights(rng, (256, 256), (256,), (256, 256), (256,), (256, 256), (256,), (256, 256), (256,))
    layer += [np.ones(256, np.float32), np.zeros(256, np.float32)]
    layer += weights(rng, (1024, 256), (1024,), (256, 1024), (256,))
    layer += [np.ones(256, np.float32), np.zeros(256, np.float32)]
    return [ids, table, positions, *layer]


@pytest.mark.parametrize("s", [1, 7, 16, 33])
def test_bert(models, s, rng):
    ids, table, positions, *layer = bert_inputs(rng, s)
    (y,) = models["bert"](ids, table, positions, *layer)
    x = table[ids] + positions[:s]
    expected = bert_layer(bert_layer(x, *layer), *layer)
    np.testing.assert_allclose(y, expected, rtol=1e-3, atol=1e-3)


RESNET_SHAPES = [(64, 3, 7, 7), (64,)] + [(64, 64, 3, 3), (64,)] * 4
for cin, cout in ((64, 128), (128, 256), (256, 512)):
    RESNET_SHAPES += [(cout, cin, 3, 3), (cout,), (cout, cout, 3, 3), (cout,), (cout, cin, 1, 1), (cout,)]
    RESNET_SHAPES += [(cout, cout, 3, 3), (cout,)] * 2
RESNET_SHAPES += [(1000, 512), (1000,)]


@pytest.mark.parametrize("size", [32, 37])
def test_resnet18_runs_at_any_image_size(models, size, rng):
    image = rng.standard_normal((1, 3, size, size)).astype(np.float32)
    params = [(rng.standard_normal(s) * math.sqrt(2 / max(1, np.prod(s[1:])))).astype(np.float32) for s in RESNET_SHAPES]
    (logits,) = models["resnet18"](image, *params)
    assert logits.shape == (1, 1000) and np.isfinite(logits).all()


@pytest.mark.parametrize("h,w", [(5, 7), (8, 8)])
def test_detection_head(models, h, w, rng):
    feat = rng.standard_normal((1, 64, h, w)).astype(np.float32)
    ys, xs = np.meshgrid(np.arange(h) * 4.0, np.arange(w) * 4.0, indexing="ij")
    anchors = np.stack([xs, ys, xs + 8, ys + 8], -1).reshape(-1, 4).astype(np.float32)
    params = weights(rng, (1, 64, 3, 3), (1,), (4, 64, 3, 3), (4,))
    boxes, scores, pooled = models["detection"](feat, anchors, *params)
    assert len(boxes) == len(scores) == len(pooled) <= 50
    assert np.all(np.diff(scores) <= 0)  # kept in descending score order
    assert pooled.shape[1:] == (64, 7, 7)


@pytest.mark.parametrize("name", ["lstm", "bert", "tree_lstm", "resnet18", "detection", "mlp"])
def test_infer_shapes_keeps_meaning_and_verifies(name):
    """infer-shapes (+ canonicalize) on each example: verifies, refines, same results."""
    from xdsl.passes import PassPipeline

    from nimble.registry import all_passes, make_context

    path = next(EXAMPLES.glob(f"{name}.*"))
    module = parse(path)
    before = str(module)
    PassPipeline.parse_spec(all_passes(), "infer-shapes,canonicalize").apply(make_context(), module)
    module.verify()
    assert str(module).count("?") <= before.count("?")


def test_infer_shapes_refined_lstm_runs_the_same(modules, rng):
    from xdsl.passes import PassPipeline

    from nimble.registry import all_passes, make_context

    refined = parse(EXAMPLES / "lstm.nb")
    PassPipeline.parse_spec(all_passes(), "infer-shapes,canonicalize").apply(make_context(), refined)
    xs = rng.standard_normal((4, 3, 64)).astype(np.float32)
    h0, c0 = weights(rng, (3, 128), (3, 128), scale=1.0)
    w, b = weights(rng, (512, 192), (512,))
    np.testing.assert_array_equal(interpret(refined, xs, h0, c0, w, b)[0], interpret(modules["lstm"], xs, h0, c0, w, b)[0])


def _reified(path):
    from xdsl.passes import PassPipeline

    from nimble.registry import all_passes, make_context

    module = parse(path)
    PassPipeline.parse_spec(all_passes(), "infer-shapes,reify-shapes").apply(make_context(), module)
    module.verify()
    return module


@pytest.mark.parametrize("s", [1, 7, 33])
def test_reified_bert_checks_every_shape_and_matches(modules, s, rng):
    """After reify-shapes every dynamic tensor is bound to computed shape IR; running
    the module checks each bind, so the shape IR is right at every size."""
    reified = _reified(EXAMPLES / "bert.nb")
    assert str(reified).count("dynshape.bind") > 10
    args = bert_inputs(rng, s)
    np.testing.assert_array_equal(interpret(reified, *args)[0], interpret(modules["bert"], *args)[0])


@pytest.mark.parametrize("t,n", [(1, 1), (5, 3)])
def test_reified_lstm_and_detection_run(t, n, rng):
    lstm = _reified(EXAMPLES / "lstm.nb")
    xs = rng.standard_normal((t, n, 64)).astype(np.float32)
    interpret(lstm, xs, *weights(rng, (n, 128), (n, 128), (512, 192), (512,)))
    detection = _reified(EXAMPLES / "detection.nb")
    h, w = t + 2, n + 3
    feat = rng.standard_normal((1, 64, h, w)).astype(np.float32)
    anchors = rng.uniform(0, 30, (h * w, 4)).astype(np.float32)
    anchors[:, 2:] += anchors[:, :2]
    boxes, _, _ = interpret(detection, feat, anchors, *weights(rng, (1, 64, 3, 3), (1,), (4, 64, 3, 3), (4,)))
    assert len(boxes) <= 50


@pytest.mark.parametrize("name", ["lstm", "bert", "tree_lstm", "resnet18", "detection"])
def test_fuse_ops_on_examples(name):
    """fuse-ops verifies on every example and forms groups; the LSTM cell is one group."""
    from xdsl.passes import PassPipeline

    from nimble.dialects.graph import FusedOp
    from nimble.registry import all_passes, make_context

    module = parse(EXAMPLES / f"{name}.nb")
    PassPipeline.parse_spec(all_passes(), "infer-shapes,fuse-ops").apply(make_context(), module)
    module.verify()
    groups = [op for op in module.walk() if isinstance(op, FusedOp)]
    assert groups
    if name == "lstm":
        cell = next(g for g in groups if any(o.name == "graph.dense" for o in g.body.block.ops))
        kinds = {o.name for o in cell.body.block.ops}
        assert {"graph.dense", "graph.split", "graph.sigmoid", "graph.tanh", "graph.mul", "graph.add"} <= kinds


def test_fused_lstm_and_bert_compute_the_same(modules, rng):
    from xdsl.passes import PassPipeline

    from nimble.registry import all_passes, make_context

    fused = parse(EXAMPLES / "lstm.nb")
    PassPipeline.parse_spec(all_passes(), "fuse-ops").apply(make_context(), fused)
    xs = rng.standard_normal((3, 2, 64)).astype(np.float32)
    args = [xs, *weights(rng, (2, 128), (2, 128), (512, 192), (512,))]
    np.testing.assert_array_equal(interpret(fused, *args)[0], interpret(modules["lstm"], *args)[0])
    bert = parse(EXAMPLES / "bert.nb")
    PassPipeline.parse_spec(all_passes(), "fuse-ops").apply(make_context(), bert)
    args = bert_inputs(rng, 5)
    np.testing.assert_array_equal(interpret(bert, *args)[0], interpret(modules["bert"], *args)[0])


_FRESH = """
import pickle, sys
import nimble
exe = nimble.load(sys.argv[1])
with open(sys.argv[2], "rb") as f:
    args = pickle.load(f)
with open(sys.argv[3], "wb") as f:
    pickle.dump(exe.run(*args), f)
"""


@pytest.mark.parametrize("target", ["llvm", "hetero"])
@pytest.mark.parametrize("name", ["lstm", "tree_lstm", "bert", "detection", "resnet18"])
def test_saved_example_runs_the_same_in_a_fresh_process(name, target, modules, rng, tmp_path):
    """compile -> save (one .nbc file, CPU object code and OpenCL kernels alike) -> load
    and run in a new Python process: the results equal the reference interpreter's."""
    import pickle
    import subprocess
    import sys

    from nimble.interpret_cli import random_value

    exe = _COMPILED.get((name, target)) or compile(EXAMPLES / f"{name}.nb", target=target)
    _COMPILED[name, target] = exe
    exe.save(tmp_path / "model.nbc")
    signature, _, _ = exe.signatures["main"]
    size = {"resnet18": 40, "detection": 6}.get(name, 3)
    args = [random_tree(rng, 3) if str(t).startswith("!graph.adt") else random_value(t, size, rng)
            for t in signature.inputs.data]
    # Small weights keep deep models' activations in range (as trained weights would).
    args = [args[0]] + [a * np.float32(0.1) if isinstance(a, np.ndarray) and a.dtype == np.float32 else a
                        for a in args[1:]]
    if name == "resnet18":
        args = [rng.standard_normal((1, 3, 32, 32)).astype(np.float32)]
        args += [(rng.standard_normal(s) * math.sqrt(2 / max(1, np.prod(s[1:])))).astype(np.float32) for s in RESNET_SHAPES]
    if name == "bert":
        args[0] = rng.integers(0, args[1].shape[0], args[0].shape).astype(args[0].dtype)
    if name == "detection":  # one anchor box per feature-map pixel
        args[1] = np.abs(rng.standard_normal((size * size, 4))).astype(np.float32)
    with open(tmp_path / "args.pkl", "wb") as f:
        pickle.dump(args, f)
    done = subprocess.run([sys.executable, "-c", _FRESH, str(tmp_path / "model.nbc"), str(tmp_path / "args.pkl"),
                           str(tmp_path / "out.pkl")], capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    with open(tmp_path / "out.pkl", "rb") as f:
        results = pickle.load(f)
    expected = interpret(modules[name], *args)
    assert len(results) == len(expected)
    for r, e in zip(results, expected):
        np.testing.assert_allclose(r, e, rtol=1e-4, atol=1e-4 * max(1.0, float(np.max(np.abs(e), initial=0))))
