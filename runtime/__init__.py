"""The bytecode format, the VM, kernel loaders and the spatial simulator.

`nimble.runtime.load(path)` runs a saved `.nbc` without importing the compiler
(`runtime/executable.py`)."""

from typing import Any


def __getattr__(name: str) -> Any:
    if name in ("load", "Executable"):
        from nimble.runtime import executable

        return getattr(executable, name)
    raise AttributeError(f"module 'nimble.runtime' has no attribute '{name}'")
