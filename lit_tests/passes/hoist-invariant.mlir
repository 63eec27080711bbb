// RUN: nimble-opt %s --split-input-file -p hoist-invariant | filecheck %s

// CHECK-LABEL: loop.kernel @row_max_hoisted
// CHECK-SAME: (%[[A:[A-Za-z0-9_$.-]+]]: memref<?x8xf32>, %[[OUT:[A-Za-z0-9_$.-]+]]: memref<?x8xf32>) {
// CHECK-NEXT: %[[C0:[A-Za-z0-9_$.-]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[C1:[A-Za-z0-9_$.-]+]] = arith.constant 1 : index
// CHECK-NEXT: %[[C8:[A-Za-z0-9_$.-]+]] = arith.constant 8 : index
// CHECK-NEXT: %[[NINF:[A-Za-z0-9_$.-]+]] = arith.constant 0xff800000 : f32
// CHECK-NEXT: %[[N:[A-Za-z0-9_$.-]+]] = memref.dim %[[A]], %[[C0]] : memref<?x8xf32>
// CHECK-NEXT: loop.foreach %[[I:[A-Za-z0-9_$.-]+]] = %[[C0]] to %[[N]] step %[[C1]] {
// CHECK-NEXT: %[[M:[A-Za-z0-9_$.-]+]] = loop.reduce %[[K:[A-Za-z0-9_$.-]+]] = %[[C0]] to %[[C8]] step %[[C1]] combine(max) init(%[[NINF]]) : f32 {
// CHECK-NEXT: %[[X:[A-Za-z0-9_$.-]+]] = memref.load %[[A]][%[[I]], %[[K]]] : memref<?x8xf32>
// CHECK-NEXT: loop.yield %[[X]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: loop.foreach %[[J:[A-Za-z0-9_$.-]+]] = %[[C0]] to %[[C8]] step %[[C1]] {
// CHECK-NEXT: %[[Y:[A-Za-z0-9_$.-]+]] = memref.load %[[A]][%[[I]], %[[J]]] : memref<?x8xf32>
// CHECK-NEXT: %[[D:[A-Za-z0-9_$.-]+]] = arith.subf %[[Y]], %[[M]] : f32
// CHECK-NEXT: memref.store %[[D]], %[[OUT]][%[[I]], %[[J]]] : memref<?x8xf32>
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.return
// CHECK-NEXT: }

loop.kernel @row_max_hoisted(%a: memref<?x8xf32>, %out: memref<?x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %ninf = arith.constant 0xFF800000 : f32
  %n = memref.dim %a, %c0 : memref<?x8xf32>
  loop.foreach %i = %c0 to %n step %c1 {
    loop.foreach %j = %c0 to %c8 step %c1 {
      %m = loop.reduce %k = %c0 to %c8 step %c1 combine(max) init(%ninf) : f32 {
        %x = memref.load %a[%i, %k] : memref<?x8xf32>
        loop.yield %x : f32
      }
      %y = memref.load %a[%i, %j] : memref<?x8xf32>
      %d = arith.subf %y, %m : f32
      memref.store %d, %out[%i, %j] : memref<?x8xf32>
      loop.yield
    }
    loop.yield
  }
  loop.return
}

// -----

// CHECK-LABEL: loop.kernel @written_buffer_stays
// CHECK-SAME: (%[[A:[A-Za-z0-9_$.-]+]]: memref<8xf32>) {
// CHECK-NEXT: %[[C0:[A-Za-z0-9_$.-]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[C1:[A-Za-z0-9_$.-]+]] = arith.constant 1 : index
// CHECK-NEXT: %[[C8:[A-Za-z0-9_$.-]+]] = arith.constant 8 : index
// CHECK-NEXT: loop.foreach %[[J:[A-Za-z0-9_$.-]+]] = %[[C0]] to %[[C8]] step %[[C1]] {
// CHECK-NEXT: %[[X:[A-Za-z0-9_$.-]+]] = memref.load %[[A]][%[[C0]]] : memref<8xf32>
// CHECK-NEXT: memref.store %[[X]], %[[A]][%[[J]]] : memref<8xf32>
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.return
// CHECK-NEXT: }
loop.kernel @written_buffer_stays(%a: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  loop.foreach %j = %c0 to %c8 step %c1 {
    %x = memref.load %a[%c0] : memref<8xf32>
    memref.store %x, %a[%j] : memref<8xf32>
    loop.yield
  }
  loop.return
}
