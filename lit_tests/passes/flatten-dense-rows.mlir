// RUN: nimble-opt %s --split-input-file -p flatten-dense-rows | filecheck %s

// A dense layer over [?, 3, 5, K] runs over its rows; the reshape back sinks below the
// bias and the activation, through the next dense layer, to the end.
// CHECK-LABEL: func.func @mlp_over_pixels
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<?x3x5x4xf32>, %[[W1:[A-Za-z0-9_$.-]+]]: tensor<6x4xf32>, %[[B1:[A-Za-z0-9_$.-]+]]: tensor<6xf32>, %[[W2:[A-Za-z0-9_$.-]+]]: tensor<4x6xf32>) -> tensor<?x3x5x4xf32> {
// CHECK-NEXT: %[[V0:[A-Za-z0-9_$.-]+]] = graph.reshape %[[X]] [-1, 4] : tensor<?x3x5x4xf32> -> tensor<?x4xf32>
// CHECK-NEXT: %[[V1:[A-Za-z0-9_$.-]+]] = graph.dense %[[V0]], %[[W1]] : (tensor<?x4xf32>, tensor<6x4xf32>) -> tensor<?x6xf32>
// CHECK-NEXT: %[[A:[A-Za-z0-9_$.-]+]] = graph.add %[[V1]], %[[B1]] : (tensor<?x6xf32>, tensor<6xf32>) -> tensor<?x6xf32>
// CHECK-NEXT: %[[HALF:[A-Za-z0-9_$.-]+]] = graph.constant dense<5.000000e-01> : tensor<f32>
// CHECK-NEXT: %[[E:[A-Za-z0-9_$.-]+]] = graph.erf %[[A]] : tensor<?x6xf32> -> tensor<?x6xf32>
// CHECK-NEXT: %[[M:[A-Za-z0-9_$.-]+]] = graph.mul %[[A]], %[[E]] : (tensor<?x6xf32>, tensor<?x6xf32>) -> tensor<?x6xf32>
// CHECK-NEXT: %[[G:[A-Za-z0-9_$.-]+]] = graph.mul %[[M]], %[[HALF]] : (tensor<?x6xf32>, tensor<f32>) -> tensor<?x6xf32>
// CHECK-NEXT: %[[V2:[A-Za-z0-9_$.-]+]] = graph.dense %[[G]], %[[W2]] : (tensor<?x6xf32>, tensor<4x6xf32>) -> tensor<?x4xf32>
// CHECK-NEXT: %[[Y:[A-Za-z0-9_$.-]+]] = graph.reshape %[[V2]] [-1, 3, 5, 4] : tensor<?x4xf32> -> tensor<?x3x5x4xf32>
// CHECK-NEXT: func.return %[[Y]] : tensor<?x3x5x4xf32>
// CHECK-NEXT: }
func.func @mlp_over_pixels(%x: tensor<?x3x5x4xf32>, %w1: tensor<6x4xf32>, %b1: tensor<6xf32>, %w2: tensor<4x6xf32>) -> tensor<?x3x5x4xf32> {
  %h = graph.dense %x, %w1 : (tensor<?x3x5x4xf32>, tensor<6x4xf32>) -> tensor<?x3x5x6xf32>
  %a = graph.add %h, %b1 : (tensor<?x3x5x6xf32>, tensor<6xf32>) -> tensor<?x3x5x6xf32>
  %half = graph.constant dense<0.5> : tensor<f32>
  %e = graph.erf %a : tensor<?x3x5x6xf32> -> tensor<?x3x5x6xf32>
  %m = graph.mul %a, %e : (tensor<?x3x5x6xf32>, tensor<?x3x5x6xf32>) -> tensor<?x3x5x6xf32>
  %g = graph.mul %m, %half : (tensor<?x3x5x6xf32>, tensor<f32>) -> tensor<?x3x5x6xf32>
  %y = graph.dense %g, %w2 : (tensor<?x3x5x6xf32>, tensor<4x6xf32>) -> tensor<?x3x5x4xf32>
  func.return %y : tensor<?x3x5x4xf32>
}

// -----

// Two `?` leading dims: the reshape back takes its target from the input's dims.
// CHECK-LABEL: func.func @two_dynamic_dims
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<?x?x4xf32>, %[[W:[A-Za-z0-9_$.-]+]]: tensor<6x4xf32>) -> tensor<?x?x6xf32> {
// CHECK-NEXT: %[[V0:[A-Za-z0-9_$.-]+]] = graph.reshape %[[X]] [-1, 4] : tensor<?x?x4xf32> -> tensor<?x4xf32>
// CHECK-NEXT: %[[V1:[A-Za-z0-9_$.-]+]] = graph.dense %[[V0]], %[[W]] : (tensor<?x4xf32>, tensor<6x4xf32>) -> tensor<?x6xf32>
// CHECK-NEXT: %[[H:[A-Za-z0-9_$.-]+]] = dynshape.dim %[[X]], 0 : tensor<?x?x4xf32>
// CHECK-NEXT: %[[H_1:[A-Za-z0-9_$.-]+]] = dynshape.dim %[[X]], 1 : tensor<?x?x4xf32>
// CHECK-NEXT: %[[H_2:[A-Za-z0-9_$.-]+]] = arith.constant 6 : index
// CHECK-NEXT: %[[H_3:[A-Za-z0-9_$.-]+]] = dynshape.from_dims %[[H]], %[[H_1]], %[[H_2]] : !dynshape.shape<3>
// CHECK-NEXT: %[[R:[A-Za-z0-9_$.-]+]] = graph.relu %[[V1]] : tensor<?x6xf32> -> tensor<?x6xf32>
// CHECK-NEXT: %[[R_1:[A-Za-z0-9_$.-]+]] = graph.dynamic_reshape %[[R]], %[[H_3]] : (tensor<?x6xf32>, !dynshape.shape<3>) -> tensor<?x?x6xf32>
// CHECK-NEXT: func.return %[[R_1]] : tensor<?x?x6xf32>
// CHECK-NEXT: }
func.func @two_dynamic_dims(%x: tensor<?x?x4xf32>, %w: tensor<6x4xf32>) -> tensor<?x?x6xf32> {
  %h = graph.dense %x, %w : (tensor<?x?x4xf32>, tensor<6x4xf32>) -> tensor<?x?x6xf32>
  %r = graph.relu %h : tensor<?x?x6xf32> -> tensor<?x?x6xf32>
  func.return %r : tensor<?x?x6xf32>
}

// -----

// A [1, 1, 6] operand broadcasts along every row: it is read as [6].
// CHECK-LABEL: func.func @row_vector
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<2x3x4xf32>, %[[W:[A-Za-z0-9_$.-]+]]: tensor<6x4xf32>, %[[S:[A-Za-z0-9_$.-]+]]: tensor<1x1x6xf32>) -> tensor<2x3x6xf32> {
// CHECK-NEXT: %[[V0:[A-Za-z0-9_$.-]+]] = graph.reshape %[[X]] [-1, 4] : tensor<2x3x4xf32> -> tensor<6x4xf32>
// CHECK-NEXT: %[[V1:[A-Za-z0-9_$.-]+]] = graph.dense %[[V0]], %[[W]] : (tensor<6x4xf32>, tensor<6x4xf32>) -> tensor<6x6xf32>
// CHECK-NEXT: %[[V2:[A-Za-z0-9_$.-]+]] = graph.reshape %[[S]] [-1] : tensor<1x1x6xf32> -> tensor<6xf32>
// CHECK-NEXT: %[[Y:[A-Za-z0-9_$.-]+]] = graph.mul %[[V1]], %[[V2]] : (tensor<6x6xf32>, tensor<6xf32>) -> tensor<6x6xf32>
// CHECK-NEXT: %[[Y_1:[A-Za-z0-9_$.-]+]] = graph.reshape %[[Y]] [2, 3, 6] : tensor<6x6xf32> -> tensor<2x3x6xf32>
// CHECK-NEXT: func.return %[[Y_1]] : tensor<2x3x6xf32>
// CHECK-NEXT: }
func.func @row_vector(%x: tensor<2x3x4xf32>, %w: tensor<6x4xf32>, %s: tensor<1x1x6xf32>) -> tensor<2x3x6xf32> {
  %h = graph.dense %x, %w : (tensor<2x3x4xf32>, tensor<6x4xf32>) -> tensor<2x3x6xf32>
  %y = graph.mul %h, %s : (tensor<2x3x6xf32>, tensor<1x1x6xf32>) -> tensor<2x3x6xf32>
  func.return %y : tensor<2x3x6xf32>
}

// -----

// An operand that varies along a leading dim, and a reshaped operand that the op
// broadcasts, stop the reshape back.
// CHECK-LABEL: func.func @stops
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<?x1x5x4xf32>, %[[W:[A-Za-z0-9_$.-]+]]: tensor<6x4xf32>, %[[C:[A-Za-z0-9_$.-]+]]: tensor<?x1x1x6xf32>, %[[D:[A-Za-z0-9_$.-]+]]: tensor<?x3x5x6xf32>) -> (tensor<?x1x5x6xf32>, tensor<?x3x5x6xf32>) {
// CHECK-NEXT: %[[V0:[A-Za-z0-9_$.-]+]] = graph.reshape %[[X]] [-1, 4] : tensor<?x1x5x4xf32> -> tensor<?x4xf32>
// CHECK-NEXT: %[[V1:[A-Za-z0-9_$.-]+]] = graph.dense %[[V0]], %[[W]] : (tensor<?x4xf32>, tensor<6x4xf32>) -> tensor<?x6xf32>
// CHECK-NEXT: %[[H:[A-Za-z0-9_$.-]+]] = graph.reshape %[[V1]] [-1, 1, 5, 6] : tensor<?x6xf32> -> tensor<?x1x5x6xf32>
// CHECK-NEXT: %[[A:[A-Za-z0-9_$.-]+]] = graph.add %[[H]], %[[C]] : (tensor<?x1x5x6xf32>, tensor<?x1x1x6xf32>) -> tensor<?x1x5x6xf32>
// CHECK-NEXT: %[[B:[A-Za-z0-9_$.-]+]] = graph.add %[[H]], %[[D]] : (tensor<?x1x5x6xf32>, tensor<?x3x5x6xf32>) -> tensor<?x3x5x6xf32>
// CHECK-NEXT: func.return %[[A]], %[[B]] : tensor<?x1x5x6xf32>, tensor<?x3x5x6xf32>
// CHECK-NEXT: }
func.func @stops(%x: tensor<?x1x5x4xf32>, %w: tensor<6x4xf32>, %c: tensor<?x1x1x6xf32>, %d: tensor<?x3x5x6xf32>) -> (tensor<?x1x5x6xf32>, tensor<?x3x5x6xf32>) {
  %h = graph.dense %x, %w : (tensor<?x1x5x4xf32>, tensor<6x4xf32>) -> tensor<?x1x5x6xf32>
  %a = graph.add %h, %c : (tensor<?x1x5x6xf32>, tensor<?x1x1x6xf32>) -> tensor<?x1x5x6xf32>
  %b = graph.add %h, %d : (tensor<?x1x5x6xf32>, tensor<?x3x5x6xf32>) -> tensor<?x3x5x6xf32>
  func.return %a, %b : tensor<?x1x5x6xf32>, tensor<?x3x5x6xf32>
}

// -----

// Rows already: nothing to do.
// CHECK-LABEL: func.func @rows
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<?x4xf32>, %[[W:[A-Za-z0-9_$.-]+]]: tensor<6x4xf32>) -> tensor<?x6xf32> {
// CHECK-NEXT: %[[H:[A-Za-z0-9_$.-]+]] = graph.dense %[[X]], %[[W]] : (tensor<?x4xf32>, tensor<6x4xf32>) -> tensor<?x6xf32>
// CHECK-NEXT: %[[R:[A-Za-z0-9_$.-]+]] = graph.relu %[[H]] : tensor<?x6xf32> -> tensor<?x6xf32>
// CHECK-NEXT: func.return %[[R]] : tensor<?x6xf32>
// CHECK-NEXT: }
func.func @rows(%x: tensor<?x4xf32>, %w: tensor<6x4xf32>) -> tensor<?x6xf32> {
  %h = graph.dense %x, %w : (tensor<?x4xf32>, tensor<6x4xf32>) -> tensor<?x6xf32>
  %r = graph.relu %h : tensor<?x6xf32> -> tensor<?x6xf32>
  func.return %r : tensor<?x6xf32>
}
