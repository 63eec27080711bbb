// RUN: nimble-opt %s --split-input-file | filecheck %s
// RUN: nimble-opt %s --split-input-file --print-op-generic | nimble-opt --split-input-file | filecheck %s

// CHECK-LABEL: func.func @dims
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<?x4xf32>) -> index {
// CHECK-NEXT: %[[D:[A-Za-z0-9_$.-]+]] = shape.dim %[[X]], 0 : tensor<?x4xf32>
// CHECK-NEXT: %[[N:[A-Za-z0-9_$.-]+]] = shape.dim %[[X]], 1 : tensor<?x4xf32>
// CHECK-NEXT: %[[P:[A-Za-z0-9_$.-]+]] = arith.muli %[[D]], %[[N]] : index
// CHECK-NEXT: func.return %[[P]] : index
// CHECK-NEXT: }
func.func @dims(%x: tensor<?x4xf32>) -> index {
  %d = shape.dim %x, 0 : tensor<?x4xf32>
  %n = shape.dim %x, 1 : tensor<?x4xf32>
  %p = arith.muli %d, %n : index
  func.return %p : index
}

// -----

// CHECK-LABEL: func.func @shapes
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<?x4xf32>, %[[Y:[A-Za-z0-9_$.-]+]]: tensor<4xf32>, %[[N:[A-Za-z0-9_$.-]+]]: index) -> (!shape.shape<2>, index, index) {
// CHECK-NEXT: %[[S:[A-Za-z0-9_$.-]+]] = shape.of %[[X]] : tensor<?x4xf32> -> !shape.shape<2>
// CHECK-NEXT: %[[T:[A-Za-z0-9_$.-]+]] = shape.of %[[Y]] : tensor<4xf32> -> !shape.shape<1>
// CHECK-NEXT: %[[B:[A-Za-z0-9_$.-]+]] = shape.broadcast %[[S]], %[[T]] : !shape.shape<2>, !shape.shape<1> -> !shape.shape<2>
// CHECK-NEXT: %[[F:[A-Za-z0-9_$.-]+]] = shape.from_dims %[[N]], %[[N]] : !shape.shape<2>
// CHECK-NEXT: %[[G:[A-Za-z0-9_$.-]+]] = shape.get %[[F]], 1 : !shape.shape<2>
// CHECK-NEXT: %[[E:[A-Za-z0-9_$.-]+]] = shape.num_elements %[[B]] : !shape.shape<2>
// CHECK-NEXT: func.return %[[B]], %[[G]], %[[E]] : !shape.shape<2>, index, index
// CHECK-NEXT: }
func.func @shapes(%x: tensor<?x4xf32>, %y: tensor<4xf32>, %n: index) -> (!shape.shape<2>, index, index) {
  %s = shape.of %x : tensor<?x4xf32> -> !shape.shape<2>
  %t = shape.of %y : tensor<4xf32> -> !shape.shape<1>
  %b = shape.broadcast %s, %t : !shape.shape<2>, !shape.shape<1> -> !shape.shape<2>
  %f = shape.from_dims %n, %n : !shape.shape<2>
  %g = shape.get %f, 1 : !shape.shape<2>
  %e = shape.num_elements %b : !shape.shape<2>
  func.return %b, %g, %e : !shape.shape<2>, index, index
}

// -----

// CHECK-LABEL: func.func @assert
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<?x4xf32>, %[[N:[A-Za-z0-9_$.-]+]]: index) {
// CHECK-NEXT: %[[D:[A-Za-z0-9_$.-]+]] = shape.dim %[[X]], 0 : tensor<?x4xf32>
// CHECK-NEXT: %[[OK:[A-Za-z0-9_$.-]+]] = arith.cmpi eq, %[[D]], %[[N]] : index
// CHECK-NEXT: shape.assert %[[OK]], "dim 0 of %[[X]] must equal %[[N]]"
// CHECK-NEXT: func.return
// CHECK-NEXT: }
func.func @assert(%x: tensor<?x4xf32>, %n: index) {
  %d = shape.dim %x, 0 : tensor<?x4xf32>
  %ok = arith.cmpi eq, %d, %n : index
  shape.assert %ok, "dim 0 of %x must equal %n"
  func.return
}

// -----

// CHECK-LABEL: func.func @bind
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<?x4xf32>, %[[N:[A-Za-z0-9_$.-]+]]: index) {
// CHECK-NEXT: %[[C4:[A-Za-z0-9_$.-]+]] = arith.constant 4 : index
// CHECK-NEXT: %[[S:[A-Za-z0-9_$.-]+]] = shape.from_dims %[[N]], %[[C4]] : !shape.shape<2>
// CHECK-NEXT: shape.bind %[[X]], %[[S]] : tensor<?x4xf32>, !shape.shape<2>
// CHECK-NEXT: shape.bind %[[X]], %[[S]] upper_bound : tensor<?x4xf32>, !shape.shape<2>
// CHECK-NEXT: func.return
// CHECK-NEXT: }
func.func @bind(%x: tensor<?x4xf32>, %n: index) {
  %c4 = arith.constant 4 : index
  %s = shape.from_dims %n, %c4 : !shape.shape<2>
  shape.bind %x, %s : tensor<?x4xf32>, !shape.shape<2>
  shape.bind %x, %s upper_bound : tensor<?x4xf32>, !shape.shape<2>
  func.return
}
