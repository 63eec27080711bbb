"""Index rules of the contractions: `matmul`, `dense` and `einsum`, each a `loop.reduce`
of products at the output index (`index_rules.py` says what a rule is)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from xdsl.ir import SSAValue

from nimble.dialects import arith, graph, loop
from nimble.lowering.kernels.kernel_parts import Dim, bcast_axis, broadcast_axes
from nimble.lowering.kernels.scalar import is_float

if TYPE_CHECKING:
    from nimble.lowering.kernels.kernel_builder import KernelBuilder


def _mac(kb: KernelBuilder, a: SSAValue, b: SSAValue) -> SSAValue:
    if is_float(a.type):
        return kb.emit(arith.MulfOp(a, b))
    return kb.emit(arith.MuliOp(a, b))


def matmul(kb: KernelBuilder, op: graph.MatmulOp, r: int, idx: list[Dim]) -> SSAValue:
    a_dims, b_dims = kb.dims(op.lhs), kb.dims(op.rhs)
    out_dims = kb.dims(op.result)
    rows = [] if len(a_dims) == 1 else [idx[len(idx) - 1 - (len(b_dims) > 1)]]
    cols = [] if len(b_dims) == 1 else [idx[-1]]
    batch = idx[:len(idx) - len(rows) - len(cols)]
    batch_dims = out_dims[:len(batch)]
    a_batch = broadcast_axes(kb, a_dims[:-2], batch_dims, batch)
    b_batch = broadcast_axes(kb, b_dims[:-2], batch_dims, batch)
    t = op.result.type.get_element_type()
    return kb.reduce_nest([a_dims[-1]], kb.identity(loop.Combiner.ADD, t), loop.Combiner.ADD, lambda k: _mac(
        kb, kb.at(op.lhs, [*a_batch, *rows, k[0]]), kb.at(op.rhs, [*b_batch, k[0], *cols])))


def einsum(kb: KernelBuilder, op: graph.EinsumOp, r: int, idx: list[Dim]) -> SSAValue:
    """The product of the operands at the subscripts' indices, summed over those the
    result lacks (a dim of 1 broadcast)."""
    inputs, out = op.subscripts()
    at = dict(zip(out, idx))
    size = op.letter_dims(kb.k)  # (the op's shape function, on the kernel's dims)
    summed = [c for c in dict.fromkeys("".join(inputs)) if c not in at]
    t = op.result.type.get_element_type()

    def product(ks: list[SSAValue]) -> SSAValue:
        index = {**at, **dict(zip(summed, ks))}
        factors = [kb.at(v, [bcast_axis(kb, d, size[c], index[c]) for c, d in zip(letters, kb.dims(v))])
                   for v, letters in zip(op.inputs, inputs)]
        value = factors[0]
        for f in factors[1:]:
            value = _mac(kb, value, f)
        return value

    if not summed:
        return product([])
    add = loop.Combiner.ADD
    return kb.reduce_nest([size[c] for c in summed], kb.identity(add, t), add, product)


def dense(kb: KernelBuilder, op: graph.DenseOp, r: int, idx: list[Dim]) -> SSAValue:
    x_dims = kb.dims(op.input)
    t = op.result.type.get_element_type()
    n = idx[-1]
    acc = kb.reduce_nest([x_dims[-1]], kb.identity(loop.Combiner.ADD, t), loop.Combiner.ADD, lambda k: _mac(
        kb, kb.at(op.input, [*idx[:-1], k[0]]), kb.at(op.weight, [n, k[0]])))
    if op.bias is not None:
        acc = kb.emit(arith.AddfOp(acc, kb.at(op.bias, [n])) if is_float(t) else arith.AddiOp(acc, kb.at(op.bias, [n])))
    return acc
