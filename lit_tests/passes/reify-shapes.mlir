// RUN: nimble-opt %s --split-input-file -p reify-shapes | filecheck %s

// CHECK-LABEL: func.func @chain_to_inputs
// CHECK-SAME: (%[[A:[A-Za-z0-9_$.-]+]]: tensor<?x4xf32>, %[[W:[A-Za-z0-9_$.-]+]]: tensor<8x4xf32>) -> tensor<?x8xf32> {
// CHECK-NEXT: %[[V0:[A-Za-z0-9_$.-]+]] = dynshape.dim %[[A]], 0 : tensor<?x4xf32>
// CHECK-NEXT: %[[V1:[A-Za-z0-9_$.-]+]] = arith.constant 8 : index
// CHECK-NEXT: %[[V2:[A-Za-z0-9_$.-]+]] = dynshape.from_dims %[[V0]], %[[V1]] : !dynshape.shape<2>
// CHECK-NEXT: %[[D:[A-Za-z0-9_$.-]+]] = graph.dense %[[A]], %[[W]] : (tensor<?x4xf32>, tensor<8x4xf32>) -> tensor<?x8xf32>
// CHECK-NEXT: dynshape.bind %[[D]], %[[V2]] : tensor<?x8xf32>, !dynshape.shape<2>
// CHECK-NEXT: %[[R:[A-Za-z0-9_$.-]+]] = graph.relu %[[D]] : tensor<?x8xf32> -> tensor<?x8xf32>
// CHECK-NEXT: dynshape.bind %[[R]], %[[V2]] : tensor<?x8xf32>, !dynshape.shape<2>
// CHECK-NEXT: %[[T:[A-Za-z0-9_$.-]+]] = graph.tanh %[[R]] : tensor<?x8xf32> -> tensor<?x8xf32>
// CHECK-NEXT: dynshape.bind %[[T]], %[[V2]] : tensor<?x8xf32>, !dynshape.shape<2>
// CHECK-NEXT: func.return %[[T]] : tensor<?x8xf32>
// CHECK-NEXT: }
func.func @chain_to_inputs(%a: tensor<?x4xf32>, %w: tensor<8x4xf32>) -> tensor<?x8xf32> {
  %d = graph.dense %a, %w : (tensor<?x4xf32>, tensor<8x4xf32>) -> tensor<?x8xf32>
  %r = graph.relu %d : tensor<?x8xf32> -> tensor<?x8xf32>
  %t = graph.tanh %r : tensor<?x8xf32> -> tensor<?x8xf32>
  func.return %t : tensor<?x8xf32>
}

// -----

// CHECK-LABEL: func.func @broadcast_check
// CHECK-SAME: (%[[A:[A-Za-z0-9_$.-]+]]: tensor<?x4xf32>, %[[B:[A-Za-z0-9_$.-]+]]: tensor<?x4xf32>) -> tensor<?x4xf32> {
// CHECK-NEXT: %[[V0:[A-Za-z0-9_$.-]+]] = dynshape.dim %[[A]], 0 : tensor<?x4xf32>
// CHECK-NEXT: %[[V1:[A-Za-z0-9_$.-]+]] = dynshape.dim %[[B]], 0 : tensor<?x4xf32>
// CHECK-NEXT: %[[V2:[A-Za-z0-9_$.-]+]] = arith.constant 1 : index
// CHECK-NEXT: %[[V3:[A-Za-z0-9_$.-]+]] = arith.cmpi eq, %[[V0]], %[[V2]] : index
// CHECK-NEXT: %[[V4:[A-Za-z0-9_$.-]+]] = arith.cmpi eq, %[[V1]], %[[V2]] : index
// CHECK-NEXT: %[[V5:[A-Za-z0-9_$.-]+]] = arith.cmpi eq, %[[V0]], %[[V1]] : index
// CHECK-NEXT: %[[V6:[A-Za-z0-9_$.-]+]] = arith.ori %[[V3]], %[[V4]] : i1
// CHECK-NEXT: %[[V7:[A-Za-z0-9_$.-]+]] = arith.ori %[[V6]], %[[V5]] : i1
// CHECK-NEXT: dynshape.assert %[[V7]], "dim 0 cannot be broadcast"
// CHECK-NEXT: %[[V8:[A-Za-z0-9_$.-]+]] = arith.select %[[V3]], %[[V1]], %[[V0]] : index
// CHECK-NEXT: %[[V9:[A-Za-z0-9_$.-]+]] = arith.constant 4 : index
// CHECK-NEXT: %[[V10:[A-Za-z0-9_$.-]+]] = dynshape.from_dims %[[V8]], %[[V9]] : !dynshape.shape<2>
// CHECK-NEXT: %[[C:[A-Za-z0-9_$.-]+]] = graph.add %[[A]], %[[B]] : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
// CHECK-NEXT: dynshape.bind %[[C]], %[[V10]] : tensor<?x4xf32>, !dynshape.shape<2>
// CHECK-NEXT: func.return %[[C]] : tensor<?x4xf32>
// CHECK-NEXT: }
func.func @broadcast_check(%a: tensor<?x4xf32>, %b: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %c = graph.add %a, %b : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  func.return %c : tensor<?x4xf32>
}

// -----

// CHECK-LABEL: func.func @arithmetic
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<1x3x?x?xf32>, %[[W:[A-Za-z0-9_$.-]+]]: tensor<8x3x3x3xf32>) -> tensor<1x8x?x?xf32> {
// CHECK-NEXT: %[[V0:[A-Za-z0-9_$.-]+]] = dynshape.dim %[[X]], 2 : tensor<1x3x?x?xf32>
// CHECK-NEXT: %[[V1:[A-Za-z0-9_$.-]+]] = dynshape.dim %[[X]], 3 : tensor<1x3x?x?xf32>
// CHECK-NEXT: %[[V2:[A-Za-z0-9_$.-]+]] = arith.constant 2 : index
// CHECK-NEXT: %[[V3:[A-Za-z0-9_$.-]+]] = arith.addi %[[V0]], %[[V2]] : index
// CHECK-NEXT: %[[V4:[A-Za-z0-9_$.-]+]] = arith.constant 3 : index
// CHECK-NEXT: %[[V5:[A-Za-z0-9_$.-]+]] = arith.subi %[[V3]], %[[V4]] : index
// CHECK-NEXT: %[[V6:[A-Za-z0-9_$.-]+]] = arith.floordivsi %[[V5]], %[[V2]] : index
// CHECK-NEXT: %[[V7:[A-Za-z0-9_$.-]+]] = arith.constant 1 : index
// CHECK-NEXT: %[[V8:[A-Za-z0-9_$.-]+]] = arith.addi %[[V6]], %[[V7]] : index
// CHECK-NEXT: %[[V9:[A-Za-z0-9_$.-]+]] = arith.addi %[[V1]], %[[V2]] : index
// CHECK-NEXT: %[[V10:[A-Za-z0-9_$.-]+]] = arith.subi %[[V9]], %[[V4]] : index
// CHECK-NEXT: %[[V11:[A-Za-z0-9_$.-]+]] = arith.floordivsi %[[V10]], %[[V2]] : index
// CHECK-NEXT: %[[V12:[A-Za-z0-9_$.-]+]] = arith.addi %[[V11]], %[[V7]] : index
// CHECK-NEXT: %[[V13:[A-Za-z0-9_$.-]+]] = arith.constant 8 : index
// CHECK-NEXT: %[[V14:[A-Za-z0-9_$.-]+]] = dynshape.from_dims %[[V7]], %[[V13]], %[[V8]], %[[V12]] : !dynshape.shape<4>
// CHECK-NEXT: %[[Y:[A-Za-z0-9_$.-]+]] = graph.conv2d %[[X]], %[[W]] {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x3x?x?xf32>, tensor<8x3x3x3xf32>) -> tensor<1x8x?x?xf32>
// CHECK-NEXT: dynshape.bind %[[Y]], %[[V14]] : tensor<1x8x?x?xf32>, !dynshape.shape<4>
// CHECK-NEXT: func.return %[[Y]] : tensor<1x8x?x?xf32>
// CHECK-NEXT: }
func.func @arithmetic(%x: tensor<1x3x?x?xf32>, %w: tensor<8x3x3x3xf32>) -> tensor<1x8x?x?xf32> {
  %y = graph.conv2d %x, %w {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x3x?x?xf32>, tensor<8x3x3x3xf32>) -> tensor<1x8x?x?xf32>
  func.return %y : tensor<1x8x?x?xf32>
}

// -----

// CHECK-LABEL: func.func @data_dependent
// CHECK-SAME: (%[[B:[A-Za-z0-9_$.-]+]]: tensor<?x4xf32>, %[[S:[A-Za-z0-9_$.-]+]]: tensor<?xf32>) -> tensor<?x4xf32> {
// CHECK-NEXT: %[[V0:[A-Za-z0-9_$.-]+]] = dynshape.dim %[[B]], 0 : tensor<?x4xf32>
// CHECK-NEXT: %[[V1:[A-Za-z0-9_$.-]+]] = dynshape.dim %[[S]], 0 : tensor<?xf32>
// CHECK-NEXT: %[[V2:[A-Za-z0-9_$.-]+]] = arith.cmpi eq, %[[V0]], %[[V1]] : index
// CHECK-NEXT: dynshape.assert %[[V2]], "boxes and scores differ in count"
// CHECK-NEXT: %[[V3:[A-Za-z0-9_$.-]+]] = arith.constant 10 : index
// CHECK-NEXT: %[[V4:[A-Za-z0-9_$.-]+]] = arith.minsi %[[V1]], %[[V3]] : index
// CHECK-NEXT: %[[V5:[A-Za-z0-9_$.-]+]] = dynshape.from_dims %[[V4]] : !dynshape.shape<1>
// CHECK-NEXT: %[[K:[A-Za-z0-9_$.-]+]] = graph.nms %[[B]], %[[S]] {iou_threshold = 5.000000e-01 : f64, max_output = 10 : i64} : (tensor<?x4xf32>, tensor<?xf32>) -> tensor<?xi64>
// CHECK-NEXT: dynshape.bind %[[K]], %[[V5]] upper_bound : tensor<?xi64>, !dynshape.shape<1>
// CHECK-NEXT: %[[V6:[A-Za-z0-9_$.-]+]] = dynshape.dim %[[K]], 0 : tensor<?xi64>
// CHECK-NEXT: %[[V7:[A-Za-z0-9_$.-]+]] = arith.constant 4 : index
// CHECK-NEXT: %[[V8:[A-Za-z0-9_$.-]+]] = dynshape.from_dims %[[V6]], %[[V7]] : !dynshape.shape<2>
// CHECK-NEXT: %[[G:[A-Za-z0-9_$.-]+]] = graph.gather %[[B]], %[[K]] : (tensor<?x4xf32>, tensor<?xi64>) -> tensor<?x4xf32>
// CHECK-NEXT: dynshape.bind %[[G]], %[[V8]] : tensor<?x4xf32>, !dynshape.shape<2>
// CHECK-NEXT: func.return %[[G]] : tensor<?x4xf32>
// CHECK-NEXT: }
func.func @data_dependent(%b: tensor<?x4xf32>, %s: tensor<?xf32>) -> tensor<?x4xf32> {
  %k = graph.nms %b, %s {iou_threshold = 5.0e-01 : f64, max_output = 10 : i64} : (tensor<?x4xf32>, tensor<?xf32>) -> tensor<?xi64>
  %g = graph.gather %b, %k {axis = 0 : i64} : (tensor<?x4xf32>, tensor<?xi64>) -> tensor<?x4xf32>
  func.return %g : tensor<?x4xf32>
}
