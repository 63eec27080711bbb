"""Every elementwise op (the scalar table) and the reductions, compiled, against the
reference interpreter at shapes whose last dim crosses the vector width (1, 15, 16,
17, 33, 100): vector lanes, remainders and the no-stretch variants all run."""

from __future__ import annotations

import numpy as np
import pytest

import nimble
from nimble.lowering.kernels.scalar import SCALAR

SHAPES = [(1, 1), (3, 15), (2, 16), (5, 17), (4, 33), (3, 100)]
FLOAT_ONLY_DOMAIN = {"log": "positive", "sqrt": "positive", "rsqrt": "positive", "pow": "positive",
                     "asin": "unit", "acos": "unit", "atanh": "unit", "acosh": "above one"}
LIBM = ("tanh", "erf", "sigmoid", "gelu", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh")
"""Ops whose kernels call the C library: f16 ones compute in f32 (no C function takes half);
on an OpenCL device without `cl_khr_fp16` (pocl) f16 groups run on the CPU."""


def _inputs(rng, op: str, shape, count: int, dtype: str):
    if dtype == "i1":
        return [rng.random(shape) < 0.5 for _ in range(count)]
    if dtype == "i32":
        return [rng.integers(-50, 50, shape).astype(np.int32) for _ in range(count)]
    values = [rng.standard_normal(shape).astype(np.float32) * 2 for _ in range(count)]
    if FLOAT_ONLY_DOMAIN.get(op) == "positive":
        values = [np.abs(v) + 0.1 for v in values]
    elif FLOAT_ONLY_DOMAIN.get(op) == "unit":
        values = [np.tanh(v) for v in values]
    elif FLOAT_ONLY_DOMAIN.get(op) == "above one":
        values = [np.abs(v) + 1 for v in values]
    if dtype == "f16":
        values = [v.astype(np.float16) for v in values]
    if op in ("is_nan", "is_inf"):  # every class of float, in every lane position
        for v in values:
            v.reshape(-1)[::3] = np.nan
            v.reshape(-1)[1::5] = np.inf
            v.reshape(-1)[2::7] = -np.inf
    return values


def _cases():
    for cls in sorted(SCALAR, key=lambda c: c.name):
        short = cls.name.split(".", 1)[1]
        if short in ("batch_norm", "clip", "cast", "where"):
            continue  # attributes or extra operands: covered by test_graph_reference
        arity = 2 if short in ("add", "sub", "mul", "div", "pow", "maximum", "minimum", "and", "or",
                               "equal", "less", "greater") else 1
        if short in ("and", "or", "not"):
            yield short, arity, "i1", "i1"
        elif short in ("equal", "less", "greater"):
            yield short, arity, "f32", "i1"
            yield short, arity, "i32", "i1"
        elif short in ("is_nan", "is_inf"):
            yield short, arity, "f32", "i1"
        else:
            yield short, arity, "f32", "f32"
            if short in LIBM:
                yield short, arity, "f16", "f16"
            if short in ("add", "sub", "mul", "maximum", "minimum", "neg", "abs", "relu", "div"):
                yield short, arity, "i32", "i32"


def _on_target(exe, target: str, dtype: str = "f32") -> None:
    """Every kernel runs where the target puts it (nothing fell back to the CPU); f16
    kernels on the CPU where the OpenCL device does not compute on halves (pocl)."""
    assert not exe.fallbacks and exe.kernel_names
    if target == "opencl":
        from nimble.runtime.opencl import OpenCLRuntime

        halves = "cl_khr_fp16" in OpenCLRuntime.get().device.extensions.split()
        where = "cpu" if dtype == "f16" and not halves else "opencl"
        assert all(k.device == where for k in exe.program.kernels), exe.program.kernels


@pytest.mark.parametrize("target", ["llvm", "opencl"])
@pytest.mark.parametrize("op,arity,dtype,rtype", list(_cases()), ids=lambda v: str(v))
def test_elementwise_op_compiled(op, arity, dtype, rtype, target, rng):
    params = ", ".join(f"%x{i}: tensor<?x?x{dtype}>" for i in range(arity))
    operands = ", ".join(f"%x{i}" for i in range(arity))
    types = ", ".join(f"tensor<?x?x{dtype}>" for _ in range(arity))
    signature = f"({types})" if arity > 1 else types
    text = f"""func.func @main({params}) -> tensor<?x?x{rtype}> {{
  %y = graph.{op} {operands} : {signature} -> tensor<?x?x{rtype}>
  func.return %y : tensor<?x?x{rtype}>
}}"""
    exe = nimble.compile(text, target=target)
    _on_target(exe, target, dtype)
    module = nimble.parse(text)
    for shape in SHAPES:
        args = _inputs(rng, op, shape, arity, dtype)
        if op == "div" and dtype == "i32":
            args[1][args[1] == 0] = 1
        got = exe(*args)
        expected = nimble.interpret(module, *args)[0]
        assert got.dtype == expected.dtype and got.shape == expected.shape
        if rtype == "f32":
            np.testing.assert_allclose(got, expected, rtol=2e-6, atol=1e-6, err_msg=f"{op} {shape}")
        elif rtype == "f16":  # (computed in f32 and rounded, against numpy's f16: an ulp or two)
            np.testing.assert_allclose(got, expected, rtol=2e-3, atol=1e-3, err_msg=f"{op} {shape}")
        else:
            np.testing.assert_array_equal(got, expected, err_msg=f"{op} {shape}")


@pytest.mark.parametrize("op,attrs,rtype", [
    ("softmax", "{axis = -1 : i64}", "tensor<?x?xf32>"),
    ("reduce_sum", "{axes = array<i64: 1>}", "tensor<?xf32>"),
    ("reduce_max", "{axes = array<i64: 1>}", "tensor<?xf32>"),
    ("reduce_mean", "{axes = array<i64: 0>}", "tensor<?xf32>"),
    ("argmax", "{axis = 1 : i64}", "tensor<?xi64>"),
])
@pytest.mark.parametrize("target", ["llvm", "opencl"])
def test_reductions_compiled(op, attrs, rtype, target, rng):
    text = f"""func.func @main(%x: tensor<?x?xf32>) -> {rtype} {{
  %y = graph.{op} %x {attrs} : tensor<?x?xf32> -> {rtype}
  func.return %y : {rtype}
}}"""
    exe = nimble.compile(text, target=target)
    _on_target(exe, target)
    module = nimble.parse(text)
    for shape in SHAPES:
        x = rng.standard_normal(shape).astype(np.float32)
        np.testing.assert_allclose(exe(x), nimble.interpret(module, x)[0], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("target", ["llvm", "opencl"])
@pytest.mark.parametrize("last", [False, True])
def test_argmax_picks_the_first_or_last_tie(last, target):
    """ONNX's `select_last_index`: the last position of the maximum (of a NaN when the
    row has one) instead of the first."""
    text = f"""func.func @main(%x: tensor<?x?xf32>) -> tensor<?xi64> {{
  %i = graph.argmax %x {{axis = 1 : i64, select_last_index = {str(last).lower()}}} : tensor<?x?xf32> -> tensor<?xi64>
  func.return %i : tensor<?xi64>
}}"""
    exe = nimble.compile(text, target=target)
    _on_target(exe, target)
    x = np.array([[1, 9, 3, 9, 0], [4, np.nan, 2, np.nan, 9], [7, 7, 7, 7, 7]], np.float32)
    want = [3, 3, 4] if last else [1, 1, 0]
    np.testing.assert_array_equal(exe(x), want)
    np.testing.assert_array_equal(nimble.interpret(nimble.parse(text), x)[0], want)
    np.testing.assert_array_equal(exe(x[:, :1]), [0, 0, 0])


@pytest.mark.parametrize("target", ["llvm", "opencl"])
@pytest.mark.parametrize("ratio", [0, 2])
@pytest.mark.parametrize("size", [(1, 1), (9, 11), (16, 33)])
def test_roi_align_compiled(ratio, size, target, rng):
    text = f"""func.func @main(%f: tensor<2x5x?x?xf32>, %r: tensor<?x4xf32>, %i: tensor<?xi64>) -> tensor<?x5x3x2xf32> {{
  %y = graph.roi_align %f, %r, %i {{output_height = 3 : i64, output_width = 2 : i64, sampling_ratio = {ratio} : i64, spatial_scale = 5.0e-01 : f64}} : (tensor<2x5x?x?xf32>, tensor<?x4xf32>, tensor<?xi64>) -> tensor<?x5x3x2xf32>
  func.return %y : tensor<?x5x3x2xf32>
}}"""
    exe = nimble.compile(text, target=target)
    _on_target(exe, target)
    h, w = size
    feat = rng.standard_normal((2, 5, h, w)).astype(np.float32)
    # Boxes inside, overhanging, outside the map, degenerate (zero size), one whose
    # first samples fall on exactly -1.0 (inside; once rounded below by a fused
    # multiply-add) with grids over a device table's `DEVICE_TABLE_GRID`, and a large
    # one (67 x 100 samples a bin).
    rois = np.array([[1, 2, 15, 12], [0, 0, 4, 4], [-6, -3, 2 * w + 5, 2 * h + 9], [3, 3, 3, 3],
                     [40, 40, 50, 60], [-30, -40, 90, 80], [0, 0, 400, 400]], np.float32)
    idx = np.array([0, 1, 1, 0, 1, 1, 0], np.int64)
    reference = nimble.parse(text)
    for count in (len(rois), 1, 0):  # the tables are sized by the boxes of each call
        np.testing.assert_allclose(exe(feat, rois[:count], idx[:count]),
                                   nimble.interpret(reference, feat, rois[:count], idx[:count])[0],
                                   rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("target", ["llvm", "opencl"])
def test_conv_with_small_static_shapes(target, rng):
    """Static shapes make the im2col buffer a stack slot; its vector stores once failed
    to compile (llvmlite types an alloca's pointer)."""
    text = """func.func @main(%x: tensor<1x1x5x5xf32>, %w: tensor<1x1x3x3xf32>) -> tensor<1x1x5x5xf32> {
  %y = graph.conv2d %x, %w {strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x1x5x5xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x5x5xf32>
  func.return %y : tensor<1x1x5x5xf32>
}"""
    exe = nimble.compile(text, target=target)
    _on_target(exe, target)
    x, w = rng.standard_normal((1, 1, 5, 5)).astype(np.float32), rng.standard_normal((1, 1, 3, 3)).astype(np.float32)
    np.testing.assert_allclose(exe(x, w), nimble.interpret(nimble.parse(text), x, w)[0], rtol=1e-5, atol=1e-6)


def test_exp_on_cpu_is_a_polynomial_accurate_to_about_an_ulp():
    """expand-math's exp (vectorised, no C library call) against float64 numpy over
    the whole f32 range, denormal results and the special values included."""
    text = """func.func @main(%x: tensor<?xf32>) -> tensor<?xf32> {
  %y = graph.exp %x : tensor<?xf32> -> tensor<?xf32>
  func.return %y : tensor<?xf32>
}"""
    exe = nimble.compile(text)
    x = np.linspace(-87.3, 88.72, 400_003).astype(np.float32)  # normal results; not a multiple of 16
    exact = np.exp(x.astype(np.float64))
    assert np.max(np.abs(exe(x) - exact) / exact) < 1.5e-7  # measured 8.3e-8 (f32 ulp: 6e-8..1.2e-7)
    tiny = np.linspace(-103.9, -87.4, 1001).astype(np.float32)  # denormal results
    np.testing.assert_allclose(exe(tiny), np.exp(tiny.astype(np.float64)).astype(np.float32), rtol=0, atol=1e-44)
    special = np.array([np.nan, np.inf, -np.inf, 88.73, 100, -104, -1e30, 0, -0.0], np.float32)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(exe(special), np.exp(special))


def test_maxima_and_minima_propagate_nan_like_numpy(rng):
    """Elementwise maximum / minimum, relu, a max reduction and a max pool on CPU
    kernels (vectors, leftovers and scalars) give numpy's values where NaN, inf and
    signed zeros meet: a NaN on either side wins."""
    text = """func.func @main(%a: tensor<?xf32>, %b: tensor<?xf32>, %m: tensor<?x?xf32>, %p: tensor<1x2x?x?xf32>) -> (tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<1x2x?x?xf32>) {
  %hi = graph.maximum %a, %b : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  %lo = graph.minimum %a, %b : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  %r = graph.relu %a : tensor<?xf32> -> tensor<?xf32>
  %rm = graph.reduce_max %m {axes = array<i64: 1>} : tensor<?x?xf32> -> tensor<?xf32>
  %mp = graph.max_pool2d %p {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : tensor<1x2x?x?xf32> -> tensor<1x2x?x?xf32>
  func.return %hi, %lo, %r, %rm, %mp : tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<1x2x?x?xf32>
}"""
    exe = nimble.compile(text)
    special = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0], np.float32)
    a, b = (v.reshape(-1) for v in np.meshgrid(special, special))
    a, b = np.tile(a, 3), np.tile(b, 3)  # 147 pairs: vectors and a leftover
    m = rng.standard_normal((37, 53)).astype(np.float32)
    m[3, 50], m[5, 0], m[7, 20], m[9, :] = np.nan, np.nan, np.nan, -np.inf
    p = rng.standard_normal((1, 2, 37, 41)).astype(np.float32)
    p[0, 0, 0, 0], p[0, 0, 10, 20], p[0, 1, 36, 40], p[0, 1, 5, 7] = np.nan, np.nan, np.nan, np.inf
    got = exe.run(a, b, m, p)
    want = nimble.interpret(nimble.parse(text), a, b, m, p)
    assert np.isnan(want[4]).sum() == 3 and np.isnan(want[3]).sum() == 3
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("source,target", [("f64", "f16"), ("f32", "f16"), ("f16", "f32"), ("f16", "f64"),
                                           ("f64", "f32")])
def test_float_casts_round_like_numpy(source, target, rng):
    """Every float conversion, including those a CPU without AVX512-FP16 (or F16C)
    makes by a call into libgcc, rounds exactly as numpy does."""
    dtypes = {"f16": np.float16, "f32": np.float32, "f64": np.float64}
    text = f"""func.func @main(%x: tensor<?x{source}>) -> tensor<?x{target}> {{
  %y = graph.cast %x : tensor<?x{source}> -> tensor<?x{target}>
  func.return %y : tensor<?x{target}>
}}"""
    exe = nimble.compile(text)
    with np.errstate(over="ignore"):
        x = np.concatenate([rng.standard_normal(500) * s for s in (1e-7, 1e-3, 1, 300, 7e4)]
                           + [[np.inf, -np.inf, np.nan, 65519.99, 65520.0, 6e-8, 3e-8, -0.0]]).astype(dtypes[source])
        expected = x.astype(dtypes[target])
    for n in (1, 7, len(x)):
        got = exe(x[:n])
        assert got.dtype == expected.dtype
        np.testing.assert_array_equal(got, expected[:n])


@pytest.mark.parametrize("target", ["llvm", "opencl"])
def test_softmax_in_its_output_buffer(target, rng):
    """A softmax that is its kernel's output is computed in the output buffer (the
    exponentials stored while summed, then scaled: `index_rules.INTO_OUTPUT`); with a
    prologue in its group (BERT's scaled scores), rows of 1 to 33 elements and rows
    holding +-inf, NaN and huge values, against the reference. The second function reads
    the softmax in its group as well (a second output): the per-element form."""
    text = """func.func @main(%x: tensor<2x?x?xf32>) -> tensor<2x?x?xf32> {
  %c = graph.constant dense<0.125> : tensor<f32>
  %s = graph.mul %x, %c : (tensor<2x?x?xf32>, tensor<f32>) -> tensor<2x?x?xf32>
  %p = graph.softmax %s {axis = -1 : i64} : tensor<2x?x?xf32> -> tensor<2x?x?xf32>
  func.return %p : tensor<2x?x?xf32>
}
func.func @both(%x: tensor<?x?xf32>) -> (tensor<?x?xf32>, tensor<?x?xf32>) {
  %p = graph.softmax %x {axis = -1 : i64} : tensor<?x?xf32> -> tensor<?x?xf32>
  %q = graph.mul %p, %p : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  func.return %p, %q : tensor<?x?xf32>, tensor<?x?xf32>
}"""
    exe, both = nimble.compile(text, target=target), nimble.compile(text, target=target, entry="both")
    module = nimble.parse(text)
    for rows, n in [(1, 1), (3, 7), (5, 16), (2, 33)]:
        x = (rng.standard_normal((2, rows, n)) * 30).astype(np.float32)
        x[0, 0, 0] = np.inf
        x[1, -1, -1] = -np.inf
        x[0, -1, n // 2] = np.nan
        x[1, 0, :] = -np.inf
        x[1, rows // 2, 0] = 3e38
        np.testing.assert_allclose(exe(x), nimble.interpret(module, x)[0], rtol=1e-5, atol=1e-6, err_msg=f"{rows}x{n}")
        for got, want in zip(both(x[0]), nimble.interpret(module, x[0], entry="both")):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=f"both {rows}x{n}")
