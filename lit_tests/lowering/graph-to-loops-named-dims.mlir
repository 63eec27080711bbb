// RUN: nimble-opt %s --split-input-file -p lower-graph-to-loops | filecheck %s

// CHECK-LABEL: func.func @heads
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<?x?x64xf32, #nimble.dims<[batch, seq, 64]>>) -> tensor<?x4x?x16xf32, #nimble.dims<[batch, 4, seq, 16]>> {
// CHECK-NEXT: %[[B:[A-Za-z0-9_$.-]+]] = dynshape.dim %[[X]], 0 : tensor<?x?x64xf32, #nimble.dims<[batch, seq, 64]>>
// CHECK-NEXT: %[[S:[A-Za-z0-9_$.-]+]] = dynshape.dim %[[X]], 1 : tensor<?x?x64xf32, #nimble.dims<[batch, seq, 64]>>
// CHECK-NEXT: %[[C4:[A-Za-z0-9_$.-]+]] = arith.constant 4 : index
// CHECK-NEXT: %[[C16:[A-Za-z0-9_$.-]+]] = arith.constant 16 : index
// CHECK-NEXT: %[[SHAPE:[A-Za-z0-9_$.-]+]] = dynshape.from_dims %[[B]], %[[S]], %[[C4]], %[[C16]] : !dynshape.shape<4>
// CHECK-NEXT: %[[T:[A-Za-z0-9_$.-]+]] = graph.fused (%[[X_1:[A-Za-z0-9_$.-]+]] = %[[X]], %[[SHAPE_1:[A-Za-z0-9_$.-]+]] = %[[SHAPE]]) : (tensor<?x?x64xf32, #nimble.dims<[batch, seq, 64]>>, !dynshape.shape<4>) -> tensor<?x4x?x16xf32, #nimble.dims<[batch, 4, seq, 16]>> {
// CHECK-NEXT: %[[R:[A-Za-z0-9_$.-]+]] = graph.dynamic_reshape %[[X_1]], %[[SHAPE_1]] : (tensor<?x?x64xf32, #nimble.dims<[batch, seq, 64]>>, !dynshape.shape<4>) -> tensor<?x?x4x16xf32, #nimble.dims<[batch, seq, 4, 16]>>
// CHECK-NEXT: %[[T_1:[A-Za-z0-9_$.-]+]] = graph.transpose %[[R]] [0, 2, 1, 3] : tensor<?x?x4x16xf32, #nimble.dims<[batch, seq, 4, 16]>> -> tensor<?x4x?x16xf32, #nimble.dims<[batch, 4, seq, 16]>>
// CHECK-NEXT: graph.yield %[[T_1]] : tensor<?x4x?x16xf32, #nimble.dims<[batch, 4, seq, 16]>>
// CHECK-NEXT: } attributes {nimble.kernel = @heads_dynamic_reshape_0}
// CHECK-NEXT: func.return %[[T]] : tensor<?x4x?x16xf32, #nimble.dims<[batch, 4, seq, 16]>>
// CHECK-NEXT: }
// CHECK-LABEL: loop.kernel @heads_dynamic_reshape_0
// CHECK-SAME: (%[[V0:[A-Za-z0-9_$.-]+]]: memref<?x?x64xf32>, %[[V1:[A-Za-z0-9_$.-]+]]: index, %[[V2:[A-Za-z0-9_$.-]+]]: index, %[[V3:[A-Za-z0-9_$.-]+]]: index, %[[V4:[A-Za-z0-9_$.-]+]]: index, %[[V5:[A-Za-z0-9_$.-]+]]: memref<?x4x?x16xf32>) {
// CHECK-NEXT: %[[V6:[A-Za-z0-9_$.-]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[V7:[A-Za-z0-9_$.-]+]] = memref.dim %[[V0]], %[[V6]] : memref<?x?x64xf32>
// CHECK-NEXT: %[[V8:[A-Za-z0-9_$.-]+]] = arith.constant 1 : index
// CHECK-NEXT: %[[V9:[A-Za-z0-9_$.-]+]] = memref.dim %[[V0]], %[[V8]] : memref<?x?x64xf32>
// CHECK-NEXT: %[[V10:[A-Za-z0-9_$.-]+]] = arith.muli %[[V7]], %[[V9]] : index
// CHECK-NEXT: %[[V11:[A-Za-z0-9_$.-]+]] = arith.constant 64 : index
// CHECK-NEXT: %[[V12:[A-Za-z0-9_$.-]+]] = arith.muli %[[V10]], %[[V11]] : index
// CHECK-NEXT: %[[V13:[A-Za-z0-9_$.-]+]] = arith.muli %[[V1]], %[[V2]] : index
// CHECK-NEXT: %[[V14:[A-Za-z0-9_$.-]+]] = arith.muli %[[V13]], %[[V3]] : index
// CHECK-NEXT: %[[V15:[A-Za-z0-9_$.-]+]] = arith.muli %[[V14]], %[[V4]] : index
// CHECK-NEXT: %[[V16:[A-Za-z0-9_$.-]+]] = arith.constant 4 : index
// CHECK-NEXT: %[[V17:[A-Za-z0-9_$.-]+]] = arith.constant 16 : index
// CHECK-NEXT: loop.foreach %[[V18:[A-Za-z0-9_$.-]+]] = %[[V6]] to %[[V7]] step %[[V8]] {
// CHECK-NEXT: loop.foreach %[[V19:[A-Za-z0-9_$.-]+]] = %[[V6]] to %[[V16]] step %[[V8]] {
// CHECK-NEXT: loop.foreach %[[V20:[A-Za-z0-9_$.-]+]] = %[[V6]] to %[[V9]] step %[[V8]] {
// CHECK-NEXT: loop.foreach %[[V21:[A-Za-z0-9_$.-]+]] = %[[V6]] to %[[V17]] step %[[V8]] {
// CHECK-NEXT: %[[V22:[A-Za-z0-9_$.-]+]] = arith.muli %[[V6]], %[[V7]] : index
// CHECK-NEXT: %[[V23:[A-Za-z0-9_$.-]+]] = arith.addi %[[V22]], %[[V18]] : index
// CHECK-NEXT: %[[V24:[A-Za-z0-9_$.-]+]] = arith.muli %[[V6]], %[[V9]] : index
// CHECK-NEXT: %[[V25:[A-Za-z0-9_$.-]+]] = arith.addi %[[V24]], %[[V20]] : index
// CHECK-NEXT: %[[V26:[A-Za-z0-9_$.-]+]] = arith.muli %[[V19]], %[[V17]] : index
// CHECK-NEXT: %[[V27:[A-Za-z0-9_$.-]+]] = arith.addi %[[V26]], %[[V21]] : index
// CHECK-NEXT: %[[V28:[A-Za-z0-9_$.-]+]] = memref.load %[[V0]][%[[V23]], %[[V25]], %[[V27]]] : memref<?x?x64xf32>
// CHECK-NEXT: memref.store %[[V28]], %[[V5]][%[[V18]], %[[V19]], %[[V20]], %[[V21]]] : memref<?x4x?x16xf32>
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.return
// CHECK-NEXT: }
// Dims the types name alike are one value in the kernel: a reshape that splits the last
// dim of `[batch, seq, 64]` into `[batch, seq, 4, 16]` (its target given at run time)
// reads `x[b, s, h * 16 + d]`, with no division by a run-time dim.
func.func @heads(%x: tensor<?x?x64xf32, #nimble.dims<[batch, seq, 64]>>) -> tensor<?x4x?x16xf32, #nimble.dims<[batch, 4, seq, 16]>> {
  %b = dynshape.dim %x, 0 : tensor<?x?x64xf32, #nimble.dims<[batch, seq, 64]>>
  %s = dynshape.dim %x, 1 : tensor<?x?x64xf32, #nimble.dims<[batch, seq, 64]>>
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  %shape = dynshape.from_dims %b, %s, %c4, %c16 : !dynshape.shape<4>
  %t = graph.fused (%x_1 = %x, %shape_1 = %shape) : (tensor<?x?x64xf32, #nimble.dims<[batch, seq, 64]>>, !dynshape.shape<4>) -> tensor<?x4x?x16xf32, #nimble.dims<[batch, 4, seq, 16]>> {
    %r = graph.dynamic_reshape %x_1, %shape_1 : (tensor<?x?x64xf32, #nimble.dims<[batch, seq, 64]>>, !dynshape.shape<4>) -> tensor<?x?x4x16xf32, #nimble.dims<[batch, seq, 4, 16]>>
    %t_1 = graph.transpose %r [0, 2, 1, 3] : tensor<?x?x4x16xf32, #nimble.dims<[batch, seq, 4, 16]>> -> tensor<?x4x?x16xf32, #nimble.dims<[batch, 4, seq, 16]>>
    graph.yield %t_1 : tensor<?x4x?x16xf32, #nimble.dims<[batch, 4, seq, 16]>>
  }
  func.return %t : tensor<?x4x?x16xf32, #nimble.dims<[batch, 4, seq, 16]>>
}
