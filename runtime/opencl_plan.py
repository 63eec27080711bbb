"""What the runtime needs to launch a kernel compiled to OpenCL, written into the module.

The compiler (`lowering/opencl/c_grid.kernel_plan`) records, beside the program's C
source, per kernel: its arguments (`ClParam`), its phases (one OpenCL kernel each:
`ClPhase`) with the index arithmetic that sizes their grids, and the sizes of its
staging buffers, as a small expression table (`nodes`). The runtime evaluates that
table on a launch's arguments with the integer semantics of
`dialects/index_semantics.py`; it never sees the loop-level IR, and loading a module
generates no code.

A node is a list: `["arg", k]` (the value of index argument k), `["shape", k]` (the
shape of buffer argument k), `["const", v]`, `["dim", shape, axis]`, `["collapse",
shape, [[axes]...]]` (a collapsed view's shape), `["cmp", predicate, a, b]` (arith.cmpi's
signed predicates), `["select", c, a, b]`, `["cast", a]`, or `[name, a, b]` for a binary
index op (its `arith` name); operands are earlier nodes.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from enum import StrEnum
from typing import Any

from nimble.dialects.index_semantics import INDEX_BINARY, INDEX_COMPARISONS, ceil_div
from nimble.errors import RunError

BINARY: dict[str, Callable[[int, int], int]] = {op.name: f for op, f in INDEX_BINARY.items()}


class ParamKind(StrEnum):
    BUFFER = "buffer"
    """A pointer, its offset in elements, then its `?` dims (`dims`), as 64-bit ints."""
    INDEX = "index"
    SCRATCH = "scratch"
    """A pointer to device memory the host provides for a staging buffer (after the
    kernel function's own arguments)."""


@dataclass(frozen=True)
class ClParam:
    kind: ParamKind
    dims: tuple[int, ...] = ()

    def pointers(self) -> list[bool]:
        """Per OpenCL argument it takes: whether it is a pointer (the others are longs)."""
        if self.kind is ParamKind.INDEX:
            return [False]
        if self.kind is ParamKind.SCRATCH:
            return [True]
        return [True, False] + [False] * len(self.dims)


@dataclass(frozen=True)
class ClPhase:
    name: str
    grid: tuple[tuple[int, int, int], ...]
    """(lower, upper, step) nodes of each mapped loop, innermost (grid axis 0) first."""
    tile: tuple[int, ...] = ()
    """Iterations per thread along each grid axis (a register tile), 1 where absent."""
    group: bool = False
    """A work-group phase: the grid counts work-groups, not threads."""
    split: bool = False
    """Groups along one more axis may split an iteration's register tiles."""
    per_group: tuple[int, ...] = ()
    """The staging buffers (indices into `ClKernel.scratch`) with one copy per work-group."""


@dataclass(frozen=True)
class ClScratch:
    dims: tuple[int, ...]
    """The node of each dim."""
    itemsize: int


@dataclass(frozen=True)
class ClKernel:
    name: str
    params: tuple[ClParam, ...]
    phases: tuple[ClPhase, ...]
    scratch: tuple[ClScratch, ...]
    nodes: tuple[tuple[Any, ...], ...]

    def evaluate(self, args: Sequence[Any]) -> list[Any]:
        """Every node's value for a launch on `args` (arrays or ints, in the kernel
        function's argument order)."""
        values: list[Any] = []
        try:
            for node in self.nodes:
                values.append(_EVALUATE[node[0]](node, values, args))
        except (IndexError, TypeError, ValueError, AttributeError, ZeroDivisionError) as e:
            raise RunError(f"kernel '{self.name}': its grid sizes cannot be computed for these arguments: {e}") from None
        return values

    def trips(self, values: Sequence[Any]) -> list[tuple[int, ...]]:
        """Per phase, the threads (work-groups) along each grid axis (at least 1)."""
        sizes = []
        for phase in self.phases:
            trips = []
            for axis, (lo, hi, step) in enumerate(phase.grid):
                per_thread = phase.tile[axis] if axis < len(phase.tile) else 1
                st = values[step]
                trips.append(max(1, ceil_div(ceil_div(values[hi] - values[lo], st), per_thread)) if st > 0 else 1)
            sizes.append(tuple(trips) or (1,))
        return sizes

    def scratch_bytes(self, values: Sequence[Any]) -> list[int]:
        """The bytes of each staging buffer (one copy)."""
        return [max(math.prod(values[d] for d in s.dims), 1) * s.itemsize for s in self.scratch]


_EVALUATE: dict[str, Callable[[Sequence[Any], list[Any], Sequence[Any]], Any]] = {
    "arg": lambda n, v, a: int(a[n[1]]),
    "shape": lambda n, v, a: tuple(a[n[1]].shape),
    "const": lambda n, v, a: n[1],
    "dim": lambda n, v, a: v[n[1]][v[n[2]]],
    "collapse": lambda n, v, a: tuple(math.prod(v[n[1]][axis] for axis in group) for group in n[2]),
    "cmp": lambda n, v, a: int(INDEX_COMPARISONS[n[1]](v[n[2]], v[n[3]])),
    "select": lambda n, v, a: v[n[2]] if v[n[1]] else v[n[3]],
    "cast": lambda n, v, a: v[n[1]],
    **{name: (lambda f: lambda n, v, a: f(v[n[1]], v[n[2]]))(f) for name, f in BINARY.items()},
}
_LAYOUT: dict[str, tuple[int, int, int]] = {
    "arg": (1, 0, 0), "shape": (1, 0, 0), "const": (1, 0, 0), "dim": (0, 2, 0), "collapse": (0, 1, 1),
    "cmp": (1, 2, 0), "select": (0, 3, 0), "cast": (0, 1, 0), **{name: (0, 2, 0) for name in BINARY},
}
"""Per node kind: its fields before the operands, its operands (earlier nodes), its
fields after them."""


# ---------------------------------------------------------------------------------------
# In the module: JSON, checked when read


def to_json(kernels: Sequence[ClKernel]) -> str:
    return json.dumps([asdict(k) for k in kernels], separators=(",", ":"))


def from_json(text: str) -> list[ClKernel]:
    """The kernels' plans; ValueError (naming what is wrong) for a malformed one."""
    try:
        return [_kernel(k) for k in json.loads(text or "[]")]
    except (KeyError, TypeError, IndexError, AttributeError, json.JSONDecodeError) as e:
        raise ValueError(f"malformed OpenCL kernel plans ({type(e).__name__}: {e})") from None


def _kernel(k: dict[str, Any]) -> ClKernel:
    name = str(k["name"])
    params = tuple(ClParam(ParamKind(p["kind"]), tuple(int(d) for d in p["dims"])) for p in k["params"])
    nodes = tuple(tuple(n) for n in k["nodes"])
    kinds = [p.kind for p in params if p.kind is not ParamKind.SCRATCH]
    for at, node in enumerate(nodes):
        _check_node(node, at, kinds, name)
    scratch = tuple(ClScratch(tuple(_ref(d, len(nodes)) for d in s["dims"]), int(s["itemsize"])) for s in k["scratch"])
    phases = tuple(ClPhase(str(p["name"]), tuple(tuple(_ref(v, len(nodes)) for v in bounds) for bounds in p["grid"]),
                           tuple(int(t) for t in p["tile"]), bool(p["group"]), bool(p["split"]),
                           tuple(_ref(s, len(scratch)) for s in p["per_group"]))
                   for p in k["phases"])
    if any(len(bounds) != 3 for p in phases for bounds in p.grid):
        raise ValueError(f"kernel '{name}': a grid axis without (lower, upper, step)")
    return ClKernel(name, params, phases, scratch, nodes)


def _check_node(node: tuple[Any, ...], at: int, kinds: Sequence[ParamKind], kernel: str) -> None:
    kind = node[0] if node else None
    if kind not in _LAYOUT:
        raise ValueError(f"kernel '{kernel}': node {at} is of unknown kind {kind!r}")
    before, operands, after = _LAYOUT[kind]
    if len(node) != 1 + before + operands + after:
        raise ValueError(f"kernel '{kernel}': node {at} ({kind}) has {len(node) - 1} fields")
    if any(not isinstance(o, int) or not 0 <= o < at for o in node[1 + before:1 + before + operands]):
        raise ValueError(f"kernel '{kernel}': node {at} ({kind}) refers to nodes that do not precede it")
    literal = node[1] if before else None
    wanted = {"arg": ParamKind.INDEX, "shape": ParamKind.BUFFER}.get(kind)
    if wanted is not None and not (isinstance(literal, int) and 0 <= literal < len(kinds) and kinds[literal] is wanted) \
            or kind == "const" and not isinstance(literal, int) \
            or kind == "cmp" and literal not in INDEX_COMPARISONS \
            or kind == "collapse" and not all(isinstance(a, int) for group in node[-1] for a in group):
        raise ValueError(f"kernel '{kernel}': node {at} ({kind}) holds {node!r}")


def _ref(value: Any, count: int) -> int:
    if not isinstance(value, int) or not 0 <= value < count:
        raise ValueError(f"reference {value!r} out of range (0..{count - 1})")
    return value
