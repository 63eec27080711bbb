// RUN: nimble-opt %s --split-input-file -p canonicalize | filecheck %s

// CHECK-LABEL: func.func @static_dim
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<?x4xf32>) -> index {
// CHECK-NEXT: %[[D:[A-Za-z0-9_$.-]+]] = arith.constant 4 : index
// CHECK-NEXT: func.return %[[D]] : index
// CHECK-NEXT: }
func.func @static_dim(%x: tensor<?x4xf32>) -> index {
  %d = shape.dim %x, 1 : tensor<?x4xf32>
  func.return %d : index
}

// -----

// CHECK-LABEL: func.func @get_of_known
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<?x4xf32>, %[[N:[A-Za-z0-9_$.-]+]]: index) -> (index, index) {
// CHECK-NEXT: %[[A:[A-Za-z0-9_$.-]+]] = shape.dim %[[X]], 0 : tensor<?x4xf32>
// CHECK-NEXT: func.return %[[A]], %[[N]] : index, index
// CHECK-NEXT: }
func.func @get_of_known(%x: tensor<?x4xf32>, %n: index) -> (index, index) {
  %s = shape.of %x : tensor<?x4xf32> -> !shape.shape<2>
  %a = shape.get %s, 0 : !shape.shape<2>
  %f = shape.from_dims %n, %a : !shape.shape<2>
  %b = shape.get %f, 0 : !shape.shape<2>
  func.return %a, %b : index, index
}

// -----

// CHECK-LABEL: func.func @true_assert
// CHECK-SAME: () {
// CHECK-NEXT: func.return
// CHECK-NEXT: }
func.func @true_assert() {
  %t = arith.constant true
  shape.assert %t, "always holds"
  func.return
}
