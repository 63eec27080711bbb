// RUN: nimble-opt %s --split-input-file -p 'lower-rnn-to-kernels,canonicalize,cse' | filecheck %s

// A state that stacks every step's rows (ONNX's Y) stays in the recurrence's kernel: the
// output holds the initial rows and one row block per step, each written at its place.

// Rows after the earlier ones: the initial rows at 0, step t's at dim(ys0, 0) + t.

// CHECK-LABEL: func.func @appended(
// CHECK: %{{.*}}, %[[YS:[A-Za-z0-9_$.-]+]] = graph.fused
// CHECK: } attributes {nimble.kernel = @appended_rnn_0, nimble.recurrence}
// CHECK: func.return %[[YS]]
// CHECK-LABEL: loop.kernel @appended_rnn_0
// CHECK-SAME: %[[YS0:[A-Za-z0-9_$.-]+]]: memref<?x?x5xf32>, %{{[A-Za-z0-9_$.-]+}}: memref<?x5xf32>, %[[OUT:[A-Za-z0-9_$.-]+]]: memref<?x?x5xf32>)
// CHECK: %[[C0:[A-Za-z0-9_$.-]+]] = arith.constant 0 : index
// CHECK: %[[K:[A-Za-z0-9_$.-]+]] = memref.dim %[[YS0]], %[[C0]]
// CHECK: %[[V0:[A-Za-z0-9_$.-]+]] = memref.load %[[YS0]][%[[R0:[A-Za-z0-9_$.-]+]], %[[B0:[A-Za-z0-9_$.-]+]], %[[J0:[A-Za-z0-9_$.-]+]]]
// CHECK-NEXT: memref.store %[[V0]], %[[OUT]][%[[R0]], %[[B0]], %[[J0]]]
// CHECK: %[[ROWS:[A-Za-z0-9_$.-]+]] = loop.alloc sram
// CHECK: scf.for %[[T:[A-Za-z0-9_$.-]+]] =
// CHECK: %[[START:[A-Za-z0-9_$.-]+]] = arith.addi %[[K]], %[[T]] : index
// CHECK: %[[V1:[A-Za-z0-9_$.-]+]] = memref.load %[[ROWS]][%[[R1:[A-Za-z0-9_$.-]+]], %[[B1:[A-Za-z0-9_$.-]+]], %[[J1:[A-Za-z0-9_$.-]+]]]
// CHECK-NEXT: %[[AT1:[A-Za-z0-9_$.-]+]] = arith.addi %[[START]], %[[R1]] : index
// CHECK-NEXT: memref.store %[[V1]], %[[OUT]][%[[AT1]], %[[B1]], %[[J1]]]

func.func @appended(%xs: tensor<?x?x3xf32>, %h0: tensor<?x5xf32>, %ys0: tensor<?x?x5xf32>, %w: tensor<5x8xf32>) -> tensor<?x?x5xf32> {
  %steps = dynshape.dim %xs, 0 : tensor<?x?x3xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %i, %h, %ys = graph.while (%i0 = %c0, %h1 = %h0, %ys1 = %ys0) : (index, tensor<?x5xf32>, tensor<?x?x5xf32>) -> (index, tensor<?x5xf32>, tensor<?x?x5xf32>) {
    %more = arith.cmpi slt, %i0, %steps : index
    graph.condition %more : i1
  } do {
  ^bb0(%i2: index, %h2: tensor<?x5xf32>, %ys2: tensor<?x?x5xf32>):
    %after = arith.addi %i2, %c1 : index
    %x = graph.slice %xs[%i2:%after, :, :] : tensor<?x?x3xf32> -> tensor<?x?x3xf32>
    %x1 = graph.squeeze %x [0] : tensor<?x?x3xf32> -> tensor<?x3xf32>
    %xh = graph.concat %x1, %h2 {axis = 1 : i64} : (tensor<?x3xf32>, tensor<?x5xf32>) -> tensor<?x8xf32>
    %d = graph.dense %xh, %w : (tensor<?x8xf32>, tensor<5x8xf32>) -> tensor<?x5xf32>
    %h3 = graph.tanh %d : tensor<?x5xf32> -> tensor<?x5xf32>
    %next = arith.addi %i2, %c1 : index
    %row = graph.unsqueeze %h3 [0] : tensor<?x5xf32> -> tensor<1x?x5xf32>
    %ys3 = graph.concat %ys2, %row : (tensor<?x?x5xf32>, tensor<1x?x5xf32>) -> tensor<?x?x5xf32>
    graph.yield %next, %h3, %ys3 : index, tensor<?x5xf32>, tensor<?x?x5xf32>
  }
  func.return %ys : tensor<?x?x5xf32>
}

// -----

// Rows before the earlier ones (a reverse loop reading xs[steps - 1 - i], the counter
// on the right of a subtraction): the initial rows after all steps' (at max(steps, 0)),
// step t's at steps - 1 - t.

// CHECK-LABEL: func.func @reversed(
// CHECK: } attributes {nimble.kernel = @reversed_rnn_0, nimble.recurrence}
// CHECK-LABEL: loop.kernel @reversed_rnn_0
// CHECK-SAME: %[[STEPS:[A-Za-z0-9_$.-]+]]: index, %{{[A-Za-z0-9_$.-]+}}: index, %{{[A-Za-z0-9_$.-]+}}: memref<?x5xf32>, %[[YS0:[A-Za-z0-9_$.-]+]]: memref<?x?x5xf32>, %{{[A-Za-z0-9_$.-]+}}: memref<?x5xf32>, %[[OUT:[A-Za-z0-9_$.-]+]]: memref<?x?x5xf32>)
// CHECK: %[[C0:[A-Za-z0-9_$.-]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[C1:[A-Za-z0-9_$.-]+]] = arith.constant 1 : index
// CHECK: %[[N:[A-Za-z0-9_$.-]+]] = arith.maxsi %[[STEPS]], %[[C0]] : index
// CHECK: %[[V0:[A-Za-z0-9_$.-]+]] = memref.load %[[YS0]][%[[R0:[A-Za-z0-9_$.-]+]], %[[B0:[A-Za-z0-9_$.-]+]], %[[J0:[A-Za-z0-9_$.-]+]]]
// CHECK-NEXT: %[[AT0:[A-Za-z0-9_$.-]+]] = arith.addi %[[N]], %[[R0]] : index
// CHECK-NEXT: memref.store %[[V0]], %[[OUT]][%[[AT0]], %[[B0]], %[[J0]]]
// CHECK: %[[ROWS:[A-Za-z0-9_$.-]+]] = loop.alloc sram
// CHECK: scf.for %[[T:[A-Za-z0-9_$.-]+]] =
// CHECK: %[[LAST:[A-Za-z0-9_$.-]+]] = arith.subi %[[STEPS]], %[[C1]] : index
// CHECK-NEXT: %[[START:[A-Za-z0-9_$.-]+]] = arith.subi %[[LAST]], %[[T]] : index
// CHECK: %[[V1:[A-Za-z0-9_$.-]+]] = memref.load %[[ROWS]][%[[R1:[A-Za-z0-9_$.-]+]], %[[B1:[A-Za-z0-9_$.-]+]], %[[J1:[A-Za-z0-9_$.-]+]]]
// CHECK-NEXT: %[[AT1:[A-Za-z0-9_$.-]+]] = arith.addi %[[START]], %[[R1]] : index
// CHECK-NEXT: memref.store %[[V1]], %[[OUT]][%[[AT1]], %[[B1]], %[[J1]]]

func.func @reversed(%xs: tensor<?x?x3xf32>, %h0: tensor<?x5xf32>, %ys0: tensor<?x?x5xf32>, %w: tensor<5x8xf32>) -> tensor<?x?x5xf32> {
  %steps = dynshape.dim %xs, 0 : tensor<?x?x3xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %i, %h, %ys = graph.while (%i0 = %c0, %h1 = %h0, %ys1 = %ys0) : (index, tensor<?x5xf32>, tensor<?x?x5xf32>) -> (index, tensor<?x5xf32>, tensor<?x?x5xf32>) {
    %more = arith.cmpi slt, %i0, %steps : index
    graph.condition %more : i1
  } do {
  ^bb0(%i2: index, %h2: tensor<?x5xf32>, %ys2: tensor<?x?x5xf32>):
    %last = arith.subi %steps, %c1 : index
    %at = arith.subi %last, %i2 : index
    %after = arith.addi %at, %c1 : index
    %x = graph.slice %xs[%at:%after, :, :] : tensor<?x?x3xf32> -> tensor<?x?x3xf32>
    %x1 = graph.squeeze %x [0] : tensor<?x?x3xf32> -> tensor<?x3xf32>
    %xh = graph.concat %x1, %h2 {axis = 1 : i64} : (tensor<?x3xf32>, tensor<?x5xf32>) -> tensor<?x8xf32>
    %d = graph.dense %xh, %w : (tensor<?x8xf32>, tensor<5x8xf32>) -> tensor<?x5xf32>
    %h3 = graph.tanh %d : tensor<?x5xf32> -> tensor<?x5xf32>
    %next = arith.addi %i2, %c1 : index
    %row = graph.unsqueeze %h3 [0] : tensor<?x5xf32> -> tensor<1x?x5xf32>
    %ys3 = graph.concat %row, %ys2 : (tensor<1x?x5xf32>, tensor<?x?x5xf32>) -> tensor<?x?x5xf32>
    graph.yield %next, %h3, %ys3 : index, tensor<?x5xf32>, tensor<?x?x5xf32>
  }
  func.return %ys : tensor<?x?x5xf32>
}
