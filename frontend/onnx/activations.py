"""ONNX's elementwise activations that the graph dialect has no op for, written with
graph ops (most are ONNX function ops, defined as these computations)."""

from __future__ import annotations

from nimble.dialects import graph
from nimble.frontend.onnx.common import scalar


def _activation(f):
    """An elementwise activation written with graph ops: f(b, x, attributes)."""
    return lambda b, n, xs, a: [f(b, xs[0], a)]


def _softplus(b, x, a):  # log(1 + exp(x)), stable: max(x, 0) + log(1 + exp(-|x|))
    zero, one = scalar(b, 0, x), scalar(b, 1, x)
    tail = b.op(graph.LogOp, [b.op(graph.AddOp, [one, b.op(graph.ExpOp, [b.op(graph.NegOp, [b.op(graph.AbsOp, [x])])])])])
    return b.op(graph.AddOp, [b.op(graph.MaximumOp, [x, zero]), tail])


def _softsign(b, x, a):
    return b.op(graph.DivOp, [x, b.op(graph.AddOp, [scalar(b, 1, x), b.op(graph.AbsOp, [x])])])


def _hard_sigmoid(b, x, a):
    alpha, beta = a.get("alpha", 0.2), a.get("beta", 0.5)
    y = b.op(graph.AddOp, [b.op(graph.MulOp, [x, scalar(b, alpha, x)]), scalar(b, beta, x)])
    return b.op(graph.ClipOp, [y], min=0.0, max=1.0)


def _hard_swish(b, x, a):
    return b.op(graph.MulOp, [x, _hard_sigmoid(b, x, {"alpha": 1 / 6, "beta": 0.5})])


def _elu(b, x, a):
    alpha = scalar(b, a.get("alpha", 1.0), x)
    negative = b.op(graph.MulOp, [alpha, b.op(graph.SubOp, [b.op(graph.ExpOp, [x]), scalar(b, 1, x)])])
    return b.op(graph.WhereOp, [b.op(graph.LessOp, [x, scalar(b, 0, x)]), negative, x])


def _selu(b, x, a):
    alpha, gamma = a.get("alpha", 1.67326319217681884765625), a.get("gamma", 1.05070102214813232421875)
    return b.op(graph.MulOp, [_elu(b, x, {"alpha": alpha}), scalar(b, gamma, x)])


def _celu(b, x, a):  # max(0, x) + min(0, alpha * (exp(x / alpha) - 1)): alpha * elu(x / alpha)
    alpha = scalar(b, a.get("alpha", 1.0), x)
    return b.op(graph.MulOp, [_elu(b, b.op(graph.DivOp, [x, alpha]), {"alpha": 1.0}), alpha])


def _mish(b, x, a):  # x * tanh(softplus(x))
    return b.op(graph.MulOp, [x, b.op(graph.TanhOp, [_softplus(b, x, a)])])


def _swish(b, x, a):  # x * sigmoid(alpha * x)
    return b.op(graph.MulOp, [x, b.op(graph.SigmoidOp, [b.op(graph.MulOp, [x, scalar(b, a.get("alpha", 1.0), x)])])])


def _shrink(b, x, a):  # x + bias below -lambd, x - bias above lambd, 0 between
    bias, lambd = scalar(b, a.get("bias", 0.0), x), a.get("lambd", 0.5)
    above = b.op(graph.WhereOp, [b.op(graph.GreaterOp, [x, scalar(b, lambd, x)]), b.op(graph.SubOp, [x, bias]),
                                 scalar(b, 0, x)])
    return b.op(graph.WhereOp, [b.op(graph.LessOp, [x, scalar(b, -lambd, x)]), b.op(graph.AddOp, [x, bias]), above])


def _thresholded_relu(b, x, a):
    return b.op(graph.WhereOp, [b.op(graph.GreaterOp, [x, scalar(b, a.get("alpha", 1.0), x)]), x, scalar(b, 0, x)])


def _sign(b, x, a):
    zero = scalar(b, 0, x)
    below = b.op(graph.WhereOp, [b.op(graph.LessOp, [x, zero]), scalar(b, -1, x), zero])
    return b.op(graph.WhereOp, [b.op(graph.GreaterOp, [x, zero]), scalar(b, 1, x), below])


def _prelu(b, n, xs, a):
    x, slope = xs[0], xs[1]
    return [b.op(graph.WhereOp, [b.op(graph.LessOp, [x, scalar(b, 0, x)]), b.op(graph.MulOp, [x, slope]), x])]


CONVERTERS = {
    "Softplus": _activation(_softplus), "Softsign": _activation(_softsign), "HardSigmoid": _activation(_hard_sigmoid),
    "HardSwish": _activation(_hard_swish), "Elu": _activation(_elu), "Selu": _activation(_selu),
    "Celu": _activation(_celu), "Mish": _activation(_mish), "Swish": _activation(_swish),
    "Shrink": _activation(_shrink), "ThresholdedRelu": _activation(_thresholded_relu), "Sign": _activation(_sign),
    "PRelu": _prelu,
}
"""The converters of this module, by ONNX op type (`ops.CONVERTERS` includes them)."""
