"""Checked kernels (`NIMBLE_CHECK_BOUNDS=1`): every memory access is checked against
its buffer's dims; one out of bounds is reported after the launch, never made.

With the variable set when kernels are compiled, `lower-loops-to-llvm` guards each
load, store and masked access: every index must lie in `[0, dim)`, and a vector's last
lane too (`index + width <= dim`; a masked access made by `vector.create_mask n` up to
its n-th lane, and not at all when n <= 0; one with another mask on its leading indices
only). An access that fails is redirected to a scratch area of the process (the kernel
reads what that holds and writes nowhere that matters, and runs to its end: no chunk
leaves a barrier the others wait at) and the buffer's code is stored in the error word:
its argument position + 1, or `ALLOCATED` + n for the n-th buffer the kernel allocates.
The VM reads and clears the word after each launch of a checked kernel and raises an
error naming the kernel and the buffer (`kernels.check_launches`).

The object code of a checked kernel refers to the two symbols (`symbols()`): a saved
module keeps its checks, and a process that loads it checks its launches
(`is_checked`). Checked code is slower (a compare per index and a branch per access) and
is neither shared with unchecked code in the kernel cache nor kept in the program cache.
OpenCL kernels are not checked.
"""

from __future__ import annotations

import ctypes
import os
import struct

from nimble.runtime.elf_check import undefined_symbols

ERROR_SYMBOL = "nimble_bounds_error"
SPARE_SYMBOL = "nimble_bounds_spare"
ALLOCATED = 1 << 16
"""Codes from here on name a buffer the kernel allocates (its n-th: `ALLOCATED + n`)."""
SPARE_BYTES = 512
"""The scratch area's size: a failed access of up to this many bytes from its start
stays inside it (the widest vector Nimble emits is 64 bytes)."""

_WORDS = (ctypes.c_int64 * (1 + SPARE_BYTES // 8 + 8))()
_SPARE_AT = (ctypes.addressof(_WORDS) + 8 + 63) // 64 * 64  # (64-byte aligned, after the error word)


def enabled() -> bool:
    """Whether kernels compiled now are checked (`NIMBLE_CHECK_BOUNDS` set, not 0)."""
    return os.environ.get("NIMBLE_CHECK_BOUNDS", "0") not in ("", "0")


def symbols() -> dict[str, int]:
    """The addresses checked kernels refer to, by symbol name (bound in every process
    that loads object code: `llvm_jit`)."""
    return {ERROR_SYMBOL: ctypes.addressof(_WORDS), SPARE_SYMBOL: _SPARE_AT}


def is_checked(object_code: bytes) -> bool:
    """Whether ELF object code was compiled with the checks (it names the error word)."""
    try:
        return ERROR_SYMBOL in undefined_symbols(object_code)
    except (ValueError, IndexError, struct.error):  # (not an object LLVM could load either)
        return False


def take() -> int:
    """The code of the last access out of bounds since the last `take` (0: none); cleared."""
    code = _WORDS[0]
    if code:
        _WORDS[0] = 0
    return code


def describe(code: int, inputs: list[str], outputs: list[str], role: str = "input") -> str:
    """What buffer `code` names, for a kernel with these inputs and outputs (their types;
    `role` says what the inputs are called: `argument` where nothing tells them apart)."""
    if code >= ALLOCATED:
        return f"buffer #{code - ALLOCATED} of those it allocates (counted from 0)"
    position = code - 1
    if position < len(inputs):
        return f"its {role} {position} ({inputs[position]})"
    if position - len(inputs) < len(outputs):
        return f"its output {position - len(inputs)} ({outputs[position - len(inputs)]})"
    return f"its argument {position}"
