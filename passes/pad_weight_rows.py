"""`pad-weight-rows`: a constant weight matrix whose rows alias in the L1 cache is passed padded.

A dense layer's kernel reads 8 or 16 rows of `W[N, K]` at once (lanes along the rows,
passes/loop_transforms/row_lanes.py; transposed panels copy 16 x 16 blocks). When a row is a multiple of
`schedule_loops.STAGE_ROWS` elements long (2 KiB of f32: K = 512, 1024, 3072) those rows
fall into the same few L1 sets and evict each other, so each tile first copies its rows to
a buffer with a padded stride (schedule-loops' staging). A weight the host passes as a
constant (an ONNX model's initializer, the transpose `matmul-to-dense` made) needs no copy
per call: its group takes it padded once, at compile time, `pad_rows.PAD` elements longer
per row (zeros: `pad_rows.padded_constant`, as recurrence kernels take theirs), and reads
the logical `[N, K]` through a `graph.slice` of it, which the kernel's loads absorb
(`W[j, k]` of the padded buffer). Schedule-loops then sees rows that do not alias and
reads them in place.

Measured (x @ W^T, 2 threads, min us; the padded rows stood in by K + 16): 128 rows, W 256
x 1024 199 -> 189, W 768 x 3072 1850 -> 1684; 32 rows 64 -> 55 and 520 -> 388; 1 thread,
128 rows, 768 x 3072 3480 -> 3098 (256 x 1024 even).

Only groups whose every use of the weight is as a `graph.dense` weight are changed, and
recurrence kernels (`lower-rnn-to-kernels`, which lays out its own weights) are left alone.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import AnyFloat, ModuleOp, TensorType
from xdsl.ir import BlockArgument
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from nimble.dialects.graph import ConstantOp, DenseOp, FusedOp, SliceOp
from nimble.lowering.kernels.pad_rows import MIN_ROWS, PAD, padded_constant
from nimble.lowering.rnn_to_kernels import RECURRENCE_ATTR
from nimble.passes.schedule_loops import STAGE_ROWS


def _aliases(t: TensorType) -> bool:
    shape = t.get_shape()
    return isinstance(t.get_element_type(), AnyFloat) and len(shape) == 2 and shape[0] >= MIN_ROWS \
        and shape[1] > 0 and shape[1] % STAGE_ROWS == 0


def _dense_weight_only(arg: BlockArgument) -> bool:
    uses = list(arg.uses)
    return bool(uses) and all(isinstance(u.operation, DenseOp) and u.index == 1 for u in uses)


def pad_weights(fused: FusedOp, padded: dict[ConstantOp, ConstantOp]) -> None:
    """Pass `fused` its aliasing constant weights padded (one padded constant per constant,
    in `padded`)."""
    block = fused.body.block
    for i, (value, arg) in enumerate(zip(fused.inputs, block.args)):
        const = value.owner
        if not isinstance(const, ConstantOp) or not _aliases(value.type) or not _dense_weight_only(arg):
            continue
        rows, cols = value.type.get_shape()
        if const not in padded:
            padded[const] = padded_constant(value, (rows, cols + PAD))
            Rewriter.insert_op(padded[const], InsertPoint.after(const))
        pad = padded[const]
        fused.operands[i] = pad.result
        wide = Rewriter.replace_value_with_new_type(arg, pad.result.type)
        cut = SliceOp(wide, [0, 0], [rows, cols], [1, 1], value.type)
        Rewriter.insert_op(cut, InsertPoint.at_start(block))
        wide.replace_uses_with_if(cut.result, lambda use: use.operation is not cut)
        if not const.result.uses:
            Rewriter.erase_op(const)
            del padded[const]


@dataclass(frozen=True)
class PadWeightRowsPass(ModulePass):
    """Constant dense weights whose rows alias in L1 become padded constants."""

    name = "pad-weight-rows"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        padded: dict[ConstantOp, ConstantOp] = {}
        for fused in [o for o in op.walk() if isinstance(o, FusedOp) and RECURRENCE_ATTR not in o.attributes]:
            pad_weights(fused, padded)
