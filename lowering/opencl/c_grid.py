"""Grid sizes on the host: which of a kernel's top-level index values the host can compute
from a launch's arguments (`host_computable`), and the launch plan that computes them
(`kernel_plan`: written into the module, evaluated by `runtime/opencl_plan.py`)."""

from __future__ import annotations

from xdsl.dialects import memref
from xdsl.dialects.builtin import IndexType
from xdsl.ir import Attribute, Block, SSAValue

from nimble.dialects import arith, kernel_analysis, loop
from nimble.dialects.index_semantics import INDEX_BINARY
from nimble.lowering.opencl.c_source import KernelSource, NoDeviceLowering
from nimble.runtime.opencl_plan import ClKernel, ClParam, ClPhase, ClScratch, ParamKind


def host_computable(value: SSAValue) -> bool:
    """Whether the runtime can compute `value` from a launch's arguments (`kernel_plan`)."""
    if isinstance(value.owner, Block):
        return isinstance(value.owner.parent_op(), loop.KernelOp) and isinstance(value.type, IndexType)
    op = value.owner
    if isinstance(op, arith.ConstantOp):
        return True
    if isinstance(op, memref.DimOp):
        source = kernel_analysis.viewed_buffer(op.source)
        return isinstance(source.owner, Block) and isinstance(op.index.owner, arith.ConstantOp)
    if type(op) in INDEX_BINARY or isinstance(op, (arith.CmpiOp, arith.SelectOp, *CASTS)):
        return all(host_computable(o) for o in op.operands)
    return False


# ---------------------------------------------------------------------------------------
# The launch plan: grid sizes and staging buffers as index arithmetic the runtime evaluates


CASTS = (arith.IndexCastOp, arith.ExtSIOp)


def item_bytes(element_type: Attribute) -> int:
    """Bytes per element of a device buffer (xdsl's sizes; an index is 64-bit, a `long`)."""
    return 8 if isinstance(element_type, IndexType) else element_type.size


def kernel_plan(source: KernelSource) -> ClKernel:
    """What the runtime needs to launch `source` (`runtime/opencl_plan.py`)."""
    nodes = _Nodes(source.kernel)
    staging = [p.alloc for p in source.params if p.kind == "scratch"]
    scratch = []
    for alloc in staging:
        sizes = iter(alloc.dynamic_sizes)
        t = alloc.memref.type
        dims = tuple(nodes.of(next(sizes)) if d < 0 else nodes.constant(d) for d in t.get_shape())
        scratch.append(ClScratch(dims, item_bytes(t.element_type)))
    phases = tuple(ClPhase(p.name, tuple(tuple(nodes.of(v) for v in bounds) for bounds in p.grid), p.tile, p.group,
                           p.split, tuple(staging.index(a) for a in p.allocs))
                   for p in source.phases)
    params = tuple(ClParam(ParamKind(p.kind), p.dims) for p in source.params)
    return ClKernel(source.name, params, phases, tuple(scratch), tuple(nodes.nodes))


class _Nodes:
    """The expression table of one kernel's host-computable index values."""

    def __init__(self, kernel: loop.KernelOp):
        self.args = {a: i for i, a in enumerate(kernel.args)}
        self.nodes: list[tuple] = []
        self.index: dict[object, int] = {}

    def add(self, key: object, node: tuple) -> int:
        if key not in self.index:
            self.index[key] = len(self.nodes)
            self.nodes.append(node)
        return self.index[key]

    def constant(self, value: int) -> int:
        return self.add(("const", value), ("const", value))

    def of(self, v: SSAValue) -> int:
        """The node of index value `v`."""
        if v in self.index:
            return self.index[v]
        op = v.owner
        if isinstance(op, Block):
            node = ("arg", self.args[v])
        elif isinstance(op, arith.ConstantOp):
            return self.add(v, ("const", op.value.value.data))
        elif isinstance(op, memref.DimOp):
            node = ("dim", self.shape(op.source), self.of(op.index))
        elif isinstance(op, arith.CmpiOp):
            node = ("cmp", op.predicate.value.data, self.of(op.lhs), self.of(op.rhs))
        elif isinstance(op, arith.SelectOp):
            node = ("select", *(self.of(o) for o in op.operands))
        elif isinstance(op, CASTS):
            node = ("cast", self.of(op.operands[0]))
        elif type(op) in INDEX_BINARY:
            node = (op.name, *(self.of(o) for o in op.operands))
        else:
            raise NoDeviceLowering(f"a grid bound computed by '{op.name}'")
        return self.add(v, node)

    def shape(self, buffer: SSAValue) -> int:
        if buffer in self.args:
            return self.add(("shape", buffer), ("shape", self.args[buffer]))
        op = buffer.owner
        if isinstance(op, memref.CollapseShapeOp):
            groups = [[a.value.data for a in group] for group in op.reassociation]
            return self.add(("collapse", buffer), ("collapse", self.shape(op.src), groups))
        raise NoDeviceLowering("a grid bound reads the dims of a buffer that is not an argument")
