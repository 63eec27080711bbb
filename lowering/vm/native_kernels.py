"""Kernels for host ops that are not loop nests (their output's size depends on the
data): `graph.nms` on the CPU, f32 boxes and scores, runs `NMS_KERNEL`.

`lower-to-vm` outlines such an op into a host function (`VmLowering.host_function`);
`attach` then adds the op's kernel to the module (once) and names it on the function
(`device.NATIVE_KERNEL`). The kernel is compiled with the others (the JIT, the kernel
cache, a saved module's object code); the VM binds it to the host function and the
runtime calls it (`runtime/cpu_vision.py`: the arguments it takes, `NMS_ABI`). A loaded
module thus runs it without the compiler.

`NMS_KERNEL` is a loop-level kernel written by hand, a greedy selection that needs no
sort:

1. Each box's corners (either diagonal) and area in f64, as the reference computes
   them, and an order key in one i64: the score's bits made to compare as integers
   (-0.0 as 0.0, NaN below -inf) above the complement of the box's index, so the
   largest key is the reference's next candidate (NaN last, descending score, lowest
   index first); boxes under the score threshold get `NONE`.
2. `max_output` picks: the largest key left (a max-reduction over the keys) is kept,
   and every box whose IoU with it (in f64, same operations and roundings: the float
   ops are `nimble.exact`, no fused multiply-adds) exceeds the threshold leaves.
   Once a pick finds nothing the rest scan nothing.

O(max_output x N) like the reference, in machine code (1.9 ms for the detection
example's 2304 boxes, 50 kept, by the reference's numpy loop). Its loops keep no
default schedule: the picks depend on each other (the loop over them is sequential in
fact), so it is added after the loops stage, as written.
"""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.dialects.builtin import Float32Type, ModuleOp, StringAttr, SymbolRefAttr, TensorType
from xdsl.ir import Operation
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import SymbolTable

from nimble.dialects import device
from nimble.dialects.device import Device
from nimble.dialects.graph.vision import NmsOp
from nimble.parser import parse_mlir
from nimble.registry import make_context

NONE = -(1 << 63)
"""The key of a box that is not, or no longer, a candidate."""

NMS_KERNEL = f"""
loop.kernel @nms_cpu(%boxes: memref<?x4xf32>, %scores: memref<?xf32>, %iou_threshold: memref<1xf64>,
                     %score_threshold: memref<1xf32>, %filtered: memref<1xi64>, %keep: memref<?xi64>,
                     %count: memref<1xi64>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %n = memref.dim %scores, %c0 : memref<?xf32>
  %slots = memref.dim %keep, %c0 : memref<?xi64>
  %limit = arith.subi %slots, %c1 : index
  %iou_t = memref.load %iou_threshold[%c0] : memref<1xf64>
  %score_t = memref.load %score_threshold[%c0] : memref<1xf32>
  %filter = memref.load %filtered[%c0] : memref<1xi64>
  %zero = arith.constant 0 : i64
  %one = arith.constant 1 : i64
  %none = arith.constant {NONE} : i64
  %low = arith.constant 4294967295 : i64
  %f0 = arith.constant 0.0 : f32
  %d0 = arith.constant 0.0 : f64
  %d1 = arith.constant 1.0 : f64
  %i0 = arith.constant 0 : i32
  %magnitude = arith.constant 2147483647 : i32
  %nan_key = arith.constant -2147483648 : i32
  %shift = arith.constant 32 : i64
  %any_score = arith.cmpi eq, %filter, %zero : i64
  %key = loop.alloc dram (%n) : memref<?xi64>
  %x1 = loop.alloc dram (%n) : memref<?xf64>
  %y1 = loop.alloc dram (%n) : memref<?xf64>
  %x2 = loop.alloc dram (%n) : memref<?xf64>
  %y2 = loop.alloc dram (%n) : memref<?xf64>
  %area = loop.alloc dram (%n) : memref<?xf64>
  loop.foreach %j = %c0 to %n step %c1 {{
    %b0 = memref.load %boxes[%j, %c0] : memref<?x4xf32>
    %b1 = memref.load %boxes[%j, %c1] : memref<?x4xf32>
    %b2 = memref.load %boxes[%j, %c2] : memref<?x4xf32>
    %b3 = memref.load %boxes[%j, %c3] : memref<?x4xf32>
    %e0 = arith.extf %b0 : f32 to f64
    %e1 = arith.extf %b1 : f32 to f64
    %e2 = arith.extf %b2 : f32 to f64
    %e3 = arith.extf %b3 : f32 to f64
    %lx = arith.minimumf %e0, %e2 : f64
    %ly = arith.minimumf %e1, %e3 : f64
    %hx = arith.maximumf %e0, %e2 : f64
    %hy = arith.maximumf %e1, %e3 : f64
    %w = arith.subf %hx, %lx {{nimble.exact}} : f64
    %h = arith.subf %hy, %ly {{nimble.exact}} : f64
    %a = arith.mulf %w, %h {{nimble.exact}} : f64
    memref.store %lx, %x1[%j] : memref<?xf64>
    memref.store %ly, %y1[%j] : memref<?xf64>
    memref.store %hx, %x2[%j] : memref<?xf64>
    memref.store %hy, %y2[%j] : memref<?xf64>
    memref.store %a, %area[%j] : memref<?xf64>
    %s = memref.load %scores[%j] : memref<?xf32>
    %is_zero = arith.cmpf oeq, %s, %f0 : f32
    %s0 = arith.select %is_zero, %f0, %s : f32
    %bits = arith.bitcast %s0 : f32 to i32
    %negative = arith.cmpi slt, %bits, %i0 : i32
    %flipped = arith.xori %bits, %magnitude : i32
    %ordered = arith.select %negative, %flipped, %bits : i32
    %nan = arith.cmpf uno, %s, %s : f32
    %k32 = arith.select %nan, %nan_key, %ordered : i32
    %k64 = arith.extsi %k32 : i32 to i64
    %high = arith.shli %k64, %shift : i64
    %j64 = arith.index_cast %j : index to i64
    %rest = arith.subi %low, %j64 : i64
    %k = arith.ori %high, %rest : i64
    %above = arith.cmpf ogt, %s, %score_t : f32
    %candidate = arith.ori %any_score, %above : i1
    %kj = arith.select %candidate, %k, %none : i64
    memref.store %kj, %key[%j] : memref<?xi64>
    loop.yield
  }}
  memref.store %zero, %count[%c0] : memref<1xi64>
  loop.foreach %p = %c0 to %limit step %c1 {{
    %kept = memref.load %count[%c0] : memref<1xi64>
    %p64 = arith.index_cast %p : index to i64
    %going = arith.cmpi eq, %kept, %p64 : i64
    %scan = arith.select %going, %n, %c0 : index
    %best = loop.reduce %j = %c0 to %scan step %c1 combine(max) init(%none) : i64 {{
      %kj = memref.load %key[%j] : memref<?xi64>
      loop.yield %kj : i64
    }}
    %found = arith.cmpi ne, %best, %none : i64
    %bits = arith.andi %best, %low : i64
    %i64 = arith.subi %low, %bits : i64
    %i = arith.index_cast %i64 : i64 to index
    %slot = arith.select %found, %p, %limit : index
    memref.store %i64, %keep[%slot] : memref<?xi64>
    %next = arith.addi %p64, %one : i64
    %counted = arith.select %found, %next, %kept : i64
    memref.store %counted, %count[%c0] : memref<1xi64>
    %once = arith.select %found, %c1, %c0 : index
    loop.foreach %z = %c0 to %once step %c1 {{
      memref.store %none, %key[%i] : memref<?xi64>
      loop.yield
    }}
    %sweep = arith.select %found, %n, %c0 : index
    loop.foreach %j = %c0 to %sweep step %c1 {{
      %ax1 = memref.load %x1[%i] : memref<?xf64>
      %ay1 = memref.load %y1[%i] : memref<?xf64>
      %ax2 = memref.load %x2[%i] : memref<?xf64>
      %ay2 = memref.load %y2[%i] : memref<?xf64>
      %aa = memref.load %area[%i] : memref<?xf64>
      %bx1 = memref.load %x1[%j] : memref<?xf64>
      %by1 = memref.load %y1[%j] : memref<?xf64>
      %bx2 = memref.load %x2[%j] : memref<?xf64>
      %by2 = memref.load %y2[%j] : memref<?xf64>
      %ba = memref.load %area[%j] : memref<?xf64>
      %rx = arith.minimumf %ax2, %bx2 : f64
      %lx = arith.maximumf %ax1, %bx1 : f64
      %iw0 = arith.subf %rx, %lx {{nimble.exact}} : f64
      %iw = arith.maximumf %iw0, %d0 : f64
      %ry = arith.minimumf %ay2, %by2 : f64
      %ly = arith.maximumf %ay1, %by1 : f64
      %ih0 = arith.subf %ry, %ly {{nimble.exact}} : f64
      %ih = arith.maximumf %ih0, %d0 : f64
      %inter = arith.mulf %iw, %ih {{nimble.exact}} : f64
      %both = arith.addf %aa, %ba {{nimble.exact}} : f64
      %union = arith.subf %both, %inter {{nimble.exact}} : f64
      %positive = arith.cmpf ogt, %union, %d0 : f64
      %divisor = arith.select %positive, %union, %d1 : f64
      %ratio = arith.divf %inter, %divisor {{nimble.exact}} : f64
      %iou = arith.select %positive, %ratio, %d0 : f64
      %over = arith.cmpf ogt, %iou, %iou_t : f64
      %kj = memref.load %key[%j] : memref<?xi64>
      %left = arith.select %over, %none, %kj : i64
      memref.store %left, %key[%j] : memref<?xi64>
      loop.yield
    }}
    loop.yield
  }}
  loop.return
}}
"""


KERNELS: dict[type[Operation], tuple[str, str]] = {NmsOp: ("nms_cpu", NMS_KERNEL)}
"""Per op class: the name and the text of its CPU kernel."""


def _takes(op: Operation) -> bool:
    """Whether `op` runs on the CPU on f32 tensors (what the kernels take)."""
    return ((device.placement_of(op) or Device.CPU) == Device.CPU
            and all(isinstance(v.type, TensorType) and isinstance(v.type.element_type, Float32Type)
                    for v in op.operands))


def attach(module: ModuleOp, function: func.FuncOp, op: Operation) -> None:
    """If `op` (outlined into host `function`) has a CPU kernel and takes these operands:
    add the kernel to `module` unless it is there, and name it on `function`."""
    found = KERNELS.get(type(op))
    if found is None or not _takes(op):
        return
    name, text = found
    if SymbolTable.lookup_symbol(module, name) is None:
        kernel = next(iter(parse_mlir(make_context(), text, f"<{name}>").ops))
        kernel.detach()
        kernel.verify()
        Rewriter.insert_op(kernel, InsertPoint.at_end(module.body.block))
    function.attributes[device.NATIVE_KERNEL] = SymbolRefAttr(StringAttr(name))
