"""Matrix products: `matmul` (numpy semantics with batch broadcasting), `dense`, and
`einsum` (a sum of products over named axes)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
from xdsl.dialects.builtin import StringAttr, TensorType
from xdsl.ir import Attribute
from xdsl.irdl import (
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
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


def parse_equation(equation: str, operands: int) -> tuple[list[str], str]:
    """The subscripts of each operand and of the result of an explicit equation without
    ellipsis (`ij,jk->ik`); ShapeError otherwise."""
    lhs, arrow, out = equation.replace(" ", "").partition("->")
    inputs = lhs.split(",")
    if not arrow or "." in equation:
        raise ShapeError(f"equation '{equation}' must be explicit (`->`) and without '...'")
    if len(inputs) != operands:
        raise ShapeError(f"equation '{equation}' has {len(inputs)} operand subscripts for {operands} operands")
    if not all(c.isalpha() and c.isascii() for c in "".join(inputs) + out):
        raise ShapeError(f"equation '{equation}': subscripts are letters")
    if len(set(out)) != len(out) or not set(out) <= set("".join(inputs)):
        raise ShapeError(f"equation '{equation}': each result subscript once, and each an operand's")
    return inputs, out


@irdl_op_definition
class EinsumOp(GraphOp):
    """Einstein summation: the result at each value of its subscripts is the product of
    the operands at theirs, summed over the subscripts the result lacks. The equation
    is explicit and has no ellipsis (the ONNX importer expands ONNX's); a subscript's
    dims agree across operands or are 1 (broadcast); a subscript repeated in one operand
    takes its diagonal.

    Example: `%c = graph.einsum %a, %b {equation = "bij,bjk->bik"} : (tensor<?x4x8xf32>, tensor<?x8x5xf32>) -> tensor<?x4x5xf32>`
    """

    name = "graph.einsum"
    inputs = var_operand_def(TensorType)
    result = result_def(TensorType)
    equation = prop_def(StringAttr)
    assembly_format = "$inputs attr-dict `:` functional-type($inputs, $result)"
    irdl_options = (ParsePropInAttrDict(),)
    traits = traits_def(Pure(), GraphFolder())
    FUSION: ClassVar[FusionKind] = FusionKind.OUT_FUSABLE

    def subscripts(self) -> tuple[list[str], str]:
        return parse_equation(self.equation.data, len(self.inputs))

    def letter_dims(self, k: DimAlgebra) -> dict[str, Any]:
        """Each subscript's dim (broadcast over its operands')."""
        inputs, _ = self.subscripts()
        sizes: dict[str, Any] = {}
        for v, letters in zip(self.inputs, inputs):
            dims = k.dims(v)
            if len(dims) != len(letters):
                raise ShapeError(f"subscripts '{letters}' for an operand of rank {len(dims)}")
            for c, d in zip(letters, dims):
                sizes[c] = d if c not in sizes else k.broadcast(sizes[c], d, f"subscript '{c}': dims differ")
        return sizes

    def shape_function(self, k: DimAlgebra) -> list[list[Any]]:
        sizes = self.letter_dims(k)
        return [[sizes[c] for c in self.subscripts()[1]]]

    def result_element_types(self) -> list[Attribute]:
        if not self.inputs:
            raise ShapeError("needs at least one operand")
        return _same_element_type(self)

    def reference(self, *xs: Any) -> Sequence[Any]:
        inputs, out = self.subscripts()
        sizes: dict[str, int] = {}
        for x, letters in zip(xs, inputs):
            for c, d in zip(letters, x.shape):
                sizes[c] = max(sizes.get(c, 1), d)
        stretched = [np.broadcast_to(x, [sizes[c] if d == 1 else d for c, d in zip(letters, x.shape)])
                     for x, letters in zip(xs, inputs)]
        result = np.einsum(f"{','.join(inputs)}->{out}", *stretched) if xs else np.zeros(())
        return [as_tensor(np.asarray(result), self.result.type.element_type)]
