"""A pooling allocator for VM storage.

`alloc(size, alignment)` hands out a `Storage` (an aligned numpy byte buffer) from a
free list of the same size class (powers of two from 64 bytes, then multiples of 1 MiB),
or a new one; `free` (the VM's `kill`) puts it back. Storage that is never freed is
released by the garbage collector like any numpy array. The pool counts what it did:
bytes requested in total (the naive sum of every allocation) and, with `track_live`,
the peak of bytes held by live storages.
"""

from __future__ import annotations

import os
import re
import weakref
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from nimble.runtime.pointers import data_pointer

MIB = 1 << 20
MAX_BYTES_VARIABLE = "NIMBLE_MAX_BYTES"
_SUFFIXES = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


class MemoryLimit(ValueError):
    """A storage larger than `max_bytes()` was asked for (refused before allocating)."""


def max_bytes() -> int:
    """The most bytes one storage may take: `$NIMBLE_MAX_BYTES` (a number of bytes, or
    with a K, M, G or T suffix), else three quarters of the machine's memory. A larger
    storage is a `MemoryLimit` error before anything is allocated (with overcommit, the
    allocation itself would succeed and the process be killed when it is touched)."""
    text = os.environ.get(MAX_BYTES_VARIABLE, "").strip()
    if text:
        match = re.fullmatch(r"(\d+)\s*([kmgt]?)i?b?", text.lower())
        if match is None:
            raise MemoryLimit(f"{MAX_BYTES_VARIABLE}={text!r}: give a number of bytes, as 4000000000 or 4G")
        return int(match[1]) * _SUFFIXES[match[2]]
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") * 3 // 4
    except (ValueError, OSError, AttributeError):  # (no sysconf: no limit but the allocator's)
        return 1 << 62


def check_size(size: int, limit: int) -> None:
    if size < 0:
        raise ValueError(f"negative storage size {size}")
    if size > limit:
        raise MemoryLimit(f"a storage of {size:,} bytes is more than the {limit:,} that {MAX_BYTES_VARIABLE} allows "
                          f"(default: 3/4 of the machine's memory)")


def size_class(size: int) -> int:
    if size <= 64:
        return 64
    if size < MIB:
        return 1 << (size - 1).bit_length()
    return -(-size // MIB) * MIB


def aligned_bytes(nbytes: int, alignment: int) -> np.ndarray:
    """A new uint8 buffer of `nbytes` starting at a multiple of `alignment` bytes."""
    raw = np.empty(nbytes + alignment, dtype=np.uint8)
    start = -data_pointer(raw) % alignment
    return raw[start:start + nbytes]


class Storage:
    """A block of bytes at an aligned address; tensors are views into `buffer`."""

    __slots__ = ("buffer", "size", "capacity", "alignment", "__weakref__")

    def __init__(self, capacity: int, alignment: int):
        self.buffer = aligned_bytes(capacity, alignment)
        self.capacity = capacity
        self.alignment = alignment
        self.size = capacity


CONSTANT_ALIGNMENT = 64
"""Where a module's constants start (a cache line). numpy's buffers and a bytecode
file's bytes start 16-byte aligned; a kernel's vector loads from a weight matrix whose
rows start mid-line straddle two lines each (ONNX LSTM h512, 25 steps, 2 threads, its
recurrent weights read in place: 1.87 ms at 16 bytes, against 1.19 through an aligned
copy made per call)."""


def aligned(array: np.ndarray, alignment: int = CONSTANT_ALIGNMENT) -> np.ndarray:
    """`array` if its data start at a multiple of `alignment` bytes, else an aligned copy
    (C order, as writeable as `array`)."""
    if array.flags.c_contiguous and data_pointer(array) % alignment == 0:
        return array
    copy = aligned_bytes(array.nbytes, alignment).view(array.dtype).reshape(array.shape)
    copy[...] = array
    copy.flags.writeable = array.flags.writeable
    return copy


@dataclass
class PoolStats:
    requested_bytes: int = 0  # every allocation's size, summed
    live_bytes: int = 0
    peak_bytes: int = 0
    allocations: int = 0
    reused: int = 0


@dataclass
class StoragePool:
    free_lists: dict[tuple[int, int], list[Storage]] = field(default_factory=dict)
    stats: PoolStats = field(default_factory=PoolStats)
    track_live: bool = False
    """Count live bytes (a finalizer per new storage, ~2 us: off unless measuring)."""
    limit: int = field(default_factory=max_bytes)
    """The largest storage it hands out (`max_bytes`)."""
    recorder: Any = None
    """A recorded run's pool (`runtime.replay`): told of every storage and private
    array it makes, which the recording then owns."""

    def alloc(self, size: int, alignment: int) -> Storage:
        if not 0 <= size <= self.limit:
            check_size(size, self.limit)
        s = self.stats
        s.allocations += 1
        s.requested_bytes += size
        key = (size_class(size), alignment)
        free = self.free_lists.get(key)
        if free:
            storage = free.pop()
            s.reused += 1
        else:
            storage = Storage(key[0], alignment)
            if self.track_live:
                weakref.finalize(storage, self._released, key[0])
            if self.recorder is not None:
                self.recorder.allocated(storage)
        storage.size = size
        if self.track_live:
            s.live_bytes += key[0]
            s.peak_bytes = max(s.peak_bytes, s.live_bytes)
        return storage

    def private(self, array: np.ndarray, size: int) -> np.ndarray:
        """Count `array`, allocated outside the pool for a storage of `size` bytes that
        only it uses (the VM's `_alloc_private`), as that storage."""
        s = self.stats
        s.allocations += 1
        s.requested_bytes += size
        if self.recorder is not None:
            self.recorder.allocated(array)
        if self.track_live:
            s.live_bytes += size
            s.peak_bytes = max(s.peak_bytes, s.live_bytes)
            weakref.finalize(array, self._released, size)
        return array

    def _released(self, capacity: int) -> None:
        self.stats.live_bytes -= capacity

    def free(self, storage: Storage) -> None:
        """Return storage for reuse (the program will not touch it again)."""
        if self.track_live:
            self.stats.live_bytes -= storage.capacity
        storage.size = storage.capacity
        self.free_lists.setdefault((storage.capacity, storage.alignment), []).append(storage)

    def reset_stats(self) -> None:
        self.stats = PoolStats(live_bytes=self.stats.live_bytes, peak_bytes=self.stats.live_bytes)

