// RUN: nimble-opt %s --split-input-file -p split-index-sets,canonicalize | filecheck %s

// A concatenation along the rows: each row selects between the two operands. Split at
// the seam, each loop copies one operand; the comparison, the clamps and the select go.
// CHECK-LABEL: loop.kernel @concat_rows
// CHECK-SAME: (%[[A:[A-Za-z0-9_$.-]+]]: memref<3x8xf32>, %[[B:[A-Za-z0-9_$.-]+]]: memref<5x8xf32>, %[[O:[A-Za-z0-9_$.-]+]]: memref<8x8xf32>)
// CHECK-NOT: arith.select
// CHECK: loop.foreach %[[I:[A-Za-z0-9_$.-]+]] = %{{.*}} to %[[S:[A-Za-z0-9_$.-]+]] step
// CHECK: memref.load %[[A]][%[[I]], %{{.*}}] : memref<3x8xf32>
// CHECK-NOT: memref.load %[[B]]
// CHECK: loop.foreach %[[J:[A-Za-z0-9_$.-]+]] = %[[S]] to %{{.*}} step
// CHECK: %[[R:[A-Za-z0-9_$.-]+]] = arith.subi %[[J]], %{{.*}} : index
// CHECK: memref.load %[[B]][%[[R]], %{{.*}}] : memref<5x8xf32>
// CHECK-NOT: arith.select
// CHECK: loop.return

loop.kernel @concat_rows(%a: memref<3x8xf32>, %b: memref<5x8xf32>, %o: memref<8x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  loop.foreach %i = %c0 to %c8 step %c1 {
    %ia = arith.minsi %i, %c2 : index
    %d = arith.subi %i, %c3 : index
    %ib0 = arith.maxsi %d, %c0 : index
    %ib = arith.minsi %ib0, %c4 : index
    %second = arith.cmpi sge, %i, %c3 : index
    loop.foreach %j = %c0 to %c8 step %c1 {
      %x = memref.load %a[%ia, %j] : memref<3x8xf32>
      %y = memref.load %b[%ib, %j] : memref<5x8xf32>
      %v = arith.select %second, %y, %x : f32
      memref.store %v, %o[%i, %j] : memref<8x8xf32>
      loop.yield
    }
    loop.yield
  }
  loop.return
}

// -----

// A reduction whose result nothing reads after the split (the conv a concatenation's
// copied channels computed for nothing): gone with its select.
// CHECK-LABEL: loop.kernel @dead_reduction
// CHECK-NOT: arith.select
// CHECK: loop.foreach
// CHECK-NOT: loop.reduce
// CHECK: loop.foreach
// CHECK: loop.reduce
// CHECK: loop.return

loop.kernel @dead_reduction(%a: memref<2x4xf32>, %w: memref<4xf32>, %o: memref<3x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %z = arith.constant 0.0 : f32
  loop.foreach %i = %c0 to %c3 step %c1 {
    %ia = arith.minsi %i, %c1 : index
    %computed = arith.cmpi sge, %i, %c2 : index
    loop.foreach %j = %c0 to %c4 step %c1 {
      %x = memref.load %a[%ia, %j] : memref<2x4xf32>
      %s = loop.reduce %k = %c0 to %c4 step %c1 combine(add) init(%z) : f32 {
        %wk = memref.load %w[%k] : memref<4xf32>
        loop.yield %wk : f32
      }
      %v = arith.select %computed, %s, %x : f32
      memref.store %v, %o[%i, %j] : memref<3x4xf32>
      loop.yield
    }
    loop.yield
  }
  loop.return
}

// -----

// A bound known only at run time: nothing to split at.
// CHECK-LABEL: loop.kernel @dynamic_bound
// CHECK: loop.foreach
// CHECK: arith.select
// CHECK-NOT: loop.foreach %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK: loop.return

loop.kernel @dynamic_bound(%a: memref<?xf32>, %o: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %z = arith.constant 0.0 : f32
  %n = memref.dim %a, %c0 : memref<?xf32>
  loop.foreach %i = %c0 to %n step %c1 {
    %x = memref.load %a[%i] : memref<?xf32>
    %low = arith.cmpi slt, %i, %c3 : index
    %v = arith.select %low, %z, %x : f32
    memref.store %v, %o[%i] : memref<?xf32>
    loop.yield
  }
  loop.return
}
