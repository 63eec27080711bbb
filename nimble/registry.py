"""The one registry of Nimble's dialects and passes.

`nimble-opt`, the Python API and the text frontend all read it. A new in-tree dialect
is one module plus one line in `_BUILTIN_DIALECTS`; a new pass, one module plus one line
in `_BUILTIN_PASSES`. Out-of-tree packages plug in through the entry-point group
`nimble.plugins`: each entry point names a function `register(registry)` that calls
`registry.add_dialect(...)` and `registry.add_pass(...)` (see docs/adding-a-dialect.md).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from importlib.metadata import entry_points
from typing import Any

from xdsl.context import Context
from xdsl.ir import Dialect
from xdsl.passes import ModulePass
from xdsl.universe import Universe

from nimble.errors import NimbleError

ENTRY_POINT_GROUP = "nimble.plugins"


def _lazy(module: str, name: str) -> Callable[[], Any]:
    """A factory importing `name` from `nimble.<module>` on first use (start-up stays fast)."""
    return lambda: getattr(importlib.import_module(f"nimble.{module}"), name)


_BUILTIN_DIALECTS: dict[str, Callable[[], Dialect]] = {
    # xdsl's arith and llvm with the ops MLIR defines on vectors re-declared to take them.
    "arith": _lazy("dialects.arith", "Arith"),
    "llvm": _lazy("dialects.llvm", "LLVM"),
    "device": _lazy("dialects.device", "DeviceDialect"),
    "graph": _lazy("dialects.graph", "Graph"),
    "loop": _lazy("dialects.loop", "Loop"),
    "nimble": _lazy("dialects.symbolic", "Nimble"),
    "dynshape": _lazy("dialects.dynshape", "DynShape"),
    "vm": _lazy("dialects.vm", "Vm"),
}

_BUILTIN_PASSES: dict[str, Callable[[], type[ModulePass]]] = {
    "expand-math": _lazy("passes.expand_math", "ExpandMathPass"),
    "fuse-ops": _lazy("passes.fuse_ops", "FuseOpsPass"),
    "hoist-invariant": _lazy("passes.hoist_invariant", "HoistInvariantPass"),
    "host-licm": _lazy("passes.host_licm", "HostLicmPass"),
    "int-range-optimizations": _lazy("passes.int_range_optimizations", "IntRangeOptimizationsPass"),
    "infer-shapes": _lazy("passes.infer_shapes", "InferShapesPass"),
    "lower-graph-to-loops": _lazy("lowering.graph_to_loops", "LowerGraphToLoopsPass"),
    "lower-loops-to-llvm": _lazy("lowering.llvm.loops_to_llvm", "LowerLoopsToLLVMPass"),
    "lower-rnn-to-spatial": _lazy("lowering.spatial.rnn_to_spatial", "LowerRnnToSpatialPass"),
    "lower-rnn-to-kernels": _lazy("lowering.rnn_to_kernels", "LowerRnnToKernelsPass"),
    "lower-to-vm": _lazy("lowering.vm.to_vm", "LowerToVmPass"),
    "manifest-alloc": _lazy("passes.manifest_alloc", "ManifestAllocPass"),
    "flatten-dense-rows": _lazy("passes.flatten_dense_rows", "FlattenDenseRowsPass"),
    "matmul-to-dense": _lazy("passes.matmul_to_dense", "MatmulToDensePass"),
    "pad-weight-rows": _lazy("passes.pad_weight_rows", "PadWeightRowsPass"),
    "place-devices": _lazy("passes.place_devices", "PlaceDevicesPass"),
    "plan-memory": _lazy("passes.plan_memory", "PlanMemoryPass"),
    "verify-memory-plan": _lazy("passes.verify_memory_plan", "VerifyMemoryPlanPass"),
    "reify-shapes": _lazy("passes.reify_shapes", "ReifyShapesPass"),
    "schedule-loops": _lazy("passes.schedule_loops", "ScheduleLoopsPass"),
    "share-packs": _lazy("passes.share_packs", "SharePacksPass"),
    "simplify-host": _lazy("passes.simplify_host", "SimplifyHostPass"),
    "spatial-dse": _lazy("lowering.spatial.dse", "SpatialDsePass"),
    "split-index-sets": _lazy("passes.split_index_sets", "SplitIndexSetsPass"),
    "tile-vectorize": _lazy("passes.tile_vectorize", "TileVectorizePass"),
    "widen-halves": _lazy("passes.widen_halves", "WidenHalvesPass"),
}


class PluginError(NimbleError):
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
