// RUN: nimble-opt %s --split-input-file -p infer-shapes | filecheck %s

// CHECK-LABEL: func.func @positions
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<?x4xf32, #nimble.dims<[seq, 4]>>, %[[TABLE:[A-Za-z0-9_$.-]+]]: tensor<512x4xf32>) -> tensor<?x4xf32, #nimble.dims<[seq, 4]>> {
// CHECK-NEXT: %[[N:[A-Za-z0-9_$.-]+]] = dynshape.dim %[[X]], 0 : tensor<?x4xf32, #nimble.dims<[seq, 4]>>
// CHECK-NEXT: %[[P:[A-Za-z0-9_$.-]+]] = graph.slice %[[TABLE]][:%[[N]], :] : tensor<512x4xf32> -> tensor<?x4xf32, #nimble.dims<[min(512, seq), 4]>>
// CHECK-NEXT: %[[Y:[A-Za-z0-9_$.-]+]] = graph.add %[[X]], %[[P]] : (tensor<?x4xf32, #nimble.dims<[seq, 4]>>, tensor<?x4xf32, #nimble.dims<[min(512, seq), 4]>>) -> tensor<?x4xf32, #nimble.dims<[seq, 4]>>
// CHECK-NEXT: func.return %[[Y]] : tensor<?x4xf32, #nimble.dims<[seq, 4]>>
// CHECK-NEXT: }

// Slicing the first `seq` positions of a table of 512 gives min(512, seq) of them; added
// to a `seq`-long tensor, the sum is `seq` long (they are 1 together, else equal).
func.func @positions(%x: tensor<?x4xf32, #nimble.dims<[seq, 4]>>, %table: tensor<512x4xf32>) -> tensor<?x4xf32> {
  %n = dynshape.dim %x, 0 : tensor<?x4xf32, #nimble.dims<[seq, 4]>>
  %p = graph.slice %table[0:%n, :] : tensor<512x4xf32> -> tensor<?x4xf32>
  %y = graph.add %x, %p : (tensor<?x4xf32, #nimble.dims<[seq, 4]>>, tensor<?x4xf32>) -> tensor<?x4xf32>
  func.return %y : tensor<?x4xf32>
}

// -----

// CHECK-LABEL: func.func @inferred_heads
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<?x?x64xf32, #nimble.dims<[batch, seq, 64]>>) -> tensor<?x?x4x16xf32, #nimble.dims<[batch, seq, 4, 16]>> {
// CHECK-NEXT: %[[C16:[A-Za-z0-9_$.-]+]] = arith.constant 16 : index
// CHECK-NEXT: %[[C64:[A-Za-z0-9_$.-]+]] = arith.constant 64 : index
// CHECK-NEXT: %[[B:[A-Za-z0-9_$.-]+]] = dynshape.dim %[[X]], 0 : tensor<?x?x64xf32, #nimble.dims<[batch, seq, 64]>>
// CHECK-NEXT: %[[S:[A-Za-z0-9_$.-]+]] = dynshape.dim %[[X]], 1 : tensor<?x?x64xf32, #nimble.dims<[batch, seq, 64]>>
// CHECK-NEXT: %[[ALL:[A-Za-z0-9_$.-]+]] = arith.muli %[[B]], %[[C64]] : index
// CHECK-NEXT: %[[COUNT:[A-Za-z0-9_$.-]+]] = arith.muli %[[ALL]], %[[S]] : index
// CHECK-NEXT: %[[KNOWN:[A-Za-z0-9_$.-]+]] = arith.muli %[[B]], %[[C16]] : index
// CHECK-NEXT: %[[KNOWN2:[A-Za-z0-9_$.-]+]] = arith.muli %[[KNOWN]], %[[S]] : index
// CHECK-NEXT: %[[HEADS:[A-Za-z0-9_$.-]+]] = arith.divsi %[[COUNT]], %[[KNOWN2]] : index
// CHECK-NEXT: %[[SHAPE:[A-Za-z0-9_$.-]+]] = dynshape.from_dims %[[B]], %[[S]], %[[HEADS]], %[[C16]] : !dynshape.shape<4>
// CHECK-NEXT: %[[R:[A-Za-z0-9_$.-]+]] = graph.dynamic_reshape %[[X]], %[[SHAPE]] : (tensor<?x?x64xf32, #nimble.dims<[batch, seq, 64]>>, !dynshape.shape<4>) -> tensor<?x?x4x16xf32, #nimble.dims<[batch, seq, 4, 16]>>
// CHECK-NEXT: func.return %[[R]] : tensor<?x?x4x16xf32, #nimble.dims<[batch, seq, 4, 16]>>
// CHECK-NEXT: }
// An ONNX reshape's -1, computed from the element count over the other target dims
// (truncating division of dims), cancels to the number it is.
func.func @inferred_heads(%x: tensor<?x?x64xf32, #nimble.dims<[batch, seq, 64]>>) -> tensor<?x?x?x16xf32> {
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %b = dynshape.dim %x, 0 : tensor<?x?x64xf32, #nimble.dims<[batch, seq, 64]>>
  %s = dynshape.dim %x, 1 : tensor<?x?x64xf32, #nimble.dims<[batch, seq, 64]>>
  %all = arith.muli %b, %c64 : index
  %count = arith.muli %all, %s : index
  %known = arith.muli %b, %c16 : index
  %known2 = arith.muli %known, %s : index
  %heads = arith.divsi %count, %known2 : index
  %shape = dynshape.from_dims %b, %s, %heads, %c16 : !dynshape.shape<4>
  %r = graph.dynamic_reshape %x, %shape : (tensor<?x?x64xf32, #nimble.dims<[batch, seq, 64]>>, !dynshape.shape<4>) -> tensor<?x?x?x16xf32>
  func.return %r : tensor<?x?x?x16xf32>
}
