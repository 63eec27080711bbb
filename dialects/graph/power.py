"""`graph.pow`: elementwise power, and its rewrite of small constant integer exponents."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np
from xdsl.irdl import irdl_op_definition, traits_def
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern
from xdsl.traits import HasCanonicalizationPatternsTrait, Pure

from nimble.dialects.graph.elementwise import ElementwiseBinaryOp, MulOp
from nimble.dialects.graph.folding import GraphFolder, is_identity_for
from nimble.dialects.graph.types import is_float


class _PowCanonicalization(HasCanonicalizationPatternsTrait):
    @classmethod
    def get_canonicalization_patterns(cls) -> tuple[RewritePattern, ...]:
        return (_PowBySmallInteger(),)


@irdl_op_definition
class PowOp(ElementwiseBinaryOp):
    """Elementwise power `lhs ** rhs`.

    Example: `%c = graph.pow %a, %b : (tensor<?xf32>, tensor<f32>) -> tensor<?xf32>`
    """

    name = "graph.pow"
    traits = traits_def(Pure(), GraphFolder(), _PowCanonicalization())
    FN: ClassVar[Callable[[Any, Any], Any]] = staticmethod(np.power)
    RIGHT_IDENTITY: ClassVar[float | None] = 1.0


class _PowBySmallInteger(RewritePattern):
    """`x ** 2` and `x ** 3` of floats by a constant (GPT-2's tanh GELU: `x ** 3.0`) are
    products, not `powf` calls (exp and log per element). Only where the exponent
    cannot broadcast `x` to a larger shape."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: PowOp, rewriter: PatternRewriter) -> None:
        x = op.lhs
        if op.result.type != x.type or not is_float(x.type.element_type):
            return
        for exponent in (2.0, 3.0):
            if is_identity_for(op.rhs, exponent, x):
                square = MulOp.create(operands=[x, x], result_types=[x.type])
                product = [square] if exponent == 2.0 else \
                    [square, MulOp.create(operands=[square.result, x], result_types=[x.type])]
                rewriter.replace(op, product, [product[-1].result])
                return
