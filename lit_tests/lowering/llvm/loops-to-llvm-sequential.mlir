// RUN: nimble-opt %s -p lower-loops-to-llvm | filecheck %s

// CHECK-LABEL: llvm.func internal @seq_body
// CHECK-SAME: (%[[V0:[A-Za-z0-9_$.-]+]]: !llvm.ptr, %[[V1:[A-Za-z0-9_$.-]+]]: !llvm.ptr, %[[V2:[A-Za-z0-9_$.-]+]]: i64, %[[V3:[A-Za-z0-9_$.-]+]]: i64, %[[V4:[A-Za-z0-9_$.-]+]]: i64) {
// CHECK-NEXT: %[[V5:[A-Za-z0-9_$.-]+]] = llvm.mlir.constant(8) : i64
// CHECK-NEXT: %[[V6:[A-Za-z0-9_$.-]+]] = llvm.mlir.constant(1) : i64
// CHECK-NEXT: %[[V7:[A-Za-z0-9_$.-]+]] = llvm.mlir.constant(false) : i1
// CHECK-NEXT: %[[V8:[A-Za-z0-9_$.-]+]] = llvm.mlir.constant(0) : i64
// CHECK-NEXT: %[[V9:[A-Za-z0-9_$.-]+]] = llvm.mlir.constant(0.000000e+00 : f32) : f32
// CHECK-NEXT: %[[V10:[A-Za-z0-9_$.-]+]] = llvm.alloca %[[V5]] x i16 {alignment = 64 : i64} : (i64) -> !llvm.ptr
// CHECK-NEXT: %[[V11:[A-Za-z0-9_$.-]+]] = llvm.ptrtoint %[[V10]] : !llvm.ptr to i64
// CHECK-NEXT: %[[V12:[A-Za-z0-9_$.-]+]] = llvm.inttoptr %[[V11]] : i64 to !llvm.ptr
// CHECK-NEXT: %[[V13:[A-Za-z0-9_$.-]+]] = llvm.mlir.constant(16 : i32) : i32
// CHECK-NEXT: %[[V14:[A-Za-z0-9_$.-]+]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT: %[[V15:[A-Za-z0-9_$.-]+]] = llvm.mlir.constant(32767 : i32) : i32
// CHECK-NEXT: llvm.br ^bb1
// CHECK-NEXT: ^bb1:
// CHECK-NEXT: %[[V16:[A-Za-z0-9_$.-]+]] = llvm.mul %[[V6]], %[[V5]] : i64
// CHECK-NEXT: llvm.br ^bb2(%[[V8]] : i64)
// CHECK-NEXT: ^bb2(%[[V17:[A-Za-z0-9_$.-]+]]: i64):
// CHECK-NEXT: %[[V18:[A-Za-z0-9_$.-]+]] = llvm.icmp "slt" %[[V17]], %[[V5]] : i64
// CHECK-NEXT: llvm.cond_br %[[V18]], ^bb3, ^bb4
// CHECK-NEXT: ^bb3:
// CHECK-NEXT: %[[V19:[A-Za-z0-9_$.-]+]] = llvm.getelementptr inbounds %[[V0]][%[[V17]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT: %[[V20:[A-Za-z0-9_$.-]+]] = llvm.load %[[V19]] : !llvm.ptr -> f32
// CHECK-NEXT: %[[V21:[A-Za-z0-9_$.-]+]] = llvm.bitcast %[[V20]] : f32 to i32
// CHECK-NEXT: %[[V22:[A-Za-z0-9_$.-]+]] = llvm.lshr %[[V21]], %[[V13]] : i32
// CHECK-NEXT: %[[V23:[A-Za-z0-9_$.-]+]] = llvm.and %[[V22]], %[[V14]] : i32
// CHECK-NEXT: %[[V24:[A-Za-z0-9_$.-]+]] = llvm.add %[[V23]], %[[V15]] : i32
// CHECK-NEXT: %[[V25:[A-Za-z0-9_$.-]+]] = llvm.add %[[V21]], %[[V24]] : i32
// CHECK-NEXT: %[[V26:[A-Za-z0-9_$.-]+]] = llvm.lshr %[[V25]], %[[V13]] : i32
// CHECK-NEXT: %[[V27:[A-Za-z0-9_$.-]+]] = llvm.trunc %[[V26]] : i32 to i16
// CHECK-NEXT: %[[V28:[A-Za-z0-9_$.-]+]] = llvm.getelementptr inbounds %[[V12]][%[[V17]]] : (!llvm.ptr, i64) -> !llvm.ptr, i16
// CHECK-NEXT: llvm.store %[[V27]], %[[V28]] : i16, !llvm.ptr
// CHECK-NEXT: %[[V29:[A-Za-z0-9_$.-]+]] = llvm.add %[[V17]], %[[V6]] : i64
// CHECK-NEXT: llvm.br ^bb2(%[[V29]] : i64)
// CHECK-NEXT: ^bb4:
// CHECK-NEXT: llvm.br ^bb5(%[[V8]], %[[V9]] : i64, f32)
// CHECK-NEXT: ^bb5(%[[V30:[A-Za-z0-9_$.-]+]]: i64, %[[V31:[A-Za-z0-9_$.-]+]]: f32):
// CHECK-NEXT: %[[V32:[A-Za-z0-9_$.-]+]] = llvm.icmp "slt" %[[V30]], %[[V5]] : i64
// CHECK-NEXT: llvm.cond_br %[[V32]], ^bb6, ^bb7
// CHECK-NEXT: ^bb6:
// CHECK-NEXT: %[[V33:[A-Za-z0-9_$.-]+]] = llvm.getelementptr inbounds %[[V12]][%[[V30]]] : (!llvm.ptr, i64) -> !llvm.ptr, i16
// CHECK-NEXT: %[[V34:[A-Za-z0-9_$.-]+]] = llvm.load %[[V33]] : !llvm.ptr -> i16
// CHECK-NEXT: %[[V35:[A-Za-z0-9_$.-]+]] = llvm.zext %[[V34]] : i16 to i32
// CHECK-NEXT: %[[V36:[A-Za-z0-9_$.-]+]] = llvm.shl %[[V35]], %[[V13]] : i32
// CHECK-NEXT: %[[V37:[A-Za-z0-9_$.-]+]] = llvm.bitcast %[[V36]] : i32 to f32
// CHECK-NEXT: %[[V38:[A-Za-z0-9_$.-]+]] = llvm.fadd %[[V31]], %[[V37]] {fastmathFlags = #llvm.fastmath<contract>} : f32
// CHECK-NEXT: %[[V39:[A-Za-z0-9_$.-]+]] = llvm.add %[[V30]], %[[V6]] : i64
// CHECK-NEXT: llvm.br ^bb5(%[[V39]], %[[V38]] : i64, f32)
// CHECK-NEXT: ^bb7:
// CHECK-NEXT: %[[V40:[A-Za-z0-9_$.-]+]] = llvm.getelementptr inbounds %[[V1]][%[[V8]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT: llvm.store %[[V31]], %[[V40]] : f32, !llvm.ptr
// CHECK-NEXT: llvm.return
// CHECK-NEXT: }
// CHECK-NEXT: llvm.func @seq(%[[V41:[A-Za-z0-9_$.-]+]]: !llvm.ptr) {
// CHECK-NEXT: %[[V42:[A-Za-z0-9_$.-]+]] = llvm.load %[[V41]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT: %[[V43:[A-Za-z0-9_$.-]+]] = llvm.getelementptr %[[V41]][1] : (!llvm.ptr) -> !llvm.ptr, i64
// CHECK-NEXT: %[[V44:[A-Za-z0-9_$.-]+]] = llvm.load %[[V43]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT: %[[V45:[A-Za-z0-9_$.-]+]] = llvm.getelementptr %[[V41]][2] : (!llvm.ptr) -> !llvm.ptr, i64
// CHECK-NEXT: %[[V46:[A-Za-z0-9_$.-]+]] = llvm.load %[[V45]] : !llvm.ptr -> i64
// CHECK-NEXT: %[[V47:[A-Za-z0-9_$.-]+]] = llvm.getelementptr %[[V41]][3] : (!llvm.ptr) -> !llvm.ptr, i64
// CHECK-NEXT: %[[V48:[A-Za-z0-9_$.-]+]] = llvm.load %[[V47]] : !llvm.ptr -> i64
// CHECK-NEXT: %[[V49:[A-Za-z0-9_$.-]+]] = llvm.getelementptr %[[V41]][4] : (!llvm.ptr) -> !llvm.ptr, i64
// CHECK-NEXT: %[[V50:[A-Za-z0-9_$.-]+]] = llvm.load %[[V49]] : !llvm.ptr -> i64
// CHECK-NEXT: llvm.call @seq_body(%[[V42]], %[[V44]], %[[V46]], %[[V48]], %[[V50]]) : (!llvm.ptr, !llvm.ptr, i64, i64, i64) -> ()
// CHECK-NEXT: llvm.return
// CHECK-NEXT: }
// What spatial programs need from the LLVM lowering: scf.for (a sequential loop,
// carrying values) and bf16 buffers, stored as their 16 bits; truncf rounds to nearest
// even through integer ops, extf shifts the bits into the top half of an f32.
loop.kernel @seq(%a: memref<8xf32>, %out: memref<1xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  %buf = loop.alloc reg : memref<8xbf16>
  loop.foreach %i = %c0 to %c8 step %c1 {
    %x = memref.load %a[%i] : memref<8xf32>
    %t = arith.truncf %x : f32 to bf16
    memref.store %t, %buf[%i] : memref<8xbf16>
    loop.yield
  }
  %s = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %zero) -> (f32) {
    %b = memref.load %buf[%i] : memref<8xbf16>
    %x = arith.extf %b : bf16 to f32
    %n = arith.addf %acc, %x : f32
    scf.yield %n : f32
  }
  memref.store %s, %out[%c0] : memref<1xf32>
  loop.return
}
