"""The data pointer of a numpy array, read fast (kernel launches and the allocator
read one per tensor)."""

from __future__ import annotations

import ctypes

import numpy as np


def _pointer_reader():
    """A fast reader of an ndarray's data pointer: the `data` field right after the
    object header of numpy's array struct (`PyArrayObject_fields`), ~7x cheaper than
    `__array_interface__`. Checked here on arrays of several kinds; if the layout ever
    differs, the slow documented way is used."""
    from_address = ctypes.c_void_p.from_address
    offset = object.__basicsize__  # refcount + type pointer

    def fast(a: np.ndarray) -> int:
        return from_address(id(a) + offset).value or 0

    def slow(a: np.ndarray) -> int:
        return a.__array_interface__["data"][0]

    base = np.arange(24, dtype=np.float32).reshape(4, 6)
    samples = [base, base[1:], base[:, 2:], np.zeros(0), np.ones((2, 3), np.int64), base.T]
    return fast if all(fast(a) == slow(a) for a in samples) else slow


data_pointer = _pointer_reader()
