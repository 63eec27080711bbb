"""`pad-weight-rows` end to end: constant dense weights with aliasing rows compiled padded."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects import vector
from xdsl.dialects.builtin import DYNAMIC_INDEX, MemRefType

import nimble
from nimble.dialects import loop
from nimble.runtime import cpu_target


def _source(k: int, n: int, w: np.ndarray | None) -> str:
    """relu(x @ W^T + b): W a constant when given, else a parameter."""
    weight = f'%w = graph.constant dense<"0x{w.tobytes().hex().upper()}"> : tensor<{n}x{k}xf32>' if w is not None \
        else ""
    params = f"%x: tensor<?x{k}xf32>, %b: tensor<{n}xf32>" + ("" if w is not None else f", %w: tensor<{n}x{k}xf32>")
    return f"""func.func @main({params}) -> tensor<?x{n}xf32> {{
  {weight}
  %d = graph.dense %x, %w, %b : (tensor<?x{k}xf32>, tensor<{n}x{k}xf32>, tensor<{n}xf32>) -> tensor<?x{n}xf32>
  %r = graph.relu %d : tensor<?x{n}xf32> -> tensor<?x{n}xf32>
  func.return %r : tensor<?x{n}xf32>
}}"""


def _kernel_weights(exe) -> set[tuple[int, ...]]:
    """The shapes of the kernels' 2-D parameters with static shapes (the weights)."""
    kernels = loop.kernels_of(exe.module)
    types = [a.type for f in kernels for a in f.args if isinstance(a.type, MemRefType)]
    return {tuple(t.get_shape()) for t in types if t.get_num_dims() == 2 and DYNAMIC_INDEX not in t.get_shape()}


def _staged_rows(exe) -> list:
    """The buffers row-lanes tiles stage their 16 rows of W in (a padded stride): written
    with vectors just loaded (the tile's sums gathered by column are not)."""
    return [o for o in exe.module.walk() if isinstance(o, vector.StoreOp)
            and o.base.type.get_shape() == (16, DYNAMIC_INDEX) and isinstance(o.vector.owner, vector.LoadOp)]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("k,n", [(512, 40), (1024, 16)])
def test_constant_weights_are_padded_and_read_in_place(k, n, threads, rng, monkeypatch):
    """A constant weight whose rows are a multiple of 2 KiB reaches its kernel padded by
    one line per row and is read in place (no per-tile staging); the same weight as a
    parameter is staged. Both match the reference at row counts around every edge (dots
    below 16 rows, lanes along the rows, the rows whole panels leave, transposed panels
    from 512)."""
    from nimble.runtime.kernels import KernelEntry

    monkeypatch.setattr(KernelEntry, "min_work", 0)
    w = (rng.standard_normal((n, k)) * 0.1).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    constant = nimble.compile(_source(k, n, w), threads=threads)
    parameter = nimble.compile(_source(k, n, None), threads=threads)
    assert _kernel_weights(constant) == {(n, k + 16)}
    assert _kernel_weights(parameter) == {(n, k)}
    if cpu_target.default().vector_bits == 512:  # (lanes along the rows: 16-lane CPUs only)
        assert not _staged_rows(constant) and _staged_rows(parameter)
    ref = nimble.parse(_source(k, n, w))
    for m in [1, 7, 16, 33, 100, 530]:
        x = rng.standard_normal((m, k)).astype(np.float32)
        want = nimble.interpret(ref, x, b)[0]
        np.testing.assert_allclose(constant(x, b), want, rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(parameter(x, b, w), want, rtol=1e-4, atol=1e-4)


def test_padded_weights_survive_save_and_load(tmp_path, rng):
    """The padded constant is what the bytecode module stores (the original dropped)."""
    w = rng.standard_normal((32, 512)).astype(np.float32)
    exe = nimble.compile(_source(512, 32, w))
    path = tmp_path / "dense.nbc"
    exe.save(path)
    loaded = nimble.load(path)
    x = rng.standard_normal((20, 512)).astype(np.float32)
    b = rng.standard_normal(32).astype(np.float32)
    np.testing.assert_allclose(loaded(x, b), np.maximum(x @ w.T + b, 0), rtol=1e-4, atol=1e-4)
    assert [tuple(c.shape) for c in loaded.program.constants if c.ndim == 2] == [(32, 528)]
