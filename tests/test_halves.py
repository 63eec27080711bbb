"""f16 tensors are computed in f32 (passes/widen_halves.py): sums over many halves
accumulate in f32, a chain of ops rounds once, on every target; checked against numpy
computing in f32 and rounding at the end."""

from __future__ import annotations

import numpy as np
import pytest

import nimble

CHAIN = """
func.func @main(%x: tensor<?x?xf16>, %w: tensor<?x?xf16>) -> tensor<?x?xf16> {
  %y = graph.matmul %x, %w : (tensor<?x?xf16>, tensor<?x?xf16>) -> tensor<?x?xf16>
  %t = graph.tanh %y : tensor<?x?xf16> -> tensor<?x?xf16>
  %s = graph.softmax %t {axis = -1 : i64} : tensor<?x?xf16> -> tensor<?x?xf16>
  func.return %s : tensor<?x?xf16>
}
"""


def _reference(x, w):
    y = np.tanh(x.astype(np.float32) @ w.astype(np.float32))
    e = np.exp(y - y.max(-1, keepdims=True))
    return (e / e.sum(-1, keepdims=True)).astype(np.float16)


@pytest.mark.parametrize("target", ["llvm", "opencl"])
def test_a_chain_on_halves_rounds_once(target, rng):
    exe = nimble.compile(CHAIN, target=target)
    for m, k, n in [(1, 1, 1), (3, 2000, 5), (7, 33, 17)]:
        x = (rng.standard_normal((m, k)) / np.sqrt(k)).astype(np.float16)
        w = rng.standard_normal((k, n)).astype(np.float16)
        got = exe(x, w)
        assert got.dtype == np.float16
        want = _reference(x, w)
        # one rounding at the end: within one f16 unit of numpy's f32 result
        np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32), rtol=2 ** -10, atol=2 ** -24)


def test_a_long_sum_of_halves_keeps_its_small_terms(rng):
    """2048 + 1 + 1 + ... in f16 stays 2048 (each 1 is half a unit there); in f32 it is
    the exact sum, rounded once."""
    exe = nimble.compile("""
func.func @main(%x: tensor<?xf16>) -> tensor<f16> {
  %s = graph.reduce_sum %x {axes = array<i64: 0>} : tensor<?xf16> -> tensor<f16>
  func.return %s : tensor<f16>
}""")
    for n in (1, 9, 1001):
        x = np.ones(n, np.float16)
        x[0] = 2048
        assert exe(x) == np.float16(2048 + n - 1)
