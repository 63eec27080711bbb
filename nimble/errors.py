"""Nimble's exceptions, by what happened. Every error Nimble raises on its own derives from
`NimbleError` (`except nimble.NimbleError` catches them all, and nothing else):

- `CompileError`: the model cannot be compiled as it is: a `.nb` parse error
  (`FrontendError`, file:line:col), an ONNX graph the importer does not take
  (`OnnxImportError`), a verifier error naming the op (`OpError`), a static shape
  conflict (`ShapeError`), a lowering that cannot take the IR;
- `InputError`: what a caller or a tool was given is wrong: a bytecode file
  (`BytecodeError`), a CPU name (`TargetError`), an option (`ToolError`), an ADT value
  (`AdtInputError`);
- `RunError`: a compiled model stops while it runs: a shape check or argument check
  (`InterpreterError`, `ShapeAssertionError`), the VM (`VMError`), a kernel launch
  (`LaunchError`), an OpenCL device (`OpenCLError`).

(xdsl's own `ParseError` and `VerifyException`, for MLIR text, stay xdsl's.)
"""

from __future__ import annotations


class NimbleError(Exception):
    """An error Nimble raises on its own (not a bug in it)."""


class CompileError(NimbleError):
    """The model cannot be compiled as it is."""


class InputError(NimbleError):
    """What a caller or a tool was given is wrong."""


class RunError(NimbleError):
    """A compiled model stops while it runs."""
