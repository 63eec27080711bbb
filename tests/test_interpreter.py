"""The reference interpreter on control flow, recursion, ADTs, vision ops, shape
reification, and the errors it must give for bad inputs."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import SIZES, run_mlir
from nimble import interpret, parse
from nimble.dialects.graph.base import GraphOp
from nimble.reference import InterpreterError

LOOP = """func.func @main(%n: tensor<i64>, %h: tensor<1x2xf32>) -> tensor<1x?xf32> {
  %zero = graph.constant dense<0> : tensor<i64>
  %one = graph.constant dense<1> : tensor<i64>
  %i, %r = graph.while (%i0 = %zero, %h0 = %h) : (tensor<i64>, tensor<1x2xf32>) -> (tensor<i64>, tensor<1x?xf32>) {
    %c = graph.less %i0, %n : (tensor<i64>, tensor<i64>) -> tensor<i1>
    graph.condition %c : tensor<i1>
  } do {
  ^bb0(%i1: tensor<i64>, %h1: tensor<1x?xf32>):
    %i2 = graph.add %i1, %one : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %h2 = graph.concat %h1, %h1 {axis = 1 : i64} : (tensor<1x?xf32>, tensor<1x?xf32>) -> tensor<1x?xf32>
    graph.yield %i2, %h2 : tensor<i64>, tensor<1x?xf32>
  }
  func.return %r : tensor<1x?xf32>
}"""


@pytest.mark.parametrize("steps", [0, 1, 3])
def test_while_loop_carries_growing_value(steps):
    h = np.array([[1.0, 2.0]], np.float32)
    (r,) = run_mlir(LOOP, np.array(steps, np.int64), h)
    np.testing.assert_array_equal(r, np.tile(h, (1, 2**steps)))


def test_if_picks_branch():
    text = """func.func @main(%c: tensor<i1>, %a: tensor<?xf32>) -> tensor<?xf32> {
  %r = graph.if %c : tensor<i1> -> (tensor<?xf32>) {
    graph.yield %a : tensor<?xf32>
  } else {
    %n = graph.neg %a : tensor<?xf32> -> tensor<?xf32>
    graph.yield %n : tensor<?xf32>
  }
  func.return %r : tensor<?xf32>
}"""
    a = np.arange(3, dtype=np.float32)
    np.testing.assert_array_equal(run_mlir(text, np.array(True), a)[0], a)
    np.testing.assert_array_equal(run_mlir(text, np.array(False), a)[0], -a)


TREE = """graph.adt @Tree {
  graph.constructor @Leaf(tensor<1x4xf32>)
  graph.constructor @Node(!graph.adt<@Tree>, !graph.adt<@Tree>)
}
func.func @main(%t: !graph.adt<@Tree>) -> tensor<1x4xf32> {
  %r = graph.match %t : !graph.adt<@Tree> -> (tensor<1x4xf32>)
    case @Leaf(%v: tensor<1x4xf32>) {
      graph.yield %v : tensor<1x4xf32>
    }
    case @Node(%a: !graph.adt<@Tree>, %b: !graph.adt<@Tree>) {
      %x = func.call @main(%a) : (!graph.adt<@Tree>) -> tensor<1x4xf32>
      %y = func.call @main(%b) : (!graph.adt<@Tree>) -> tensor<1x4xf32>
      %s = graph.add %x, %y : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
      %t2 = graph.tanh %s : tensor<1x4xf32> -> tensor<1x4xf32>
      graph.yield %t2 : tensor<1x4xf32>
    }
  func.return %r : tensor<1x4xf32>
}
func.func @build(%x: tensor<1x4xf32>) -> !graph.adt<@Tree> {
  %l = graph.construct @Leaf(%x) : (tensor<1x4xf32>) -> !graph.adt<@Tree>
  %n = graph.construct @Node(%l, %l) : (!graph.adt<@Tree>, !graph.adt<@Tree>) -> !graph.adt<@Tree>
  %m = graph.construct @Node(%n, %l) : (!graph.adt<@Tree>, !graph.adt<@Tree>) -> !graph.adt<@Tree>
  func.return %m : !graph.adt<@Tree>
}"""


def test_recursion_over_adt_tree(rng):
    from nimble.dialects.graph import AdtValue

    module = parse(TREE)
    x = rng.standard_normal((1, 4)).astype(np.float32)
    (tree,) = interpret(module, x, entry="build")
    assert tree == AdtValue("Node", (AdtValue("Node", (AdtValue("Leaf", (x,)),) * 2), AdtValue("Leaf", (x,))))
    (r,) = interpret(module, tree)
    np.testing.assert_allclose(r, np.tanh(np.tanh(x + x) + x), rtol=1e-6)


def test_tuples():
    text = """func.func @main(%a: tensor<2xf32>, %b: tensor<i64>) -> tensor<i64> {
  %t = graph.make_tuple %a, %b : (tensor<2xf32>, tensor<i64>) -> tuple<tensor<2xf32>, tensor<i64>>
  %x = graph.get_item %t, 1 : tuple<tensor<2xf32>, tensor<i64>> -> tensor<i64>
  func.return %x : tensor<i64>
}"""
    assert run_mlir(text, np.zeros(2, np.float32), np.array(5))[0] == 5


def iou(a, b):
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ix * iy
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


@pytest.mark.parametrize("n", SIZES)
def test_nms_against_loop(n, rng):
    xy = rng.uniform(0, 10, (n, 2))
    wh = rng.uniform(1, 4, (n, 2))
    boxes = np.concatenate([xy, xy + wh], 1).astype(np.float32)
    scores = rng.uniform(0, 1, n).astype(np.float32)
    text = """func.func @main(%b: tensor<?x4xf32>, %s: tensor<?xf32>) -> tensor<?xi64> {
  %k = graph.nms %b, %s {iou_threshold = 3.0e-01 : f64, score_threshold = 1.0e-01 : f64} : (tensor<?x4xf32>, tensor<?xf32>) -> tensor<?xi64>
  func.return %k : tensor<?xi64>
}"""
    (keep,) = run_mlir(text, boxes, scores)
    expected = []
    for i in sorted(range(n), key=lambda i: -scores[i]):
        if scores[i] > 0.1 and all(iou(boxes[i], boxes[j]) <= 0.3 for j in expected):
            expected.append(i)
    assert keep.tolist() == expected


def bilinear(img, y, x):
    h, w = img.shape[-2:]
    if y < -1 or y > h or x < -1 or x > w:
        return np.zeros(img.shape[0])
    y, x = max(y, 0.0), max(x, 0.0)
    y0, x0 = int(y), int(x)
    if y0 >= h - 1:
        y0 = y1 = h - 1
        y = float(y0)
    else:
        y1 = y0 + 1
    if x0 >= w - 1:
        x0 = x1 = w - 1
        x = float(x0)
    else:
        x1 = x0 + 1
    ly, lx = y - y0, x - x0
    return ((1 - ly) * (1 - lx) * img[:, y0, x0] + (1 - ly) * lx * img[:, y0, x1]
            + ly * (1 - lx) * img[:, y1, x0] + ly * lx * img[:, y1, x1])


def test_roi_align_against_loops(rng):
    feat = rng.standard_normal((2, 3, 9, 11)).astype(np.float32)
    rois = np.array([[1.0, 2.0, 15.0, 12.0], [0.0, 0.0, 4.0, 4.0], [3.0, 1.0, 20.0, 17.0]], np.float32)
    idx = np.array([0, 1, 1], np.int64)
    text = """func.func @main(%f: tensor<2x3x?x?xf32>, %r: tensor<?x4xf32>, %i: tensor<?xi64>) -> tensor<?x3x2x3xf32> {
  %y = graph.roi_align %f, %r, %i {output_height = 2 : i64, output_width = 3 : i64, spatial_scale = 5.0e-01 : f64} : (tensor<2x3x?x?xf32>, tensor<?x4xf32>, tensor<?xi64>) -> tensor<?x3x2x3xf32>
  func.return %y : tensor<?x3x2x3xf32>
}"""
    (y,) = run_mlir(text, feat, rois, idx)
    for k, (roi, b) in enumerate(zip(rois, idx)):
        x1, y1, x2, y2 = roi * 0.5 - 0.5
        bh, bw = (y2 - y1) / 2, (x2 - x1) / 3
        gh, gw = max(1, int(np.ceil((y2 - y1) / 2))), max(1, int(np.ceil((x2 - x1) / 3)))
        for ph in range(2):
            for pw in range(3):
                acc = np.zeros(3)
                for iy in range(gh):
                    for ix in range(gw):
                        acc += bilinear(feat[b], y1 + ph * bh + (iy + 0.5) * bh / gh, x1 + pw * bw + (ix + 0.5) * bw / gw)
                np.testing.assert_allclose(y[k, :, ph, pw], acc / (gh * gw), rtol=1e-5, atol=1e-5)


# -- shape reification: the emitted shape IR computes the true result dims ------------

REIFY_CASES = [
    ("graph.add %a, %b : (tensor<?x1xf32>, tensor<?xf32>) -> tensor<?x?xf32>", ["tensor<?x1xf32>", "tensor<?xf32>"], [(5, 1), (3,)]),
    ("graph.matmul %a, %b : (tensor<?x?xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>", ["tensor<?x?xf32>", "tensor<?x4xf32>"], [(7, 3), (3, 4)]),
    ("graph.conv2d %a, %b {strides = array<i64: 2, 2>, padding = array<i64: 1, 0, 1, 0>} : (tensor<?x2x?x?xf32>, tensor<3x2x3x3xf32>) -> tensor<?x3x?x?xf32>", ["tensor<?x2x?x?xf32>", "tensor<3x2x3x3xf32>"], [(1, 2, 9, 8), (3, 2, 3, 3)]),
    ("graph.reshape %a [-1, 6] : tensor<?x3x4xf32> -> tensor<?x6xf32>", ["tensor<?x3x4xf32>"], [(5, 3, 4)]),
    ("graph.concat %a, %b {axis = 0 : i64} : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>", ["tensor<?x3xf32>", "tensor<?x3xf32>"], [(2, 3), (5, 3)]),
    ("graph.slice %a[1:-2:3, :] : tensor<?x3xf32> -> tensor<?x3xf32>", ["tensor<?x3xf32>"], [(17, 3)]),
    ("graph.reduce_sum %a {axes = array<i64: 0>, keepdims = true} : tensor<?x?xf32> -> tensor<1x?xf32>", ["tensor<?x?xf32>"], [(4, 9)]),
    ("graph.transpose %a [1, 0] : tensor<?x?xf32> -> tensor<?x?xf32>", ["tensor<?x?xf32>"], [(4, 9)]),
]


@pytest.mark.parametrize("op_text,types,shapes", REIFY_CASES)
def test_reified_shape_matches_result(op_text, types, shapes, rng):
    from xdsl.dialects import func

    names = ["%a", "%b"][: len(types)]
    params = ", ".join(f"{n}: {t}" for n, t in zip(names, types))
    module = parse(f"func.func @main({params}) -> index {{\n  %r = {op_text}\n  %c = arith.constant 0 : index\n  func.return %c : index\n}}")
    main = next(op for op in module.ops if isinstance(op, func.FuncOp))
    op = next(o for o in main.body.block.ops if isinstance(o, GraphOp))
    dims = op.reify()[0]
    ret = main.body.block.last_op
    ret.operands = dims
    main.function_type = func.FunctionType.from_lists([t.type for t in main.body.block.args], [d.type for d in dims])
    module.verify()
    args = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    got = interpret(module, *args)
    expected = op.reference(*args)[0].shape
    assert tuple(got) == expected


# -- errors -------------------------------------------------------------------------------


def test_wrong_input_shape_names_the_parameter():
    text = LOOP
    with pytest.raises(InterpreterError, match=r"argument #1 \(%h\): expected tensor<1x2xf32>"):
        run_mlir(text, np.array(1), np.zeros((1, 3), np.float32))


def test_wrong_dtype_and_arity():
    with pytest.raises(InterpreterError, match="element type"):
        run_mlir(LOOP, np.array(1), np.zeros((1, 2), np.float64))
    with pytest.raises(InterpreterError, match="takes 2 arguments"):
        run_mlir(LOOP, np.array(1))


def test_failed_shape_assert_is_an_error():
    text = """func.func @main(%x: tensor<?xf32>, %n: index) {
  %d = dynshape.dim %x, 0 : tensor<?xf32>
  %ok = arith.cmpi eq, %d, %n : index
  dynshape.assert %ok, "dim 0 of %x must equal %n"
  func.return
}"""
    run_mlir(text, np.zeros(3, np.float32), 3)
    with pytest.raises(InterpreterError, match="must equal"):
        run_mlir(text, np.zeros(3, np.float32), 4)


def test_runtime_broadcast_mismatch_is_an_error():
    text = """func.func @main(%a: tensor<?xf32>, %b: tensor<?xf32>) -> tensor<?xf32> {
  %c = graph.add %a, %b : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  func.return %c : tensor<?xf32>
}"""
    with pytest.raises(InterpreterError, match=r"<string>:2:3: 'graph.add' op failed at run time"):
        run_mlir(text, np.zeros(3, np.float32), np.zeros(4, np.float32))


def test_fused_group_evaluates_its_region(rng):
    text = """func.func @main(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>) -> tensor<?x4xf32> {
  %y = graph.fused (%a = %x, %b = %w) : (tensor<?x8xf32>, tensor<4x8xf32>) -> (tensor<?x4xf32>) {
    %d = graph.dense %a, %b : (tensor<?x8xf32>, tensor<4x8xf32>) -> tensor<?x4xf32>
    %r = graph.relu %d : tensor<?x4xf32> -> tensor<?x4xf32>
    graph.yield %r : tensor<?x4xf32>
  }
  func.return %y : tensor<?x4xf32>
}"""
    x = rng.standard_normal((5, 8)).astype(np.float32)
    w = rng.standard_normal((4, 8)).astype(np.float32)
    np.testing.assert_allclose(run_mlir(text, x, w)[0], np.maximum(x @ w.T, 0), rtol=1e-5, atol=1e-6)
