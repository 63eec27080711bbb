"""`nimble-interpret`: run a function of a module in the reference interpreter.

    nimble-interpret examples/mlp.mlir --entry main --dynamic-size 7 --seed 0
    nimble-interpret model.mlir --input x=x.npy --input h=h.npy

Inputs not given with `--input` are random, with every `?` dim set to `--dynamic-size`.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import IndexType, ModuleOp, TensorType
from xdsl.ir import Attribute
from xdsl.utils.exceptions import DiagnosticException, ParseError

from nimble import __version__
from nimble.api import parse
from nimble.frontend.errors import FrontendError
from nimble.dialects.graph.types import dims, is_bool, is_float, numpy_dtype
from nimble.reference import Interpreter, InterpreterError


MAX_RANDOM_ELEMENTS = 1 << 28
"""The most elements a random input may have (1 GiB of f32): more is a mistyped size."""


def random_value(t: Attribute, size: int, rng: np.random.Generator, sizes: Sequence[int] | None = None) -> Any:
    """A random value of type `t`: `?` dims are `size` (or `sizes[axis]` when given)."""
    if isinstance(t, TensorType):
        shape = [(size if sizes is None else sizes[i]) if d is None else d for i, d in enumerate(dims(t))]
        if any(n < 0 for n in shape):
            raise ValueError(f"a random input of type {t} cannot have shape {shape}: sizes are at least 0")
        if math.prod(shape) > MAX_RANDOM_ELEMENTS:
            raise ValueError(f"a random input of shape {shape} has {math.prod(shape):,} elements, more than "
                             f"{MAX_RANDOM_ELEMENTS:,}: give smaller sizes, or the input with --input")
        dtype = numpy_dtype(t.element_type)
        if is_float(t.element_type):
            return rng.standard_normal(shape).astype(dtype)
        if is_bool(t.element_type):
            return rng.random(shape) < 0.5
        return rng.integers(0, max(size, 2), shape).astype(dtype)
    if isinstance(t, IndexType):
        return size
    raise ValueError(f"cannot make a random value of type {t}; pass it with --input")


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="nimble-interpret", description=__doc__.splitlines()[0])
    p.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    p.add_argument("file")
    p.add_argument("--entry", default="main")
    p.add_argument("--input", action="append", default=[], metavar="NAME=FILE.npy")
    p.add_argument("--dynamic-size", type=int, default=7, help="size of every ? dim of random inputs")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    try:
        module = parse(args.file)
        values = build_inputs(module, args)
        results = Interpreter(module, os.path.dirname(os.path.abspath(args.file))).call(args.entry, values)
    except (ParseError, DiagnosticException, FrontendError) as e:
        print(f"nimble-interpret: error: {e}", file=sys.stderr)
        return 1
    except (InterpreterError, ValueError, OSError) as e:
        print(f"nimble-interpret: error: {e}", file=sys.stderr)
        return 1
    print_results(results)
    return 0


def build_inputs(module: ModuleOp, args: argparse.Namespace) -> list[Any]:
    """The entry's arguments: `--input NAME=FILE.npy` where given, else random values
    with every `?` dim of size `--dynamic-size`."""
    function = next((f for f in module.ops if isinstance(f, func.FuncOp) and f.sym_name.data == args.entry), None)
    if function is None:
        raise InterpreterError(f"no function @{args.entry} in {args.file}")
    given = dict(item.split("=", 1) for item in args.input)
    rng = np.random.default_rng(args.seed)
    values = []
    for arg in function.body.block.args:
        name = arg.name_hint or ""
        if name in given:
            values.append(np.load(given.pop(name)))
        else:
            values.append(random_value(arg.type, args.dynamic_size, rng))
    if given:
        raise InterpreterError(f"@{args.entry} has no parameter named {', '.join(given)}")
    return values


def print_results(results: Sequence[Any]) -> None:
    for i, r in enumerate(results):
        if isinstance(r, np.ndarray):
            print(f"result #{i}: {r.dtype}{list(r.shape)} sum={r.sum():.6g} first={r.reshape(-1)[:4].tolist()}")
        else:
            print(f"result #{i}: {r!r}")


if __name__ == "__main__":
    sys.exit(main())
