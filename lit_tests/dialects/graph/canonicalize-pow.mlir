// RUN: nimble-opt %s --split-input-file -p canonicalize | filecheck %s

// A float power by the constant 2 or 3 is a product (no powf per element).

// CHECK-LABEL: func.func @cube
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<?x8xf32>) -> tensor<?x8xf32> {
// CHECK-NEXT: %[[SQ:[A-Za-z0-9_$.-]+]] = graph.mul %[[X]], %[[X]] : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
// CHECK-NEXT: %[[CUBE:[A-Za-z0-9_$.-]+]] = graph.mul %[[SQ]], %[[X]] : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
// CHECK-NEXT: func.return %[[CUBE]] : tensor<?x8xf32>
func.func @cube(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %c = graph.constant dense<3.0> : tensor<f32>
  %y = graph.pow %x, %c : (tensor<?x8xf32>, tensor<f32>) -> tensor<?x8xf32>
  func.return %y : tensor<?x8xf32>
}

// -----

// CHECK-LABEL: func.func @square
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<?x8xf32>) -> tensor<?x8xf32> {
// CHECK-NEXT: %[[SQ:[A-Za-z0-9_$.-]+]] = graph.mul %[[X]], %[[X]] : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
// CHECK-NEXT: func.return %[[SQ]] : tensor<?x8xf32>
func.func @square(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %c = graph.constant dense<2.0> : tensor<1x1xf32>
  %y = graph.pow %x, %c : (tensor<?x8xf32>, tensor<1x1xf32>) -> tensor<?x8xf32>
  func.return %y : tensor<?x8xf32>
}

// -----

// Other exponents, and one that broadcasts x to a larger shape, stay powers.

// CHECK-LABEL: func.func @stays
// CHECK: graph.pow %{{[A-Za-z0-9_$.-]+}}, %{{[A-Za-z0-9_$.-]+}} : (tensor<?x8xf32>, tensor<f32>) -> tensor<?x8xf32>
// CHECK: graph.pow %{{[A-Za-z0-9_$.-]+}}, %{{[A-Za-z0-9_$.-]+}} : (tensor<8xf32>, tensor<2x1xf32>) -> tensor<2x8xf32>
// CHECK: graph.pow %{{[A-Za-z0-9_$.-]+}}, %{{[A-Za-z0-9_$.-]+}} : (tensor<8xi32>, tensor<i32>) -> tensor<8xi32>
func.func @stays(%x: tensor<?x8xf32>, %z: tensor<8xf32>, %i: tensor<8xi32>) -> (tensor<?x8xf32>, tensor<2x8xf32>, tensor<8xi32>) {
  %c = graph.constant dense<2.5> : tensor<f32>
  %y = graph.pow %x, %c : (tensor<?x8xf32>, tensor<f32>) -> tensor<?x8xf32>
  %two = graph.constant dense<2.0> : tensor<2x1xf32>
  %w = graph.pow %z, %two : (tensor<8xf32>, tensor<2x1xf32>) -> tensor<2x8xf32>
  %k = graph.constant dense<2> : tensor<i32>
  %j = graph.pow %i, %k : (tensor<8xi32>, tensor<i32>) -> tensor<8xi32>
  func.return %y, %w, %j : tensor<?x8xf32>, tensor<2x8xf32>, tensor<8xi32>
}
