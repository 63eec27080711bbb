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

// -----

// CHECK-LABEL: func.func @dead_carried_value
// CHECK-SAME: (%[[XS:[A-Za-z0-9_$.-]+]]: tensor<?x4xf32>, %[[H0:[A-Za-z0-9_$.-]+]]: tensor<4xf32>, %[[STACK0:[A-Za-z0-9_$.-]+]]: tensor<?x4xf32>) -> tensor<4xf32> {
// CHECK-NEXT: %[[ZERO:[A-Za-z0-9_$.-]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[ONE:[A-Za-z0-9_$.-]+]] = arith.constant 1 : index
// CHECK-NEXT: %[[N:[A-Za-z0-9_$.-]+]] = dynshape.dim %[[XS]], 0 : tensor<?x4xf32>
// CHECK-NEXT: %[[I:[A-Za-z0-9_$.-]+]], %[[H:[A-Za-z0-9_$.-]+]] = graph.while (%[[I0:[A-Za-z0-9_$.-]+]] = %[[ZERO]], %[[H1:[A-Za-z0-9_$.-]+]] = %[[H0]]) : (index, tensor<4xf32>) -> (index, tensor<4xf32>) {
// CHECK-NEXT: %[[GO:[A-Za-z0-9_$.-]+]] = arith.cmpi slt, %[[I0]], %[[N]] : index
// CHECK-NEXT: graph.condition %[[GO]] : i1
// CHECK-NEXT: } do {
// CHECK-NEXT: ^bb0(%[[I2:[A-Za-z0-9_$.-]+]]: index, %[[H2:[A-Za-z0-9_$.-]+]]: tensor<4xf32>):
// CHECK-NEXT: %[[NEXT:[A-Za-z0-9_$.-]+]] = arith.addi %[[I2]], %[[ONE]] : index
// CHECK-NEXT: %[[H3:[A-Za-z0-9_$.-]+]] = graph.tanh %[[H2]] : tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT: graph.yield %[[NEXT]], %[[H3]] : index, tensor<4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: func.return %[[H]] : tensor<4xf32>
// CHECK-NEXT: }
// A carried value nothing reads (here: every step's h stacked, only the last h
// returned) goes with the ops that compute it; the others stay.
func.func @dead_carried_value(%xs: tensor<?x4xf32>, %h0: tensor<4xf32>, %stack0: tensor<?x4xf32>) -> tensor<4xf32> {
  %zero = arith.constant 0 : index
  %one = arith.constant 1 : index
  %n = dynshape.dim %xs, 0 : tensor<?x4xf32>
  %i, %h, %stack = graph.while (%i0 = %zero, %h1 = %h0, %s1 = %stack0) : (index, tensor<4xf32>, tensor<?x4xf32>) -> (index, tensor<4xf32>, tensor<?x4xf32>) {
    %go = arith.cmpi slt, %i0, %n : index
    graph.condition %go : i1
  } do {
  ^bb0(%i2: index, %h2: tensor<4xf32>, %s2: tensor<?x4xf32>):
    %next = arith.addi %i2, %one : index
    %h3 = graph.tanh %h2 : tensor<4xf32> -> tensor<4xf32>
    %row = graph.unsqueeze %h3 [0] : tensor<4xf32> -> tensor<1x4xf32>
    %s3 = graph.concat %s2, %row {axis = 0 : i64} : (tensor<?x4xf32>, tensor<1x4xf32>) -> tensor<?x4xf32>
    graph.yield %next, %h3, %s3 : index, tensor<4xf32>, tensor<?x4xf32>
  }
  func.return %h : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @carried_value_read_by_another_stays
// CHECK-SAME: (%[[H0:[A-Za-z0-9_$.-]+]]: tensor<4xf32>, %[[N:[A-Za-z0-9_$.-]+]]: index) -> tensor<4xf32> {
// CHECK-NEXT: %[[ZERO:[A-Za-z0-9_$.-]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[ONE:[A-Za-z0-9_$.-]+]] = arith.constant 1 : index
// CHECK-NEXT: %[[I:[A-Za-z0-9_$.-]+]], %[[A:[A-Za-z0-9_$.-]+]], %[[B:[A-Za-z0-9_$.-]+]] = graph.while (%[[I0:[A-Za-z0-9_$.-]+]] = %[[ZERO]], %[[A1:[A-Za-z0-9_$.-]+]] = %[[H0]], %[[B1:[A-Za-z0-9_$.-]+]] = %[[H0]]) : (index, tensor<4xf32>, tensor<4xf32>) -> (index, tensor<4xf32>, tensor<4xf32>) {
// CHECK-NEXT: %[[GO:[A-Za-z0-9_$.-]+]] = arith.cmpi slt, %[[I0]], %[[N]] : index
// CHECK-NEXT: graph.condition %[[GO]] : i1
// CHECK-NEXT: } do {
// CHECK-NEXT: ^bb0(%[[I2:[A-Za-z0-9_$.-]+]]: index, %[[A2:[A-Za-z0-9_$.-]+]]: tensor<4xf32>, %[[B2:[A-Za-z0-9_$.-]+]]: tensor<4xf32>):
// CHECK-NEXT: %[[NEXT:[A-Za-z0-9_$.-]+]] = arith.addi %[[I2]], %[[ONE]] : index
// CHECK-NEXT: %[[A3:[A-Za-z0-9_$.-]+]] = graph.add %[[A2]], %[[B2]] : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: %[[B3:[A-Za-z0-9_$.-]+]] = graph.tanh %[[B2]] : tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT: graph.yield %[[NEXT]], %[[A3]], %[[B3]] : index, tensor<4xf32>, tensor<4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: func.return %[[A]] : tensor<4xf32>
// CHECK-NEXT: }
// A carried value another one reads stays, though its result is unused.
func.func @carried_value_read_by_another_stays(%h0: tensor<4xf32>, %n: index) -> tensor<4xf32> {
  %zero = arith.constant 0 : index
  %one = arith.constant 1 : index
  %i, %a, %b = graph.while (%i0 = %zero, %a1 = %h0, %b1 = %h0) : (index, tensor<4xf32>, tensor<4xf32>) -> (index, tensor<4xf32>, tensor<4xf32>) {
    %go = arith.cmpi slt, %i0, %n : index
    graph.condition %go : i1
  } do {
  ^bb0(%i2: index, %a2: tensor<4xf32>, %b2: tensor<4xf32>):
    %next = arith.addi %i2, %one : index
    %a3 = graph.add %a2, %b2 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %b3 = graph.tanh %b2 : tensor<4xf32> -> tensor<4xf32>
    graph.yield %next, %a3, %b3 : index, tensor<4xf32>, tensor<4xf32>
  }
  func.return %a : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @carried_value_yielded_as_another_stays
// CHECK-SAME: (%[[H0:[A-Za-z0-9_$.-]+]]: tensor<4xf32>, %[[N:[A-Za-z0-9_$.-]+]]: index) -> tensor<4xf32> {
// CHECK-NEXT: %[[ZERO:[A-Za-z0-9_$.-]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[ONE:[A-Za-z0-9_$.-]+]] = arith.constant 1 : index
// CHECK-NEXT: %[[I:[A-Za-z0-9_$.-]+]], %[[A:[A-Za-z0-9_$.-]+]], %[[B:[A-Za-z0-9_$.-]+]] = graph.while (%[[I0:[A-Za-z0-9_$.-]+]] = %[[ZERO]], %[[A1:[A-Za-z0-9_$.-]+]] = %[[H0]], %[[B1:[A-Za-z0-9_$.-]+]] = %[[H0]]) : (index, tensor<4xf32>, tensor<4xf32>) -> (index, tensor<4xf32>, tensor<4xf32>) {
// CHECK-NEXT: %[[GO:[A-Za-z0-9_$.-]+]] = arith.cmpi slt, %[[I0]], %[[N]] : index
// CHECK-NEXT: graph.condition %[[GO]] : i1
// CHECK-NEXT: } do {
// CHECK-NEXT: ^bb0(%[[I2:[A-Za-z0-9_$.-]+]]: index, %[[A2:[A-Za-z0-9_$.-]+]]: tensor<4xf32>, %[[B2:[A-Za-z0-9_$.-]+]]: tensor<4xf32>):
// CHECK-NEXT: %[[NEXT:[A-Za-z0-9_$.-]+]] = arith.addi %[[I2]], %[[ONE]] : index
// CHECK-NEXT: %[[B3:[A-Za-z0-9_$.-]+]] = graph.tanh %[[A2]] : tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT: graph.yield %[[NEXT]], %[[B2]], %[[B3]] : index, tensor<4xf32>, tensor<4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: func.return %[[A]] : tensor<4xf32>
// CHECK-NEXT: }
// A carried value that becomes another one's next value stays.
func.func @carried_value_yielded_as_another_stays(%h0: tensor<4xf32>, %n: index) -> tensor<4xf32> {
  %zero = arith.constant 0 : index
  %one = arith.constant 1 : index
  %i, %a, %b = graph.while (%i0 = %zero, %a1 = %h0, %b1 = %h0) : (index, tensor<4xf32>, tensor<4xf32>) -> (index, tensor<4xf32>, tensor<4xf32>) {
    %go = arith.cmpi slt, %i0, %n : index
    graph.condition %go : i1
  } do {
  ^bb0(%i2: index, %a2: tensor<4xf32>, %b2: tensor<4xf32>):
    %next = arith.addi %i2, %one : index
    %b3 = graph.tanh %a2 : tensor<4xf32> -> tensor<4xf32>
    graph.yield %next, %b2, %b3 : index, tensor<4xf32>, tensor<4xf32>
  }
  func.return %a : tensor<4xf32>
}

// -----

// A fill whose result type is static is a constant; one with `?` dims stays.

// CHECK-LABEL: func.func @static_fill_is_a_constant
// CHECK-SAME: (%[[S:[A-Za-z0-9_$.-]+]]: !dynshape.shape<2>, %[[D:[A-Za-z0-9_$.-]+]]: !dynshape.shape<2>) -> (tensor<1x3xf32>, tensor<2x2xf32>, tensor<?x3xf32>) {
// CHECK-NEXT: %[[Z:[A-Za-z0-9_$.-]+]] = graph.constant dense<0.000000e+00> : tensor<1x3xf32>
// CHECK-NEXT: %[[F:[A-Za-z0-9_$.-]+]] = graph.constant dense<2.500000e+00> : tensor<2x2xf32>
// CHECK-NEXT: %[[G:[A-Za-z0-9_$.-]+]] = graph.full %[[D]] {value = 1.000000e+00 : f32} : !dynshape.shape<2> -> tensor<?x3xf32>
// CHECK-NEXT: func.return %[[Z]], %[[F]], %[[G]] : tensor<1x3xf32>, tensor<2x2xf32>, tensor<?x3xf32>
// CHECK-NEXT: }
func.func @static_fill_is_a_constant(%s: !dynshape.shape<2>, %d: !dynshape.shape<2>) -> (tensor<1x3xf32>, tensor<2x2xf32>, tensor<?x3xf32>) {
  %z = graph.zeros %s : !dynshape.shape<2> -> tensor<1x3xf32>
  %f = graph.full %s {value = 2.5 : f32} : !dynshape.shape<2> -> tensor<2x2xf32>
  %g = graph.full %d {value = 1.0 : f32} : !dynshape.shape<2> -> tensor<?x3xf32>
  func.return %z, %f, %g : tensor<1x3xf32>, tensor<2x2xf32>, tensor<?x3xf32>
}
