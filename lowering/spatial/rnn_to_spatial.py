"""`lower-rnn-to-spatial`: a recurrent loop becomes one program for the spatial accelerator.

A *recurrence* is a counted `graph.while` (a counter from 0 by 1 while `< bound`) whose
body computes the next states from the current ones, slices of sequences at the counter,
and loop-invariant tensors (weights). Its body's graph ops (calls inlined, fusion groups
opened) become one fusion group, which `KernelBuilder` turns into one loop nest per time
step: for an LSTM or GRU cell a `loop.foreach` over the hidden units whose gate
pre-activations are `loop.reduce`s over the input+hidden dimension, activations and the
cell update computed in registers. Around that step the program

- merges reductions with the same bounds in one loop body into one `loop.reduce` with
  an accumulator each (all gates of a hidden unit in one pipeline, `merge_reductions`);
- copies every loop-invariant tensor once into on-chip memory (`loop.alloc sram`), the
  matrices in the weight precision chosen (`weights=f32|bf16|int8`, see
  `weights`); accumulation and activations stay f32;
- keeps the states in SRAM (current and next, copied back after each step); the time
  loop is an `scf.for` (sequential: step t+1 reads step t's states) that reads the
  sequences' slices from DRAM at each step; the final states go back to DRAM.

The program is a kernel function marked `nimble.device = "spatial"`. The loop in the host
is wrapped in a `graph.fused` (whose reference semantics is the loop itself) naming the
program in `nimble.spatial`; `nimble.spatial.SpatialExecutable` runs it through the CPU
backend (functional execution) and `spatial-dse` / the machine model schedule and cost it.

The recognition, the step and the time loop also build the CPU's recurrence kernels
(`build_program(..., target="cpu")`, used by `lower-rnn-to-kernels`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import func, memref, scf
from xdsl.dialects.builtin import (
    DenseArrayBase,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    StringAttr,
    SymbolRefAttr,
    TensorType,
    UnitAttr,
    i64,
)
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import is_side_effect_free
from xdsl.transforms.common_subexpression_elimination import cse
from xdsl.utils.exceptions import DiagnosticException

from nimble.dialects import arith, dynshape, loop
from nimble.dialects.device import Device
from nimble.dialects.discardable import SPATIAL_ARGS_ATTR as ARGS_ATTR
from nimble.dialects.discardable import SPATIAL_ATTR
from nimble.dialects.discardable import SPATIAL_COUNTER_ATTR as COUNTER_ATTR
from nimble.dialects.discardable import SPATIAL_SKIPPED_ATTR as SKIPPED_ATTR
from nimble.dialects.discardable import SPATIAL_STACKED_ATTR as STACKED_ATTR
from nimble.dialects.graph import ConcatOp, FusedOp, GraphOp, WhileOp, YieldOp
from nimble.dialects.graph.control import ConditionOp, stacked_rows
from nimble.dialects.graph.fusion import fused_region
from nimble.errors import CompileError
from nimble.lowering.kernels.kernel_builder import KernelBuilder, NoLoopLowering
from nimble.lowering.kernels.kernel_parts import memref_of
from nimble.lowering.kernels.pad_rows import pad_aliasing_rows
from nimble.lowering.kernels.symbols import first_free, symbol_names
from nimble.lowering.spatial.hoist_projections import hoist_input_projections
from nimble.lowering.spatial.loops import hoist_row_scales, merge_reductions, stage_dram_reads
from nimble.lowering.spatial.weights import (
    WEIGHT_TYPES,
    buffer_dims,
    const,
    copy,
    decode_loads,
    make_resident,
    nest,
)
from nimble.passes.int_range_optimizations import fold_index_ranges
from nimble.passes.loop_transforms.index_set_split import split_reductions


class SpatialLoweringError(DiagnosticException, CompileError):
    """A bad option of the pass."""


class NotARecurrence(Exception):
    """A loop the spatial lowering does not take (the reason)."""


# ---------------------------------------------------------------------------------------
# Recognising a recurrence


@dataclass
class Recurrence:
    op: WhileOp
    counter: int  # position of the counter among the carried values
    bound: SSAValue


def match_recurrence(op: WhileOp) -> Recurrence:
    cond = op.cond_region.block
    last = cond.last_op
    if not isinstance(last, ConditionOp) or not isinstance(last.operands[0].owner, arith.CmpiOp):
        raise NotARecurrence("the condition is not a comparison")
    cmp = last.operands[0].owner
    if cmp.predicate.value.data != 2 or not (len(list(cond.ops)) == 2):  # slt, and nothing else
        raise NotARecurrence("the condition is not 'counter < bound'")
    if cmp.lhs not in cond.args or loop.defined_inside(cmp.rhs, op):
        raise NotARecurrence("the condition is not 'counter < bound' with a bound set before the loop")
    k = cond.args.index(cmp.lhs)
    init = op.inits[k].owner
    if not (isinstance(init, arith.ConstantOp) and init.value.value.data == 0):
        raise NotARecurrence("the counter does not start at 0")
    body = op.body_region.block
    step = body.last_op.operands[k].owner
    one = step.operands[1].owner if isinstance(step, arith.AddiOp) else None
    if not (isinstance(one, arith.ConstantOp) and step.operands[0] is body.args[k] and one.value.value.data == 1):
        raise NotARecurrence("the counter does not step by 1")
    for i, value in enumerate(op.inits):
        if i != k and not isinstance(value.type, TensorType):
            raise NotARecurrence(f"carried value #{i} is not a tensor")
    return Recurrence(op, k, cmp.rhs)


# ---------------------------------------------------------------------------------------
# The step: one fusion group of the body's graph ops


def _flatten(block: Block, functions: dict[str, func.FuncOp]) -> Block:
    """A copy of `block` with calls inlined and fusion groups opened (recursively)."""
    flat = Block(arg_types=[a.type for a in block.args])
    mapping: dict[SSAValue, SSAValue] = dict(zip(block.args, flat.args))

    def copy(ops: Sequence[Operation], env: dict[SSAValue, SSAValue]) -> list[SSAValue] | None:
        for o in ops:
            if isinstance(o, YieldOp | func.ReturnOp):
                return [env.get(v, v) for v in o.operands]
            if isinstance(o, func.CallOp):
                callee = functions.get(o.callee.root_reference.data)
                if callee is None or not callee.body.blocks:
                    raise NotARecurrence(f"the body calls @{o.callee.root_reference.data}, which has no body")
                inner = dict(zip(callee.body.block.args, (env.get(v, v) for v in o.operands)))
                results = copy(list(callee.body.block.ops), inner)
                env.update(zip(o.results, results or []))
            elif isinstance(o, FusedOp):
                inner = dict(zip(o.body.block.args, (env.get(v, v) for v in o.operands)))
                env.update(zip(o.results, copy(list(o.body.block.ops), inner) or []))
            elif o.regions:
                raise NotARecurrence(f"the body holds control flow ('{o.name}')")
            else:
                clone = o.clone(value_mapper=env)
                flat.add_op(clone)
                env.update(zip(o.results, clone.results))
        return None

    yielded = copy(list(block.ops), mapping)
    flat.add_op(YieldOp(yielded or []))
    return flat


def _flatten_in_place(block: Block, functions: dict[str, func.FuncOp]) -> None:
    """`block`'s ops replaced by their `_flatten`ed copy."""
    flat = _flatten(block, functions)
    for op in reversed(list(block.ops)):
        op.detach()
        op.erase(safe_erase=False)
    for new, old in zip(flat.args, block.args):
        new.replace_all_uses_with(old)
    for op in list(flat.ops):
        op.detach()
        block.add_op(op)


@dataclass
class Step:
    group: FusedOp  # the body's graph ops (not inserted anywhere)
    scalars: list[Operation]  # index ops of the body computed before the step, in order
    flat: Block
    stacked: set[int]  # carried values that add this step's rows (the group yields the rows)
    prepended: set[int]  # those of them that put the rows before the earlier ones


def _stacked(flat: Block, counter: int) -> dict[int, tuple[SSAValue, bool]]:
    """The carried values that every step grows by rows (`stacked_rows`: as ONNX's LSTM
    gives `Y`), whose rows must have a static count; a carried value concatenated with
    itself otherwise is not a recurrence."""
    stacked = {i: v for i, v in stacked_rows(flat).items() if i != counter}
    for i, value in enumerate(flat.last_op.operands):
        op = value.owner
        if i in stacked or i == counter or not isinstance(op, ConcatOp) or flat.args[i] not in op.operands:
            continue
        raise NotARecurrence(f"state #{i} grows other than by rows added along axis 0")
    for i, (rows, _) in stacked.items():
        if rows.type.get_shape()[0] < 0:
            raise NotARecurrence(f"state #{i} grows by a number of rows known only at run time")
    return stacked


def recurrence_step(rec: Recurrence, functions: dict[str, func.FuncOp]) -> Step:
    flat = _flatten(rec.op.body_region.block, functions)
    yielded = list(flat.last_op.operands)
    stacking = _stacked(flat, rec.counter)
    for i, (rows, _) in stacking.items():
        yielded[i] = rows
    stacked = set(stacking)
    # The graph ops the next states need, and the scalar (index) ops they read.
    needed: set[Operation] = set()
    work = [v.owner for i, v in enumerate(yielded) if i != rec.counter and isinstance(v.owner, Operation)]
    while work:
        o = work.pop()
        if o in needed:
            continue
        needed.add(o)
        work.extend(v.owner for v in o.operands if isinstance(v.owner, Operation))
    members = [o for o in flat.ops if o in needed and isinstance(o, GraphOp)]
    scalars = [o for o in flat.ops if o in needed and not isinstance(o, GraphOp)]
    for o in scalars:
        if not is_side_effect_free(o) or any(not isinstance(r.type, IndexType | IntegerType) for r in o.results):
            raise NotARecurrence(f"'{o.name}' in the body is neither a graph op nor index arithmetic")
    if not members:
        raise NotARecurrence("the body computes no state with graph ops")
    member_set = set(members)
    inputs: list[SSAValue] = []
    for o in members:
        for v in o.operands:
            if not (isinstance(v.owner, Operation) and v.owner in member_set) and v not in inputs:
                inputs.append(v)
    region = fused_region([v.type for v in inputs])
    env = dict(zip(inputs, region.block.args))
    for o in members:
        region.block.add_op(o.clone(value_mapper=env))
    states = [v for i, v in enumerate(yielded) if i != rec.counter]
    for i, v in enumerate(yielded):
        if i == rec.counter:
            continue
        if v not in env:
            raise NotARecurrence(f"state #{i} is passed through unchanged")
        if i in stacked and flat.args[i] in inputs:
            raise NotARecurrence(f"state #{i} stacks every step's rows and is also read by the step")
    region.block.add_op(YieldOp([env[v] for v in states]))
    first = {i for i, (_, before) in stacking.items() if before}
    return Step(FusedOp(inputs, [v.type for v in states], region), scalars, flat, stacked, first)


# ---------------------------------------------------------------------------------------
# Building the program


@dataclass
class _Signature:
    """The program's parameters and the host values they take."""

    tensors: list[SSAValue]  # loop-invariant or streamed tensors from outside the loop
    indices: list[SSAValue]  # index values from outside the loop (the bound among them)
    inits: list[SSAValue]  # initial states

    @staticmethod
    def of(rec: Recurrence, step: Step, everything: bool = False) -> _Signature:
        """The values the step reads from outside the loop (`everything`: that the whole
        body reads, checks included: for a program that stands in for the loop)."""
        flat = step.flat

        def in_flat(v: SSAValue) -> bool:
            owner = v.owner
            return owner is flat if isinstance(owner, Block) else owner.parent_block() is flat

        reads = [*step.group.inputs, *(v for o in step.scalars for v in o.operands)]
        if everything:
            reads += [v for o in flat.ops for v in o.operands]
        outside: list[SSAValue] = []  # in first-use order
        for v in [*reads, rec.bound]:
            if not in_flat(v) and v not in outside:
                outside.append(v)
        indices = [v for v in outside if not isinstance(v.type, TensorType)]
        for v in indices:
            if not isinstance(v.type, IndexType):
                raise NotARecurrence(f"the loop reads a value of type {v.type} from outside")
        inits = [v for i, v in enumerate(rec.op.inits) if i != rec.counter]
        return _Signature([v for v in outside if isinstance(v.type, TensorType)], indices, inits)

    def function(self, rec: Recurrence, name: str) -> loop.KernelOp:
        finals = [r for i, r in enumerate(rec.op.results) if i != rec.counter]
        types = [memref_of(v.type) for v in self.tensors] + [IndexType()] * len(self.indices) \
            + [memref_of(v.type) for v in self.inits] + [memref_of(r.type) for r in finals]
        program = loop.KernelOp(name, types)
        hints = [v.name_hint for v in (*self.tensors, *self.indices, *self.inits)]
        hints += [f"{r.name_hint or f'state{k}'}_out" for k, r in enumerate(finals)]
        for arg, hint in zip(program.args, hints):
            arg.name_hint = hint
        return program

    @property
    def host_values(self) -> list[SSAValue]:
        return [*self.tensors, *self.indices, *self.inits]


def _rows_at(b: Builder, src: SSAValue, dst: SSAValue, offset: SSAValue, zero: SSAValue, one: SSAValue) -> None:
    """dst[offset + r, ...] = src[r, ...] for every row r of `src`."""

    def body(b: Builder, ivs: list[SSAValue]) -> None:
        value = b.insert(memref.LoadOp.get(src, ivs)).res
        at = b.insert(arith.AddiOp(offset, ivs[0])).result
        b.insert(memref.StoreOp.get(value, dst, [at, *ivs[1:]]))

    nest(b, buffer_dims(b, src), body, zero, one)


def _step_rows_at(b: Builder, rows: SSAValue, init: SSAValue, t: SSAValue, bound: SSAValue, first: bool) -> SSAValue:
    """Where step `t`'s rows go in a stacked state's output: after the initial rows and
    the earlier steps' (`init.dim(0) + t * count`), or, when each step's rows go `first`,
    before the later steps' (`(bound - 1 - t) * count`; the initial rows come last)."""
    count = const(b, rows.type.get_shape()[0])
    if first:
        later = b.insert(arith.SubiOp(b.insert(arith.SubiOp(bound, const(b, 1))).result, t)).result
        return b.insert(arith.MuliOp(later, count)).result
    return b.insert(arith.AddiOp(b.insert(memref.DimOp(init, const(b, 0))).result,
                                 b.insert(arith.MuliOp(t, count)).result)).result


def _state_buffers(b: Builder, init_params: list[SSAValue], out_params: list[SSAValue], rows: list[SSAValue],
                   kinds: list[tuple[bool, bool]], bound: SSAValue, zero: SSAValue,
                   one: SSAValue) -> tuple[list[tuple[SSAValue, list[SSAValue]] | None], list[SSAValue]]:
    """States: current and next, in SRAM, the current one filled from the initial state
    (for each: (current, its dims) and next). A stacked state (`kinds`: (stacked, rows
    first)) goes straight to its output: its initial rows at their place, each step's
    rows staged in an SRAM buffer (its `next`; no current)."""
    steps = b.insert(arith.MaxSIOp(bound, zero)).result
    current: list[tuple[SSAValue, list[SSAValue]] | None] = []
    following: list[SSAValue] = []
    for p, out, step_rows, (stacked, first) in zip(init_params, out_params, rows, kinds):
        dims = buffer_dims(b, p)
        if stacked:
            count = const(b, step_rows.type.get_shape()[0])
            _rows_at(b, p, out, b.insert(arith.MuliOp(steps, count)).result if first else zero, zero, one)
            t = memref_of(step_rows.type)
            out_dims = buffer_dims(b, out)
            nxt = b.insert(loop.AllocOp(loop.Level.SRAM, t, [d for d, n in zip(out_dims, t.get_shape()) if n < 0])).memref
            nxt.name_hint = f"{out.name_hint}_rows"
            current.append(None)
            following.append(nxt)
            continue
        dynamic = [d for d, n in zip(dims, p.type.get_shape()) if n < 0]
        cur = b.insert(loop.AllocOp(loop.Level.SRAM, p.type, dynamic)).memref
        nxt = b.insert(loop.AllocOp(loop.Level.SRAM, p.type, dynamic)).memref
        if p.name_hint:
            cur.name_hint, nxt.name_hint = f"{p.name_hint}_state", f"{p.name_hint}_next"
        copy(b, p, cur, dims, zero, one)
        current.append((cur, dims))
        following.append(nxt)
    return current, following


def _time_step(rec: Recurrence, step: Step, name: str, host: dict[SSAValue, SSAValue], residents: dict,
               flat_args: list[SSAValue], current: list, following: list[SSAValue], init_params: list[SSAValue],
               out_params: list[SSAValue], kinds: list[tuple[bool, bool]], zero: SSAValue, one: SSAValue) -> Block:
    """The time loop's body: the step's index code, the step nest (the group's kernel,
    inlined), then the next states over the current ones."""
    counter = flat_args[rec.counter]
    time_block = Block(arg_types=[IndexType()])
    time_block.args[0].name_hint = "t"
    tb = Builder(InsertPoint.at_end(time_block))
    states = [a for i, a in enumerate(flat_args) if i != rec.counter]
    env: dict[SSAValue, SSAValue] = {counter: time_block.args[0], **host}
    env.update((a, c[0]) for a, c in zip(states, current) if c is not None)
    for o in step.scalars:
        if isinstance(o, dynshape.DimOp) and isinstance(env.get(o.source, o.source).type, MemRefType):
            # (a dim of a state, which is a buffer here)
            dim = memref.DimOp(env[o.source], const(tb, o.index.value.data))
            env[o.result] = tb.insert(dim).result
            continue
        env.update(zip(o.results, tb.insert(o.clone(value_mapper=env)).results))
    kernel = KernelBuilder(step.group, f"{name}_step", no_stretch=True).build()
    args = [residents[v].buffer if v in residents else env[v] for v in step.group.inputs] + following
    inline = dict(zip(kernel.body.block.args, args))
    for o in kernel.body.block.ops:
        if not isinstance(o, loop.ReturnOp):
            tb.insert(o.clone(value_mapper=inline))
    for c, nxt, p, out, (_, first) in zip(current, following, init_params, out_params, kinds):
        if c is not None:
            copy(tb, nxt, c[0], c[1], zero, one)
        else:
            _rows_at(tb, nxt, out, _step_rows_at(tb, nxt, p, time_block.args[0], host[rec.bound], first), zero, one)
    tb.insert(scf.YieldOp())
    return time_block


def build_program(rec: Recurrence, step: Step, name: str, precision: str, target: str = Device.SPATIAL,
                  constant: Callable[[SSAValue], bool] = lambda v: False,
                  lanes: int | None = None) -> tuple[loop.KernelOp, list[SSAValue]]:
    """The spatial program of a recurrence, and the host values its input parameters
    take (outside tensors, outside index values, initial states; one output per state
    follows them). `target="cpu"`: the same time loop as a CPU kernel: weights read where
    they are (no on-chip copies, f32), reductions over concatenations split in parts
    that each read one operand (`index_set_split`), and every value the loop's body reads
    a parameter (the kernel stands in for the whole loop), the input projection of every
    step computed before the time loop (`hoist_projections`), weight rows whose length
    aliases in the cache read from a padded copy (`pad_rows`), or, when the host value is
    `constant`, with the padded type: the caller passes a padded constant. `lanes`: f32
    elements per vector of the CPU (with `target="cpu"`)."""
    spatial = target == Device.SPATIAL
    sig = _Signature.of(rec, step, everything=not spatial)
    program = sig.function(rec, name)
    params = list(program.args)
    n_in = len(sig.tensors) + len(sig.indices)
    host = dict(zip(sig.host_values[:n_in], params[:n_in]))
    init_params = params[n_in:n_in + len(sig.inits)]
    out_params = params[n_in + len(sig.inits):]
    b = Builder(InsertPoint.at_end(program.body.block))
    zero, one = const(b, 0), const(b, 1)
    flat_args = list(step.flat.args)
    counter = flat_args[rec.counter]
    # Tensors read with an index that depends on the counter stream from DRAM; the
    # others are loop-invariant: copied on chip once.
    counter_derived = {counter} | {r for o in step.scalars for r in o.results}
    streamed = {v for o in step.flat.ops if any(u in counter_derived for u in o.operands)
                for v in o.operands if v in host and isinstance(v.type, TensorType)}
    residents = {v: make_resident(b, host[v], precision, zero, one) for v in sig.tensors
                 if v not in streamed and spatial}
    kinds = [(i in step.stacked, i in step.prepended) for i in range(len(rec.op.inits)) if i != rec.counter]
    current, following = _state_buffers(b, init_params, out_params, step.group.outputs, kinds, host[rec.bound],
                                         zero, one)
    time_block = _time_step(rec, step, name, host, residents, flat_args, current, following, init_params,
                            out_params, kinds, zero, one)
    time_loop = b.insert(scf.ForOp(zero, host[rec.bound], one, [], Region(time_block)))
    for c, out in zip(current, out_params):
        if c is not None:
            copy(b, c[0], out, c[1], zero, one)
    b.insert(loop.ReturnOp())
    if not spatial:  # gates fused; concatenations split, their clamps and selects folded
        merge_reductions(program)
        cse(program)
        split_reductions(program)
        fold_index_ranges(program)
        assert lanes, "a CPU kernel needs the CPU's lanes"
        hoist_input_projections(time_loop, lanes)
        pad_aliasing_rows(program, {p for p, v in zip(params[:n_in], sig.host_values) if constant(v)})
        program.attributes[loop.COOPERATIVE_MARK] = UnitAttr()
        return program, sig.host_values
    # Loop-level rewrites: narrow reads widened, gates fused, x_t staged, scales hoisted.
    decode_loads(program, {r.buffer: r for r in residents.values()})
    merge_reductions(program)
    cse(program)  # the gates' reads of the shared operand become one, before it is staged
    stage_dram_reads(time_loop, set(params[:len(sig.tensors)]))
    hoist_row_scales(program, {r.scale for r in residents.values() if r.scale is not None})
    program.attributes[loop.DEVICE_MARK] = StringAttr(Device.SPATIAL)
    return program, sig.host_values


# ---------------------------------------------------------------------------------------
# The pass


def _wrap(rec: Recurrence, name: str, host_values: list[SSAValue], stacked: set[int],
          functions: dict[str, func.FuncOp]) -> FusedOp:
    """Replace the loop by a `graph.fused` holding it, naming the program. The loop kept
    inside has its body's calls inlined: upstream MLIR resolves no call nested in an op
    it does not know that has one region (such an op may be a symbol table)."""
    loop_op = rec.op
    inputs: list[SSAValue] = []
    for inner in loop_op.walk():
        for v in inner.operands:
            if not loop.defined_inside(v, loop_op) and v not in inputs:
                inputs.append(v)
    region = fused_region([v.type for v in inputs])
    env = dict(zip(inputs, region.block.args))
    for arg, v in zip(region.block.args, inputs):
        arg.name_hint = v.name_hint
    clone = loop_op.clone(value_mapper=env)
    if any(isinstance(o, func.CallOp) for o in clone.body_region.walk()):
        _flatten_in_place(clone.body_region.block, functions)
    region.block.add_op(clone)
    region.block.add_op(YieldOp(list(clone.results)))
    wrapper = FusedOp(inputs, [r.type for r in loop_op.results], region)
    wrapper.attributes[SPATIAL_ATTR] = SymbolRefAttr(name)
    wrapper.attributes[ARGS_ATTR] = DenseArrayBase.from_list(i64, [inputs.index(v) for v in host_values])
    wrapper.attributes[COUNTER_ATTR] = IntegerAttr(rec.counter, i64)
    wrapper.attributes[STACKED_ATTR] = DenseArrayBase.from_list(i64, sorted(stacked))
    wrapper.location = loop_op.location
    Rewriter.insert_op(wrapper, InsertPoint.before(loop_op))
    for old, new in zip(loop_op.results, wrapper.results):
        new.name_hint = old.name_hint
        old.replace_all_uses_with(new)
    loop_op.detach()
    loop_op.erase()
    return wrapper


def lower_recurrences(module: ModuleOp, lower: Callable[[Recurrence, Step, str], None], skipped: str) -> list[str]:
    """Call `lower(recurrence, step, name)` for every recurrence of the module's host
    functions (`name` a fresh `<host>_rnn_<k>`); returns the names used. A `graph.while`
    that is not one, or that `lower` refuses (NotARecurrence, NoLoopLowering), keeps the
    reason in attribute `skipped`."""
    functions = {f.sym_name.data: f for f in module.ops if isinstance(f, func.FuncOp)}
    taken = symbol_names(module)
    names: list[str] = []
    for host in [f for f in functions.values() if f.body.blocks]:
        for op in [o for o in host.walk() if isinstance(o, WhileOp)]:
            name = first_free(f"{host.sym_name.data}_rnn", taken)
            try:
                rec = match_recurrence(op)
                lower(rec, recurrence_step(rec, functions), name)
            except (NotARecurrence, NoLoopLowering) as e:
                op.attributes[skipped] = StringAttr(str(e))
                continue
            taken.add(name)
            names.append(name)
    return names


def lower_module(module: ModuleOp, precision: str = "f32") -> list[str]:
    """Lower every recurrence of the module's host functions; returns the programs' names.
    A `graph.while` that is not one keeps the reason in `nimble.spatial_skipped`."""
    if precision not in WEIGHT_TYPES:
        raise SpatialLoweringError(f"lower-rnn-to-spatial: unknown weight precision '{precision}' "
                                   f"(expected one of {', '.join(WEIGHT_TYPES)})")

    def lower(rec: Recurrence, step: Step, name: str) -> None:
        program, host_values = build_program(rec, step, name, precision)
        module.body.block.add_op(program)
        functions = {f.sym_name.data: f for f in module.ops if isinstance(f, func.FuncOp)}
        _wrap(rec, name, host_values, step.stacked, functions)

    return lower_recurrences(module, lower, SKIPPED_ATTR)


@dataclass(frozen=True)
class LowerRnnToSpatialPass(ModulePass):
    """Turn each recurrence (counted loop over a cell) into one spatial program."""

    name = "lower-rnn-to-spatial"
    weights: str = "f32"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        lower_module(op, self.weights)
