"""`nimble.spatial`: a model's recurrences compiled for the spatial accelerator.

`compile_spatial(model, weights="int8", sizes=...)` lowers every recurrence (a counted
loop over an LSTM/GRU-like cell, `lower-rnn-to-spatial`) to one loop-level program,
searches its `par` factors against the machine model (`spatial-dse`, at the given
problem sizes) and JIT-compiles it on the CPU backend for *functional execution*: the
executable computes exactly what the program computes (narrow weights included), while
`reports` says what the accelerator would take (`nimble.lowering.spatial.model`). The
host code around the recurrences runs by its reference semantics.

Before a program runs, the loop's first step is run by the reference semantics: its
shape checks report bad inputs (a clear error instead of an out-of-bounds access), and
the step must leave the states' shapes as they were (then every step does).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp, StringAttr, SymbolRefAttr

from nimble.dialects import loop
from nimble.dialects.device import Device
from nimble.dialects.graph import FusedOp
from nimble.dialects.graph.control import truth
from nimble.errors import CompileError
from nimble.lowering.spatial.rnn_to_spatial import (
    ARGS_ATTR,
    COUNTER_ATTR,
    SKIPPED_ATTR,
    SPATIAL_ATTR,
    STACKED_ATTR,
)
from nimble.reference import Interpreter, InterpreterError, where


class SpatialError(CompileError):
    """A model the spatial target cannot take (the reasons)."""


def spatial_programs(module: ModuleOp) -> list[loop.KernelOp]:
    return loop.kernels_of(module, Device.SPATIAL)


@dataclass
class SpatialExecutable:
    """Functional execution of a module lowered for the spatial target."""

    module: ModuleOp
    kernels: dict[str, Any]
    entry: str = "main"

    def __call__(self, *args: Any) -> Any:
        results = _SpatialInterpreter(self.module, self.kernels).call(self.entry, list(args))
        return results[0] if len(results) == 1 else tuple(results)

    @property
    def programs(self) -> list[loop.KernelOp]:
        return spatial_programs(self.module)


def compile_spatial(source: Any, weights: str = "f32", sizes: dict[str, int | Sequence[int]] | None = None,
                    entry: str = "main", machine: str = "") -> SpatialExecutable:
    """Lower, schedule and JIT a model for the spatial target. `sizes` gives the problem
    size the search optimises for, by the programs' parameter names (`{"steps": 25,
    "xs": (25, 1, 64)}`); `machine` changes the machine's parameters (`"pmus=128"`)."""
    from nimble.api import parse
    from nimble.compile import compile_kernels, run_stages

    module = source.clone() if isinstance(source, ModuleOp) else parse(source)
    options = {"lower-rnn-to-spatial": f"weights={weights}"}
    options["spatial-dse"] = dse_options(sizes, machine)
    run_stages(module, ["spatial"], options)
    if not spatial_programs(module):
        skipped = [f"\n  {where(o)}{o.attributes[SKIPPED_ATTR].data}" for o in module.walk()
                   if isinstance(o.attributes.get(SKIPPED_ATTR), StringAttr)]
        raise SpatialError("no recurrence to lower: the spatial target takes counted loops "
                           "(`while i < n`, i from 0 by 1) over cells of graph ops" + "".join(skipped))
    return SpatialExecutable(module, compile_kernels(module, (Device.SPATIAL,)), entry)


def dse_options(sizes: dict[str, int | Sequence[int]] | None, machine: str = "") -> str:
    """`spatial-dse` options for sizes by name and a machine spec."""
    entries = [f'"{k}={v if isinstance(v, int) else "x".join(map(str, v))}"' for k, v in (sizes or {}).items()]
    parts = [f"sizes={','.join(entries)}"] if entries else []
    if machine:
        parts.append(f'machine="{machine}"')
    return " ".join(parts)


class _SpatialInterpreter(Interpreter):
    """The reference interpreter, except that recurrences run their spatial program."""

    def __init__(self, module: ModuleOp, kernels: dict[str, Any]):
        super().__init__(module)
        self.kernels = kernels

    def _evaluate(self, op: Any, args: list[Any]) -> Sequence[Any]:
        if isinstance(op, FusedOp) and isinstance(op.attributes.get(SPATIAL_ATTR), SymbolRefAttr):
            return self._run_program(op, args)
        return super()._evaluate(op, args)

    def _run_program(self, op: FusedOp, args: list[Any]) -> list[Any]:
        name = op.attributes[SPATIAL_ATTR].root_reference.data
        counter = op.attributes[COUNTER_ATTR].value.data
        stacked = set(op.attributes[STACKED_ATTR].get_values())
        picks = op.attributes[ARGS_ATTR].get_values()
        loop_op = op.body.block.first_op
        for arg, value in zip(op.body.block.args, args):
            self._env[arg] = value
        initial = [self._env[v] for v in loop_op.inits]
        steps, values = 0, list(initial)
        while truth(self.run_region(loop_op.cond_region, values)[0]):  # the counter alone
            steps += 1
            values[counter] = steps
        rows = {i: 0 for i in stacked}
        if steps:
            after = self.run_region(loop_op.body_region, initial)
            for i, (before, now) in enumerate(zip(initial, after)):
                if i == counter:
                    continue
                if i in stacked and np.shape(now)[1:] == np.shape(before)[1:]:
                    rows[i] = np.shape(now)[0] - np.shape(before)[0]
                elif np.shape(before) != np.shape(now):
                    raise InterpreterError(f"'{loop_op.name}' op: state #{i} changes shape in a step "
                                           f"({list(np.shape(before))} -> {list(np.shape(now))}); "
                                           "the spatial program needs states of a fixed shape")
        states = [np.ascontiguousarray(v) for i, v in enumerate(initial) if i != counter]
        outputs = [np.empty((len(initial[i]) + steps * rows[i], *np.shape(initial[i])[1:]), initial[i].dtype)
                   if i in stacked else np.empty_like(initial[i]) for i in range(len(initial)) if i != counter]
        params = [args[p] for p in picks]
        params = [np.ascontiguousarray(p) if isinstance(p, np.ndarray) else p for p in params]
        n_inputs = len(params) - len(states)
        try:
            self.kernels[name](*params[:n_inputs], *states, *outputs)
        except ValueError as e:
            raise InterpreterError(f"spatial program @{name}: {e}") from None
        results = iter(outputs)
        return [steps if i == counter else next(results) for i in range(len(initial))]
