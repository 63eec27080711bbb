"""Each graph op against a hand-written numpy expression, on random inputs whose `?`
dims take several sizes, in the reference interpreter and compiled (the `run` fixture
runs every test once per backend)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import SIZES, run_mlir


def unary_module(op: str) -> str:
    return f"""func.func @main(%x: tensor<?x5xf32>) -> tensor<?x5xf32> {{
  %y = graph.{op} %x : tensor<?x5xf32> -> tensor<?x5xf32>
  func.return %y : tensor<?x5xf32>
}}"""


_erf = np.vectorize(math.erf)
UNARY = {
    "neg": lambda x: -x,
    "abs": np.abs,
    "exp": np.exp,
    "log": lambda x: np.log(np.abs(x) + 0.1),
    "sqrt": lambda x: np.sqrt(np.abs(x)),
    "rsqrt": lambda x: 1 / np.sqrt(np.abs(x) + 0.1),
    "tanh": np.tanh,
    "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
    "relu": lambda x: np.where(x > 0, x, 0),
    "gelu": lambda x: x * 0.5 * (1 + _erf(x / np.sqrt(2))),
    "erf": _erf,
    "floor": np.floor,
    "ceil": np.ceil,
    "round": np.round,
    "sin": np.sin,
    "cos": np.cos,
    "tan": np.tan,
    "asin": lambda x: np.arcsin(np.tanh(x)),
    "acos": lambda x: np.arccos(np.tanh(x)),
    "atan": np.arctan,
    "sinh": np.sinh,
    "cosh": np.cosh,
    "asinh": np.arcsinh,
    "acosh": lambda x: np.arccosh(np.abs(x) + 1),
    "atanh": lambda x: np.arctanh(np.tanh(x)),
}
# Inputs for ops with restricted domains, so the reference and numpy see the same values.
DOMAIN = {"log": lambda x: np.abs(x) + 0.1, "sqrt": np.abs, "rsqrt": lambda x: np.abs(x) + 0.1,
          "asin": np.tanh, "acos": np.tanh, "atanh": np.tanh, "acosh": lambda x: np.abs(x) + 1}


@pytest.mark.parametrize("op", sorted(UNARY))
@pytest.mark.parametrize("n", SIZES)
def test_unary(op, n, rng, run):
    x = rng.standard_normal((n, 5)).astype(np.float32)
    expected = UNARY[op](x)
    x = DOMAIN.get(op, lambda v: v)(x).astype(np.float32)
    (y,) = run(unary_module(op), x)
    assert y.dtype == np.float32 and y.shape == (n, 5)
    np.testing.assert_allclose(y, expected, rtol=1e-5, atol=1e-6)


BINARY = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
    "maximum": np.maximum, "minimum": np.minimum, "pow": lambda a, b: np.power(np.abs(a), b),
}


@pytest.mark.parametrize("op", sorted(BINARY))
@pytest.mark.parametrize("n", SIZES)
def test_binary_broadcasting(op, n, rng, run):
    text = f"""func.func @main(%a: tensor<?x1x3xf32>, %b: tensor<4x?xf32>) -> tensor<?x4x3xf32> {{
  %c = graph.{op} %a, %b : (tensor<?x1x3xf32>, tensor<4x?xf32>) -> tensor<?x4x3xf32>
  func.return %c : tensor<?x4x3xf32>
}}"""
    a = rng.standard_normal((n, 1, 3)).astype(np.float32)
    if op == "pow":
        a = np.abs(a)
    b = rng.uniform(0.5, 2, (4, 3)).astype(np.float32)
    (c,) = run(text, a, b)
    np.testing.assert_allclose(c, BINARY[op](a, b), rtol=1e-5)


def test_integer_division_truncates(run):
    text = """func.func @main(%a: tensor<4xi32>, %b: tensor<4xi32>) -> tensor<4xi32> {
  %c = graph.div %a, %b : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  func.return %c : tensor<4xi32>
}"""
    (c,) = run(text, np.array([7, -7, 7, -7], np.int32), np.array([2, 2, -2, -2], np.int32))
    assert c.tolist() == [3, -3, -3, 3]


@pytest.mark.parametrize("n", SIZES)
def test_comparisons_logic_where(n, rng, run):
    text = """func.func @main(%a: tensor<?xf32>, %b: tensor<?xf32>) -> (tensor<?xi1>, tensor<?xf32>) {
  %lt = graph.less %a, %b : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xi1>
  %gt = graph.greater %a, %b : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xi1>
  %eq = graph.equal %a, %a : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xi1>
  %o = graph.or %lt, %gt : (tensor<?xi1>, tensor<?xi1>) -> tensor<?xi1>
  %n = graph.and %o, %eq : (tensor<?xi1>, tensor<?xi1>) -> tensor<?xi1>
  %m = graph.not %n : tensor<?xi1> -> tensor<?xi1>
  %w = graph.where %lt, %a, %b : (tensor<?xi1>, tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  func.return %m, %w : tensor<?xi1>, tensor<?xf32>
}"""
    a = rng.standard_normal(n).astype(np.float32)
    b = a.copy()
    b[::2] = rng.standard_normal(len(b[::2]))
    m, w = run(text, a, b)
    np.testing.assert_array_equal(m, a == b)
    np.testing.assert_array_equal(w, np.minimum(a, b))


def test_clip_and_cast(rng, run):
    text = """func.func @main(%x: tensor<?xf32>) -> (tensor<?xf32>, tensor<?xi32>) {
  %c = graph.clip %x {min = -1.0 : f64, max = 1.5 : f64} : tensor<?xf32> -> tensor<?xf32>
  %i = graph.cast %x : tensor<?xf32> -> tensor<?xi32>
  func.return %c, %i : tensor<?xf32>, tensor<?xi32>
}"""
    x = (rng.standard_normal(33) * 3).astype(np.float32)
    c, i = run(text, x)
    np.testing.assert_array_equal(c, np.clip(x, -1, 1.5))
    np.testing.assert_array_equal(i, np.trunc(x).astype(np.int32))


@pytest.mark.parametrize("n", SIZES)
def test_matmul_batch_broadcast_and_vectors(n, rng, run):
    text = """func.func @main(%a: tensor<?x1x?x8xf32>, %b: tensor<3x8x5xf32>, %v: tensor<8xf32>) -> (tensor<?x3x?x5xf32>, tensor<?x1x?xf32>) {
  %c = graph.matmul %a, %b : (tensor<?x1x?x8xf32>, tensor<3x8x5xf32>) -> tensor<?x3x?x5xf32>
  %d = graph.matmul %a, %v : (tensor<?x1x?x8xf32>, tensor<8xf32>) -> tensor<?x1x?xf32>
  func.return %c, %d : tensor<?x3x?x5xf32>, tensor<?x1x?xf32>
}"""
    a = rng.standard_normal((2, 1, n, 8)).astype(np.float32)
    b = rng.standard_normal((3, 8, 5)).astype(np.float32)
    v = rng.standard_normal(8).astype(np.float32)
    c, d = run(text, a, b, v)
    np.testing.assert_allclose(c, np.matmul(a, b), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(d, a @ v, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("reduction", ["none", "add", "mul", "max", "min"])
@pytest.mark.parametrize("n", SIZES)
def test_scatter_elements(n, reduction, rng, run):
    """Along axis 1 of a [n, 5] map, with indices covering fewer rows than the data,
    negative indices and, for the reductions, repeated ones (where `none` takes the last)."""
    text = f"""func.func @main(%x: tensor<?x5xf32>, %i: tensor<?x3xi64>, %u: tensor<?x3xf32>) -> tensor<?x5xf32> {{
  %y = graph.scatter_elements %x, %i, %u {{axis = 1 : i64, reduction = "{reduction}"}} : (tensor<?x5xf32>, tensor<?x3xi64>, tensor<?x3xf32>) -> tensor<?x5xf32>
  func.return %y : tensor<?x5xf32>
}}"""
    x = rng.standard_normal((n, 5)).astype(np.float32)
    rows = max(n - 1, 1)
    i = rng.integers(-5, 5, (rows, 3))
    u = rng.standard_normal((rows, 3)).astype(np.float32)
    want = x.copy()
    combine = {"none": lambda a, b: b, "add": np.add, "mul": np.multiply, "max": np.maximum, "min": np.minimum}
    for r in range(rows):
        for c in range(3):
            want[r, i[r, c] % 5] = combine[reduction](want[r, i[r, c] % 5], u[r, c])
    np.testing.assert_allclose(run(text, x, i, u)[0], want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("reduction", ["none", "add"])
@pytest.mark.parametrize("n", SIZES)
def test_scatter_nd(n, reduction, rng, run):
    """Index rows of length 2 into a [4, n, 3] map: each replaces (or adds to) a row of 3."""
    text = f"""func.func @main(%x: tensor<4x?x3xf32>, %i: tensor<?x2xi64>, %u: tensor<?x3xf32>) -> tensor<4x?x3xf32> {{
  %y = graph.scatter_nd %x, %i, %u {{reduction = "{reduction}"}} : (tensor<4x?x3xf32>, tensor<?x2xi64>, tensor<?x3xf32>) -> tensor<4x?x3xf32>
  func.return %y : tensor<4x?x3xf32>
}}"""
    x = rng.standard_normal((4, n, 3)).astype(np.float32)
    i = np.stack([rng.integers(-4, 4, 6), rng.integers(-n, n, 6)], axis=1)
    u = rng.standard_normal((6, 3)).astype(np.float32)
    want = x.copy()
    for m in range(6):
        if reduction == "none":
            want[i[m, 0], i[m, 1]] = u[m]
        else:
            want[i[m, 0], i[m, 1]] += u[m]
    np.testing.assert_allclose(run(text, x, i, u)[0], want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("n", SIZES)
def test_gather_nd(n, rng, run):
    """Rows of length 2 into a [n, 4, 3] map picking its rows of 3 (negative indices
    included); with one batch dim, rows of length 1 picking a row of 3 per batch."""
    text = """func.func @main(%x: tensor<?x4x3xf32>, %i: tensor<5x2xi64>, %j: tensor<?x2x1xi64>) -> (tensor<5x3xf32>, tensor<?x2x3xf32>) {
  %y = graph.gather_nd %x, %i : (tensor<?x4x3xf32>, tensor<5x2xi64>) -> tensor<5x3xf32>
  %z = graph.gather_nd %x, %j {batch_dims = 1 : i64} : (tensor<?x4x3xf32>, tensor<?x2x1xi64>) -> tensor<?x2x3xf32>
  func.return %y, %z : tensor<5x3xf32>, tensor<?x2x3xf32>
}"""
    x = rng.standard_normal((n, 4, 3)).astype(np.float32)
    i = np.stack([rng.integers(-n, n, 5), rng.integers(-4, 4, 5)], axis=1)
    j = rng.integers(-4, 4, (n, 2, 1))
    y, z = run(text, x, i, j)
    np.testing.assert_array_equal(y, x[i[:, 0], i[:, 1]])
    np.testing.assert_array_equal(z, np.stack([x[b][j[b, :, 0]] for b in range(n)]))


@pytest.mark.parametrize("n", SIZES)
def test_one_hot(n, rng, run):
    """Depth 5 on a new last axis and a new first axis; negative indices count from the
    depth, ones out of range give a row of `off`."""
    text = """func.func @main(%i: tensor<?x3xi64>, %v: tensor<2xf32>) -> (tensor<?x3x5xf32>, tensor<5x?x3xf32>) {
  %a = graph.one_hot %i, %v {depth = 5 : i64} : (tensor<?x3xi64>, tensor<2xf32>) -> tensor<?x3x5xf32>
  %b = graph.one_hot %i, %v {depth = 5 : i64, axis = 0 : i64} : (tensor<?x3xi64>, tensor<2xf32>) -> tensor<5x?x3xf32>
  func.return %a, %b : tensor<?x3x5xf32>, tensor<5x?x3xf32>
}"""
    i = rng.integers(-7, 7, (n, 3))
    v = np.array([-1.5, 2.0], np.float32)
    a, b = run(text, i, v)
    want = np.full((n, 3, 5), -1.5, np.float32)
    for p in np.ndindex(n, 3):
        if -5 <= i[p] < 5:
            want[(*p, i[p] % 5)] = 2.0
    np.testing.assert_array_equal(a, want)
    np.testing.assert_array_equal(b, np.moveaxis(want, -1, 0))


@pytest.mark.parametrize("n", SIZES)
def test_einsum(n, rng, run):
    """Attention scores, a broadcast subscript (`?` of 1 against 3), a diagonal, a
    transpose and a full contraction to a scalar."""
    text = """func.func @main(%q: tensor<?x2x?x16xf32>, %k: tensor<?x2x5x16xf32>, %a: tensor<?x3xf32>, %b: tensor<4x3xf32>, %m: tensor<6x6xf32>) -> (tensor<?x2x?x5xf32>, tensor<?x4xf32>, tensor<6xf32>, tensor<3x?xf32>, tensor<f32>) {
  %s = graph.einsum %q, %k {equation = "bhqd,bhkd->bhqk"} : (tensor<?x2x?x16xf32>, tensor<?x2x5x16xf32>) -> tensor<?x2x?x5xf32>
  %o = graph.einsum %a, %b {equation = "ij,kj->ik"} : (tensor<?x3xf32>, tensor<4x3xf32>) -> tensor<?x4xf32>
  %d = graph.einsum %m {equation = "ii->i"} : (tensor<6x6xf32>) -> tensor<6xf32>
  %t = graph.einsum %a {equation = "ij->ji"} : (tensor<?x3xf32>) -> tensor<3x?xf32>
  %f = graph.einsum %a, %a {equation = "ij,ij->"} : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<f32>
  func.return %s, %o, %d, %t, %f : tensor<?x2x?x5xf32>, tensor<?x4xf32>, tensor<6xf32>, tensor<3x?xf32>, tensor<f32>
}"""
    q = rng.standard_normal((3, 2, n, 16)).astype(np.float32)
    k = rng.standard_normal((3, 2, 5, 16)).astype(np.float32)
    a = rng.standard_normal((n, 3)).astype(np.float32)
    b = rng.standard_normal((4, 3)).astype(np.float32)
    m = rng.standard_normal((6, 6)).astype(np.float32)
    s, o, d, t, f = run(text, q, k, a, b, m)
    np.testing.assert_allclose(s, np.einsum("bhqd,bhkd->bhqk", q, k), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(o, a @ b.T, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(d, np.diag(m), rtol=1e-6)
    np.testing.assert_array_equal(t, a.T)
    np.testing.assert_allclose(f, np.sum(a * a), rtol=1e-5)
    q1 = q[:1]  # batch 1 against k's 3: subscript b broadcast
    s1 = run(text, q1, k, a, b, m)[0]
    np.testing.assert_allclose(s1, np.einsum("bhqd,bhkd->bhqk", np.broadcast_to(q1, (3, *q1.shape[1:])), k),
                               rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("n", SIZES)
def test_dense(n, rng, run):
    text = """func.func @main(%x: tensor<?x6xf32>, %w: tensor<4x6xf32>, %b: tensor<4xf32>) -> tensor<?x4xf32> {
  %y = graph.dense %x, %w, %b : (tensor<?x6xf32>, tensor<4x6xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  func.return %y : tensor<?x4xf32>
}"""
    x, w, b = (rng.standard_normal(s).astype(np.float32) for s in [(n, 6), (4, 6), (4,)])
    (y,) = run(text, x, w, b)
    np.testing.assert_allclose(y, x @ w.T + b, rtol=1e-5, atol=1e-5)


def conv2d_naive(x, w, b, stride, pad, dilation, groups):
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    s0, s1 = stride if isinstance(stride, tuple) else (stride, stride)
    xp = np.pad(x, ((0, 0), (0, 0), (pad[0], pad[2]), (pad[1], pad[3])))
    oh = (h + pad[0] + pad[2] - dilation * (kh - 1) - 1) // s0 + 1
    ow = (wd + pad[1] + pad[3] - dilation * (kw - 1) - 1) // s1 + 1
    out = np.zeros((n, o, oh, ow))
    opg = o // groups
    for oc in range(o):
        g = oc // opg
        for i in range(oh):
            for j in range(ow):
                patch = xp[:, g * cg:(g + 1) * cg, i * s0:i * s0 + dilation * (kh - 1) + 1:dilation,
                           j * s1:j * s1 + dilation * (kw - 1) + 1:dilation]
                out[:, oc, i, j] = (patch * w[oc]).sum(axis=(1, 2, 3))
    return out + b.reshape(1, -1, 1, 1)


@pytest.mark.parametrize("size", [1, 7, 10])
@pytest.mark.parametrize("stride,pad,dilation,groups", [(1, (0, 0, 0, 0), 1, 1), (2, (1, 1, 1, 1), 1, 2), (1, (2, 1, 0, 1), 2, 1)])
def test_conv2d(size, stride, pad, dilation, groups, rng, run):
    x = rng.standard_normal((2, 4, size + 4, size + 3)).astype(np.float32)
    w = rng.standard_normal((6, 4 // groups, 3, 3)).astype(np.float32)
    b = rng.standard_normal(6).astype(np.float32)
    text = f"""func.func @main(%x: tensor<?x4x?x?xf32>, %w: tensor<6x{4 // groups}x3x3xf32>, %b: tensor<6xf32>) -> tensor<?x6x?x?xf32> {{
  %y = graph.conv2d %x, %w, %b {{strides = array<i64: {stride}, {stride}>, padding = array<i64: {", ".join(map(str, pad))}>, dilations = array<i64: {dilation}, {dilation}>, groups = {groups} : i64}} : (tensor<?x4x?x?xf32>, tensor<6x{4 // groups}x3x3xf32>, tensor<6xf32>) -> tensor<?x6x?x?xf32>
  func.return %y : tensor<?x6x?x?xf32>
}}"""
    (y,) = run(text, x, w, b)
    np.testing.assert_allclose(y, conv2d_naive(x, w, b, stride, pad, dilation, groups), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("size", [1, 7, 10])
@pytest.mark.parametrize("stride,pad,dilation,after", [(1, (1, 1, 1, 1), 1, ""), (2, (1, 2, 0, 1), 1, "relu"),
                                                       (1, (2, 0, 2, 3), 2, "sigmoid")])
@pytest.mark.parametrize("groups", [4, 2])
def test_depthwise_and_grouped_conv2d(size, stride, pad, dilation, after, groups, rng, run):
    """Each output channel from one input channel (groups 4: two per input channel) or
    from two (groups 2): computed row by row over the padded input, every tap along a
    vector of pixels; as the kernel's output, or read by the op after it."""
    x = rng.standard_normal((2, 4, size + 4, size + 3)).astype(np.float32)
    w = rng.standard_normal((8, 4 // groups, 3, 3)).astype(np.float32)
    b = rng.standard_normal(8).astype(np.float32)
    result = "%y" if not after else "%z"
    then = f"  %z = graph.{after} %y : tensor<?x8x?x?xf32> -> tensor<?x8x?x?xf32>\n" if after else ""
    text = f"""func.func @main(%x: tensor<?x4x?x?xf32>, %w: tensor<8x{4 // groups}x3x3xf32>, %b: tensor<8xf32>) -> tensor<?x8x?x?xf32> {{
  %y = graph.conv2d %x, %w, %b {{strides = array<i64: {stride}, {stride}>, padding = array<i64: {", ".join(map(str, pad))}>, dilations = array<i64: {dilation}, {dilation}>, groups = {groups} : i64}} : (tensor<?x4x?x?xf32>, tensor<8x{4 // groups}x3x3xf32>, tensor<8xf32>) -> tensor<?x8x?x?xf32>
{then}  func.return {result} : tensor<?x8x?x?xf32>
}}"""
    (y,) = run(text, x, w, b)
    expected = conv2d_naive(x, w, b, stride, pad, dilation, groups)
    expected = {"": expected, "relu": np.maximum(expected, 0), "sigmoid": 1 / (1 + np.exp(-expected))}[after]
    np.testing.assert_allclose(y, expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("stride,pad,dilation", [(1, (2, 2, 2, 2), 1), (2, (1, 2, 0, 3), 1), (1, (4, 1, 3, 4), 2)])
@pytest.mark.parametrize("hw", [(22, 25), (21, 64)])
def test_depthwise_conv2d_read_in_place(hw, stride, pad, dilation, rng, run):
    """5 x 5 windows on maps of at least `IN_PLACE_WINDOWS` windows: the input read in
    place, the rows and columns whose windows overhang the padding through a select."""
    x = rng.standard_normal((2, 6, *hw)).astype(np.float32)
    w = rng.standard_normal((6, 1, 5, 5)).astype(np.float32)
    b = rng.standard_normal(6).astype(np.float32)
    text = f"""func.func @main(%x: tensor<?x6x{hw[0]}x{hw[1]}xf32>, %w: tensor<6x1x5x5xf32>, %b: tensor<6xf32>) -> tensor<?x6x?x?xf32> {{
  %y = graph.conv2d %x, %w, %b {{strides = array<i64: {stride}, {stride}>, padding = array<i64: {", ".join(map(str, pad))}>, dilations = array<i64: {dilation}, {dilation}>, groups = 6 : i64}} : (tensor<?x6x{hw[0]}x{hw[1]}xf32>, tensor<6x1x5x5xf32>, tensor<6xf32>) -> tensor<?x6x?x?xf32>
  func.return %y : tensor<?x6x?x?xf32>
}}"""
    (y,) = run(text, x, w, b)
    np.testing.assert_allclose(y, conv2d_naive(x, w, b, stride, pad, dilation, 6), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("hw,k,stride,pad,dilation", [
    ((7, 7), 5, 1, (2, 2, 2, 2), 1), ((14, 14), 5, 1, (2, 2, 2, 2), 1), ((7, 7), 3, 1, (1, 1, 1, 1), 1),
    ((6, 13), 3, 1, (0, 0, 0, 0), 1), ((7, 7), 3, 1, (2, 1, 0, 1), 2), ((6, 13), 5, 1, (1, 2, 3, 0), 1),
    ((28, 28), 5, 2, (2, 2, 2, 2), 1), ((7, 7), 3, 2, (1, 1, 1, 1), 1), ((14, 14), 5, 2, (2, 2, 2, 2), 1),
    ((9, 11), 3, 2, (1, 0, 2, 1), 2), ((10, 12), 3, (1, 2), (1, 1, 1, 1), 1)])
@pytest.mark.parametrize("cg,multiplier,after", [(1, 1, ""), (1, 2, "relu"), (4, 1, "relu")])
def test_depthwise_conv2d_in_wide_rows(hw, k, stride, pad, dilation, cg, multiplier, after, rng):
    """Small maps of known size, compiled for an AVX2 CPU (8 lanes, no masks): each
    channel's rows as one run of pixels past the rows' ends over the padded input, or
    over its phase planes for a stride of 2 (`lowering/kernels/wide_rows.py`), then copied
    out, at batch 1 and 3; depthwise with a channel multiplier of 1 or 2, or groups of 4
    channels; the kernel's output or read by the op after it."""
    from nimble import compile, parse
    from nimble.compile import run_stages
    from nimble.dialects import kernel_analysis, loop
    from nimble.dialects.target import set_target
    from nimble.runtime import cpu_target

    c = 6 if cg == 1 else 8
    groups, o = c // cg, c * multiplier
    s0, s1 = stride if isinstance(stride, tuple) else (stride, stride)
    oh, ow = ((hw[i] + pad[i] + pad[i + 2] - dilation * (k - 1) - 1) // s + 1 for i, s in ((0, s0), (1, s1)))
    shape = f"{c}x{hw[0]}x{hw[1]}"
    result = "%y" if not after else "%z"
    then = f"  %z = graph.{after} %y : tensor<?x{o}x{oh}x{ow}xf32> -> tensor<?x{o}x{oh}x{ow}xf32>\n" if after else ""
    text = f"""func.func @main(%x: tensor<?x{shape}xf32>, %w: tensor<{o}x{cg}x{k}x{k}xf32>, %b: tensor<{o}xf32>) -> tensor<?x{o}x{oh}x{ow}xf32> {{
  %y = graph.conv2d %x, %w, %b {{strides = array<i64: {s0}, {s1}>, padding = array<i64: {", ".join(map(str, pad))}>, dilations = array<i64: {dilation}, {dilation}>, groups = {groups} : i64}} : (tensor<?x{shape}xf32>, tensor<{o}x{cg}x{k}x{k}xf32>, tensor<{o}xf32>) -> tensor<?x{o}x{oh}x{ow}xf32>
{then}  func.return {result} : tensor<?x{o}x{oh}x{ow}xf32>
}}"""
    module = parse(text)
    set_target(module, cpu_target.resolve("haswell", ""))
    run_stages(module, ["graph", "recurrences", "layout", "loops"])
    wq = -(-(hw[1] + pad[1] + pad[3]) // s1)
    assert f"memref<{(oh - 1) * wq + ow}xf32>" in str(module), "the wide rows' buffer"
    # Its work per element counts the taps' multiply-adds (unrolled), for the launch's split.
    assert [kernel_analysis.kernel_work(kernel) for kernel in loop.kernels_of(module)] == [cg * k * k]
    if cpu_target.named("haswell").missing_on(cpu_target.host()):
        pytest.skip("this host cannot run AVX2 code")
    exe = compile(text, cpu="haswell")
    w = rng.standard_normal((o, cg, k, k)).astype(np.float32)
    b = rng.standard_normal(o).astype(np.float32)
    for n in (1, 3):
        x = rng.standard_normal((n, c, *hw)).astype(np.float32)
        expected = conv2d_naive(x, w, b, (s0, s1), pad, dilation, groups)
        expected = np.maximum(expected, 0) if after else expected
        np.testing.assert_allclose(exe.run(x, w, b)[0], expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("size", [1, 7, 10])
@pytest.mark.parametrize("stride,pad,dilation,after", [(1, (1, 1, 1, 1), 1, ""), (2, (1, 2, 0, 1), 1, "relu"),
                                                       (1, (2, 0, 2, 3), 2, "sigmoid")])
@pytest.mark.parametrize("groups", [2, 3])
def test_wide_grouped_conv2d(size, stride, pad, dilation, after, groups, rng, run):
    """Groups of more input channels than the row-by-row form takes (`GROUP_TAPS`:
    ResNeXt's 32-channel groups): each output channel a product with the im2col rows of
    its own group's channels."""
    cg = 18  # 18 x 3 x 3 = 162 taps a pixel
    c, o = cg * groups, 4 * groups
    x = rng.standard_normal((2, c, size + 4, size + 3)).astype(np.float32)
    w = rng.standard_normal((o, cg, 3, 3)).astype(np.float32) * 0.1
    b = rng.standard_normal(o).astype(np.float32)
    result = "%y" if not after else "%z"
    then = f"  %z = graph.{after} %y : tensor<?x{o}x?x?xf32> -> tensor<?x{o}x?x?xf32>\n" if after else ""
    text = f"""func.func @main(%x: tensor<?x{c}x?x?xf32>, %w: tensor<{o}x{cg}x3x3xf32>, %b: tensor<{o}xf32>) -> tensor<?x{o}x?x?xf32> {{
  %y = graph.conv2d %x, %w, %b {{strides = array<i64: {stride}, {stride}>, padding = array<i64: {", ".join(map(str, pad))}>, dilations = array<i64: {dilation}, {dilation}>, groups = {groups} : i64}} : (tensor<?x{c}x?x?xf32>, tensor<{o}x{cg}x3x3xf32>, tensor<{o}xf32>) -> tensor<?x{o}x?x?xf32>
{then}  func.return {result} : tensor<?x{o}x?x?xf32>
}}"""
    (y,) = run(text, x, w, b)
    expected = conv2d_naive(x, w, b, stride, pad, dilation, groups)
    expected = {"": expected, "relu": np.maximum(expected, 0), "sigmoid": 1 / (1 + np.exp(-expected))}[after]
    np.testing.assert_allclose(y, expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("size", [2, 7, 16])
def test_pooling(size, rng, run):
    text = """func.func @main(%x: tensor<1x3x?x?xf32>) -> (tensor<1x3x?x?xf32>, tensor<1x3x?x?xf32>, tensor<1x3x1x1xf32>) {
  %m = graph.max_pool2d %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : tensor<1x3x?x?xf32> -> tensor<1x3x?x?xf32>
  %a = graph.avg_pool2d %x {kernel = array<i64: 2, 2>, strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 1, 1>} : tensor<1x3x?x?xf32> -> tensor<1x3x?x?xf32>
  %g = graph.global_avg_pool2d %x : tensor<1x3x?x?xf32> -> tensor<1x3x1x1xf32>
  func.return %m, %a, %g : tensor<1x3x?x?xf32>, tensor<1x3x?x?xf32>, tensor<1x3x1x1xf32>
}"""
    x = rng.standard_normal((1, 3, size, size + 1)).astype(np.float32)
    m, a, g = run(text, x)
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)), constant_values=-np.inf)
    oh, ow = (size - 1) // 2 + 1, size // 2 + 1
    expected_max = np.array([[[[xp[0, c, 2 * i:2 * i + 3, 2 * j:2 * j + 3].max() for j in range(ow)] for i in range(oh)] for c in range(3)]])
    np.testing.assert_allclose(m, expected_max)
    # avg with padding at the bottom/right only counts real cells
    expected_avg = np.zeros((1, 3, size, size + 1))
    for i in range(size):
        for j in range(size + 1):
            expected_avg[0, :, i, j] = x[0, :, i:i + 2, j:j + 2].mean(axis=(1, 2))
    np.testing.assert_allclose(a, expected_avg, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(g, x.mean(axis=(2, 3), keepdims=True), rtol=1e-5)


@pytest.mark.parametrize("size", [2, 7])
def test_avg_pool_counting_padding(size, rng, run):
    text = """func.func @main(%x: tensor<1x3x?x?xf32>) -> tensor<1x3x?x?xf32> {
  %a = graph.avg_pool2d %x {kernel = array<i64: 3, 3>, strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, count_include_pad = true} : tensor<1x3x?x?xf32> -> tensor<1x3x?x?xf32>
  func.return %a : tensor<1x3x?x?xf32>
}"""
    x = rng.standard_normal((1, 3, size, size + 1)).astype(np.float32)
    (a,) = run(text, x)
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    expected = np.array([[[[xp[0, c, i:i + 3, j:j + 3].sum() / 9 for j in range(size + 1)] for i in range(size)]
                          for c in range(3)]])
    np.testing.assert_allclose(a, expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("n", SIZES)
def test_norms_and_softmax(n, rng, run):
    text = """func.func @main(%x: tensor<?x4x3xf32>, %s: tensor<4xf32>, %b: tensor<4xf32>, %m: tensor<4xf32>, %v: tensor<4xf32>, %g: tensor<3xf32>) -> (tensor<?x4x3xf32>, tensor<?x4x3xf32>, tensor<?x4x3xf32>) {
  %bn = graph.batch_norm %x, %s, %b, %m, %v {epsilon = 1.0e-03 : f64} : (tensor<?x4x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<?x4x3xf32>
  %ln = graph.layer_norm %x, %g, %g : (tensor<?x4x3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<?x4x3xf32>
  %sm = graph.softmax %x {axis = 1 : i64} : tensor<?x4x3xf32> -> tensor<?x4x3xf32>
  func.return %bn, %ln, %sm : tensor<?x4x3xf32>, tensor<?x4x3xf32>, tensor<?x4x3xf32>
}"""
    x = rng.standard_normal((n, 4, 3)).astype(np.float32)
    s, b, m = (rng.standard_normal(4).astype(np.float32) for _ in range(3))
    v = rng.uniform(0.5, 2, 4).astype(np.float32)
    g = rng.standard_normal(3).astype(np.float32)
    bn, ln, sm = run(text, x, s, b, m, v, g)
    r = lambda a: a.reshape(1, 4, 1)
    np.testing.assert_allclose(bn, (x - r(m)) / np.sqrt(r(v) + 1e-3) * r(s) + r(b), rtol=1e-5, atol=1e-5)
    mu, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    np.testing.assert_allclose(ln, (x - mu) / np.sqrt(var + 1e-5) * g + g, rtol=1e-4, atol=1e-4)
    e = np.exp(x - x.max(1, keepdims=True))
    np.testing.assert_allclose(sm, e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("n", SIZES)
def test_reductions(n, rng, run):
    text = """func.func @main(%x: tensor<?x?x4xf32>) -> (tensor<?x1x4xf32>, tensor<?xf32>, tensor<f32>, tensor<?x?xi64>) {
  %s = graph.reduce_sum %x {axes = array<i64: 1>, keepdims = true} : tensor<?x?x4xf32> -> tensor<?x1x4xf32>
  %m = graph.reduce_mean %x {axes = array<i64: 1, -1>} : tensor<?x?x4xf32> -> tensor<?xf32>
  %a = graph.reduce_max %x : tensor<?x?x4xf32> -> tensor<f32>
  %i = graph.argmax %x {axis = 2 : i64} : tensor<?x?x4xf32> -> tensor<?x?xi64>
  func.return %s, %m, %a, %i : tensor<?x1x4xf32>, tensor<?xf32>, tensor<f32>, tensor<?x?xi64>
}"""
    x = rng.standard_normal((n, 3, 4)).astype(np.float32)
    s, m, a, i = run(text, x)
    np.testing.assert_allclose(s, x.sum(1, keepdims=True), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(m, x.mean((1, 2)), rtol=1e-5, atol=1e-6)
    assert a == x.max()
    np.testing.assert_array_equal(i, x.argmax(2))


@pytest.mark.parametrize("n", SIZES)
def test_min_and_product(n, rng, run):
    """reduce_min and reduce_prod along a `?` axis and across it, floats (a NaN wins the
    minimum) and integers (the type's extremes; products wrap)."""
    text = """func.func @main(%x: tensor<?x5xf32>, %i: tensor<3x?xi32>) -> (tensor<5xf32>, tensor<?xf32>, tensor<?x1xf32>, tensor<3xi32>, tensor<3x1xi32>) {
  %a = graph.reduce_min %x {axes = array<i64: 0>} : tensor<?x5xf32> -> tensor<5xf32>
  %b = graph.reduce_min %x {axes = array<i64: 1>} : tensor<?x5xf32> -> tensor<?xf32>
  %c = graph.reduce_prod %x {axes = array<i64: -1>, keepdims = true} : tensor<?x5xf32> -> tensor<?x1xf32>
  %d = graph.reduce_min %i {axes = array<i64: 1>} : tensor<3x?xi32> -> tensor<3xi32>
  %e = graph.reduce_prod %i {axes = array<i64: 1>, keepdims = true} : tensor<3x?xi32> -> tensor<3x1xi32>
  func.return %a, %b, %c, %d, %e : tensor<5xf32>, tensor<?xf32>, tensor<?x1xf32>, tensor<3xi32>, tensor<3x1xi32>
}"""
    x = rng.uniform(0.5, 1.5, (n, 5)).astype(np.float32)
    x[n // 2, 3] = np.nan
    i = rng.integers(-40, 41, (3, n)).astype(np.int32)
    i[0, 0] = np.iinfo(np.int32).min  # -min(-x) would give it back as itself, not the minimum
    i[1, n - 1] = np.iinfo(np.int32).max
    a, b, c, d, e = run(text, x, i)
    np.testing.assert_array_equal(a, x.min(0))
    np.testing.assert_array_equal(b, x.min(1))
    np.testing.assert_allclose(c, x.prod(1, keepdims=True), rtol=1e-5)
    np.testing.assert_array_equal(d, i.min(1))
    np.testing.assert_array_equal(e, i.prod(1, keepdims=True, dtype=np.int32))


@pytest.mark.parametrize("n", SIZES)
def test_cumprod_forms(n, rng, run):
    """Every (exclusive, reverse) form of the running product along an axis of `?`
    length; integers wrap in their type."""
    text = """func.func @main(%x: tensor<3x?xf32>, %i: tensor<?x2xi32>) -> (tensor<3x?xf32>, tensor<3x?xf32>, tensor<3x?xf32>, tensor<3x?xf32>, tensor<?x2xi32>) {
  %a = graph.cumprod %x {axis = 1 : i64} : tensor<3x?xf32> -> tensor<3x?xf32>
  %b = graph.cumprod %x {axis = -1 : i64, exclusive = true} : tensor<3x?xf32> -> tensor<3x?xf32>
  %c = graph.cumprod %x {axis = 1 : i64, reverse = true} : tensor<3x?xf32> -> tensor<3x?xf32>
  %d = graph.cumprod %x {axis = 1 : i64, exclusive = true, reverse = true} : tensor<3x?xf32> -> tensor<3x?xf32>
  %e = graph.cumprod %i : tensor<?x2xi32> -> tensor<?x2xi32>
  func.return %a, %b, %c, %d, %e : tensor<3x?xf32>, tensor<3x?xf32>, tensor<3x?xf32>, tensor<3x?xf32>, tensor<?x2xi32>
}"""
    x = rng.uniform(0.5, 1.5, (3, n)).astype(np.float32)
    i = rng.integers(-9, 10, (n, 2)).astype(np.int32)
    a, b, c, d, e = run(text, x, i)
    flip = x[:, ::-1]
    np.testing.assert_allclose(a, np.cumprod(x, 1), rtol=1e-5)
    np.testing.assert_allclose(b, np.concatenate([np.ones((3, 1), np.float32), np.cumprod(x, 1)[:, :-1]], 1), rtol=1e-5)
    np.testing.assert_allclose(c, np.cumprod(flip, 1)[:, ::-1], rtol=1e-5)
    np.testing.assert_allclose(d, np.concatenate([np.ones((3, 1), np.float32), np.cumprod(flip, 1)[:, :-1]], 1)[:, ::-1],
                               rtol=1e-5)
    np.testing.assert_array_equal(e, np.cumprod(i, 0, dtype=np.int32))


@pytest.mark.parametrize("n", SIZES)
def test_cumsum_forms(n, rng, run):
    """Every (exclusive, reverse) form along an axis of `?` length, floats and ints."""
    text = """func.func @main(%x: tensor<3x?xf32>, %i: tensor<?x2xi64>) -> (tensor<3x?xf32>, tensor<3x?xf32>, tensor<3x?xf32>, tensor<3x?xf32>, tensor<?x2xi64>) {
  %a = graph.cumsum %x {axis = 1 : i64} : tensor<3x?xf32> -> tensor<3x?xf32>
  %b = graph.cumsum %x {axis = -1 : i64, exclusive = true} : tensor<3x?xf32> -> tensor<3x?xf32>
  %c = graph.cumsum %x {axis = 1 : i64, reverse = true} : tensor<3x?xf32> -> tensor<3x?xf32>
  %d = graph.cumsum %x {axis = 1 : i64, exclusive = true, reverse = true} : tensor<3x?xf32> -> tensor<3x?xf32>
  %e = graph.cumsum %i : tensor<?x2xi64> -> tensor<?x2xi64>
  func.return %a, %b, %c, %d, %e : tensor<3x?xf32>, tensor<3x?xf32>, tensor<3x?xf32>, tensor<3x?xf32>, tensor<?x2xi64>
}"""
    x = rng.standard_normal((3, n)).astype(np.float32)
    i = rng.integers(-5, 6, (n, 2))
    a, b, c, d, e = run(text, x, i)
    total = x.sum(1, keepdims=True)
    np.testing.assert_allclose(a, np.cumsum(x, 1), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(b, np.cumsum(x, 1) - x, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(c, total - np.cumsum(x, 1) + x, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(d, total - np.cumsum(x, 1), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(e, np.cumsum(i, 0))


@pytest.mark.parametrize("n", SIZES)
def test_float_classes(n, rng, run):
    text = """func.func @main(%x: tensor<?x6xf32>) -> (tensor<?x6xi1>, tensor<?x6xi1>, tensor<?x6xi1>, tensor<?x6xi1>) {
  %a = graph.is_nan %x : tensor<?x6xf32> -> tensor<?x6xi1>
  %b = graph.is_inf %x : tensor<?x6xf32> -> tensor<?x6xi1>
  %c = graph.is_inf %x {detect_negative = false} : tensor<?x6xf32> -> tensor<?x6xi1>
  %d = graph.is_inf %x {detect_positive = false} : tensor<?x6xf32> -> tensor<?x6xi1>
  func.return %a, %b, %c, %d : tensor<?x6xi1>, tensor<?x6xi1>, tensor<?x6xi1>, tensor<?x6xi1>
}"""
    x = rng.standard_normal((n, 6)).astype(np.float32)
    x[:, 1:5] = [np.nan, np.inf, -np.inf, 3.4e38]
    a, b, c, d = run(text, x)
    np.testing.assert_array_equal(a, np.isnan(x))
    np.testing.assert_array_equal(b, np.isinf(x))
    np.testing.assert_array_equal(c, np.isposinf(x))
    np.testing.assert_array_equal(d, np.isneginf(x))


@pytest.mark.parametrize("n", SIZES)
def test_dims_as_data(n, rng, run):
    """`graph.from_elements`: dims known at run time as a tensor (ONNX shape tensors)."""
    text = """func.func @main(%x: tensor<?x3xf32>) -> (tensor<3xi64>, tensor<2xf32>) {
  %n = dynshape.dim %x, 0 : tensor<?x3xf32>
  %c3 = arith.constant 3 : index
  %c7 = arith.constant 7 : index
  %t = graph.from_elements %n, %c3, %c7 : tensor<3xi64>
  %f = graph.from_elements %c7, %n : tensor<2xf32>
  func.return %t, %f : tensor<3xi64>, tensor<2xf32>
}"""
    t, f = run(text, rng.standard_normal((n, 3)).astype(np.float32))
    np.testing.assert_array_equal(t, np.array([n, 3, 7], np.int64))
    assert f.dtype == np.float32 and list(f) == [7.0, float(n)]

@pytest.mark.parametrize("n", SIZES)
def test_layout_ops(n, rng, run):
    text = """func.func @main(%x: tensor<?x4x6xf32>, %ids: tensor<3xi64>) -> (tensor<?x24xf32>, tensor<6x?x4xf32>, tensor<?x8x6xf32>, tensor<?x1x6xf32>, tensor<?x3x6xf32>, tensor<?x3x6xf32>, tensor<1x?x4x6xf32>) {
  %r = graph.reshape %x [-1, 24] : tensor<?x4x6xf32> -> tensor<?x24xf32>
  %t = graph.transpose %x [2, 0, 1] : tensor<?x4x6xf32> -> tensor<6x?x4xf32>
  %c = graph.concat %x, %x {axis = 1 : i64} : (tensor<?x4x6xf32>, tensor<?x4x6xf32>) -> tensor<?x8x6xf32>
  %a, %b = graph.split %x {axis = 1 : i64, sizes = array<i64: 1, 3>} : tensor<?x4x6xf32> -> (tensor<?x1x6xf32>, tensor<?x3x6xf32>)
  %g = graph.gather %x, %ids {axis = 1 : i64} : (tensor<?x4x6xf32>, tensor<3xi64>) -> tensor<?x3x6xf32>
  %u = graph.unsqueeze %x [0] : tensor<?x4x6xf32> -> tensor<1x?x4x6xf32>
  func.return %r, %t, %c, %a, %b, %g, %u : tensor<?x24xf32>, tensor<6x?x4xf32>, tensor<?x8x6xf32>, tensor<?x1x6xf32>, tensor<?x3x6xf32>, tensor<?x3x6xf32>, tensor<1x?x4x6xf32>
}"""
    x = rng.standard_normal((n, 4, 6)).astype(np.float32)
    ids = np.array([3, -1, 0], np.int64)
    r, t, c, a, b, g, u = run(text, x, ids)
    np.testing.assert_array_equal(r, x.reshape(-1, 24))
    np.testing.assert_array_equal(t, x.transpose(2, 0, 1))
    np.testing.assert_array_equal(c, np.concatenate([x, x], 1))
    np.testing.assert_array_equal(a, x[:, :1])
    np.testing.assert_array_equal(b, x[:, 1:])
    np.testing.assert_array_equal(g, x[:, [3, 3, 0]])
    np.testing.assert_array_equal(u, x[None])


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("axis", [0, 1])
def test_gather_elements(n, axis, rng, run):
    k = 3 if axis == 1 else n + 2  # fewer picks than the axis has (axis 1), more (axis 0)
    out = "?x3" if axis == 1 else "?x7"
    text = f"""func.func @main(%x: tensor<?x7xf32>, %idx: tensor<{out}xi64>) -> tensor<{out}xf32> {{
  %y = graph.gather_elements %x, %idx {{axis = {axis} : i64}} : (tensor<?x7xf32>, tensor<{out}xi64>) -> tensor<{out}xf32>
  func.return %y : tensor<{out}xf32>
}}"""
    x = rng.standard_normal((n, 7)).astype(np.float32)
    size = x.shape[axis]
    idx = rng.integers(-size, size, (n, k) if axis == 1 else (k, 7)).astype(np.int64)
    (y,) = run(text, x, idx)
    np.testing.assert_array_equal(y, np.take_along_axis(x, idx % size, axis=axis))


def test_gather_elements_checks_its_operands(run):
    with pytest.raises(Exception, match="indices dim 0 must equal the input's"):
        run("""func.func @main(%x: tensor<?x7xf32>, %idx: tensor<?x2xi64>) -> tensor<?x2xf32> {
  %y = graph.gather_elements %x, %idx {axis = 1 : i64} : (tensor<?x7xf32>, tensor<?x2xi64>) -> tensor<?x2xf32>
  func.return %y : tensor<?x2xf32>
}""", np.zeros((3, 7), np.float32), np.zeros((4, 2), np.int64))
    # The reference rejects indices out of range; compiled kernels clamp them, as for
    # graph.gather (never a read outside the input).
    with pytest.raises(Exception, match="out of range"):
        run_mlir("""func.func @main(%x: tensor<?x7xf32>, %idx: tensor<?x2xi64>) -> tensor<?x2xf32> {
  %y = graph.gather_elements %x, %idx {axis = 1 : i64} : (tensor<?x7xf32>, tensor<?x2xi64>) -> tensor<?x2xf32>
  func.return %y : tensor<?x2xf32>
}""", np.zeros((3, 7), np.float32), np.full((3, 2), 7, np.int64))


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("k", [0, 1, 5, -2, 100])
def test_slice_dynamic_bounds(n, k, rng, run):
    text = """func.func @main(%x: tensor<?x8xf32>, %k: index) -> (tensor<?x3xf32>, tensor<?x8xf32>) {
  %a = graph.slice %x[:%k, 1:-1:2] : tensor<?x8xf32> -> tensor<?x3xf32>
  %b = graph.slice %x[%k:, :] : tensor<?x8xf32> -> tensor<?x8xf32>
  func.return %a, %b : tensor<?x3xf32>, tensor<?x8xf32>
}"""
    x = rng.standard_normal((n, 8)).astype(np.float32)
    a, b = run(text, x, k)
    np.testing.assert_array_equal(a, x[:k, 1:-1:2])
    np.testing.assert_array_equal(b, x[k:])


@pytest.mark.parametrize("n", SIZES)
def test_shape_driven_creation(n, rng, run):
    text = """func.func @main(%x: tensor<?x3xf32>) -> (tensor<?x3xf32>, tensor<?x3xi32>, tensor<?x3xf32>, tensor<?xi64>, tensor<3x?xf32>) {
  %s = dynshape.of %x : tensor<?x3xf32> -> !dynshape.shape<2>
  %z = graph.zeros %s : !dynshape.shape<2> -> tensor<?x3xf32>
  %f = graph.full %s {value = 7 : i32} : !dynshape.shape<2> -> tensor<?x3xi32>
  %row = graph.slice %x[0:1, :] : tensor<?x3xf32> -> tensor<1x3xf32>
  %b = graph.broadcast_to %row, %s : (tensor<1x3xf32>, !dynshape.shape<2>) -> tensor<?x3xf32>
  %n = dynshape.dim %x, 0 : tensor<?x3xf32>
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %r = graph.arange %c0, %n, %c2 : tensor<?xi64>
  %d0 = dynshape.get %s, 1 : !dynshape.shape<2>
  %t = dynshape.from_dims %d0, %n : !dynshape.shape<2>
  %y = graph.dynamic_reshape %x, %t : (tensor<?x3xf32>, !dynshape.shape<2>) -> tensor<3x?xf32>
  func.return %z, %f, %b, %r, %y : tensor<?x3xf32>, tensor<?x3xi32>, tensor<?x3xf32>, tensor<?xi64>, tensor<3x?xf32>
}"""
    x = rng.standard_normal((n, 3)).astype(np.float32)
    z, f, b, r, y = run(text, x)
    assert z.shape == (n, 3) and not z.any()
    assert (f == 7).all() and f.dtype == np.int32
    np.testing.assert_array_equal(b, np.broadcast_to(x[:1], (n, 3)))
    np.testing.assert_array_equal(r, np.arange(0, n, 2))
    np.testing.assert_array_equal(y, x.reshape(3, n))


def test_external_constant(tmp_path, rng):
    w = rng.standard_normal((2, 3)).astype(np.float32)
    np.savez(tmp_path / "w.npz", fc=w)
    from nimble import interpret, parse

    module = parse("""func.func @main() -> tensor<2x3xf32> {
  %w = graph.external_constant "fc" from "w.npz" : tensor<2x3xf32>
  func.return %w : tensor<2x3xf32>
}""")
    (got,) = interpret(module, base_dir=str(tmp_path))
    np.testing.assert_array_equal(got, w)
