"""`matmul-to-dense`: a matrix product by a constant matrix becomes a dense layer over
the matrix's transpose, transposed once at compile time.

`x @ W` with `W[K, N]` a `graph.constant` (an ONNX MatMul's or Gemm's weight) reads W
down its columns: with few rows of x the kernel steps through K rows N floats apart
for every panel of columns, and from 4 rows it packs W's panels at every call.
`dense(x, W^T)` reads the rows of `W^T`, contiguous along K: dot products for 1 to 15
rows, lanes along x's rows from 16 to 511 (`passes/loop_transforms/row_lanes.py`), transposed panels
beyond. Measured per call, 1 thread, `x @ W` against `dense(x, W^T)` (ms):
512 x 1024 at 1 / 4 / 16 / 128 rows 0.072 / 0.109 / 0.229 / 1.34 against
0.039 / 0.056 / 0.205 / 1.31; 768 x 3072 at 1 / 8 / 32 rows 0.32 / 0.72 / 1.88 against
0.17 / 0.40 / 1.38; from 512 rows dense is 1-2% slower (its panels are transposed).

A weight that is the transpose of a constant (`transpose(c, [1, 0])`, Gemm's `transB`
when the transpose was not folded) needs no copy: the dense layer reads `c` itself.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import AnyFloat, ModuleOp, TensorType
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from nimble.dialects import graph
from nimble.dialects.graph.folding import array_to_dense, constant_array


def _weight_matrix(w: SSAValue) -> bool:
    t = w.type
    return isinstance(t, TensorType) and len(t.get_shape()) == 2 and t.has_static_shape() \
        and isinstance(t.element_type, AnyFloat)


class _ConstantWeight(RewritePattern):
    """`matmul(x, W)` -> `dense(x, W^T)`; every product by one constant shares one
    transposed copy (placed right after the constant)."""

    def __init__(self) -> None:
        self.transposed: dict[SSAValue, SSAValue] = {}

    def _transpose(self, w: SSAValue, rewriter: PatternRewriter) -> SSAValue | None:
        owner = w.owner
        if isinstance(owner, graph.TransposeOp) and list(owner.perm.get_values()) == [1, 0] \
                and isinstance(owner.input.owner, graph.ConstantOp):
            return owner.input
        if not isinstance(owner, graph.ConstantOp):
            return None
        if w not in self.transposed:
            k, n = w.type.get_shape()
            value = array_to_dense(constant_array(w).T, TensorType(w.type.element_type, [n, k]))
            constant = graph.ConstantOp(value)
            rewriter.insert(constant, InsertPoint.after(owner))
            self.transposed[w] = constant.result
        return self.transposed[w]

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.MatmulOp, rewriter: PatternRewriter) -> None:
        if not isinstance(op.lhs.type, TensorType) or not op.lhs.type.get_shape() or not _weight_matrix(op.rhs):
            return
        weight = self._transpose(op.rhs, rewriter)
        if weight is None:
            return
        old = op.rhs.owner
        rewriter.replace(op, graph.DenseOp(operands=[op.lhs, weight, []], result_types=[op.result.type]))
        if not old.results[0].uses:  # the constant (or transpose) only products read
            rewriter.erase(old)


@dataclass(frozen=True)
class MatmulToDensePass(ModulePass):
    """Matrix products by constant matrices as dense layers over their transposes."""

    name = "matmul-to-dense"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(_ConstantWeight(), apply_recursively=False).rewrite_module(op)
