"""`lower-loops-to-llvm`: kernels (loop + arith + math + memref + vector) → xdsl `llvm`.

xdsl can print and JIT its `llvm` dialect (through llvmlite) but has no pure-Python
lowering into it; this is that lowering, for the kernels Nimble builds. Structured
loops become basic blocks with block arguments (phis): `loop.foreach` a counted loop,
`loop.reduce` a counted loop carrying its accumulators, combined with the body's values.

Calling convention of a kernel `@k`: `void k(i64* args)`, one 64-bit slot per memref
data pointer, per `?` dim of each memref, per index argument, then the chunks' mailbox
(used by cooperative kernels: `runtime/sync.py`) and two slots for the parallel chunk
(`chunk`, `nchunks`): the first loop marked `parallel` runs only its share of
iterations. The body is an internal function with `noalias` buffer pointers,
inlined into the wrapper. Buffers are dense row-major.

The pieces, in `lowering/llvm/`: `function.py` (regions, loops, reductions, the op
handlers' table), `memory.py` (addresses, loads and stores, buffers), `scalars.py`
(arithmetic by tables; functions without an LLVM intrinsic, tanh, erf, call the C
library), `base.py` (the state and the emitting helpers they share), `common.py`
(types, constants). `runtime/llvm_jit.py` optimises and JIT-compiles the result.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, i64
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass

from nimble.dialects import llvm, loop
from nimble.dialects.device import Device
from nimble.lowering.llvm.common import PTR, llvm_function
from nimble.lowering.llvm.function import FunctionLowering
from nimble.runtime import bounds


def _wrapper(kernel: loop.KernelOp, body: llvm.FuncOp) -> llvm.FuncOp:
    """`void k(i64* args)`: unpack the slots and call the body."""
    entry = Block(arg_types=[PTR])

    def add(op: Operation) -> SSAValue:
        entry.add_op(op)
        return op.results[0]

    args: list[SSAValue] = []
    for slot, t in enumerate(body.function_type.inputs):
        ptr = add(llvm.GEPOp(entry.args[0], [slot], i64)) if slot else entry.args[0]
        args.append(add(llvm.LoadOp(ptr, t)))
    entry.add_op(llvm.CallOp(body.sym_name.data, *args))
    entry.add_op(llvm.ReturnOp())
    return llvm_function(kernel.sym_name.data, llvm.LLVMFunctionType([PTR]), "external", Region(entry))


def lower_kernels(module: ModuleOp, devices: Sequence[str] = (Device.CPU,),
                  check_bounds: bool | None = None) -> ModuleOp:
    """A new module of `llvm` functions: one wrapper + body per kernel of `module` for
    `devices` (spatial programs run on the CPU for functional execution); every access
    checked if `check_bounds` (default: `NIMBLE_CHECK_BOUNDS`, `runtime.bounds`)."""
    check = bounds.enabled() if check_bounds is None else check_bounds
    externals: dict[str, Operation] = {}
    functions: list[Operation] = []
    kernels = [k for d in devices for k in loop.kernels_of(module, d)]
    for kernel in kernels:
        body = FunctionLowering(kernel, externals, check).run()
        functions += [body, _wrapper(kernel, body)]
    return ModuleOp([*externals.values(), *functions])


@dataclass(frozen=True)
class LowerLoopsToLLVMPass(ModulePass):
    """Replace the module by the LLVM-dialect form of its kernels (host code is dropped:
    it runs on the VM)."""

    name = "lower-loops-to-llvm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        lowered = lower_kernels(op)
        for old in list(op.body.block.ops):
            old.detach()
            old.erase(safe_erase=False)
        for new in list(lowered.body.block.ops):
            new.detach()
            op.body.block.add_op(new)

