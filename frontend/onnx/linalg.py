"""Converters of ONNX's products: MatMul, Gemm and Einsum."""

from __future__ import annotations

import numpy as np

from nimble.dialects import graph
from nimble.frontend.onnx.common import OnnxImportError, dtype_of


def matmul(b, n, xs, a):
    return [b.op(graph.MatmulOp, xs[:2])]


def einsum(b, n, xs, a):
    """ONNX's equation made explicit for `graph.einsum`: `...` becomes letters the
    equation does not use (right-aligned, as numpy broadcasts), and an implicit result
    is the letters used once, sorted, after the ellipsis's."""
    equation = a["equation"].decode() if isinstance(a["equation"], bytes) else a["equation"]
    lhs, arrow, out = equation.replace(" ", "").partition("->")
    inputs = lhs.split(",")
    if len(inputs) != len(xs):
        raise OnnxImportError(f"{b.where()}: equation '{equation}' has {len(inputs)} operands, the node {len(xs)}")
    free = [c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz" if c not in equation]
    ranks = [len(x.type.get_shape()) - (len(term) - 3) for x, term in zip(xs, inputs) if "..." in term]
    if any(r < 0 for r in ranks) or len(free) < max(ranks, default=0):
        raise OnnxImportError(f"{b.where()}: '...' in '{equation}' does not fit the operands' ranks")
    ellipsis = "".join(free[:max(ranks, default=0)])
    expanded = [term.replace("...", ellipsis[len(ellipsis) - (len(x.type.get_shape()) - len(term) + 3):])
                if "..." in term else term for x, term in zip(xs, inputs)]
    if arrow:
        result = out.replace("...", ellipsis)
    else:
        letters = "".join(inputs).replace("...", "")
        result = ellipsis + "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    return [b.op(graph.EinsumOp, xs, equation=f"{','.join(expanded)}->{result}")]


def gemm(b, n, xs, a):
    x, w = xs[0], xs[1]
    if a.get("transA", 0):
        x = b.op(graph.TransposeOp, [x], perm=[1, 0])
    if a.get("transB", 0):
        w = b.op(graph.TransposeOp, [w], perm=[1, 0])
    y = b.op(graph.MatmulOp, [x, w])
    alpha, beta = a.get("alpha", 1.0), a.get("beta", 1.0)
    if alpha != 1.0:
        y = b.op(graph.MulOp, [y, b.const(np.array(alpha, dtype_of(y)))])
    if len(xs) > 2 and xs[2] is not None:
        c = xs[2]
        if beta != 1.0:
            c = b.op(graph.MulOp, [c, b.const(np.array(beta, dtype_of(c)))])
        y = b.op(graph.AddOp, [y, c])
    return [y]


CONVERTERS = {"MatMul": matmul, "Gemm": gemm, "Einsum": einsum}
"""The converters of this module, by ONNX op type (`ops.CONVERTERS` includes them)."""
