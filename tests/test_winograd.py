"""The Winograd form of 3 x 3 stride-1 convs (lowering/kernels/winograd.py) against the reference
interpreter: map sizes around its pairs of rows and panels, padding on any side, an
epilogue that reads other tensors, one and two threads, and maps below
`winograd.MIN_PIXELS` (the direct form: where sizes are known only at run time, the host
launches the kernel of one form or the other)."""

from __future__ import annotations

import re

import numpy as np
import pytest

import nimble
from nimble.lowering.kernels import winograd


def _conv(cin: int, cout: int, pads: tuple[int, int, int, int], map_type: str, out_type: str) -> str:
    pad = ", ".join(map(str, pads))
    return f"""func.func @main(%x: tensor<{map_type.format(cin)}>, %w: tensor<{cout}x{cin}x3x3xf32>, %b: tensor<{cout}xf32>, %r: tensor<{out_type.format(cout)}>) -> tensor<{out_type.format(cout)}> {{
  %y = graph.conv2d %x, %w, %b {{strides = array<i64: 1, 1>, padding = array<i64: {pad}>}} : (tensor<{map_type.format(cin)}>, tensor<{cout}x{cin}x3x3xf32>, tensor<{cout}xf32>) -> tensor<{out_type.format(cout)}>
  %s = graph.add %y, %r : (tensor<{out_type.format(cout)}>, tensor<{out_type.format(cout)}>) -> tensor<{out_type.format(cout)}>
  %z = graph.relu %s : tensor<{out_type.format(cout)}> -> tensor<{out_type.format(cout)}>
  func.return %z : tensor<{out_type.format(cout)}>
}}"""


def _launched(exe, *args) -> tuple[np.ndarray, list[str]]:
    """The result of `exe(*args)` and the kernels the call launched."""
    profile = exe.vm.start_profile()
    try:
        return exe(*args), sorted(profile)
    finally:
        exe.vm.profile = None


def _check(exe, text: str, rng, batch: int, cin: int, cout: int, h: int, w: int, pads) -> None:
    oh, ow = h + pads[0] + pads[2] - 2, w + pads[1] + pads[3] - 2
    if oh < 1 or ow < 1:  # (a map smaller than the window without padding)
        return
    x = rng.standard_normal((batch, cin, h, w)).astype(np.float32)
    wt = (rng.standard_normal((cout, cin, 3, 3)) / np.sqrt(9 * cin)).astype(np.float32)
    b = rng.standard_normal(cout).astype(np.float32)
    r = rng.standard_normal((batch, cout, oh, ow)).astype(np.float32)
    want = nimble.interpret(nimble.parse(text), x, wt, b, r)[0]
    got, launched = _launched(exe, x, wt, b, r)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5, err_msg=f"{h} x {w}")
    if any(name.endswith("_wg_ns") for name in exe.kernel_names):  # (the form chosen at run time)
        winograd_kernel = any(name.endswith("_wg_ns") for name in launched)
        assert winograd_kernel == (oh * ow >= winograd.MIN_PIXELS), (h, w, launched)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("pads", [(1, 1, 1, 1), (0, 0, 0, 0), (2, 0, 1, 2)])
def test_dynamic_maps_match_the_reference(pads, threads, rng):
    """A kernel of each form, the host launching Winograd's from MIN_PIXELS output pixels;
    odd heights (a last pair of one row), widths not multiples of the panel, panels
    spanning pairs, few panels split between two threads."""
    text = _conv(32, 40, pads, "?x{}x?x?xf32", "?x{}x?x?xf32")
    exe = nimble.compile(text, threads=threads)
    for batch, h, w in [(1, 3, 3), (1, 1, 30), (2, 5, 7), (1, 20, 22), (1, 24, 24), (1, 25, 25), (2, 27, 23),
                        (1, 26, 26), (1, 9, 70), (1, 30, 28)]:
        _check(exe, text, rng, batch, 32, 40, h, w, pads)


def test_dynamic_channels_decide_at_run_time(rng):
    """Channels known only at run time join the host's test: 16 input channels (or 8
    output channels) take the direct form, 32 or more the Winograd one."""
    text = """func.func @main(%x: tensor<1x?x?x?xf32>, %w: tensor<?x?x3x3xf32>, %b: tensor<?xf32>) -> tensor<1x?x?x?xf32> {
  %y = graph.conv2d %x, %w, %b {strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x?x?x?xf32>, tensor<?x?x3x3xf32>, tensor<?xf32>) -> tensor<1x?x?x?xf32>
  func.return %y : tensor<1x?x?x?xf32>
}"""
    exe, reference = nimble.compile(text), nimble.parse(text)
    for cin, cout, size in [(16, 40, 24), (32, 40, 24), (40, 8, 30), (33, 35, 25)]:
        x = rng.standard_normal((1, cin, size, size)).astype(np.float32)
        w = (rng.standard_normal((cout, cin, 3, 3)) / np.sqrt(9 * cin)).astype(np.float32)
        b = rng.standard_normal(cout).astype(np.float32)
        got, launched = _launched(exe, x, w, b)
        np.testing.assert_allclose(got, nimble.interpret(reference, x, w, b)[0], rtol=1e-4, atol=1e-5)
        assert launched == (["main_conv2d_0_wg"] if min(cin, cout) >= 32 else ["main_conv2d_0"]), launched


def test_static_map_matches_the_reference(rng):
    text = _conv(48, 32, (1, 1, 1, 1), "1x{}x33x19xf32", "1x{}x33x19xf32")
    _check(nimble.compile(text), text, rng, 1, 48, 32, 33, 19, (1, 1, 1, 1))


def test_run_time_choice_builds_both_forms():
    """With the map's size known only at run time, a kernel of each form; known and large
    enough, only the Winograd form; known and small, only the direct one."""
    from xdsl.passes import PassPipeline

    from nimble.registry import all_passes, make_context

    def kernel_text(map_type: str) -> str:
        module = nimble.parse(_conv(32, 32, (1, 1, 1, 1), map_type, map_type))
        PassPipeline.parse_spec(all_passes(), "fuse-ops,lower-graph-to-loops").apply(make_context(), module)
        return str(module)

    dynamic, large, small = (kernel_text(t) for t in ("1x{}x?x?xf32", "1x{}x32x32xf32", "1x{}x8x8xf32"))
    winograd_panel, im2col_panel = "memref<4x96x64xf32>", "memref<288x64xf32>"
    kernels = {part.split("(", 1)[0]: part for part in re.split(r"(?:func\.func|loop\.kernel) @", dynamic)[1:]}
    assert sorted(kernels) == ["main", "main_conv2d_0", "main_conv2d_0_ns", "main_conv2d_0_wg_ns"]
    assert winograd_panel in kernels["main_conv2d_0_wg_ns"] and im2col_panel not in kernels["main_conv2d_0_wg_ns"]
    assert winograd_panel not in kernels["main_conv2d_0_ns"] and im2col_panel in kernels["main_conv2d_0_ns"]
    assert winograd_panel not in kernels["main_conv2d_0"]  # (the residual could stretch the map: no panels)
    assert winograd_panel in large and im2col_panel not in large
    assert winograd_panel not in small and im2col_panel in small
    assert 8 * 8 < winograd.MIN_PIXELS <= 32 * 32


def _constant_weight_conv(w: np.ndarray, size: int | str) -> str:
    cout, cin = w.shape[:2]
    hexed = "0x" + w.astype("<f4").tobytes().hex().upper()
    m = f"1x{cin}x{size}x{size}xf32"
    o = f"1x{cout}x{size}x{size}xf32"
    return f"""func.func @main(%x: tensor<{m}>) -> tensor<{o}> {{
  %w = graph.constant dense<"{hexed}"> : tensor<{cout}x{cin}x3x3xf32>
  %y = graph.conv2d %x, %w {{strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>}} : (tensor<{m}>, tensor<{cout}x{cin}x3x3xf32>) -> tensor<{o}>
  %z = graph.relu %y : tensor<{o}> -> tensor<{o}>
  func.return %z : tensor<{o}>
}}"""


@pytest.mark.parametrize("threads", [1, 2])
def test_constant_weights_are_transformed_once(threads, rng):
    """A constant weight's transform U is made at compile time and passed to the kernel
    (no per-call transform: maps from MIN_PIXELS_FOLDED pixels take the Winograd form);
    it equals the per-call one bit for bit."""
    w = (rng.standard_normal((40, 32, 3, 3)) / np.sqrt(288)).astype(np.float32)
    static = _constant_weight_conv(w, 14)
    module = nimble.parse(static)
    from xdsl.passes import PassPipeline

    from nimble.registry import all_passes, make_context

    PassPipeline.parse_spec(all_passes(), "fuse-ops,lower-graph-to-loops").apply(make_context(), module)
    text = str(module)
    assert "(tensor<1x32x14x14xf32>, tensor<40x32x3x3xf32>, tensor<4x40x96xf32>)" in text
    assert "loop.alloc dram : memref<4x40x96xf32>" not in text and "memref<4x96x64xf32>" in text
    assert winograd.MIN_PIXELS_FOLDED <= 14 * 14 < winograd.MIN_PIXELS
    folded, dynamic = nimble.compile(static, threads=threads), nimble.compile(_constant_weight_conv(w, "?"), threads=threads)
    for size in (14, 24, 31):
        x = rng.standard_normal((1, 32, size, size)).astype(np.float32)
        want = nimble.interpret(nimble.parse(_constant_weight_conv(w, "?")), x)[0]
        got = dynamic(x)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
        if size == 14:
            np.testing.assert_allclose(folded(x), want, rtol=1e-4, atol=1e-5)
    # The same conv with its weight an argument makes U per call: the same numbers.
    per_call = nimble.compile(_conv(32, 40, (1, 1, 1, 1), "1x{}x?x?xf32", "1x{}x?x?xf32"), threads=threads)
    x = rng.standard_normal((1, 32, 24, 24)).astype(np.float32)
    zero = np.zeros((1, 40, 24, 24), np.float32)
    np.testing.assert_array_equal(dynamic(x), per_call(x, w, np.zeros(40, np.float32), zero))


def test_folded_weights_survive_saving_and_loading(rng, tmp_path):
    """The folded U is one more constant of the saved module; a loaded module runs the
    same kernels on it."""
    w = (rng.standard_normal((32, 32, 3, 3)) / np.sqrt(288)).astype(np.float32)
    text = _constant_weight_conv(w, "?")
    exe = nimble.compile(text)
    exe.save(tmp_path / "conv.nbc")
    again = nimble.load(tmp_path / "conv.nbc")
    for size in (12, 25):  # (the im2col form, then the Winograd form)
        x = rng.standard_normal((1, 32, size, size)).astype(np.float32)
        np.testing.assert_array_equal(again(x), exe(x))
        np.testing.assert_allclose(again(x), nimble.interpret(nimble.parse(text), x)[0], rtol=1e-4, atol=1e-5)


def test_device_groups_keep_their_weights(rng):
    """On the OpenCL target the conv's group runs on the device, whose kernels have no
    Winograd form: its weight is not folded, and the result is the reference's."""
    w = (rng.standard_normal((32, 32, 3, 3)) / np.sqrt(288)).astype(np.float32)
    text = _constant_weight_conv(w, "?")
    exe = nimble.compile(text, target="opencl")
    assert all(k.device == "opencl" for k in exe.program.kernels)
    assert "tensor<4x32x96xf32>" not in str(exe.module)
    x = rng.standard_normal((1, 32, 24, 24)).astype(np.float32)
    np.testing.assert_allclose(exe(x), nimble.interpret(nimble.parse(text), x)[0], rtol=1e-4, atol=1e-5)
