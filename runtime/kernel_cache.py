"""The on-disk cache of compiled CPU kernels: object code keyed by what produced it.

A kernel's entry is its ELF object code, keyed by the SHA-256 of: the kernel's loop-level
IR as printed (the schedules already realised: SSA names numbered in order, the
constants it embeds included), the CPU it is compiled for (`CpuTarget`: LLVM name and
features), the process triple, the LLVM and llvmlite versions, and Nimble's own code
(a digest of its package sources, so an edited lowering never reads an older build's
code). One file per entry under the cache directory:

    magic `NIMBLEKC`, u32 format, 32-byte key, u32 CRC-32 of the object, u64 its length,
    the object

written to a temporary file in the same directory and renamed over the entry
(concurrent processes see a whole entry or none). An entry that is truncated, corrupt,
of another format or of another key (copied or renamed) is a miss, and the fresh
compile overwrites it. Reading touches the entry; when the directory holds more than
`max_bytes`, the least recently used entries go.

The same directory holds whole compiled programs (`nimble/program_cache.py`), the same
header before a bytecode file, suffix `.nbc`; the bound counts both.

The directory: `$NIMBLE_CACHE_DIR` (empty: no cache), else `$XDG_CACHE_HOME/nimble/kernels`
or `~/.cache/nimble/kernels`. A directory that cannot be created, read or written gives
one `KernelCacheWarning` and the process compiles without it.
"""

from __future__ import annotations

import hashlib
import os
import struct
import tempfile
import threading
import warnings
import zlib
from functools import cache
from importlib.util import find_spec
from pathlib import Path

from nimble.runtime.cpu_target import CpuTarget

MAGIC = b"NIMBLEKC"
FORMAT = 1
HEADER = struct.Struct("<8sI32sIQ")
SUFFIX = ".o"
PROGRAM_SUFFIX = ".nbc"
"""Entries of whole programs (`nimble/program_cache.py`), bounded with the kernels."""
DIRECTORY_VARIABLE = "NIMBLE_CACHE_DIR"
MAX_BYTES_VARIABLE = "NIMBLE_CACHE_MAX_BYTES"
DEFAULT_MAX_BYTES = 1 << 30


class KernelCacheWarning(UserWarning):
    """The kernel cache cannot be used; compiling goes on without it."""


PACKAGES = ("nimble", "nimble.dialects", "nimble.frontend", "nimble.lowering", "nimble.passes", "nimble.runtime")
"""Nimble's packages, whose sources `code_digest` covers."""


@cache
def code_digest() -> bytes:
    """A digest of Nimble's sources (every `.py` and `.lark` file of its packages,
    subpackages included: `frontend/onnx`, `dialects/graph`) and of LLVM's versions. The
    packages are found, not imported (the runtime imports no compiler package)."""
    import llvmlite
    import llvmlite.binding as llvm

    h = hashlib.sha256(f"llvm {llvm.llvm_version_info} llvmlite {llvmlite.__version__} "
                       f"triple {llvm.get_process_triple()}".encode())
    for package in PACKAGES:
        root = Path(find_spec(package).submodule_search_locations[0])
        for path in sorted([*root.rglob("*.py"), *root.rglob("*.lark")]):
            h.update(path.relative_to(root).as_posix().encode())
            h.update(path.read_bytes())
    return h.digest()


def kernel_key(kernel_text: str, cpu: CpuTarget, checked: bool = False) -> bytes:
    """The key of a kernel's object code: its IR, its CPU, whether its accesses are
    checked (`runtime.bounds`), and the compiler's code."""
    h = hashlib.sha256(code_digest())
    h.update(f"\0cpu {cpu.cpu} features {cpu.features}{' bounds' if checked else ''}\0".encode())
    h.update(kernel_text.encode())
    return h.digest()


class KernelCache:
    """Object code of kernels in one directory (see the module docstring)."""

    def __init__(self, directory: str | os.PathLike[str], max_bytes: int = DEFAULT_MAX_BYTES):
        self.directory = Path(directory)
        self.max_bytes = max_bytes
        self.usable = True
        self._lock = threading.Lock()
        self._total: int | None = None  # bytes in the directory, once counted

    def _path(self, key: bytes, suffix: str) -> Path:
        return self.directory / f"{key.hex()}{suffix}"

    def get(self, key: bytes, suffix: str = SUFFIX) -> bytes | None:
        """The object code stored under `key`, or None (absent, or not a whole entry of
        this key: a miss). `suffix`: `PROGRAM_SUFFIX` for a whole program."""
        if not self.usable:
            return None
        path = self._path(key, suffix)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as e:
            self._give_up(e)
            return None
        if len(data) < HEADER.size:
            return None
        magic, version, stored, crc, length = HEADER.unpack_from(data)
        body = data[HEADER.size:]
        if magic != MAGIC or version != FORMAT or stored != key or length != len(body) or zlib.crc32(body) != crc:
            return None
        try:
            os.utime(path)  # recently used
        except OSError:
            pass
        return body

    def put(self, key: bytes, code: bytes, suffix: str = SUFFIX) -> None:
        """Store `code` under `key` (atomically), then keep the directory under its bound."""
        if not self.usable:
            return
        data = HEADER.pack(MAGIC, FORMAT, key, zlib.crc32(code), len(code)) + code
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            fd, temporary = tempfile.mkstemp(dir=self.directory, prefix=".tmp-", suffix=suffix)
            try:
                with os.fdopen(fd, "wb") as f:
                    f.write(data)
                os.replace(temporary, self._path(key, suffix))
            except BaseException:
                Path(temporary).unlink(missing_ok=True)
                raise
        except OSError as e:
            self._give_up(e)
            return
        with self._lock:
            if self._total is not None:
                self._total += len(data)
            if self._total is None or self._total > self.max_bytes:
                self._evict()

    def _entries(self) -> list[tuple[float, int, Path]]:
        entries = []
        for entry in os.scandir(self.directory):
            if entry.name.endswith((SUFFIX, PROGRAM_SUFFIX)) and not entry.name.startswith("."):
                try:
                    st = entry.stat()
                except OSError:
                    continue  # (another process evicted it)
                entries.append((st.st_mtime, st.st_size, Path(entry.path)))
        return entries

    def _evict(self) -> None:
        """Drop the least recently used entries until the directory holds at most 90% of
        `max_bytes` (counted again from the directory: other processes write too)."""
        try:
            entries = sorted(self._entries())
        except OSError as e:
            self._give_up(e)
            return
        total = sum(size for _, size, _ in entries)
        for _, size, path in entries:
            if total <= self.max_bytes * 9 // 10:
                break
            try:
                path.unlink(missing_ok=True)
            except OSError:
                continue
            total -= size
        self._total = total

    def _give_up(self, error: OSError) -> None:
        self.usable = False
        warnings.warn(f"kernel cache {self.directory}: {error.strerror or error}; compiling without it",
                      KernelCacheWarning, stacklevel=3)


DEFAULT = KernelCache.__new__(KernelCache)
"""Stands for `default_cache()` where a cache is an argument."""

_CACHES: dict[tuple[str, int], KernelCache] = {}
_CACHES_LOCK = threading.Lock()


def default_cache() -> KernelCache | None:
    """The cache of `$NIMBLE_CACHE_DIR` (None when set empty), else of the user's cache
    directory; one object per directory and bound in a process."""
    directory = os.environ.get(DIRECTORY_VARIABLE)
    if directory is None:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        directory = os.path.join(base, "nimble", "kernels")
    if not directory:
        return None
    try:
        max_bytes = int(os.environ.get(MAX_BYTES_VARIABLE, DEFAULT_MAX_BYTES))
    except ValueError:
        max_bytes = DEFAULT_MAX_BYTES
    with _CACHES_LOCK:
        key = (directory, max_bytes)
        if key not in _CACHES:
            _CACHES[key] = KernelCache(directory, max_bytes)
        return _CACHES[key]
