"""`lower-graph-to-loops`: every fusion group becomes one loop-nest kernel function.

Each `graph.fused` op (and each fusable graph op outside a group, as a group of one)
gets a `loop.kernel` in the module built by `KernelBuilder` (or the kernel of an
earlier group it would duplicate), and records its name in its `nimble.kernel` attribute (plus,
where `?` dims meet in numpy broadcasting along the last axis — the one kernels vectorise
along — or in a group with several outputs, a variant assuming no `?` dim is stretched
from 1, in `nimble.no_stretch_kernel`, which the host picks when the actual shapes allow
(none where it would be the general kernel again: dims that are one symbol never stretch);
and where a conv's form depends on sizes known only at run time, its kernels in the
Winograd form, in `nimble.winograd_kernel` and `nimble.winograd_no_stretch_kernel`); the
host code keeps the group (its shapes, its place in the control flow) and later stages
turn it into a kernel launch. A group with a member that has no loop lowering keeps no
kernel and gets a `nimble.host` attribute saying why: it runs on the host through the
reference semantics (a CPU fallback, reported by `nimble.compile`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr, SymbolRefAttr, TensorType, UnitAttr
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from nimble.dialects import device, loop
from nimble.dialects.device import Device
from nimble.dialects.discardable import (
    HOST_ATTR,
    KERNEL_ATTR,
    VARIANT_ATTR,
    WINOGRAD_ATTR,
    WINOGRAD_VARIANT_ATTR,
)
from nimble.dialects.graph import ConstantOp, Conv2dOp, FusedOp, GraphOp
from nimble.dialects.graph.broadcasting import broadcast_sites
from nimble.dialects.interfaces import FusionKind
from nimble.lowering.kernels import winograd
from nimble.lowering.kernels.kernel_builder import KernelBuilder, NoLoopLowering
from nimble.lowering.kernels.shared_forms import shared_forms
from nimble.lowering.kernels.symbols import first_free, symbol_names
from nimble.passes.fuse_ops import outline


def _kernel_name(host: func.FuncOp, group: FusedOp, taken: set[str]) -> str:
    members = [o for o in group.body.block.ops if isinstance(o, GraphOp)]
    heavy = [o for o in members if o.FUSION in (FusionKind.OUT_FUSABLE, FusionKind.REDUCTION)]
    anchor = (heavy or members or [group])[0]
    name = first_free(f"{host.sym_name.data}_{anchor.name.split('.')[-1]}", taken)
    taken.add(name)
    return name


def _on_last_axis(site: tuple) -> bool:
    """A broadcast on a result's last axis: the axis kernels are vectorised along."""
    _operand, _axis, result, result_axis = site
    return result_axis == len(result.type.get_shape()) - 1


def _stretches_product(site: tuple) -> bool:
    """A broadcast of what a heavy product computes (a dense layer's rows, through its
    activation, added to a residual of any size) that another operand's dim could
    stretch (a bias has no rows: it cannot): the product's register tile would read
    its operands at a selected index (lanes along the rows need the rows' own)."""
    operand, _axis, result, result_axis = site
    rank = len(result.type.get_shape())
    others = [v.type.get_shape() for v in result.owner.operands if v is not operand and isinstance(v.type, TensorType)]
    if not any(len(shape) > rank - 1 - result_axis and shape[result_axis - rank] != 1 for shape in others):
        return False
    seen, todo = set(), [operand]
    while todo:
        op = todo.pop().owner
        if isinstance(op, GraphOp) and op not in seen:
            if op.FUSION is FusionKind.OUT_FUSABLE:
                return True
            seen.add(op)
            todo.extend(op.operands)
    return False


def _outside_groups(op: Operation) -> Iterator[Operation]:
    """The ops nested in `op`, not looking into groups (a group's ops are its kernel's)."""
    for region in op.regions:
        for block in region.blocks:
            for o in block.ops:
                yield o
                if not isinstance(o, FusedOp):
                    yield from _outside_groups(o)


def kernel_groups(host: func.FuncOp) -> list[FusedOp]:
    """Every group of `host`, after wrapping lone fusable ops into groups of one."""
    for op in list(_outside_groups(host)):
        if isinstance(op, GraphOp) and op.FUSION is not FusionKind.OPAQUE:
            outline([op])
    return [op for op in _outside_groups(host) if isinstance(op, FusedOp)]


def kernel_options(group: FusedOp, where: str) -> dict[str, bool]:
    """`KernelBuilder` options for the group's kernel on `where` (also what
    `place-devices` probes with). Nests over pixels run panel by panel
    (`KernelBuilder.pixel_panels`) on the CPU always; on a device when a conv stages im2col
    rows, each panel then a work-group's buffer (`c_groups`) instead of one image-wide
    buffer (other nests over pixels keep the plain grid, whose register tiles cover
    channels x pixels)."""
    panels = where == Device.CPU or any(isinstance(op, Conv2dOp) and op.groups.value.data == 1
                                   for op in group.body.block.ops)
    return {"pixel_panels": panels, "device": where != Device.CPU}


def _wants_variant(group: FusedOp) -> bool:
    """Whether the group also gets a kernel assuming no `?` dim is stretched (see the
    module docstring)."""
    sites = [site for o in group.body.block.ops for site in broadcast_sites(o)]
    return (any(_on_last_axis(site) or _stretches_product(site) for site in sites)
            or (bool(sites) and len(group.outputs) > 1))


def _kernel_text(kernel: loop.KernelOp) -> str:
    """The kernel's IR under a fixed name: equal texts make interchangeable kernels."""
    name = kernel.sym_name
    kernel.sym_name = StringAttr("kernel")
    try:
        return str(kernel)
    finally:
        kernel.sym_name = name


def _insert_kernel(kernel: loop.KernelOp, where: str, anchor: Operation) -> loop.KernelOp:
    """Mark `kernel` for `where` and put it after `anchor`; the new anchor."""
    if where != Device.CPU:
        kernel.attributes[loop.DEVICE_MARK] = StringAttr(where)
    Rewriter.insert_op(kernel, InsertPoint.after(anchor))
    return kernel


@dataclass(frozen=True)
class _Kernels:
    """The kernels built for a group (names; see the group attributes above)."""

    kernel: str
    variant: str | None = None
    winograd: str | None = None
    winograd_variant: str | None = None

    def mark(self, group: FusedOp) -> None:
        for attr, name in ((KERNEL_ATTR, self.kernel), (VARIANT_ATTR, self.variant), (WINOGRAD_ATTR, self.winograd),
                           (WINOGRAD_VARIANT_ATTR, self.winograd_variant)):
            if name is not None:
                group.attributes[attr] = SymbolRefAttr(name)


def lower_function(module: ModuleOp, host: func.FuncOp, taken: set[str], built: dict[tuple[str, bool, str], _Kernels],
                   folded: dict[ConstantOp, ConstantOp]) -> None:
    """Build the kernels of `host`'s groups. A group whose kernel would be one already
    built (`built`: the same loop nest, placement and variants; an imported model's
    repeated layers, weights being arguments) reuses it: every later stage, and LLVM,
    then handles it once."""
    anchor: Operation = host
    groups = [g for g in kernel_groups(host) if KERNEL_ATTR not in g.attributes and HOST_ATTR not in g.attributes]
    on_cpu = [g for g in groups if (device.placement_of(g) or Device.CPU) == Device.CPU]
    for group in on_cpu:
        winograd.fold_weights(group, folded)
    forms = shared_forms(on_cpu)  # (device kernels keep their sizes: OpenCL's entries take them as they are)
    for group in groups:
        name = _kernel_name(host, group, taken)
        where = device.placement_of(group) or Device.CPU
        options = kernel_options(group, where)
        source = forms.get(group, group)
        try:
            try:
                kernel = KernelBuilder(source, name, **options).build()
            except NoLoopLowering:
                if source is group:
                    raise
                source = group  # (a shared form the builder cannot take: the group's own sizes)
                kernel = KernelBuilder(group, name, **options).build()
        except NoLoopLowering as e:
            group.attributes[HOST_ATTR] = StringAttr(str(e))
            continue
        wants_variant = _wants_variant(source)
        text = _kernel_text(kernel)
        key = (where, wants_variant, text)
        if key in built:
            kernel.erase()
            built[key].mark(group)
            continue
        anchor = _insert_kernel(kernel, where, anchor)

        def place(suffix: str, *unless: str, **form: bool) -> tuple[func.FuncOp | None, str]:
            """Build and place the group's kernel of this `form` (and its text), unless its
            text is one of `unless`: the form changed nothing (no `?` dim the variant would
            not stretch; a conv the Winograd form does not apply to), the kernel there
            already does."""
            nonlocal anchor
            other = KernelBuilder(source, f"{name}{suffix}", **form, **options).build()
            other_text = _kernel_text(other)
            if other_text in unless:
                other.erase()
                return None, other_text
            if form.get("no_stretch"):
                other.attributes[loop.NO_STRETCH_MARK] = UnitAttr()
            anchor = _insert_kernel(other, where, anchor)
            return other, other_text

        def named(built_kernel: func.FuncOp | None) -> str | None:
            return None if built_kernel is None else built_kernel.sym_name.data

        # Shape-specialised variant: `?` dims never stretched, so every access is affine
        # in the loop ivs (vectorisable; a product's rows in lanes), and outputs whose dims
        # come out of different broadcasts share one loop nest (the LSTM cell's h and c
        # would otherwise each recompute every gate); chosen at run time when it holds.
        variant, variant_text = place("_ns", text, no_stretch=True) if wants_variant else (None, text)
        kernels = _Kernels(name, named(variant))
        if where == Device.CPU and winograd.decided_at_run_time(source.body.block.ops):
            general, general_text = place("_wg", text, winograd=True)
            special = place("_wg_ns", variant_text, general_text, no_stretch=True, winograd=True)[0] \
                if variant is not None else None
            kernels = _Kernels(name, named(variant), named(general), named(special))
        built[key] = kernels
        built[key].mark(group)
    for form in forms.values():
        form.erase()  # (its uses of the host's values go with it)


@dataclass(frozen=True)
class LowerGraphToLoopsPass(ModulePass):
    """Build one loop-nest kernel per fusion group (groups of one for lone ops)."""

    name = "lower-graph-to-loops"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        hosts = [f for f in op.body.block.ops if isinstance(f, func.FuncOp)]
        taken = symbol_names(op)
        built: dict[tuple[str, bool, str], _Kernels] = {}
        folded: dict[ConstantOp, ConstantOp] = {}
        for host in hosts:
            if host.body.blocks:
                lower_function(op, host, taken, built, folded)
