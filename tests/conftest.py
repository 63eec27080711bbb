"""Shared helpers: build one-op modules from MLIR text and run them in the interpreter."""

from __future__ import annotations

import numpy as np
import pytest

from nimble import interpret, parse

SIZES = [1, 7, 16, 33]
"""Dynamic sizes every numeric test uses: 1, odd, a vector width, and one past it."""


def run_mlir(text: str, *args, entry: str = "main"):
    return interpret(parse(text), *args, entry=entry)


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(0)


_COMPILED: dict[tuple[str, str], object] = {}


def compile_mlir(text: str, target: str = "llvm"):
    """`nimble.compile` of `text` for `target`, once per text and target in a test run."""
    from nimble import compile

    if (text, target) not in _COMPILED:
        _COMPILED[text, target] = compile(text, target=target)
    return _COMPILED[text, target]


HOST_CREATION = {"graph.zeros", "graph.full", "graph.arange"}


def run_compiled(text: str, *args, entry: str = "main", target: str = "llvm"):
    exe = compile_mlir(text, target)
    # Shape-driven creation ops have no loop lowering yet: they run on the host.
    left = [f for f in exe.fallbacks if f.split(": ")[1] not in HOST_CREATION]
    assert not left, f"ops left to the host: {left}"
    if target == "opencl":
        on_cpu = [k.name for k in exe.program.kernels if k.device != "opencl"]
        assert not on_cpu, f"kernels left on the CPU: {on_cpu}"
    return exe.run(*args)


@pytest.fixture(params=["reference", "llvm", "opencl"])
def run(request):
    """Run an MLIR module's `main` on the reference interpreter, or compiled for LLVM or
    for OpenCL (every kernel on the OpenCL device: pocl here)."""
    if request.param == "reference":
        return run_mlir
    return lambda text, *args, entry="main": run_compiled(text, *args, entry=entry, target=request.param)
