// RUN: nimble-opt %s --split-input-file -p lower-loops-to-llvm | filecheck %s

// CHECK-LABEL: llvm.func internal @scale_body
// CHECK-SAME: (%[[V0:[A-Za-z0-9_$.-]+]]: !llvm.ptr, %[[V1:[A-Za-z0-9_$.-]+]]: i64, %[[V2:[A-Za-z0-9_$.-]+]]: !llvm.ptr, %[[V3:[A-Za-z0-9_$.-]+]]: i64, %[[V4:[A-Za-z0-9_$.-]+]]: i64, %[[V5:[A-Za-z0-9_$.-]+]]: i64) {
// CHECK-NEXT: %[[V6:[A-Za-z0-9_$.-]+]] = llvm.mlir.constant(0) : i64
// CHECK-NEXT: %[[V7:[A-Za-z0-9_$.-]+]] = llvm.mlir.constant(1) : i64
// CHECK-NEXT: %[[V8:[A-Za-z0-9_$.-]+]] = llvm.mlir.constant(2.000000e+00 : f32) : f32
// CHECK-NEXT: %[[V9:[A-Za-z0-9_$.-]+]] = llvm.mlir.constant(1) : i64
// CHECK-NEXT: %[[V10:[A-Za-z0-9_$.-]+]] = llvm.sub %[[V1]], %[[V6]] : i64
// CHECK-NEXT: %[[V11:[A-Za-z0-9_$.-]+]] = llvm.sub %[[V7]], %[[V9]] : i64
// CHECK-NEXT: %[[V12:[A-Za-z0-9_$.-]+]] = llvm.add %[[V10]], %[[V11]] : i64
// CHECK-NEXT: %[[V13:[A-Za-z0-9_$.-]+]] = llvm.sdiv %[[V12]], %[[V7]] : i64
// CHECK-NEXT: %[[V14:[A-Za-z0-9_$.-]+]] = llvm.mul %[[V13]], %[[V4]] : i64
// CHECK-NEXT: %[[V15:[A-Za-z0-9_$.-]+]] = llvm.sdiv %[[V14]], %[[V5]] : i64
// CHECK-NEXT: %[[V16:[A-Za-z0-9_$.-]+]] = llvm.add %[[V4]], %[[V9]] : i64
// CHECK-NEXT: %[[V17:[A-Za-z0-9_$.-]+]] = llvm.mul %[[V13]], %[[V16]] : i64
// CHECK-NEXT: %[[V18:[A-Za-z0-9_$.-]+]] = llvm.sdiv %[[V17]], %[[V5]] : i64
// CHECK-NEXT: %[[V19:[A-Za-z0-9_$.-]+]] = llvm.mul %[[V15]], %[[V7]] : i64
// CHECK-NEXT: %[[V20:[A-Za-z0-9_$.-]+]] = llvm.add %[[V6]], %[[V19]] : i64
// CHECK-NEXT: %[[V21:[A-Za-z0-9_$.-]+]] = llvm.mul %[[V18]], %[[V7]] : i64
// CHECK-NEXT: %[[V22:[A-Za-z0-9_$.-]+]] = llvm.add %[[V6]], %[[V21]] : i64
// CHECK-NEXT: %[[V23:[A-Za-z0-9_$.-]+]] = llvm.icmp "slt" %[[V22]], %[[V1]] : i64
// CHECK-NEXT: %[[V24:[A-Za-z0-9_$.-]+]] = llvm.select %[[V23]], %[[V22]], %[[V1]] : i1, i64
// CHECK-NEXT: llvm.br ^bb1(%[[V20]] : i64)
// CHECK-NEXT: ^bb1(%[[V25:[A-Za-z0-9_$.-]+]]: i64):
// CHECK-NEXT: %[[V26:[A-Za-z0-9_$.-]+]] = llvm.icmp "slt" %[[V25]], %[[V24]] : i64
// CHECK-NEXT: llvm.cond_br %[[V26]], ^bb2, ^bb3
// CHECK-NEXT: ^bb2:
// CHECK-NEXT: %[[V27:[A-Za-z0-9_$.-]+]] = llvm.getelementptr inbounds %[[V0]][%[[V25]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT: %[[V28:[A-Za-z0-9_$.-]+]] = llvm.load %[[V27]] : !llvm.ptr -> f32
// CHECK-NEXT: %[[V29:[A-Za-z0-9_$.-]+]] = llvm.fmul %[[V28]], %[[V8]] {fastmathFlags = #llvm.fastmath<contract>} : f32
// CHECK-NEXT: %[[V30:[A-Za-z0-9_$.-]+]] = llvm.getelementptr inbounds %[[V2]][%[[V25]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT: llvm.store %[[V29]], %[[V30]] : f32, !llvm.ptr
// CHECK-NEXT: %[[V31:[A-Za-z0-9_$.-]+]] = llvm.add %[[V25]], %[[V7]] : i64
// CHECK-NEXT: llvm.br ^bb1(%[[V31]] : i64)
// CHECK-NEXT: ^bb3:
// CHECK-NEXT: llvm.return
// CHECK-NEXT: }
// CHECK-NEXT: llvm.func @scale(%[[V32:[A-Za-z0-9_$.-]+]]: !llvm.ptr) {
// CHECK-NEXT: %[[V33:[A-Za-z0-9_$.-]+]] = llvm.load %[[V32]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT: %[[V34:[A-Za-z0-9_$.-]+]] = llvm.getelementptr %[[V32]][1] : (!llvm.ptr) -> !llvm.ptr, i64
// CHECK-NEXT: %[[V35:[A-Za-z0-9_$.-]+]] = llvm.load %[[V34]] : !llvm.ptr -> i64
// CHECK-NEXT: %[[V36:[A-Za-z0-9_$.-]+]] = llvm.getelementptr %[[V32]][2] : (!llvm.ptr) -> !llvm.ptr, i64
// CHECK-NEXT: %[[V37:[A-Za-z0-9_$.-]+]] = llvm.load %[[V36]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT: %[[V38:[A-Za-z0-9_$.-]+]] = llvm.getelementptr %[[V32]][3] : (!llvm.ptr) -> !llvm.ptr, i64
// CHECK-NEXT: %[[V39:[A-Za-z0-9_$.-]+]] = llvm.load %[[V38]] : !llvm.ptr -> i64
// CHECK-NEXT: %[[V40:[A-Za-z0-9_$.-]+]] = llvm.getelementptr %[[V32]][4] : (!llvm.ptr) -> !llvm.ptr, i64
// CHECK-NEXT: %[[V41:[A-Za-z0-9_$.-]+]] = llvm.load %[[V40]] : !llvm.ptr -> i64
// CHECK-NEXT: %[[V42:[A-Za-z0-9_$.-]+]] = llvm.getelementptr %[[V32]][5] : (!llvm.ptr) -> !llvm.ptr, i64
// CHECK-NEXT: %[[V43:[A-Za-z0-9_$.-]+]] = llvm.load %[[V42]] : !llvm.ptr -> i64
// CHECK-NEXT: llvm.call @scale_body(%[[V33]], %[[V35]], %[[V37]], %[[V39]], %[[V41]], %[[V43]]) : (!llvm.ptr, i64, !llvm.ptr, i64, i64, i64) -> ()
// CHECK-NEXT: llvm.return
// CHECK-NEXT: }

func.func @scale(%a: memref<?xf32>, %out: memref<?xf32>) attributes {nimble.kernel = "scale"} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %two = arith.constant 2.0 : f32
  %n = memref.dim %a, %c0 : memref<?xf32>
  loop.foreach %i = %c0 to %n step %c1 schedule #loop.schedule<parallel> {
    %x = memref.load %a[%i] : memref<?xf32>
    %y = arith.mulf %x, %two : f32
    memref.store %y, %out[%i] : memref<?xf32>
    loop.yield
  }
  func.return
}

// -----

// CHECK-LABEL: llvm.func internal @row_max_body
// CHECK-SAME: (%[[V0:[A-Za-z0-9_$.-]+]]: !llvm.ptr, %[[V1:[A-Za-z0-9_$.-]+]]: i64, %[[V2:[A-Za-z0-9_$.-]+]]: !llvm.ptr, %[[V3:[A-Za-z0-9_$.-]+]]: i64, %[[V4:[A-Za-z0-9_$.-]+]]: i64, %[[V5:[A-Za-z0-9_$.-]+]]: i64) {
// CHECK-NEXT: %[[V6:[A-Za-z0-9_$.-]+]] = llvm.mlir.constant(8) : i64
// CHECK-NEXT: %[[V7:[A-Za-z0-9_$.-]+]] = llvm.mlir.constant(0) : i64
// CHECK-NEXT: %[[V8:[A-Za-z0-9_$.-]+]] = llvm.mlir.constant(1) : i64
// CHECK-NEXT: %[[V9:[A-Za-z0-9_$.-]+]] = llvm.mlir.constant(8) : i64
// CHECK-NEXT: %[[V10:[A-Za-z0-9_$.-]+]] = llvm.mlir.constant(0xff800000 : f32) : f32
// CHECK-NEXT: llvm.br ^bb1(%[[V7]] : i64)
// CHECK-NEXT: ^bb1(%[[V11:[A-Za-z0-9_$.-]+]]: i64):
// CHECK-NEXT: %[[V12:[A-Za-z0-9_$.-]+]] = llvm.icmp "slt" %[[V11]], %[[V1]] : i64
// CHECK-NEXT: llvm.cond_br %[[V12]], ^bb2, ^bb3
// CHECK-NEXT: ^bb2:
// CHECK-NEXT: llvm.br ^bb4(%[[V7]], %[[V10]] : i64, f32)
// CHECK-NEXT: ^bb3:
// CHECK-NEXT: llvm.return
// CHECK-NEXT: ^bb4(%[[V13:[A-Za-z0-9_$.-]+]]: i64, %[[V14:[A-Za-z0-9_$.-]+]]: f32):
// CHECK-NEXT: %[[V15:[A-Za-z0-9_$.-]+]] = llvm.icmp "slt" %[[V13]], %[[V9]] : i64
// CHECK-NEXT: llvm.cond_br %[[V15]], ^bb5, ^bb6
// CHECK-NEXT: ^bb5:
// CHECK-NEXT: %[[V16:[A-Za-z0-9_$.-]+]] = llvm.mul %[[V11]], %[[V6]] : i64
// CHECK-NEXT: %[[V17:[A-Za-z0-9_$.-]+]] = llvm.add %[[V16]], %[[V13]] : i64
// CHECK-NEXT: %[[V18:[A-Za-z0-9_$.-]+]] = llvm.getelementptr inbounds %[[V0]][%[[V17]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT: %[[V19:[A-Za-z0-9_$.-]+]] = llvm.load %[[V18]] : !llvm.ptr -> f32
// CHECK-NEXT: %[[V20:[A-Za-z0-9_$.-]+]] = llvm.call_intrinsic "llvm.maximum.f32"(%[[V14]], %[[V19]]) : (f32, f32) -> f32
// CHECK-NEXT: %[[V21:[A-Za-z0-9_$.-]+]] = llvm.add %[[V13]], %[[V8]] : i64
// CHECK-NEXT: llvm.br ^bb4(%[[V21]], %[[V20]] : i64, f32)
// CHECK-NEXT: ^bb6:
// CHECK-NEXT: %[[V22:[A-Za-z0-9_$.-]+]] = llvm.getelementptr inbounds %[[V2]][%[[V11]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT: llvm.store %[[V14]], %[[V22]] : f32, !llvm.ptr
// CHECK-NEXT: %[[V23:[A-Za-z0-9_$.-]+]] = llvm.add %[[V11]], %[[V8]] : i64
// CHECK-NEXT: llvm.br ^bb1(%[[V23]] : i64)
// CHECK-NEXT: }
// CHECK-NEXT: llvm.func @row_max(%[[V24:[A-Za-z0-9_$.-]+]]: !llvm.ptr) {
// CHECK-NEXT: %[[V25:[A-Za-z0-9_$.-]+]] = llvm.load %[[V24]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT: %[[V26:[A-Za-z0-9_$.-]+]] = llvm.getelementptr %[[V24]][1] : (!llvm.ptr) -> !llvm.ptr, i64
// CHECK-NEXT: %[[V27:[A-Za-z0-9_$.-]+]] = llvm.load %[[V26]] : !llvm.ptr -> i64
// CHECK-NEXT: %[[V28:[A-Za-z0-9_$.-]+]] = llvm.getelementptr %[[V24]][2] : (!llvm.ptr) -> !llvm.ptr, i64
// CHECK-NEXT: %[[V29:[A-Za-z0-9_$.-]+]] = llvm.load %[[V28]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT: %[[V30:[A-Za-z0-9_$.-]+]] = llvm.getelementptr %[[V24]][3] : (!llvm.ptr) -> !llvm.ptr, i64
// CHECK-NEXT: %[[V31:[A-Za-z0-9_$.-]+]] = llvm.load %[[V30]] : !llvm.ptr -> i64
// CHECK-NEXT: %[[V32:[A-Za-z0-9_$.-]+]] = llvm.getelementptr %[[V24]][4] : (!llvm.ptr) -> !llvm.ptr, i64
// CHECK-NEXT: %[[V33:[A-Za-z0-9_$.-]+]] = llvm.load %[[V32]] : !llvm.ptr -> i64
// CHECK-NEXT: %[[V34:[A-Za-z0-9_$.-]+]] = llvm.getelementptr %[[V24]][5] : (!llvm.ptr) -> !llvm.ptr, i64
// CHECK-NEXT: %[[V35:[A-Za-z0-9_$.-]+]] = llvm.load %[[V34]] : !llvm.ptr -> i64
// CHECK-NEXT: llvm.call @row_max_body(%[[V25]], %[[V27]], %[[V29]], %[[V31]], %[[V33]], %[[V35]]) : (!llvm.ptr, i64, !llvm.ptr, i64, i64, i64) -> ()
// CHECK-NEXT: llvm.return
// CHECK-NEXT: }
func.func @row_max(%a: memref<?x8xf32>, %out: memref<?xf32>) attributes {nimble.kernel = "row_max"} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %ninf = arith.constant 0xFF800000 : f32
  %n = memref.dim %a, %c0 : memref<?x8xf32>
  loop.foreach %i = %c0 to %n step %c1 {
    %m = loop.reduce %k = %c0 to %c8 step %c1 combine(max) init(%ninf) : f32 {
      %x = memref.load %a[%i, %k] : memref<?x8xf32>
      loop.yield %x : f32
    }
    memref.store %m, %out[%i] : memref<?xf32>
    loop.yield
  }
  func.return
}
