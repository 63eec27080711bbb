"""The VM and its bytecode: every instruction's meaning on hand-written modules, the
reader/writer round trip, validation errors, and a fuzz of corrupted modules."""

from __future__ import annotations

import functools
import hashlib
import struct
import sys

import numpy as np
import pytest

import nimble
from nimble.api import parse
from nimble.dialects.graph.adt import AdtValue
from nimble.dialects.vm import Opcode
from nimble.lowering.vm.vm_program import program_from_module
from nimble.reference import InterpreterError
from nimble.runtime.bytecode import HEADER, BytecodeError, decode, encode
from nimble.runtime.vm import VirtualMachine, VMError, private_tensor_storages

ADT = """
graph.adt @Tree {
  graph.constructor @Leaf(index)
  graph.constructor @Node(!graph.adt<@Tree>, !graph.adt<@Tree>)
}
"""


def machine(text: str) -> VirtualMachine:
    program = program_from_module(parse(text))
    return VirtualMachine(decode(encode(program)), {})


def run(text: str, *args, entry: str = "main"):
    return machine(text).invoke(entry, list(args))


@pytest.mark.parametrize("op,a,b,expected", [
    ("vm.add", 7, -3, 4), ("vm.sub", 7, 10, -3), ("vm.mul", 6, -7, -42), ("vm.div", -7, 2, -3),
    ("vm.floordiv", -7, 2, -4), ("vm.ceildiv", 7, 2, 4), ("vm.rem", -7, 2, -1), ("vm.max", 3, 9, 9),
    ("vm.min", 3, 9, 3), ("vm.and", 6, 3, 2), ("vm.or", 6, 3, 7), ("vm.xor", 6, 3, 5),
])
def test_index_arithmetic(op, a, b, expected):
    text = f"vm.function @main(r0, r1) regs 3 {{\n  {op} r2, r0, r1\n  vm.ret (r2)\n}}"
    assert run(text, a, b) == [expected]


@pytest.mark.parametrize("predicate,a,b", [(p, a, b) for p in range(6) for a, b in [(1, 2), (2, 2), (3, 2)]])
def test_cmp_select_not(predicate, a, b):
    text = f"""vm.function @main(r0, r1) regs 6 {{
  vm.cmp r2, {predicate}, r0, r1
  vm.select r3, r2, r0, r1
  vm.not r4, r2
  vm.ret (r2, r3, r4)
}}"""
    expected = [a == b, a != b, a < b, a <= b, a > b, a >= b][predicate]
    assert run(text, a, b) == [expected, a if expected else b, not expected]


def test_control_flow_if_goto_and_recursion():
    # sum(n) = n + sum(n - 1), sum(0) = 0: invoke, if, goto, move, load_consti, ret.
    text = """vm.function @main(r0) regs 7 {
  vm.load_consti r1, 0
  vm.cmp r2, 0, r0, r1
  vm.if r2, L3, L5
  vm.move r6, r1
  vm.goto L9
  vm.load_consti r3, 1
  vm.sub r4, r0, r3
  vm.invoke (r5), @main, (r4)
  vm.add r6, r0, r5
  vm.ret (r6)
}"""
    assert run(text, 10) == [55]
    # Calls are frames on a list, not Python frames: as deep as Python's own limit
    # allows many times over, in a process whose recursion limit is the default.
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)
    try:
        assert run(text, 20_000) == [20_000 * 20_001 // 2]
        with pytest.raises(VMError, match="nested more than 100000 deep"):
            run(text, 200_000)
        assert sys.getrecursionlimit() == 1000
    finally:
        sys.setrecursionlimit(limit)


def test_constants_start_in_the_register_file_and_jumps_to_them_land_after():
    """A `load_consti` whose register nothing else writes is no step: its value is in the
    register file a call starts from, and a jump to it lands on the next step. One whose
    register is written again stays a step; errors name the instruction's own position."""
    text = """vm.function @main(r0) regs 6 {
  vm.load_consti r1, 0
  vm.load_consti r2, 3
  vm.cmp r3, 2, r1, r0
  vm.if r3, L4, L7
  vm.load_consti r4, 3
  vm.add r1, r1, r4
  vm.goto L2
  vm.floordiv r5, r1, r0
  vm.ret (r1, r5, r2)
}"""
    vm = machine(text)
    assert len(vm.entries[0][0]) == 7 and vm.origins[0] == [0, 2, 3, 5, 6, 7, 8]
    assert vm.entries[0][1][2] == vm.entries[0][1][4] == 3 and vm.entries[0][1][1] is None
    assert vm.invoke("main", [10]) == [12, 1, 3] and vm.invoke("main", [3]) == [3, 1, 3]
    with pytest.raises(VMError, match=r"instruction 7 \(floordiv\): ZeroDivisionError"):
        vm.invoke("main", [0])


def test_adt_tuple_and_closure():
    text = ADT + """vm.function @size(r0) regs 8 {
  vm.get_tag r1, r0
  vm.load_consti r2, 0
  vm.cmp r3, 0, r1, r2
  vm.if r3, L4, L6
  vm.get_field r4, r0, 0
  vm.ret (r4)
  vm.get_field r4, r0, 0
  vm.get_field r5, r0, 1
  vm.invoke (r6), @size, (r4)
  vm.invoke (r7), @size, (r5)
  vm.add r4, r6, r7
  vm.ret (r4)
}
vm.function @add3(r0, r1) regs 3 {
  vm.add r2, r0, r1
  vm.ret (r2)
}
vm.function @main(r0) regs 9 {
  vm.alloc_adt r1, @Leaf, (r0)
  vm.alloc_adt r2, @Node, (r1, r1)
  vm.invoke (r3), @size, (r2)
  vm.alloc_tuple r4, (r3, r0)
  vm.get_field r5, r4, 1
  vm.alloc_closure r6, @add3, (r5)
  vm.invoke_closure (r7), r6, (r3)
  vm.ret (r2, r7)
}"""
    tree, total = run(text, 4)
    assert tree == AdtValue("Node", (AdtValue("Leaf", (4,)), AdtValue("Leaf", (4,))))
    assert total == 4 + 8
    vm = machine(text)
    assert vm.invoke("size", [AdtValue("Node", (AdtValue("Leaf", (1,)), AdtValue("Leaf", (2,))))]) == [3]
    with pytest.raises(VMError, match="not a value of a known constructor"):
        vm.invoke("size", [AdtValue("Branch", ())])


def test_tensors_storage_shapes_and_constants():
    text = """vm.constant @c0 {
  %0 = graph.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
}
vm.function @main(r0) regs 16 {
  vm.load_const r1, @c0
  vm.shape_of r2, r1
  vm.dim r3, r1, 1
  vm.load_consti r4, 64
  vm.alloc_storage r5, r4, 64, cpu
  vm.alloc_tensor r6, r5, 0, f32, [2, 2]
  vm.load_consti r7, 32
  vm.alloc_tensor_reg r8, r5, r7, f32, (r3, r3)
  vm.make_shape r9, (r3, r3)
  vm.reshape_tensor r10, r1, r9
  vm.load_consti r11, 4
  vm.make_shape r12, (r11)
  vm.reshape_tensor r13, r1, r12
  vm.device_copy r14, r13, cpu, cpu
  vm.kill r5
  vm.ret (r2, r3, r6, r8, r10, r14)
}"""
    shape, dim, t, t2, same, flat = run(text, 0)
    assert shape == (2, 2) and dim == 2 and t.shape == (2, 2) and t.dtype == np.float32 and t2.shape == (2, 2)
    np.testing.assert_array_equal(flat, [1, 2, 3, 4])
    np.testing.assert_array_equal(same, [[1, 2], [3, 4]])
    assert t.__array_interface__["data"][0] % 64 == 0


def test_tensor_outside_its_storage_is_an_error():
    text = """vm.function @main(r0) regs 4 {
  vm.alloc_storage r1, r0, 64, cpu
  vm.alloc_tensor r2, r1, 8, f32, [4]
  vm.ret (r2)
}"""
    assert run(text, 24)[0].shape == (4,)
    with pytest.raises(VMError, match="does not fit"):
        run(text, 16)


def test_index_division_by_zero_is_an_error():
    with pytest.raises(VMError, match=r"instruction 0 \(floordiv\): ZeroDivisionError"):
        run("vm.function @main(r0, r1) regs 3 {\n  vm.floordiv r2, r0, r1\n  vm.ret (r2)\n}", 7, 0)


def test_fatal_and_wrong_register_values():
    with pytest.raises(VMError, match=r"boom \(3 vs 4\)"):
        run('vm.function @main(r0, r1) regs 2 {\n  vm.fatal "boom", (r0, r1)\n}', 3, 4)
    with pytest.raises(VMError, match=r"instruction 0 \(add\): TypeError"):
        run("vm.function @main(r0) regs 3 {\n  vm.add r1, r0, r0\n  vm.ret (r1)\n}", AdtValue("Leaf", ()))
    with pytest.raises(VMError, match="expected an integer register"):
        run("vm.function @main(r0) regs 3 {\n  vm.alloc_storage r1, r0, 64, cpu\n  vm.ret (r1)\n}", np.zeros(2))


def test_kernel_launch_through_the_vm_checks_shapes(rng):
    text = """func.func @main(%a: tensor<?x4xf32>, %b: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %c = graph.add %a, %b : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  func.return %c : tensor<?x4xf32>
}"""
    exe = nimble.compile(text)
    a = rng.standard_normal((3, 4)).astype(np.float32)
    np.testing.assert_array_equal(exe(a, a), a + a)
    (entry,) = exe.vm.kernels
    with pytest.raises(Exception, match="output #0 must be a writable C-contiguous float32"):
        entry.launch([a, a], [np.empty((2, 4), np.float32)], 1, None, None)
    with pytest.raises(Exception, match="cannot be broadcast"):
        entry.launch([a, a[:2]], [np.empty((3, 4), np.float32)], 1, None, None)


def test_launches_repeating_a_checked_launch_are_checked_in_machine_code(rng):
    """After a checked launch a kernel keeps its spec for `launcher.LAUNCH`: launches on
    arrays of the same shapes, dtypes and strides run through it, anything else falls
    back to the Python checks (their errors, or a new spec)."""
    from nimble.runtime.launcher import LAUNCH

    if LAUNCH is None:
        pytest.skip("this Python's object layouts differ from what the launcher reads")
    text = """func.func @main(%a: tensor<?x4xf32>, %b: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %c = graph.mul %a, %b : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  func.return %c : tensor<?x4xf32>
}"""
    exe = nimble.compile(text)  # kept: its machine code is the kernel's
    (entry,) = exe.vm.kernels
    a, b = (rng.standard_normal((3, 4)).astype(np.float32) for _ in range(2))
    out = np.empty((3, 4), np.float32)
    entry.launch([a, b], [out], 1, None, None)
    spec = entry._fast[0]
    assert LAUNCH(entry.address, spec.address, [b, b], [out]) == 0  # the fast path itself
    np.testing.assert_array_equal(out, b * b)
    frozen = np.empty((3, 4), np.float32)
    frozen.flags.writeable = False
    wide = rng.standard_normal((3, 8)).astype(np.float32)
    for inputs, outputs in [([a, b.astype(np.float64)], [out]), ([a, b[:2]], [out]), ([a, b], [frozen]),
                            ([a, wide[:, ::2]], [out]), ([a], [out]), ([a, b, b], [out]), ([a, b], []),
                            ([a, np.asfortranarray(b)], [out]), ([a, b.view(np.matrix)], [out])]:
        assert LAUNCH(entry.address, spec.address, inputs, outputs) == 1
    with pytest.raises(Exception, match="input #1"):
        entry.launch([a, b.astype(np.float64)], [out], 1, None, None)
    with pytest.raises(Exception, match="outputs must be writable"):
        entry.launch([a, b], [frozen], 1, None, None)
    entry.launch([a, wide[:, ::2]], [out], 1, None, None)  # strided: copied, then launched
    np.testing.assert_array_equal(out, a * wide[:, ::2])
    long = rng.standard_normal((7, 4)).astype(np.float32)
    entry.launch([long, long], [np.empty((7, 4), np.float32)], 1, None, None)
    assert entry._fast[0] is not spec  # the latest checked launch's shapes
    entry.launch([a, b], [out], 1, None, None)
    np.testing.assert_array_equal(out, a * b)


def test_launches_with_a_shape_argument_take_the_fast_path_with_equal_values(rng, monkeypatch):
    """A kernel taking a shape (a dynamic reshape's target, BERT's head split) keeps the
    shape's value with its launch spec: a launch with an equal tuple runs in machine
    code, one with another value takes the checked path."""
    from nimble.runtime import kernels
    from nimble.runtime.launcher import LAUNCH

    if LAUNCH is None:
        pytest.skip("this Python's object layouts differ from what the launcher reads")
    text = """func.func @main(%x: tensor<?x256xf32>, %t: !dynshape.shape<3>) -> tensor<4x?x64xf32> {
  %y = graph.dynamic_reshape %x, %t : (tensor<?x256xf32>, !dynshape.shape<3>) -> tensor<?x4x64xf32>
  %z = graph.transpose %y [1, 0, 2] : tensor<?x4x64xf32> -> tensor<4x?x64xf32>
  func.return %z : tensor<4x?x64xf32>
}"""
    exe = nimble.compile(text)
    (entry,) = exe.vm.kernels
    assert entry.kinds == [kernels.Arg.TENSOR, kernels.Arg.SHAPE]
    x, x2 = (rng.standard_normal((7, 256)).astype(np.float32) for _ in range(2))
    out = np.empty((4, 7, 64), np.float32)
    entry.launch([x, (7, 4, 64)], [out], 1, None, None)
    assert entry._fast[4] == ((1, (7, 4, 64)),)
    checked = []
    real_key = kernels._key
    monkeypatch.setattr(kernels, "_key", lambda *a: checked.append(a) or real_key(*a))
    entry.launch([x2, (7, 4, 64)], [out], 1, None, None)
    assert not checked  # machine code
    np.testing.assert_array_equal(out, x2.reshape(7, 4, 64).transpose(1, 0, 2))
    with pytest.raises(Exception, match=r"target dim 1 is not the result type's \(2 vs 4\)"):
        entry.launch([x, (7, 2, 128)], [out], 1, None, None)
    assert checked  # the Python checks
    short = np.empty((4, 5, 64), np.float32)
    entry.launch([x[:5], (5, 4, 64)], [short], 1, None, None)
    np.testing.assert_array_equal(short, x[:5].reshape(5, 4, 64).transpose(1, 0, 2))
    assert entry._fast[4] == ((1, (5, 4, 64)),)


def test_a_storage_only_its_tensor_uses_is_a_private_array():
    text = """vm.function @main(r0) regs 6 {
  vm.alloc_storage r1, r0, 64, cpu
  vm.alloc_tensor r2, r1, 0, f32, [4]
  vm.alloc_storage r3, r0, 64, cpu
  vm.alloc_tensor r4, r3, 0, f32, [2]
  vm.alloc_tensor r5, r3, 8, f32, [2]
  vm.ret (r2, r4, r5)
}"""
    vm_ = machine(text)
    code = vm_.program.functions[0].code
    assert private_tensor_storages(code, Opcode.ALLOC_STORAGE, Opcode.ALLOC_TENSOR) == [0]
    t, first, second = vm_.invoke("main", [16])
    assert t.shape == (4,) and t.dtype == np.float32 and t.base is None and first.base is second.base
    with pytest.raises(VMError, match="does not fit"):
        vm_.invoke("main", [8])
    jumped_into = """vm.function @main(r0) regs 4 {
  vm.alloc_storage r1, r0, 64, cpu
  vm.alloc_tensor r2, r1, 0, f32, [4]
  vm.goto L1
}"""
    assert private_tensor_storages(machine(jumped_into).program.functions[0].code, Opcode.ALLOC_STORAGE,
                                   Opcode.ALLOC_TENSOR) == []


def test_a_storage_only_its_dynamic_tensor_uses_is_a_private_array():
    """The same for a tensor whose dims are registers, at an offset register holding 0
    from the call's start: small, a fresh array; large (past `PRIVATE_MAX_BYTES`), a
    view of a pool storage; too large for its storage, or with a negative dim, the
    error `alloc_tensor_reg` reports. An offset register that is written again is no
    known 0: both instructions stay."""
    from nimble.runtime.vm_steps import PRIVATE_MAX_BYTES

    text = """vm.function @main(r0, r1) regs 5 {
  vm.load_consti r3, 0
  vm.alloc_storage r2, r1, 64, cpu
  vm.alloc_tensor_reg r4, r2, r3, f32, (r0)
  vm.ret (r4)
}"""
    vm_ = machine(text)
    code = vm_.program.functions[0].code
    ops = (Opcode.ALLOC_STORAGE, Opcode.ALLOC_TENSOR, Opcode.ALLOC_TENSOR_REG)
    assert private_tensor_storages(code, *ops, zeros={3}) == [1] and private_tensor_storages(code, *ops) == []
    assert len(vm_.entries[0][0]) == 3  # the constant is no step; the pair is one step, then ret
    (small,) = vm_.invoke("main", [7, 28])
    assert small.shape == (7,) and small.dtype == np.float32 and small.base is None
    n = PRIVATE_MAX_BYTES // 4 + 1
    (large,) = vm_.invoke("main", [n, 4 * n])
    assert large.shape == (n,) and large.base is not None
    with pytest.raises(VMError, match="does not fit"):
        vm_.invoke("main", [8, 28])
    with pytest.raises(VMError, match="negative dim"):
        vm_.invoke("main", [-1, 28])
    rewritten = text.replace("  vm.ret (r4)", "  vm.load_consti r3, 1\n  vm.ret (r4)")
    assert len(machine(rewritten).entries[0][0]) == 5


DENSE = """func.func @main(%a: tensor<?x64xf32>, %w: tensor<96x64xf32>) -> tensor<?x96xf32> {
  %c = graph.dense %a, %w : (tensor<?x64xf32>, tensor<96x64xf32>) -> tensor<?x96xf32>
  func.return %c : tensor<?x96xf32>
}"""


def _launch_in_child(exe, a, w, expected, queue):
    queue.put(bool(np.allclose(exe(a, w), expected, rtol=1e-4, atol=1e-4)))


@pytest.mark.parametrize("threads", [2, 3])
def test_chunks_run_on_native_workers_also_in_a_forked_child(threads, rng, monkeypatch):
    """Chunks 1.. of a split launch run on the process's native workers (3 chunks on 2
    cores too); a forked child, which has none of its parent's threads, makes its own."""
    import multiprocessing

    from nimble.runtime import workers
    from nimble.runtime.kernels import KernelEntry

    if workers.workers(threads - 1) is None:
        pytest.skip("native workers need Linux futexes")
    monkeypatch.setattr(KernelEntry, "min_work", 0)
    exe = nimble.compile(DENSE, threads=threads)
    w = rng.standard_normal((96, 64)).astype(np.float32)
    for rows in (1, 7, 100):
        a = rng.standard_normal((rows, 64)).astype(np.float32)
        np.testing.assert_allclose(exe(a, w), a @ w.T, rtol=1e-4, atol=1e-4)
    assert {p.chunks for k in exe.vm.kernels for p in k._plans.values()} == {threads}
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_launch_in_child, args=(exe, a, w, a @ w.T, queue))
    child.start()
    assert queue.get(timeout=60) is True
    child.join(60)
    assert child.exitcode == 0


def test_split_launches_repeating_a_checked_launch_split_in_machine_code(rng, monkeypatch):
    """After a checked split launch, launches of the same shapes split in machine code
    (`workers.nimble_split`: no Python on the way, counted by the workers all the same);
    other shapes take the checked path again; launches from two Python threads at once
    take turns on the workers (their lock word) and each gets its own results."""
    import threading

    from nimble.runtime import workers
    from nimble.runtime.kernels import KernelEntry
    from nimble.runtime.launcher import LAUNCH

    if LAUNCH is None or workers.workers(1) is None:
        pytest.skip("needs the launch fast path and native workers")
    monkeypatch.setattr(KernelEntry, "min_work", 0)
    exe = nimble.compile(DENSE, threads=2)
    (entry,) = exe.vm.kernels
    w = rng.standard_normal((96, 64)).astype(np.float32)
    a = rng.standard_normal((37, 64)).astype(np.float32)
    np.testing.assert_allclose(exe(a, w), a @ w.T, rtol=1e-4, atol=1e-4)  # checked, split in 2
    native = workers.current()
    assert entry._fast[3] is native
    launches = native.launches

    def no_python_split(*args):
        raise AssertionError("split from Python")

    monkeypatch.setattr(workers.Workers, "run", no_python_split)
    for _ in range(20):
        b = rng.standard_normal((37, 64)).astype(np.float32)
        np.testing.assert_allclose(exe(b, w), b @ w.T, rtol=1e-4, atol=1e-4)
    assert native.launches == launches + 20
    with pytest.raises(Exception, match="split from Python"):
        exe(rng.standard_normal((40, 64)).astype(np.float32), w)  # new shapes: the checked path
    monkeypatch.undo()
    monkeypatch.setattr(KernelEntry, "min_work", 0)
    inputs = [rng.standard_normal((37, 64)).astype(np.float32) for _ in range(2)]
    outputs = [np.empty((37, 96), np.float32) for _ in range(2)]
    entry.launch([inputs[0], w], [outputs[0]], 2, exe.vm.pool, None)  # this thread count's spec again
    errors = []

    def hammer(k: int) -> None:
        try:
            for _ in range(200):
                entry.launch([inputs[k], w], [outputs[k]], 2, exe.vm.pool, None)
                np.testing.assert_allclose(outputs[k], inputs[k] @ w.T, rtol=1e-4, atol=1e-4)
        except AssertionError as e:
            errors.append(e)

    threads = [threading.Thread(target=hammer, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


@pytest.mark.parametrize("threads", [2, 3])
def test_a_chunk_runs_on_whichever_side_claims_it(threads, rng, monkeypatch):
    """A job posted to a worker runs once, on the worker or on the launching thread once
    its own chunk is done, whichever claims it first: launches right after each other
    (workers spinning), after the workers went to sleep (the launching thread usually
    takes the job first), and interleaved, all match numpy."""
    import time

    from nimble.runtime import workers
    from nimble.runtime.kernels import KernelEntry

    if workers.workers(threads - 1) is None:
        pytest.skip("native workers need Linux futexes")
    monkeypatch.setattr(KernelEntry, "min_work", 0)
    exe = nimble.compile(DENSE, threads=threads)
    w = rng.standard_normal((96, 64)).astype(np.float32)
    a = rng.standard_normal((37, 64)).astype(np.float32)
    expected = a @ w.T
    for i in range(120):
        if i % 3 == 0:
            time.sleep(0.002)  # past the workers' spinning: they sleep on their futex
        np.testing.assert_allclose(exe(a, w), expected, rtol=1e-4, atol=1e-4)
    assert {p.chunks for k in exe.vm.kernels for p in k._plans.values()} == {threads}


def test_workers_are_held_awake_while_a_model_runs(rng, monkeypatch):
    """While a run holds the workers, a worker a split launch woke spins (does not park
    again) until the hold ends; then it parks as before (state words 24: asleep, 28:
    holds). Holding alone wakes nobody (a run that never splits makes no system call)."""
    import time

    from nimble.runtime import workers
    from nimble.runtime.kernels import KernelEntry

    native = workers.workers(1)
    if native is None:
        pytest.skip("native workers need Linux futexes")
    monkeypatch.setattr(KernelEntry, "min_work", 0)
    # Whatever else runs on the machine (the tests run on every core): a loaded machine
    # runs its launches whole (`Workers.may_split`), and this test is about the holds.
    monkeypatch.setattr(native, "others_running", lambda: 0)
    exe = nimble.compile(DENSE, threads=2)
    w = rng.standard_normal((96, 64)).astype(np.float32)

    def settles(word: int, value: int) -> bool:
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            if native.states[0, word] == value:
                return True
            time.sleep(0.001)
        return False

    assert settles(24, 1)  # idle: parked on its futex
    native.hold(1)
    try:
        assert native.states[0, 28] == 1
        time.sleep(0.01)
        assert native.states[0, 24] == 1  # still parked: holding wakes nobody
        # Until the worker takes a job: the launcher may take them all when the worker
        # wakes late (the other core busy: tests run on every core), so the launches
        # are long (20,000 rows) and repeated for up to 20 s.
        big = rng.standard_normal((20000, 64)).astype(np.float32)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            np.testing.assert_allclose(exe(big, w), big @ w.T, rtol=1e-4, atol=1e-4)
            if native.states[0, 24] == 0:
                break
        assert settles(24, 0)
        time.sleep(0.05)  # far past the spins after which an idle worker parks
        assert native.states[0, 24] == 0
    finally:
        native.hold(-1)
    assert native.states[0, 28] == 0
    assert settles(24, 1)


def test_a_run_after_one_that_split_wakes_the_workers_first(rng, monkeypatch):
    """`Workers.hold(1, wake=True)` takes a parked worker off its futex (state word 24
    back to 0); a run wakes the workers at its start when the last run split a launch,
    and not when it did not (a model at sizes that never split makes no system call)."""
    import time

    from nimble.runtime import workers
    from nimble.runtime.kernels import KernelEntry

    native = workers.workers(1)
    if native is None:
        pytest.skip("native workers need Linux futexes")
    monkeypatch.setattr(native, "others_running", lambda: 0)  # as in the test above

    def settles(word: int, value: int) -> bool:
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            if native.states[0, word] == value:
                return True
            time.sleep(0.001)
        return False

    assert settles(24, 1)
    native.hold(1)  # held alone, a parked worker stays parked
    try:
        time.sleep(0.01)
        assert native.states[0, 24] == 1
    finally:
        native.hold(-1)
    native.hold(1, wake=True)  # as a run does: held, a woken worker spins until the hold ends
    try:
        assert settles(24, 0)
    finally:
        native.hold(-1)
    assert settles(24, 1)
    exe = nimble.compile(DENSE, threads=2)
    exe.vm.replays.enabled = False  # the VM's own runs (a replay keeps the chunks it recorded)
    w = rng.standard_normal((96, 64)).astype(np.float32)
    a = rng.standard_normal((37, 64)).astype(np.float32)
    woken = []
    hold = workers.Workers.hold
    monkeypatch.setattr(workers.Workers, "hold",
                        lambda self, delta, wake=False: (woken.extend([1] if wake else []), hold(self, delta, wake)))
    monkeypatch.setattr(KernelEntry, "min_work", 1 << 40)  # nothing splits
    exe(a, w)
    exe(a, w)
    assert not exe.vm.split_last_run and not woken
    monkeypatch.setattr(KernelEntry, "min_work", 0)
    for k in exe.vm.kernels:
        k._plans.clear()
        k._fast = None
    np.testing.assert_allclose(exe(a, w), a @ w.T, rtol=1e-4, atol=1e-4)
    assert exe.vm.split_last_run and not woken  # the first run that splits wakes nobody first
    np.testing.assert_allclose(exe(a, w), a @ w.T, rtol=1e-4, atol=1e-4)
    assert woken == [1]


# -- bytecode --------------------------------------------------------------------------

LSTM = "examples/lstm.nb"
TREE_LSTM = "examples/tree_lstm.nb"


@pytest.fixture(scope="module")
def lstm_bytes():
    return nimble.compile(LSTM).to_bytes()


def test_round_trip_is_identical(lstm_bytes):
    program = decode(lstm_bytes)
    assert encode(program) == lstm_bytes
    assert [f.name for f in program.functions] == ["cell", "main"]


def _rechecksum(data: bytearray) -> bytes:
    """`data` with its digest made to match (as a hostile writer would)."""
    magic, version, sections, producer, _ = HEADER.unpack_from(data)
    HEADER.pack_into(data, 0, magic, version, sections, producer, hashlib.sha256(bytes(data[HEADER.size:])).digest())
    return bytes(data)


@pytest.mark.parametrize("mutate,message", [
    (lambda d: d[:10], "shorter than the header"),
    (lambda d: b"NOTNIMBL" + d[8:], "bad magic"),
    (lambda d: d[:8] + struct.pack("<I", 99) + d[12:], "format version 99"),
    (lambda d: d[:-1], "digest does not match"),
    (lambda d: d[:200] + bytes([d[200] ^ 1]) + d[201:], "digest does not match"),
    (lambda d: _rechecksum(bytearray(d[:HEADER.size + 4] + b"\1" + d[HEADER.size + 5:])), "reserved field 1"),
])
def test_malformed_headers_are_rejected(lstm_bytes, mutate, message):
    with pytest.raises(BytecodeError, match=message):
        nimble.load(mutate(lstm_bytes))


@pytest.fixture(scope="module")
def tree_bytes():
    """A module with branches and calls (the LSTM's loop is one kernel)."""
    return nimble.compile(TREE_LSTM).to_bytes()


def test_bad_indices_are_rejected_by_validation(lstm_bytes, tree_bytes):
    program = decode(lstm_bytes)
    main = program.functions[program.function_index("main")]
    opcode, values = main.code[0]
    main.code[0] = (opcode, (10_000,) + values[1:])
    with pytest.raises(BytecodeError, match="register r10000 out of range"):
        decode(encode(program))
    program = decode(tree_bytes)
    node = program.functions[program.function_index("node")]
    goto = next(i for i, (op, _) in enumerate(node.code) if op == Opcode.GOTO)
    node.code[goto] = (Opcode.GOTO, (len(node.code) + 3,))
    with pytest.raises(BytecodeError, match="jump target .* outside the function"):
        decode(encode(program))
    program = decode(tree_bytes)
    main = program.functions[program.function_index("main")]
    call = next(i for i, (op, _) in enumerate(main.code) if op == Opcode.INVOKE)
    dsts, callee, args = main.code[call][1]
    main.code[call] = (Opcode.INVOKE, (dsts, callee, args[:-1]))
    with pytest.raises(BytecodeError, match="takes 7 arguments, got 6"):
        decode(encode(program))
    program = decode(lstm_bytes)
    past = program.kernels[0].code = len(program.object_code)  # one past the file's objects
    with pytest.raises(BytecodeError, match=f"kernel '{program.kernels[0].name}': object {past} is not in the kernels"):
        decode(encode(program))
    program = decode(lstm_bytes)
    program.object_code.append(b"not ELF")
    program.kernels[0].code = past
    with pytest.raises(BytecodeError, match=f"object {past} of the kernels section does not hold ELF object code"):
        nimble.load(encode(program))


def test_a_kernel_name_missing_from_its_object_code_is_rejected_at_load(lstm_bytes):
    """A renamed kernel (one flipped bit in the strings: `main_rnn_0` -> `mein_rnn_0`) has
    no entry in the object code; LLVM gives address 0 for it, which a launch would call."""
    program = decode(lstm_bytes)
    name = program.kernels[0].name = "renamed_" + program.kernels[0].name
    with pytest.raises(BytecodeError, match=f"no kernel named '{name}' in the object code"):
        nimble.load(encode(program))


def test_fuzzed_modules_fail_cleanly(lstm_bytes):
    """Thousands of mutations (bit flips, truncations, random bytes; with the digest
    fixed up so that the structural checks are reached): loading either succeeds or
    raises BytecodeError; a loaded module runs to a result or a VMError/InterpreterError."""
    rng = np.random.default_rng(1)
    data = lstm_bytes
    program = decode(data)
    code = [(data.index(blob), data.index(blob) + len(blob)) for blob in program.object_code]  # (one per kernel,
    # with the kernel cache on; one for all without)

    def in_code(start: int, end: int) -> bool:
        return any(start < code_end and end > code_start for code_start, code_end in code)
    outcomes = {"rejected": 0, "loaded": 0}
    args = [rng.standard_normal(s).astype(np.float32) for s in [(3, 2, 64), (2, 128), (2, 128), (512, 192), (512,)]]
    for trial in range(3000):
        mutated = bytearray(data)
        kind = trial % 3
        if kind == 0:
            for _ in range(rng.integers(1, 4)):
                at = int(rng.integers(HEADER.size, len(mutated)))
                if in_code(at, at + 1):
                    continue  # machine code: tests/test_untrusted_modules.py
                mutated[at] ^= 1 << int(rng.integers(0, 8))
        elif kind == 1:
            mutated = mutated[:int(rng.integers(0, len(mutated)))]
        else:
            at = int(rng.integers(HEADER.size, len(mutated)))
            n = int(rng.integers(1, 16))
            if in_code(at, at + n):
                continue
            mutated[at:at + n] = rng.integers(0, 256, min(n, len(mutated) - at), dtype=np.uint8).tobytes()
        if len(mutated) >= HEADER.size and trial % 2 == 0:
            mutated = bytearray(_rechecksum(mutated))
        try:
            decode(bytes(mutated))
            exe = nimble.load(bytes(mutated))
        except BytecodeError:
            outcomes["rejected"] += 1
            continue
        outcomes["loaded"] += 1
        exe.vm.max_steps = 20_000
        try:
            exe.run(*args)
        except (InterpreterError, VMError):
            pass
    assert outcomes["rejected"] > 1500, outcomes


def test_device_ops_lower_to_vm_and_run():
    """device.alloc_storage / alloc_tensor / copy / kill through lower-to-vm."""
    from xdsl.passes import PassPipeline

    from nimble.registry import all_passes, make_context

    text = """func.func @main(%n: index) -> tensor<?x3xf32> {
  %c0 = arith.constant 0 : index
  %c12 = arith.constant 12 : index
  %bytes = arith.muli %n, %c12 : index
  %s = device.alloc_storage %bytes align 64 on "cpu"
  %t = device.alloc_tensor %s[%c0] (%n) : tensor<?x3xf32>
  %u = device.copy %t from "cpu" to "cpu" : tensor<?x3xf32> -> tensor<?x3xf32>
  device.kill %s : !device.storage
  func.return %u : tensor<?x3xf32>
}"""
    module = parse(text)
    PassPipeline.parse_spec(all_passes(), "lower-to-vm").apply(make_context(), module)
    vm = VirtualMachine(program_from_module(module), {})
    (result,) = vm.invoke("main", [5])
    assert result.shape == (5, 3) and result.dtype == np.float32
    assert vm.storage.stats.allocations == 1


def test_manifest_alloc_turns_groups_into_launches():
    from nimble.compile import run_stages

    module = parse("""func.func @main(%a: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %b = graph.tanh %a : tensor<?x4xf32> -> tensor<?x4xf32>
  func.return %b : tensor<?x4xf32>
}""")
    run_stages(module, ["graph", "loops", "memory"])
    text = str(module)
    assert "device.launch @main_tanh_0(" in text and "device.alloc_storage" in text and "graph.fused (" not in text


def test_host_fallback_and_kernel_instructions(rng):
    """nms has no loop lowering: vm.invoke_host runs it (its compiled CPU implementation,
    `runtime.cpu_vision`: not a fallback to the reference); the gather after it is a
    kernel (vm.invoke_kernel) sized by nms's actual output."""
    text = """func.func @main(%boxes: tensor<?x4xf32>, %scores: tensor<?xf32>) -> tensor<?x4xf32> {
  %keep = graph.nms %boxes, %scores {iou_threshold = 5.000000e-01 : f64, score_threshold = 0.0 : f64, max_output = 10 : i64} : (tensor<?x4xf32>, tensor<?xf32>) -> tensor<?xi64>
  %kept = graph.gather %boxes, %keep {axis = 0 : i64} : (tensor<?x4xf32>, tensor<?xi64>) -> tensor<?x4xf32>
  func.return %kept : tensor<?x4xf32>
}"""
    exe = nimble.compile(text)
    listing = str(exe.module)
    assert "vm.invoke_host" in listing and "vm.invoke_kernel" in listing
    assert exe.fallbacks == []
    corners = rng.random((12, 2)).astype(np.float32)
    boxes = np.concatenate([corners, corners + 0.3], axis=1)
    scores = rng.random(12).astype(np.float32)
    expected = nimble.interpret(parse(text), boxes, scores)[0]
    np.testing.assert_array_equal(exe(boxes, scores), expected)


def test_device_annotations_pin_ops_and_are_checked(rng):
    """`let ... on cpu` pins the expression's ops: printed back, never fused with ops
    pinned elsewhere; a device without a kernel backend is a compile error at the op."""
    from nimble.compile import run_stages
    from nimble.diagnostics import OpError
    from nimble.frontend import parse_nb
    from nimble.frontend.printer import print_nb

    text = """def @main(%x: f32[n, 8], %w: f32[4, 8]) -> f32[n, 4] {
  let %y = relu(dense(%x, %w)) on cpu
  let %z = tanh(%y)
  %z
}
"""
    module = parse_nb(text, "pin.nb")
    printed = print_nb(module)
    assert "relu(%v) on cpu" in printed and "tanh(%y)\n" in printed
    assert print_nb(parse_nb(printed, "again.nb")) == printed
    run_stages(module, ["graph"])
    (tanh,) = [op for op in module.walk() if op.name == "graph.tanh"]
    assert tanh.parent_op().name == "func.func"  # not fused into the cpu-pinned dense+relu group
    x = rng.standard_normal((3, 8)).astype(np.float32)
    w = rng.standard_normal((4, 8)).astype(np.float32)
    np.testing.assert_allclose(nimble.compile(parse_nb(text, "pin.nb"))(x, w), np.tanh(np.maximum(x @ w.T, 0)),
                               rtol=1e-5, atol=1e-6)
    with pytest.raises(OpError, match="'graph.tanh' op is pinned to 'opencl'"):
        nimble.compile(parse_nb(text.replace("tanh(%y)", "tanh(%y) on opencl"), "pin.nb"))


@pytest.mark.parametrize("contiguous", [True, False])
def test_row_slices_are_views_not_kernels(contiguous, rng):
    """`%xs[%i]` and `%xs[%i:%j]` of whole rows become device.view (no copy kernel), at
    any start (negative ones count from the end, bounds clamp) and on a non-contiguous
    argument too."""
    text = """func.func @main(%xs: tensor<?x?x4xf32>, %i: index, %j: index) -> (tensor<?x4xf32>, tensor<?x?x4xf32>, tensor<?x?x4xf32>) {
  %row = graph.slice %xs[%i:%j, :, :] : tensor<?x?x4xf32> -> tensor<?x?x4xf32>
  %none = graph.slice %xs[%i:%i, :, :] : tensor<?x?x4xf32> -> tensor<?x?x4xf32>
  %one = graph.slice %xs[-1:, :, :] : tensor<?x?x4xf32> -> tensor<?x?x4xf32>
  %last = graph.squeeze %one [0] : tensor<?x?x4xf32> -> tensor<?x4xf32>
  func.return %last, %row, %none : tensor<?x4xf32>, tensor<?x?x4xf32>, tensor<?x?x4xf32>
}"""
    exe = nimble.compile(text)
    assert exe.kernel_names == [] and "device.view" not in str(exe.module)  # lowered: no kernel at all
    xs = rng.standard_normal((5, 3, 4)).astype(np.float32)
    if not contiguous:
        xs = np.asfortranarray(xs)
    for i, j in [(0, 5), (1, 3), (-2, 5), (4, 9), (-9, 2)]:
        last, rows, none = exe(xs, i, j)
        np.testing.assert_array_equal(rows, xs[i:j])
        np.testing.assert_array_equal(last, xs[-1])
        assert none.shape == (0, 3, 4)


def test_casts_that_only_relax_dims_are_views(rng):
    """Passing an f32[4, 8] weight to a function taking f32[?, ?] casts it: a view, not a
    copy kernel; a cast that changes the element type stays a kernel."""
    text = """func.func @scale(%w: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %y = graph.add %w, %w : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  func.return %y : tensor<?x?xf32>
}
func.func @main(%w: tensor<4x8xf32>) -> (tensor<?x?xf32>, tensor<4x8xi32>) {
  %d = graph.cast %w : tensor<4x8xf32> -> tensor<?x?xf32>
  %y = func.call @scale(%d) : (tensor<?x?xf32>) -> tensor<?x?xf32>
  %i = graph.cast %w : tensor<4x8xf32> -> tensor<4x8xi32>
  func.return %y, %i : tensor<?x?xf32>, tensor<4x8xi32>
}"""
    exe = nimble.compile(text)
    assert exe.kernel_names == ["main_cast_1", "scale_add_0"]
    w = (rng.standard_normal((4, 8)) * 10).astype(np.float32)
    y, i = exe(w)
    np.testing.assert_array_equal(y, w + w)
    np.testing.assert_array_equal(i, w.astype(np.int32))


@pytest.mark.parametrize("chunks", [2, 3])
def test_cooperating_chunks_keep_a_packed_panel_whole(chunks, rng, monkeypatch):
    """In a cooperative kernel a nest with fewer iterations than chunks passes its split
    to the loops inside, unless an iteration fills a buffer of its own: a matmul's
    packed panel (one panel of 64 columns here) filled in shares by 2 or 3 chunks, each
    then reading all of it, gave wrong columns. A matmul kernel marked cooperative by
    hand, in 2 or 3 chunks, matches numpy."""
    from xdsl.dialects.builtin import UnitAttr

    from nimble.compile import TARGETS, Executable, run_stages
    from nimble.dialects import kernel_analysis, loop
    from nimble.runtime.kernels import KernelEntry

    monkeypatch.setattr(KernelEntry, "min_work", 0)
    text = """func.func @main(%a: tensor<?x48xf32>, %b: tensor<48x70xf32>) -> tensor<?x70xf32> {
  %c = graph.matmul %a, %b : (tensor<?x48xf32>, tensor<48x70xf32>) -> tensor<?x70xf32>
  func.return %c : tensor<?x70xf32>
}"""
    module = run_stages(parse(text), [s for s in TARGETS["llvm"] if s != "llvm"])
    (kernel,) = loop.kernels_of(module)
    assert any(isinstance(o, loop.AllocOp) for o in kernel.walk())  # the panel
    kernel.attributes[loop.COOPERATIVE_MARK] = UnitAttr()
    assert kernel_analysis.can_cooperate(kernel)
    exe = Executable.from_program(program_from_module(module), module, "main", chunks)
    b = rng.standard_normal((48, 70)).astype(np.float32)
    for rows in (1, 5, 9, 40):
        a = rng.standard_normal((rows, 48)).astype(np.float32)
        np.testing.assert_allclose(exe(a, b), a @ b, rtol=1e-4, atol=1e-4)
    assert {p.chunks for k in exe.vm.kernels for p in k._plans.values()} == {chunks}


@pytest.mark.parametrize("threads", [2, 3])
def test_kernels_with_a_staged_buffer_cooperate(threads, rng, monkeypatch):
    """A max pool that an op after it reads (a relu) fills its rows in a staged buffer
    before its parallel loop: it is cooperative, its chunks sharing the buffer (each
    fills its share, then all wait before reading it). A max pool that is its kernel's
    output is staged in the output itself: a plain split. A conv stages its im2col rows per panel of pixels inside its
    parallel loop: a plain split. Split however small, 2 or 3 chunks (3 on 2 cores), at
    sizes of 1, odd and past a panel, both match the reference; so does a dense."""
    from nimble.dialects import loop
    from nimble.runtime.kernels import KernelEntry

    monkeypatch.setattr(KernelEntry, "min_work", 0)
    text = """func.func @main(%x: tensor<1x8x?x?xf32>, %w: tensor<8x8x3x3xf32>, %a: tensor<?x64xf32>, %v: tensor<32x64xf32>)
    -> (tensor<1x8x?x?xf32>, tensor<1x8x?x?xf32>, tensor<?x32xf32>, tensor<1x8x?x?xf32>) {
  %m = graph.max_pool2d %x {kernel = array<i64: 3, 3>, strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>} : tensor<1x8x?x?xf32> -> tensor<1x8x?x?xf32>
  %p = graph.relu %m : tensor<1x8x?x?xf32> -> tensor<1x8x?x?xf32>
  %q = graph.max_pool2d %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : tensor<1x8x?x?xf32> -> tensor<1x8x?x?xf32>
  %z = graph.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x8x?x?xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x?x?xf32>
  %r = graph.relu %z : tensor<1x8x?x?xf32> -> tensor<1x8x?x?xf32>
  %d = graph.dense %a, %v : (tensor<?x64xf32>, tensor<32x64xf32>) -> tensor<?x32xf32>
  func.return %p, %r, %d, %q : tensor<1x8x?x?xf32>, tensor<1x8x?x?xf32>, tensor<?x32xf32>, tensor<1x8x?x?xf32>
}"""
    exe = nimble.compile(text, threads=threads)
    kernels = {f.sym_name.data: f for f in loop.kernels_of(exe.module)}
    assert {k.name: k.parallel for k in exe.vm.kernels} == {name: True for name in kernels}
    cooperative = {name for name, f in kernels.items() if loop.COOPERATIVE_MARK in f.attributes}
    assert set(kernels) == {"main_max_pool2d_0", "main_max_pool2d_1", "main_conv2d_0", "main_dense_0"}
    assert cooperative == {"main_max_pool2d_0"}  # pool + relu; the lone pool (1) writes its output
    assert any(isinstance(o, loop.AllocOp) for o in kernels["main_conv2d_0"].walk())  # its panels
    module = parse(text)
    w, v = rng.standard_normal((8, 8, 3, 3)).astype(np.float32), rng.standard_normal((32, 64)).astype(np.float32)
    for size in (1, 7, 33):
        x = rng.standard_normal((1, 8, size, size + 2)).astype(np.float32)
        a = rng.standard_normal((size, 64)).astype(np.float32)
        for got, expected in zip(exe(x, w, a, v), nimble.interpret(module, x, w, a, v)):
            np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)
    assert {p.chunks for k in exe.vm.kernels for p in k._plans.values()} == {threads}


def test_a_launch_streaming_enough_memory_splits_whatever_its_work(rng):
    """A dense layer at batch 1 does little work per byte: it splits from
    `PARALLEL_MIN_BYTES` of arguments (its weights), not from `PARALLEL_MIN_WORK`; a
    smaller one runs whole. Both match numpy."""
    from nimble.runtime.kernels import PARALLEL_MIN_BYTES, PARALLEL_MIN_WORK

    chunks = {}
    for n in (64, 4096):
        text = DENSE.replace("96", str(n))
        exe = nimble.compile(text, threads=2)
        w = rng.standard_normal((n, 64)).astype(np.float32)
        a = rng.standard_normal((1, 64)).astype(np.float32)
        np.testing.assert_allclose(exe(a, w), a @ w.T, rtol=1e-4, atol=1e-4)
        assert n * 64 < PARALLEL_MIN_WORK
        chunks[w.nbytes >= PARALLEL_MIN_BYTES] = {p.chunks for k in exe.vm.kernels for p in k._plans.values()}
    assert chunks == {False: {1}, True: {2}}


OUTER = """func.func @main(%a: tensor<?x1xf32>, %b: tensor<1x?xf32>) -> tensor<?x?xf32> {
  %y = graph.add %a, %b : (tensor<?x1xf32>, tensor<1x?xf32>) -> tensor<?x?xf32>
  func.return %y : tensor<?x?xf32>
}"""


def test_a_storage_past_the_memory_limit_is_refused_before_it_is_allocated(monkeypatch):
    """`NIMBLE_MAX_BYTES` (default 3/4 of the machine's memory) bounds every storage: an
    input shape that would need more is an error naming the bytes and the tensor, raised
    before any allocation (with overcommit, the allocation would succeed and the process
    die when it is touched)."""
    ones = functools.partial(np.ones, dtype=np.float32)
    exe = nimble.compile(OUTER)
    with pytest.raises(InterpreterError, match=r"160,000,000,000 bytes .* NIMBLE_MAX_BYTES .* f32\[200000, 200000\]"):
        exe(ones((200_000, 1)), ones((1, 200_000)))
    monkeypatch.setenv("NIMBLE_MAX_BYTES", "1M")
    exe = nimble.compile(OUTER)
    with pytest.raises(InterpreterError, match=r"4,000,000 bytes is more than the 1,048,576"):
        exe(ones((1000, 1)), ones((1, 1000)))
    assert exe(ones((100, 1)), ones((1, 100))).shape == (100, 100)
    monkeypatch.setenv("NIMBLE_MAX_BYTES", "lots")
    with pytest.raises(ValueError, match="NIMBLE_MAX_BYTES='lots': give a number of bytes"):
        nimble.compile(OUTER)
