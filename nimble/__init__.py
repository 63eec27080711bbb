"""Nimble: a compiler for dynamic neural networks (graph -> shape -> loops -> LLVM /
OpenCL / VM bytecode), built on xdsl.

The package's names are imported when first used: `nimble.load` (a saved `.nbc`, run by
the runtime alone) imports no compiler, `nimble.compile` the whole of it."""

from __future__ import annotations

import importlib
import sys
import types
from typing import Any

__version__ = "0.1.0"
__all__ = ["CompileError", "Executable", "InputError", "NimbleError", "RunError", "compile", "interpret", "load", "parse",
           "visualize", "__version__"]

_WHERE = {"interpret": "nimble.api", "parse": "nimble.api", "visualize": "nimble.api", "compile": "nimble.compile",
          "Executable": "nimble.runtime.executable", "load": "nimble.runtime.executable",
          **{name: "nimble.errors" for name in ("NimbleError", "CompileError", "InputError", "RunError")}}


class _Package(types.ModuleType):
    """`nimble.compile` stays the function when the module of the same name is imported
    (the import system would set the package's attribute to the module)."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _WHERE and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)

    def __getattr__(self, name: str) -> Any:
        if name not in _WHERE:
            raise AttributeError(f"module 'nimble' has no attribute '{name}'")
        value = getattr(importlib.import_module(_WHERE[name]), name)
        super().__setattr__(name, value)
        return value

    def __dir__(self) -> list[str]:
        return sorted({*super().__dir__(), *_WHERE})


sys.modules[__name__].__class__ = _Package
