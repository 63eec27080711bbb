"""`split-index-sets`: CPU kernel loops split where their body selects on the counter.

A `loop.foreach` over `[lb, ub)` (constant bounds) whose body compares its counter with
a constant `c` and selects on the outcome becomes two loops, `[lb, c)` and `[c, ub)`,
and the range facts of each (`fold_index_ranges`) decide the comparisons, clamps and
selects in it (`passes/loop_transforms/index_set_split.py`). The case: a concatenation read per
element by what follows it (DenseNet's concat of every earlier feature map, then batch
norm and relu), whose every element selected among all operands; split, each part reads
one operand. Measured when DenseNet's convs still carried that concat: a DenseNet-121
call (batch 1, 2 threads) went from 2170 to 286 ms (issue 41's notes).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from nimble.dialects import loop
from nimble.dialects.device import Device
from nimble.passes.int_range_optimizations import fold_index_ranges
from nimble.passes.loop_transforms.index_set_split import split_loops


@dataclass(frozen=True)
class SplitIndexSetsPass(ModulePass):
    """Split CPU kernel loops at the constants their bodies select on."""

    name = "split-index-sets"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in loop.kernels_of(op, Device.CPU):
            if split_loops(kernel):
                fold_index_ranges(kernel)
