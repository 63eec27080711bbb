"""Max and average pools computed in rows (`window_rules._pool_rows`): the whole window in
one loop along a row where it lies inside the input, the taps inside it at the edges,
into the kernel's output or staged for an op fused after it; against a numpy pool at
sizes with and without an inside region, odd widths, strides 1 and 2."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import run_compiled


def numpy_pool(x, kind: str, k: int, stride: int, pads: tuple[int, int, int, int], include_pad: bool):
    top, left, bottom, right = pads
    fill = -np.inf if kind == "max" else 0.0
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (top, bottom), (left, right)), constant_values=fill)
    inside = np.pad(np.ones(x.shape[2:]), ((top, bottom), (left, right)))
    oh, ow = (xp.shape[2] - k) // stride + 1, (xp.shape[3] - k) // stride + 1
    out = np.zeros((*x.shape[:2], oh, ow))
    for i in range(oh):
        for j in range(ow):
            window = xp[:, :, i * stride:i * stride + k, j * stride:j * stride + k]
            if kind == "max":
                out[:, :, i, j] = window.max(axis=(2, 3))
            else:
                cells = k * k if include_pad else inside[i * stride:i * stride + k, j * stride:j * stride + k].sum()
                out[:, :, i, j] = window.sum(axis=(2, 3)) / cells
    return out


@pytest.mark.parametrize("kind, include_pad", [("max", False), ("avg", True), ("avg", False)])
@pytest.mark.parametrize("stride, pads", [(1, (1, 1, 1, 1)), (2, (1, 1, 1, 1)), (1, (0, 0, 1, 1))])
@pytest.mark.parametrize("then", ["", "relu"])
def test_pool_rows(kind, include_pad, stride, pads, then, rng):
    op = "max_pool2d" if kind == "max" else "avg_pool2d"
    count = f", count_include_pad = {'true' if include_pad else 'false'}" if kind == "avg" else ""
    attrs = (f"{{kernel = array<i64: 3, 3>, strides = array<i64: {stride}, {stride}>, "
             f"padding = array<i64: {', '.join(map(str, pads))}>{count}}}")
    result = "%y" if not then else "%r"
    tail = "" if not then else "  %r = graph.relu %y : tensor<?x5x?x?xf32> -> tensor<?x5x?x?xf32>\n"
    text = f"""func.func @main(%x: tensor<?x5x?x?xf32>) -> tensor<?x5x?x?xf32> {{
  %y = graph.{op} %x {attrs} : tensor<?x5x?x?xf32> -> tensor<?x5x?x?xf32>
{tail}  func.return {result} : tensor<?x5x?x?xf32>
}}"""
    for n, h, w in [(1, 1, 1), (2, 2, 3), (1, 9, 17), (3, 17, 10)]:
        if stride == 1 and pads == (0, 0, 1, 1) and h < 2:
            continue  # (a 3-cell window does not fit)
        x = rng.standard_normal((n, 5, h, w)).astype(np.float32)
        (y,) = run_compiled(text, x)
        want = numpy_pool(x, kind, 3, stride, pads, include_pad)
        if then:
            want = np.maximum(want, 0)
        np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-6, err_msg=f"{n}x5x{h}x{w}")
