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


_COMPILED: dict[str, object] = {}


def compile_mlir(text: str):
    """`nimble.compile` of `text` for the LLVM target, once per text in a test run."""
    from nimble import compile

    if text not in _COMPILED:
        _COMPILED[text] = compile(text)
    return _COMPILED[text]


HOST_CREATION = {"graph.zeros", "graph.full", "graph.arange"}


def run_compiled(text: str, *args, entry: str = "main"):
    exe = compile_mlir(text)
    # Shape-driven creation ops have no loop lowering yet: they run on the host.
    left = [f for f in exe.fallbacks if f.split(": ")[1] not in HOST_CREATION]
    assert not left, f"ops left to the host: {left}"
    return exe.run(*args)


@pytest.fixture(params=["reference", "llvm"])
def run(request):
    """Run an MLIR module's `main` on the reference interpreter or compiled with LLVM."""
    return run_mlir if request.param == "reference" else run_compiled
