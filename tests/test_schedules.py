"""Scheduled kernels (register tiles, vector lanes, jammed and vectorised reductions,
peeled remainders) against the reference at sizes around every tile edge."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects import vector
from xdsl.dialects.builtin import DYNAMIC_INDEX

import nimble
from nimble.dialects import arith, kernel_analysis, loop
from nimble.runtime import cpu_target

TARGET = cpu_target.default()
LANES = TARGET.lanes(32)
"""The tests compile for the default CPU (the host, or `$NIMBLE_CPU`); those that check
a schedule only one kind of CPU gets are marked."""
avx512 = pytest.mark.skipif(TARGET.vector_bits != 512, reason=f"checks AVX-512 schedules (row lanes of 16, 6 x 4 "
                            f"tiles); the default CPU here is {TARGET.describe()}")
masks = pytest.mark.skipif(not TARGET.masks, reason="remainders are masked vector steps only where the CPU has mask "
                           f"registers; the default CPU here is {TARGET.describe()}")

EDGES = [1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 100]


def _matmul(k: int) -> str:
    return f"""func.func @main(%a: tensor<?x{k}xf32>, %b: tensor<{k}x?xf32>, %bias: tensor<?xf32>) -> tensor<?x?xf32> {{
  %c = graph.matmul %a, %b : (tensor<?x{k}xf32>, tensor<{k}x?xf32>) -> tensor<?x?xf32>
  %d = graph.add %c, %bias : (tensor<?x?xf32>, tensor<?xf32>) -> tensor<?x?xf32>
  %r = graph.relu %d : tensor<?x?xf32> -> tensor<?x?xf32>
  func.return %r : tensor<?x?xf32>
}}"""


def _dense(k: int) -> str:
    return f"""func.func @main(%x: tensor<?x{k}xf32>, %w: tensor<?x{k}xf32>) -> tensor<?x?xf32> {{
  %y = graph.dense %x, %w : (tensor<?x{k}xf32>, tensor<?x{k}xf32>) -> tensor<?x?xf32>
  %s = graph.sigmoid %y : tensor<?x?xf32> -> tensor<?x?xf32>
  func.return %s : tensor<?x?xf32>
}}"""


def schedules(exe) -> set[tuple[str, int, int]]:
    return {(type(o).__name__, o.schedule.schedule.vector, o.schedule.schedule.unroll)
            for o in exe.module.walk() if isinstance(o, loop.ForeachOp | loop.ReduceOp) and o.schedule is not None}


@pytest.mark.parametrize("k", [1, 17, 64])
def test_matmul_register_tiles_at_every_edge(k, rng):
    text = _matmul(k)
    exe = nimble.compile(text)
    # The schedule realised: vector loads/stores are in the kernel (tile-vectorize ran).
    assert "vector.load" in str(exe.module)
    ref = nimble.parse(text)
    for m, n in [(m, n) for m in EDGES for n in (1, 16, 17, 31, 32, 33, 100)][::3]:
        a = rng.standard_normal((m, k)).astype(np.float32)
        b = rng.standard_normal((k, n)).astype(np.float32)
        bias = rng.standard_normal(n).astype(np.float32)
        np.testing.assert_allclose(exe(a, b, bias), nimble.interpret(ref, a, b, bias)[0], rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("k", [1, 15, 16, 17, 70])
def test_dense_vector_dot_products_at_every_edge(k, rng):
    text = _dense(k)
    exe = nimble.compile(text)
    assert "vector.reduction" in str(exe.module) or k < 16
    ref = nimble.parse(text)
    for m, n in [(1, 1), (1, 33), (3, 4), (4, 5), (7, 16), (9, 100)]:
        x = rng.standard_normal((m, k)).astype(np.float32)
        w = rng.standard_normal((n, k)).astype(np.float32)
        np.testing.assert_allclose(exe(x, w), nimble.interpret(ref, x, w)[0], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("n", EDGES)
def test_elementwise_lanes_and_remainder(n, rng):
    text = """func.func @main(%a: tensor<?x?xf32>, %b: tensor<?xf32>) -> tensor<?x?xf32> {
  %c = graph.mul %a, %b : (tensor<?x?xf32>, tensor<?xf32>) -> tensor<?x?xf32>
  %e = graph.exp %c : tensor<?x?xf32> -> tensor<?x?xf32>
  func.return %e : tensor<?x?xf32>
}"""
    exe = nimble.compile(text)
    a = rng.standard_normal((3, n)).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    np.testing.assert_allclose(exe(a, b), np.exp(a * b), rtol=1e-6)


def test_gather_along_the_lane_is_left_scalar(rng):
    # A strided (transposed) read cannot be a vector load: the nest must stay correct.
    text = """func.func @main(%a: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %t = graph.transpose %a [1, 0] : tensor<?x?xf32> -> tensor<?x?xf32>
  %e = graph.neg %t : tensor<?x?xf32> -> tensor<?x?xf32>
  func.return %e : tensor<?x?xf32>
}"""
    exe = nimble.compile(text)
    a = rng.standard_normal((5, 33)).astype(np.float32)
    np.testing.assert_array_equal(exe(a), -a.T)


@pytest.mark.parametrize("m,n,bn", [(5, 7, 7), (5, 7, 1), (1, 7, 7), (1, 1, 1), (5, 1, 1)])
def test_shape_specialised_variant_and_general_kernel(m, n, bn, rng):
    """`?` dims that may broadcast get two kernels: the no-stretch variant (vectorised)
    when no `?` dim is a 1 broadcast against a larger one, else the general kernel."""
    text = """func.func @main(%a: tensor<?x?xf32>, %b: tensor<?xf32>) -> tensor<?x?xf32> {
  %c = graph.add %a, %b : (tensor<?x?xf32>, tensor<?xf32>) -> tensor<?x?xf32>
  %t = graph.tanh %c : tensor<?x?xf32> -> tensor<?x?xf32>
  func.return %t : tensor<?x?xf32>
}"""
    exe = nimble.compile(text)
    assert sorted(k.name for k in exe.vm.kernels) == ["main_add_0", "main_add_0_ns"]
    a = rng.standard_normal((m, n)).astype(np.float32)
    b = rng.standard_normal(bn).astype(np.float32)
    profile = exe.vm.start_profile()
    np.testing.assert_allclose(exe(a, b), np.tanh(a + b), rtol=1e-5, atol=1e-6)
    stretched = bn == 1 and n > 1
    assert list(profile) == (["main_add_0"] if stretched else ["main_add_0_ns"])


def test_no_variant_where_not_stretching_changes_nothing(rng):
    """A conv added to another conv of the same input: a group with a broadcast site
    wants the no-stretch variant, but with both batch dims the one symbolic `N` nothing
    can stretch, its loop nest is the general kernel's: one kernel, not the same one
    twice (ResNet-50's four residual convs, EfficientNet-B0's 42 groups: each compiled
    twice before)."""
    def N(c: int) -> str:  # (the dim's name)
        return f"tensor<?x{c}x5x5xf32, #nimble.dims<[N, {c}, 5, 5]>>"

    conv = "{strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>}"
    text = f"""func.func @main(%x: {N(8)}, %w: tensor<16x8x1x1xf32>, %v: tensor<16x8x1x1xf32>) -> {N(16)} {{
  %c = graph.conv2d %x, %v {conv} : ({N(8)}, tensor<16x8x1x1xf32>) -> {N(16)}
  %r = graph.relu %c : {N(16)} -> {N(16)}
  %d = graph.conv2d %x, %w {conv} : ({N(8)}, tensor<16x8x1x1xf32>) -> {N(16)}
  %s = graph.add %d, %r : ({N(16)}, {N(16)}) -> {N(16)}
  func.return %s : {N(16)}
}}"""
    exe = nimble.compile(text)
    assert exe.kernel_names == ["main_conv2d_0", "main_conv2d_1"]
    for n in (1, 3):
        x, w, v = (rng.standard_normal(s).astype(np.float32) for s in ((n, 8, 5, 5), (16, 8, 1, 1), (16, 8, 1, 1)))
        d, c = (np.einsum("nchw,oc->nohw", x, k[:, :, 0, 0]) for k in (w, v))
        np.testing.assert_allclose(exe(x, w, v), d + np.maximum(c, 0), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("h,w", [(5, 7), (12, 12)])
def test_conv_im2col_fused_with_layout_ops(threads, h, w, rng):
    """A conv read through layout ops (a transpose does not join a conv's kernel: it
    gets its own) matches the reference on 1 and 2 threads, at maps of one panel and of
    three."""
    text = """func.func @main(%x: tensor<1x64x?x?xf32>, %w: tensor<4x64x3x3xf32>, %b: tensor<4xf32>) -> tensor<?x4xf32> {
  %y = graph.conv2d %x, %w, %b {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x64x?x?xf32>, tensor<4x64x3x3xf32>, tensor<4xf32>) -> tensor<1x4x?x?xf32>
  %t = graph.transpose %y [0, 2, 3, 1] : tensor<1x4x?x?xf32> -> tensor<1x?x?x4xf32>
  %r = graph.reshape %t [-1, 4] : tensor<1x?x?x4xf32> -> tensor<?x4xf32>
  func.return %r : tensor<?x4xf32>
}"""
    exe = nimble.compile(text, threads=threads)
    args = [rng.standard_normal(s).astype(np.float32) for s in [(1, 64, h, w), (4, 64, 3, 3), (4,)]]
    np.testing.assert_allclose(exe(*args), nimble.interpret(nimble.parse(text), *args)[0], rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("chunks", [2, 3])
def test_a_stretching_conv_cooperates_in_chunks(chunks, rng, monkeypatch):
    """A conv added to a tensor that may broadcast along `?` dims: the general kernel (a
    stretched call takes it) computes the conv at indices that are not the nest's own
    pixels, so it stages the image-wide im2col buffer, shared by the chunks of a
    cooperative kernel; the no-stretch variant runs over panels. Forced into 2 or 3
    chunks at 1 x 1, 9 x 31 and 40 x 40, stretched and not, both match the reference."""
    from nimble.dialects import loop
    from nimble.runtime.kernels import KernelEntry

    monkeypatch.setattr(KernelEntry, "min_work", 0)
    text = """func.func @main(%x: tensor<1x16x?x?xf32>, %w: tensor<8x16x3x3xf32>, %z: tensor<1x8x?x?xf32>) -> tensor<1x8x?x?xf32> {
  %y = graph.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x16x?x?xf32>, tensor<8x16x3x3xf32>) -> tensor<1x8x?x?xf32>
  %a = graph.add %y, %z : (tensor<1x8x?x?xf32>, tensor<1x8x?x?xf32>) -> tensor<1x8x?x?xf32>
  func.return %a : tensor<1x8x?x?xf32>
}"""
    exe = nimble.compile(text, threads=chunks)
    (general,) = [f for f in loop.kernels_of(exe.module) if loop.NO_STRETCH_MARK not in f.attributes]
    assert loop.COOPERATIVE_MARK in general.attributes
    module = nimble.parse(text)
    w = rng.standard_normal((8, 16, 3, 3)).astype(np.float32)
    for h, width in [(1, 1), (9, 31), (40, 40)]:
        x = rng.standard_normal((1, 16, h, width)).astype(np.float32)
        for z_h in (1, h):  # stretched along h (the general kernel), or not
            z = rng.standard_normal((1, 8, z_h, width)).astype(np.float32)
            np.testing.assert_allclose(exe(x, w, z), nimble.interpret(module, x, w, z)[0], rtol=1e-4, atol=1e-4)
    assert {p.chunks for k in exe.vm.kernels for p in k._plans.values()} == {chunks}


@pytest.mark.parametrize("stride,pad,dilation", [
    (1, (1, 1, 1, 1), 1), (1, (2, 2, 2, 2), 2), (1, (0, 1, 2, 1), 1), (1, (1, 0, 0, 2), 1),  # rows as shifted runs
    (2, (1, 1, 1, 1), 1), (1, (0, 0, 0, 0), 2), (2, (3, 3, 3, 3), 1), (1, (1, 0, 1, 0), 1)])  # per output row
@pytest.mark.parametrize("size", [1, 7, 16, 33])
def test_conv_im2col_windows(stride, pad, dilation, size, rng):
    """Panel im2col fills against the reference: stride-1 convs whose output rows are as
    long as the input's (taps as shifted runs of the flat plane, zero past the image and
    where a tap wraps to the next row), and the others (per output row)."""
    text = f"""func.func @main(%x: tensor<2x5x?x?xf32>, %w: tensor<24x5x3x3xf32>, %b: tensor<24xf32>) -> tensor<2x24x?x?xf32> {{
  %y = graph.conv2d %x, %w, %b {{strides = array<i64: {stride}, {stride}>, padding = array<i64: {", ".join(map(str, pad))}>, dilations = array<i64: {dilation}, {dilation}>}} : (tensor<2x5x?x?xf32>, tensor<24x5x3x3xf32>, tensor<24xf32>) -> tensor<2x24x?x?xf32>
  %r = graph.relu %y : tensor<2x24x?x?xf32> -> tensor<2x24x?x?xf32>
  func.return %r : tensor<2x24x?x?xf32>
}}"""
    if min(size + pad[0] + pad[2], size + 3 + pad[1] + pad[3]) - dilation * 2 - 1 < 0:
        pytest.skip("window larger than the padded input")
    exe = nimble.compile(text)
    args = [rng.standard_normal(s).astype(np.float32) for s in [(2, 5, size, size + 3), (24, 5, 3, 3), (24,)]]
    np.testing.assert_allclose(exe(*args), nimble.interpret(nimble.parse(text), *args)[0], rtol=1e-4, atol=1e-4)


CELL = """func.func @main(%x: tensor<?x32xf32>, %h: tensor<?x32xf32>, %c: tensor<?x32xf32>, %w: tensor<128x32xf32>,
                     %u: tensor<128x32xf32>, %b: tensor<128xf32>) -> (tensor<?x32xf32>, tensor<?x32xf32>) {
  %gx = graph.dense %x, %w, %b : (tensor<?x32xf32>, tensor<128x32xf32>, tensor<128xf32>) -> tensor<?x128xf32>
  %gh = graph.dense %h, %u : (tensor<?x32xf32>, tensor<128x32xf32>) -> tensor<?x128xf32>
  %g = graph.add %gx, %gh : (tensor<?x128xf32>, tensor<?x128xf32>) -> tensor<?x128xf32>
  %i, %f, %o, %z = graph.split %g {axis = 1 : i64, num = 4 : i64} : tensor<?x128xf32> -> (tensor<?x32xf32>, tensor<?x32xf32>, tensor<?x32xf32>, tensor<?x32xf32>)
  %si = graph.sigmoid %i : tensor<?x32xf32> -> tensor<?x32xf32>
  %sf = graph.sigmoid %f : tensor<?x32xf32> -> tensor<?x32xf32>
  %so = graph.sigmoid %o : tensor<?x32xf32> -> tensor<?x32xf32>
  %tz = graph.tanh %z : tensor<?x32xf32> -> tensor<?x32xf32>
  %fc = graph.mul %sf, %c : (tensor<?x32xf32>, tensor<?x32xf32>) -> tensor<?x32xf32>
  %iz = graph.mul %si, %tz : (tensor<?x32xf32>, tensor<?x32xf32>) -> tensor<?x32xf32>
  %c2 = graph.add %fc, %iz : (tensor<?x32xf32>, tensor<?x32xf32>) -> tensor<?x32xf32>
  %tc = graph.tanh %c2 : tensor<?x32xf32> -> tensor<?x32xf32>
  %h2 = graph.mul %so, %tc : (tensor<?x32xf32>, tensor<?x32xf32>) -> tensor<?x32xf32>
  func.return %h2, %c2 : tensor<?x32xf32>, tensor<?x32xf32>
}"""


@pytest.mark.parametrize("chunks", [2, 3])
def test_strips_split_a_batch_of_one(chunks, rng, monkeypatch):
    """The LSTM cell runs its eight dot products in strips of units: its work per element
    counts all eight (they add up; `tile-vectorize` makes them sibling loops later), and
    the strips are parallel, so one row is split across the chunks. 1, 2 and 5 rows in
    2 or 3 chunks match the reference."""
    from nimble.dialects import loop
    from nimble.runtime.kernels import KernelEntry

    monkeypatch.setattr(KernelEntry, "min_work", 0)
    exe = nimble.compile(CELL, threads=chunks)
    kernels = loop.kernels_of(exe.module)
    assert {kernel_analysis.kernel_work(k) for k in kernels} == {8 * 32}
    assert {k.work for k in exe.vm.kernels} == {8 * 32}

    def parallel(op) -> bool:
        return isinstance(op, loop.ForeachOp) and op.schedule is not None and op.schedule.schedule.parallel

    for kernel in kernels:  # the strips' loop is parallel inside the parallel loop over rows
        assert any(parallel(o) and parallel(o.parent_op()) for o in kernel.walk())
    w, u = (0.2 * rng.standard_normal((128, 32)).astype(np.float32) for _ in range(2))
    b = rng.standard_normal(128).astype(np.float32)
    for rows in (1, 2, 5):
        x, h, c = (rng.standard_normal((rows, 32)).astype(np.float32) for _ in range(3))
        for got, expected in zip(exe(x, h, c, w, u, b), nimble.interpret(nimble.parse(CELL), x, h, c, w, u, b)):
            np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)
    assert {p.chunks for k in exe.vm.kernels for p in k._plans.values()} == {chunks}


@pytest.mark.parametrize("chunks", [2, 3])
def test_a_batch_of_one_is_split_inside(chunks, rng, monkeypatch):
    """The loops nested alone in a kernel's outer loop are parallel too: with one image
    (fewer iterations than chunks) the split passes to the channels, then the rows.
    Split in 2 or 3 chunks, at sizes of 1, odd and more channels than chunks, the
    result matches the reference."""
    from nimble.dialects import loop
    from nimble.runtime.kernels import KernelEntry

    monkeypatch.setattr(KernelEntry, "min_work", 0)
    text = """func.func @main(%x: tensor<?x?x?x?xf32>, %y: tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32> {
  %a = graph.add %x, %y : (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32>
  %r = graph.relu %a : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  func.return %r : tensor<?x?x?x?xf32>
}"""
    exe = nimble.compile(text, threads=chunks)
    (kernel,) = [f for f in loop.kernels_of(exe.module) if loop.NO_STRETCH_MARK in f.attributes]
    nest = [o for o in kernel.walk() if isinstance(o, loop.ForeachOp)]
    assert all(o.schedule is not None and o.schedule.schedule.parallel for o in nest[:3])
    for shape in [(1, 1, 1, 1), (1, 3, 5, 7), (1, 7, 2, 33), (2, 5, 3, 3)]:
        x, y = (rng.standard_normal(shape).astype(np.float32) for _ in range(2))
        np.testing.assert_array_equal(exe(x, y), np.maximum(x + y, 0))
    assert {p.chunks for k in exe.vm.kernels for p in k._plans.values()} == {chunks}


def test_an_uneven_batch_is_split_inside(rng, monkeypatch):
    """3 images on 2 chunks do not split 2 + 1 (one chunk would do twice the other's
    work): with fewer than `UNEVEN_TRIPS` iterations per chunk and a parallel loop inside,
    the split passes inside, and each chunk computes a share of every image. Only chunk 0
    is run here (the other chunk's job is dropped), so what it wrote shows its share."""
    from nimble.runtime import kernels
    from nimble.runtime.kernels import KernelEntry

    class OneChunk:  # a pool that drops the jobs of chunks 1..
        def submit(self, *args):
            return self

        def result(self):
            return None

    monkeypatch.setattr(KernelEntry, "min_work", 0)
    text = """func.func @main(%x: tensor<?x?x?x?xf32>, %y: tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32> {
  %a = graph.add %x, %y : (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32>
  func.return %a : tensor<?x?x?x?xf32>
}"""
    exe = nimble.compile(text, threads=2)
    for images in (3, 2 * 8 + 1):
        x, y = (rng.standard_normal((images, 4, 5, 8)).astype(np.float32) for _ in range(2))
        monkeypatch.setattr(kernels, "workers", lambda count: None)
        pool, exe.vm.pool = exe.vm.pool, OneChunk()
        try:
            made = exe(-x, -y) == -(x + y)
        finally:
            exe.vm.pool = pool
            monkeypatch.undo()
            monkeypatch.setattr(KernelEntry, "min_work", 0)
        np.testing.assert_array_equal(exe(x, y), x + y)  # both chunks
        if images == 3:  # a share of every image
            assert all(made[n].any() and not made[n].all() for n in range(images))
        else:  # many images: whole images, 8 of 17
            assert [bool(made[n].all()) for n in range(images)] == [True] * 8 + [False] * 9


@pytest.mark.parametrize("threads", [1, 2])
def test_conv_panels_are_read_in_place(threads, rng):
    """A conv's im2col rows are staged per panel of 64 pixels inside its parallel loop:
    the register tile reads the panel without packing it again, the panel loop is split
    by panels only with `PANEL_GRAIN` of them per chunk (else by output channels, each
    chunk staging every panel), and no buffer is shared between chunks (not
    cooperative). Sizes of 1, one short panel, several with a short last one, and a
    batch of 2."""
    from nimble.dialects import loop
    from nimble.passes.schedule_loops import PANEL_GRAIN

    text = """func.func @main(%x: tensor<?x16x?x?xf32>, %w: tensor<20x16x3x3xf32>, %b: tensor<20xf32>) -> tensor<?x20x?x?xf32> {
  %y = graph.conv2d %x, %w, %b {padding = array<i64: 1, 1, 1, 1>} : (tensor<?x16x?x?xf32>, tensor<20x16x3x3xf32>, tensor<20xf32>) -> tensor<?x20x?x?xf32>
  %r = graph.relu %y : tensor<?x20x?x?xf32> -> tensor<?x20x?x?xf32>
  func.return %r : tensor<?x20x?x?xf32>
}"""
    exe = nimble.compile(text, threads=threads)
    (kernel,) = loop.kernels_of(exe.module)
    assert loop.COOPERATIVE_MARK not in kernel.attributes
    allocs = {tuple(o.memref.type.get_shape()): o for o in kernel.walk() if isinstance(o, loop.AllocOp)}
    # the panel, its taps' edge flags (`_shifted_rows`), its last columns transposed (leftover_dots)
    assert set(allocs) == {(144, 64), (3, 64), (LANES, 144)}
    panel = allocs[144, 64]
    loops = [o for o in kernel.walk() if isinstance(o, loop.ForeachOp) and o.schedule is not None]
    assert not any(o.schedule.schedule.pack for o in loops)
    staging = panel.parent_op()
    assert staging.schedule.schedule == loop.Schedule(parallel=True, grain=PANEL_GRAIN)
    w = rng.standard_normal((20, 16, 3, 3)).astype(np.float32)
    b = rng.standard_normal(20).astype(np.float32)
    for n, h, width in [(1, 1, 1), (1, 7, 9), (2, 9, 31), (1, 30, 33)]:
        x = rng.standard_normal((n, 16, h, width)).astype(np.float32)
        np.testing.assert_allclose(exe(x, w, b), nimble.interpret(nimble.parse(text), x, w, b)[0], rtol=1e-4, atol=1e-4)


@avx512
def test_leftover_columns_are_dot_products(rng):
    """The columns a register tile's vectors leave (a conv's last panel: 0 to 15 pixels
    after whole vectors; a matmul's last columns) run after all the rows as dot products
    along k over a transposed copy of those columns, and match the reference for every
    leftover count. With fewer reduction steps than a vector (a conv over one channel:
    9 taps) the pixels stay one masked vector per row from `MASK_MIN_COLUMNS` of them."""
    from nimble.dialects import loop
    from nimble.passes.tile_vectorize import MASK_MIN_COLUMNS

    assert MASK_MIN_COLUMNS == 2
    text = """func.func @main(%x: tensor<1x8x?x?xf32>, %w: tensor<12x8x3x3xf32>, %b: tensor<12xf32>, %a: tensor<?x64xf32>, %v: tensor<64x?xf32>, %x1: tensor<1x1x?x?xf32>, %w1: tensor<12x1x3x3xf32>) -> (tensor<1x12x?x?xf32>, tensor<?x?xf32>, tensor<1x12x?x?xf32>) {
  %y = graph.conv2d %x, %w, %b {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x8x?x?xf32>, tensor<12x8x3x3xf32>, tensor<12xf32>) -> tensor<1x12x?x?xf32>
  %r = graph.relu %y : tensor<1x12x?x?xf32> -> tensor<1x12x?x?xf32>
  %m = graph.matmul %a, %v : (tensor<?x64xf32>, tensor<64x?xf32>) -> tensor<?x?xf32>
  %y1 = graph.conv2d %x1, %w1 {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x1x?x?xf32>, tensor<12x1x3x3xf32>) -> tensor<1x12x?x?xf32>
  func.return %r, %m, %y1 : tensor<1x12x?x?xf32>, tensor<?x?xf32>, tensor<1x12x?x?xf32>
}"""
    exe = nimble.compile(text)
    kernels = {f.sym_name.data: f for f in loop.kernels_of(exe.module)}

    def masked_in_reductions(kernel) -> bool:
        return any(isinstance(o, vector.MaskedLoadOp) for red in kernel.walk() if isinstance(red, loop.ReduceOp)
                   for o in red.body.walk())

    def staged(kernel) -> set[tuple[int, ...]]:
        return {tuple(o.memref.type.get_shape()) for o in kernel.walk() if isinstance(o, loop.AllocOp)
                and o.memref.type.get_shape()[0] == 16}

    def dot_products(kernel) -> bool:
        return any(isinstance(o, vector.ReductionOp) for o in kernel.walk())

    conv, matmul, conv1 = kernels["main_conv2d_0"], kernels["main_matmul_0"], kernels["main_conv2d_1"]
    assert staged(conv) == {(16, 72)} and dot_products(conv) and not masked_in_reductions(conv)
    assert staged(matmul) == {(16, 64)} and dot_products(matmul)
    assert not staged(conv1) and masked_in_reductions(conv1)
    module = nimble.parse(text)
    w = rng.standard_normal((12, 8, 3, 3)).astype(np.float32)
    b = rng.standard_normal(12).astype(np.float32)
    a = rng.standard_normal((3, 64)).astype(np.float32)
    w1 = rng.standard_normal((12, 1, 3, 3)).astype(np.float32)
    for pixels in range(64, 80):  # one whole panel, then 0 to 15 pixels (and matmul columns) left
        x = rng.standard_normal((1, 8, 1, pixels)).astype(np.float32)
        v = rng.standard_normal((64, pixels - 48)).astype(np.float32)  # 16 to 31 columns
        x1 = rng.standard_normal((1, 1, 1, pixels)).astype(np.float32)
        for got, expected in zip(exe(x, w, b, a, v, x1, w1), nimble.interpret(module, x, w, b, a, v, x1, w1)):
            np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)
    for h in (7, 14):
        x, x1 = (rng.standard_normal((1, c, h, h)).astype(np.float32) for c in (8, 1))
        v = rng.standard_normal((64, h)).astype(np.float32)
        for got, expected in zip(exe(x, w, b, a, v, x1, w1), nimble.interpret(module, x, w, b, a, v, x1, w1)):
            np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)


@avx512
def test_whole_vectors_left_by_full_tiles_share_one_tile(rng):
    """A panel with 48 to 63 pixels (a 7 x 7 map: 49) leaves 3 whole vectors after the
    4-vector tiles: they run as one 3-vector tile (each weight read once for them, not
    once per vector), then single vectors and the last columns. Matches the reference
    from 1 to 4 vectors left, with and without leftover columns."""
    from nimble.dialects import loop

    text = """func.func @main(%x: tensor<1x8x?x?xf32>, %w: tensor<12x8x3x3xf32>, %b: tensor<12xf32>) -> tensor<1x12x?x?xf32> {
  %y = graph.conv2d %x, %w, %b {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x8x?x?xf32>, tensor<12x8x3x3xf32>, tensor<12xf32>) -> tensor<1x12x?x?xf32>
  func.return %y : tensor<1x12x?x?xf32>
}"""
    exe = nimble.compile(text)
    (kernel,) = loop.kernels_of(exe.module)
    accumulators = {len(o.results) for o in kernel.walk() if isinstance(o, loop.ReduceOp)}
    rows = max(accumulators) // 4  # the full tile: rows x 4 vectors
    assert rows * 3 in accumulators
    module = nimble.parse(text)
    w = rng.standard_normal((12, 8, 3, 3)).astype(np.float32)
    b = rng.standard_normal(12).astype(np.float32)
    for h, width in [(7, 7), (1, 48), (1, 32), (1, 63), (1, 17), (3, 40)]:
        x = rng.standard_normal((1, 8, h, width)).astype(np.float32)
        np.testing.assert_allclose(exe(x, w, b), nimble.interpret(module, x, w, b)[0], rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("chunks", [2, 3])
@pytest.mark.parametrize("stride", [1, 2])
def test_conv_panels_split_by_panels_or_by_channels(chunks, stride, rng, monkeypatch):
    """Forced into 2 or 3 chunks, a panel conv splits by panels where each chunk gets
    `PANEL_GRAIN` of them (40 x 40: 25 panels) or where whole panels split evenly (16 x
    16: 4 of them, for 2 chunks), and by output channels where not (one panel; 5; 9,
    which is enough for 2 chunks only; 4 for 3 chunks), with batches of 1 and 2, and
    matches the reference."""
    from nimble.runtime.kernels import KernelEntry

    monkeypatch.setattr(KernelEntry, "min_work", 0)
    text = f"""func.func @main(%x: tensor<?x6x?x?xf32>, %w: tensor<13x6x3x3xf32>, %b: tensor<13xf32>) -> tensor<?x13x?x?xf32> {{
  %y = graph.conv2d %x, %w, %b {{strides = array<i64: {stride}, {stride}>, padding = array<i64: 1, 1, 1, 1>}} : (tensor<?x6x?x?xf32>, tensor<13x6x3x3xf32>, tensor<13xf32>) -> tensor<?x13x?x?xf32>
  %r = graph.relu %y : tensor<?x13x?x?xf32> -> tensor<?x13x?x?xf32>
  func.return %r : tensor<?x13x?x?xf32>
}}"""
    exe = nimble.compile(text, threads=chunks)
    module = nimble.parse(text)
    w = rng.standard_normal((13, 6, 3, 3)).astype(np.float32)
    b = rng.standard_normal(13).astype(np.float32)
    for n, h, width in [(1, 1, 1), (2, 9, 31), (1, 23 * stride, 23 * stride), (2, 16 * stride, 16 * stride),
                        (2, 40 * stride, 40 * stride)]:
        x = rng.standard_normal((n, 6, h, width)).astype(np.float32)
        np.testing.assert_allclose(exe(x, w, b), nimble.interpret(module, x, w, b)[0], rtol=1e-4, atol=1e-4)
    assert {p.chunks for k in exe.vm.kernels for p in k._plans.values()} == {chunks}


@masks
def test_stride_two_windows_are_vector_loads(rng):
    """ResNet's first convolution (7 x 7, stride 2): the im2col copy reads every other
    element as vector loads and shuffles, a row's last elements as masked ones; widths
    around the vector width and beyond."""
    text = """func.func @main(%x: tensor<1x3x?x?xf32>, %w: tensor<8x3x7x7xf32>) -> tensor<1x8x?x?xf32> {
  %y = graph.conv2d %x, %w {strides = array<i64: 2, 2>, padding = array<i64: 3, 3, 3, 3>} : (tensor<1x3x?x?xf32>, tensor<8x3x7x7xf32>) -> tensor<1x8x?x?xf32>
  func.return %y : tensor<1x8x?x?xf32>
}"""
    exe = nimble.compile(text)
    module = str(exe.module)
    assert "vector.shuffle" in module
    assert any("vector.maskedload" in line for line in module.splitlines()
               if "memref<1x3x?x?xf32>" in line)  # from the input: a row's strided leftovers
    w = rng.standard_normal((8, 3, 7, 7)).astype(np.float32)
    for h, width in [(1, 1), (9, 31), (16, 33), (5, 64), (3, 101)]:
        x = rng.standard_normal((1, 3, h, width)).astype(np.float32)
        np.testing.assert_allclose(exe(x, w), nimble.interpret(nimble.parse(text), x, w)[0], rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("kernel,stride,pad", [(3, 2, 1), (2, 2, 0), (3, 1, 1), (5, 3, 2)])
def test_max_pool_rows(kernel, stride, pad, rng):
    """Max pooling (all taps at once inside, the taps in the window at the edges): exact
    against the reference at sizes around the vector width, windows overhanging both
    sides, maps too small to have an inside."""
    text = f"""func.func @main(%x: tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32> {{
  %y = graph.max_pool2d %x {{kernel = array<i64: {kernel}, {kernel}>, strides = array<i64: {stride}, {stride}>, padding = array<i64: {pad}, {pad}, {pad}, {pad}>}} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  func.return %y : tensor<?x?x?x?xf32>
}}"""
    exe = nimble.compile(text)
    for shape in [(1, 1, 1, 1), (2, 3, 7, 9), (1, 4, 33, 40), (1, 1, 5, 101)]:
        if min(shape[2:]) + 2 * pad < kernel:
            continue
        x = rng.standard_normal(shape).astype(np.float32)
        np.testing.assert_array_equal(exe(x), nimble.interpret(nimble.parse(text), x)[0])


def test_bool_vectors_are_bytes_in_memory(rng):
    """numpy bools are one byte each: vector loads/stores of i1 must not be bit-packed."""
    text = """func.func @main(%a: tensor<?x40xf32>, %b: tensor<?x40xf32>, %m: tensor<?x40xi1>) -> (tensor<?x40xi1>, tensor<?x40xf32>) {
  %c = graph.less %a, %b : (tensor<?x40xf32>, tensor<?x40xf32>) -> tensor<?x40xi1>
  %w = graph.where %m, %a, %b : (tensor<?x40xi1>, tensor<?x40xf32>, tensor<?x40xf32>) -> tensor<?x40xf32>
  func.return %c, %w : tensor<?x40xi1>, tensor<?x40xf32>
}"""
    exe = nimble.compile(text)
    assert f"vector<{LANES}xi1>" in str(exe.module)
    a, b = (rng.standard_normal((3, 40)).astype(np.float32) for _ in range(2))
    m = rng.random((3, 40)) < 0.5
    c, w = exe(a, b, m)
    np.testing.assert_array_equal(c, a < b)
    np.testing.assert_array_equal(w, np.where(m, a, b))


@pytest.mark.parametrize("text", [_matmul(17), _dense(17)], ids=["matmul", "dense"])
def test_masked_remainders_match_peeled(text, rng):
    """`remainder="masked"` finishes rows with one masked vector step, `auto` does so for
    elementwise nests only: same results."""
    exes = {r: nimble.compile(text, remainder=r) for r in ("peeled", "masked", "auto")}
    assert "vector.maskedstore" in str(exes["masked"].module) or "vector.reduction" in str(exes["masked"].module)
    ref = nimble.parse(text)
    for m, n in [(1, 1), (3, 15), (9, 17), (8, 33), (5, 100)]:
        a = rng.standard_normal((m, 17)).astype(np.float32)
        b = rng.standard_normal((17, n) if "matmul" in text else (n, 17)).astype(np.float32)
        args = [a, b, rng.standard_normal(n).astype(np.float32)] if "matmul" in text else [a, b]
        expected = nimble.interpret(ref, *args)[0]
        for exe in exes.values():
            np.testing.assert_allclose(exe(*args), expected, rtol=1e-4, atol=1e-5)


@masks
def test_auto_remainder_masks_elementwise_rows_only(rng):
    """The default (`auto`): an elementwise nest ends its rows with a masked vector step,
    a register tile with a scalar loop."""
    text = """func.func @main(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> (tensor<?x?xf32>, tensor<?x?xf32>) {
  %e = graph.exp %a : tensor<?x?xf32> -> tensor<?x?xf32>
  %c = graph.matmul %a, %b : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  func.return %e, %c : tensor<?x?xf32>, tensor<?x?xf32>
}"""
    exe = nimble.compile(text)
    kernels = {k.sym_name.data: str(k) for k in loop.kernels_of(exe.module)}
    (exp,) = [t for n, t in kernels.items() if "exp" in n]
    matmuls = [t for n, t in kernels.items() if "matmul" in n]
    assert "vector.maskedstore" in exp
    assert matmuls and not any("vector.maskedstore" in t for t in matmuls)
    for m, n in [(1, 1), (7, 17), (33, 5)]:
        a = rng.standard_normal((m, n)).astype(np.float32)
        b = rng.standard_normal((n, 19)).astype(np.float32)
        e, c = exe(a, b)
        np.testing.assert_allclose(e, np.exp(a), rtol=1e-5)
        np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)


def test_auto_remainder_with_f16_next_to_f32(rng):
    """Masked steps are for f32 rows only (xdsl declares one llvm.masked.store per module,
    whatever its type): an f16 nest next to an f32 one ends with a scalar loop instead."""
    text = """func.func @main(%a: tensor<?x?xf16>, %b: tensor<?x?xf32>) -> (tensor<?x?xf16>, tensor<?x?xf32>) {
  %c = graph.add %a, %a : (tensor<?x?xf16>, tensor<?x?xf16>) -> tensor<?x?xf16>
  %d = graph.add %b, %b : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  func.return %c, %d : tensor<?x?xf16>, tensor<?x?xf32>
}"""
    exe = nimble.compile(text)
    for shape in [(1, 1), (3, 17), (2, 40)]:
        a = rng.standard_normal(shape).astype(np.float16)
        b = rng.standard_normal(shape).astype(np.float32)
        c, d = exe(a, b)
        np.testing.assert_array_equal(c, a + a)
        np.testing.assert_array_equal(d, b + b)


@masks
@pytest.mark.parametrize("dtype", ["f32", "f16"])
def test_softmax_rows_end_with_a_masked_step(dtype, rng):
    """A row's max and sum of exps run in lanes, the steps whole vectors leave as one
    masked step (f32); an f16 row, which cannot be masked, keeps its lanes and ends
    with scalar steps, not a scalar row."""
    text = f"""func.func @main(%x: tensor<?x?x{dtype}>) -> tensor<?x?x{dtype}> {{
  %y = graph.softmax %x {{axis = -1 : i64}} : tensor<?x?x{dtype}> -> tensor<?x?x{dtype}>
  func.return %y : tensor<?x?x{dtype}>
}}"""
    exe = nimble.compile(text)
    (kernel,) = [str(k) for k in loop.kernels_of(exe.module)]
    assert kernel.count("vector.reduction") == 2
    assert ("vector.maskedload" in kernel) == (dtype == "f32")
    ref = nimble.parse(text)
    np_type = np.float32 if dtype == "f32" else np.float16
    for shape in [(1, 1), (3, 8), (2, 16), (5, 17), (3, 100)]:
        x = (rng.standard_normal(shape) * 4).astype(np_type)
        x[0, -1] = -1000  # an exponential far below the others: 0
        np.testing.assert_allclose(exe(x).astype(np.float32), nimble.interpret(ref, x)[0].astype(np.float32),
                                   rtol=1e-5 if dtype == "f32" else 2e-3, atol=1e-6 if dtype == "f32" else 1e-3)


def test_remainder_option_is_checked():
    with pytest.raises(ValueError, match="remainder must be one of auto, peeled, masked"):
        nimble.compile(_dense(4), remainder="rounded")


def _dense_residual(k: str, n: str, rows: str = "s") -> str:
    return f"""def @main(%x: f32[{rows}, {k}], %w: f32[{n}, {k}], %b: f32[{n}], %r: f32[{rows}, {n}]) -> f32[{rows}, {n}] {{
  tanh(dense(%x, %w, %b)) + %r
}}"""


def _row_lane_panels(exe) -> list:
    """The transposed panels of rows that lanes along the rows read (passes/loop_transforms/row_lanes.py)."""
    return [o for o in exe.module.walk() if isinstance(o, loop.AllocOp) and o.memref.type.get_num_dims() == 3
            and o.memref.type.get_shape()[-1] == 16]


def _paired_reductions(exe) -> list:
    """Row-lanes reductions over two panels of rows at once: two vectors of the packed
    rows (3-D, 16 lanes) read per step."""
    def panel_reads(red):
        return sum(isinstance(o, vector.LoadOp) and o.base.type.get_num_dims() == 3
                   and o.base.type.get_shape()[-1] == 16 for o in red.body.block.ops)
    return [o for o in exe.module.walk() if isinstance(o, loop.ReduceOp) and panel_reads(o) == 2]


def _prefetched(exe) -> set[tuple[int, ...]]:
    """The shapes of the buffers some `loop.prefetch` reads ahead."""
    return {tuple(o.memref.type.get_shape()) for o in exe.module.walk() if isinstance(o, loop.PrefetchOp)}


@avx512
@pytest.mark.parametrize("chunks", [1, 2, 3])
@pytest.mark.parametrize("k,n", [("17", "70"), ("512", "48"), ("k", "n")])
def test_dense_rows_in_lanes(chunks, k, n, rng, monkeypatch):
    """A dense layer with few rows runs with lanes along the rows (W read in place, or
    staged per tile when its rows are a multiple of 512, x packed transposed, 16 x 16 tiles
    transposed back for the epilogue): rows from 16 to 511 in whole panels of 16 (two at
    a time, an odd one alone: 48, 255 rows), the rows left over and every other row
    count as before. Columns and reductions not
    multiples of 16, an epilogue reading another tensor, split in 1 to 3 chunks
    (cooperating on the panels): the result matches the reference at every row count."""
    from nimble.runtime.kernels import KernelEntry

    monkeypatch.setattr(KernelEntry, "min_work", 0)
    text = _dense_residual(k, n)
    exe = nimble.compile(nimble.parse(text, name="dense.nb"), threads=chunks)
    assert _row_lane_panels(exe)
    assert _prefetched(exe) == {{"17": (70, 17), "512": (48, 512), "k": (DYNAMIC_INDEX, DYNAMIC_INDEX)}[k]}  # the next tile's rows of W
    ref = nimble.parse(text, name="dense.nb")
    sizes = {"17": [(17, 70)], "512": [(512, 48)], "k": [(33, 21), (1024, 21)]}[k]
    for kk, nn in sizes:
        w = rng.standard_normal((nn, kk)).astype(np.float32)
        b = rng.standard_normal(nn).astype(np.float32)
        for m in [1, 15, 16, 17, 32, 47, 48, 100, 255, 511, 512, 530]:
            x = rng.standard_normal((m, kk)).astype(np.float32)
            r = rng.standard_normal((m, nn)).astype(np.float32)
            np.testing.assert_allclose(exe(x, w, b, r), nimble.interpret(ref, x, w, b, r)[0], rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("product", ["dense", "matmul"])
def test_a_long_epilogue_runs_as_a_loop_over_the_tile(product, rng, monkeypatch):
    """gelu after a product (~30 ops per vector) runs once per trip of a loop over the
    register tile's elements, their accumulators and indices through a stack buffer
    (`Tile._epilogue_loop`), in every strategy (lanes along the rows, packed panels, dot
    products, leftover rows and columns), not once per element of each tile: the
    results match the reference at rows and columns around every tile edge."""
    from nimble.passes.loop_transforms import register_tile

    w_shape = "f32[n, 24]" if product == "dense" else "f32[24, n]"
    product_text = "dense(%x, %w, %b)" if product == "dense" else "%x @ %w + %b"
    text = f"""def @main(%x: f32[s, 24], %w: {w_shape}, %b: f32[n], %r: f32[s, n]) -> f32[s, n] {{
  gelu({product_text}) + %r
}}"""

    def divisions(exe) -> int:  # one per copy of gelu's rational approximation of erf
        return sum(isinstance(o, arith.DivfOp) for o in exe.module.walk())

    exe = nimble.compile(nimble.parse(text, name="gelu.nb"))
    monkeypatch.setattr(register_tile, "EPILOGUE_LOOP_OPS", 10**6)
    unrolled = nimble.compile(nimble.parse(text, name="gelu.nb"))
    assert divisions(exe) * 5 < divisions(unrolled)
    ref = nimble.parse(text, name="gelu.nb")
    for m, n in [(1, 70), (5, 16), (7, 64), (16, 70), (20, 130), (33, 1), (100, 65), (530, 70)]:
        x = rng.standard_normal((m, 24)).astype(np.float32)
        w = rng.standard_normal((n, 24) if product == "dense" else (24, n)).astype(np.float32)
        b = rng.standard_normal(n).astype(np.float32)
        r = rng.standard_normal((m, n)).astype(np.float32)
        np.testing.assert_allclose(exe(x, w, b, r), nimble.interpret(ref, x, w, b, r)[0], rtol=1e-4, atol=1e-4)


@avx512
@pytest.mark.parametrize("m", [16, 40, 46, 600])
def test_dense_rows_in_lanes_static(m, rng):
    """Rows known at compile time: whole panels of 16 rows in lanes (40: 32 of them, two at
    a time, the 8 left by the usual strategy; 46: the 14 left as one more panel), none
    from 512 rows on."""
    text = _dense_residual("24", "40", str(m))
    exe = nimble.compile(nimble.parse(text, name="dense.nb"))
    assert bool(_row_lane_panels(exe)) == (m < 512)
    assert bool(_paired_reductions(exe)) == (32 <= m < 512)
    assert _prefetched(exe) == ({(40, 24)} if m < 512 else set())
    x = rng.standard_normal((m, 24)).astype(np.float32)
    w = rng.standard_normal((40, 24)).astype(np.float32)
    b = rng.standard_normal(40).astype(np.float32)
    r = rng.standard_normal((m, 40)).astype(np.float32)
    np.testing.assert_allclose(exe(x, w, b, r), nimble.interpret(nimble.parse(text, name="dense.nb"), x, w, b, r)[0], rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("heads, depth", [(4, 64), (3, 48), (2, 8)])
def test_head_merge_reads_whole_vectors_inside_a_head(heads, depth, rng):
    """BERT's head merge `[h, s, d] -> [s, h * d]` reads its source at `(j / d, s, j % d)`:
    with d a multiple of the 16 lanes (and the lanes starting at multiples of 16) one
    vector of j lies in one head, so the quotient is one scalar and the remainder a run:
    vector loads. With d = 8 the lanes would cross heads: scalars. Both match numpy."""
    text = f"""func.func @main(%x: tensor<{heads}x?x{depth}xf32>) -> tensor<?x{heads * depth}xf32> {{
  %t = graph.transpose %x [1, 0, 2] : tensor<{heads}x?x{depth}xf32> -> tensor<?x{heads}x{depth}xf32>
  %y = graph.reshape %t [-1, {heads * depth}] : tensor<?x{heads}x{depth}xf32> -> tensor<?x{heads * depth}xf32>
  func.return %y : tensor<?x{heads * depth}xf32>
}}"""
    exe = nimble.compile(text)
    (kernel,) = loop.kernels_of(exe.module)
    vector_loads = [o for o in kernel.walk() if isinstance(o, vector.LoadOp)]
    assert bool(vector_loads) == (depth % LANES == 0)
    # 16 divides the static row length: no leftover loops (nor empty ones) are emitted
    assert not any(isinstance(o, loop.ForeachOp) and o.lower is o.upper for o in kernel.walk())
    if depth % LANES == 0:
        assert not any(isinstance(o, vector.MaskedLoadOp) for o in kernel.walk())
    for s in (1, 7, 33):
        x = rng.standard_normal((heads, s, depth)).astype(np.float32)
        np.testing.assert_array_equal(exe(x), x.transpose(1, 0, 2).reshape(s, heads * depth))


def test_key_head_split_transposes_16_by_16_blocks_in_registers(rng):
    """BERT's keys split into heads and transposed, `out[h, d, s] = x[s, h * 64 + d]`:
    lanes along s would read rows 1 KB apart, lanes along d store rows apart. The copy
    runs in 16 x 16 blocks (16 vector loads along d, shuffles, 16 vector stores along s),
    the rows left by whole blocks one by one; the scale applied after the transpose reads
    its own input along s. Matches numpy at lengths on and off the block."""
    text = """func.func @main(%x: tensor<?x256xf32>, %g: tensor<?xf32>) -> tensor<4x64x?xf32> {
  %t = graph.reshape %x [-1, 4, 64] : tensor<?x256xf32> -> tensor<?x4x64xf32>
  %y = graph.transpose %t [1, 2, 0] : tensor<?x4x64xf32> -> tensor<4x64x?xf32>
  %z = graph.mul %y, %g : (tensor<4x64x?xf32>, tensor<?xf32>) -> tensor<4x64x?xf32>
  func.return %z : tensor<4x64x?xf32>
}"""
    exe = nimble.compile(text)
    # (its variant for a `g` of one element broadcast along s selects indices: scalars)
    kernel = next(f for f in exe.module.ops if f.sym_name.data == "main_reshape_0_ns")
    ops = list(kernel.walk())
    # one 16 x 16 block: 4 rounds of 16 (AVX-512); 8 x 8: 3 rounds of 8 (AVX2)
    assert sum(isinstance(o, vector.ShuffleOp) for o in ops) == LANES * (LANES.bit_length() - 1)
    assert sum(isinstance(o, vector.StoreOp) for o in ops) == LANES
    for s in (1, 7, 16, 33, 128):
        x = rng.standard_normal((s, 256)).astype(np.float32)
        for g in (rng.standard_normal(s).astype(np.float32), np.float32([3.0])):
            np.testing.assert_array_equal(exe(x, g), x.reshape(s, 4, 64).transpose(1, 2, 0) * g)


@pytest.mark.parametrize("dtype", ["f32", "i64"])
def test_plain_transpose_in_blocks_at_sizes_off_the_block(dtype, rng):
    """A 2-D transpose with both dims dynamic: f32 in transposed blocks, other element
    types (whose lanes are not 16 x 32 bits) stay scalar. Both match numpy."""
    text = f"""func.func @main(%x: tensor<?x?x{dtype}>) -> tensor<?x?x{dtype}> {{
  %y = graph.transpose %x [1, 0] : tensor<?x?x{dtype}> -> tensor<?x?x{dtype}>
  func.return %y : tensor<?x?x{dtype}>
}}"""
    exe = nimble.compile(text)
    (kernel,) = loop.kernels_of(exe.module)
    assert any(isinstance(o, vector.ShuffleOp) for o in kernel.walk()) == (dtype == "f32")
    for m, n in ((1, 1), (17, 5), (16, 48), (33, 40)):
        x = rng.standard_normal((m, n)) * 100
        x = x.astype(np.float32 if dtype == "f32" else np.int64)
        np.testing.assert_array_equal(exe(x), x.T)


def test_dynamic_reshape_with_static_dims_indexes_by_groups(rng):
    """A dynamic reshape whose result type fixes some dims (BERT's head split `[s, 256]
    -> [s, 4, 64]`, the dims given by a shape value) indexes its input by groups of
    dims from those constants: no division per element, vector loads along `64`. It
    matches numpy at several sequence lengths."""
    from nimble.dialects import loop

    text = """func.func @main(%x: tensor<?x256xf32>) -> tensor<4x?x64xf32> {
  %n = dynshape.dim %x, 0 : tensor<?x256xf32>
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  %t = dynshape.from_dims %n, %c4, %c64 : !dynshape.shape<3>
  %y = graph.dynamic_reshape %x, %t : (tensor<?x256xf32>, !dynshape.shape<3>) -> tensor<?x4x64xf32>
  %z = graph.transpose %y [1, 0, 2] : tensor<?x4x64xf32> -> tensor<4x?x64xf32>
  func.return %z : tensor<4x?x64xf32>
}"""
    exe = nimble.compile(text)
    (kernel,) = loop.kernels_of(exe.module)
    ops = list(kernel.walk())
    assert not any(isinstance(o, arith.DivSIOp | arith.RemSIOp) for o in ops)
    assert any(isinstance(o, vector.LoadOp) for o in ops)
    for s in (1, 7, 33):
        x = rng.standard_normal((s, 256)).astype(np.float32)
        np.testing.assert_array_equal(exe(x), x.reshape(s, 4, 64).transpose(1, 0, 2))


def _top_level(op):
    while not isinstance(op.parent_op(), loop.KernelOp):
        op = op.parent_op()
    return op


def _split_product(op: str, k: int, sizes: tuple[int, ...]) -> str:
    n = sum(sizes)
    w = f"tensor<{n}x{k}xf32>" if op == "dense" else f"tensor<{k}x{n}xf32>"
    outs = ", ".join(f"tensor<?x{s}xf32>" for s in sizes)
    names = ", ".join(f"%o{i}" for i in range(len(sizes)))
    return f"""func.func @main(%x: tensor<?x{k}xf32>, %w: {w}) -> ({outs}) {{
  %y = graph.{op} %x, %w : (tensor<?x{k}xf32>, {w}) -> tensor<?x{n}xf32>
  %t = graph.tanh %y : tensor<?x{n}xf32> -> tensor<?x{n}xf32>
  {names} = graph.split %t {{axis = 1 : i64, sizes = array<i64: {", ".join(map(str, sizes))}>}} : tensor<?x{n}xf32> -> ({outs})
  func.return {names} : {outs}
}}"""


@avx512
@pytest.mark.parametrize("chunks", [1, 2])
@pytest.mark.parametrize("op,k", [("dense", 24), ("dense", 512), ("matmul", 40)])
def test_a_product_split_into_outputs_packs_each_slice(op, k, chunks, rng, monkeypatch):
    """A product whose columns are split into several outputs (BERT's query, key and value
    from one weight matrix) is one nest per output, each reading the operand from column
    `c` on (`W[j + c, k]`, `B[k, j + c]`): each still packs (a dense layer's rows in lanes,
    staged per tile at K = 512; packed panels from 512 rows; a matmul's plain panels and
    leftover dot products), the rows' panel packed once for all of them (share-packs).
    Slices of 48, 80 and 17 columns at rows around every edge match the reference."""
    from nimble.runtime.kernels import KernelEntry

    monkeypatch.setattr(KernelEntry, "min_work", 0)
    sizes = (48, 80, 17)
    text = _split_product(op, k, sizes)
    exe = nimble.compile(text, threads=chunks)
    if op == "dense":  # x in lanes, packed once for the three outputs' nests (and read by each)
        (panel,) = _row_lane_panels(exe)
        readers = {_top_level(use.operation) for use in panel.memref.uses if isinstance(use.operation, vector.LoadOp)}
        assert len(readers) == len(sizes)
    ref = nimble.parse(text)
    n = sum(sizes)
    w = rng.standard_normal((n, k) if op == "dense" else (k, n)).astype(np.float32)
    for m in [1, 15, 16, 17, 33, 100, 530]:
        x = rng.standard_normal((m, k)).astype(np.float32)
        for got, want in zip(exe(x, w), nimble.interpret(ref, x, w)):
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
