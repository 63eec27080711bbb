"""The runtime's machine-code primitives (`runtime/native_ir.py`), run on their own, and
the functions built from them verified by LLVM."""

from __future__ import annotations

import ctypes
import threading
import time

import numpy as np
import pytest

from nimble.runtime import launcher, replay, sync, workers
from nimble.runtime.llvm_jit import support_engine
from nimble.runtime.native_ir import I64, P64, Emitter, keep, module
from nimble.runtime.pointers import data_pointer


@pytest.mark.parametrize("source", [launcher.source, replay.source, sync.source, workers.source])
def test_the_runtime_functions_build_and_verify(source):
    engine = support_engine(source())  # (parses and verifies the module)
    assert engine is not None


def _compiled(build, name, signature):
    m = module()
    build(Emitter(m, name, *signature[:2]))
    engine = support_engine(str(m))
    function = ctypes.CFUNCTYPE(*signature[2])(engine.get_function_address(name))
    return engine, function


def test_each_runs_its_body_from_start_to_count():
    def build(e):
        total = e.b.alloca(I64)
        e.b.store(I64(0), total)
        e.each(3, e.arg["n"], lambda i: e.b.store(e.b.add(e.b.load(total), i), total), "i")
        e.b.ret(e.b.load(total))

    engine, sum_from_3 = _compiled(build, "sum_from_3", (I64, [("n", I64)], (ctypes.c_int64, ctypes.c_int64)))
    assert [sum_from_3(n) for n in (0, 3, 4, 10)] == [0, 0, 3, sum(range(3, 10))]


@pytest.mark.parametrize("restart", [False, True])
def test_spin_until_waits_for_another_thread_and_slows_down_after_its_limit(restart):
    """`wait(word, slow)` spins until `word[0]` is nonzero and returns it; every check
    after the limit (or, with `restart`, every limit-th) increments `word[1]`."""
    def build(e):
        b, word = e.b, e.arg["word"]
        seen = []
        e.spin_until(lambda: b.icmp_signed("!=", keep(seen, b.load_atomic(word, "acquire", 8)), I64(0)), 100,
                     lambda: b.atomic_rmw("add", e.word(word, 1), I64(1), "monotonic"), restart=restart)
        b.ret(seen[-1])

    engine, wait = _compiled(build, "wait", (I64, [("word", P64)], (ctypes.c_int64, ctypes.c_void_p)))
    words = np.zeros(2, np.int64)
    got = []
    waiter = threading.Thread(target=lambda: got.append(wait(data_pointer(words))))
    waiter.start()
    time.sleep(0.05)
    assert waiter.is_alive() and words[1] > 0  # still waiting, past its limit
    words[0] = 7
    waiter.join(10)
    assert got == [7]
    slow_checks = int(words[1])
    words[:] = (5, 0)
    assert wait(data_pointer(words)) == 5 and words[1] == 0  # ready at once: no slow path
    assert slow_checks > 0
