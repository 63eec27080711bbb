// RUN: nimble-opt %s --split-input-file -p infer-shapes | filecheck %s

// CHECK-LABEL: func.func @heads
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<?x?x768xf32, #nimble.dims<[batch, seq, 768]>>) -> tensor<?x?x12x64xf32, #nimble.dims<[batch, seq, 12, 64]>> {
// CHECK-NEXT: %[[N:[A-Za-z0-9_$.-]+]] = dynshape.dim %[[X]], 0 : tensor<?x?x768xf32, #nimble.dims<[batch, seq, 768]>>
// CHECK-NEXT: %[[S:[A-Za-z0-9_$.-]+]] = dynshape.dim %[[X]], 1 : tensor<?x?x768xf32, #nimble.dims<[batch, seq, 768]>>
// CHECK-NEXT: %[[C12:[A-Za-z0-9_$.-]+]] = arith.constant 12 : index
// CHECK-NEXT: %[[C64:[A-Za-z0-9_$.-]+]] = arith.constant 64 : index
// CHECK-NEXT: %[[SHAPE:[A-Za-z0-9_$.-]+]] = dynshape.from_dims %[[N]], %[[S]], %[[C12]], %[[C64]] : !dynshape.shape<4>
// CHECK-NEXT: %[[R:[A-Za-z0-9_$.-]+]] = graph.dynamic_reshape %[[X]], %[[SHAPE]] : (tensor<?x?x768xf32, #nimble.dims<[batch, seq, 768]>>, !dynshape.shape<4>) -> tensor<?x?x12x64xf32, #nimble.dims<[batch, seq, 12, 64]>>
// CHECK-NEXT: func.return %[[R]] : tensor<?x?x12x64xf32, #nimble.dims<[batch, seq, 12, 64]>>
// CHECK-NEXT: }
// A reshape to dims computed from the input's dims keeps their names.
func.func @heads(%x: tensor<?x?x768xf32, #nimble.dims<[batch, seq, 768]>>) -> tensor<?x?x12x64xf32> {
  %n = dynshape.dim %x, 0 : tensor<?x?x768xf32, #nimble.dims<[batch, seq, 768]>>
  %s = dynshape.dim %x, 1 : tensor<?x?x768xf32, #nimble.dims<[batch, seq, 768]>>
  %c12 = arith.constant 12 : index
  %c64 = arith.constant 64 : index
  %shape = dynshape.from_dims %n, %s, %c12, %c64 : !dynshape.shape<4>
  %r = graph.dynamic_reshape %x, %shape : (tensor<?x?x768xf32, #nimble.dims<[batch, seq, 768]>>, !dynshape.shape<4>) -> tensor<?x?x12x64xf32>
  func.return %r : tensor<?x?x12x64xf32>
}

// -----

// CHECK-LABEL: func.func @flatten
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<?x?x64xf32, #nimble.dims<[batch, seq, 64]>>) -> tensor<?x64xf32, #nimble.dims<[batch * seq, 64]>> {
// CHECK-NEXT: %[[N:[A-Za-z0-9_$.-]+]] = dynshape.dim %[[X]], 0 : tensor<?x?x64xf32, #nimble.dims<[batch, seq, 64]>>
// CHECK-NEXT: %[[S:[A-Za-z0-9_$.-]+]] = dynshape.dim %[[X]], 1 : tensor<?x?x64xf32, #nimble.dims<[batch, seq, 64]>>
// CHECK-NEXT: %[[ROWS:[A-Za-z0-9_$.-]+]] = arith.muli %[[N]], %[[S]] : index
// CHECK-NEXT: %[[C64:[A-Za-z0-9_$.-]+]] = arith.constant 64 : index
// CHECK-NEXT: %[[SHAPE:[A-Za-z0-9_$.-]+]] = dynshape.from_dims %[[ROWS]], %[[C64]] : !dynshape.shape<2>
// CHECK-NEXT: %[[R:[A-Za-z0-9_$.-]+]] = graph.dynamic_reshape %[[X]], %[[SHAPE]] : (tensor<?x?x64xf32, #nimble.dims<[batch, seq, 64]>>, !dynshape.shape<2>) -> tensor<?x64xf32, #nimble.dims<[batch * seq, 64]>>
// CHECK-NEXT: func.return %[[R]] : tensor<?x64xf32, #nimble.dims<[batch * seq, 64]>>
// CHECK-NEXT: }
// Index arithmetic on dims is arithmetic on their expressions.
func.func @flatten(%x: tensor<?x?x64xf32, #nimble.dims<[batch, seq, 64]>>) -> tensor<?x64xf32> {
  %n = dynshape.dim %x, 0 : tensor<?x?x64xf32, #nimble.dims<[batch, seq, 64]>>
  %s = dynshape.dim %x, 1 : tensor<?x?x64xf32, #nimble.dims<[batch, seq, 64]>>
  %rows = arith.muli %n, %s : index
  %c64 = arith.constant 64 : index
  %shape = dynshape.from_dims %rows, %c64 : !dynshape.shape<2>
  %r = graph.dynamic_reshape %x, %shape : (tensor<?x?x64xf32, #nimble.dims<[batch, seq, 64]>>, !dynshape.shape<2>) -> tensor<?x64xf32>
  func.return %r : tensor<?x64xf32>
}

// -----

// CHECK-LABEL: func.func @concat
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<?x?xf32, #nimble.dims<[batch, seq]>>, %[[Y:[A-Za-z0-9_$.-]+]]: tensor<?x?xf32, #nimble.dims<[batch, seq]>>) -> (tensor<?x?xf32, #nimble.dims<[batch, seq * 2]>>, tensor<?x?xf32, #nimble.dims<[batch, seq]>>) {
// CHECK-NEXT: %[[C:[A-Za-z0-9_$.-]+]] = graph.concat %[[X]], %[[Y]] {axis = 1 : i64} : (tensor<?x?xf32, #nimble.dims<[batch, seq]>>, tensor<?x?xf32, #nimble.dims<[batch, seq]>>) -> tensor<?x?xf32, #nimble.dims<[batch, seq * 2]>>
// CHECK-NEXT: %[[A:[A-Za-z0-9_$.-]+]] = graph.add %[[X]], %[[Y]] : (tensor<?x?xf32, #nimble.dims<[batch, seq]>>, tensor<?x?xf32, #nimble.dims<[batch, seq]>>) -> tensor<?x?xf32, #nimble.dims<[batch, seq]>>
// CHECK-NEXT: func.return %[[C]], %[[A]] : tensor<?x?xf32, #nimble.dims<[batch, seq * 2]>>, tensor<?x?xf32, #nimble.dims<[batch, seq]>>
// CHECK-NEXT: }
// Concat adds the dims along its axis; equal names meet in elementwise ops.
func.func @concat(%x: tensor<?x?xf32, #nimble.dims<[batch, seq]>>, %y: tensor<?x?xf32, #nimble.dims<[batch, seq]>>) -> (tensor<?x?xf32>, tensor<?x?xf32>) {
  %c = graph.concat %x, %y {axis = 1 : i64} : (tensor<?x?xf32, #nimble.dims<[batch, seq]>>, tensor<?x?xf32, #nimble.dims<[batch, seq]>>) -> tensor<?x?xf32>
  %a = graph.add %x, %y : (tensor<?x?xf32, #nimble.dims<[batch, seq]>>, tensor<?x?xf32, #nimble.dims<[batch, seq]>>) -> tensor<?x?xf32>
  func.return %c, %a : tensor<?x?xf32>, tensor<?x?xf32>
}

// -----

// CHECK-LABEL: func.func @broadcast
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<?x4xf32, #nimble.dims<[seq, 4]>>, %[[ONE:[A-Za-z0-9_$.-]+]]: tensor<1x4xf32>, %[[B:[A-Za-z0-9_$.-]+]]: tensor<?x1xf32, #nimble.dims<[batch, 1]>>, %[[U:[A-Za-z0-9_$.-]+]]: tensor<?x4xf32>) -> (tensor<?x4xf32, #nimble.dims<[seq, 4]>>, tensor<?x4xf32>, tensor<?x4xf32>) {
// CHECK-NEXT: %[[A:[A-Za-z0-9_$.-]+]] = graph.add %[[X]], %[[ONE]] : (tensor<?x4xf32, #nimble.dims<[seq, 4]>>, tensor<1x4xf32>) -> tensor<?x4xf32, #nimble.dims<[seq, 4]>>
// CHECK-NEXT: %[[C:[A-Za-z0-9_$.-]+]] = graph.add %[[X]], %[[B]] : (tensor<?x4xf32, #nimble.dims<[seq, 4]>>, tensor<?x1xf32, #nimble.dims<[batch, 1]>>) -> tensor<?x4xf32>
// CHECK-NEXT: %[[D:[A-Za-z0-9_$.-]+]] = graph.add %[[X]], %[[U]] : (tensor<?x4xf32, #nimble.dims<[seq, 4]>>, tensor<?x4xf32>) -> tensor<?x4xf32>
// CHECK-NEXT: func.return %[[A]], %[[C]], %[[D]] : tensor<?x4xf32, #nimble.dims<[seq, 4]>>, tensor<?x4xf32>, tensor<?x4xf32>
// CHECK-NEXT: }
// Broadcasting: a 1 takes the other dim; a name against a number other than 1 is that
// number; two different names, or a name and an anonymous `?`, may be 1 at run time:
// no name.
func.func @broadcast(%x: tensor<?x4xf32, #nimble.dims<[seq, 4]>>, %one: tensor<1x4xf32>, %b: tensor<?x1xf32, #nimble.dims<[batch, 1]>>, %u: tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>) {
  %a = graph.add %x, %one : (tensor<?x4xf32, #nimble.dims<[seq, 4]>>, tensor<1x4xf32>) -> tensor<?x4xf32>
  %c = graph.add %x, %b : (tensor<?x4xf32, #nimble.dims<[seq, 4]>>, tensor<?x1xf32, #nimble.dims<[batch, 1]>>) -> tensor<?x4xf32>
  %d = graph.add %x, %u : (tensor<?x4xf32, #nimble.dims<[seq, 4]>>, tensor<?x4xf32>) -> tensor<?x4xf32>
  func.return %a, %c, %d : tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>
}

// -----

// CHECK-LABEL: func.func @slices
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<?x4xf32, #nimble.dims<[seq, 4]>>) -> (tensor<?x4xf32, #nimble.dims<[seq, 4]>>, tensor<?x4xf32, #nimble.dims<[max(0, seq - 1), 4]>>) {
// CHECK-NEXT: %[[A:[A-Za-z0-9_$.-]+]] = graph.slice %[[X]][:, :] : tensor<?x4xf32, #nimble.dims<[seq, 4]>> -> tensor<?x4xf32, #nimble.dims<[seq, 4]>>
// CHECK-NEXT: %[[B:[A-Za-z0-9_$.-]+]] = graph.slice %[[X]][:-1, :] : tensor<?x4xf32, #nimble.dims<[seq, 4]>> -> tensor<?x4xf32, #nimble.dims<[max(0, seq - 1), 4]>>
// CHECK-NEXT: func.return %[[A]], %[[B]] : tensor<?x4xf32, #nimble.dims<[seq, 4]>>, tensor<?x4xf32, #nimble.dims<[max(0, seq - 1), 4]>>
// CHECK-NEXT: }
// Slices: dims are never negative, so `seq[0:]` is seq and `seq[:-1]` is max(0, seq - 1).
func.func @slices(%x: tensor<?x4xf32, #nimble.dims<[seq, 4]>>) -> (tensor<?x4xf32>, tensor<?x4xf32>) {
  %a = graph.slice %x[:, :] : tensor<?x4xf32, #nimble.dims<[seq, 4]>> -> tensor<?x4xf32>
  %b = graph.slice %x[0:-1, :] : tensor<?x4xf32, #nimble.dims<[seq, 4]>> -> tensor<?x4xf32>
  func.return %a, %b : tensor<?x4xf32>, tensor<?x4xf32>
}
