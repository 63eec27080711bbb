// RUN: nimble-opt %s --split-input-file | filecheck %s
// RUN: nimble-opt %s --split-input-file --print-op-generic | nimble-opt --split-input-file | filecheck %s

// CHECK-LABEL: func.func @dims
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<?x4xf32>) -> index {
// CHECK-NEXT: %[[D:[A-Za-z0-9_$.-]+]] = dynshape.dim %[[X]], 0 : tensor<?x4xf32>
// CHECK-NEXT: %[[N:[A-Za-z0-9_$.-]+]] = dynshape.dim %[[X]], 1 : tensor<?x4xf32>
// CHECK-NEXT: %[[P:[A-Za-z0-9_$.-]+]] = arith.muli %[[D]], %[[N]] : index
// CHECK-NEXT: func.return %[[P]] : index
// CHECK-NEXT: }
func.func @dims(%x: tensor<?x4xf32>) -> index {
  %d = dynshape.dim %x, 0 : tensor<?x4xf32>
  %n = dynshape.dim %x, 1 : tensor<?x4xf32>
  %p = arith.muli %d, %n : index
  func.return %p : index
}

// -----

// CHECK-LABEL: func.func @shapes
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<?x4xf32>, %[[Y:[A-Za-z0-9_$.-]+]]: tensor<4xf32>, %[[N:[A-Za-z0-9_$.-]+]]: index) -> (!dynshape.shape<2>, index, index) {
// CHECK-NEXT: %[[S:[A-Za-z0-9_$.-]+]] = dynshape.of %[[X]] : tensor<?x4xf32> -> !dynshape.shape<2>
// CHECK-NEXT: %[[T:[A-Za-z0-9_$.-]+]] = dynshape.of %[[Y]] : tensor<4xf32> -> !dynshape.shape<1>
// CHECK-NEXT: %[[B:[A-Za-z0-9_$.-]+]] = dynshape.broadcast %[[S]], %[[T]] : !dynshape.shape<2>, !dynshape.shape<1> -> !dynshape.shape<2>
// CHECK-NEXT: %[[F:[A-Za-z0-9_$.-]+]] = dynshape.from_dims %[[N]], %[[N]] : !dynshape.shape<2>
// CHECK-NEXT: %[[G:[A-Za-z0-9_$.-]+]] = dynshape.get %[[F]], 1 : !dynshape.shape<2>
// CHECK-NEXT: %[[E:[A-Za-z0-9_$.-]+]] = dynshape.num_elements %[[B]] : !dynshape.shape<2>
// CHECK-NEXT: func.return %[[B]], %[[G]], %[[E]] : !dynshape.shape<2>, index, index
// CHECK-NEXT: }
func.func @shapes(%x: tensor<?x4xf32>, %y: tensor<4xf32>, %n: index) -> (!dynshape.shape<2>, index, index) {
  %s = dynshape.of %x : tensor<?x4xf32> -> !dynshape.shape<2>
  %t = dynshape.of %y : tensor<4xf32> -> !dynshape.shape<1>
  %b = dynshape.broadcast %s, %t : !dynshape.shape<2>, !dynshape.shape<1> -> !dynshape.shape<2>
  %f = dynshape.from_dims %n, %n : !dynshape.shape<2>
  %g = dynshape.get %f, 1 : !dynshape.shape<2>
  %e = dynshape.num_elements %b : !dynshape.shape<2>
  func.return %b, %g, %e : !dynshape.shape<2>, index, index
}

// -----

// CHECK-LABEL: func.func @assert
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<?x4xf32>, %[[N:[A-Za-z0-9_$.-]+]]: index) {
// CHECK-NEXT: %[[D:[A-Za-z0-9_$.-]+]] = dynshape.dim %[[X]], 0 : tensor<?x4xf32>
// CHECK-NEXT: %[[OK:[A-Za-z0-9_$.-]+]] = arith.cmpi eq, %[[D]], %[[N]] : index
// CHECK-NEXT: dynshape.assert %[[OK]], "dim 0 of %[[X]] must equal %[[N]]"
// CHECK-NEXT: func.return
// CHECK-NEXT: }
func.func @assert(%x: tensor<?x4xf32>, %n: index) {
  %d = dynshape.dim %x, 0 : tensor<?x4xf32>
  %ok = arith.cmpi eq, %d, %n : index
  dynshape.assert %ok, "dim 0 of %x must equal %n"
  func.return
}

// -----

// CHECK-LABEL: func.func @bind
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<?x4xf32>, %[[N:[A-Za-z0-9_$.-]+]]: index) {
// CHECK-NEXT: %[[C4:[A-Za-z0-9_$.-]+]] = arith.constant 4 : index
// CHECK-NEXT: %[[S:[A-Za-z0-9_$.-]+]] = dynshape.from_dims %[[N]], %[[C4]] : !dynshape.shape<2>
// CHECK-NEXT: dynshape.bind %[[X]], %[[S]] : tensor<?x4xf32>, !dynshape.shape<2>
// CHECK-NEXT: dynshape.bind %[[X]], %[[S]] upper_bound : tensor<?x4xf32>, !dynshape.shape<2>
// CHECK-NEXT: func.return
// CHECK-NEXT: }
func.func @bind(%x: tensor<?x4xf32>, %n: index) {
  %c4 = arith.constant 4 : index
  %s = dynshape.from_dims %n, %c4 : !dynshape.shape<2>
  dynshape.bind %x, %s : tensor<?x4xf32>, !dynshape.shape<2>
  dynshape.bind %x, %s upper_bound : tensor<?x4xf32>, !dynshape.shape<2>
  func.return
}
