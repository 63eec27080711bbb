// RUN: nimble-opt %s --split-input-file -p int-range-optimizations,canonicalize | filecheck %s

// CHECK-LABEL: func.func @counter_clamp
// CHECK-SAME: (%[[XS:[A-Za-z0-9_$.-]+]]: tensor<?x4xf32>) -> index {
// CHECK-NEXT: %[[ZERO:[A-Za-z0-9_$.-]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[ONE:[A-Za-z0-9_$.-]+]] = arith.constant 1 : index
// CHECK-NEXT: %[[N:[A-Za-z0-9_$.-]+]] = dynshape.dim %[[XS]], 0 : tensor<?x4xf32>
// CHECK-NEXT: %[[I:[A-Za-z0-9_$.-]+]], %[[ACC:[A-Za-z0-9_$.-]+]] = graph.while (%[[I0:[A-Za-z0-9_$.-]+]] = %[[ZERO]], %[[ACC0:[A-Za-z0-9_$.-]+]] = %[[ZERO]]) : (index, index) -> (index, index) {
// CHECK-NEXT: %[[GO:[A-Za-z0-9_$.-]+]] = arith.cmpi slt, %[[I0]], %[[N]] : index
// CHECK-NEXT: graph.condition %[[GO]] : i1
// CHECK-NEXT: } do {
// CHECK-NEXT: ^bb0(%[[I1:[A-Za-z0-9_$.-]+]]: index, %[[ACC1:[A-Za-z0-9_$.-]+]]: index):
// CHECK-NEXT: %[[NEXT:[A-Za-z0-9_$.-]+]] = arith.addi %[[I1]], %[[ONE]] : index
// CHECK-NEXT: %[[ROWS:[A-Za-z0-9_$.-]+]] = arith.constant 1 : index
// CHECK-NEXT: %[[ACC2:[A-Za-z0-9_$.-]+]] = arith.addi %[[ACC1]], %[[ROWS]] : index
// CHECK-NEXT: graph.yield %[[NEXT]], %[[ACC2]] : index, index
// CHECK-NEXT: }
// CHECK-NEXT: func.return %[[ACC]] : index
// CHECK-NEXT: }

// The clamping of `xs[i]`'s bounds in a loop `for i in range(len(xs))` folds away.
func.func @counter_clamp(%xs: tensor<?x4xf32>) -> index {
  %zero = arith.constant 0 : index
  %one = arith.constant 1 : index
  %n = dynshape.dim %xs, 0 : tensor<?x4xf32>
  %i, %acc = graph.while (%i0 = %zero, %acc0 = %zero) : (index, index) -> (index, index) {
    %go = arith.cmpi slt, %i0, %n : index
    graph.condition %go : i1
  } do {
  ^bb0(%i1: index, %acc1: index):
    %next = arith.addi %i1, %one : index
    %neg = arith.cmpi slt, %i1, %zero : index
    %wrapped = arith.addi %i1, %n : index
    %start0 = arith.select %neg, %wrapped, %i1 : index
    %start1 = arith.maxsi %start0, %zero : index
    %start = arith.minsi %start1, %n : index
    %end0 = arith.maxsi %next, %zero : index
    %end = arith.minsi %end0, %n : index
    %rows = arith.subi %end, %start : index
    %acc2 = arith.addi %acc1, %rows : index
    graph.yield %next, %acc2 : index, index
  }
  func.return %acc : index
}

// -----

// CHECK-LABEL: func.func @not_a_counter
// CHECK-SAME: (%[[XS:[A-Za-z0-9_$.-]+]]: tensor<?x4xf32>, %[[M:[A-Za-z0-9_$.-]+]]: index) -> index {
// CHECK-NEXT: %[[ZERO:[A-Za-z0-9_$.-]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[MINUS:[A-Za-z0-9_$.-]+]] = arith.constant -1 : index
// CHECK-NEXT: %[[N:[A-Za-z0-9_$.-]+]] = dynshape.dim %[[XS]], 0 : tensor<?x4xf32>
// CHECK-NEXT: %[[I:[A-Za-z0-9_$.-]+]], %[[ACC:[A-Za-z0-9_$.-]+]] = graph.while (%[[I0:[A-Za-z0-9_$.-]+]] = %[[N]], %[[ACC0:[A-Za-z0-9_$.-]+]] = %[[ZERO]]) : (index, index) -> (index, index) {
// CHECK-NEXT: %[[GO:[A-Za-z0-9_$.-]+]] = arith.cmpi sgt, %[[I0]], %[[ZERO]] : index
// CHECK-NEXT: graph.condition %[[GO]] : i1
// CHECK-NEXT: } do {
// CHECK-NEXT: ^bb0(%[[I1:[A-Za-z0-9_$.-]+]]: index, %[[ACC1:[A-Za-z0-9_$.-]+]]: index):
// CHECK-NEXT: %[[NEXT:[A-Za-z0-9_$.-]+]] = arith.addi %[[I1]], %[[MINUS]] : index
// CHECK-NEXT: %[[LO:[A-Za-z0-9_$.-]+]] = arith.maxsi %[[I1]], %[[ZERO]] : index
// CHECK-NEXT: %[[HI:[A-Za-z0-9_$.-]+]] = arith.minsi %[[LO]], %[[M]] : index
// CHECK-NEXT: %[[ACC2:[A-Za-z0-9_$.-]+]] = arith.addi %[[ACC1]], %[[HI]] : index
// CHECK-NEXT: graph.yield %[[NEXT]], %[[ACC2]] : index, index
// CHECK-NEXT: }
// CHECK-NEXT: func.return %[[ACC]] : index
// CHECK-NEXT: }
// A counter stepping down, and a comparison with a bound that is not the loop's, stay.
func.func @not_a_counter(%xs: tensor<?x4xf32>, %m: index) -> index {
  %zero = arith.constant 0 : index
  %minus = arith.constant -1 : index
  %n = dynshape.dim %xs, 0 : tensor<?x4xf32>
  %i, %acc = graph.while (%i0 = %n, %acc0 = %zero) : (index, index) -> (index, index) {
    %go = arith.cmpi sgt, %i0, %zero : index
    graph.condition %go : i1
  } do {
  ^bb0(%i1: index, %acc1: index):
    %next = arith.addi %i1, %minus : index
    %lo = arith.maxsi %i1, %zero : index
    %hi = arith.minsi %lo, %m : index
    %acc2 = arith.addi %acc1, %hi : index
    graph.yield %next, %acc2 : index, index
  }
  func.return %acc : index
}

// -----

// CHECK-LABEL: func.func @dims
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<?x4xf32>) -> (index, i1) {
// CHECK-NEXT: %[[N:[A-Za-z0-9_$.-]+]] = dynshape.dim %[[X]], 0 : tensor<?x4xf32>
// CHECK-NEXT: %[[NEG:[A-Za-z0-9_$.-]+]] = arith.constant false
// CHECK-NEXT: func.return %[[N]], %[[NEG]] : index, i1
// CHECK-NEXT: }
// Dims are never negative.
func.func @dims(%x: tensor<?x4xf32>) -> (index, i1) {
  %zero = arith.constant 0 : index
  %n = dynshape.dim %x, 0 : tensor<?x4xf32>
  %m = arith.maxsi %n, %zero : index
  %neg = arith.cmpi slt, %n, %zero : index
  func.return %m, %neg : index, i1
}

// -----

// Kernel loops: the induction variable lies in [lb, ub - 1] and `k - 4` in [0, 3], so in
// the upper part of a reduction split at 4 the select and the clamps fold away.

// CHECK-LABEL: func.func @loop_counter
// CHECK-SAME: (%[[A:[A-Za-z0-9_$.-]+]]: memref<8xf32>, %[[B:[A-Za-z0-9_$.-]+]]: memref<4xf32>) -> f32 {
// CHECK-NEXT: %[[C1:[A-Za-z0-9_$.-]+]] = arith.constant 1 : index
// CHECK-NEXT: %[[C4:[A-Za-z0-9_$.-]+]] = arith.constant 4 : index
// CHECK-NEXT: %[[C8:[A-Za-z0-9_$.-]+]] = arith.constant 8 : index
// CHECK-NEXT: %[[ZERO:[A-Za-z0-9_$.-]+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[S:[A-Za-z0-9_$.-]+]] = loop.reduce %[[K:[A-Za-z0-9_$.-]+]] = %[[C4]] to %[[C8]] step %[[C1]] combine(add) init(%[[ZERO]]) : f32 {
// CHECK-NEXT: %[[J:[A-Za-z0-9_$.-]+]] = arith.subi %[[K]], %[[C4]] : index
// CHECK-NEXT: %[[X:[A-Za-z0-9_$.-]+]] = memref.load %[[B]][%[[J]]] : memref<4xf32>
// CHECK-NEXT: loop.yield %[[X]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: func.return %[[S]] : f32
// CHECK-NEXT: }

func.func @loop_counter(%a: memref<8xf32>, %b: memref<4xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.000000e+00 : f32
  %s = loop.reduce %k = %c4 to %c8 step %c1 combine(add) init(%zero) : f32 {
    %high = arith.cmpi sge, %k, %c4 : index
    %j = arith.subi %k, %c4 : index
    %lo = arith.maxsi %j, %c0 : index
    %hi = arith.minsi %lo, %c3 : index
    %x = memref.load %b[%hi] : memref<4xf32>
    %y = memref.load %a[%k] : memref<8xf32>
    %v = arith.select %high, %x, %y : f32
    loop.yield %v : f32
  }
  func.return %s : f32
}

// -----

// An unsigned comparison is left alone (the bounds known are signed): it used to stop
// the pass with a KeyError.
// CHECK-LABEL: func.func @unsigned_compare_kept
// CHECK: %[[LT:[A-Za-z0-9_$.-]+]] = arith.cmpi ult, %{{.*}}, %{{.*}} : index
// CHECK: func.return %[[LT]] : i1
func.func @unsigned_compare_kept(%xs: tensor<?x4xf32>, %k: index) -> i1 {
  %n = dynshape.dim %xs, 0 : tensor<?x4xf32>
  %lt = arith.cmpi ult, %k, %n : index
  func.return %lt : i1
}
