"""The program cache (nimble/program_cache.py): a model compiled before is loaded whole in
a new process, with no LLVM and no passes; a changed source, another CPU or a damaged
entry is a miss; sources that read other files are not kept; a loaded program gives its
module when asked; a saved bytecode module runs with no JIT."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import numpy as np
import pytest

import nimble
from nimble import program_cache
from nimble.program_cache import program_key
from nimble.runtime import cpu_target, kernel_cache

MODEL = """func.func @main(%a: tensor<?x48xf32>, %b: tensor<48x40xf32>) -> tensor<?x40xf32> {
  %c = graph.matmul %a, %b : (tensor<?x48xf32>, tensor<48x40xf32>) -> tensor<?x40xf32>
  %d = graph.tanh %c : tensor<?x40xf32> -> tensor<?x40xf32>
  func.return %d : tensor<?x40xf32>
}"""

CHILD = """
import os, sys, tempfile, numpy as np, nimble
from nimble.runtime import llvm_jit
log = tempfile.mktemp()
object_code = llvm_jit.object_code  # (every kernel LLVM compiles, on any path and in any child: counted)

def counted(*a, **k):
    with open(log, "a") as f:
        f.write("1")
    return object_code(*a, **k)

llvm_jit.object_code = counted
load = sys.argv[1].endswith(".nbc")
exe = nimble.load(sys.argv[1]) if load else nimble.compile(sys.argv[1], jit=sys.argv[2])
a = np.arange(5 * 48, dtype=np.float32).reshape(5, 48) / 100
b = np.ones((48, 40), np.float32) / 50
np.testing.assert_allclose(exe(a, b), np.tanh(a @ b), rtol=1e-5, atol=1e-5)
print(load or exe.stats.from_program_cache, len(open(log).read()) if os.path.exists(log) else 0)
"""


def _run(directory, model, jit: str = "eager") -> tuple[bool, int]:
    """(whether the program came from the program cache, LLVM compiles in it and the
    children it forks) of a new process."""
    env = {**os.environ, kernel_cache.DIRECTORY_VARIABLE: str(directory)}
    out = subprocess.run([sys.executable, "-c", CHILD, str(model), jit], env=env, check=True, capture_output=True,
                         text=True, cwd=directory.parent).stdout  # (outside the checkout: the installed package)
    cached, calls = out.split()[-2:]
    return cached == "True", int(calls)


def _programs(directory) -> list:
    return sorted(p for p in directory.iterdir() if p.name.endswith(kernel_cache.PROGRAM_SUFFIX))


@pytest.fixture
def model(tmp_path):
    path = tmp_path / "m.mlir"
    path.write_text(MODEL)
    return path


def test_a_new_process_loads_the_whole_program(tmp_path, model):
    cache = tmp_path / "cache"
    cached, calls = _run(cache, model)
    assert not cached and calls == 1  # (its one kernel)
    assert len(_programs(cache)) == 1
    assert _run(cache, model) == (True, 0)
    assert _run(cache, model, "lazy")[0] is False  # (lazy: kernels at their launch, no program cache)


def test_a_changed_source_is_a_miss(tmp_path, model):
    cache = tmp_path / "cache"
    _run(cache, model)
    model.write_text(MODEL.replace("%d", "%e"))  # (the same program: a new key all the same)
    cached, _calls = _run(cache, model)
    assert not cached and len(_programs(cache)) == 2


def test_keys_differ_by_source_cpu_and_options(model):
    host, haswell = cpu_target.host(), cpu_target.named("haswell")
    keys = {program_key(MODEL, "llvm", None, "auto", host), program_key(MODEL, "llvm", None, "auto", haswell),
            program_key(MODEL, "llvm", None, "masked", host), program_key(MODEL, "llvm", "main", "auto", host),
            program_key(MODEL + " ", "llvm", None, "auto", host), program_key(str(model), "llvm", None, "auto", host)}
    assert len(keys) == 6
    assert program_key(MODEL, "opencl", None, "auto", host) is None
    external = 'func.func @main() -> tensor<2xf32> {\n  %w = graph.external_constant "w" from "w.npz" : ' \
               'tensor<2xf32>\n  func.return %w : tensor<2xf32>\n}'
    assert program_key(external, "llvm", None, "auto", host) is None


@pytest.mark.parametrize("damage", ["truncate", "flip"])
def test_a_damaged_program_is_a_miss_and_is_overwritten(tmp_path, rng, monkeypatch, damage):
    monkeypatch.setenv(kernel_cache.DIRECTORY_VARIABLE, str(tmp_path))
    nimble.compile(MODEL)
    program_cache.wait()  # (written on a thread of its own)
    (entry,) = _programs(tmp_path)
    good = entry.read_bytes()
    entry.write_bytes(good[:len(good) // 2] if damage == "truncate" else good[:-64] + bytes(64))
    exe = nimble.compile(MODEL)
    program_cache.wait()
    assert not exe.stats.from_program_cache and entry.read_bytes() == good
    a, b = rng.standard_normal((3, 48)).astype(np.float32), rng.standard_normal((48, 40)).astype(np.float32)
    np.testing.assert_allclose(exe(a, b), np.tanh(a @ b), rtol=1e-5, atol=1e-5)


def test_a_cached_program_gives_its_module(tmp_path, monkeypatch):
    monkeypatch.setenv(kernel_cache.DIRECTORY_VARIABLE, str(tmp_path))
    compiled = nimble.compile(MODEL)
    loaded = nimble.compile(MODEL)
    assert loaded.stats.from_program_cache and loaded.stats.stages.keys() == {"load"}
    assert sorted(loaded.code.from_cache) == loaded.kernel_names == compiled.kernel_names
    assert str(loaded.module) == str(compiled.module)  # (compiled again when asked for)


def test_a_saved_module_runs_with_no_jit(tmp_path, model):
    exe = nimble.compile(model, jit="lazy")
    exe.save(tmp_path / "m.nbc")
    assert _run(tmp_path / "cache", tmp_path / "m.nbc") == (True, 0)


def test_concurrent_compiles_all_succeed(tmp_path, model):
    cache = tmp_path / "cache"
    env = {**os.environ, kernel_cache.DIRECTORY_VARIABLE: str(cache)}
    children = [subprocess.Popen([sys.executable, "-c", CHILD, str(model), "eager"], env=env, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True, cwd=tmp_path) for _ in range(3)]
    for child in children:
        _out, err = child.communicate(timeout=300)
        assert child.returncode == 0, err
    assert len(_programs(cache)) == 1 and not [p for p in cache.iterdir() if p.name.startswith(".tmp-")]
    assert _run(cache, model) == (True, 0)


def test_timings_and_progress(tmp_path, monkeypatch, capsys):
    """`--timings` lists each step (the stages and the JIT; `load` for a program from the
    cache) and what the JIT did; `progress` hears of every kernel, compiled on workers
    or not, the last call (n, n)."""
    from nimble.run_cli import main

    monkeypatch.setenv(kernel_cache.DIRECTORY_VARIABLE, str(tmp_path))
    cell = """func.func @main(%x: tensor<?x8xf32>, %w: tensor<16x8xf32>, %b: tensor<16xf32>, %y: tensor<?x16xf32>) -> tensor<?x16xf32> {
  %d = graph.dense %x, %w, %b : (tensor<?x8xf32>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<?x16xf32>
  %s = graph.add %d, %y : (tensor<?x16xf32>, tensor<?x16xf32>) -> tensor<?x16xf32>
  %p = graph.softmax %s : tensor<?x16xf32> -> tensor<?x16xf32>
  func.return %p : tensor<?x16xf32>
}"""
    seen = []
    exe = nimble.compile(cell, cpu="haswell", progress=lambda done, total: seen.append((done, total)))
    kernels = len(exe.kernel_names)
    assert kernels >= 2 and seen == [(k, kernels) for k in range(1, kernels + 1)]
    path = tmp_path / "cell.mlir"
    path.write_text(cell)
    cold = ["parse", "graph", "recurrences", "layout", "loops", "memory", "vm", "program", "jit"]
    during = rf"( \([1-{kernels}] begun during the passes\))?"  # (a kernel begun before the passes end)
    for steps, jit in ((cold, f"{kernels} compiled{during}, 0 from"), (["load"], f"0 compiled, {kernels} from")):
        assert main([str(path), "--timings", "--quiet", "--dim", "3"]) == 0
        listed = capsys.readouterr().out.split("compile steps:\n")[1].splitlines()
        assert [line.split()[0] for line in listed[:-1]] == steps
        assert re.fullmatch(f"  {kernels} kernels: {jit} the cache", listed[-1]), listed[-1]


def test_the_program_is_written_while_the_compile_returns(tmp_path, monkeypatch):
    """The program entry is written on a thread: `compile` returns before the disk is
    done, and a compile of the same source in this process waits for the write and
    loads it."""
    import threading

    monkeypatch.setenv(kernel_cache.DIRECTORY_VARIABLE, str(tmp_path))
    release = threading.Event()
    put = kernel_cache.KernelCache.put

    def slow_put(self, key, code, suffix=kernel_cache.SUFFIX):
        if suffix == kernel_cache.PROGRAM_SUFFIX:
            release.wait(60)
        put(self, key, code, suffix)

    monkeypatch.setattr(kernel_cache.KernelCache, "put", slow_put)
    nimble.compile(MODEL)
    assert _programs(tmp_path) == []  # (returned with the write under way)
    threading.Timer(0.2, release.set).start()
    assert nimble.compile(MODEL).stats.from_program_cache
