"""`schedule-loops`: give each kernel's loops a default schedule for the target.

Schedules are data (`#loop.schedule<...>` on each loop), written here from a per-target
table and read by the backends; a tuner can supply them instead. The CPU default:
the outermost loop of each kernel nest runs `parallel` (chunks on the cores), the
innermost `loop.foreach` is vectorised with the host's vector width for its element
type. A loop that already has a schedule keeps it.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func, memref
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from nimble.dialects import loop

VECTOR_BITS: dict[str, int] = {"cpu": 512, "generic": 128}  # AVX-512 on the CI machine kind


def _element_bits(foreach: loop.ForeachOp) -> int:
    widths = [s.value.type.bitwidth if hasattr(s.value.type, "bitwidth") else s.value.type.width.data
              for s in foreach.walk() if isinstance(s, memref.StoreOp)]
    return max(widths, default=32)


@dataclass(frozen=True)
class ScheduleLoopsPass(ModulePass):
    """Default schedules: outermost loop parallel, innermost foreach vectorised."""

    name = "schedule-loops"

    target: str = "cpu"
    parallel: bool = True

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        bits = VECTOR_BITS.get(self.target, VECTOR_BITS["generic"])
        for kernel in op.body.block.ops:
            if not isinstance(kernel, func.FuncOp) or "nimble.kernel" not in kernel.attributes:
                continue
            for nest in kernel.body.block.ops:
                if isinstance(nest, loop.ForeachOp):
                    self._schedule_nest(nest, bits)

    def _schedule_nest(self, outer: loop.ForeachOp, bits: int) -> None:
        inner = [o for o in outer.walk() if isinstance(o, loop.ForeachOp)
                 and not any(isinstance(x, loop.ForeachOp) for x in o.body.walk())]
        for foreach in inner:
            if foreach.schedule is None and foreach is not outer:
                foreach.schedule = loop.ScheduleAttr(loop.Schedule(vector=max(1, bits // _element_bits(foreach))))
        if outer.schedule is None:
            vector = max(1, bits // _element_bits(outer)) if outer in inner else 0
            outer.schedule = loop.ScheduleAttr(loop.Schedule(vector=vector, parallel=self.parallel))
