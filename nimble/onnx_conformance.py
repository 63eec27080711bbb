"""ONNX backend conformance: the `onnx` package's node test cases through Nimble.

    nimble-onnx-conformance [--target llvm] [--filter SUBSTRING] [--write FILE] [--expected FILE] [-v]

Each case of `onnx.backend.test.case.node` (a one-node model, its inputs and expected
outputs; the data that `onnx/backend/test/data/node/*` holds when the package ships it)
is imported, compiled for `--target` and run; outputs are compared at the case's own
tolerances (`rtol`, `atol`; NaN equals NaN) and dtypes. A case is `unsupported` when the
importer rejects it (an op type, element type or attribute Nimble does not have), `fail`
when it runs and differs, `error` when anything else goes wrong. Inputs the graph dialect
needs at compile time (a reshape's target shape, axes, slice bounds: initializers in real
models, graph inputs in these tests) are bound to the case's values as initializers.

Prints a table of pass / fail / error / unsupported per op type. `--write FILE` records
the passing cases; `--expected FILE` exits 1 if any listed case no longer passes.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from nimble import __version__
from nimble.frontend.onnx import NeedsConstant, OnnxImportError, import_onnx

@dataclass
class Result:
    name: str
    op_types: tuple[str, ...]
    status: str  # pass, fail, error, unsupported
    message: str = ""


def node_cases(filter_text: str | None = None) -> list[Any]:
    from onnx.backend.test.case.node import collect_testcases

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the generators overflow casts on purpose
        cases = collect_testcases(None)
    return [c for c in cases if filter_text is None or filter_text in c.name]


def _array(value: Any) -> Any:
    from onnx import TensorProto, numpy_helper

    if isinstance(value, TensorProto):
        return numpy_helper.to_array(value)
    if isinstance(value, np.generic):
        return np.asarray(value)
    return value


def _bind_inputs(model: Any, values: dict[str, np.ndarray]) -> Any:
    """A copy of `model` whose graph inputs in `values` are initializers instead."""
    from onnx import numpy_helper

    bound = type(model)()
    bound.CopyFrom(model)
    keep = [i for i in bound.graph.input if i.name not in values]
    del bound.graph.input[:]
    bound.graph.input.extend(keep)
    for name, array in values.items():
        bound.graph.initializer.append(numpy_helper.from_array(np.asarray(array), name))
    return bound


def _import(case: Any, inputs: list[Any]) -> tuple[Any, set[str]]:
    """The module of a case, binding the inputs the importer needs as constants; and
    the names of the inputs bound."""
    model = case.model
    values = {i.name: v for i, v in zip(model.graph.input, inputs)}
    bound: dict[str, np.ndarray] = {}
    while True:
        try:
            return import_onnx(_bind_inputs(model, bound) if bound else model), set(bound)
        except NeedsConstant as e:
            if e.name not in values or e.name in bound:
                raise
            bound[e.name] = values[e.name]


def run_case(case: Any, target: str = "llvm") -> Result:
    import nimble

    op_types = tuple(sorted({n.op_type for n in case.model.graph.node}))
    try:
        first_inputs = [_array(v) for v in case.data_sets[0][0]]
        module, bound = _import(case, first_inputs)
    except OnnxImportError as e:
        return Result(case.name, op_types, "unsupported", str(e).splitlines()[-1].strip())
    except Exception as e:  # noqa: BLE001 (a bug in the importer is an error of this case, not of the run)
        return Result(case.name, op_types, "error", f"import: {type(e).__name__}: {e}")
    try:
        exe = nimble.compile(module, target=target)
        for inputs, expected in case.data_sets:
            names = [i.name for i in case.model.graph.input]
            got = exe.run(*(_array(v) for name, v in zip(names, inputs) if name not in bound))
            if len(got) != len(expected):
                return Result(case.name, op_types, "fail", f"{len(got)} outputs, expected {len(expected)}")
            for k, (g, e) in enumerate(zip(got, expected)):
                e = np.asarray(_array(e))
                g = np.asarray(g)
                if g.shape != e.shape or g.dtype != e.dtype:
                    return Result(case.name, op_types, "fail",
                                  f"output {k}: {g.dtype}{list(g.shape)}, expected {e.dtype}{list(e.shape)}")
                if not np.allclose(g, e, rtol=case.rtol, atol=case.atol, equal_nan=True):
                    worst = float(np.max(np.abs(g.astype(np.float64) - e.astype(np.float64)))) if g.size else 0.0
                    return Result(case.name, op_types, "fail", f"output {k}: max abs difference {worst:.3g}")
    except Exception as e:  # noqa: BLE001 (any failure of compile or run is this case's error)
        return Result(case.name, op_types, "error", f"{type(e).__name__}: {str(e)[:300]}")
    return Result(case.name, op_types, "pass")


def run_all(cases: Iterable[Any], target: str = "llvm") -> list[Result]:
    return [run_case(c, target) for c in cases]


def table(results: list[Result]) -> str:
    per_op: dict[str, Counter] = {}
    for r in results:
        per_op.setdefault("+".join(r.op_types), Counter())[r.status] += 1
    lines = [f"{'op type':28s} {'pass':>5s} {'fail':>5s} {'error':>5s} {'unsup':>5s}"]
    for op, c in sorted(per_op.items()):
        lines.append(f"{op[:28]:28s} {c['pass']:5d} {c['fail']:5d} {c['error']:5d} {c['unsupported']:5d}")
    total = Counter(r.status for r in results)
    lines.append(f"{'total':28s} {total['pass']:5d} {total['fail']:5d} {total['error']:5d} {total['unsupported']:5d}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="nimble-onnx-conformance", description=__doc__.splitlines()[0])
    p.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    p.add_argument("--target", default="llvm")
    p.add_argument("--filter", help="only cases whose name contains this")
    p.add_argument("--write", help="write the names of the passing cases to this file")
    p.add_argument("--expected", help="fail if a case listed in this file does not pass")
    p.add_argument("-v", "--verbose", action="store_true", help="print every case that does not pass")
    args = p.parse_args(argv)
    cases = node_cases(args.filter)
    if args.expected:
        listed = {line.strip() for line in Path(args.expected).read_text().splitlines() if line.strip()}
        cases = [c for c in cases if c.name in listed]
    results = run_all(cases, args.target)
    print(table(results))
    if args.verbose:
        for r in results:
            if r.status != "pass":
                print(f"{r.status:12s} {r.name}: {r.message}")
    if args.write:
        Path(args.write).write_text("".join(f"{r.name}\n" for r in results if r.status == "pass"))
    if args.expected:
        regressed = [r for r in results if r.status != "pass"]
        missing = listed - {c.name for c in cases}
        for r in regressed:
            print(f"REGRESSED {r.name}: {r.status}: {r.message}", file=sys.stderr)
        for name in sorted(missing):
            print(f"MISSING {name}: not among the installed onnx package's cases", file=sys.stderr)
        return 1 if regressed else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
