// RUN: nimble-opt %s --split-input-file -p host-licm | filecheck %s

// CHECK-LABEL: func.func @size_computed_once
// CHECK-SAME: (%[[XS:[A-Za-z0-9_$.-]+]]: tensor<?x?x64xf32>, %[[N:[A-Za-z0-9_$.-]+]]: index) -> index {
// CHECK-NEXT: %[[C0:[A-Za-z0-9_$.-]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[ROWS:[A-Za-z0-9_$.-]+]] = dynshape.dim %[[XS]], 1 : tensor<?x?x64xf32>
// CHECK-NEXT: %[[C256:[A-Za-z0-9_$.-]+]] = arith.constant 256 : index
// CHECK-NEXT: %[[BYTES:[A-Za-z0-9_$.-]+]] = arith.muli %[[ROWS]], %[[C256]] : index
// CHECK-NEXT: %[[C1:[A-Za-z0-9_$.-]+]] = arith.constant 1 : index
// CHECK-NEXT: %[[I:[A-Za-z0-9_$.-]+]], %[[ACC:[A-Za-z0-9_$.-]+]] = graph.while (%[[I0:[A-Za-z0-9_$.-]+]] = %[[C0]], %[[A0:[A-Za-z0-9_$.-]+]] = %[[C0]]) : (index, index) -> (index, index) {
// CHECK-NEXT: %[[MORE:[A-Za-z0-9_$.-]+]] = arith.cmpi slt, %[[I0]], %[[N]] : index
// CHECK-NEXT: graph.condition %[[MORE]] : i1
// CHECK-NEXT: } do {
// CHECK-NEXT: ^bb0(%[[I1:[A-Za-z0-9_$.-]+]]: index, %[[A1:[A-Za-z0-9_$.-]+]]: index):
// CHECK-NEXT: %[[A2:[A-Za-z0-9_$.-]+]] = arith.addi %[[A1]], %[[BYTES]] : index
// CHECK-NEXT: %[[NEXT:[A-Za-z0-9_$.-]+]] = arith.addi %[[I1]], %[[C1]] : index
// CHECK-NEXT: graph.yield %[[NEXT]], %[[A2]] : index, index
// CHECK-NEXT: }
// CHECK-NEXT: func.return %[[ACC]] : index
// CHECK-NEXT: }

func.func @size_computed_once(%xs: tensor<?x?x64xf32>, %n: index) -> index {
  %c0 = arith.constant 0 : index
  %i, %acc = graph.while (%i0 = %c0, %a0 = %c0) : (index, index) -> (index, index) {
    %more = arith.cmpi slt, %i0, %n : index
    graph.condition %more : i1
  } do {
  ^bb0(%i1: index, %a1: index):
    %rows = dynshape.dim %xs, 1 : tensor<?x?x64xf32>
    %c256 = arith.constant 256 : index
    %bytes = arith.muli %rows, %c256 : index
    %a2 = arith.addi %a1, %bytes : index
    %c1 = arith.constant 1 : index
    %next = arith.addi %i1, %c1 : index
    graph.yield %next, %a2 : index, index
  }
  func.return %acc : index
}

// -----

// CHECK-LABEL: func.func @division_stays_in_the_loop
// CHECK-SAME: (%[[N:[A-Za-z0-9_$.-]+]]: index, %[[D:[A-Za-z0-9_$.-]+]]: index) -> index {
// CHECK-NEXT: %[[C0:[A-Za-z0-9_$.-]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[C1:[A-Za-z0-9_$.-]+]] = arith.constant 1 : index
// CHECK-NEXT: %[[I:[A-Za-z0-9_$.-]+]], %[[ACC:[A-Za-z0-9_$.-]+]] = graph.while (%[[I0:[A-Za-z0-9_$.-]+]] = %[[C0]], %[[A0:[A-Za-z0-9_$.-]+]] = %[[C0]]) : (index, index) -> (index, index) {
// CHECK-NEXT: %[[MORE:[A-Za-z0-9_$.-]+]] = arith.cmpi slt, %[[I0]], %[[N]] : index
// CHECK-NEXT: graph.condition %[[MORE]] : i1
// CHECK-NEXT: } do {
// CHECK-NEXT: ^bb0(%[[I1:[A-Za-z0-9_$.-]+]]: index, %[[A1:[A-Za-z0-9_$.-]+]]: index):
// CHECK-NEXT: %[[Q:[A-Za-z0-9_$.-]+]] = arith.floordivsi %[[N]], %[[D]] : index
// CHECK-NEXT: %[[A2:[A-Za-z0-9_$.-]+]] = arith.addi %[[A1]], %[[Q]] : index
// CHECK-NEXT: %[[NEXT:[A-Za-z0-9_$.-]+]] = arith.addi %[[I1]], %[[C1]] : index
// CHECK-NEXT: graph.yield %[[NEXT]], %[[A2]] : index, index
// CHECK-NEXT: }
// CHECK-NEXT: func.return %[[ACC]] : index
// CHECK-NEXT: }
func.func @division_stays_in_the_loop(%n: index, %d: index) -> index {
  %c0 = arith.constant 0 : index
  %i, %acc = graph.while (%i0 = %c0, %a0 = %c0) : (index, index) -> (index, index) {
    %more = arith.cmpi slt, %i0, %n : index
    graph.condition %more : i1
  } do {
  ^bb0(%i1: index, %a1: index):
    %q = arith.floordivsi %n, %d : index
    %a2 = arith.addi %a1, %q : index
    %c1 = arith.constant 1 : index
    %next = arith.addi %i1, %c1 : index
    graph.yield %next, %a2 : index, index
  }
  func.return %acc : index
}
