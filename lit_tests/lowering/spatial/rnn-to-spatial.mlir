// RUN: nimble-opt %s --split-input-file -p 'lower-rnn-to-spatial,canonicalize,cse' | filecheck %s

// CHECK-LABEL: func.func @rnn
// CHECK-SAME: (%[[XS:[A-Za-z0-9_$.-]+]]: tensor<?x?x2xf32>, %[[H0:[A-Za-z0-9_$.-]+]]: tensor<?x4xf32>, %[[W:[A-Za-z0-9_$.-]+]]: tensor<4x6xf32>, %[[B:[A-Za-z0-9_$.-]+]]: tensor<4xf32>) -> tensor<?x4xf32> {
// CHECK-NEXT: %[[V0:[A-Za-z0-9_$.-]+]] = dynshape.dim %[[XS]], 1 : tensor<?x?x2xf32>
// CHECK-NEXT: %[[V1:[A-Za-z0-9_$.-]+]] = dynshape.dim %[[H0]], 0 : tensor<?x4xf32>
// CHECK-NEXT: %[[V2:[A-Za-z0-9_$.-]+]] = arith.cmpi eq, %[[V0]], %[[V1]] : index
// CHECK-NEXT: dynshape.assert %[[V2]], "dim 0 of %[[H0]] must equal dim 1 of %[[XS]] (both are 'n')" dims(%[[V1]], %[[V0]]) {nimble.named_dim = "n"}
// CHECK-NEXT: %[[STEPS:[A-Za-z0-9_$.-]+]] = dynshape.dim %[[XS]], 0 : tensor<?x?x2xf32>
// CHECK-NEXT: %[[V3:[A-Za-z0-9_$.-]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[I:[A-Za-z0-9_$.-]+]], %[[H:[A-Za-z0-9_$.-]+]] = graph.fused (%[[V4:[A-Za-z0-9_$.-]+]] = %[[V3]], %[[H0_1:[A-Za-z0-9_$.-]+]] = %[[H0]], %[[STEPS_1:[A-Za-z0-9_$.-]+]] = %[[STEPS]], %[[XS_1:[A-Za-z0-9_$.-]+]] = %[[XS]], %[[W_1:[A-Za-z0-9_$.-]+]] = %[[W]], %[[B_1:[A-Za-z0-9_$.-]+]] = %[[B]]) : (index, tensor<?x4xf32>, index, tensor<?x?x2xf32>, tensor<4x6xf32>, tensor<4xf32>) -> (index, tensor<?x4xf32>) {
// CHECK-NEXT: %[[I_1:[A-Za-z0-9_$.-]+]], %[[H_1:[A-Za-z0-9_$.-]+]] = graph.while (%[[I_2:[A-Za-z0-9_$.-]+]] = %[[V4]], %[[H_2:[A-Za-z0-9_$.-]+]] = %[[H0_1]]) : (index, tensor<?x4xf32>) -> (index, tensor<?x4xf32>) {
// CHECK-NEXT: %[[V5:[A-Za-z0-9_$.-]+]] = arith.cmpi slt, %[[I_2]], %[[STEPS_1]] : index
// CHECK-NEXT: graph.condition %[[V5]] : i1
// CHECK-NEXT: } do {
// CHECK-NEXT: ^bb0(%[[I_3:[A-Za-z0-9_$.-]+]]: index, %[[H_3:[A-Za-z0-9_$.-]+]]: tensor<?x4xf32>):
// CHECK-NEXT: %[[V6:[A-Za-z0-9_$.-]+]] = arith.constant 1 : index
// CHECK-NEXT: %[[V7:[A-Za-z0-9_$.-]+]] = arith.addi %[[I_3]], %[[V6]] : index
// CHECK-NEXT: %[[V8:[A-Za-z0-9_$.-]+]] = graph.fused (%[[XS_2:[A-Za-z0-9_$.-]+]] = %[[XS_1]], %[[I_4:[A-Za-z0-9_$.-]+]] = %[[I_3]], %[[V9:[A-Za-z0-9_$.-]+]] = %[[V7]], %[[H_4:[A-Za-z0-9_$.-]+]] = %[[H_3]]) : (tensor<?x?x2xf32>, index, index, tensor<?x4xf32>) -> tensor<?x6xf32> {
// CHECK-NEXT: %[[V10:[A-Za-z0-9_$.-]+]] = graph.slice %[[XS_2]][%[[I_4]]:%[[V9]], :, :] : tensor<?x?x2xf32> -> tensor<?x?x2xf32>
// CHECK-NEXT: %[[V11:[A-Za-z0-9_$.-]+]] = graph.squeeze %[[V10]] [0] : tensor<?x?x2xf32> -> tensor<?x2xf32>
// CHECK-NEXT: %[[V12:[A-Za-z0-9_$.-]+]] = graph.concat %[[V11]], %[[H_4]] {axis = 1 : i64} : (tensor<?x2xf32>, tensor<?x4xf32>) -> tensor<?x6xf32>
// CHECK-NEXT: graph.yield %[[V12]] : tensor<?x6xf32>
// CHECK-NEXT: }
// CHECK-NEXT: %[[V9]] = graph.fused (%[[V10]] = %[[V8]], %[[W_2:[A-Za-z0-9_$.-]+]] = %[[W_1]], %[[B_2:[A-Za-z0-9_$.-]+]] = %[[B_1]]) : (tensor<?x6xf32>, tensor<4x6xf32>, tensor<4xf32>) -> tensor<?x4xf32> {
// CHECK-NEXT: %[[V11]] = graph.dense %[[V10]], %[[W_2]], %[[B_2]] : (tensor<?x6xf32>, tensor<4x6xf32>, tensor<4xf32>) -> tensor<?x4xf32>
// CHECK-NEXT: %[[V12]] = graph.tanh %[[V11]] : tensor<?x4xf32> -> tensor<?x4xf32>
// CHECK-NEXT: graph.yield %[[V12]] : tensor<?x4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: graph.yield %[[V7]], %[[V9]] : index, tensor<?x4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: graph.yield %[[I_1]], %[[H_1]] : index, tensor<?x4xf32>
// CHECK-NEXT: } attributes {nimble.spatial = @rnn_rnn_0, nimble.spatial_args = array<i64: 3, 4, 5, 2, 1>, nimble.spatial_counter = 0 : i64, nimble.spatial_stacked = array<i64>}
// CHECK-NEXT: func.return %[[H]] : tensor<?x4xf32>
// CHECK-NEXT: }
// CHECK-LABEL: loop.kernel @rnn_rnn_0
// CHECK-SAME: (%[[XS:[A-Za-z0-9_$.-]+]]: memref<?x?x2xf32>, %[[W:[A-Za-z0-9_$.-]+]]: memref<4x6xf32>, %[[B:[A-Za-z0-9_$.-]+]]: memref<4xf32>, %[[STEPS:[A-Za-z0-9_$.-]+]]: index, %[[H0:[A-Za-z0-9_$.-]+]]: memref<?x4xf32>, %[[H_OUT:[A-Za-z0-9_$.-]+]]: memref<?x4xf32>) attributes {nimble.device = "spatial"} {
// CHECK-NEXT: %[[V0:[A-Za-z0-9_$.-]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[V1:[A-Za-z0-9_$.-]+]] = arith.constant 1 : index
// CHECK-NEXT: %[[V2:[A-Za-z0-9_$.-]+]] = arith.constant 4 : index
// CHECK-NEXT: %[[V3:[A-Za-z0-9_$.-]+]] = arith.constant 6 : index
// CHECK-NEXT: %[[W_SRAM:[A-Za-z0-9_$.-]+]] = loop.alloc sram : memref<4x6xf32>
// CHECK-NEXT: loop.foreach %[[V4:[A-Za-z0-9_$.-]+]] = %[[V0]] to %[[V2]] step %[[V1]] {
// CHECK-NEXT: loop.foreach %[[V5:[A-Za-z0-9_$.-]+]] = %[[V0]] to %[[V3]] step %[[V1]] {
// CHECK-NEXT: %[[V6:[A-Za-z0-9_$.-]+]] = memref.load %[[W]][%[[V4]], %[[V5]]] : memref<4x6xf32>
// CHECK-NEXT: memref.store %[[V6]], %[[W_SRAM]][%[[V4]], %[[V5]]] : memref<4x6xf32>
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: %[[B_SRAM:[A-Za-z0-9_$.-]+]] = loop.alloc sram : memref<4xf32>
// CHECK-NEXT: loop.foreach %[[V7:[A-Za-z0-9_$.-]+]] = %[[V0]] to %[[V2]] step %[[V1]] {
// CHECK-NEXT: %[[V8:[A-Za-z0-9_$.-]+]] = memref.load %[[B]][%[[V7]]] : memref<4xf32>
// CHECK-NEXT: memref.store %[[V8]], %[[B_SRAM]][%[[V7]]] : memref<4xf32>
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: %[[V9:[A-Za-z0-9_$.-]+]] = memref.dim %[[H0]], %[[V0]] : memref<?x4xf32>
// CHECK-NEXT: %[[H0_STATE:[A-Za-z0-9_$.-]+]] = loop.alloc sram (%[[V9]]) : memref<?x4xf32>
// CHECK-NEXT: %[[H0_NEXT:[A-Za-z0-9_$.-]+]] = loop.alloc sram (%[[V9]]) : memref<?x4xf32>
// CHECK-NEXT: loop.foreach %[[V10:[A-Za-z0-9_$.-]+]] = %[[V0]] to %[[V9]] step %[[V1]] {
// CHECK-NEXT: loop.foreach %[[V11:[A-Za-z0-9_$.-]+]] = %[[V0]] to %[[V2]] step %[[V1]] {
// CHECK-NEXT: %[[V12:[A-Za-z0-9_$.-]+]] = memref.load %[[H0]][%[[V10]], %[[V11]]] : memref<?x4xf32>
// CHECK-NEXT: memref.store %[[V12]], %[[H0_STATE]][%[[V10]], %[[V11]]] : memref<?x4xf32>
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: %[[V13:[A-Za-z0-9_$.-]+]] = arith.constant 2 : index
// CHECK-NEXT: %[[V14:[A-Za-z0-9_$.-]+]] = arith.constant 3 : index
// CHECK-NEXT: scf.for %[[T:[A-Za-z0-9_$.-]+]] = %[[V0]] to %[[STEPS]] step %[[V1]] {
// CHECK-NEXT: %[[V15:[A-Za-z0-9_$.-]+]] = memref.dim %[[XS]], %[[V0]] : memref<?x?x2xf32>
// CHECK-NEXT: %[[V16:[A-Za-z0-9_$.-]+]] = arith.cmpi slt, %[[T]], %[[V0]] : index
// CHECK-NEXT: %[[V17:[A-Za-z0-9_$.-]+]] = arith.addi %[[T]], %[[V15]] : index
// CHECK-NEXT: %[[V18:[A-Za-z0-9_$.-]+]] = arith.select %[[V16]], %[[V17]], %[[T]] : index
// CHECK-NEXT: %[[V19:[A-Za-z0-9_$.-]+]] = arith.maxsi %[[V18]], %[[V0]] : index
// CHECK-NEXT: %[[V20:[A-Za-z0-9_$.-]+]] = arith.minsi %[[V19]], %[[V15]] : index
// CHECK-NEXT: %[[V21:[A-Za-z0-9_$.-]+]] = memref.dim %[[H0_STATE]], %[[V0]] : memref<?x4xf32>
// CHECK-NEXT: %[[XS_STAGE:[A-Za-z0-9_$.-]+]] = loop.alloc sram (%[[V21]]) : memref<?x6xf32>
// CHECK-NEXT: loop.foreach %[[V22:[A-Za-z0-9_$.-]+]] = %[[V0]] to %[[V21]] step %[[V1]] {
// CHECK-NEXT: loop.foreach %[[V23:[A-Za-z0-9_$.-]+]] = %[[V0]] to %[[V3]] step %[[V1]] {
// CHECK-NEXT: %[[V24:[A-Za-z0-9_$.-]+]] = arith.maxsi %[[V23]], %[[V0]] : index
// CHECK-NEXT: %[[V25:[A-Za-z0-9_$.-]+]] = arith.minsi %[[V24]], %[[V1]] : index
// CHECK-NEXT: %[[V26:[A-Za-z0-9_$.-]+]] = memref.load %[[XS]][%[[V20]], %[[V22]], %[[V25]]] : memref<?x?x2xf32>
// CHECK-NEXT: memref.store %[[V26]], %[[XS_STAGE]][%[[V22]], %[[V23]]] : memref<?x6xf32>
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.foreach %[[V27:[A-Za-z0-9_$.-]+]] = %[[V0]] to %[[V21]] step %[[V1]] {
// CHECK-NEXT: loop.foreach %[[V28:[A-Za-z0-9_$.-]+]] = %[[V0]] to %[[V2]] step %[[V1]] {
// CHECK-NEXT: %[[V29:[A-Za-z0-9_$.-]+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V30:[A-Za-z0-9_$.-]+]] = loop.reduce %[[V31:[A-Za-z0-9_$.-]+]] = %[[V0]] to %[[V3]] step %[[V1]] combine(add) init(%[[V29]]) : f32 {
// CHECK-NEXT: %[[V32:[A-Za-z0-9_$.-]+]] = memref.load %[[XS_STAGE]][%[[V27]], %[[V31]]] : memref<?x6xf32>
// CHECK-NEXT: %[[V33:[A-Za-z0-9_$.-]+]] = arith.subi %[[V31]], %[[V13]] : index
// CHECK-NEXT: %[[V34:[A-Za-z0-9_$.-]+]] = arith.maxsi %[[V33]], %[[V0]] : index
// CHECK-NEXT: %[[V35:[A-Za-z0-9_$.-]+]] = arith.minsi %[[V34]], %[[V14]] : index
// CHECK-NEXT: %[[V36:[A-Za-z0-9_$.-]+]] = memref.load %[[H0_STATE]][%[[V27]], %[[V35]]] : memref<?x4xf32>
// CHECK-NEXT: %[[V37:[A-Za-z0-9_$.-]+]] = arith.cmpi sge, %[[V31]], %[[V13]] : index
// CHECK-NEXT: %[[V38:[A-Za-z0-9_$.-]+]] = arith.select %[[V37]], %[[V36]], %[[V32]] : f32
// CHECK-NEXT: %[[V39:[A-Za-z0-9_$.-]+]] = memref.load %[[W_SRAM]][%[[V28]], %[[V31]]] : memref<4x6xf32>
// CHECK-NEXT: %[[V40:[A-Za-z0-9_$.-]+]] = arith.mulf %[[V38]], %[[V39]] : f32
// CHECK-NEXT: loop.yield %[[V40]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: %[[V41:[A-Za-z0-9_$.-]+]] = memref.load %[[B_SRAM]][%[[V28]]] : memref<4xf32>
// CHECK-NEXT: %[[V42:[A-Za-z0-9_$.-]+]] = arith.addf %[[V30]], %[[V41]] : f32
// CHECK-NEXT: %[[V43:[A-Za-z0-9_$.-]+]] = math.tanh %[[V42]] : f32
// CHECK-NEXT: memref.store %[[V43]], %[[H0_NEXT]][%[[V27]], %[[V28]]] : memref<?x4xf32>
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.foreach %[[V44:[A-Za-z0-9_$.-]+]] = %[[V0]] to %[[V9]] step %[[V1]] {
// CHECK-NEXT: loop.foreach %[[V45:[A-Za-z0-9_$.-]+]] = %[[V0]] to %[[V2]] step %[[V1]] {
// CHECK-NEXT: %[[V46:[A-Za-z0-9_$.-]+]] = memref.load %[[H0_NEXT]][%[[V44]], %[[V45]]] : memref<?x4xf32>
// CHECK-NEXT: memref.store %[[V46]], %[[H0_STATE]][%[[V44]], %[[V45]]] : memref<?x4xf32>
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: loop.foreach %[[V47:[A-Za-z0-9_$.-]+]] = %[[V0]] to %[[V9]] step %[[V1]] {
// CHECK-NEXT: loop.foreach %[[V48:[A-Za-z0-9_$.-]+]] = %[[V0]] to %[[V2]] step %[[V1]] {
// CHECK-NEXT: %[[V49:[A-Za-z0-9_$.-]+]] = memref.load %[[H0_STATE]][%[[V47]], %[[V48]]] : memref<?x4xf32>
// CHECK-NEXT: memref.store %[[V49]], %[[H_OUT]][%[[V47]], %[[V48]]] : memref<?x4xf32>
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.return
// CHECK-NEXT: }

// A vanilla RNN (h = tanh(dense(concat(x_t, h), w, b))) over a sequence of dynamic length
// and batch: one program; w and b copied on chip once, h in SRAM (current and next),
// the time loop sequential, x_t staged in SRAM at each step (it is read for every
// hidden unit), one foreach over the hidden units with the reduction inside.
func.func @rnn(%xs: tensor<?x?x2xf32>, %h0: tensor<?x4xf32>, %w: tensor<4x6xf32>, %b: tensor<4xf32>) -> tensor<?x4xf32> {
  %0 = dynshape.dim %xs, 1 : tensor<?x?x2xf32>
  %1 = dynshape.dim %h0, 0 : tensor<?x4xf32>
  %2 = arith.cmpi eq, %0, %1 : index
  dynshape.assert %2, "dim 0 of %h0 must equal dim 1 of %xs (both are 'n')" dims(%1, %0) {nimble.named_dim = "n"}
  %steps = dynshape.dim %xs, 0 : tensor<?x?x2xf32>
  %3 = arith.constant 0 : index
  %i, %h = graph.while (%i_1 = %3, %h_1 = %h0) : (index, tensor<?x4xf32>) -> (index, tensor<?x4xf32>) {
    %4 = arith.cmpi slt, %i_1, %steps : index
    graph.condition %4 : i1
  } do {
  ^bb0(%i_2: index, %h_2: tensor<?x4xf32>):
    %5 = arith.constant 1 : index
    %6 = arith.addi %i_2, %5 : index
    %7 = graph.fused (%xs_1 = %xs, %i_3 = %i_2, %8 = %6, %h_3 = %h_2) : (tensor<?x?x2xf32>, index, index, tensor<?x4xf32>) -> tensor<?x6xf32> {
      %9 = graph.slice %xs_1[%i_3:%8, :, :] : tensor<?x?x2xf32> -> tensor<?x?x2xf32>
      %10 = graph.squeeze %9 [0] : tensor<?x?x2xf32> -> tensor<?x2xf32>
      %11 = graph.concat %10, %h_3 {axis = 1 : i64} : (tensor<?x2xf32>, tensor<?x4xf32>) -> tensor<?x6xf32>
      graph.yield %11 : tensor<?x6xf32>
    }
    %8 = graph.fused (%9 = %7, %w_1 = %w, %b_1 = %b) : (tensor<?x6xf32>, tensor<4x6xf32>, tensor<4xf32>) -> tensor<?x4xf32> {
      %10 = graph.dense %9, %w_1, %b_1 : (tensor<?x6xf32>, tensor<4x6xf32>, tensor<4xf32>) -> tensor<?x4xf32>
      %11 = graph.tanh %10 : tensor<?x4xf32> -> tensor<?x4xf32>
      graph.yield %11 : tensor<?x4xf32>
    }
    graph.yield %6, %8 : index, tensor<?x4xf32>
  }
  func.return %h : tensor<?x4xf32>
}

// -----

// CHECK-LABEL: func.func @rnn_seq
// CHECK-SAME: (%[[XS:[A-Za-z0-9_$.-]+]]: tensor<?x?x2xf32>, %[[H0:[A-Za-z0-9_$.-]+]]: tensor<?x4xf32>, %[[YS0:[A-Za-z0-9_$.-]+]]: tensor<?x?x4xf32>, %[[W:[A-Za-z0-9_$.-]+]]: tensor<4x6xf32>, %[[B:[A-Za-z0-9_$.-]+]]: tensor<4xf32>) -> tensor<?x?x4xf32> {
// CHECK-NEXT: %[[V0:[A-Za-z0-9_$.-]+]] = dynshape.dim %[[XS]], 1 : tensor<?x?x2xf32>
// CHECK-NEXT: %[[V1:[A-Za-z0-9_$.-]+]] = dynshape.dim %[[H0]], 0 : tensor<?x4xf32>
// CHECK-NEXT: %[[V2:[A-Za-z0-9_$.-]+]] = arith.cmpi eq, %[[V0]], %[[V1]] : index
// CHECK-NEXT: dynshape.assert %[[V2]], "dim 0 of %[[H0]] must equal dim 1 of %[[XS]] (both are 'n')" dims(%[[V1]], %[[V0]]) {nimble.named_dim = "n"}
// CHECK-NEXT: %[[V3:[A-Za-z0-9_$.-]+]] = dynshape.dim %[[YS0]], 1 : tensor<?x?x4xf32>
// CHECK-NEXT: %[[V4:[A-Za-z0-9_$.-]+]] = arith.cmpi eq, %[[V0]], %[[V3]] : index
// CHECK-NEXT: dynshape.assert %[[V4]], "dim 1 of %[[YS0]] must equal dim 1 of %[[XS]] (both are 'n')" dims(%[[V3]], %[[V0]]) {nimble.named_dim = "n"}
// CHECK-NEXT: %[[STEPS:[A-Za-z0-9_$.-]+]] = dynshape.dim %[[XS]], 0 : tensor<?x?x2xf32>
// CHECK-NEXT: %[[V5:[A-Za-z0-9_$.-]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[I:[A-Za-z0-9_$.-]+]], %[[H:[A-Za-z0-9_$.-]+]], %[[YS:[A-Za-z0-9_$.-]+]] = graph.fused (%[[V6:[A-Za-z0-9_$.-]+]] = %[[V5]], %[[H0_1:[A-Za-z0-9_$.-]+]] = %[[H0]], %[[YS0_1:[A-Za-z0-9_$.-]+]] = %[[YS0]], %[[STEPS_1:[A-Za-z0-9_$.-]+]] = %[[STEPS]], %[[XS_1:[A-Za-z0-9_$.-]+]] = %[[XS]], %[[W_1:[A-Za-z0-9_$.-]+]] = %[[W]], %[[B_1:[A-Za-z0-9_$.-]+]] = %[[B]]) : (index, tensor<?x4xf32>, tensor<?x?x4xf32>, index, tensor<?x?x2xf32>, tensor<4x6xf32>, tensor<4xf32>) -> (index, tensor<?x4xf32>, tensor<?x?x4xf32>) {
// CHECK-NEXT: %[[I_1:[A-Za-z0-9_$.-]+]], %[[H_1:[A-Za-z0-9_$.-]+]], %[[YS_1:[A-Za-z0-9_$.-]+]] = graph.while (%[[I_2:[A-Za-z0-9_$.-]+]] = %[[V6]], %[[H_2:[A-Za-z0-9_$.-]+]] = %[[H0_1]], %[[YS_2:[A-Za-z0-9_$.-]+]] = %[[YS0_1]]) : (index, tensor<?x4xf32>, tensor<?x?x4xf32>) -> (index, tensor<?x4xf32>, tensor<?x?x4xf32>) {
// CHECK-NEXT: %[[V7:[A-Za-z0-9_$.-]+]] = arith.cmpi slt, %[[I_2]], %[[STEPS_1]] : index
// CHECK-NEXT: graph.condition %[[V7]] : i1
// CHECK-NEXT: } do {
// CHECK-NEXT: ^bb0(%[[I_3:[A-Za-z0-9_$.-]+]]: index, %[[H_3:[A-Za-z0-9_$.-]+]]: tensor<?x4xf32>, %[[YS_3:[A-Za-z0-9_$.-]+]]: tensor<?x?x4xf32>):
// CHECK-NEXT: %[[V8:[A-Za-z0-9_$.-]+]] = arith.constant 1 : index
// CHECK-NEXT: %[[V9:[A-Za-z0-9_$.-]+]] = arith.addi %[[I_3]], %[[V8]] : index
// CHECK-NEXT: %[[V10:[A-Za-z0-9_$.-]+]] = graph.fused (%[[XS_2:[A-Za-z0-9_$.-]+]] = %[[XS_1]], %[[I_4:[A-Za-z0-9_$.-]+]] = %[[I_3]], %[[V11:[A-Za-z0-9_$.-]+]] = %[[V9]], %[[H_4:[A-Za-z0-9_$.-]+]] = %[[H_3]]) : (tensor<?x?x2xf32>, index, index, tensor<?x4xf32>) -> tensor<?x6xf32> {
// CHECK-NEXT: %[[V12:[A-Za-z0-9_$.-]+]] = graph.slice %[[XS_2]][%[[I_4]]:%[[V11]], :, :] : tensor<?x?x2xf32> -> tensor<?x?x2xf32>
// CHECK-NEXT: %[[V13:[A-Za-z0-9_$.-]+]] = graph.squeeze %[[V12]] [0] : tensor<?x?x2xf32> -> tensor<?x2xf32>
// CHECK-NEXT: %[[V14:[A-Za-z0-9_$.-]+]] = graph.concat %[[V13]], %[[H_4]] {axis = 1 : i64} : (tensor<?x2xf32>, tensor<?x4xf32>) -> tensor<?x6xf32>
// CHECK-NEXT: graph.yield %[[V14]] : tensor<?x6xf32>
// CHECK-NEXT: }
// CHECK-NEXT: %[[H2:[A-Za-z0-9_$.-]+]], %[[V11]] = graph.fused (%[[V12]] = %[[V10]], %[[W_2:[A-Za-z0-9_$.-]+]] = %[[W_1]], %[[B_2:[A-Za-z0-9_$.-]+]] = %[[B_1]], %[[YS_4:[A-Za-z0-9_$.-]+]] = %[[YS_3]]) : (tensor<?x6xf32>, tensor<4x6xf32>, tensor<4xf32>, tensor<?x?x4xf32>) -> (tensor<?x4xf32>, tensor<?x?x4xf32>) {
// CHECK-NEXT: %[[V13]] = graph.dense %[[V12]], %[[W_2]], %[[B_2]] : (tensor<?x6xf32>, tensor<4x6xf32>, tensor<4xf32>) -> tensor<?x4xf32>
// CHECK-NEXT: %[[H2_1:[A-Za-z0-9_$.-]+]] = graph.tanh %[[V13]] : tensor<?x4xf32> -> tensor<?x4xf32>
// CHECK-NEXT: %[[V14]] = graph.unsqueeze %[[H2_1]] [0] : tensor<?x4xf32> -> tensor<1x?x4xf32>
// CHECK-NEXT: %[[V15:[A-Za-z0-9_$.-]+]] = graph.concat %[[YS_4]], %[[V14]] : (tensor<?x?x4xf32>, tensor<1x?x4xf32>) -> tensor<?x?x4xf32>
// CHECK-NEXT: graph.yield %[[H2_1]], %[[V15]] : tensor<?x4xf32>, tensor<?x?x4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: graph.yield %[[V9]], %[[H2]], %[[V11]] : index, tensor<?x4xf32>, tensor<?x?x4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: graph.yield %[[I_1]], %[[H_1]], %[[YS_1]] : index, tensor<?x4xf32>, tensor<?x?x4xf32>
// CHECK-NEXT: } attributes {nimble.spatial = @rnn_seq_rnn_0, nimble.spatial_args = array<i64: 4, 5, 6, 3, 1, 2>, nimble.spatial_counter = 0 : i64, nimble.spatial_stacked = array<i64: 2>}
// CHECK-NEXT: func.return %[[YS]] : tensor<?x?x4xf32>
// CHECK-NEXT: }
// CHECK-LABEL: loop.kernel @rnn_seq_rnn_0
// CHECK-SAME: (%[[XS:[A-Za-z0-9_$.-]+]]: memref<?x?x2xf32>, %[[W:[A-Za-z0-9_$.-]+]]: memref<4x6xf32>, %[[B:[A-Za-z0-9_$.-]+]]: memref<4xf32>, %[[STEPS:[A-Za-z0-9_$.-]+]]: index, %[[H0:[A-Za-z0-9_$.-]+]]: memref<?x4xf32>, %[[YS0:[A-Za-z0-9_$.-]+]]: memref<?x?x4xf32>, %[[H_OUT:[A-Za-z0-9_$.-]+]]: memref<?x4xf32>, %[[YS_OUT:[A-Za-z0-9_$.-]+]]: memref<?x?x4xf32>) attributes {nimble.device = "spatial"} {
// CHECK-NEXT: %[[V0:[A-Za-z0-9_$.-]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[V1:[A-Za-z0-9_$.-]+]] = arith.constant 1 : index
// CHECK-NEXT: %[[V2:[A-Za-z0-9_$.-]+]] = arith.constant 4 : index
// CHECK-NEXT: %[[V3:[A-Za-z0-9_$.-]+]] = arith.constant 6 : index
// CHECK-NEXT: %[[W_SRAM:[A-Za-z0-9_$.-]+]] = loop.alloc sram : memref<4x6xf32>
// CHECK-NEXT: loop.foreach %[[V4:[A-Za-z0-9_$.-]+]] = %[[V0]] to %[[V2]] step %[[V1]] {
// CHECK-NEXT: loop.foreach %[[V5:[A-Za-z0-9_$.-]+]] = %[[V0]] to %[[V3]] step %[[V1]] {
// CHECK-NEXT: %[[V6:[A-Za-z0-9_$.-]+]] = memref.load %[[W]][%[[V4]], %[[V5]]] : memref<4x6xf32>
// CHECK-NEXT: memref.store %[[V6]], %[[W_SRAM]][%[[V4]], %[[V5]]] : memref<4x6xf32>
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: %[[B_SRAM:[A-Za-z0-9_$.-]+]] = loop.alloc sram : memref<4xf32>
// CHECK-NEXT: loop.foreach %[[V7:[A-Za-z0-9_$.-]+]] = %[[V0]] to %[[V2]] step %[[V1]] {
// CHECK-NEXT: %[[V8:[A-Za-z0-9_$.-]+]] = memref.load %[[B]][%[[V7]]] : memref<4xf32>
// CHECK-NEXT: memref.store %[[V8]], %[[B_SRAM]][%[[V7]]] : memref<4xf32>
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: %[[V9:[A-Za-z0-9_$.-]+]] = memref.dim %[[H0]], %[[V0]] : memref<?x4xf32>
// CHECK-NEXT: %[[H0_STATE:[A-Za-z0-9_$.-]+]] = loop.alloc sram (%[[V9]]) : memref<?x4xf32>
// CHECK-NEXT: %[[H0_NEXT:[A-Za-z0-9_$.-]+]] = loop.alloc sram (%[[V9]]) : memref<?x4xf32>
// CHECK-NEXT: loop.foreach %[[V10:[A-Za-z0-9_$.-]+]] = %[[V0]] to %[[V9]] step %[[V1]] {
// CHECK-NEXT: loop.foreach %[[V11:[A-Za-z0-9_$.-]+]] = %[[V0]] to %[[V2]] step %[[V1]] {
// CHECK-NEXT: %[[V12:[A-Za-z0-9_$.-]+]] = memref.load %[[H0]][%[[V10]], %[[V11]]] : memref<?x4xf32>
// CHECK-NEXT: memref.store %[[V12]], %[[H0_STATE]][%[[V10]], %[[V11]]] : memref<?x4xf32>
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: %[[V13:[A-Za-z0-9_$.-]+]] = memref.dim %[[YS0]], %[[V0]] : memref<?x?x4xf32>
// CHECK-NEXT: %[[V14:[A-Za-z0-9_$.-]+]] = memref.dim %[[YS0]], %[[V1]] : memref<?x?x4xf32>
// CHECK-NEXT: loop.foreach %[[V15:[A-Za-z0-9_$.-]+]] = %[[V0]] to %[[V13]] step %[[V1]] {
// CHECK-NEXT: loop.foreach %[[V16:[A-Za-z0-9_$.-]+]] = %[[V0]] to %[[V14]] step %[[V1]] {
// CHECK-NEXT: loop.foreach %[[V17:[A-Za-z0-9_$.-]+]] = %[[V0]] to %[[V2]] step %[[V1]] {
// CHECK-NEXT: %[[V18:[A-Za-z0-9_$.-]+]] = memref.load %[[YS0]][%[[V15]], %[[V16]], %[[V17]]] : memref<?x?x4xf32>
// CHECK-NEXT: memref.store %[[V18]], %[[YS_OUT]][%[[V15]], %[[V16]], %[[V17]]] : memref<?x?x4xf32>
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: %[[V19:[A-Za-z0-9_$.-]+]] = memref.dim %[[YS_OUT]], %[[V1]] : memref<?x?x4xf32>
// CHECK-NEXT: %[[YS_OUT_ROWS:[A-Za-z0-9_$.-]+]] = loop.alloc sram (%[[V19]]) : memref<1x?x4xf32>
// CHECK-NEXT: %[[V20:[A-Za-z0-9_$.-]+]] = arith.constant 2 : index
// CHECK-NEXT: %[[V21:[A-Za-z0-9_$.-]+]] = arith.constant 3 : index
// CHECK-NEXT: scf.for %[[T:[A-Za-z0-9_$.-]+]] = %[[V0]] to %[[STEPS]] step %[[V1]] {
// CHECK-NEXT: %[[V22:[A-Za-z0-9_$.-]+]] = memref.dim %[[XS]], %[[V0]] : memref<?x?x2xf32>
// CHECK-NEXT: %[[V23:[A-Za-z0-9_$.-]+]] = arith.cmpi slt, %[[T]], %[[V0]] : index
// CHECK-NEXT: %[[V24:[A-Za-z0-9_$.-]+]] = arith.addi %[[T]], %[[V22]] : index
// CHECK-NEXT: %[[V25:[A-Za-z0-9_$.-]+]] = arith.select %[[V23]], %[[V24]], %[[T]] : index
// CHECK-NEXT: %[[V26:[A-Za-z0-9_$.-]+]] = arith.maxsi %[[V25]], %[[V0]] : index
// CHECK-NEXT: %[[V27:[A-Za-z0-9_$.-]+]] = arith.minsi %[[V26]], %[[V22]] : index
// CHECK-NEXT: %[[V28:[A-Za-z0-9_$.-]+]] = memref.dim %[[H0_STATE]], %[[V0]] : memref<?x4xf32>
// CHECK-NEXT: %[[XS_STAGE:[A-Za-z0-9_$.-]+]] = loop.alloc sram (%[[V28]]) : memref<?x6xf32>
// CHECK-NEXT: loop.foreach %[[V29:[A-Za-z0-9_$.-]+]] = %[[V0]] to %[[V28]] step %[[V1]] {
// CHECK-NEXT: loop.foreach %[[V30:[A-Za-z0-9_$.-]+]] = %[[V0]] to %[[V3]] step %[[V1]] {
// CHECK-NEXT: %[[V31:[A-Za-z0-9_$.-]+]] = arith.maxsi %[[V30]], %[[V0]] : index
// CHECK-NEXT: %[[V32:[A-Za-z0-9_$.-]+]] = arith.minsi %[[V31]], %[[V1]] : index
// CHECK-NEXT: %[[V33:[A-Za-z0-9_$.-]+]] = memref.load %[[XS]][%[[V27]], %[[V29]], %[[V32]]] : memref<?x?x2xf32>
// CHECK-NEXT: memref.store %[[V33]], %[[XS_STAGE]][%[[V29]], %[[V30]]] : memref<?x6xf32>
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.foreach %[[V34:[A-Za-z0-9_$.-]+]] = %[[V0]] to %[[V28]] step %[[V1]] {
// CHECK-NEXT: loop.foreach %[[V35:[A-Za-z0-9_$.-]+]] = %[[V0]] to %[[V2]] step %[[V1]] {
// CHECK-NEXT: %[[V36:[A-Za-z0-9_$.-]+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V37:[A-Za-z0-9_$.-]+]] = loop.reduce %[[V38:[A-Za-z0-9_$.-]+]] = %[[V0]] to %[[V3]] step %[[V1]] combine(add) init(%[[V36]]) : f32 {
// CHECK-NEXT: %[[V39:[A-Za-z0-9_$.-]+]] = memref.load %[[XS_STAGE]][%[[V34]], %[[V38]]] : memref<?x6xf32>
// CHECK-NEXT: %[[V40:[A-Za-z0-9_$.-]+]] = arith.subi %[[V38]], %[[V20]] : index
// CHECK-NEXT: %[[V41:[A-Za-z0-9_$.-]+]] = arith.maxsi %[[V40]], %[[V0]] : index
// CHECK-NEXT: %[[V42:[A-Za-z0-9_$.-]+]] = arith.minsi %[[V41]], %[[V21]] : index
// CHECK-NEXT: %[[V43:[A-Za-z0-9_$.-]+]] = memref.load %[[H0_STATE]][%[[V34]], %[[V42]]] : memref<?x4xf32>
// CHECK-NEXT: %[[V44:[A-Za-z0-9_$.-]+]] = arith.cmpi sge, %[[V38]], %[[V20]] : index
// CHECK-NEXT: %[[V45:[A-Za-z0-9_$.-]+]] = arith.select %[[V44]], %[[V43]], %[[V39]] : f32
// CHECK-NEXT: %[[V46:[A-Za-z0-9_$.-]+]] = memref.load %[[W_SRAM]][%[[V35]], %[[V38]]] : memref<4x6xf32>
// CHECK-NEXT: %[[V47:[A-Za-z0-9_$.-]+]] = arith.mulf %[[V45]], %[[V46]] : f32
// CHECK-NEXT: loop.yield %[[V47]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: %[[V48:[A-Za-z0-9_$.-]+]] = memref.load %[[B_SRAM]][%[[V35]]] : memref<4xf32>
// CHECK-NEXT: %[[V49:[A-Za-z0-9_$.-]+]] = arith.addf %[[V37]], %[[V48]] : f32
// CHECK-NEXT: %[[V50:[A-Za-z0-9_$.-]+]] = math.tanh %[[V49]] : f32
// CHECK-NEXT: memref.store %[[V50]], %[[H0_NEXT]][%[[V34]], %[[V35]]] : memref<?x4xf32>
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: %[[XS_STAGE_1:[A-Za-z0-9_$.-]+]] = loop.alloc sram (%[[V28]]) : memref<?x6xf32>
// CHECK-NEXT: loop.foreach %[[V51:[A-Za-z0-9_$.-]+]] = %[[V0]] to %[[V28]] step %[[V1]] {
// CHECK-NEXT: loop.foreach %[[V52:[A-Za-z0-9_$.-]+]] = %[[V0]] to %[[V3]] step %[[V1]] {
// CHECK-NEXT: %[[V53:[A-Za-z0-9_$.-]+]] = arith.maxsi %[[V52]], %[[V0]] : index
// CHECK-NEXT: %[[V54:[A-Za-z0-9_$.-]+]] = arith.minsi %[[V53]], %[[V1]] : index
// CHECK-NEXT: %[[V55:[A-Za-z0-9_$.-]+]] = memref.load %[[XS]][%[[V27]], %[[V51]], %[[V54]]] : memref<?x?x2xf32>
// CHECK-NEXT: memref.store %[[V55]], %[[XS_STAGE_1]][%[[V51]], %[[V52]]] : memref<?x6xf32>
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.foreach %[[V56:[A-Za-z0-9_$.-]+]] = %[[V0]] to %[[V1]] step %[[V1]] {
// CHECK-NEXT: loop.foreach %[[V57:[A-Za-z0-9_$.-]+]] = %[[V0]] to %[[V28]] step %[[V1]] {
// CHECK-NEXT: loop.foreach %[[V58:[A-Za-z0-9_$.-]+]] = %[[V0]] to %[[V2]] step %[[V1]] {
// CHECK-NEXT: %[[V59:[A-Za-z0-9_$.-]+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V60:[A-Za-z0-9_$.-]+]] = loop.reduce %[[V61:[A-Za-z0-9_$.-]+]] = %[[V0]] to %[[V3]] step %[[V1]] combine(add) init(%[[V59]]) : f32 {
// CHECK-NEXT: %[[V62:[A-Za-z0-9_$.-]+]] = memref.load %[[XS_STAGE_1]][%[[V57]], %[[V61]]] : memref<?x6xf32>
// CHECK-NEXT: %[[V63:[A-Za-z0-9_$.-]+]] = arith.subi %[[V61]], %[[V20]] : index
// CHECK-NEXT: %[[V64:[A-Za-z0-9_$.-]+]] = arith.maxsi %[[V63]], %[[V0]] : index
// CHECK-NEXT: %[[V65:[A-Za-z0-9_$.-]+]] = arith.minsi %[[V64]], %[[V21]] : index
// CHECK-NEXT: %[[V66:[A-Za-z0-9_$.-]+]] = memref.load %[[H0_STATE]][%[[V57]], %[[V65]]] : memref<?x4xf32>
// CHECK-NEXT: %[[V67:[A-Za-z0-9_$.-]+]] = arith.cmpi sge, %[[V61]], %[[V20]] : index
// CHECK-NEXT: %[[V68:[A-Za-z0-9_$.-]+]] = arith.select %[[V67]], %[[V66]], %[[V62]] : f32
// CHECK-NEXT: %[[V69:[A-Za-z0-9_$.-]+]] = memref.load %[[W_SRAM]][%[[V58]], %[[V61]]] : memref<4x6xf32>
// CHECK-NEXT: %[[V70:[A-Za-z0-9_$.-]+]] = arith.mulf %[[V68]], %[[V69]] : f32
// CHECK-NEXT: loop.yield %[[V70]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: %[[V71:[A-Za-z0-9_$.-]+]] = memref.load %[[B_SRAM]][%[[V58]]] : memref<4xf32>
// CHECK-NEXT: %[[V72:[A-Za-z0-9_$.-]+]] = arith.addf %[[V60]], %[[V71]] : f32
// CHECK-NEXT: %[[V73:[A-Za-z0-9_$.-]+]] = math.tanh %[[V72]] : f32
// CHECK-NEXT: memref.store %[[V73]], %[[YS_OUT_ROWS]][%[[V56]], %[[V57]], %[[V58]]] : memref<1x?x4xf32>
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.foreach %[[V74:[A-Za-z0-9_$.-]+]] = %[[V0]] to %[[V9]] step %[[V1]] {
// CHECK-NEXT: loop.foreach %[[V75:[A-Za-z0-9_$.-]+]] = %[[V0]] to %[[V2]] step %[[V1]] {
// CHECK-NEXT: %[[V76:[A-Za-z0-9_$.-]+]] = memref.load %[[H0_NEXT]][%[[V74]], %[[V75]]] : memref<?x4xf32>
// CHECK-NEXT: memref.store %[[V76]], %[[H0_STATE]][%[[V74]], %[[V75]]] : memref<?x4xf32>
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: %[[V77:[A-Za-z0-9_$.-]+]] = arith.addi %[[V13]], %[[T]] : index
// CHECK-NEXT: %[[V78:[A-Za-z0-9_$.-]+]] = memref.dim %[[YS_OUT_ROWS]], %[[V1]] : memref<1x?x4xf32>
// CHECK-NEXT: loop.foreach %[[V79:[A-Za-z0-9_$.-]+]] = %[[V0]] to %[[V1]] step %[[V1]] {
// CHECK-NEXT: loop.foreach %[[V80:[A-Za-z0-9_$.-]+]] = %[[V0]] to %[[V78]] step %[[V1]] {
// CHECK-NEXT: loop.foreach %[[V81:[A-Za-z0-9_$.-]+]] = %[[V0]] to %[[V2]] step %[[V1]] {
// CHECK-NEXT: %[[V82:[A-Za-z0-9_$.-]+]] = memref.load %[[YS_OUT_ROWS]][%[[V79]], %[[V80]], %[[V81]]] : memref<1x?x4xf32>
// CHECK-NEXT: %[[V83:[A-Za-z0-9_$.-]+]] = arith.addi %[[V77]], %[[V79]] : index
// CHECK-NEXT: memref.store %[[V82]], %[[YS_OUT]][%[[V83]], %[[V80]], %[[V81]]] : memref<?x?x4xf32>
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: loop.foreach %[[V84:[A-Za-z0-9_$.-]+]] = %[[V0]] to %[[V9]] step %[[V1]] {
// CHECK-NEXT: loop.foreach %[[V85:[A-Za-z0-9_$.-]+]] = %[[V0]] to %[[V2]] step %[[V1]] {
// CHECK-NEXT: %[[V86:[A-Za-z0-9_$.-]+]] = memref.load %[[H0_STATE]][%[[V84]], %[[V85]]] : memref<?x4xf32>
// CHECK-NEXT: memref.store %[[V86]], %[[H_OUT]][%[[V84]], %[[V85]]] : memref<?x4xf32>
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.return
// CHECK-NEXT: }
// Every step's h stacked (ys = concat(ys, h[None])): the initial rows are copied to the
// output first, each step's row is staged in SRAM and written at ys0's length + t.
func.func @rnn_seq(%xs: tensor<?x?x2xf32>, %h0: tensor<?x4xf32>, %ys0: tensor<?x?x4xf32>, %w: tensor<4x6xf32>, %b: tensor<4xf32>) -> tensor<?x?x4xf32> {
  %0 = dynshape.dim %xs, 1 : tensor<?x?x2xf32>
  %1 = dynshape.dim %h0, 0 : tensor<?x4xf32>
  %2 = arith.cmpi eq, %0, %1 : index
  dynshape.assert %2, "dim 0 of %h0 must equal dim 1 of %xs (both are 'n')" dims(%1, %0) {nimble.named_dim = "n"}
  %3 = dynshape.dim %ys0, 1 : tensor<?x?x4xf32>
  %4 = arith.cmpi eq, %0, %3 : index
  dynshape.assert %4, "dim 1 of %ys0 must equal dim 1 of %xs (both are 'n')" dims(%3, %0) {nimble.named_dim = "n"}
  %steps = dynshape.dim %xs, 0 : tensor<?x?x2xf32>
  %5 = arith.constant 0 : index
  %i, %h, %ys = graph.while (%i_1 = %5, %h_1 = %h0, %ys_1 = %ys0) : (index, tensor<?x4xf32>, tensor<?x?x4xf32>) -> (index, tensor<?x4xf32>, tensor<?x?x4xf32>) {
    %6 = arith.cmpi slt, %i_1, %steps : index
    graph.condition %6 : i1
  } do {
  ^bb0(%i_2: index, %h_2: tensor<?x4xf32>, %ys_2: tensor<?x?x4xf32>):
    %7 = arith.constant 1 : index
    %8 = arith.addi %i_2, %7 : index
    %9 = graph.fused (%xs_1 = %xs, %i_3 = %i_2, %10 = %8, %h_3 = %h_2) : (tensor<?x?x2xf32>, index, index, tensor<?x4xf32>) -> tensor<?x6xf32> {
      %11 = graph.slice %xs_1[%i_3:%10, :, :] : tensor<?x?x2xf32> -> tensor<?x?x2xf32>
      %12 = graph.squeeze %11 [0] : tensor<?x?x2xf32> -> tensor<?x2xf32>
      %13 = graph.concat %12, %h_3 {axis = 1 : i64} : (tensor<?x2xf32>, tensor<?x4xf32>) -> tensor<?x6xf32>
      graph.yield %13 : tensor<?x6xf32>
    }
    %h2, %10 = graph.fused (%11 = %9, %w_1 = %w, %b_1 = %b, %ys_3 = %ys_2) : (tensor<?x6xf32>, tensor<4x6xf32>, tensor<4xf32>, tensor<?x?x4xf32>) -> (tensor<?x4xf32>, tensor<?x?x4xf32>) {
      %12 = graph.dense %11, %w_1, %b_1 : (tensor<?x6xf32>, tensor<4x6xf32>, tensor<4xf32>) -> tensor<?x4xf32>
      %h2_1 = graph.tanh %12 : tensor<?x4xf32> -> tensor<?x4xf32>
      %13 = graph.unsqueeze %h2_1 [0] : tensor<?x4xf32> -> tensor<1x?x4xf32>
      %14 = graph.concat %ys_3, %13 : (tensor<?x?x4xf32>, tensor<1x?x4xf32>) -> tensor<?x?x4xf32>
      graph.yield %h2_1, %14 : tensor<?x4xf32>, tensor<?x?x4xf32>
    }
    graph.yield %8, %h2, %10 : index, tensor<?x4xf32>, tensor<?x?x4xf32>
  }
  func.return %ys : tensor<?x?x4xf32>
}

// -----

// CHECK-LABEL: func.func @from_one
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<4xf32>, %[[N:[A-Za-z0-9_$.-]+]]: index) -> tensor<4xf32> {
// CHECK-NEXT: %[[V0:[A-Za-z0-9_$.-]+]] = arith.constant 1 : index
// CHECK-NEXT: %[[I:[A-Za-z0-9_$.-]+]], %[[Y:[A-Za-z0-9_$.-]+]] = graph.while (%[[I_1:[A-Za-z0-9_$.-]+]] = %[[V0]], %[[Y_1:[A-Za-z0-9_$.-]+]] = %[[X]]) : (index, tensor<4xf32>) -> (index, tensor<4xf32>) {
// CHECK-NEXT: %[[V1:[A-Za-z0-9_$.-]+]] = arith.cmpi slt, %[[I_1]], %[[N]] : index
// CHECK-NEXT: graph.condition %[[V1]] : i1
// CHECK-NEXT: } do {
// CHECK-NEXT: ^bb0(%[[I_2:[A-Za-z0-9_$.-]+]]: index, %[[Y_2:[A-Za-z0-9_$.-]+]]: tensor<4xf32>):
// CHECK-NEXT: %[[V2:[A-Za-z0-9_$.-]+]] = arith.addi %[[I_2]], %[[V0]] : index
// CHECK-NEXT: %[[V3:[A-Za-z0-9_$.-]+]] = graph.constant dense<2.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[V4:[A-Za-z0-9_$.-]+]] = graph.mul %[[Y_2]], %[[V3]] : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
// CHECK-NEXT: graph.yield %[[V2]], %[[V4]] : index, tensor<4xf32>
// CHECK-NEXT: } attributes {nimble.spatial_skipped = "the counter does not start at 0"}
// CHECK-NEXT: func.return %[[Y]] : tensor<4xf32>
// CHECK-NEXT: }
// A loop whose counter starts at 1 is not a recurrence: it stays, with the reason.
func.func @from_one(%x: tensor<4xf32>, %n: index) -> tensor<4xf32> {
  %0 = arith.constant 1 : index
  %i, %y = graph.while (%i_1 = %0, %y_1 = %x) : (index, tensor<4xf32>) -> (index, tensor<4xf32>) {
    %1 = arith.cmpi slt, %i_1, %n : index
    graph.condition %1 : i1
  } do {
  ^bb0(%i_2: index, %y_2: tensor<4xf32>):
    %2 = arith.addi %i_2, %0 : index
    %3 = graph.constant dense<2.000000e+00> : tensor<f32>
    %4 = graph.mul %y_2, %3 : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
    graph.yield %2, %4 : index, tensor<4xf32>
  }
  func.return %y : tensor<4xf32>
}
