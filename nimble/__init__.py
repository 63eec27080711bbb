"""Nimble: a compiler for dynamic neural networks (graph -> shape -> loops -> LLVM /
OpenCL / VM bytecode), built on xdsl."""

__version__ = "0.1.0"

from nimble.api import interpret, parse
from nimble.compile import Executable, compile, load

__all__ = ["Executable", "compile", "interpret", "load", "parse", "__version__"]
