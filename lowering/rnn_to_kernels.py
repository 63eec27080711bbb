"""`lower-rnn-to-kernels`: a recurrence becomes one CPU kernel, its time loop inside.

A recurrence (`lower-rnn-to-spatial`'s: a counted `graph.while` over a cell of graph
ops) run by the VM costs a few dozen instructions and a kernel launch or two per step;
at batch 1 that is most of an LSTM's time. Here the whole loop becomes one kernel
(`build_program(..., target="cpu")`): the cell's ops are one loop nest per step (all
gates of a hidden unit in one reduction, the reduction over `concat(x, h)` split in its
two parts), the states live in kernel-local buffers, the weights are read in place.

The host keeps the loop inside a `graph.fused` marked `nimble.recurrence`, with the
body flattened (calls inlined, groups opened): its operands are the kernel's inputs
(every value the body reads), its results the final states. It stands for the loop as
any group stands for its ops: its reference semantics is the loop, `manifest-alloc`
gives each state's output the initial state's dims, and the VM checks, per launch
shapes, that a step keeps every state's shape (then every step does) and that the
body's shape checks hold at the first and last counter values, before the kernel
runs; a launch where a step would change a state's shape (a state broadcast by the
first step) runs the loop by its reference semantics instead. A state that stacks
every step's rows (`WhileOp.stacked`: ONNX's `Y`, after the earlier rows or, in a
reverse loop, before them) is the exception: its output has `max(bound, 0)` times the
rows more, and the kernel writes each step's rows at their place.

Loops the kernel cannot take keep the reason in `nimble.recurrence_skipped`: a stacked
state that the step also reads, bodies with control flow or ops without a loop
lowering. The `llvm` target runs this pass (the OpenCL targets place a loop's groups
on their devices instead).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import (
    IndexType,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    SymbolRefAttr,
    UnitAttr,
)
from xdsl.ir import Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from nimble.dialects import arith, dynshape, loop
from nimble.dialects.device import Device
from nimble.dialects.discardable import KERNEL_ATTR, RECURRENCE_ATTR
from nimble.dialects.discardable import RECURRENCE_SKIPPED_ATTR as SKIPPED_ATTR
from nimble.dialects.graph import ConstantOp, FusedOp, GraphOp, SliceOp, WhileOp, YieldOp
from nimble.dialects.graph.fusion import fused_region
from nimble.dialects.target import target_of
from nimble.lowering.kernels.pad_rows import padded_constant
from nimble.lowering.spatial.rnn_to_spatial import (
    NotARecurrence,
    Recurrence,
    Step,
    build_program,
    lower_recurrences,
)
from nimble.reference import XDSL_SEMANTICS


def _is_constant(value: SSAValue) -> bool:
    return isinstance(value.owner, ConstantOp)


def _laid_out(rec: Recurrence, program: loop.KernelOp, host_values: list[SSAValue]) -> list[SSAValue]:
    """The kernel's operands: `host_values`, except a constant whose parameter took a
    padded type (`pad_rows`), padded here once (zeros past its columns), before the loop."""
    operands = list(host_values)
    for i, (param, v) in enumerate(zip(program.args, host_values)):
        if not _is_constant(v) or param.type.get_shape() == v.type.get_shape():
            continue
        constant = padded_constant(v, param.type.get_shape())
        Rewriter.insert_op(constant, InsertPoint.before(rec.op))
        operands[i] = constant.result
    return operands


def _wrap(rec: Recurrence, step: Step, name: str, host_values: list[SSAValue], operands: list[SSAValue]) -> FusedOp:
    """Replace the loop by a `graph.fused` over `operands` holding it (body flattened): the
    host values, where padded (`_laid_out`) sliced back to their columns for the body."""
    loop_op = rec.op
    region = fused_region([v.type for v in operands])
    block = region.block
    env = {}
    for arg, v, operand in zip(block.args, host_values, operands):
        arg.name_hint = v.name_hint
        env[v] = arg
        if operand is not v:
            rows, cols = v.type.get_shape()
            cut = SliceOp(arg, [0, 0], [rows, cols], [1, 1], v.type)
            block.add_op(cut)
            env[v] = cut.result
    zero = arith.ConstantOp(IntegerAttr(0, IndexType()))
    block.add_op(zero)
    inits = [zero.result if i == rec.counter else env[v] for i, v in enumerate(loop_op.inits)]
    cond, body = Region(), Region()
    loop_op.cond_region.clone_into(cond, value_mapper=dict(env))
    flat = Region(step.flat)
    flat.clone_into(body, value_mapper=dict(env))
    clone = WhileOp(inits, [r.type for r in loop_op.results], cond, body)
    block.add_op(clone)
    states = [r for i, r in enumerate(clone.results) if i != rec.counter]
    block.add_op(YieldOp(states))
    wrapper = FusedOp(list(operands), [r.type for r in states], region)
    wrapper.attributes[KERNEL_ATTR] = SymbolRefAttr(name)
    wrapper.attributes[RECURRENCE_ATTR] = UnitAttr()
    wrapper.location = loop_op.location
    Rewriter.insert_op(wrapper, InsertPoint.before(loop_op))
    results = iter(wrapper.results)
    for i, old in enumerate(loop_op.results):
        if i == rec.counter:
            if old.uses:  # the counter ends at max(bound, 0)
                zero_host = arith.ConstantOp(IntegerAttr(0, IndexType()))
                end = arith.MaxSIOp(rec.bound, zero_host.result)
                Rewriter.insert_op([zero_host, end], InsertPoint.before(wrapper))
                old.replace_all_uses_with(end.result)
            continue
        new = next(results)
        new.name_hint = old.name_hint
        old.replace_all_uses_with(new)
    Rewriter.erase_op(loop_op)
    return wrapper


def followed(op: Operation) -> bool:
    """Whether the VM can follow `op` by shapes alone (`runtime/recurrence.py`): graph
    ops by their shape functions, dims and checks, index arithmetic."""
    if isinstance(op, GraphOp | YieldOp | dynshape.DimOp | dynshape.AssertOp):
        return True
    return type(op) in XDSL_SEMANTICS and all(isinstance(r.type, IndexType | IntegerType) for r in op.results)


def _check(rec: Recurrence, step: Step) -> None:
    for op in step.flat.ops:
        if not followed(op):
            raise NotARecurrence(f"the body holds '{op.name}', whose shapes the launch cannot check")
    # The launch checks a step's shapes at the first and the last counter value: enough
    # when the counter reaches graph ops (the slice `xs[i]`, a reverse loop's
    # `xs[n - 1 - i]`) only through sums and differences with loop-invariant values:
    # functions `c + i` or `c - i`, monotone, whose values lie between those of the ends.
    counter = {step.flat.args[rec.counter]}
    for op in step.flat.ops:
        if not any(v in counter for v in op.operands) or isinstance(op, GraphOp | YieldOp):
            continue
        if isinstance(op, arith.AddiOp | arith.SubiOp) and not (op.lhs in counter and op.rhs in counter):
            counter.update(op.results)
        else:
            raise NotARecurrence(f"the step's shapes depend on the counter through '{op.name}'")


def lower_module(module: ModuleOp) -> list[str]:
    """Lower every recurrence of the module's host functions to a kernel; returns the
    kernels' names."""

    def lower(rec: Recurrence, step: Step, name: str) -> None:
        _check(rec, step)
        program, host_values = build_program(rec, step, name, "f32", target=Device.CPU, constant=_is_constant,
                                             lanes=target_of(module).lanes(32))
        module.body.block.add_op(program)
        _wrap(rec, step, name, host_values, _laid_out(rec, program, host_values))

    return lower_recurrences(module, lower, SKIPPED_ATTR)


@dataclass(frozen=True)
class LowerRnnToKernelsPass(ModulePass):
    """Turn each recurrence (counted loop over a cell) into one CPU kernel."""

    name = "lower-rnn-to-kernels"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        lower_module(op)
