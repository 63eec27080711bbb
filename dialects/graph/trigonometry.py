"""The trigonometric and hyperbolic functions beyond sin and cos (ONNX's Tan, Asin, Acos,
Atan, Sinh, Cosh, Asinh, Acosh, Atanh): elementwise on floats, NaN outside their domains
as numpy and the C library give. Kernels compute them with the C library's functions,
one element at a time (`lower-loops-to-llvm`'s `_LIBM`; OpenCL's built-ins)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np
from xdsl.irdl import irdl_op_definition

from nimble.dialects.graph.elementwise import ElementwiseUnaryOp


@irdl_op_definition
class TanOp(ElementwiseUnaryOp):
    """Elementwise tangent.

    Example: `%y = graph.tan %x : tensor<?x4xf32> -> tensor<?x4xf32>`
    """

    name = "graph.tan"
    FN: ClassVar[Callable[[Any], Any]] = staticmethod(np.tan)


@irdl_op_definition
class AsinOp(ElementwiseUnaryOp):
    """Elementwise arc sine (NaN outside [-1, 1]).

    Example: `%y = graph.asin %x : tensor<?x4xf32> -> tensor<?x4xf32>`
    """

    name = "graph.asin"
    FN: ClassVar[Callable[[Any], Any]] = staticmethod(np.arcsin)


@irdl_op_definition
class AcosOp(ElementwiseUnaryOp):
    """Elementwise arc cosine (NaN outside [-1, 1]).

    Example: `%y = graph.acos %x : tensor<?x4xf32> -> tensor<?x4xf32>`
    """

    name = "graph.acos"
    FN: ClassVar[Callable[[Any], Any]] = staticmethod(np.arccos)


@irdl_op_definition
class AtanOp(ElementwiseUnaryOp):
    """Elementwise arc tangent.

    Example: `%y = graph.atan %x : tensor<?x4xf32> -> tensor<?x4xf32>`
    """

    name = "graph.atan"
    FN: ClassVar[Callable[[Any], Any]] = staticmethod(np.arctan)


@irdl_op_definition
class SinhOp(ElementwiseUnaryOp):
    """Elementwise hyperbolic sine.

    Example: `%y = graph.sinh %x : tensor<?x4xf32> -> tensor<?x4xf32>`
    """

    name = "graph.sinh"
    FN: ClassVar[Callable[[Any], Any]] = staticmethod(np.sinh)


@irdl_op_definition
class CoshOp(ElementwiseUnaryOp):
    """Elementwise hyperbolic cosine.

    Example: `%y = graph.cosh %x : tensor<?x4xf32> -> tensor<?x4xf32>`
    """

    name = "graph.cosh"
    FN: ClassVar[Callable[[Any], Any]] = staticmethod(np.cosh)


@irdl_op_definition
class AsinhOp(ElementwiseUnaryOp):
    """Elementwise inverse hyperbolic sine.

    Example: `%y = graph.asinh %x : tensor<?x4xf32> -> tensor<?x4xf32>`
    """

    name = "graph.asinh"
    FN: ClassVar[Callable[[Any], Any]] = staticmethod(np.arcsinh)


@irdl_op_definition
class AcoshOp(ElementwiseUnaryOp):
    """Elementwise inverse hyperbolic cosine (NaN below 1).

    Example: `%y = graph.acosh %x : tensor<?x4xf32> -> tensor<?x4xf32>`
    """

    name = "graph.acosh"
    FN: ClassVar[Callable[[Any], Any]] = staticmethod(np.arccosh)


@irdl_op_definition
class AtanhOp(ElementwiseUnaryOp):
    """Elementwise inverse hyperbolic tangent (NaN outside [-1, 1], infinite at +-1).

    Example: `%y = graph.atanh %x : tensor<?x4xf32> -> tensor<?x4xf32>`
    """

    name = "graph.atanh"
    FN: ClassVar[Callable[[Any], Any]] = staticmethod(np.arctanh)


TRIGONOMETRIC_OPS = [TanOp, AsinOp, AcosOp, AtanOp, SinhOp, CoshOp, AsinhOp, AcoshOp, AtanhOp]
