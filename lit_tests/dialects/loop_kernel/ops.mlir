// RUN: nimble-opt %s --split-input-file | filecheck %s
// RUN: nimble-opt %s --split-input-file --print-op-generic | nimble-opt --split-input-file | filecheck %s

// A kernel: buffers in, buffers written, its marks in the attribute dictionary.

// CHECK-LABEL: loop.kernel @scale
// CHECK-SAME: (%[[A:[A-Za-z0-9_$.-]+]]: memref<?xf32>, %[[OUT:[A-Za-z0-9_$.-]+]]: memref<?xf32>) attributes {nimble.device = "opencl", nimble.work = 1 : i64} {
// CHECK-NEXT: %[[C0:[A-Za-z0-9_$.-]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[C1:[A-Za-z0-9_$.-]+]] = arith.constant 1 : index
// CHECK-NEXT: %[[N:[A-Za-z0-9_$.-]+]] = memref.dim %[[A]], %[[C0]] : memref<?xf32>
// CHECK-NEXT: loop.foreach %[[I:[A-Za-z0-9_$.-]+]] = %[[C0]] to %[[N]] step %[[C1]] {
// CHECK-NEXT: %[[X:[A-Za-z0-9_$.-]+]] = memref.load %[[A]][%[[I]]] : memref<?xf32>
// CHECK-NEXT: %[[Y:[A-Za-z0-9_$.-]+]] = arith.addf %[[X]], %[[X]] : f32
// CHECK-NEXT: memref.store %[[Y]], %[[OUT]][%[[I]]] : memref<?xf32>
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.return
// CHECK-NEXT: }
loop.kernel @scale(%a: memref<?xf32>, %out: memref<?xf32>) attributes {nimble.device = "opencl", nimble.work = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c0 : memref<?xf32>
  loop.foreach %i = %c0 to %n step %c1 {
    %x = memref.load %a[%i] : memref<?xf32>
    %y = arith.addf %x, %x : f32
    memref.store %y, %out[%i] : memref<?xf32>
    loop.yield
  }
  loop.return
}

// -----

// No buffers at all, no marks.

// CHECK-LABEL: loop.kernel @nothing
// CHECK-SAME: () {
// CHECK-NEXT: loop.return
// CHECK-NEXT: }
loop.kernel @nothing() {
  loop.return
}
