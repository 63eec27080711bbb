// RUN: nimble-opt %s --split-input-file -p lower-loops-to-llvm | filecheck %s

// CHECK-LABEL: llvm.func internal @scale_body
// CHECK-SAME: (%[[V0:[A-Za-z0-9_$.-]+]]: !llvm.ptr, %[[V1:[A-Za-z0-9_$.-]+]]: i64, %[[V2:[A-Za-z0-9_$.-]+]]: !llvm.ptr, %[[V3:[A-Za-z0-9_$.-]+]]: i64, %[[V4:[A-Za-z0-9_$.-]+]]: i64, %[[V5:[A-Za-z0-9_$.-]+]]: i64, %[[V6:[A-Za-z0-9_$.-]+]]: i64) {
// CHECK-NEXT: %[[V7:[A-Za-z0-9_$.-]+]] = llvm.mlir.constant(false) : i1
// CHECK-NEXT: %[[V8:[A-Za-z0-9_$.-]+]] = llvm.mlir.constant(0) : i64
// CHECK-NEXT: %[[V9:[A-Za-z0-9_$.-]+]] = llvm.mlir.constant(1) : i64
// CHECK-NEXT: %[[V10:[A-Za-z0-9_$.-]+]] = llvm.mlir.constant(2.000000e+00 : f32) : f32
// CHECK-NEXT: %[[V11:[A-Za-z0-9_$.-]+]] = llvm.mlir.constant(true) : i1
// CHECK-NEXT: llvm.br ^bb1
// CHECK-NEXT: ^bb1:
// CHECK-NEXT: %[[V12:[A-Za-z0-9_$.-]+]] = llvm.sub %[[V1]], %[[V8]] : i64
// CHECK-NEXT: %[[V13:[A-Za-z0-9_$.-]+]] = llvm.sub %[[V9]], %[[V9]] : i64
// CHECK-NEXT: %[[V14:[A-Za-z0-9_$.-]+]] = llvm.add %[[V12]], %[[V13]] : i64
// CHECK-NEXT: %[[V15:[A-Za-z0-9_$.-]+]] = llvm.sdiv %[[V14]], %[[V9]] : i64
// CHECK-NEXT: %[[V16:[A-Za-z0-9_$.-]+]] = llvm.mul %[[V15]], %[[V5]] : i64
// CHECK-NEXT: %[[V17:[A-Za-z0-9_$.-]+]] = llvm.sdiv %[[V16]], %[[V6]] : i64
// CHECK-NEXT: %[[V18:[A-Za-z0-9_$.-]+]] = llvm.add %[[V5]], %[[V9]] : i64
// CHECK-NEXT: %[[V19:[A-Za-z0-9_$.-]+]] = llvm.mul %[[V15]], %[[V18]] : i64
// CHECK-NEXT: %[[V20:[A-Za-z0-9_$.-]+]] = llvm.sdiv %[[V19]], %[[V6]] : i64
// CHECK-NEXT: %[[V21:[A-Za-z0-9_$.-]+]] = llvm.mul %[[V17]], %[[V9]] : i64
// CHECK-NEXT: %[[V22:[A-Za-z0-9_$.-]+]] = llvm.add %[[V8]], %[[V21]] : i64
// CHECK-NEXT: %[[V23:[A-Za-z0-9_$.-]+]] = llvm.mul %[[V20]], %[[V9]] : i64
// CHECK-NEXT: %[[V24:[A-Za-z0-9_$.-]+]] = llvm.add %[[V8]], %[[V23]] : i64
// CHECK-NEXT: %[[V25:[A-Za-z0-9_$.-]+]] = llvm.icmp "slt" %[[V24]], %[[V1]] : i64
// CHECK-NEXT: %[[V26:[A-Za-z0-9_$.-]+]] = llvm.select %[[V25]], %[[V24]], %[[V1]] : i1, i64
// CHECK-NEXT: %[[V27:[A-Za-z0-9_$.-]+]] = llvm.xor %[[V7]], %[[V11]] : i1
// CHECK-NEXT: %[[V28:[A-Za-z0-9_$.-]+]] = llvm.select %[[V27]], %[[V22]], %[[V8]] : i1, i64
// CHECK-NEXT: %[[V29:[A-Za-z0-9_$.-]+]] = llvm.select %[[V27]], %[[V26]], %[[V1]] : i1, i64
// CHECK-NEXT: %[[V30:[A-Za-z0-9_$.-]+]] = llvm.or %[[V7]], %[[V27]] : i1
// CHECK-NEXT: llvm.br ^bb2(%[[V28]] : i64)
// CHECK-NEXT: ^bb2(%[[V31:[A-Za-z0-9_$.-]+]]: i64):
// CHECK-NEXT: %[[V32:[A-Za-z0-9_$.-]+]] = llvm.icmp "slt" %[[V31]], %[[V29]] : i64
// CHECK-NEXT: llvm.cond_br %[[V32]], ^bb3, ^bb4
// CHECK-NEXT: ^bb3:
// CHECK-NEXT: %[[V33:[A-Za-z0-9_$.-]+]] = llvm.getelementptr inbounds %[[V0]][%[[V31]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT: %[[V34:[A-Za-z0-9_$.-]+]] = llvm.load %[[V33]] : !llvm.ptr -> f32
// CHECK-NEXT: %[[V35:[A-Za-z0-9_$.-]+]] = llvm.fmul %[[V34]], %[[V10]] {fastmathFlags = #llvm.fastmath<contract>} : f32
// CHECK-NEXT: %[[V36:[A-Za-z0-9_$.-]+]] = llvm.getelementptr inbounds %[[V2]][%[[V31]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT: llvm.store %[[V35]], %[[V36]] : f32, !llvm.ptr
// CHECK-NEXT: %[[V37:[A-Za-z0-9_$.-]+]] = llvm.add %[[V31]], %[[V9]] : i64
// CHECK-NEXT: llvm.br ^bb2(%[[V37]] : i64)
// CHECK-NEXT: ^bb4:
// CHECK-NEXT: llvm.return
// CHECK-NEXT: }
// CHECK-NEXT: llvm.func @scale(%[[V38:[A-Za-z0-9_$.-]+]]: !llvm.ptr) {
// CHECK-NEXT: %[[V39:[A-Za-z0-9_$.-]+]] = llvm.load %[[V38]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT: %[[V40:[A-Za-z0-9_$.-]+]] = llvm.getelementptr %[[V38]][1] : (!llvm.ptr) -> !llvm.ptr, i64
// CHECK-NEXT: %[[V41:[A-Za-z0-9_$.-]+]] = llvm.load %[[V40]] : !llvm.ptr -> i64
// CHECK-NEXT: %[[V42:[A-Za-z0-9_$.-]+]] = llvm.getelementptr %[[V38]][2] : (!llvm.ptr) -> !llvm.ptr, i64
// CHECK-NEXT: %[[V43:[A-Za-z0-9_$.-]+]] = llvm.load %[[V42]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT: %[[V44:[A-Za-z0-9_$.-]+]] = llvm.getelementptr %[[V38]][3] : (!llvm.ptr) -> !llvm.ptr, i64
// CHECK-NEXT: %[[V45:[A-Za-z0-9_$.-]+]] = llvm.load %[[V44]] : !llvm.ptr -> i64
// CHECK-NEXT: %[[V46:[A-Za-z0-9_$.-]+]] = llvm.getelementptr %[[V38]][4] : (!llvm.ptr) -> !llvm.ptr, i64
// CHECK-NEXT: %[[V47:[A-Za-z0-9_$.-]+]] = llvm.load %[[V46]] : !llvm.ptr -> i64
// CHECK-NEXT: %[[V48:[A-Za-z0-9_$.-]+]] = llvm.getelementptr %[[V38]][5] : (!llvm.ptr) -> !llvm.ptr, i64
// CHECK-NEXT: %[[V49:[A-Za-z0-9_$.-]+]] = llvm.load %[[V48]] : !llvm.ptr -> i64
// CHECK-NEXT: %[[V50:[A-Za-z0-9_$.-]+]] = llvm.getelementptr %[[V38]][6] : (!llvm.ptr) -> !llvm.ptr, i64
// CHECK-NEXT: %[[V51:[A-Za-z0-9_$.-]+]] = llvm.load %[[V50]] : !llvm.ptr -> i64
// CHECK-NEXT: llvm.call @scale_body(%[[V39]], %[[V41]], %[[V43]], %[[V45]], %[[V47]], %[[V49]], %[[V51]]) : (!llvm.ptr, i64, !llvm.ptr, i64, i64, i64, i64) -> ()
// CHECK-NEXT: llvm.return
// CHECK-NEXT: }
loop.kernel @scale(%a: memref<?xf32>, %out: memref<?xf32>) {
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
  loop.return
}

// -----

// CHECK-LABEL: llvm.func internal @row_max_body
// CHECK-SAME: (%[[V0:[A-Za-z0-9_$.-]+]]: !llvm.ptr, %[[V1:[A-Za-z0-9_$.-]+]]: i64, %[[V2:[A-Za-z0-9_$.-]+]]: !llvm.ptr, %[[V3:[A-Za-z0-9_$.-]+]]: i64, %[[V4:[A-Za-z0-9_$.-]+]]: i64, %[[V5:[A-Za-z0-9_$.-]+]]: i64, %[[V6:[A-Za-z0-9_$.-]+]]: i64) {
// CHECK-NEXT: %[[V7:[A-Za-z0-9_$.-]+]] = llvm.mlir.constant(8) : i64
// CHECK-NEXT: %[[V8:[A-Za-z0-9_$.-]+]] = llvm.mlir.constant(false) : i1
// CHECK-NEXT: %[[V9:[A-Za-z0-9_$.-]+]] = llvm.mlir.constant(0) : i64
// CHECK-NEXT: %[[V10:[A-Za-z0-9_$.-]+]] = llvm.mlir.constant(1) : i64
// CHECK-NEXT: %[[V11:[A-Za-z0-9_$.-]+]] = llvm.mlir.constant(0xff800000 : f32) : f32
// CHECK-NEXT: llvm.br ^bb1
// CHECK-NEXT: ^bb1:
// CHECK-NEXT: llvm.br ^bb2(%[[V9]] : i64)
// CHECK-NEXT: ^bb2(%[[V12:[A-Za-z0-9_$.-]+]]: i64):
// CHECK-NEXT: %[[V13:[A-Za-z0-9_$.-]+]] = llvm.icmp "slt" %[[V12]], %[[V1]] : i64
// CHECK-NEXT: llvm.cond_br %[[V13]], ^bb3, ^bb4
// CHECK-NEXT: ^bb3:
// CHECK-NEXT: llvm.br ^bb5(%[[V9]], %[[V11]] : i64, f32)
// CHECK-NEXT: ^bb4:
// CHECK-NEXT: llvm.return
// CHECK-NEXT: ^bb5(%[[V14:[A-Za-z0-9_$.-]+]]: i64, %[[V15:[A-Za-z0-9_$.-]+]]: f32):
// CHECK-NEXT: %[[V16:[A-Za-z0-9_$.-]+]] = llvm.icmp "slt" %[[V14]], %[[V7]] : i64
// CHECK-NEXT: llvm.cond_br %[[V16]], ^bb6, ^bb7
// CHECK-NEXT: ^bb6:
// CHECK-NEXT: %[[V17:[A-Za-z0-9_$.-]+]] = llvm.mul %[[V12]], %[[V7]] : i64
// CHECK-NEXT: %[[V18:[A-Za-z0-9_$.-]+]] = llvm.add %[[V17]], %[[V14]] : i64
// CHECK-NEXT: %[[V19:[A-Za-z0-9_$.-]+]] = llvm.getelementptr inbounds %[[V0]][%[[V18]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT: %[[V20:[A-Za-z0-9_$.-]+]] = llvm.load %[[V19]] : !llvm.ptr -> f32
// CHECK-NEXT: %[[V21:[A-Za-z0-9_$.-]+]] = llvm.fcmp "ogt" %[[V15]], %[[V20]] : f32
// CHECK-NEXT: %[[V22:[A-Za-z0-9_$.-]+]] = llvm.select %[[V21]], %[[V15]], %[[V20]] : i1, f32
// CHECK-NEXT: %[[V23:[A-Za-z0-9_$.-]+]] = llvm.fcmp "uno" %[[V15]], %[[V15]] : f32
// CHECK-NEXT: %[[V24:[A-Za-z0-9_$.-]+]] = llvm.select %[[V23]], %[[V15]], %[[V22]] : i1, f32
// CHECK-NEXT: %[[V25:[A-Za-z0-9_$.-]+]] = llvm.add %[[V14]], %[[V10]] : i64
// CHECK-NEXT: llvm.br ^bb5(%[[V25]], %[[V24]] : i64, f32)
// CHECK-NEXT: ^bb7:
// CHECK-NEXT: %[[V26:[A-Za-z0-9_$.-]+]] = llvm.getelementptr inbounds %[[V2]][%[[V12]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT: llvm.store %[[V15]], %[[V26]] : f32, !llvm.ptr
// CHECK-NEXT: %[[V27:[A-Za-z0-9_$.-]+]] = llvm.add %[[V12]], %[[V10]] : i64
// CHECK-NEXT: llvm.br ^bb2(%[[V27]] : i64)
// CHECK-NEXT: }
// CHECK-NEXT: llvm.func @row_max(%[[V28:[A-Za-z0-9_$.-]+]]: !llvm.ptr) {
// CHECK-NEXT: %[[V29:[A-Za-z0-9_$.-]+]] = llvm.load %[[V28]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT: %[[V30:[A-Za-z0-9_$.-]+]] = llvm.getelementptr %[[V28]][1] : (!llvm.ptr) -> !llvm.ptr, i64
// CHECK-NEXT: %[[V31:[A-Za-z0-9_$.-]+]] = llvm.load %[[V30]] : !llvm.ptr -> i64
// CHECK-NEXT: %[[V32:[A-Za-z0-9_$.-]+]] = llvm.getelementptr %[[V28]][2] : (!llvm.ptr) -> !llvm.ptr, i64
// CHECK-NEXT: %[[V33:[A-Za-z0-9_$.-]+]] = llvm.load %[[V32]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT: %[[V34:[A-Za-z0-9_$.-]+]] = llvm.getelementptr %[[V28]][3] : (!llvm.ptr) -> !llvm.ptr, i64
// CHECK-NEXT: %[[V35:[A-Za-z0-9_$.-]+]] = llvm.load %[[V34]] : !llvm.ptr -> i64
// CHECK-NEXT: %[[V36:[A-Za-z0-9_$.-]+]] = llvm.getelementptr %[[V28]][4] : (!llvm.ptr) -> !llvm.ptr, i64
// CHECK-NEXT: %[[V37:[A-Za-z0-9_$.-]+]] = llvm.load %[[V36]] : !llvm.ptr -> i64
// CHECK-NEXT: %[[V38:[A-Za-z0-9_$.-]+]] = llvm.getelementptr %[[V28]][5] : (!llvm.ptr) -> !llvm.ptr, i64
// CHECK-NEXT: %[[V39:[A-Za-z0-9_$.-]+]] = llvm.load %[[V38]] : !llvm.ptr -> i64
// CHECK-NEXT: %[[V40:[A-Za-z0-9_$.-]+]] = llvm.getelementptr %[[V28]][6] : (!llvm.ptr) -> !llvm.ptr, i64
// CHECK-NEXT: %[[V41:[A-Za-z0-9_$.-]+]] = llvm.load %[[V40]] : !llvm.ptr -> i64
// CHECK-NEXT: llvm.call @row_max_body(%[[V29]], %[[V31]], %[[V33]], %[[V35]], %[[V37]], %[[V39]], %[[V41]]) : (!llvm.ptr, i64, !llvm.ptr, i64, i64, i64, i64) -> ()
// CHECK-NEXT: llvm.return
// CHECK-NEXT: }
loop.kernel @row_max(%a: memref<?x8xf32>, %out: memref<?xf32>) {
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
  loop.return
}

// -----

// A cooperative kernel (a recurrence's): the chunks' mailbox is the slot before the
// chunk index; chunk 0 allocates the top-level buffer for all; a barrier follows each
// nest whose buffers the next use (before the loop, between its two nests, at the end of
// each step) and precedes the frees.

// CHECK-LABEL: llvm.func internal @steps_body
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: !llvm.ptr, %[[D:[A-Za-z0-9_$.-]+]]: i64, %[[N:[A-Za-z0-9_$.-]+]]: i64, %[[MAILBOX:[A-Za-z0-9_$.-]+]]: i64, %[[CHUNK:[A-Za-z0-9_$.-]+]]: i64, %[[CHUNKS:[A-Za-z0-9_$.-]+]]: i64) {
// CHECK: %[[BOX:[A-Za-z0-9_$.-]+]] = llvm.inttoptr %[[MAILBOX]] : i64 to !llvm.ptr
// CHECK: %[[S:[A-Za-z0-9_$.-]+]] = llvm.call @nimble_shared_alloc(%[[BOX]], %{{.*}}, %[[CHUNK]], %[[CHUNKS]], %{{.*}})
// CHECK: llvm.call @nimble_barrier(%[[BOX]], %[[CHUNKS]], %[[COUNT:[A-Za-z0-9_$.-]+]])
// CHECK: llvm.call @nimble_barrier(%[[BOX]], %[[CHUNKS]], %[[COUNT]])
// CHECK-NEXT: llvm.call @nimble_shared_free(%[[CHUNK]], %[[S]])
// CHECK: llvm.call @nimble_barrier(%[[BOX]], %[[CHUNKS]], %[[COUNT]])
// CHECK: llvm.call @nimble_barrier(%[[BOX]], %[[CHUNKS]], %[[COUNT]])
// CHECK-NOT: nimble_barrier
// CHECK-LABEL: llvm.func @steps
loop.kernel @steps(%x: memref<?xf32>, %n: index) attributes {nimble.cooperative} {
  %0 = arith.constant 0 : index
  %1 = arith.constant 1 : index
  %d = memref.dim %x, %0 : memref<?xf32>
  %s = loop.alloc dram (%d) : memref<?xf32>
  loop.foreach %i = %0 to %d step %1 {
    %v = memref.load %x[%i] : memref<?xf32>
    memref.store %v, %s[%i] : memref<?xf32>
    loop.yield
  }
  scf.for %t = %0 to %n step %1 {
    loop.foreach %i = %0 to %d step %1 {
      %v = memref.load %s[%i] : memref<?xf32>
      %w = arith.addf %v, %v : f32
      memref.store %w, %x[%i] : memref<?xf32>
      loop.yield
    }
    loop.foreach %i = %0 to %d step %1 {
      %v = memref.load %x[%i] : memref<?xf32>
      memref.store %v, %s[%i] : memref<?xf32>
      loop.yield
    }
    scf.yield
  }
  loop.return
}

// -----

// vector.create_mask: the lane numbers compared with the splatted count.

// CHECK-LABEL: llvm.func internal @prefix_body
// CHECK-SAME: (%[[V0:[A-Za-z0-9_$.-]+]]: !llvm.ptr, %[[V1:[A-Za-z0-9_$.-]+]]: i64, %[[V2:[A-Za-z0-9_$.-]+]]: i64, %[[V3:[A-Za-z0-9_$.-]+]]: i64, %[[V4:[A-Za-z0-9_$.-]+]]: i64, %[[V5:[A-Za-z0-9_$.-]+]]: i64) {
// CHECK-NEXT: %[[V6:[A-Za-z0-9_$.-]+]] = llvm.mlir.constant(false) : i1
// CHECK-NEXT: %[[V7:[A-Za-z0-9_$.-]+]] = llvm.mlir.constant(0) : i64
// CHECK-NEXT: %[[V8:[A-Za-z0-9_$.-]+]] = llvm.mlir.constant(dense<[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]> : vector<16xi64>) : vector<16xi64>
// CHECK-NEXT: %[[V9:[A-Za-z0-9_$.-]+]] = llvm.mlir.undef : vector<16xi64>
// CHECK-NEXT: %[[V10:[A-Za-z0-9_$.-]+]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT: %[[V11:[A-Za-z0-9_$.-]+]] = llvm.mlir.constant(dense<1.000000e+00> : vector<16xf32>) : vector<16xf32>
// CHECK-NEXT: llvm.br ^bb1
// CHECK-NEXT: ^bb1:
// CHECK-NEXT: %[[V12:[A-Za-z0-9_$.-]+]] = llvm.insertelement %[[V2]], %[[V9]][%[[V10]] : i32] : vector<16xi64>
// CHECK-NEXT: %[[V13:[A-Za-z0-9_$.-]+]] = llvm.shufflevector %[[V12]], %[[V9]] [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0] : vector<16xi64>
// CHECK-NEXT: %[[V14:[A-Za-z0-9_$.-]+]] = llvm.icmp "slt" %[[V8]], %[[V13]] : vector<16xi64>
// CHECK-NEXT: %[[V15:[A-Za-z0-9_$.-]+]] = llvm.getelementptr inbounds %[[V0]][%[[V7]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT: llvm.intr.masked.store %[[V11]], %[[V15]], %[[V14]] {alignment = 4 : i32} : vector<16xf32>, vector<16xi1> into !llvm.ptr
// CHECK-NEXT: llvm.return
// CHECK-NEXT: }
// CHECK-NEXT: llvm.func @prefix(%[[V16:[A-Za-z0-9_$.-]+]]: !llvm.ptr) {
// CHECK-NEXT: %[[V17:[A-Za-z0-9_$.-]+]] = llvm.load %[[V16]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT: %[[V18:[A-Za-z0-9_$.-]+]] = llvm.getelementptr %[[V16]][1] : (!llvm.ptr) -> !llvm.ptr, i64
// CHECK-NEXT: %[[V19:[A-Za-z0-9_$.-]+]] = llvm.load %[[V18]] : !llvm.ptr -> i64
// CHECK-NEXT: %[[V20:[A-Za-z0-9_$.-]+]] = llvm.getelementptr %[[V16]][2] : (!llvm.ptr) -> !llvm.ptr, i64
// CHECK-NEXT: %[[V21:[A-Za-z0-9_$.-]+]] = llvm.load %[[V20]] : !llvm.ptr -> i64
// CHECK-NEXT: %[[V22:[A-Za-z0-9_$.-]+]] = llvm.getelementptr %[[V16]][3] : (!llvm.ptr) -> !llvm.ptr, i64
// CHECK-NEXT: %[[V23:[A-Za-z0-9_$.-]+]] = llvm.load %[[V22]] : !llvm.ptr -> i64
// CHECK-NEXT: %[[V24:[A-Za-z0-9_$.-]+]] = llvm.getelementptr %[[V16]][4] : (!llvm.ptr) -> !llvm.ptr, i64
// CHECK-NEXT: %[[V25:[A-Za-z0-9_$.-]+]] = llvm.load %[[V24]] : !llvm.ptr -> i64
// CHECK-NEXT: %[[V26:[A-Za-z0-9_$.-]+]] = llvm.getelementptr %[[V16]][5] : (!llvm.ptr) -> !llvm.ptr, i64
// CHECK-NEXT: %[[V27:[A-Za-z0-9_$.-]+]] = llvm.load %[[V26]] : !llvm.ptr -> i64
// CHECK-NEXT: llvm.call @prefix_body(%[[V17]], %[[V19]], %[[V21]], %[[V23]], %[[V25]], %[[V27]]) : (!llvm.ptr, i64, i64, i64, i64, i64) -> ()
// CHECK-NEXT: llvm.return
// CHECK-NEXT: }
loop.kernel @prefix(%out: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %mask = vector.create_mask %n : vector<16xi1>
  %v = arith.constant dense<1.000000e+00> : vector<16xf32>
  vector.maskedstore %out[%c0], %mask, %v : memref<?xf32>, vector<16xi1>, vector<16xf32>
  loop.return
}

// -----

// A prefetch is the element's address and LLVM's intrinsic: read (0), the op's
// locality, data cache (1) (constants, like every constant, made once in the entry block).
// CHECK-LABEL: llvm.func internal @prefetch_row_body
// CHECK-SAME: (%[[W:[A-Za-z0-9_$.-]+]]: !llvm.ptr, %[[N:[A-Za-z0-9_$.-]+]]: i64, %[[J:[A-Za-z0-9_$.-]+]]: i64, %[[K:[A-Za-z0-9_$.-]+]]: i64
// CHECK-DAG: %[[READ:[A-Za-z0-9_$.-]+]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-DAG: %[[DATA:[A-Za-z0-9_$.-]+]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-DAG: %[[KEEP:[A-Za-z0-9_$.-]+]] = llvm.mlir.constant(2 : i32) : i32
// CHECK: %[[ROW:[A-Za-z0-9_$.-]+]] = llvm.mul %[[J]], %{{.*}} : i64
// CHECK-NEXT: %[[AT:[A-Za-z0-9_$.-]+]] = llvm.add %[[ROW]], %[[K]] : i64
// CHECK-NEXT: %[[PTR:[A-Za-z0-9_$.-]+]] = llvm.getelementptr inbounds %[[W]][%[[AT]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT: llvm.call_intrinsic "llvm.prefetch.p0"(%[[PTR]], %[[READ]], %[[KEEP]], %[[DATA]]) : (!llvm.ptr, i32, i32, i32) -> ()
// CHECK-NEXT: llvm.return
loop.kernel @prefetch_row(%w: memref<?x64xf32>, %j: index, %k: index) {
  loop.prefetch %w[%j, %k] {locality = 2 : i64} : memref<?x64xf32>
  loop.return
}

// -----

// A reduction over the steps whole vectors leave (from `n - n % 16` to `n`, by 1) sums
// in order (no `reassoc`): LLVM's loop vectorizer leaves it alone. A reduction over all
// of `n` may be reassociated.
// CHECK-LABEL: llvm.func internal @short_sum_body
// CHECK: llvm.fadd %{{.*}}, %{{.*}} {fastmathFlags = #llvm.fastmath<contract>} : f32
// CHECK: llvm.fadd %{{.*}}, %{{.*}} {fastmathFlags = #llvm.fastmath<{{(reassoc,contract|contract,reassoc)}}>} : f32
// CHECK-LABEL: llvm.func @short_sum
loop.kernel @short_sum(%a: memref<?xf32>, %out: memref<2xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant 0.0 : f32
  %n = memref.dim %a, %c0 : memref<?xf32>
  %rem = arith.remsi %n, %c16 : index
  %whole = arith.subi %n, %rem : index
  %tail = loop.reduce %k = %whole to %n step %c1 combine(add) init(%zero) : f32 {
    %x = memref.load %a[%k] : memref<?xf32>
    loop.yield %x : f32
  }
  %all = loop.reduce %k = %c0 to %n step %c1 combine(add) init(%zero) : f32 {
    %x = memref.load %a[%k] : memref<?xf32>
    loop.yield %x : f32
  }
  memref.store %tail, %out[%c0] : memref<2xf32>
  memref.store %all, %out[%c1] : memref<2xf32>
  loop.return
}
