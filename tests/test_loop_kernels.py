"""Kernels written by hand at the loop level (loop.foreach, loop.reduce, loop.alloc,
vectors), JIT-compiled through the LLVM backend and compared with numpy."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import SIZES
from nimble.compile import compile_kernels

KERNELS = """
loop.kernel @axpy(%a: memref<?xf32>, %b: memref<?xf32>, %out: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %two = arith.constant 2.0 : f32
  %n = memref.dim %a, %c0 : memref<?xf32>
  loop.foreach %i = %c0 to %n step %c1 schedule #loop.schedule<vector = 16, parallel> {
    %x = memref.load %a[%i] : memref<?xf32>
    %y = memref.load %b[%i] : memref<?xf32>
    %t = arith.mulf %x, %two : f32
    %s = arith.addf %t, %y : f32
    memref.store %s, %out[%i] : memref<?xf32>
    loop.yield
  }
  loop.return
}

loop.kernel @sum_max(%a: memref<?xf32>, %out: memref<2xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c0 : memref<?xf32>
  %z = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %s, %m = loop.reduce %k = %c0 to %n step %c1 combine(add, max) init(%z, %ninf) : f32, f32 {
    %x = memref.load %a[%k] : memref<?xf32>
    loop.yield %x, %x : f32, f32
  }
  memref.store %s, %out[%c0] : memref<2xf32>
  memref.store %m, %out[%c1] : memref<2xf32>
  loop.return
}

loop.kernel @row_sums_ahead(%a: memref<?x?xf32>, %out: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c0 : memref<?x?xf32>
  %m = memref.dim %a, %c1 : memref<?x?xf32>
  %last = arith.subi %n, %c1 : index
  %z = arith.constant 0.0 : f32
  loop.foreach %i = %c0 to %n step %c1 {
    %next = arith.addi %i, %c1 : index
    %ahead = arith.minsi %next, %last : index
    %s = loop.reduce %k = %c0 to %m step %c1 combine(add) init(%z) : f32 {
      loop.prefetch %a[%ahead, %k] {locality = 3 : i64} : memref<?x?xf32>
      %x = memref.load %a[%i, %k] : memref<?x?xf32>
      loop.yield %x : f32
    }
    memref.store %s, %out[%i] : memref<?xf32>
    loop.yield
  }
  loop.return
}

loop.kernel @column_sums(%a: memref<?x16xf32>, %out: memref<16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c0 : memref<?x16xf32>
  %z = arith.constant dense<0.0> : vector<16xf32>
  %v = loop.reduce %i = %c0 to %n step %c1 combine(add) init(%z) : vector<16xf32> {
    %x = vector.load %a[%i, %c0] : memref<?x16xf32>, vector<16xf32>
    loop.yield %x : vector<16xf32>
  }
  vector.store %v, %out[%c0] : memref<16xf32>, vector<16xf32>
  loop.return
}

loop.kernel @staged(%a: memref<?xf32>, %out: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c0 : memref<?xf32>
  %tmp = loop.alloc dram (%n) : memref<?xf32>
  %acc = loop.alloc reg : memref<1xf32>
  loop.foreach %i = %c0 to %n step %c1 {
    %x = memref.load %a[%i] : memref<?xf32>
    %e = math.exp %x : f32
    memref.store %e, %tmp[%i] : memref<?xf32>
    loop.yield
  }
  %z = arith.constant 0.0 : f32
  %s = loop.reduce %k = %c0 to %n step %c1 combine(add) init(%z) : f32 {
    %x = memref.load %tmp[%k] : memref<?xf32>
    loop.yield %x : f32
  }
  memref.store %s, %acc[%c0] : memref<1xf32>
  loop.foreach %i = %c0 to %n step %c1 {
    %x = memref.load %tmp[%i] : memref<?xf32>
    %t = memref.load %acc[%c0] : memref<1xf32>
    %p = arith.divf %x, %t : f32
    memref.store %p, %out[%i] : memref<?xf32>
    loop.yield
  }
  loop.return
}

loop.kernel @lanes(%a: memref<?x16xf32>, %relu: memref<?x16xf32>, %ints: memref<?x16xi32>, %back: memref<?x16xf32>,
                 %wide: memref<?x16xi64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c0 : memref<?x16xf32>
  %zero = arith.constant dense<0.0> : vector<16xf32>
  loop.foreach %i = %c0 to %n step %c1 {
    %x = vector.load %a[%i, %c0] : memref<?x16xf32>, vector<16xf32>
    %below = arith.cmpf olt, %x, %zero : vector<16xf32>
    %r = arith.select %below, %zero, %x : vector<16xi1>, vector<16xf32>
    vector.store %r, %relu[%i, %c0] : memref<?x16xf32>, vector<16xf32>
    %k = arith.fptosi %x : vector<16xf32> to vector<16xi32>
    vector.store %k, %ints[%i, %c0] : memref<?x16xi32>, vector<16xi32>
    %u = arith.fptoui %r : vector<16xf32> to vector<16xi32>
    %f = arith.sitofp %k : vector<16xi32> to vector<16xf32>
    %g = arith.uitofp %u : vector<16xi32> to vector<16xf32>
    %s = arith.addf %f, %g : vector<16xf32>
    vector.store %s, %back[%i, %c0] : memref<?x16xf32>, vector<16xf32>
    %t = arith.trunci %k : vector<16xi32> to vector<16xi16>
    %e = arith.extsi %t : vector<16xi16> to vector<16xi64>
    %m = arith.extui %below : vector<16xi1> to vector<16xi64>
    %row = arith.index_cast %i : index to i64
    %rows = vector.broadcast %row : i64 to vector<16xi64>
    %w = arith.addi %e, %m : vector<16xi64>
    %v = arith.addi %w, %rows : vector<16xi64>
    vector.store %v, %wide[%i, %c0] : memref<?x16xi64>, vector<16xi64>
    loop.yield
  }
  loop.return
}
"""


@pytest.fixture(scope="module")
def kernels():
    return compile_kernels(KERNELS)


@pytest.mark.parametrize("n", [*SIZES, 100, 5000])
def test_foreach_axpy(kernels, n, rng):
    a, b = (rng.standard_normal(n).astype(np.float32) for _ in range(2))
    out = np.empty(n, np.float32)
    kernels["axpy"](a, b, out)
    np.testing.assert_allclose(out, 2 * a + b, rtol=1e-6)


@pytest.mark.parametrize("n", [0, *SIZES, 100])
def test_reduce_two_combiners(kernels, n, rng):
    a = rng.standard_normal(n).astype(np.float32)
    out = np.empty(2, np.float32)
    kernels["sum_max"](a, out)
    np.testing.assert_allclose(out[0], a.sum(), rtol=1e-5, atol=1e-5)
    assert out[1] == (a.max() if n else -np.inf)


@pytest.mark.parametrize("n", SIZES)
def test_vector_compare_select_and_casts(kernels, n, rng):
    """arith.cmpf, arith.select and the casts on vector<16x...> (lowered to llvm.fcmp,
    llvm.select, llvm.fptosi, llvm.fptoui, llvm.sitofp, llvm.uitofp, ...), lane by lane."""
    a = (rng.standard_normal((n, 16)) * 300).astype(np.float32)
    relu, back = np.empty_like(a), np.empty_like(a)
    ints, wide = np.empty(a.shape, np.int32), np.empty(a.shape, np.int64)
    kernels["lanes"](a, relu, ints, back, wide)
    r = np.maximum(a, 0)
    k = np.trunc(a).astype(np.int32)
    np.testing.assert_array_equal(relu, r)
    np.testing.assert_array_equal(ints, k)
    np.testing.assert_array_equal(back, k.astype(np.float32) + np.trunc(r).astype(np.uint32).astype(np.float32))
    rows = np.arange(n, dtype=np.int64)[:, None]
    np.testing.assert_array_equal(wide, k.astype(np.int16).astype(np.int64) + (a < 0) + rows)


@pytest.mark.parametrize("n", SIZES)
def test_vector_reduce(kernels, n, rng):
    a = rng.standard_normal((n, 16)).astype(np.float32)
    out = np.empty(16, np.float32)
    kernels["column_sums"](a, out)
    np.testing.assert_allclose(out, a.sum(0), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("m", [1, 33])
def test_prefetch_changes_no_value(kernels, n, m, rng):
    """`loop.prefetch` of the next row (the last row for the last) while summing a row."""
    a = rng.standard_normal((n, m)).astype(np.float32)
    out = np.empty(n, np.float32)
    kernels["row_sums_ahead"](a, out)
    np.testing.assert_allclose(out, a.sum(1), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("n", SIZES)
def test_alloc_levels(kernels, n, rng):
    a = rng.standard_normal(n).astype(np.float32)
    out = np.empty(n, np.float32)
    kernels["staged"](a, out)
    e = np.exp(a)
    np.testing.assert_allclose(out, e / e.sum(), rtol=1e-5)


def test_kernel_rejects_bad_arguments(kernels):
    with pytest.raises(ValueError, match=r"kernel @column_sums argument #0: expected a C-contiguous memref<\?x16xf32>"):
        kernels["column_sums"](np.zeros((3, 8), np.float32), np.zeros(16, np.float32))
    with pytest.raises(ValueError, match="argument #1"):
        kernels["axpy"](np.zeros(4, np.float32), np.zeros(4, np.float64), np.zeros(4, np.float32))
    with pytest.raises(TypeError, match="takes 3 arguments"):
        kernels["axpy"](np.zeros(4, np.float32))


def _packed_dense(width: int, cols: int) -> str:
    return f"""
loop.kernel @dense_t(%x: memref<?x?xf32>, %w: memref<?x?xf32>, %out: memref<?x?xf32>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = memref.dim %x, %c0 : memref<?x?xf32>
  %k = memref.dim %x, %c1 : memref<?x?xf32>
  %n = memref.dim %w, %c0 : memref<?x?xf32>
  %zero = arith.constant 0.0 : f32
  loop.foreach %i = %c0 to %m step %c1 schedule #loop.schedule<unroll = 3> {{
    loop.foreach %j = %c0 to %n step %c1 schedule #loop.schedule<vector = {width}, unroll = {cols}, pack> {{
      %s = loop.reduce %r = %c0 to %k step %c1 combine(add) init(%zero) : f32 {{
        %a = memref.load %x[%i, %r] : memref<?x?xf32>
        %b = memref.load %w[%j, %r] : memref<?x?xf32>
        %p = arith.mulf %a, %b : f32
        loop.yield %p : f32
      }}
      memref.store %s, %out[%i, %j] : memref<?x?xf32>
      loop.yield
    }}
    loop.yield
  }}
  loop.return
}}
"""


@pytest.mark.parametrize("width,cols", [(16, 4), (16, 1), (4, 2), (8, 3)])
def test_transposed_panels(width, cols, rng):
    """A dense layer's W[j, k] packed as transposed panels (16x16 blocks in registers when
    the panel is a multiple of 16 wide, element by element otherwise), at sizes around
    the block and panel edges."""
    dense_t = compile_kernels(_packed_dense(width, cols))["dense_t"]
    for m, k, n in [(1, 1, 1), (4, 15, 17), (7, 16, 64), (5, 33, 70), (3, 40, width * cols * 2 + 1)]:
        x = rng.standard_normal((m, k)).astype(np.float32)
        w = rng.standard_normal((n, k)).astype(np.float32)
        out = np.empty((m, n), np.float32)
        dense_t(x, w, out)
        np.testing.assert_allclose(out, x @ w.T, rtol=1e-4, atol=1e-4)


SEEDED = """
loop.kernel @seeded(%x: memref<?x?xf32>, %w: memref<?x?xf32>, %c: memref<?x?xf32>, %out: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = memref.dim %x, %c0 : memref<?x?xf32>
  %k = memref.dim %x, %c1 : memref<?x?xf32>
  %n = memref.dim %w, %c1 : memref<?x?xf32>
  loop.foreach %i = %c0 to %m step %c1 schedule #loop.schedule<unroll = 2> {
    loop.foreach %j = %c0 to %n step %c1 schedule #loop.schedule<vector = 16, unroll = 2> {
      %seed = memref.load %c[%i, %j] : memref<?x?xf32>
      %s = loop.reduce %r = %c0 to %k step %c1 combine(add) init(%seed) : f32 {
        %a = memref.load %x[%i, %r] : memref<?x?xf32>
        %b = memref.load %w[%r, %j] : memref<?x?xf32>
        %p = arith.mulf %a, %b : f32
        loop.yield %p : f32
      }
      memref.store %s, %out[%i, %j] : memref<?x?xf32>
      loop.yield
    }
    loop.yield
  }
  loop.return
}
"""


def test_register_tile_seeded_by_lane_varying_values(rng):
    """A register tile's reduction seeded by values that vary along its lanes (a
    recurrence step's hoisted input projection, `c[i, j]` here) starts from those
    vectors, not from broadcasts of them."""
    seeded = compile_kernels(SEEDED)["seeded"]
    for m, k, n in [(1, 1, 1), (3, 7, 16), (2, 5, 33), (5, 16, 64), (4, 9, 100)]:
        x, w, c = (rng.standard_normal(s).astype(np.float32) for s in [(m, k), (k, n), (m, n)])
        out = np.empty((m, n), np.float32)
        seeded(x, w, c, out)
        np.testing.assert_allclose(out, c + x @ w, rtol=1e-4, atol=1e-4)
