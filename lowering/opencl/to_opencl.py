"""Loop-level kernels → OpenCL C: the OpenCL table of the C emitter (`c_emitter`).

Grid axes are the NDRange (`get_global_id`), buffers `__global` pointers, `?` dims and
element offsets `long` arguments, math ops OpenCL built-ins. `nimble-opt -t opencl`
prints the kernels of a module (graph-level input is first lowered to loops for the
device: `lower-graph-to-loops{device=opencl}`, no CPU schedules).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import math as xmath

from nimble.dialects import loop
from nimble.dialects.device import Device
from nimble.lowering.opencl.c_emitter import emit_kernel
from nimble.lowering.opencl.c_source import C_PREAMBLE, Flavor, KernelSource

OPENCL = Flavor(
    name=Device.OPENCL,
    kernel="__kernel",
    global_space="__global",
    restrict=" restrict",
    grid_id="get_global_id({})",
    grid_size="get_global_size({})",
    grid_dims=3,
    types={"f32": "float", "f64": "double", "f16": "half", "i64": "long", "index": "long", "i32": "int",
           "i16": "short", "i8": "char", "i1": "uchar"},
    functions={xmath.ExpOp: "exp", xmath.LogOp: "log", xmath.TanhOp: "tanh", xmath.SqrtOp: "sqrt",
               xmath.ErfOp: "erf", xmath.FloorOp: "floor", xmath.CeilOp: "ceil", xmath.AbsFOp: "fabs",
               xmath.PowFOp: "pow", xmath.SinOp: "sin", xmath.CosOp: "cos", xmath.RsqrtOp: "rsqrt",
               xmath.RoundEvenOp: "rint", xmath.TanOp: "tan", xmath.AsinOp: "asin", xmath.AcosOp: "acos",
               xmath.AtanOp: "atan", xmath.SinhOp: "sinh", xmath.CoshOp: "cosh", xmath.AsinhOp: "asinh",
               xmath.AcoshOp: "acosh", xmath.AtanhOp: "atanh"},
    int_max="max",
    int_min="min",
    tile=(8, 32),
    group_id="get_group_id({})",
    group_count="get_num_groups({})",
    local_id="get_local_id(0)",
    local_size="get_local_size(0)",
    local_space="__local",
    barrier="barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);",
    no_contract="#pragma OPENCL FP_CONTRACT OFF",
)
EXTENSIONS = {"double": "cl_khr_fp64", "half": "cl_khr_fp16"}
"""The extension a type needs; its pragma is emitted only where a kernel uses the type."""


def opencl_sources(kernels: Sequence[loop.KernelOp]) -> list[KernelSource]:
    return [emit_kernel(OPENCL, k) for k in kernels]


def program_text(sources: Sequence[KernelSource]) -> str:
    """One OpenCL program holding the phases of `sources`."""
    body = "\n".join(s.text for s in sources)
    pragmas = [f"#pragma OPENCL EXTENSION {ext} : enable" for t, ext in EXTENSIONS.items() if f"{t} " in body]
    return "\n".join([*pragmas, C_PREAMBLE, body])
