"""The kernels' kept heap buffers (`runtime/scratch.py`): reuse, limits, threads."""

from __future__ import annotations

import ctypes
import threading

import numpy as np
import pytest

from nimble.runtime import scratch
from nimble.runtime.llvm_jit import runtime_function

trim = runtime_function("nimble_scratch_trim", None)
_kept = runtime_function("nimble_scratch_kept", ctypes.c_int64)


def kept_bytes() -> int:
    return int(_kept())


@pytest.fixture()
def native():
    alloc = runtime_function("nimble_scratch_alloc", ctypes.c_void_p, ctypes.c_int64)
    free = runtime_function("nimble_scratch_free", None, ctypes.c_void_p)
    trim()
    yield alloc, free
    trim()


def test_a_freed_block_serves_a_request_it_fits(native):
    alloc, free = native
    first = alloc(1 << 20)
    assert first % 16 == 0
    ctypes.memset(first, 7, 1 << 20)  # (all of it is ours)
    free(first)
    assert kept_bytes() == 1 << 20
    again = alloc(900_000)
    assert again == first and kept_bytes() == 0
    small = alloc(1000)  # (the kept block would be over twice as large: a new one)
    assert small not in (None, first)
    free(again)
    free(small)
    assert kept_bytes() == (1 << 20) + 1000
    trim()
    assert kept_bytes() == 0


def test_a_block_too_small_is_not_taken(native):
    alloc, free = native
    block = alloc(4096)
    free(block)
    larger = alloc(8192)
    assert larger != block
    free(larger)


def test_null_is_freed_as_nothing(native):
    _alloc, free = native
    free(None)
    assert kept_bytes() == 0


def test_kept_bytes_stay_under_the_limit(native):
    alloc, free = native
    huge = alloc(scratch.KEPT_BYTES + 1)  # (never kept: freed, its pages never touched)
    free(huge)
    assert kept_bytes() == 0
    blocks = [alloc(scratch.KEPT_BYTES // 3) for _ in range(4)]
    for b in blocks:
        free(b)
    assert kept_bytes() == 3 * (scratch.KEPT_BYTES // 3)


def test_threads_never_share_a_block(native):
    """Four threads allocate, fill, check and free blocks of random sizes at once (ctypes
    calls run without the GIL): a block handed to two threads would hold the other's bytes."""
    alloc, free = native
    wrong: list[str] = []

    def work(seed: int) -> None:
        rng = np.random.default_rng(seed)
        for size in rng.integers(1 << 10, 1 << 18, 400):
            block = alloc(int(size))
            ctypes.memset(block, seed, int(size))
            seen = np.ctypeslib.as_array(ctypes.cast(block, ctypes.POINTER(ctypes.c_uint8)), (int(size),))
            if not (seen == seed).all():
                wrong.append(f"thread {seed}: block {block:#x} of {size} bytes changed under it")
            free(block)

    threads = [threading.Thread(target=work, args=(seed,)) for seed in range(1, 5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert wrong == []
    assert 0 < kept_bytes() <= scratch.KEPT_BYTES
