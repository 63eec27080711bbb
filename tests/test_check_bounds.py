"""`NIMBLE_CHECK_BOUNDS=1`: kernels compiled with a check per access (runtime/bounds.py).
An access out of bounds is an error naming the kernel and the buffer, made after the
launch, and nothing is read or written outside the buffer; in-bounds kernels compute
what unchecked ones do (the examples, at odd sizes)."""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects import vector

import nimble
from nimble.dialects import arith, loop
from nimble.compile import compile_kernels
from nimble.lowering.llvm.loops_to_llvm import lower_kernels
from nimble.runtime import bounds
from nimble.run_cli import build_inputs
from nimble.runtime.kernels import LaunchError
from nimble.runtime.llvm_jit import object_code
from nimble.reference import InterpreterError

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

KERNELS = """
loop.kernel @ahead(%a: memref<?xf32>, %out: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c0 : memref<?xf32>
  loop.foreach %i = %c0 to %n step %c1 {
    %j = arith.addi %i, %c1 : index
    %x = memref.load %a[%j] : memref<?xf32>
    memref.store %x, %out[%i] : memref<?xf32>
    loop.yield
  }
  loop.return
}

loop.kernel @behind(%a: memref<?xf32>, %out: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c0 : memref<?xf32>
  loop.foreach %i = %c0 to %n step %c1 {
    %x = memref.load %a[%i] : memref<?xf32>
    %j = arith.subi %i, %c1 : index
    memref.store %x, %out[%j] : memref<?xf32>
    loop.yield
  }
  loop.return
}

loop.kernel @rows(%a: memref<?x16xf32>, %out: memref<?x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c0 : memref<?x16xf32>
  loop.foreach %i = %c0 to %n step %c1 {
    %j = arith.addi %i, %c1 : index
    %v = vector.load %a[%i, %c1] : memref<?x16xf32>, vector<16xf32>
    vector.store %v, %out[%i, %c0] : memref<?x16xf32>, vector<16xf32>
    loop.yield
  }
  loop.return
}
"""


@pytest.fixture
def checked(monkeypatch):
    monkeypatch.setenv("NIMBLE_CHECK_BOUNDS", "1")
    bounds.take()
    yield
    bounds.take()


@pytest.mark.parametrize("n", [1, 5, 17])
def test_a_read_past_the_end_names_the_kernel_and_the_buffer(checked, n):
    ahead = compile_kernels(KERNELS)["ahead"]
    out = np.full(n, -1.0, np.float32)
    message = r"kernel @ahead indexed its argument 0 \(memref<\?xf32>\) out of bounds"
    with pytest.raises(LaunchError, match=message):
        ahead(np.arange(n, dtype=np.float32), out)
    np.testing.assert_array_equal(out[:-1], np.arange(1, n, dtype=np.float32))  # (the rest ran)


def test_a_negative_index_and_a_store_are_caught(checked):
    behind = compile_kernels(KERNELS)["behind"]
    out = np.zeros(4, np.float32)
    with pytest.raises(LaunchError, match=r"its argument 1 \(memref<\?xf32>\)"):
        behind(np.arange(4, dtype=np.float32), out)
    np.testing.assert_array_equal(out, [1, 2, 3, 0])


def test_a_vector_whose_last_lane_is_out_is_caught(checked):
    rows = compile_kernels(KERNELS)["rows"]
    with pytest.raises(LaunchError, match="argument 0"):
        rows(np.zeros((3, 16), np.float32), np.zeros((3, 16), np.float32))


def test_in_bounds_kernels_report_nothing_and_unchecked_ones_hold_no_check(checked, monkeypatch):
    kernels = compile_kernels(KERNELS.replace("%j = arith.addi %i, %c1 : index\n    %x = memref.load %a[%j]",
                                              "%x = memref.load %a[%i]"))
    out = np.zeros(6, np.float32)
    kernels["ahead"](np.arange(6, dtype=np.float32), out)
    np.testing.assert_array_equal(out, np.arange(6))
    module = nimble.parse(KERNELS)
    assert bounds.is_checked(object_code(lower_kernels(module, check_bounds=True)))
    assert not bounds.is_checked(object_code(lower_kernels(module, check_bounds=False)))


def _shift_vector_reads(kernel) -> None:
    """Every whole-vector read of the kernel one element further along its last axis (a
    bug to catch); the remainder's reads (scalar or masked, by the CPU's vector width)
    stay."""
    for op in list(kernel.walk()):
        if isinstance(op, vector.LoadOp):
            last = op.operands[-1]
            one = arith.ConstantOp.from_int_and_width(1, last.type)
            shifted = arith.AddiOp(last, one.result)
            op.parent_block().insert_ops_before([one, shifted], op)
            op.operands = [*op.operands[:-1], shifted.result]


def test_the_vm_reports_which_kernel_and_input_went_out_of_bounds(checked, tmp_path, monkeypatch):
    source = tmp_path / "relu.nb"
    source.write_text("def @main(%x: f32[n]) -> f32[n] {\n  relu(%x)\n}\n")
    exe = nimble.compile(str(source), jit="lazy")
    assert exe.code.checked
    kernel = next(k for k in loop.kernels_of(exe.module) if k.sym_name.data in exe.kernel_names)
    _shift_vector_reads(exe.code._pending[kernel.sym_name.data])  # (compiled at its first launch, from this IR)
    message = rf"kernel @{kernel.sym_name.data}: indexed its input 0 \(tensor<\?xf32.*\) out of bounds"
    with pytest.raises(InterpreterError, match=message):
        exe(np.ones(32, np.float32))  # (the last vector, [17, 33) or [25, 33), reads past the end)
    np.testing.assert_array_equal(exe(np.ones(31, np.float32)), np.ones(31))  # (its last elements are no whole vector)
    exe.save(tmp_path / "relu.nbc")
    monkeypatch.delenv("NIMBLE_CHECK_BOUNDS")  # (the object code says it is checked)
    loaded = nimble.load(tmp_path / "relu.nbc")
    assert loaded.code.checked
    with pytest.raises(InterpreterError, match=message):
        loaded(np.ones(32, np.float32))


@pytest.mark.parametrize("example", ["lstm", "gru", "bert", "detection", "resnet18"])
def test_the_examples_run_checked_at_odd_sizes(checked, example):
    """Every access of every kernel the examples launch is in bounds, at sizes 1 and 7
    (ResNet-18 on a 13 x 11 image, the detection head on 1 x 5 and 7 x 5 maps): no
    error, and the reference interpreter's answers."""
    path = EXAMPLES / f"{example}.nb"
    exe = nimble.compile(str(path))
    assert exe.code.checked
    for n in (1, 7):
        dims = {"resnet18": [str(n), "image.2=13", "image.3=11"],
                "detection": [f"feat.2={n}", "feat.3=5", f"anchors.0={5 * n}"]}.get(example, [str(n)])
        args = build_inputs(exe, exe.entry, argparse.Namespace(input=[], dim=dims, seed=0, file=str(path)))
        for got, want in zip(exe.run(*args), nimble.interpret(nimble.parse(path), *args)):
            scale = 1 + float(np.max(np.abs(want), initial=0))  # (random weights: ResNet's reach 1e21)
            np.testing.assert_allclose(got, want, rtol=2e-4, atol=2e-4 * scale)
