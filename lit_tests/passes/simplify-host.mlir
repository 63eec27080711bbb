// RUN: nimble-opt %s -p 'simplify-host{cse=true}' | filecheck %s

// Host functions are canonicalized (constants folded, dead code gone) and CSE'd; a
// kernel (`nimble.kernel`) is left exactly as it is.
// CHECK-LABEL: func.func @host
// CHECK-NEXT: %[[C:[A-Za-z0-9_$.-]+]] = arith.constant 5 : index
// CHECK-NEXT: func.return %[[C]], %[[C]] : index, index
// CHECK-LABEL: func.func @kernel
// CHECK-NEXT: %[[A:[A-Za-z0-9_$.-]+]] = arith.constant 2 : index
// CHECK-NEXT: %[[B:[A-Za-z0-9_$.-]+]] = arith.constant 3 : index
// CHECK-NEXT: %[[S:[A-Za-z0-9_$.-]+]] = arith.addi %[[A]], %[[B]] : index
// CHECK-NEXT: %[[T:[A-Za-z0-9_$.-]+]] = arith.addi %[[A]], %[[B]] : index
// CHECK-NEXT: %[[DEAD:[A-Za-z0-9_$.-]+]] = arith.muli %[[S]], %[[T]] : index
// CHECK-NEXT: func.return

func.func @host() -> (index, index) {
  %a = arith.constant 2 : index
  %b = arith.constant 3 : index
  %s = arith.addi %a, %b : index
  %t = arith.addi %a, %b : index
  %dead = arith.muli %s, %t : index
  func.return %s, %t : index, index
}

func.func @kernel() attributes {nimble.kernel = "kernel"} {
  %a = arith.constant 2 : index
  %b = arith.constant 3 : index
  %s = arith.addi %a, %b : index
  %t = arith.addi %a, %b : index
  %dead = arith.muli %s, %t : index
  func.return
}
