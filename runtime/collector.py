"""How often the garbage collector runs while Nimble compiles (`fewer_collections`):
around `nimble.compile`'s passes and each kernel's JIT (`llvm_jit.KernelCode`)."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

COMPILE_GC_THRESHOLD = 10_000
"""Allocations between the collector's young-generation passes while compiling (Python's
default is 700). Compiling builds and drops IR by the hundred thousand ops, each pass
of the collector walking the young objects and every tenth the older ones: BERT 4 x 256
took 14.5-15.7 s with the default, 11.1-11.8 s at 10,000 (the process's peak memory
+16 MB), 11.1-11.9 s at 20,000 (+130 MB) and 9.1 s with no collection at all (+210
MB, and a 2.5 s collection after it). A kernel's JIT (converting its IR to llvmlite's)
took 0.04-0.07 s at 10,000 and 0.04-0.27 s with the default (a 3 x 3 conv at 64
channels, four first calls each, the compiled module alive beside it)."""


_LOCK = threading.Lock()
_DEPTH = 0  # compiles under way (threads may compile kernels at once)
_SAVED: tuple[int, ...] = ()
_FROZEN = False  # whether the first of them froze the objects alive before it


@contextmanager
def fewer_collections() -> Iterator[None]:
    """Run the garbage collector's young generation less often (`COMPILE_GC_THRESHOLD`)
    and leave the objects alive before the compile out of its full collections
    (`gc.freeze`), until the last of the compiles under way ends (the thresholds are the
    process's). A full collection walks every object of the process: with a compiled
    model alive beside it (its IR), one during a kernel's JIT took ~1 s, three times
    over the JIT of ResNet-18's and BERT's 42 kernels (one process, both models
    compiled: lowering + conversion to llvmlite 5.4-5.5 s in all, slowest kernel
    1.30-1.32 s; frozen 3.7 s, slowest 0.39-0.42 s). Objects another freeze holds (a
    server about to fork) stay frozen: then nothing is frozen here."""
    global _DEPTH, _SAVED, _FROZEN
    with _LOCK:
        if _DEPTH == 0:
            _SAVED = gc.get_threshold()
            gc.set_threshold(max(_SAVED[0], COMPILE_GC_THRESHOLD), *_SAVED[1:])
            _FROZEN = gc.get_freeze_count() == 0
            if _FROZEN:
                gc.freeze()
        _DEPTH += 1
    try:
        yield
    finally:
        with _LOCK:
            _DEPTH -= 1
            if _DEPTH == 0:
                gc.set_threshold(*_SAVED)
                if _FROZEN:
                    gc.unfreeze()
