"""Discardable attributes: every key declared once, with the attribute class it holds;
the verifier checks each op's.

MLIR names a discardable attribute after the dialect that owns it and lets that dialect
verify it. xdsl keeps them in `op.attributes` unchecked, so a key misspelt where one
pass writes it or another reads it went unnoticed. Here `declare(key, *kinds)` records
a key: the `device.*` ones in `dialects/device.py`, the `vm.*` ones in
`dialects/vm.py`, `nimble.target` in `dialects/target.py`, the other `nimble.*` ones
(marks the stages leave for later ones) below;
passes import the constant, never spell the key. `check(op)` names a key of Nimble's
dialects that nobody declared, or a value of another class; `nimble.diagnostics` runs it
wherever it verifies (parsing, `nimble-opt`, after each pass with `verify_each`).
"""

from __future__ import annotations

from xdsl.dialects.builtin import DenseArrayBase, IntegerAttr, StringAttr, SymbolRefAttr, UnitAttr
from xdsl.ir import Attribute, Operation

OWNED = ("nimble.", "device.", "vm.", "loop.", "graph.", "dynshape.")
"""The prefixes (dialects) whose discardable attributes must be declared."""


DECLARED: dict[str, tuple[type[Attribute], ...]] = {}
"""Each declared key and the attribute classes its value may be."""


def declare(key: str, *kinds: type[Attribute]) -> str:
    """Declare discardable attribute `key`, whose value is one of `kinds`; returns `key`."""
    if key in DECLARED:
        raise ValueError(f"discardable attribute '{key}' is declared twice")
    DECLARED[key] = kinds
    return key


def check(op: Operation) -> str | None:
    """What is wrong with `op`'s discardable attributes, if anything."""
    for key, value in op.attributes.items():
        if not key.startswith(OWNED):
            continue
        kinds = DECLARED.get(key)
        if kinds is None:
            return f"unknown discardable attribute '{key}'"
        if not isinstance(value, kinds):
            return f"discardable attribute '{key}' holds {value}, not a {' or '.join(k.__name__ for k in kinds)}"
    return None


# ---------------------------------------------------------------------------------------
# The `nimble.*` marks: what one stage leaves for later ones


DEVICE_MARK = declare("nimble.device", StringAttr)
"""On a kernel compiled for a device other than the CPU: the device (`opencl`)."""
NO_STRETCH_MARK = declare("nimble.no_stretch", UnitAttr)
"""On a kernel built assuming no `?` dim is broadcast from 1 (the shape-specialised
variant): valid only for calls where that holds."""
EXACT_MARK = declare("nimble.exact", UnitAttr)
"""On a float `arith` op in a kernel: not to be contracted into a fused multiply-add
(the LLVM backend contracts every other one), because its rounding decides a comparison
the reference makes with separate roundings (roi_align's sample positions: a sample at
exactly -1.0 lies inside the map; with an FMA it rounded to just below and read 0)."""
COOPERATIVE_MARK = declare("nimble.cooperative", UnitAttr)
"""On a kernel whose chunks run at once and wait for each other between its loop nests
(a recurrence's, the time loop inside, or one that stages a buffer: `can_cooperate`);
they meet in the mailbox slot of the calling convention (`runtime.sync`)."""
WORK_MARK = declare("nimble.work", IntegerAttr)
"""On a kernel: `reduction_work` of its nests as scheduled, before `tile-vectorize` makes
siblings of the loops it strips (the LSTM cell's eight dot products, which add up) and
alternatives that cover different elements (tiles and their remainders, which do not)."""
SOURCE_ATTR = declare("nimble.source", StringAttr)
"""On a module: the format it was imported from (`onnx`)."""
NAMED_DIM_ATTR = declare("nimble.named_dim", StringAttr)
"""Marks a `dynshape.assert` the frontend emitted for a named dim, with the dim's name (a
hint for the printer, no meaning of its own)."""
FALLBACK_ATTR = declare("nimble.fallback", StringAttr)
"""On a fusion group `place-devices` put on the host: why its device cannot run it."""
HOST_ATTR = declare("nimble.host", StringAttr)
"""On a fusion group that runs by its reference semantics: why it has no kernel."""
KERNEL_ATTR = declare("nimble.kernel", SymbolRefAttr)
"""On a fusion group: the `loop.kernel` that computes it."""
VARIANT_ATTR = declare("nimble.no_stretch_kernel", SymbolRefAttr)
"""On a fusion group: its kernel for calls where no `?` dim is broadcast from 1."""
WINOGRAD_ATTR = declare("nimble.winograd_kernel", SymbolRefAttr)
"""On a fusion group: its kernel in the Winograd form."""
WINOGRAD_VARIANT_ATTR = declare("nimble.winograd_no_stretch_kernel", SymbolRefAttr)
"""With `WINOGRAD_ATTR`, on a group with a conv whose form sizes known only at run time
decide (`winograd.wanted`): its kernel in the Winograd form, and the no-stretch
variant's, where that form applies (a conv whose output is stretched by a broadcast
after it takes it only in the no-stretch variant). The host launches them where
`winograd.host_condition` holds (`manifest-alloc`); the group's other kernels compute the
conv from im2col rows."""
FOLDED_ATTR = declare("nimble.winograd_weights", IntegerAttr)
"""On a conv in a group: the index of the group's block argument holding its weights'
transform U, made at compile time from a constant weight (`winograd.fold_weights`)."""
RECURRENCE_ATTR = declare("nimble.recurrence", UnitAttr)
"""On a `graph.fused` holding a recurrence that one kernel computes."""
RECURRENCE_SKIPPED_ATTR = declare("nimble.recurrence_skipped", StringAttr)
"""On a `graph.while` that `lower-rnn-to-kernels` does not take: why."""
SPATIAL_ATTR = declare("nimble.spatial", SymbolRefAttr)
"""On a fusion group: the spatial program that runs its recurrence."""
SPATIAL_ARGS_ATTR = declare("nimble.spatial_args", DenseArrayBase)
"""On a spatial group: which of its inputs the program takes, in order."""
SPATIAL_COUNTER_ATTR = declare("nimble.spatial_counter", IntegerAttr)
"""On a spatial group: the position of its step counter."""
SPATIAL_STACKED_ATTR = declare("nimble.spatial_stacked", DenseArrayBase)
"""On a spatial group: the states it stacks over the steps."""
SPATIAL_SKIPPED_ATTR = declare("nimble.spatial_skipped", StringAttr)
"""On a recurrence not mapped to the spatial target: why."""
SPATIAL_REPORT_ATTR = declare("nimble.spatial_report", StringAttr)
"""On a spatial program: the design-space search's report."""
SPATIAL_SIZES_ATTR = declare("nimble.spatial_sizes", StringAttr)
"""On a spatial program: the sizes it was tuned for."""
SPATIAL_MACHINE_ATTR = declare("nimble.spatial_machine", StringAttr)
"""On a spatial program: the machine it was tuned for."""
