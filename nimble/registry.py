"""The one registry of Nimble's dialects and passes.

`nimble-opt`, the Python API and the text frontend all read it. A new in-tree dialect
is one module plus one line in `_BUILTIN_DIALECTS`; a new pass, one module plus one line
in `_BUILTIN_PASSES`. Out-of-tree packages plug in through the entry-point group
`nimble.plugins`: each entry point names a function `register(registry)` that calls
`registry.add_dialect(...)` and `registry.add_pass(...)` (see docs/adding-a-dialect.md).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from importlib.metadata import entry_points

from xdsl.context import Context
from xdsl.ir import Dialect
from xdsl.passes import ModulePass
from xdsl.universe import Universe

ENTRY_POINT_GROUP = "nimble.plugins"


def _graph() -> Dialect:
    from nimble.dialects.graph import Graph

    return Graph


def _shape() -> Dialect:
    from nimble.dialects.shape import Shape

    return Shape


def _loop() -> Dialect:
    from nimble.dialects.loop import Loop

    return Loop


_BUILTIN_DIALECTS: dict[str, Callable[[], Dialect]] = {
    "graph": _graph,
    "loop": _loop,
    "shape": _shape,
}

def _infer_shapes() -> type[ModulePass]:
    from nimble.passes.infer_shapes import InferShapesPass

    return InferShapesPass


def _reify_shapes() -> type[ModulePass]:
    from nimble.passes.reify_shapes import ReifyShapesPass

    return ReifyShapesPass


def _fuse_ops() -> type[ModulePass]:
    from nimble.passes.fuse_ops import FuseOpsPass

    return FuseOpsPass


def _expand_math() -> type[ModulePass]:
    from nimble.passes.expand_math import ExpandMathPass

    return ExpandMathPass


def _hoist_invariant() -> type[ModulePass]:
    from nimble.passes.hoist_invariant import HoistInvariantPass

    return HoistInvariantPass


def _lower_graph_to_loops() -> type[ModulePass]:
    from nimble.lowering.graph_to_loops import LowerGraphToLoopsPass

    return LowerGraphToLoopsPass


def _lower_loops_to_llvm() -> type[ModulePass]:
    from nimble.lowering.loops_to_llvm import LowerLoopsToLLVMPass

    return LowerLoopsToLLVMPass


def _schedule_loops() -> type[ModulePass]:
    from nimble.passes.schedule_loops import ScheduleLoopsPass

    return ScheduleLoopsPass


def _tile_vectorize() -> type[ModulePass]:
    from nimble.passes.tile_vectorize import TileVectorizePass

    return TileVectorizePass


_BUILTIN_PASSES: dict[str, Callable[[], type[ModulePass]]] = {
    "expand-math": _expand_math,
    "fuse-ops": _fuse_ops,
    "hoist-invariant": _hoist_invariant,
    "lower-graph-to-loops": _lower_graph_to_loops,
    "lower-loops-to-llvm": _lower_loops_to_llvm,
    "infer-shapes": _infer_shapes,
    "reify-shapes": _reify_shapes,
    "schedule-loops": _schedule_loops,
    "tile-vectorize": _tile_vectorize,
}


class PluginError(Exception):
    """A plugin failed to load or registered something twice."""


@dataclass
class Registry:
    """Dialect and pass factories by name (factories keep start-up lazy)."""

    dialects: dict[str, Callable[[], Dialect]] = field(default_factory=dict)
    passes: dict[str, Callable[[], type[ModulePass]]] = field(default_factory=dict)

    def add_dialect(self, name: str, factory: Callable[[], Dialect]) -> None:
        if name in self.dialects:
            raise PluginError(f"dialect '{name}' is registered twice")
        self.dialects[name] = factory

    def add_pass(self, name: str, factory: Callable[[], type[ModulePass]]) -> None:
        if name in self.passes:
            raise PluginError(f"pass '{name}' is registered twice")
        self.passes[name] = factory


@cache
def registry() -> Registry:
    """Nimble's own dialects and passes, then every installed plugin's."""
    reg = Registry(dict(_BUILTIN_DIALECTS), dict(_BUILTIN_PASSES))
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        try:
            register = ep.load()
            register(reg)
        except PluginError:
            raise
        except Exception as e:  # a broken plugin must not take the tools down silently
            raise PluginError(f"plugin '{ep.name}' ({ep.value}) failed to load: {e}") from e
    return reg


def all_dialects() -> dict[str, Callable[[], Dialect]]:
    """xdsl's dialects plus Nimble's (and plugins'); Nimble's win on a name clash."""
    dialects = dict(Universe.get_multiverse().all_dialects)
    dialects.update(registry().dialects)
    return dialects


def all_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """xdsl's passes (canonicalize, cse, dce, ...) plus Nimble's and plugins'."""
    passes = dict(Universe.get_multiverse().all_passes)
    passes.update(registry().passes)
    return passes


def make_context() -> Context:
    """A context that knows every registered dialect (loaded lazily on first use)."""
    ctx = Context()
    for name, factory in all_dialects().items():
        ctx.register_dialect(name, factory)
    return ctx
