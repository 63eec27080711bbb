"""`#nimble.cpu`: the CPU a module's kernels are compiled for, on the module.

`module attributes {nimble.target = #nimble.cpu<"haswell">}` pins the target every pass
that chooses a schedule reads (`target_of`): register tiles, vector lanes, remainders,
packing. It holds a `runtime.cpu_target.CpuTarget`: the CPU name, then what differs from
that name's defaults (`features = "-fma"`, `l2 = 2097152`, ...). `nimble.compile(cpu=)`
and `nimble-opt --cpu` set it; a module without one is compiled for `$NIMBLE_CPU` or
the host.

Example: `#nimble.cpu<"skylake-avx512", features = "-avx512f", cores = 2>`
"""

from __future__ import annotations

from dataclasses import replace

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Data, Operation
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer

from nimble.dialects.discardable import declare
from nimble.runtime import cpu_target
from nimble.runtime.cpu_target import CpuTarget, TargetError

_SIZES = ("l1d", "l2", "l3", "cores")


@irdl_attr_definition
class CpuAttr(Data[CpuTarget]):
    """A CPU target (runtime/cpu_target.py)."""

    name = "nimble.cpu"

    @classmethod
    def parse_parameter(cls, parser: AttrParser) -> CpuTarget:
        with parser.in_angle_brackets():
            at = parser.pos
            cpu = parser.parse_str_literal("a CPU name")
            given: dict[str, str | int] = {}
            while parser.parse_optional_punctuation(","):
                key = parser.parse_identifier()
                parser.parse_punctuation("=")
                if key == "features":
                    given[key] = parser.parse_str_literal("a feature list")
                elif key in _SIZES:
                    given[key] = parser.parse_integer(allow_boolean=False, allow_negative=False)
                else:
                    parser.raise_error(f"unknown #nimble.cpu parameter '{key}' (features, {', '.join(_SIZES)})")
            try:
                target = cpu_target.named(cpu, str(given.pop("features", "")))
            except TargetError as e:
                parser.raise_error(str(e), at, parser.pos)
            return replace(target, **given)

    def print_parameter(self, printer: Printer) -> None:
        t = self.data
        base = cpu_target.named(t.cpu, t.features)
        parts = [f'"{t.cpu}"'] + ([f'features = "{t.features}"'] if t.features else [])
        parts += [f"{k} = {getattr(t, k)}" for k in _SIZES if getattr(t, k) != getattr(base, k)]
        printer.print_string(f"<{', '.join(parts)}>")


def target_of(op: Operation) -> CpuTarget:
    """The target of the module holding `op` (`cpu_target.default()`, the host, where none says)."""
    module = op if isinstance(op, ModuleOp) else op.get_toplevel_object()
    attr = module.attributes.get(TARGET_ATTR) if isinstance(module, ModuleOp) else None
    return attr.data if isinstance(attr, CpuAttr) else cpu_target.default()


def set_target(module: ModuleOp, target: CpuTarget) -> None:
    module.attributes[TARGET_ATTR] = CpuAttr(target)


TARGET_ATTR = declare("nimble.target", CpuAttr)
"""On a module: the CPU its kernels are compiled for."""
