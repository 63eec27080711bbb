"""One exception hierarchy (`nimble/errors.py`): every error class the package defines
derives from `nimble.NimbleError`, through the category that says what happened."""

from __future__ import annotations

import ast
import importlib

import numpy as np
import pytest

import nimble
from test_import_cycles import modules

CATEGORIES = {
    "FrontendError": nimble.CompileError, "OnnxImportError": nimble.CompileError, "OpError": nimble.CompileError,
    "ShapeError": nimble.CompileError, "BytecodeError": nimble.InputError, "TargetError": nimble.InputError,
    "ToolError": nimble.InputError, "AdtInputError": nimble.InputError, "InterpreterError": nimble.RunError,
    "VMError": nimble.RunError, "LaunchError": nimble.RunError, "OpenCLError": nimble.RunError,
    "ShapeAssertionError": nimble.RunError,
}


def _error_classes() -> list[tuple[str, str]]:
    found = []
    for name, path in modules().items():
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.ClassDef) and node.name.endswith("Error") and node.bases:
                found.append((name, node.name))
    return found


@pytest.mark.parametrize("module, name", _error_classes())
def test_every_error_is_a_nimble_error(module, name):
    cls = getattr(importlib.import_module(module), name)
    assert issubclass(cls, nimble.NimbleError), f"{module}.{name}"
    if name in CATEGORIES:
        assert issubclass(cls, CATEGORIES[name])


def test_the_categories_are_caught_as_one(tmp_path):
    bad = tmp_path / "bad.nb"
    bad.write_text("def @main(%x f32[2]) -> f32[2] { %x }\n")
    with pytest.raises(nimble.CompileError, match="bad.nb:1:"):
        nimble.parse(bad)
    with pytest.raises(nimble.InputError):
        nimble.load(b"not a bytecode module" * 8)
    exe = nimble.compile("func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {\n  func.return %x : tensor<2xf32>\n}")
    with pytest.raises(nimble.RunError, match="tensor<2xf32>"):
        exe.run(np.zeros(3, np.float32))
    with pytest.raises(nimble.NimbleError):
        exe.run(np.zeros(3, np.float32))
