"""Loop-level kernels written in the text format (`kernel @k(...) { foreach ... }`):
built into the loop dialect, compiled, and compared with numpy; errors located."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import SIZES
from nimble import parse
from nimble.compile import compile_kernels
from nimble.frontend.errors import FrontendError

SOURCE = """
kernel @softmax_rows(%x: f32[n, 64], %out: f32[n, 64]) {
  foreach %i = 0 to %n schedule(parallel) {
    let %m = reduce(max) %k = 0 to 64 init(-1.0e30) { %x[%i, %k] }
    let %s = reduce(add) %k = 0 to 64 init(0.0) { exp(%x[%i, %k] - %m) }
    foreach %j = 0 to 64 schedule(vector=16) {
      %out[%i, %j] = exp(%x[%i, %j] - %m) / %s
    }
  }
}

kernel @saxpy_tiles(%a: f32[m, n], %b: f32[n], %out: f32[m, n]) {
  foreach %i = 0 to %m schedule(unroll=2, parallel) {
    foreach %j = 0 to %n schedule(vector=16, unroll=2) {
      %out[%i, %j] = %a[%i, %j] * 3.0 + %b[%j] + f32(%i)
    }
  }
}

kernel @staged(%a: f32[n], %out: f32[n]) {
  let %t = dram f32[%n]
  let %acc = reg f32[1]
  foreach %i = 0 to %n { %t[%i] = tanh(%a[%i]) }
  %acc[0] = reduce(add) %k = 0 to %n init(0.0) { let %v = %t[%k]
    %v * %v }
  foreach %i = 0 to %n { %out[%i] = %t[%i] / %acc[0] }
}
"""


@pytest.fixture(scope="module")
def kernels():
    return compile_kernels(parse(SOURCE, "kernels.nb"))


@pytest.mark.parametrize("n", SIZES)
def test_softmax_kernel(kernels, n, rng):
    x = rng.standard_normal((n, 64)).astype(np.float32)
    out = np.empty_like(x)
    kernels["softmax_rows"](x, out)
    e = np.exp(x - x.max(1, keepdims=True))
    np.testing.assert_allclose(out, e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("m,n", [(1, 1), (3, 7), (8, 33), (5, 100)])
def test_tiled_kernel(kernels, m, n, rng):
    a = rng.standard_normal((m, n)).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    out = np.empty_like(a)
    kernels["saxpy_tiles"](a, b, out)
    np.testing.assert_allclose(out, a * 3 + b + np.arange(m, dtype=np.float32)[:, None], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("n", SIZES)
def test_memories_and_reduce(kernels, n, rng):
    a = rng.standard_normal(n).astype(np.float32)
    out = np.empty_like(a)
    kernels["staged"](a, out)
    t = np.tanh(a)
    np.testing.assert_allclose(out, t / (t * t).sum(), rtol=1e-5)


def test_kernels_are_loop_dialect():
    text = str(parse(SOURCE, "kernels.nb"))
    for op in ("loop.foreach", "loop.reduce", "loop.alloc dram", "loop.alloc reg", "memref.load", "memref.store",
               "#loop.schedule<vector = 16, unroll = 2>"):
        assert op in text


@pytest.mark.parametrize("body,message", [
    ("foreach %i = 0 to %n { %out[%i] = %nope[%i] }", "k.nb:3:37: error: unknown value %nope"),
    ("foreach %i = 0 to %n { %out[%i, %i] = 1.0 }", "3:26: error: a buffer of rank 1 needs 1 indices, got 2"),
    ("foreach %i = 0 to %n schedule(fast) { %out[%i] = 1.0 }", "k.nb:3:33: error: unknown schedule entry 'fast'"),
    ("foreach %i = 0 to %n schedule(vector) { %out[%i] = 1.0 }", "needs a value, like vector=16"),
    ("foreach %i = 0 to 1.5 { %out[%i] = 1.0 }", "1.5 is not an integer"),
    ("foreach %i = 0 to %n { %out[%i] = %i }", "expected"),
    ("%out[0] = reduce(avg) %k = 0 to %n init(0.0) { 1.0 }", "unknown combiner 'avg'"),
    ("foreach %i = 0 to %n { %out[%i] = cosh(%out[%i]) }", "unknown kernel function 'cosh'"),
])
def test_kernel_errors_are_located(body, message):
    source = f"\nkernel @k(%out: f32[n]) {{\n  {body}\n}}\n"
    with pytest.raises(FrontendError) as info:
        parse(source, "k.nb")
    assert message in str(info.value), str(info.value)


def test_kernels_print_back_as_text(rng):
    """`nimble-opt -t nb` prints kernels; printing what it reads back is a fixpoint and
    the re-read kernels compute the same."""
    from nimble.frontend.printer import print_nb

    once = print_nb(parse(SOURCE, "kernels.nb"))
    assert "kernel @softmax_rows(" in once and "reduce(max)" in once and "schedule(vector=16, unroll=2)" in once
    again = print_nb(parse(once, "printed.nb"))
    assert again == once
    reread = compile_kernels(parse(once, "printed.nb"))
    a = rng.standard_normal(33).astype(np.float32)
    out1, out2 = np.empty_like(a), np.empty_like(a)
    compile_kernels(parse(SOURCE, "kernels.nb"))["staged"](a, out1)
    reread["staged"](a, out2)
    np.testing.assert_array_equal(out1, out2)


def test_vector_kernels_stay_mlir():
    from nimble.frontend.printer import PrintError, print_nb

    module = parse(SOURCE, "kernels.nb")
    from nimble.compile import run_stages

    run_stages(module, ["realize"])
    with pytest.raises(PrintError, match="no kernel text form"):
        print_nb(module)
