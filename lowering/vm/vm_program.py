"""A `lower-to-vm` module collected into a `Program` (`runtime/bytecode.py`): the VM
functions and their instructions with every symbol resolved to an index, the constants'
values, the kernel table (each kernel's group, parallelism, variant, work, argument
types and device), the host functions and source signatures as one MLIR module, and the
kernels of other devices as generated code with their launch plans (OpenCL:
`lowering/opencl/c_grid.kernel_plan`). The last step of compilation: the runtime reads
a `Program` and never sees this module.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, MemRefType, ModuleOp, StringAttr, SymbolRefAttr

from nimble.dialects import device, kernel_analysis, loop, vm
from nimble.dialects.device import Device
from nimble.dialects.graph.adt import AdtOp
from nimble.dialects.graph.creation import ConstantOp
from nimble.dialects.graph.folding import dense_to_array
from nimble.lowering.opencl.c_grid import kernel_plan
from nimble.lowering.opencl.to_opencl import opencl_sources, program_text
from nimble.reference import Interpreter
from nimble.runtime.allocator import aligned
from nimble.runtime.bytecode import Function, Kernel, Program

K = vm.Kind


def kernel_abi(kernel: loop.KernelOp) -> list[tuple[str, tuple[int, ...]] | None]:
    """The argument list of a loop-level kernel, as `Kernel.abi`."""
    return [(str(t.element_type), tuple(t.get_shape())) if isinstance(t, MemRefType) else None
            for t in kernel.function_type.inputs.data]


def _results_of(function: vm.FunctionOp) -> int:
    rets = [op for op in function.instructions if op.MNEMONIC == "ret"]
    return len(rets[0].field_value("values")) if rets else 0


def _constant_value(op: Any, interpreter: Any) -> np.ndarray:
    """A `vm.constant`'s value: a `graph.constant`'s read in place (`aligned` copies it
    once: ResNet-50's 100 MB of weights 0.68 -> 0.25 s), anything else evaluated."""
    if isinstance(op, ConstantOp):
        return dense_to_array(op.value, copy=False)
    return np.asarray(op.evaluate(interpreter, [])[0])


def program_from_module(module: ModuleOp, base_dir: str = ".") -> Program:
    """The program of a `lower-to-vm` module (its CPU kernels compiled separately)."""
    functions = [op for op in module.ops if isinstance(op, vm.FunctionOp)]
    constants = [op for op in module.ops if isinstance(op, vm.ConstantOp)]
    hosts = [op for op in module.ops if isinstance(op, func.FuncOp) and device.HOST_FUNCTION in op.attributes]
    kernel_funcs = {op.sym_name.data: op for op in loop.kernels_of(module)}
    adts = [op for op in module.ops if isinstance(op, AdtOp)]
    constructors = [(c.sym_name.data, tag) for adt in adts for tag, c in enumerate(adt.constructors)]
    host_index = {h.sym_name.data: i for i, h in enumerate(hosts)}
    group_of: dict[str, int] = {}
    for i, h in enumerate(hosts):
        names = h.attributes.get(device.GROUP_OF)
        if isinstance(names, ArrayAttr):
            for n in names.data:
                group_of[n.root_reference.data] = i
    kernels: list[Kernel] = []
    kernel_index: dict[str, int] = {}
    indices: dict[K, dict[str, int]] = {
        K.FUNC: {f.sym_name.data: i for i, f in enumerate(functions)},
        K.CONST: {c.sym_name.data: i for i, c in enumerate(constants)},
        K.HOST: host_index,
        K.CTOR: {name: i for i, (name, _) in enumerate(constructors)},
        K.KERNEL: kernel_index,
    }
    strings: list[str] = []
    program_functions = []
    for f in functions:
        code = []
        for op in f.instructions:
            values = []
            for (_, kind), value in zip(op.FIELDS, op.decoded()):
                if kind == K.KERNEL and value not in kernel_index:
                    kfunc = kernel_funcs[value]
                    kernel_index[value] = len(kernels)
                    kernels.append(Kernel(value, group_of[value], kernel_analysis.splits_profitably(kfunc),
                                          loop.NO_STRETCH_MARK in kfunc.attributes, kernel_analysis.kernel_work(kfunc),
                                          kernel_abi(kfunc), loop.kernel_device(kfunc)))
                if kind == K.STR:
                    strings.append(value)
                    value = len(strings) - 1
                elif kind in indices:
                    value = indices[kind][value]
                values.append(value)
            code.append((vm.Opcode[op.MNEMONIC.upper()], tuple(values)))
        program_functions.append(Function(f.sym_name.data, f.num_regs.value.data, f.param_regs(), _results_of(f), code))
    for i, h in enumerate(hosts):  # the kernels of host ops (`device.NATIVE_KERNEL`), called by the VM, not launched
        native = h.attributes.get(device.NATIVE_KERNEL)
        if isinstance(native, SymbolRefAttr) and native.root_reference.data not in kernel_index:
            kfunc = kernel_funcs[native.root_reference.data]
            kernel_index[kfunc.sym_name.data] = len(kernels)
            kernels.append(Kernel(kfunc.sym_name.data, i, False, False, 0, kernel_abi(kfunc)))
    interpreter = Interpreter(ModuleOp([]), base_dir)
    arrays = [aligned(_constant_value(c.body.block.first_op, interpreter)) for c in constants]
    host_module = ModuleOp([op.clone() for op in adts] + [h.clone() for h in hosts] + _signatures(functions))
    from nimble import __version__

    opencl = opencl_sources([kernel_funcs[k.name].clone() for k in kernels if k.device == Device.OPENCL])
    return Program(program_functions, arrays, kernels, [h.sym_name.data for h in hosts],
                   host_module, constructors, strings, b"", f"nimble {__version__}",
                   opencl_program=program_text(opencl) if opencl else "",
                   opencl_kernels=[kernel_plan(s) for s in opencl])


def _signatures(functions: Sequence[vm.FunctionOp]) -> list[func.FuncOp]:
    """Declarations `@<name>` of the VM functions' source signatures (`vm.SIGNATURE_OF`)."""
    out = []
    for f in functions:
        signature = f.attributes.get(vm.SIGNATURE)
        if signature is None:
            continue
        declaration = func.FuncOp.external(f"signature_of_{f.sym_name.data}", signature.inputs.data, signature.outputs.data)
        declaration.attributes[vm.SIGNATURE_OF] = StringAttr(f.sym_name.data)
        declaration.attributes[vm.ARG_NAMES] = f.attributes[vm.ARG_NAMES]
        for key in (vm.DIM_NAMES, vm.RESULT_NAMES):
            if key in f.attributes:
                declaration.attributes[key] = f.attributes[key]
        out.append(declaration)
    return out


