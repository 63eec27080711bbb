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
