// RUN: nimble-opt %s --split-input-file -p lower-graph-to-loops | filecheck %s

// CHECK-LABEL: func.func @broadcast_add
// CHECK-SAME: (%[[A:[A-Za-z0-9_$.-]+]]: tensor<?x4xf32>, %[[B:[A-Za-z0-9_$.-]+]]: tensor<4xf32>) -> tensor<?x4xf32> {
// CHECK-NEXT: %[[C:[A-Za-z0-9_$.-]+]] = graph.fused (%[[A_1:[A-Za-z0-9_$.-]+]] = %[[A]], %[[B_1:[A-Za-z0-9_$.-]+]] = %[[B]]) : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32> {
// CHECK-NEXT: %[[C_1:[A-Za-z0-9_$.-]+]] = graph.add %[[A_1]], %[[B_1]] : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
// CHECK-NEXT: graph.yield %[[C_1]] : tensor<?x4xf32>
// CHECK-NEXT: } attributes {nimble.kernel = @broadcast_add_add_0}
// CHECK-NEXT: func.return %[[C]] : tensor<?x4xf32>
// CHECK-NEXT: }
// CHECK-LABEL: loop.kernel @broadcast_add_add_0
// CHECK-SAME: (%[[V0:[A-Za-z0-9_$.-]+]]: memref<?x4xf32>, %[[V1:[A-Za-z0-9_$.-]+]]: memref<4xf32>, %[[V2:[A-Za-z0-9_$.-]+]]: memref<?x4xf32>) {
// CHECK-NEXT: %[[V3:[A-Za-z0-9_$.-]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[V4:[A-Za-z0-9_$.-]+]] = memref.dim %[[V0]], %[[V3]] : memref<?x4xf32>
// CHECK-NEXT: %[[V5:[A-Za-z0-9_$.-]+]] = arith.constant 1 : index
// CHECK-NEXT: %[[V6:[A-Za-z0-9_$.-]+]] = arith.constant 4 : index
// CHECK-NEXT: loop.foreach %[[V7:[A-Za-z0-9_$.-]+]] = %[[V3]] to %[[V4]] step %[[V5]] {
// CHECK-NEXT: loop.foreach %[[V8:[A-Za-z0-9_$.-]+]] = %[[V3]] to %[[V6]] step %[[V5]] {
// CHECK-NEXT: %[[V9:[A-Za-z0-9_$.-]+]] = memref.load %[[V0]][%[[V7]], %[[V8]]] : memref<?x4xf32>
// CHECK-NEXT: %[[V10:[A-Za-z0-9_$.-]+]] = memref.load %[[V1]][%[[V8]]] : memref<4xf32>
// CHECK-NEXT: %[[V11:[A-Za-z0-9_$.-]+]] = arith.addf %[[V9]], %[[V10]] : f32
// CHECK-NEXT: memref.store %[[V11]], %[[V2]][%[[V7]], %[[V8]]] : memref<?x4xf32>
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.return
// CHECK-NEXT: }

func.func @broadcast_add(%a: tensor<?x4xf32>, %b: tensor<4xf32>) -> tensor<?x4xf32> {
  %c = graph.add %a, %b : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  func.return %c : tensor<?x4xf32>
}

// -----

// CHECK-LABEL: func.func @dense_relu
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<?x8xf32>, %[[W:[A-Za-z0-9_$.-]+]]: tensor<16x8xf32>, %[[B:[A-Za-z0-9_$.-]+]]: tensor<16xf32>) -> tensor<?x16xf32> {
// CHECK-NEXT: %[[Y:[A-Za-z0-9_$.-]+]] = graph.fused (%[[X1:[A-Za-z0-9_$.-]+]] = %[[X]], %[[W1:[A-Za-z0-9_$.-]+]] = %[[W]], %[[B1:[A-Za-z0-9_$.-]+]] = %[[B]]) : (tensor<?x8xf32>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<?x16xf32> {
// CHECK-NEXT: %[[D:[A-Za-z0-9_$.-]+]] = graph.dense %[[X1]], %[[W1]], %[[B1]] : (tensor<?x8xf32>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<?x16xf32>
// CHECK-NEXT: %[[R:[A-Za-z0-9_$.-]+]] = graph.relu %[[D]] : tensor<?x16xf32> -> tensor<?x16xf32>
// CHECK-NEXT: graph.yield %[[R]] : tensor<?x16xf32>
// CHECK-NEXT: } attributes {nimble.kernel = @dense_relu_dense_0}
// CHECK-NEXT: func.return %[[Y]] : tensor<?x16xf32>
// CHECK-NEXT: }
// CHECK-LABEL: loop.kernel @dense_relu_dense_0
// CHECK-SAME: (%[[V0:[A-Za-z0-9_$.-]+]]: memref<?x8xf32>, %[[V1:[A-Za-z0-9_$.-]+]]: memref<16x8xf32>, %[[V2:[A-Za-z0-9_$.-]+]]: memref<16xf32>, %[[V3:[A-Za-z0-9_$.-]+]]: memref<?x16xf32>) {
// CHECK-NEXT: %[[V4:[A-Za-z0-9_$.-]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[V5:[A-Za-z0-9_$.-]+]] = memref.dim %[[V0]], %[[V4]] : memref<?x8xf32>
// CHECK-NEXT: %[[V6:[A-Za-z0-9_$.-]+]] = arith.constant 1 : index
// CHECK-NEXT: %[[V7:[A-Za-z0-9_$.-]+]] = arith.constant 16 : index
// CHECK-NEXT: %[[V8:[A-Za-z0-9_$.-]+]] = arith.constant 8 : index
// CHECK-NEXT: loop.foreach %[[V9:[A-Za-z0-9_$.-]+]] = %[[V4]] to %[[V5]] step %[[V6]] {
// CHECK-NEXT: loop.foreach %[[V10:[A-Za-z0-9_$.-]+]] = %[[V4]] to %[[V7]] step %[[V6]] {
// CHECK-NEXT: %[[V11:[A-Za-z0-9_$.-]+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V12:[A-Za-z0-9_$.-]+]] = loop.reduce %[[V13:[A-Za-z0-9_$.-]+]] = %[[V4]] to %[[V8]] step %[[V6]] combine(add) init(%[[V11]]) : f32 {
// CHECK-NEXT: %[[V14:[A-Za-z0-9_$.-]+]] = memref.load %[[V0]][%[[V9]], %[[V13]]] : memref<?x8xf32>
// CHECK-NEXT: %[[V15:[A-Za-z0-9_$.-]+]] = memref.load %[[V1]][%[[V10]], %[[V13]]] : memref<16x8xf32>
// CHECK-NEXT: %[[V16:[A-Za-z0-9_$.-]+]] = arith.mulf %[[V14]], %[[V15]] : f32
// CHECK-NEXT: loop.yield %[[V16]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: %[[V17:[A-Za-z0-9_$.-]+]] = memref.load %[[V2]][%[[V10]]] : memref<16xf32>
// CHECK-NEXT: %[[V18:[A-Za-z0-9_$.-]+]] = arith.addf %[[V12]], %[[V17]] : f32
// CHECK-NEXT: %[[V19:[A-Za-z0-9_$.-]+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V20:[A-Za-z0-9_$.-]+]] = arith.maximumf %[[V18]], %[[V19]] : f32
// CHECK-NEXT: memref.store %[[V20]], %[[V3]][%[[V9]], %[[V10]]] : memref<?x16xf32>
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.return
// CHECK-NEXT: }
func.func @dense_relu(%x: tensor<?x8xf32>, %w: tensor<16x8xf32>, %b: tensor<16xf32>) -> tensor<?x16xf32> {
  %y = graph.fused (%x1 = %x, %w1 = %w, %b1 = %b) : (tensor<?x8xf32>, tensor<16x8xf32>, tensor<16xf32>) -> (tensor<?x16xf32>) {
    %d = graph.dense %x1, %w1, %b1 : (tensor<?x8xf32>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<?x16xf32>
    %r = graph.relu %d : tensor<?x16xf32> -> tensor<?x16xf32>
    graph.yield %r : tensor<?x16xf32>
  }
  func.return %y : tensor<?x16xf32>
}

// -----

// CHECK-LABEL: func.func @transpose_slice
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<?x6xf32>) -> tensor<3x?xf32> {
// CHECK-NEXT: graph.fused (%[[X_1:[A-Za-z0-9_$.-]+]] = %[[X]]) : (tensor<?x6xf32>) -> () {
// CHECK-NEXT: %[[S:[A-Za-z0-9_$.-]+]] = graph.slice %[[X_1]][:, 1:-1:2] : tensor<?x6xf32> -> tensor<?x2xf32>
// CHECK-NEXT: graph.yield
// CHECK-NEXT: } attributes {nimble.kernel = @transpose_slice_slice_0}
// CHECK-NEXT: %[[T:[A-Za-z0-9_$.-]+]] = graph.fused (%[[X_1]] = %[[X]]) : (tensor<?x6xf32>) -> tensor<6x?xf32> {
// CHECK-NEXT: %[[T_1:[A-Za-z0-9_$.-]+]] = graph.transpose %[[X_1]] [1, 0] : tensor<?x6xf32> -> tensor<6x?xf32>
// CHECK-NEXT: graph.yield %[[T_1]] : tensor<6x?xf32>
// CHECK-NEXT: } attributes {nimble.kernel = @transpose_slice_transpose_0}
// CHECK-NEXT: %[[U:[A-Za-z0-9_$.-]+]] = graph.fused (%[[T_1]] = %[[T]]) : (tensor<6x?xf32>) -> tensor<3x?xf32> {
// CHECK-NEXT: %[[U_1:[A-Za-z0-9_$.-]+]] = graph.slice %[[T_1]][:3, :] : tensor<6x?xf32> -> tensor<3x?xf32>
// CHECK-NEXT: graph.yield %[[U_1]] : tensor<3x?xf32>
// CHECK-NEXT: } attributes {nimble.kernel = @transpose_slice_slice_1}
// CHECK-NEXT: func.return %[[U]] : tensor<3x?xf32>
// CHECK-NEXT: }
// CHECK-LABEL: loop.kernel @transpose_slice_slice_0
// CHECK-SAME: (%[[V0:[A-Za-z0-9_$.-]+]]: memref<?x6xf32>) {
// CHECK-NEXT: loop.return
// CHECK-NEXT: }
// CHECK-LABEL: loop.kernel @transpose_slice_transpose_0
// CHECK-SAME: (%[[V0:[A-Za-z0-9_$.-]+]]: memref<?x6xf32>, %[[V1:[A-Za-z0-9_$.-]+]]: memref<6x?xf32>) {
// CHECK-NEXT: %[[V2:[A-Za-z0-9_$.-]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[V3:[A-Za-z0-9_$.-]+]] = memref.dim %[[V0]], %[[V2]] : memref<?x6xf32>
// CHECK-NEXT: %[[V4:[A-Za-z0-9_$.-]+]] = arith.constant 6 : index
// CHECK-NEXT: %[[V5:[A-Za-z0-9_$.-]+]] = arith.constant 1 : index
// CHECK-NEXT: loop.foreach %[[V6:[A-Za-z0-9_$.-]+]] = %[[V2]] to %[[V4]] step %[[V5]] {
// CHECK-NEXT: loop.foreach %[[V7:[A-Za-z0-9_$.-]+]] = %[[V2]] to %[[V3]] step %[[V5]] {
// CHECK-NEXT: %[[V8:[A-Za-z0-9_$.-]+]] = memref.load %[[V0]][%[[V7]], %[[V6]]] : memref<?x6xf32>
// CHECK-NEXT: memref.store %[[V8]], %[[V1]][%[[V6]], %[[V7]]] : memref<6x?xf32>
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.return
// CHECK-NEXT: }
// CHECK-LABEL: loop.kernel @transpose_slice_slice_1
// CHECK-SAME: (%[[V0:[A-Za-z0-9_$.-]+]]: memref<6x?xf32>, %[[V1:[A-Za-z0-9_$.-]+]]: memref<3x?xf32>) {
// CHECK-NEXT: %[[V2:[A-Za-z0-9_$.-]+]] = arith.constant 1 : index
// CHECK-NEXT: %[[V3:[A-Za-z0-9_$.-]+]] = memref.dim %[[V0]], %[[V2]] : memref<6x?xf32>
// CHECK-NEXT: %[[V4:[A-Za-z0-9_$.-]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[V5:[A-Za-z0-9_$.-]+]] = arith.maxsi %[[V3]], %[[V4]] : index
// CHECK-NEXT: %[[V6:[A-Za-z0-9_$.-]+]] = arith.constant 1 : index
// CHECK-NEXT: %[[V7:[A-Za-z0-9_$.-]+]] = arith.ceildivsi %[[V5]], %[[V6]] : index
// CHECK-NEXT: %[[V8:[A-Za-z0-9_$.-]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[V9:[A-Za-z0-9_$.-]+]] = arith.constant 3 : index
// CHECK-NEXT: loop.foreach %[[V10:[A-Za-z0-9_$.-]+]] = %[[V8]] to %[[V9]] step %[[V2]] {
// CHECK-NEXT: loop.foreach %[[V11:[A-Za-z0-9_$.-]+]] = %[[V8]] to %[[V7]] step %[[V2]] {
// CHECK-NEXT: %[[V12:[A-Za-z0-9_$.-]+]] = memref.load %[[V0]][%[[V10]], %[[V11]]] : memref<6x?xf32>
// CHECK-NEXT: memref.store %[[V12]], %[[V1]][%[[V10]], %[[V11]]] : memref<3x?xf32>
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.return
// CHECK-NEXT: }
func.func @transpose_slice(%x: tensor<?x6xf32>) -> tensor<3x?xf32> {
  %s = graph.slice %x[:, 1:-1:2] : tensor<?x6xf32> -> tensor<?x2xf32>
  %t = graph.transpose %x [1, 0] : tensor<?x6xf32> -> tensor<6x?xf32>
  %u = graph.slice %t[0:3, :] : tensor<6x?xf32> -> tensor<3x?xf32>
  func.return %u : tensor<3x?xf32>
}

// -----

// CHECK-LABEL: func.func @opaque_stays_on_host
// CHECK-SAME: (%[[B:[A-Za-z0-9_$.-]+]]: tensor<?x4xf32>, %[[S:[A-Za-z0-9_$.-]+]]: tensor<?xf32>) -> tensor<?xi64> {
// CHECK-NEXT: %[[K:[A-Za-z0-9_$.-]+]] = graph.nms %[[B]], %[[S]] {iou_threshold = 5.000000e-01 : f64, score_threshold = 0.000000e+00 : f64, max_output = 10 : i64} : (tensor<?x4xf32>, tensor<?xf32>) -> tensor<?xi64>
// CHECK-NEXT: func.return %[[K]] : tensor<?xi64>
// CHECK-NEXT: }
func.func @opaque_stays_on_host(%b: tensor<?x4xf32>, %s: tensor<?xf32>) -> tensor<?xi64> {
  %k = graph.nms %b, %s {iou_threshold = 5.000000e-01 : f64, score_threshold = 0.000000e+00 : f64, max_output = 10 : i64} : (tensor<?x4xf32>, tensor<?xf32>) -> tensor<?xi64>
  func.return %k : tensor<?xi64>
}

// -----

// A max pool, staged: the outputs whose window lies inside the input take every tap (4
// here) in one loop body, their maximum a tree; the rows above and below, then the
// columns left and right of them, take the taps inside their window one after the other
// (no padding here: those loops run no iteration). The pool's result is the kernel's
// output: it is staged straight into the output buffer, and no nest copies it.
// CHECK-LABEL: loop.kernel @max_pool_rows_max_pool2d_0
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: memref<1x2x?x?xf32>, %[[Y:[A-Za-z0-9_$.-]+]]: memref<1x2x?x?xf32>)
// CHECK-NOT: loop.alloc
// CHECK: %[[LOW:[A-Za-z0-9_$.-]+]] = arith.constant 0xff800000 : f32
// CHECK: arith.maximumf %[[LOW]],
// CHECK-COUNT-3: arith.maximumf
// CHECK: memref.store {{.*}}, %[[Y]]
// CHECK: arith.maximumf %[[LOW]],
// CHECK-COUNT-3: arith.maximumf
// CHECK: memref.store {{.*}}, %[[Y]]
// CHECK: %[[A:[A-Za-z0-9_$.-]+]] = memref.load %[[X]]
// CHECK: %[[B:[A-Za-z0-9_$.-]+]] = memref.load %[[X]]
// CHECK: %[[C:[A-Za-z0-9_$.-]+]] = memref.load %[[X]]
// CHECK: %[[D:[A-Za-z0-9_$.-]+]] = memref.load %[[X]]
// CHECK-NEXT: %[[AB:[A-Za-z0-9_$.-]+]] = arith.maximumf %[[A]], %[[B]] : f32
// CHECK-NEXT: %[[CD:[A-Za-z0-9_$.-]+]] = arith.maximumf %[[C]], %[[D]] : f32
// CHECK-NEXT: %[[M:[A-Za-z0-9_$.-]+]] = arith.maximumf %[[AB]], %[[CD]] : f32
// CHECK-NEXT: memref.store %[[M]], %[[Y]]
// CHECK: arith.maximumf %[[LOW]],
// CHECK: arith.maximumf %[[LOW]],
// CHECK-NOT: memref.load %[[Y]]
// CHECK: loop.return

func.func @max_pool_rows(%x: tensor<1x2x?x?xf32>) -> tensor<1x2x?x?xf32> {
  %y = graph.max_pool2d %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<1x2x?x?xf32> -> tensor<1x2x?x?xf32>
  func.return %y : tensor<1x2x?x?xf32>
}

// -----

// A max pool whose result an op after it reads: staged in a buffer of its own, which the
// output nest reads.
// CHECK-LABEL: loop.kernel @max_pool_then_relu_max_pool2d_0
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: memref<1x2x?x?xf32>, %[[Y:[A-Za-z0-9_$.-]+]]: memref<1x2x?x?xf32>)
// CHECK: %[[ROWS:[A-Za-z0-9_$.-]+]] = loop.alloc dram
// CHECK: memref.store {{.*}}, %[[ROWS]]
// CHECK: %[[V:[A-Za-z0-9_$.-]+]] = memref.load %[[ROWS]]
// CHECK: %[[R:[A-Za-z0-9_$.-]+]] = arith.maximumf %[[V]],
// CHECK-NEXT: memref.store %[[R]], %[[Y]]
// CHECK: loop.return

func.func @max_pool_then_relu(%x: tensor<1x2x?x?xf32>) -> tensor<1x2x?x?xf32> {
  %y = graph.fused (%x1 = %x) : (tensor<1x2x?x?xf32>) -> (tensor<1x2x?x?xf32>) {
    %p = graph.max_pool2d %x1 {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<1x2x?x?xf32> -> tensor<1x2x?x?xf32>
    %r = graph.relu %p : tensor<1x2x?x?xf32> -> tensor<1x2x?x?xf32>
    graph.yield %r : tensor<1x2x?x?xf32>
  }
  func.return %y : tensor<1x2x?x?xf32>
}

// -----

// A softmax along the last axis whose result is the kernel's output: computed in the
// output buffer, each exponential taken once (stored as it is summed, then scaled there);
// an f32 difference below -87 gives 0, never a denormal.
// CHECK-LABEL: loop.kernel @softmax_rows_softmax_0
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: memref<?x?xf32>, %[[Y:[A-Za-z0-9_$.-]+]]: memref<?x?xf32>)
// CHECK: loop.foreach %[[I:[A-Za-z0-9_$.-]+]] =
// CHECK: %[[MAX:[A-Za-z0-9_$.-]+]] = loop.reduce {{.*}} combine(max)
// CHECK: %[[SUM:[A-Za-z0-9_$.-]+]] = loop.reduce %[[K:[A-Za-z0-9_$.-]+]] = {{.*}} combine(add)
// CHECK-NEXT: %[[V:[A-Za-z0-9_$.-]+]] = memref.load %[[X]][%[[I]], %[[K]]]
// CHECK-NEXT: %[[D:[A-Za-z0-9_$.-]+]] = arith.subf %[[V]], %[[MAX]] : f32
// CHECK-NEXT: %[[FLOOR:[A-Za-z0-9_$.-]+]] = arith.constant -8.700000e+01 : f32
// CHECK-NEXT: %[[DC:[A-Za-z0-9_$.-]+]] = arith.maximumf %[[D]], %[[FLOOR]] : f32
// CHECK-NEXT: %[[EXP:[A-Za-z0-9_$.-]+]] = math.exp %[[DC]] : f32
// CHECK-NEXT: %[[LOW:[A-Za-z0-9_$.-]+]] = arith.cmpf olt, %[[D]], %[[FLOOR]] : f32
// CHECK-NEXT: %[[ZERO:[A-Za-z0-9_$.-]+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[E:[A-Za-z0-9_$.-]+]] = arith.select %[[LOW]], %[[ZERO]], %[[EXP]] : f32
// CHECK-NEXT: memref.store %[[E]], %[[Y]][%[[I]], %[[K]]]
// CHECK-NEXT: loop.yield %[[E]] : f32
// CHECK: %[[INV:[A-Za-z0-9_$.-]+]] = arith.divf %{{.*}}, %[[SUM]] : f32
// CHECK: loop.foreach %[[J:[A-Za-z0-9_$.-]+]] =
// CHECK-NEXT: %[[S:[A-Za-z0-9_$.-]+]] = memref.load %[[Y]][%[[I]], %[[J]]]
// CHECK-NEXT: %[[P:[A-Za-z0-9_$.-]+]] = arith.mulf %[[S]], %[[INV]] : f32
// CHECK-NEXT: memref.store %[[P]], %[[Y]][%[[I]], %[[J]]]
// CHECK-NOT: math.exp
// CHECK: loop.return

func.func @softmax_rows(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %p = graph.softmax %x {axis = -1 : i64} : tensor<?x?xf32> -> tensor<?x?xf32>
  func.return %p : tensor<?x?xf32>
}

// -----

// Along another axis the output nest computes it per element (the sum's exponentials,
// then the element's own).
// CHECK-LABEL: loop.kernel @softmax_columns_softmax_0
// CHECK: %[[SUM:[A-Za-z0-9_$.-]+]] = loop.reduce {{.*}} combine(add)
// CHECK: math.exp
// CHECK: loop.yield
// CHECK: math.exp
// CHECK: arith.divf %{{.*}}, %[[SUM]] : f32
// CHECK: loop.return

func.func @softmax_columns(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %p = graph.softmax %x {axis = 0 : i64} : tensor<?x?xf32> -> tensor<?x?xf32>
  func.return %p : tensor<?x?xf32>
}

// -----

// Groups whose kernels would be the same loop nest (an imported model's repeated layers,
// their weights arguments) share one kernel; a different one gets its own.
// CHECK-LABEL: func.func @twice
// CHECK: %[[X:[A-Za-z0-9_$.-]+]] = graph.fused
// CHECK: } attributes {nimble.kernel = @[[RELU:twice_relu_[0-9]+]]}
// CHECK: %[[Y:[A-Za-z0-9_$.-]+]] = graph.fused
// CHECK: } attributes {nimble.kernel = @[[RELU]]}
// CHECK: graph.fused (%{{.*}} = %[[X]], %{{.*}} = %[[Y]])
// CHECK: } attributes {nimble.kernel = @twice_add_0}
// CHECK: } attributes {nimble.kernel = @twice_tanh_0}
// CHECK: loop.kernel @[[RELU]](
// CHECK-NOT: func.func @twice_relu_
// CHECK: loop.kernel @twice_add_0(

func.func @twice(%a: tensor<?x4xf32>, %b: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %x = graph.relu %a : tensor<?x4xf32> -> tensor<?x4xf32>
  %y = graph.relu %b : tensor<?x4xf32> -> tensor<?x4xf32>
  %z = graph.add %x, %y : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  %w = graph.tanh %z : tensor<?x4xf32> -> tensor<?x4xf32>
  func.return %w : tensor<?x4xf32>
}
