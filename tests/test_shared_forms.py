"""Layers that differ only in a size they reduce over share one kernel
(`lowering/kernels/shared_forms.py`): the VM launches it for each with that size at run time."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import run_mlir

from nimble import compile, load
from nimble.runtime.bytecode import BytecodeError, decode, encode

WIDTHS = (24, 40, 56, 72)
"""Input channels (features) of the four 1x1 convs (dense layers): one kernel for each kind
(`shared_forms.MIN_SHARED`)."""


def _model() -> str:
    params, body, results = [], [], []
    for i, c in enumerate(WIDTHS):
        x, w, y = f"tensor<?x{c}x5x7xf32>", f"tensor<32x{c}x1x1xf32>", "tensor<?x32x5x7xf32>"
        params.append(f"%x{i}: {x}, %w{i}: {w}, %b{i}: tensor<32xf32>")
        body += [f"%c{i} = graph.conv2d %x{i}, %w{i}, %b{i} : ({x}, {w}, tensor<32xf32>) -> {y}",
                 f"%r{i} = graph.relu %c{i} : {y} -> {y}"]
        results.append((f"%r{i}", y))
    for i, c in enumerate(WIDTHS):
        params.append(f"%v{i}: tensor<?x{c}xf32>, %d{i}: tensor<20x{c}xf32>")
        body.append(f"%e{i} = graph.dense %v{i}, %d{i} : (tensor<?x{c}xf32>, tensor<20x{c}xf32>) -> tensor<?x20xf32>")
        results.append((f"%e{i}", "tensor<?x20xf32>"))
    types = ", ".join(t for _, t in results)
    return (f"func.func @main({', '.join(params)}) -> ({types}) {{\n  " + "\n  ".join(body)
            + f"\n  func.return {', '.join(v for v, _ in results)} : {types}\n}}")


MODEL = _model()


def _inputs(batch: int, rng: np.random.Generator) -> list[np.ndarray]:
    args = []
    for c in WIDTHS:
        args += [rng.standard_normal((batch, c, 5, 7)), rng.standard_normal((32, c, 1, 1)), rng.standard_normal(32)]
    for c in WIDTHS:
        args += [rng.standard_normal((batch, c)), rng.standard_normal((20, c))]
    return [a.astype(np.float32) for a in args]  # (in the order of @main's parameters)


@pytest.fixture(scope="module")
def exe():
    return compile(MODEL, threads=2)


def test_one_kernel_per_op_kind(exe):
    """Four 1x1 convs (24 to 72 input channels) run one kernel, four dense layers another."""
    assert len(exe.program.kernels) == 2, exe.kernel_names
    convs = [f for f in exe.module.ops if getattr(f, "sym_name", None) is not None
             and f.sym_name.data in exe.kernel_names and "conv2d" in f.sym_name.data]
    (conv,) = convs
    assert [str(t) for t in conv.function_type.inputs.data][:2] == ["memref<?x?x5x7xf32>", "memref<32x?x1x1xf32>"]


@pytest.mark.parametrize("batch", [1, 3, 17])
def test_shared_kernels_compute_each_layer(exe, batch, rng):
    args = _inputs(batch, rng)
    expected = run_mlir(MODEL, *args)
    for got, want in zip(exe.run(*args), expected, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_saved_module_runs_shared_kernels(exe, tmp_path, rng):
    path = tmp_path / "shared.nbc"
    exe.save(path)
    args = _inputs(2, rng)
    for got, want in zip(load(path).run(*args), run_mlir(MODEL, *args), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_kernel_of_other_static_sizes_is_rejected(exe, tmp_path):
    """A kernel whose static dims are not its group's is refused when the module loads
    (a `?` where the group has a size is what sharing makes; another size is corrupt)."""
    path = tmp_path / "shared.nbc"
    exe.save(path)
    program = decode(path.read_bytes())
    kernel = next(k for k in program.kernels if "conv2d" in k.name)
    dtype, dims = kernel.abi[1]
    kernel.abi[1] = (dtype, (33, *dims[1:]))
    with pytest.raises(BytecodeError, match="other argument types"):
        load(encode(program))


def test_a_form_the_builder_cannot_take_leaves_each_group_its_own_kernel(monkeypatch, rng):
    """Were a shared form beyond the kernel builder, each group is built at its own sizes
    (not left to the host's reference semantics)."""
    from nimble.lowering.kernels.kernel_builder import KernelBuilder, NoLoopLowering

    build = KernelBuilder.build

    def refuse_forms(self):
        if self.group.parent is None:  # (a form: detached, made by shared_forms)
            raise NoLoopLowering("no lowering for this form")
        return build(self)

    monkeypatch.setattr(KernelBuilder, "build", refuse_forms)
    monkeypatch.setenv("NIMBLE_CACHE_DIR", "")  # (not the program the other tests cached)
    exe = compile(MODEL, threads=2)
    assert not exe.fallbacks and len(exe.program.kernels) == 2 * len(WIDTHS)
    args = _inputs(3, rng)
    for got, want in zip(exe.run(*args), run_mlir(MODEL, *args), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
