"""`simplify-host`: canonicalize (and optionally CSE) the host functions only.

The memory stage (`manifest-alloc`, `int-range-optimizations`, `plan-memory`) rewrites
host code: the allocations, shape arithmetic and launches around kernels. Kernels were
simplified at the end of the loops stage and are not changed after, but xdsl's
`canonicalize` and `cse` walk the whole module: with register tiles and packed panels
the kernels hold most of its ops (BERT 4x256: ~20x the host code), so each whole-module
run cost more than the memory stage's own passes. This runs the same patterns, on the
functions that are not kernels.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import GreedyRewritePatternApplier, PatternRewriteWalker
from xdsl.transforms.canonicalize import CanonicalizationRewritePattern
from xdsl.transforms.common_subexpression_elimination import cse
from xdsl.transforms.dead_code_elimination import region_dce

from nimble.dialects import loop


@dataclass(frozen=True)
class SimplifyHostPass(ModulePass):
    """Canonicalization patterns (and CSE with `cse=true`) on every non-kernel function."""

    name = "simplify-host"

    cse: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        pattern = GreedyRewritePatternApplier([CanonicalizationRewritePattern()], ctx=ctx, folding_enabled=True)
        for f in op.body.block.ops:
            if not isinstance(f, func.FuncOp) or loop.KERNEL_MARK in f.attributes or not f.body.blocks:
                continue
            PatternRewriteWalker(pattern, post_walk_func=region_dce).rewrite_region(f.body)
            if self.cse:
                cse(f)
