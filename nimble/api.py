"""The public Python API (grows with each level: compile, load come with the backends)."""

from __future__ import annotations

import os
from typing import Any

from xdsl.dialects.builtin import ModuleOp

from nimble.diagnostics import verify_module
from nimble.parser import parse_mlir
from nimble.reference import run as _run
from nimble.registry import make_context
from xdsl.utils.exceptions import VerifyException


def parse(source: str | os.PathLike[str], name: str | None = None, verify: bool = True) -> ModuleOp:
    """Parse a model into a verified module: a path to a `.nb` (Nimble text format),
    `.mlir` or `.onnx` file, or MLIR text.

    Raises `FrontendError` (`.nb`: every error, file:line:col), xdsl's `ParseError`
    (MLIR, with file:line:col) or `VerifyException` (naming the op).
    """
    if isinstance(source, str | os.PathLike) and os.fspath(source).endswith(".onnx"):
        from nimble.frontend.onnx import import_onnx

        return import_onnx(source)
    text, name = _read(source, name)
    if name.endswith(".nb"):
        from nimble.frontend import parse_nb  # (lark: imported for `.nb` text only)

        return parse_nb(text, name)
    module = parse_mlir(make_context(), text, name)
    if verify:
        errors = verify_module(module, text)
        if errors:
            raise VerifyException("\n".join(d.format() for d in errors))
    return module


MODEL_SUFFIXES = (".nb", ".mlir", ".onnx")


def _read(source: str | os.PathLike[str], name: str | None) -> tuple[str, str]:
    """(text, name) of a path or of text; a missing file named like a model is an error."""
    looks_like_path = isinstance(source, str) and "\n" not in source and (
        os.path.exists(source) or source.endswith(MODEL_SUFFIXES)
    )
    if isinstance(source, os.PathLike) or looks_like_path:
        with open(source, encoding="utf-8") as f:
            return f.read(), name or os.fspath(source)
    return str(source), name or "<string>"


def interpret(module: ModuleOp, *args: Any, entry: str = "main", base_dir: str = ".") -> list[Any]:
    """Run `entry` in the reference interpreter (the meaning every backend must match)."""
    return _run(module, *args, entry=entry, base_dir=base_dir)


def visualize(module: ModuleOp | str | os.PathLike[str], path: str | os.PathLike[str],
              function: str | None = None) -> Any:
    """Draw the module's functions (or `function`) to `path` (.svg, .png, .pdf, or .dot
    for Graphviz's text): ops as nodes, values as edges with their types, regions as
    clusters, devices as colours (`nimble/op_graph.py`). A model's path is parsed first;
    a module is drawn at whatever stage it is."""
    from nimble.op_graph import visualize as draw

    return draw(module if isinstance(module, ModuleOp) else parse(module), path, function)
