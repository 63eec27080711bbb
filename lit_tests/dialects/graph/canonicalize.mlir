// RUN: nimble-opt %s --split-input-file -p canonicalize | filecheck %s

// CHECK-LABEL: func.func @identities
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>) {
// CHECK-NEXT: func.return %[[X]], %[[X]] : tensor<?x4xf32>, tensor<?x4xf32>
// CHECK-NEXT: }
func.func @identities(%x: tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>) {
  %one = graph.constant dense<1.0> : tensor<f32>
  %zero = graph.constant dense<0.0> : tensor<f32>
  %m = graph.mul %x, %one : (tensor<?x4xf32>, tensor<f32>) -> tensor<?x4xf32>
  %a = graph.add %zero, %m : (tensor<f32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  %d = graph.div %a, %one : (tensor<?x4xf32>, tensor<f32>) -> tensor<?x4xf32>
  %s = graph.sub %d, %zero : (tensor<?x4xf32>, tensor<f32>) -> tensor<?x4xf32>
  %b = graph.add %x, %zero : (tensor<?x4xf32>, tensor<f32>) -> tensor<?x4xf32>
  func.return %s, %b : tensor<?x4xf32>, tensor<?x4xf32>
}

// -----

// CHECK-LABEL: func.func @identity_that_broadcasts_stays
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<4xf32>) -> tensor<3x4xf32> {
// CHECK-NEXT: %[[ONE:[A-Za-z0-9_$.-]+]] = graph.constant dense<1.000000e+00> : tensor<3x4xf32>
// CHECK-NEXT: %[[M:[A-Za-z0-9_$.-]+]] = graph.mul %[[X]], %[[ONE]] : (tensor<4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
// CHECK-NEXT: func.return %[[M]] : tensor<3x4xf32>
// CHECK-NEXT: }
func.func @identity_that_broadcasts_stays(%x: tensor<4xf32>) -> tensor<3x4xf32> {
  %one = graph.constant dense<1.0> : tensor<3x4xf32>
  %m = graph.mul %x, %one : (tensor<4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  func.return %m : tensor<3x4xf32>
}

// -----

// CHECK-LABEL: func.func @transpose_of_transpose
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<?x4x8xf32>) -> (tensor<?x4x8xf32>, tensor<4x8x?xf32>) {
// CHECK-NEXT: %[[T3:[A-Za-z0-9_$.-]+]] = graph.transpose %[[X]] [1, 2, 0] : tensor<?x4x8xf32> -> tensor<4x8x?xf32>
// CHECK-NEXT: func.return %[[X]], %[[T3]] : tensor<?x4x8xf32>, tensor<4x8x?xf32>
// CHECK-NEXT: }
func.func @transpose_of_transpose(%x: tensor<?x4x8xf32>) -> (tensor<?x4x8xf32>, tensor<4x8x?xf32>) {
  %t1 = graph.transpose %x [0, 2, 1] : tensor<?x4x8xf32> -> tensor<?x8x4xf32>
  %t2 = graph.transpose %t1 [0, 2, 1] : tensor<?x8x4xf32> -> tensor<?x4x8xf32>
  %t3 = graph.transpose %t1 [2, 1, 0] : tensor<?x8x4xf32> -> tensor<4x8x?xf32>
  func.return %t2, %t3 : tensor<?x4x8xf32>, tensor<4x8x?xf32>
}

// -----

// CHECK-LABEL: func.func @reshape_of_reshape
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<2x4x8xf32>, %[[Y:[A-Za-z0-9_$.-]+]]: tensor<2x3xf32>) -> (tensor<?x32xf32>, tensor<2x3xf32>) {
// CHECK-NEXT: %[[R2:[A-Za-z0-9_$.-]+]] = graph.reshape %[[X]] [-1, 32] : tensor<2x4x8xf32> -> tensor<?x32xf32>
// CHECK-NEXT: func.return %[[R2]], %[[Y]] : tensor<?x32xf32>, tensor<2x3xf32>
// CHECK-NEXT: }
func.func @reshape_of_reshape(%x: tensor<2x4x8xf32>, %y: tensor<2x3xf32>) -> (tensor<?x32xf32>, tensor<2x3xf32>) {
  %r1 = graph.reshape %x [-1, 8] : tensor<2x4x8xf32> -> tensor<?x8xf32>
  %r2 = graph.reshape %r1 [-1, 32] : tensor<?x8xf32> -> tensor<?x32xf32>
  %r3 = graph.reshape %y [2, 3] : tensor<2x3xf32> -> tensor<2x3xf32>
  func.return %r2, %r3 : tensor<?x32xf32>, tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @reshape_of_dynamic_reshape_keeps_its_check
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<?xf32>) -> tensor<?xf32> {
// CHECK-NEXT: %[[Y:[A-Za-z0-9_$.-]+]] = graph.reshape %[[X]] [5, -1] : tensor<?xf32> -> tensor<5x?xf32>
// CHECK-NEXT: %[[Z:[A-Za-z0-9_$.-]+]] = graph.reshape %[[Y]] [-1] : tensor<5x?xf32> -> tensor<?xf32>
// CHECK-NEXT: func.return %[[Z]] : tensor<?xf32>
// CHECK-NEXT: }
func.func @reshape_of_dynamic_reshape_keeps_its_check(%x: tensor<?xf32>) -> tensor<?xf32> {
  %y = graph.reshape %x [5, -1] : tensor<?xf32> -> tensor<5x?xf32>
  %z = graph.reshape %y [-1] : tensor<5x?xf32> -> tensor<?xf32>
  func.return %z : tensor<?xf32>
}

// -----

// CHECK-LABEL: func.func @identity_with_dynamic_broadcast_stays
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<?xf32>) -> tensor<?xf32> {
// CHECK-NEXT: %[[Z:[A-Za-z0-9_$.-]+]] = graph.constant dense<0.000000e+00> : tensor<3xf32>
// CHECK-NEXT: %[[Y:[A-Za-z0-9_$.-]+]] = graph.add %[[X]], %[[Z]] : (tensor<?xf32>, tensor<3xf32>) -> tensor<?xf32>
// CHECK-NEXT: func.return %[[Y]] : tensor<?xf32>
// CHECK-NEXT: }
func.func @identity_with_dynamic_broadcast_stays(%x: tensor<?xf32>) -> tensor<?xf32> {
  %z = graph.constant dense<0.0> : tensor<3xf32>
  %y = graph.add %x, %z : (tensor<?xf32>, tensor<3xf32>) -> tensor<?xf32>
  func.return %y : tensor<?xf32>
}

// -----

// CHECK-LABEL: func.func @failing_folds_are_left_to_run_time
// CHECK-SAME: () -> tensor<1xf32> {
// CHECK-NEXT: %[[X:[A-Za-z0-9_$.-]+]] = graph.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK-NEXT: %[[I:[A-Za-z0-9_$.-]+]] = graph.constant dense<5> : tensor<1xi64>
// CHECK-NEXT: %[[Y:[A-Za-z0-9_$.-]+]] = graph.gather %[[X]], %[[I]] : (tensor<2xf32>, tensor<1xi64>) -> tensor<1xf32>
// CHECK-NEXT: func.return %[[Y]] : tensor<1xf32>
// CHECK-NEXT: }
func.func @failing_folds_are_left_to_run_time() -> tensor<1xf32> {
  %x = graph.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %i = graph.constant dense<[5]> : tensor<1xi64>
  %y = graph.gather %x, %i {axis = 0 : i64} : (tensor<2xf32>, tensor<1xi64>) -> tensor<1xf32>
  func.return %y : tensor<1xf32>
}

// -----

// CHECK-LABEL: func.func @constant_folding
// CHECK-SAME: () -> (tensor<2xf32>, tensor<2x2xf32>) {
// CHECK-NEXT: %[[E:[A-Za-z0-9_$.-]+]] = graph.constant dense<[2.000000e+00, 3.000000e+00]> : tensor<2xf32>
// CHECK-NEXT: %[[P:[A-Za-z0-9_$.-]+]] = graph.constant dense<{{\[\[}}5.000000e+00, 1.100000e+01], [1.100000e+01, 2.500000e+01]]> : tensor<2x2xf32>
// CHECK-NEXT: func.return %[[E]], %[[P]] : tensor<2xf32>, tensor<2x2xf32>
// CHECK-NEXT: }
func.func @constant_folding() -> (tensor<2xf32>, tensor<2x2xf32>) {
  %c = graph.constant dense<[1.0, 4.0]> : tensor<2xf32>
  %s = graph.sqrt %c : tensor<2xf32> -> tensor<2xf32>
  %one = graph.constant dense<1.0> : tensor<f32>
  %e = graph.add %s, %one : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
  %m = graph.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %t = graph.transpose %m [1, 0] : tensor<2x2xf32> -> tensor<2x2xf32>
  %p = graph.matmul %m, %t : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  func.return %e, %p : tensor<2xf32>, tensor<2x2xf32>
}
