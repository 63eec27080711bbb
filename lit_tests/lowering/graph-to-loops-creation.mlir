// RUN: nimble-opt %s --split-input-file -p 'fuse-ops,lower-graph-to-loops,canonicalize,cse' | filecheck %s

// Creation ops from run-time sizes are kernels, not host calls: arange computes
// start + i * step in index arithmetic, then converts it (here to f32).

// CHECK-LABEL: loop.kernel @arange_arange_0
// CHECK-SAME: (%[[START:[A-Za-z0-9_$.-]+]]: index, %[[STOP:[A-Za-z0-9_$.-]+]]: index, %[[STEP:[A-Za-z0-9_$.-]+]]: index, %[[OUT:[A-Za-z0-9_$.-]+]]: memref<?xf32>)
// CHECK: loop.foreach %[[I:[A-Za-z0-9_$.-]+]] =
// CHECK-NEXT: %[[OFF:[A-Za-z0-9_$.-]+]] = arith.muli %[[I]], %[[STEP]] : index
// CHECK-NEXT: %[[V:[A-Za-z0-9_$.-]+]] = arith.addi %[[START]], %[[OFF]] : index
// CHECK-NEXT: %[[W:[A-Za-z0-9_$.-]+]] = arith.index_cast %[[V]] : index to i64
// CHECK-NEXT: %[[F:[A-Za-z0-9_$.-]+]] = arith.sitofp %[[W]] : i64 to f32
// CHECK-NEXT: memref.store %[[F]], %[[OUT]][%[[I]]] : memref<?xf32>
func.func @arange(%x: tensor<?xf32>) -> tensor<?xf32> {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %n = dynshape.dim %x, 0 : tensor<?xf32>
  %r = graph.arange %c1, %n, %c2 : tensor<?xf32>
  func.return %r : tensor<?xf32>
}

// -----

// from_elements (dims as data): element i picked from the operands by a chain of selects.

// CHECK-LABEL: loop.kernel @from_elements_from_elements_0
// CHECK-SAME: (%[[A:[A-Za-z0-9_$.-]+]]: index, %[[B:[A-Za-z0-9_$.-]+]]: index, %[[C:[A-Za-z0-9_$.-]+]]: index, %[[OUT:[A-Za-z0-9_$.-]+]]: memref<3xi64>)
// CHECK: loop.foreach %[[I:[A-Za-z0-9_$.-]+]] =
// CHECK-NEXT: %[[A64:[A-Za-z0-9_$.-]+]] = arith.index_cast %[[A]] : index to i64
// CHECK-NEXT: %[[B64:[A-Za-z0-9_$.-]+]] = arith.index_cast %[[B]] : index to i64
// CHECK-NEXT: %[[C64:[A-Za-z0-9_$.-]+]] = arith.index_cast %[[C]] : index to i64
// CHECK-NEXT: %[[IS1:[A-Za-z0-9_$.-]+]] = arith.cmpi eq, %[[I]], %{{[A-Za-z0-9_$.-]+}} : index
// CHECK-NEXT: %[[AB:[A-Za-z0-9_$.-]+]] = arith.select %[[IS1]], %[[B64]], %[[A64]] : i64
// CHECK-NEXT: %[[IS2:[A-Za-z0-9_$.-]+]] = arith.cmpi eq, %[[I]], %{{[A-Za-z0-9_$.-]+}} : index
// CHECK-NEXT: %[[ABC:[A-Za-z0-9_$.-]+]] = arith.select %[[IS2]], %[[C64]], %[[AB]] : i64
// CHECK-NEXT: memref.store %[[ABC]], %[[OUT]][%[[I]]] : memref<3xi64>
func.func @from_elements(%x: tensor<?x?xf32>) -> tensor<3xi64> {
  %c64 = arith.constant 64 : index
  %n = dynshape.dim %x, 0 : tensor<?x?xf32>
  %m = dynshape.dim %x, 1 : tensor<?x?xf32>
  %t = graph.from_elements %n, %c64, %m : tensor<3xi64>
  func.return %t : tensor<3xi64>
}

// -----

// zeros of a run-time shape: a kernel storing the constant.

// CHECK-LABEL: loop.kernel @zeros_zeros_0
// CHECK-SAME: (%[[N:[A-Za-z0-9_$.-]+]]: index, %{{[A-Za-z0-9_$.-]+}}: index, %[[OUT:[A-Za-z0-9_$.-]+]]: memref<?x8xf32>)
// CHECK: loop.foreach %[[I:[A-Za-z0-9_$.-]+]] = %{{[A-Za-z0-9_$.-]+}} to %[[N]]
// CHECK-NEXT: loop.foreach %[[J:[A-Za-z0-9_$.-]+]] =
// CHECK-NEXT: %[[Z:[A-Za-z0-9_$.-]+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: memref.store %[[Z]], %[[OUT]][%[[I]], %[[J]]] : memref<?x8xf32>
func.func @zeros(%s: !dynshape.shape<2>) -> tensor<?x8xf32> {
  %z = graph.zeros %s : !dynshape.shape<2> -> tensor<?x8xf32>
  func.return %z : tensor<?x8xf32>
}
