"""One kernel for the groups that differ only in sizes: layers of one kind at many widths.

An imported model's layers have static shapes, and a kernel is built for each group's
shapes: DenseNet-121's 58 1x1 convs, each reading one more concat slice than the last,
make 58 kernels that differ only in a channel count (and as many BN + ReLU + concat
kernels), each through the kernel passes and LLVM. `shared_forms` finds the groups that
are the same up to their sizes and gives each a *form*: the group with the sizes that
differ between them as named symbols (`#nimble.dims`), from which one kernel serves them
all (its sizes read from the buffers at run time).

Two groups are of one class when their bodies print alike once every input dim over
`MAX_STATIC` is a symbol, dims of equal size the same symbol: equal ops, attributes and
constants, and the same dims equal. Of a class's symbols only those that differ between
its groups and that no output dim is made of (sizes reduced over: a conv's input
channels, a dense layer's input width) become dynamic in its form; the others keep their
sizes, so the loop nest over the outputs, its tiles, remainders and vector widths, stays
what it was. Dims up to `MAX_STATIC` (broadcast 1s, window sizes, the taps a conv
unrolls) always stay static, and a form that a broadcast could stretch where its group
could not is not used: its kernel would check and index through it.

The VM launches a shared kernel for each group with the group's sizes as its `?` dims
(`KernelEntry.fit`), and checks the launches against the join of the groups' types
(`manifest-alloc`).
"""

from __future__ import annotations

import io
from collections.abc import Sequence

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Attribute, Block, Region
from xdsl.printer import Printer
from xdsl.rewriter import Rewriter
from xdsl.utils.exceptions import VerifyException

from nimble.dialects.dim_expr import Expr
from nimble.dialects.graph import FusedOp, GraphOp
from nimble.dialects.graph.broadcasting import broadcast_sites
from nimble.dialects.graph.types import symbolic_dims, tensor

MAX_STATIC = 16
"""Input dims up to this size are never made symbols (see the module docstring)."""
MIN_SHARED = 4
"""The fewest kernels a shared form replaces. A dynamic size costs at run time (a 1x1
conv's input channels: its rows' strides no longer constants; measured, 2 threads,
batch 3: GoogLeNet's 192 -> 64 at 28 x 28 280 -> 380 us a launch, DenseNet-121's
160 -> 128 at 56 x 56 1.70 -> 1.79 ms), which only many layers' kernels made once
outweigh: DenseNet-121's classes have 5 to 24 (129 kernels -> 77, its cold compile
halved), GoogLeNet's mostly 2."""


def shared_forms(groups: Sequence[FusedOp]) -> dict[FusedOp, FusedOp]:
    """The form to build each group's kernel from, for the groups that share one with a
    group of other sizes (the others are built as they are). A form uses the group's
    inputs (erase it once built from)."""
    classes: dict[str, list[tuple[FusedOp, list[int]]]] = {}
    inner: dict[str, set[int]] = {}
    for group in groups:
        sizes = _sizes(group)
        form = _form(group, sizes, set(range(len(sizes))))
        if form is not None:
            text = _text(form)
            classes.setdefault(text, []).append((group, sizes))
            inner[text] = set(range(len(sizes))) - _output_symbols(group, form, sizes)
            form.erase()
    forms: dict[FusedOp, FusedOp] = {}
    for text, members in classes.items():
        if len({tuple(sizes[i] for i in inner[text]) for _, sizes in members}) < MIN_SHARED:
            continue
        varying = {i for i in inner[text] if len({sizes[i] for _, sizes in members}) > 1}
        for group, sizes in members:
            form = _form(group, sizes, varying)
            if form is not None and _sites(form) <= _sites(group):
                forms[group] = form
            elif form is not None:
                form.erase()
    return forms


def _output_symbols(group: FusedOp, form: FusedOp, sizes: list[int]) -> set[int]:
    """The symbols (indices into `sizes`) that the output dims of `group`'s form are made of."""
    names = {name for v in form.body.block.last_op.operands if isinstance(v.type, TensorType)
             for d in symbolic_dims(v.type) if isinstance(d, Expr) for name in d.symbols()}
    prefix = _prefix(group)
    return {i for i in range(len(sizes)) if f"{prefix}{i}" in names}


def _sites(group: FusedOp) -> int:
    """How many dims a broadcast in the group might stretch at run time: a form with more
    than its group would check them at each launch and index through them."""
    return sum(len(broadcast_sites(op)) for op in group.body.block.ops)


def _text(form: FusedOp) -> str:
    """The form's body as text (its inputs, values outside it, left out)."""
    out = io.StringIO()
    Printer(stream=out).print_region(form.body)
    return out.getvalue()


def _sizes(group: FusedOp) -> list[int]:
    """The distinct input dims over `MAX_STATIC`, in the order they first appear (a
    symbol each: `size0`, `size1`, ...)."""
    sizes: list[int] = []
    for arg in group.body.block.args:
        if isinstance(arg.type, TensorType):
            for d in arg.type.get_shape():
                if d > MAX_STATIC and d not in sizes:
                    sizes.append(d)
    return sizes


def _form(group: FusedOp, sizes: list[int], symbols: set[int]) -> FusedOp | None:
    """A detached copy of `group` whose input dims of `sizes[i]`, for `i` in `symbols`,
    are symbol `{_prefix(group)}{i}`, every type in its body inferred again from them;
    None if an op's shape function rejects them."""
    if not symbols:
        return None
    prefix = _prefix(group)
    names = {sizes[i]: Expr.symbol(f"{prefix}{i}") for i in symbols}
    block = Block(arg_types=[_named(a.type, names) for a in group.body.block.args])
    body = group.body.clone()
    old = body.block
    for new_arg, old_arg in zip(block.args, old.args):
        old_arg.replace_all_uses_with(new_arg)
    for op in list(old.ops):
        op.detach()
        block.add_op(op)
        if isinstance(op, GraphOp):
            try:
                types = op.infer_result_types()
            except (VerifyException, NotImplementedError):
                return None
            for result, t in zip(list(op.results), types):
                if result.type != t:
                    Rewriter.replace_value_with_new_type(result, t)
    for value in [*block.args, *(r for op in block.ops for r in op.results)]:
        value.name_hint = None  # (the model's names would tell equal forms apart)
    form = FusedOp(group.inputs, [v.type for v in block.last_op.operands], Region(block))
    form.attributes.update(group.attributes)
    return form


def _prefix(group: FusedOp) -> str:
    """The names of the symbols of `group`'s form: `size0`, `size1`, ... with as many `_`
    before as makes them names that no input type of the group already has."""
    taken = {name for a in group.body.block.args if isinstance(a.type, TensorType)
             for d in symbolic_dims(a.type) if isinstance(d, Expr) for name in d.symbols()}
    prefix = "size"
    while any(name.startswith(prefix) for name in taken):
        prefix = "_" + prefix
    return prefix


def _named(t: Attribute, names: dict[int, Expr]) -> Attribute:
    if not isinstance(t, TensorType):
        return t
    return tensor(t.element_type, [names.get(d, d) if isinstance(d, int) else d for d in symbolic_dims(t)])
