// RUN: nimble-opt %s --split-input-file -p 'simplify-host{cse=true}' | filecheck %s

// Host functions are canonicalized (constants folded, dead code gone) and CSE'd; a
// kernel (`nimble.kernel`) is left exactly as it is.
// CHECK-LABEL: func.func @host
// CHECK-NEXT: %[[C:[A-Za-z0-9_$.-]+]] = arith.constant 5 : index
// CHECK-NEXT: func.return %[[C]], %[[C]] : index, index
// CHECK-LABEL: loop.kernel @kernel
// CHECK-NEXT: %[[A:[A-Za-z0-9_$.-]+]] = arith.constant 2 : index
// CHECK-NEXT: %[[B:[A-Za-z0-9_$.-]+]] = arith.constant 3 : index
// CHECK-NEXT: %[[S:[A-Za-z0-9_$.-]+]] = arith.addi %[[A]], %[[B]] : index
// CHECK-NEXT: %[[T:[A-Za-z0-9_$.-]+]] = arith.addi %[[A]], %[[B]] : index
// CHECK-NEXT: %[[DEAD:[A-Za-z0-9_$.-]+]] = arith.muli %[[S]], %[[T]] : index
// CHECK-NEXT: loop.return

func.func @host() -> (index, index) {
  %a = arith.constant 2 : index
  %b = arith.constant 3 : index
  %s = arith.addi %a, %b : index
  %t = arith.addi %a, %b : index
  %dead = arith.muli %s, %t : index
  func.return %s, %t : index, index
}

loop.kernel @kernel() {
  %a = arith.constant 2 : index
  %b = arith.constant 3 : index
  %s = arith.addi %a, %b : index
  %t = arith.addi %a, %b : index
  %dead = arith.muli %s, %t : index
  loop.return
}

// -----

// Offsets by constants fold across add/sub chains: a stride-1 convolution's output
// extent `(h + 2 - 3) + 1` is `h`, and a 5x5 one's `(h + 2 - 5) + 1` is `h - 2`.
// CHECK-LABEL: func.func @conv_extents
// CHECK-SAME: (%[[H:[A-Za-z0-9_$.-]+]]: index)
// CHECK-NEXT: %[[C:[A-Za-z0-9_$.-]+]] = arith.constant -2 : index
// CHECK-NEXT: %[[E:[A-Za-z0-9_$.-]+]] = arith.addi %[[H]], %[[C]] : index
// CHECK-NEXT: func.return %[[H]], %[[E]] : index, index

func.func @conv_extents(%h: index) -> (index, index) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  %a = arith.addi %h, %c2 : index
  %b = arith.subi %a, %c3 : index
  %same = arith.addi %b, %c1 : index
  %d = arith.subi %a, %c5 : index
  %less = arith.addi %c1, %d : index
  func.return %same, %less : index, index
}

// -----

// An offset after a division by a constant moves into it: a 2x2 pooling's extent
// `(h - 2) // 2 + 1` is `h // 2`, a stride-2 3x3 convolution's `(h - 1) // 2 + 1` is
// `(h + 1) // 2` (ceiling divisions alike). A division with another use stays (and is
// then the pooling's: CSE).
// CHECK-LABEL: func.func @strided_extents
// CHECK-SAME: (%[[H:[A-Za-z0-9_$.-]+]]: index)
// CHECK-DAG: %[[TWO:[A-Za-z0-9_$.-]+]] = arith.constant 2 : index
// CHECK-DAG: %[[ONE:[A-Za-z0-9_$.-]+]] = arith.constant 1 : index
// CHECK-DAG: %[[POOL:[A-Za-z0-9_$.-]+]] = arith.floordivsi %[[H]], %[[TWO]] : index
// CHECK-DAG: %[[H1:[A-Za-z0-9_$.-]+]] = arith.addi %[[H]], %[[ONE]] : index
// CHECK-DAG: %[[CONV:[A-Za-z0-9_$.-]+]] = arith.floordivsi %[[H1]], %[[TWO]] : index
// CHECK-DAG: %[[CEIL:[A-Za-z0-9_$.-]+]] = arith.ceildivsi %[[H1]], %[[TWO]] : index
// CHECK-DAG: %[[KEPT:[A-Za-z0-9_$.-]+]] = arith.addi %[[POOL]], %[[ONE]] : index
// CHECK: func.return %[[POOL]], %[[CONV]], %[[CEIL]], %[[KEPT]], %[[POOL]] : index, index, index, index, index

func.func @strided_extents(%h: index) -> (index, index, index, index, index) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %a = arith.subi %h, %c2 : index
  %b = arith.floordivsi %a, %c2 : index
  %pool = arith.addi %b, %c1 : index
  %d = arith.subi %h, %c1 : index
  %e = arith.floordivsi %d, %c2 : index
  %conv = arith.addi %e, %c1 : index
  %f = arith.ceildivsi %d, %c2 : index
  %ceil = arith.addi %f, %c1 : index
  %q = arith.floordivsi %h, %c2 : index
  %kept = arith.addi %q, %c1 : index
  func.return %pool, %conv, %ceil, %kept, %q : index, index, index, index, index
}
