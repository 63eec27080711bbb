// RUN: nimble-opt %s --split-input-file -p matmul-to-dense | filecheck %s

// A product by a constant matrix: a dense layer over the transposed constant.
// CHECK-LABEL: func.func @constant_weight
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<?x2xf32>) -> tensor<?x3xf32> {
// CHECK-NEXT: %[[V0:[A-Za-z0-9_$.-]+]] = graph.constant dense<{{\[\[}}1.000000e+00, 4.000000e+00], [2.000000e+00, 5.000000e+00], [3.000000e+00, 6.000000e+00]]> : tensor<3x2xf32>
// CHECK-NEXT: %[[Y:[A-Za-z0-9_$.-]+]] = graph.dense %[[X]], %[[V0]] : (tensor<?x2xf32>, tensor<3x2xf32>) -> tensor<?x3xf32>
// CHECK-NEXT: func.return %[[Y]] : tensor<?x3xf32>
// CHECK-NEXT: }
func.func @constant_weight(%x: tensor<?x2xf32>) -> tensor<?x3xf32> {
  %w = graph.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %y = graph.matmul %x, %w : (tensor<?x2xf32>, tensor<2x3xf32>) -> tensor<?x3xf32>
  func.return %y : tensor<?x3xf32>
}

// -----

// Batched rows: dense keeps the leading dims; a vector input works alike.
// CHECK-LABEL: func.func @rank3_and_vector
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<?x?x2xf32>, %[[V:[A-Za-z0-9_$.-]+]]: tensor<2xf32>) -> (tensor<?x?x3xf32>, tensor<3xf32>) {
// CHECK-NEXT: %[[V0:[A-Za-z0-9_$.-]+]] = graph.constant dense<{{\[\[}}1.000000e+00, 4.000000e+00], [2.000000e+00, 5.000000e+00], [3.000000e+00, 6.000000e+00]]> : tensor<3x2xf32>
// CHECK-NEXT: %[[Y:[A-Za-z0-9_$.-]+]] = graph.dense %[[X]], %[[V0]] : (tensor<?x?x2xf32>, tensor<3x2xf32>) -> tensor<?x?x3xf32>
// CHECK-NEXT: %[[Z:[A-Za-z0-9_$.-]+]] = graph.dense %[[V]], %[[V0]] : (tensor<2xf32>, tensor<3x2xf32>) -> tensor<3xf32>
// CHECK-NEXT: func.return %[[Y]], %[[Z]] : tensor<?x?x3xf32>, tensor<3xf32>
// CHECK-NEXT: }
func.func @rank3_and_vector(%x: tensor<?x?x2xf32>, %v: tensor<2xf32>) -> (tensor<?x?x3xf32>, tensor<3xf32>) {
  %w = graph.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %y = graph.matmul %x, %w : (tensor<?x?x2xf32>, tensor<2x3xf32>) -> tensor<?x?x3xf32>
  %z = graph.matmul %v, %w : (tensor<2xf32>, tensor<2x3xf32>) -> tensor<3xf32>
  func.return %y, %z : tensor<?x?x3xf32>, tensor<3xf32>
}

// -----

// The transpose of a constant: the dense layer reads the constant itself.
// CHECK-LABEL: func.func @transposed_constant
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<?x3xf32>) -> tensor<?x2xf32> {
// CHECK-NEXT: %[[W:[A-Za-z0-9_$.-]+]] = graph.constant dense<{{\[\[}}1.000000e+00, 2.000000e+00, 3.000000e+00], [4.000000e+00, 5.000000e+00, 6.000000e+00]]> : tensor<2x3xf32>
// CHECK-NEXT: %[[Y:[A-Za-z0-9_$.-]+]] = graph.dense %[[X]], %[[W]] : (tensor<?x3xf32>, tensor<2x3xf32>) -> tensor<?x2xf32>
// CHECK-NEXT: func.return %[[Y]] : tensor<?x2xf32>
// CHECK-NEXT: }
func.func @transposed_constant(%x: tensor<?x3xf32>) -> tensor<?x2xf32> {
  %w = graph.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %t = graph.transpose %w [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
  %y = graph.matmul %x, %t : (tensor<?x3xf32>, tensor<3x2xf32>) -> tensor<?x2xf32>
  func.return %y : tensor<?x2xf32>
}

// -----

// A constant another op reads too stays; a parameter, an integer matrix and a batched
// constant are left as they are.
// CHECK-LABEL: func.func @left_alone
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<?x2xf32>, %[[P:[A-Za-z0-9_$.-]+]]: tensor<2x3xf32>, %[[I:[A-Za-z0-9_$.-]+]]: tensor<?x2xi32>, %[[B:[A-Za-z0-9_$.-]+]]: tensor<?x2x2xf32>) -> (tensor<?x3xf32>, tensor<2x3xf32>, tensor<?x3xf32>, tensor<?x3xi32>, tensor<?x2x3xf32>) {
// CHECK-NEXT: %[[W:[A-Za-z0-9_$.-]+]] = graph.constant dense<{{\[\[}}1.000000e+00, 2.000000e+00, 3.000000e+00], [4.000000e+00, 5.000000e+00, 6.000000e+00]]> : tensor<2x3xf32>
// CHECK-NEXT: %[[V0:[A-Za-z0-9_$.-]+]] = graph.constant dense<{{\[\[}}1.000000e+00, 4.000000e+00], [2.000000e+00, 5.000000e+00], [3.000000e+00, 6.000000e+00]]> : tensor<3x2xf32>
// CHECK-NEXT: %[[WI:[A-Za-z0-9_$.-]+]] = graph.constant dense<{{\[\[}}1, 2, 3], [4, 5, 6]]> : tensor<2x3xi32>
// CHECK-NEXT: %[[WB:[A-Za-z0-9_$.-]+]] = graph.constant dense<1.000000e+00> : tensor<2x2x3xf32>
// CHECK-NEXT: %[[Y:[A-Za-z0-9_$.-]+]] = graph.dense %[[X]], %[[V0]] : (tensor<?x2xf32>, tensor<3x2xf32>) -> tensor<?x3xf32>
// CHECK-NEXT: %[[S:[A-Za-z0-9_$.-]+]] = graph.add %[[W]], %[[P]] : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %[[Z:[A-Za-z0-9_$.-]+]] = graph.matmul %[[X]], %[[P]] : (tensor<?x2xf32>, tensor<2x3xf32>) -> tensor<?x3xf32>
// CHECK-NEXT: %[[N:[A-Za-z0-9_$.-]+]] = graph.matmul %[[I]], %[[WI]] : (tensor<?x2xi32>, tensor<2x3xi32>) -> tensor<?x3xi32>
// CHECK-NEXT: %[[C:[A-Za-z0-9_$.-]+]] = graph.matmul %[[B]], %[[WB]] : (tensor<?x2x2xf32>, tensor<2x2x3xf32>) -> tensor<?x2x3xf32>
// CHECK-NEXT: func.return %[[Y]], %[[S]], %[[Z]], %[[N]], %[[C]] : tensor<?x3xf32>, tensor<2x3xf32>, tensor<?x3xf32>, tensor<?x3xi32>, tensor<?x2x3xf32>
// CHECK-NEXT: }
func.func @left_alone(%x: tensor<?x2xf32>, %p: tensor<2x3xf32>, %i: tensor<?x2xi32>, %b: tensor<?x2x2xf32>) -> (tensor<?x3xf32>, tensor<2x3xf32>, tensor<?x3xf32>, tensor<?x3xi32>, tensor<?x2x3xf32>) {
  %w = graph.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %wi = graph.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi32>
  %wb = graph.constant dense<1.0> : tensor<2x2x3xf32>
  %y = graph.matmul %x, %w : (tensor<?x2xf32>, tensor<2x3xf32>) -> tensor<?x3xf32>
  %s = graph.add %w, %p : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %z = graph.matmul %x, %p : (tensor<?x2xf32>, tensor<2x3xf32>) -> tensor<?x3xf32>
  %n = graph.matmul %i, %wi : (tensor<?x2xi32>, tensor<2x3xi32>) -> tensor<?x3xi32>
  %c = graph.matmul %b, %wb : (tensor<?x2x2xf32>, tensor<2x2x3xf32>) -> tensor<?x2x3xf32>
  func.return %y, %s, %z, %n, %c : tensor<?x3xf32>, tensor<2x3xf32>, tensor<?x3xf32>, tensor<?x3xi32>, tensor<?x2x3xf32>
}
