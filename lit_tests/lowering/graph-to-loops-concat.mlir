// RUN: nimble-opt %s --split-input-file -p fuse-ops,lower-graph-to-loops | filecheck %s

// A concat that is a kernel's output is written part by part, each part's elements
// computed only in its own slice of the buffer (no select between the parts).

// CHECK-LABEL: func.func @concat_output
// CHECK-SAME: (%[[A:[A-Za-z0-9_$.-]+]]: tensor<?x4xf32>, %[[B:[A-Za-z0-9_$.-]+]]: tensor<?x2xf32>) -> tensor<?x6xf32> {
// CHECK-NEXT: %[[C:[A-Za-z0-9_$.-]+]] = graph.fused (%[[A_1:[A-Za-z0-9_$.-]+]] = %[[A]], %[[B_1:[A-Za-z0-9_$.-]+]] = %[[B]]) : (tensor<?x4xf32>, tensor<?x2xf32>) -> tensor<?x6xf32> {
// CHECK-NEXT: %[[R:[A-Za-z0-9_$.-]+]] = graph.relu %[[A_1]] : tensor<?x4xf32> -> tensor<?x4xf32>
// CHECK-NEXT: %[[C_1:[A-Za-z0-9_$.-]+]] = graph.concat %[[R]], %[[B_1]] {axis = 1 : i64} : (tensor<?x4xf32>, tensor<?x2xf32>) -> tensor<?x6xf32>
// CHECK-NEXT: graph.yield %[[C_1]] : tensor<?x6xf32>
// CHECK-NEXT: } attributes {nimble.kernel = @concat_output_relu_0}
// CHECK-NEXT: func.return %[[C]] : tensor<?x6xf32>
// CHECK-NEXT: }
// CHECK-LABEL: loop.kernel @concat_output_relu_0
// CHECK-SAME: (%[[V0:[A-Za-z0-9_$.-]+]]: memref<?x4xf32>, %[[V1:[A-Za-z0-9_$.-]+]]: memref<?x2xf32>, %[[V2:[A-Za-z0-9_$.-]+]]: memref<?x6xf32>) {
// CHECK-NEXT: %[[V3:[A-Za-z0-9_$.-]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[V4:[A-Za-z0-9_$.-]+]] = memref.dim %[[V0]], %[[V3]] : memref<?x4xf32>
// CHECK-NEXT: %[[V5:[A-Za-z0-9_$.-]+]] = memref.dim %[[V1]], %[[V3]] : memref<?x2xf32>
// CHECK-NEXT: %[[V6:[A-Za-z0-9_$.-]+]] = arith.constant 1 : index
// CHECK-NEXT: %[[V7:[A-Za-z0-9_$.-]+]] = arith.constant 4 : index
// CHECK-NEXT: %[[V8:[A-Za-z0-9_$.-]+]] = arith.constant 2 : index
// CHECK-NEXT: loop.foreach %[[V9:[A-Za-z0-9_$.-]+]] = %[[V3]] to %[[V4]] step %[[V6]] {
// CHECK-NEXT: loop.foreach %[[V10:[A-Za-z0-9_$.-]+]] = %[[V3]] to %[[V7]] step %[[V6]] {
// CHECK-NEXT: %[[V11:[A-Za-z0-9_$.-]+]] = memref.load %[[V0]][%[[V9]], %[[V10]]] : memref<?x4xf32>
// CHECK-NEXT: %[[V12:[A-Za-z0-9_$.-]+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V13:[A-Za-z0-9_$.-]+]] = arith.maximumf %[[V11]], %[[V12]] : f32
// CHECK-NEXT: memref.store %[[V13]], %[[V2]][%[[V9]], %[[V10]]] : memref<?x6xf32>
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.foreach %[[V14:[A-Za-z0-9_$.-]+]] = %[[V3]] to %[[V5]] step %[[V6]] {
// CHECK-NEXT: loop.foreach %[[V15:[A-Za-z0-9_$.-]+]] = %[[V3]] to %[[V8]] step %[[V6]] {
// CHECK-NEXT: %[[V16:[A-Za-z0-9_$.-]+]] = arith.addi %[[V15]], %[[V7]] : index
// CHECK-NEXT: %[[V17:[A-Za-z0-9_$.-]+]] = memref.load %[[V1]][%[[V14]], %[[V15]]] : memref<?x2xf32>
// CHECK-NEXT: memref.store %[[V17]], %[[V2]][%[[V14]], %[[V16]]] : memref<?x6xf32>
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.return
// CHECK-NEXT: }
func.func @concat_output(%a: tensor<?x4xf32>, %b: tensor<?x2xf32>) -> tensor<?x6xf32> {
  %r = graph.relu %a : tensor<?x4xf32> -> tensor<?x4xf32>
  %c = graph.concat %r, %b {axis = 1 : i64} : (tensor<?x4xf32>, tensor<?x2xf32>) -> tensor<?x6xf32>
  func.return %c : tensor<?x6xf32>
}
