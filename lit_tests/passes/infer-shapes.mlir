// RUN: nimble-opt %s --split-input-file -p infer-shapes | filecheck %s

// CHECK-LABEL: func.func @ops
// CHECK-SAME: (%[[A:[A-Za-z0-9_$.-]+]]: tensor<2x4xf32>, %[[B:[A-Za-z0-9_$.-]+]]: tensor<4x3xf32>) -> tensor<2x3xf32> {
// CHECK-NEXT: %[[C:[A-Za-z0-9_$.-]+]] = graph.matmul %[[A]], %[[B]] : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %[[D:[A-Za-z0-9_$.-]+]] = graph.relu %[[C]] : tensor<2x3xf32> -> tensor<2x3xf32>
// CHECK-NEXT: func.return %[[D]] : tensor<2x3xf32>
// CHECK-NEXT: }
func.func @ops(%a: tensor<2x4xf32>, %b: tensor<4x3xf32>) -> tensor<?x?xf32> {
  %c = graph.matmul %a, %b : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<?x?xf32>
  %d = graph.relu %c : tensor<?x?xf32> -> tensor<?x?xf32>
  func.return %d : tensor<?x?xf32>
}

// -----

// CHECK-LABEL: func.func @callee
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<?x4xf32>) -> tensor<4x?xf32> {
// CHECK-NEXT: %[[Y:[A-Za-z0-9_$.-]+]] = graph.transpose %[[X]] [1, 0] : tensor<?x4xf32> -> tensor<4x?xf32>
// CHECK-NEXT: func.return %[[Y]] : tensor<4x?xf32>
// CHECK-NEXT: }
// CHECK-LABEL: func.func @caller
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<3x4xf32>) -> tensor<4x?xf32> {
// CHECK-NEXT: %[[W:[A-Za-z0-9_$.-]+]] = graph.cast %[[X]] : tensor<3x4xf32> -> tensor<3x4xf32>
// CHECK-NEXT: %[[V0:[A-Za-z0-9_$.-]+]] = graph.cast %[[W]] : tensor<3x4xf32> -> tensor<?x4xf32>
// CHECK-NEXT: %[[R:[A-Za-z0-9_$.-]+]] = func.call @callee(%[[V0]]) : (tensor<?x4xf32>) -> tensor<4x?xf32>
// CHECK-NEXT: func.return %[[R]] : tensor<4x?xf32>
// CHECK-NEXT: }
func.func @callee(%x: tensor<?x4xf32>) -> tensor<?x?xf32> {
  %y = graph.transpose %x [1, 0] : tensor<?x4xf32> -> tensor<?x?xf32>
  func.return %y : tensor<?x?xf32>
}
func.func @caller(%x: tensor<3x4xf32>) -> tensor<?x?xf32> {
  %w = graph.cast %x : tensor<3x4xf32> -> tensor<?x4xf32>
  %r = func.call @callee(%w) : (tensor<?x4xf32>) -> tensor<?x?xf32>
  func.return %r : tensor<?x?xf32>
}

// -----

// CHECK-LABEL: func.func @if_join
// CHECK-SAME: (%[[C:[A-Za-z0-9_$.-]+]]: i1, %[[A:[A-Za-z0-9_$.-]+]]: tensor<2x3xf32>, %[[B:[A-Za-z0-9_$.-]+]]: tensor<2x5xf32>) -> (tensor<2x3xf32>, tensor<2x?xf32>) {
// CHECK-NEXT: %[[SAME:[A-Za-z0-9_$.-]+]], %[[DIFFER:[A-Za-z0-9_$.-]+]] = graph.if %[[C]] : i1 -> (tensor<2x3xf32>, tensor<2x?xf32>) {
// CHECK-NEXT: graph.yield %[[A]], %[[A]] : tensor<2x3xf32>, tensor<2x3xf32>
// CHECK-NEXT: } else {
// CHECK-NEXT: %[[N:[A-Za-z0-9_$.-]+]] = graph.neg %[[A]] : tensor<2x3xf32> -> tensor<2x3xf32>
// CHECK-NEXT: graph.yield %[[N]], %[[B]] : tensor<2x3xf32>, tensor<2x5xf32>
// CHECK-NEXT: }
// CHECK-NEXT: func.return %[[SAME]], %[[DIFFER]] : tensor<2x3xf32>, tensor<2x?xf32>
// CHECK-NEXT: }
func.func @if_join(%c: i1, %a: tensor<2x3xf32>, %b: tensor<2x5xf32>) -> (tensor<?x?xf32>, tensor<?x?xf32>) {
  %same, %differ = graph.if %c : i1 -> (tensor<?x?xf32>, tensor<?x?xf32>) {
    graph.yield %a, %a : tensor<2x3xf32>, tensor<2x3xf32>
  } else {
    %n = graph.neg %a : tensor<2x3xf32> -> tensor<2x3xf32>
    graph.yield %n, %b : tensor<2x3xf32>, tensor<2x5xf32>
  }
  func.return %same, %differ : tensor<?x?xf32>, tensor<?x?xf32>
}

// -----

// CHECK-LABEL: func.func @while_join
// CHECK-SAME: (%[[N:[A-Za-z0-9_$.-]+]]: index, %[[H:[A-Za-z0-9_$.-]+]]: tensor<1x2xf32>) -> (tensor<1x2xf32>, tensor<1x?xf32>) {
// CHECK-NEXT: %[[ZERO:[A-Za-z0-9_$.-]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[I:[A-Za-z0-9_$.-]+]], %[[SAME:[A-Za-z0-9_$.-]+]], %[[GROWS:[A-Za-z0-9_$.-]+]] = graph.while (%[[I0:[A-Za-z0-9_$.-]+]] = %[[ZERO]], %[[S0:[A-Za-z0-9_$.-]+]] = %[[H]], %[[G0:[A-Za-z0-9_$.-]+]] = %[[H]]) : (index, tensor<1x2xf32>, tensor<1x2xf32>) -> (index, tensor<1x2xf32>, tensor<1x?xf32>) {
// CHECK-NEXT: %[[C:[A-Za-z0-9_$.-]+]] = arith.cmpi slt, %[[I0]], %[[N]] : index
// CHECK-NEXT: graph.condition %[[C]] : i1
// CHECK-NEXT: } do {
// CHECK-NEXT: ^bb0(%[[I1:[A-Za-z0-9_$.-]+]]: index, %[[S1:[A-Za-z0-9_$.-]+]]: tensor<1x2xf32>, %[[G1:[A-Za-z0-9_$.-]+]]: tensor<1x?xf32>):
// CHECK-NEXT: %[[ONE:[A-Za-z0-9_$.-]+]] = arith.constant 1 : index
// CHECK-NEXT: %[[I2:[A-Za-z0-9_$.-]+]] = arith.addi %[[I1]], %[[ONE]] : index
// CHECK-NEXT: %[[S2:[A-Za-z0-9_$.-]+]] = graph.tanh %[[S1]] : tensor<1x2xf32> -> tensor<1x2xf32>
// CHECK-NEXT: %[[G2:[A-Za-z0-9_$.-]+]] = graph.concat %[[G1]], %[[G1]] {axis = 1 : i64} : (tensor<1x?xf32>, tensor<1x?xf32>) -> tensor<1x?xf32>
// CHECK-NEXT: graph.yield %[[I2]], %[[S2]], %[[G2]] : index, tensor<1x2xf32>, tensor<1x?xf32>
// CHECK-NEXT: }
// CHECK-NEXT: func.return %[[SAME]], %[[GROWS]] : tensor<1x2xf32>, tensor<1x?xf32>
// CHECK-NEXT: }
func.func @while_join(%n: index, %h: tensor<1x2xf32>) -> (tensor<?x?xf32>, tensor<?x?xf32>) {
  %zero = arith.constant 0 : index
  %i, %same, %grows = graph.while (%i0 = %zero, %s0 = %h, %g0 = %h) : (index, tensor<1x2xf32>, tensor<1x2xf32>) -> (index, tensor<?x?xf32>, tensor<?x?xf32>) {
    %c = arith.cmpi slt, %i0, %n : index
    graph.condition %c : i1
  } do {
  ^bb0(%i1: index, %s1: tensor<?x?xf32>, %g1: tensor<?x?xf32>):
    %one = arith.constant 1 : index
    %i2 = arith.addi %i1, %one : index
    %s2 = graph.tanh %s1 : tensor<?x?xf32> -> tensor<?x?xf32>
    %g2 = graph.concat %g1, %g1 {axis = 1 : i64} : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
    graph.yield %i2, %s2, %g2 : index, tensor<?x?xf32>, tensor<?x?xf32>
  }
  func.return %same, %grows : tensor<?x?xf32>, tensor<?x?xf32>
}

// -----

// CHECK: graph.adt @Tree {
// CHECK-NEXT: graph.constructor @Leaf(tensor<1x4xf32>)
// CHECK-NEXT: graph.constructor @Node(!graph.adt<@Tree>, !graph.adt<@Tree>)
// CHECK-NEXT: }
// CHECK-LABEL: func.func @match_and_tuples
// CHECK-SAME: (%[[T:[A-Za-z0-9_$.-]+]]: !graph.adt<@Tree>, %[[X:[A-Za-z0-9_$.-]+]]: tensor<1x4xf32>) -> tensor<1x4xf32> {
// CHECK-NEXT: %[[R:[A-Za-z0-9_$.-]+]] = graph.match %[[T]] : !graph.adt<@Tree> -> (tensor<1x4xf32>)
// CHECK-NEXT: case @Leaf(%[[V:[A-Za-z0-9_$.-]+]]: tensor<1x4xf32>) {
// CHECK-NEXT: graph.yield %[[V]] : tensor<1x4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: case @Node(%[[L:[A-Za-z0-9_$.-]+]]: !graph.adt<@Tree>, %[[RR:[A-Za-z0-9_$.-]+]]: !graph.adt<@Tree>) {
// CHECK-NEXT: graph.yield %[[X]] : tensor<1x4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: %[[P:[A-Za-z0-9_$.-]+]] = graph.make_tuple %[[R]], %[[R]] : (tensor<1x4xf32>, tensor<1x4xf32>) -> tuple<tensor<1x4xf32>, tensor<1x4xf32>>
// CHECK-NEXT: %[[E:[A-Za-z0-9_$.-]+]] = graph.get_item %[[P]], 0 : tuple<tensor<1x4xf32>, tensor<1x4xf32>> -> tensor<1x4xf32>
// CHECK-NEXT: func.return %[[E]] : tensor<1x4xf32>
// CHECK-NEXT: }
graph.adt @Tree {
  graph.constructor @Leaf(tensor<1x4xf32>)
  graph.constructor @Node(!graph.adt<@Tree>, !graph.adt<@Tree>)
}
func.func @match_and_tuples(%t: !graph.adt<@Tree>, %x: tensor<1x4xf32>) -> tensor<?x?xf32> {
  %r = graph.match %t : !graph.adt<@Tree> -> (tensor<?x?xf32>)
    case @Leaf(%v: tensor<1x4xf32>) {
      graph.yield %v : tensor<1x4xf32>
    }
    case @Node(%l: !graph.adt<@Tree>, %rr: !graph.adt<@Tree>) {
      graph.yield %x : tensor<1x4xf32>
    }
  %p = graph.make_tuple %r, %r : (tensor<?x?xf32>, tensor<?x?xf32>) -> tuple<tensor<?x?xf32>, tensor<?x?xf32>>
  %e = graph.get_item %p, 0 : tuple<tensor<?x?xf32>, tensor<?x?xf32>> -> tensor<?x?xf32>
  func.return %e : tensor<?x?xf32>
}
