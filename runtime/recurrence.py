"""Launching a recurrence's kernel (`lower-rnn-to-kernels`): the time loop inside.

The kernel's group holds the loop (its reference semantics). Before the first launch
with given shapes the body's shape functions and checks run on shapes alone, at the
first and the last counter value (`lower-rnn-to-kernels` takes only loops whose graph ops
see the counter plus or minus loop-invariant values, such as the slice `xs[i]`: the two
ends bound every step): a check that fails is the error the loop would raise; a step
that changes a state's shape is an error too (the outputs were allocated
with the initial states' shapes, and the kernel keeps them), except for a stacked
state (`WhileOp.stacked`), which must grow by whole rows. Both are memoised with the
launch plan, like any kernel's checks.
"""

from __future__ import annotations

from typing import Any

from xdsl.ir import SSAValue

from nimble.dialects import arith
from nimble.dialects import dynshape
from nimble.dialects.graph import GraphOp, WhileOp, YieldOp
from nimble.dialects.shape_functions import ShapeError
from nimble.reference import XDSL_SEMANTICS, where
from nimble.runtime.bytecode import BytecodeError
from nimble.runtime.kernels import KernelEntry, LaunchError, ShapeOnly

Shapes = dict[SSAValue, tuple[int, ...]]


def holds_recurrence(group: Any) -> bool:
    """Whether a kernel's group is a recurrence (its body holds the loop)."""
    return any(isinstance(o, WhileOp) for o in group.body.block.ops)


class RecurrenceEntry(KernelEntry):
    """A kernel computing a whole counted loop; outputs are the final states. Its
    chunks run together, sharing every step's work (`loop.COOPERATIVE_MARK`)."""

    min_work = 1 << 15
    """Split from states x reduction steps per state element (`kernel_analysis.reduction_work`, a
    step's) of 2^15: an LSTM of 128 hidden units has 128 x 320, one of 64 has 64 x 192.
    Measured, 2 threads on the native workers, 1 vs 2 chunks: h256 25 steps 0.355 vs
    0.223 ms; h128 100 steps 0.365 vs 0.256, 25 steps 0.115 vs 0.112; h64 100 steps
    0.099 vs 0.127 (the barriers outweigh a small step)."""

    def __init__(self, name: str, address: int, group: Any, parallel: bool, variant: bool, work: int):
        super().__init__(name, address, group, parallel, variant, work)
        self.loop = next(o for o in self.group.body.block.ops if isinstance(o, WhileOp))
        cond = self.loop.cond_region.block
        compare = cond.last_op.operands[0].owner if cond.last_op is not None and cond.last_op.operands else None
        # `counter < bound`, the bound a parameter (what lower-rnn-to-kernels matched).
        if not isinstance(compare, arith.CmpiOp) or compare.lhs not in cond.args \
                or compare.rhs not in self.group.body.block.args:
            raise BytecodeError(f"kernel '{name}': its group's loop is not 'counter < bound'")
        self.bound = compare.rhs
        self.counter = cond.args.index(compare.lhs)
        self.rows = {i: rows.type.get_shape()[0] for i, (rows, _) in self.loop.stacked().items()}
        """Stacked states (`WhileOp.stacked`): the rows each step adds."""
        # A stacked state's initial rows are copied, never read by a step (`[0, batch, h]`, typically).
        initial = {self.loop.inits[i] for i in self.rows}
        self.unread = {k for k, p in enumerate(self.params)
                       if p in initial and all(u.operation is self.loop for u in p.uses)}

    def output_shapes(self, shapes: Shapes, scalars: dict[SSAValue, Any]) -> list[tuple[int, ...]]:
        shapes, scalars = dict(shapes), dict(scalars)
        before = list(self.group.body.block.ops)
        self._follow(before[:before.index(self.loop)], shapes, scalars, "before the loop")
        states = [(i, shapes[v]) for i, v in enumerate(self.loop.inits) if i != self.counter]
        bound = scalars[self.bound]
        for t in sorted({0, bound - 1}) if bound > 0 else []:
            after = self._step(t, shapes, scalars)
            for (i, before_step), now in zip(states, after):
                if i in self.rows:  # stacked: the body never reads it, so its shape is the initial one
                    if now != (before_step[0] + self.rows[i], *before_step[1:]):
                        raise self._fail(f"state #{i} stacks rows of shape {[self.rows[i], *now[1:]]} on "
                                         f"{list(before_step)} at step {t}; the kernel stacks whole rows")
                elif now != before_step:
                    raise self._fail(f"state #{i} changes shape in a step ({list(before_step)} -> {list(now)}) at "
                                     f"step {t}; the kernel keeps each state's shape (the loop's states must "
                                     "have the same shape before and after a step)")
        return [(s[0] + max(bound, 0) * self.rows[i], *s[1:]) if i in self.rows else s for i, s in states]

    def _step(self, t: int, outer: Shapes, outer_scalars: dict[SSAValue, Any]) -> list[tuple[int, ...]]:
        """The states' shapes after step `t`, by shapes alone."""
        body = self.loop.body_region.block
        shapes, scalars = dict(outer), dict(outer_scalars)
        for i, (arg, init) in enumerate(zip(body.args, self.loop.inits)):
            if i == self.counter:
                scalars[arg] = t
            else:
                shapes[arg] = outer[init]
        self._follow(list(body.ops)[:-1], shapes, scalars, f"step {t}")
        yielded = body.last_op
        assert isinstance(yielded, YieldOp)
        return [shapes[v] for i, v in enumerate(yielded.operands) if i != self.counter]

    def _follow(self, ops: list, shapes: Shapes, scalars: dict[SSAValue, Any], when: str) -> None:
        """Run `ops` on shapes and index values alone (graph ops by their shape functions,
        dims and checks, index arithmetic: what `lower-rnn-to-kernels` lets through)."""
        k = ShapeOnly(shapes, scalars)
        for op in ops:
            if isinstance(op, GraphOp):
                try:
                    result_shapes = op.shape_function(k)
                except ShapeError as e:
                    raise LaunchError(f"{where(op)}'{op.name}' op: {e} ({when}; kernel @{self.name})") from None
                shapes.update((r, tuple(int(d) for d in s)) for r, s in zip(op.results, result_shapes))
            elif isinstance(op, dynshape.DimOp):
                scalars[op.result] = shapes[op.source][op.index.value.data]
            elif isinstance(op, dynshape.AssertOp):
                if not scalars[op.condition]:
                    message = dynshape.failure_message(op.message.data, [scalars[v] for v in op.values])
                    raise LaunchError(f"{where(op)}'dynshape.assert' op failed at run time: {message} "
                                      f"({when}; kernel @{self.name})")
            else:  # index arithmetic
                scalars.update(zip(op.results, XDSL_SEMANTICS[type(op)](op, [scalars[v] for v in op.operands])))
