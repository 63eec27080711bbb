// RUN: nimble-opt %s --split-input-file -p canonicalize | filecheck %s

// CHECK-LABEL: func.func @static_dim
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<?x4xf32>) -> index {
// CHECK-NEXT: %[[D:[A-Za-z0-9_$.-]+]] = arith.constant 4 : index
// CHECK-NEXT: func.return %[[D]] : index
// CHECK-NEXT: }
func.func @static_dim(%x: tensor<?x4xf32>) -> index {
  %d = dynshape.dim %x, 1 : tensor<?x4xf32>
  func.return %d : index
}

// -----

// CHECK-LABEL: func.func @get_of_known
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<?x4xf32>, %[[N:[A-Za-z0-9_$.-]+]]: index) -> (index, index) {
// CHECK-NEXT: %[[A:[A-Za-z0-9_$.-]+]] = dynshape.dim %[[X]], 0 : tensor<?x4xf32>
// CHECK-NEXT: func.return %[[A]], %[[N]] : index, index
// CHECK-NEXT: }
func.func @get_of_known(%x: tensor<?x4xf32>, %n: index) -> (index, index) {
  %s = dynshape.of %x : tensor<?x4xf32> -> !dynshape.shape<2>
  %a = dynshape.get %s, 0 : !dynshape.shape<2>
  %f = dynshape.from_dims %n, %a : !dynshape.shape<2>
  %b = dynshape.get %f, 0 : !dynshape.shape<2>
  func.return %a, %b : index, index
}

// -----

// CHECK-LABEL: func.func @true_assert
// CHECK-SAME: () {
// CHECK-NEXT: func.return
// CHECK-NEXT: }
func.func @true_assert() {
  %t = arith.constant true
  dynshape.assert %t, "always holds"
  func.return
}

// -----

// CHECK-LABEL: func.func @named_dim
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<?x?xf32, #nimble.dims<[batch, seq]>>, %[[C:[A-Za-z0-9_$.-]+]]: tensor<f32>) -> (tensor<?x?xf32, #nimble.dims<[batch, seq]>>, index, index) {
// CHECK-NEXT: %[[Y:[A-Za-z0-9_$.-]+]] = graph.mul %[[X]], %[[C]] : (tensor<?x?xf32, #nimble.dims<[batch, seq]>>, tensor<f32>) -> tensor<?x?xf32, #nimble.dims<[batch, seq]>>
// CHECK-NEXT: %[[N:[A-Za-z0-9_$.-]+]] = dynshape.dim %[[X]], 1 : tensor<?x?xf32, #nimble.dims<[batch, seq]>>
// CHECK-NEXT: %[[M:[A-Za-z0-9_$.-]+]] = dynshape.dim %[[X]], 1 : tensor<?x?xf32, #nimble.dims<[batch, seq]>>
// CHECK-NEXT: func.return %[[Y]], %[[N]], %[[M]] : tensor<?x?xf32, #nimble.dims<[batch, seq]>>, index, index
// CHECK-NEXT: }
// A dim that `#nimble.dims` names is read from the first parameter with that name: the
// scaled tensor is then not kept for its length (the parameter's own dim stays).
func.func @named_dim(%x: tensor<?x?xf32, #nimble.dims<[batch, seq]>>, %c: tensor<f32>) -> (tensor<?x?xf32, #nimble.dims<[batch, seq]>>, index, index) {
  %y = graph.mul %x, %c : (tensor<?x?xf32, #nimble.dims<[batch, seq]>>, tensor<f32>) -> tensor<?x?xf32, #nimble.dims<[batch, seq]>>
  %n = dynshape.dim %y, 1 : tensor<?x?xf32, #nimble.dims<[batch, seq]>>
  %m = dynshape.dim %x, 1 : tensor<?x?xf32, #nimble.dims<[batch, seq]>>
  func.return %y, %n, %m : tensor<?x?xf32, #nimble.dims<[batch, seq]>>, index, index
}
