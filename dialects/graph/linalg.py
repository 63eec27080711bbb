"""Matrix products: `matmul` (numpy semantics with batch broadcasting) and `dense`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Attribute
from xdsl.irdl import irdl_op_definition, operand_def, opt_operand_def, result_def, traits_def
from xdsl.traits import Pure

from nimble.dialects.interfaces import FusionKind
from nimble.dialects.graph.base import GraphOp, as_tensor, broadcast_dims
from nimble.dialects.graph.folding import GraphFolder
from nimble.dialects.shape_functions import DimAlgebra, ShapeError


def _same_element_type(op: GraphOp) -> list[Attribute]:
    elements = {v.type.element_type for v in op.operands}
    if len(elements) != 1:
        raise ShapeError("operands must have the same element type")
    return [op.operands[0].type.element_type]


@irdl_op_definition
class MatmulOp(GraphOp):
    """Matrix product with numpy semantics: 1-D operands are promoted, batch dims broadcast.

    Example: `%c = graph.matmul %a, %b : (tensor<?x?x64xf32>, tensor<64x32xf32>) -> tensor<?x?x32xf32>`
    """

    name = "graph.matmul"
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)"
    traits = traits_def(Pure(), GraphFolder())
    FUSION: ClassVar[FusionKind] = FusionKind.OUT_FUSABLE

    def shape_function(self, k: DimAlgebra) -> list[list[Any]]:
        a, b = k.dims(self.lhs), k.dims(self.rhs)
        if not a or not b:
            raise ShapeError("operands must have rank >= 1")
        a2 = [1, *a] if len(a) == 1 else a
        b2 = [*b, 1] if len(b) == 1 else b
        k.equal(a2[-1], b2[-2], "contracting dims differ")
        batch = broadcast_dims(k, a2[:-2], b2[:-2])
        rows = [] if len(a) == 1 else [a2[-2]]
        cols = [] if len(b) == 1 else [b2[-1]]
        return [batch + rows + cols]

    def result_element_types(self) -> list[Attribute]:
        return _same_element_type(self)

    def reference(self, a: Any, b: Any) -> Sequence[Any]:
        return [as_tensor(np.matmul(a, b), self.result.type.element_type)]


@irdl_op_definition
class DenseOp(GraphOp):
    """Fully connected layer `x @ weight^T (+ bias)`; weight is `[units, in]`.

    Example: `%y = graph.dense %x, %w, %b : (tensor<?x512xf32>, tensor<1024x512xf32>, tensor<1024xf32>) -> tensor<?x1024xf32>`
    """

    name = "graph.dense"
    input = operand_def(TensorType)
    weight = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = (
        "$input `,` $weight (`,` $bias^)? attr-dict `:` functional-type(operands, results)"
    )
    traits = traits_def(Pure(), GraphFolder())
    FUSION: ClassVar[FusionKind] = FusionKind.OUT_FUSABLE

    def shape_function(self, k: DimAlgebra) -> list[list[Any]]:
        x, w = k.dims(self.input), k.dims(self.weight)
        if not x:
            raise ShapeError("input must have rank >= 1")
        if len(w) != 2:
            raise ShapeError(f"weight must have rank 2, not {len(w)}")
        k.equal(x[-1], w[1], "input features and weight dim 1 differ")
        if self.bias is not None:
            bias = k.dims(self.bias)
            if len(bias) != 1:
                raise ShapeError(f"bias must have rank 1, not {len(bias)}")
            k.equal(bias[0], w[0], "bias size and weight dim 0 differ")
        return [x[:-1] + [w[0]]]

    def result_element_types(self) -> list[Attribute]:
        return _same_element_type(self)

    def reference(self, x: Any, w: Any, bias: Any = None) -> Sequence[Any]:
        y = np.matmul(x, np.swapaxes(w, 0, 1))
        if bias is not None:
            y = y + bias
        return [as_tensor(y, self.result.type.element_type)]
