"""The on-disk kernel cache (runtime/kernel_cache.py): hits across processes, entries that
are corrupt, truncated, of another key or of another CPU, concurrent writers, the cache
off, a directory that cannot be written, and least-recently-used eviction. Lazy compiles
(`jit="lazy"`) here: they use the kernel cache only, not the program cache
(tests/test_program_cache.py)."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import warnings

import numpy as np
import pytest

import nimble
from nimble.runtime import cpu_target, kernel_cache
from nimble.runtime.kernel_cache import HEADER, KernelCache, KernelCacheWarning, kernel_key

MODEL = """func.func @main(%a: tensor<?x48xf32>, %b: tensor<48x40xf32>) -> tensor<?x40xf32> {
  %c = graph.matmul %a, %b : (tensor<?x48xf32>, tensor<48x40xf32>) -> tensor<?x40xf32>
  %d = graph.tanh %c : tensor<?x40xf32> -> tensor<?x40xf32>
  func.return %d : tensor<?x40xf32>
}"""

CHILD = """
import sys, numpy as np, nimble
exe = nimble.compile(sys.argv[1], cpu=sys.argv[2] if len(sys.argv) > 2 else None, jit="lazy")
a = np.arange(5 * 48, dtype=np.float32).reshape(5, 48) / 100
b = np.ones((48, 40), np.float32) / 50
np.testing.assert_allclose(exe(a, b), np.tanh(a @ b), rtol=1e-5, atol=1e-5)
print(len(exe.code.compiled), len(exe.code.from_cache))
"""


def _entries(directory) -> list:
    return sorted(p for p in directory.iterdir() if p.name.endswith(kernel_cache.SUFFIX) and not p.name.startswith("."))


def _run(directory, model, *cpu: str) -> tuple[int, int]:
    """(kernels compiled or loaded, of them from the cache) in a new process."""
    env = {**os.environ, kernel_cache.DIRECTORY_VARIABLE: str(directory)}
    out = subprocess.run([sys.executable, "-c", CHILD, str(model), *cpu], env=env, check=True, capture_output=True,
                         text=True, cwd=directory.parent).stdout  # (outside the checkout: the installed package)
    compiled, cached = map(int, out.split()[-2:])
    return compiled, cached


@pytest.fixture
def model(tmp_path):
    path = tmp_path / "m.mlir"
    path.write_text(MODEL)
    return path


def _exe(rng, directory, monkeypatch, cpu: str | None = None):
    monkeypatch.setenv(kernel_cache.DIRECTORY_VARIABLE, str(directory))
    exe = nimble.compile(MODEL, cpu=cpu, jit="lazy")
    a, b = rng.standard_normal((5, 48)).astype(np.float32), rng.standard_normal((48, 40)).astype(np.float32)
    np.testing.assert_allclose(exe(a, b), np.tanh(a @ b), rtol=1e-5, atol=1e-5)
    return exe


def test_a_new_process_loads_what_another_compiled(tmp_path, model):
    cache = tmp_path / "cache"
    compiled, cached = _run(cache, model)
    assert compiled >= 1 and cached == 0
    assert len(_entries(cache)) == compiled
    assert _run(cache, model) == (compiled, compiled)


@pytest.mark.parametrize("damage", ["flip", "truncate", "header", "empty"])
def test_a_damaged_entry_is_a_miss_and_is_overwritten(tmp_path, rng, monkeypatch, damage):
    cache = tmp_path / "cache"
    _exe(rng, cache, monkeypatch)
    (entry,) = _entries(cache)
    good = entry.read_bytes()
    bad = {"flip": good[:-100] + bytes(b ^ 0xFF for b in good[-100:]), "truncate": good[:len(good) // 2],
           "header": b"NIMBLEKC" + bytes(8) + good[16:], "empty": b""}[damage]
    entry.write_bytes(bad)
    exe = _exe(rng, cache, monkeypatch)
    assert exe.code.from_cache == []
    assert entry.read_bytes() == good  # compiled again, stored again


def test_an_entry_of_another_key_is_never_loaded(tmp_path, rng, monkeypatch):
    """A (whole, valid) entry copied under another kernel's name: its key does not match."""
    cache = tmp_path / "cache"
    _exe(rng, cache, monkeypatch)
    (entry,) = _entries(cache)
    other = KernelCache(tmp_path / "other")
    other.put(b"\x01" * 32, b"\x7fELF not this kernel's code")
    entry.write_bytes((tmp_path / "other" / f"{'01' * 32}{kernel_cache.SUFFIX}").read_bytes())
    exe = _exe(rng, cache, monkeypatch)
    assert exe.code.from_cache == []


def test_each_cpu_has_its_own_entries(tmp_path, rng, monkeypatch):
    cache = tmp_path / "cache"
    _exe(rng, cache, monkeypatch, cpu="x86-64-v2")
    assert len(_entries(cache)) == 1
    exe = _exe(rng, cache, monkeypatch, cpu="haswell")
    assert exe.code.from_cache == [] and len(_entries(cache)) == 2
    assert _exe(rng, cache, monkeypatch, cpu="haswell").code.from_cache == exe.code.compiled
    t = cpu_target.named("haswell")
    assert kernel_key("k", t) != kernel_key("k", cpu_target.named("haswell", "-fma")) != kernel_key("k2", t)


def test_concurrent_writers_all_succeed(tmp_path, model):
    cache = tmp_path / "cache"
    env = {**os.environ, kernel_cache.DIRECTORY_VARIABLE: str(cache)}
    children = [subprocess.Popen([sys.executable, "-c", CHILD, str(model)], env=env, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True, cwd=tmp_path) for _ in range(4)]
    for child in children:
        out, err = child.communicate(timeout=300)
        assert child.returncode == 0, err
    assert len(_entries(cache)) == 1 and not [p for p in cache.iterdir() if p.name.startswith(".tmp-")]
    assert _run(cache, model)[1] == 1


def test_the_cache_off(tmp_path, rng, monkeypatch):
    monkeypatch.setenv(kernel_cache.DIRECTORY_VARIABLE, "")
    assert kernel_cache.default_cache() is None
    exe = nimble.compile(MODEL)
    a, b = rng.standard_normal((5, 48)).astype(np.float32), rng.standard_normal((48, 40)).astype(np.float32)
    np.testing.assert_allclose(exe(a, b), np.tanh(a @ b), rtol=1e-5, atol=1e-5)
    assert exe.code.cache is None and exe.code.from_cache == []


@pytest.mark.parametrize("kind", ["read-only", "a file"])
def test_an_unwritable_directory_warns_once_and_compiles(tmp_path, rng, monkeypatch, kind):
    cache = tmp_path / "cache"
    if kind == "read-only":
        if os.geteuid() == 0:
            pytest.skip("root writes into read-only directories")
        cache.mkdir()
        cache.chmod(stat.S_IRUSR | stat.S_IXUSR)
    else:
        cache.write_text("not a directory")
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            _exe(rng, cache, monkeypatch)
            _exe(rng, cache, monkeypatch)
        assert [type(w.message) for w in caught] == [KernelCacheWarning]
        assert "compiling without it" in str(caught[0].message)
    finally:
        cache.chmod(stat.S_IRWXU)
    assert kind != "a file" or cache.read_text() == "not a directory"


def test_least_recently_used_entries_go_first(tmp_path):
    entry = HEADER.size + 1000
    cache = KernelCache(tmp_path, max_bytes=int(entry * 3.5))
    keys = [bytes([i]) * 32 for i in range(4)]
    for i, key in enumerate(keys[:3]):
        cache.put(key, bytes([i]) * 1000)
        os.utime(cache._path(key, kernel_cache.SUFFIX), (1000 + i, 1000 + i))  # (ordered, whatever the clock's resolution)
    assert cache.get(keys[0]) == bytes([0]) * 1000  # now the most recently used
    cache.put(keys[3], b"\x03" * 1000)  # 4 entries > 3.5: down to 90%, the oldest first
    assert cache.get(keys[1]) is None
    assert [cache.get(k) is not None for k in (keys[0], keys[2], keys[3])] == [True, True, True]


def test_the_digest_covers_subpackages(monkeypatch, tmp_path):
    """A change in `frontend/onnx/` (or `dialects/graph/`) makes other programs: what the
    old code cached must miss (before, only each package's top folder was read)."""
    import nimble.frontend

    before = kernel_cache.code_digest()
    copy = tmp_path / "frontend"
    shutil.copytree(os.path.dirname(nimble.frontend.__file__), copy, ignore=shutil.ignore_patterns("__pycache__"))
    importer = copy / "onnx" / "importer.py"
    importer.write_text(importer.read_text() + "\n# changed\n")
    monkeypatch.setattr(nimble.frontend.__spec__, "submodule_search_locations", [str(copy)])
    kernel_cache.code_digest.cache_clear()
    try:
        assert kernel_cache.code_digest() != before
    finally:
        kernel_cache.code_digest.cache_clear()
