"""Whole compiled programs in the kernel cache: a model compiled before starts in a load.

The kernel cache spares a new process LLVM, not the passes (ResNet-50: 4.7 s of passes
and 2 s of import before its first kernel is needed). So `nimble.compile` also keeps
the compiled program itself, the bytecode file `Executable.save` writes (host code,
constants, every kernel's object code), keyed by the SHA-256 of:

- the source: a file's bytes and suffix (which frontend reads it), or the text given;
- what the compile was asked for: target, entry, remainder strategy, CPU and features;
- Nimble's code and LLVM's versions (as kernel keys: `kernel_cache.code_digest`).

A hit is `nimble.load` of the entry (validated as any bytecode file is). A module
given as an object (nothing to hash but its printing, which costs what parsing saves),
a source that reads weights from other files (`graph.external_constant`: they could
change behind the key), and targets other than `llvm` (their OpenCL kernels are built
for the device found at load) are not kept. Entries hold the constants too (ResNet-50:
121 MB), bounded with the kernels by the cache's size, and are written on a thread of
their own (`store`) while the compiled model runs.
"""

from __future__ import annotations

import hashlib
import os
import threading
from typing import Any

from xdsl.dialects.builtin import ModuleOp

from nimble.runtime import bounds
from nimble.runtime.cpu_target import CpuTarget
from nimble.runtime.kernel_cache import PROGRAM_SUFFIX, KernelCache, code_digest

EXTERNAL = b"graph.external_constant"


def program_key(source: Any, target: str, entry: str | None, remainder: str, cpu: CpuTarget) -> bytes | None:
    """The key of the program `compile(source, ...)` makes, or None where it is not kept."""
    if target != "llvm" or isinstance(source, ModuleOp) or bounds.enabled():  # (checked kernels: not kept)
        return None
    if isinstance(source, str | os.PathLike) and os.path.isfile(source):
        with open(source, "rb") as f:
            data = f.read()
        what = os.path.splitext(os.fspath(source))[1].encode()
    elif isinstance(source, str):
        data, what = source.encode(), b"text"
    else:
        return None
    if EXTERNAL in data:
        return None
    h = hashlib.sha256(code_digest())
    h.update(f"\0program {target} {entry} {remainder} cpu {cpu.cpu} features {cpu.features}\0".encode())
    h.update(what + b"\0" + data)
    return h.digest()


_WRITING: dict[bytes, threading.Thread] = {}
_WRITING_LOCK = threading.Lock()


def store(cache: KernelCache, key: bytes, program: bytes) -> None:
    """Write `program` under `key` on a thread of its own: the compile returns without
    waiting for the disk (ResNet-50's 123 MB: ~1 s of writing and checksumming, done
    while its first call runs). The process waits for the write at exit (not a daemon
    thread), and a compile of the same key in this process waits for it (`wait`)."""
    thread = threading.Thread(target=cache.put, args=(key, program, PROGRAM_SUFFIX), name="nimble-program-cache")
    with _WRITING_LOCK:
        _WRITING[key] = thread
    thread.start()


def wait(key: bytes | None = None) -> None:
    """Wait for the programs being written (the one of `key` only, if given)."""
    with _WRITING_LOCK:
        threads = [t for k, t in _WRITING.items() if key is None or k == key]
    for thread in threads:
        thread.join()
    with _WRITING_LOCK:
        for k, t in list(_WRITING.items()):
            if not t.is_alive():
                del _WRITING[k]
