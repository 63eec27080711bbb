// RUN: nimble-opt %s --cpu skylake-avx512 --split-input-file -p 'lower-rnn-to-kernels,canonicalize,cse' | filecheck %s

// A counted loop over a cell: one kernel with the time loop inside; the reduction over
// concat(x, h) is split at the concatenation, the x part computed for every step before
// the loop (rows of one product), each part reading its columns of the weights from a
// compact copy (w_cols0, w_cols2); the host keeps the loop in a group marked
// nimble.recurrence; the kernel is nimble.cooperative (its chunks share every step).

// CHECK-LABEL: func.func @rnn
// CHECK-SAME: (%[[XS:[A-Za-z0-9_$.-]+]]: tensor<?x?x2xf32>, %[[H0:[A-Za-z0-9_$.-]+]]: tensor<?x4xf32>, %[[W:[A-Za-z0-9_$.-]+]]: tensor<4x6xf32>, %[[B:[A-Za-z0-9_$.-]+]]: tensor<4xf32>) -> tensor<?x4xf32> {
// CHECK-NEXT: %[[V0:[A-Za-z0-9_$.-]+]] = dynshape.dim %[[XS]], 1 : tensor<?x?x2xf32>
// CHECK-NEXT: %[[V1:[A-Za-z0-9_$.-]+]] = dynshape.dim %[[H0]], 0 : tensor<?x4xf32>
// CHECK-NEXT: %[[V2:[A-Za-z0-9_$.-]+]] = arith.cmpi eq, %[[V0]], %[[V1]] : index
// CHECK-NEXT: dynshape.assert %[[V2]], "dim 0 of %[[H0]] must equal dim 1 of %[[XS]] (both are 'n')" dims(%[[V1]], %[[V0]]) {nimble.named_dim = "n"}
// CHECK-NEXT: %[[STEPS:[A-Za-z0-9_$.-]+]] = dynshape.dim %[[XS]], 0 : tensor<?x?x2xf32>
// CHECK-NEXT: %[[H:[A-Za-z0-9_$.-]+]] = graph.fused (%[[XS_1:[A-Za-z0-9_$.-]+]] = %[[XS]], %[[W_1:[A-Za-z0-9_$.-]+]] = %[[W]], %[[B_1:[A-Za-z0-9_$.-]+]] = %[[B]], %[[STEPS_1:[A-Za-z0-9_$.-]+]] = %[[STEPS]], %[[H0_1:[A-Za-z0-9_$.-]+]] = %[[H0]]) : (tensor<?x?x2xf32>, tensor<4x6xf32>, tensor<4xf32>, index, tensor<?x4xf32>) -> tensor<?x4xf32> {
// CHECK-NEXT: %[[V3:[A-Za-z0-9_$.-]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[V4:[A-Za-z0-9_$.-]+]], %[[V5:[A-Za-z0-9_$.-]+]] = graph.while (%[[I:[A-Za-z0-9_$.-]+]] = %[[V3]], %[[H_1:[A-Za-z0-9_$.-]+]] = %[[H0_1]]) : (index, tensor<?x4xf32>) -> (index, tensor<?x4xf32>) {
// CHECK-NEXT: %[[V6:[A-Za-z0-9_$.-]+]] = arith.cmpi slt, %[[I]], %[[STEPS_1]] : index
// CHECK-NEXT: graph.condition %[[V6]] : i1
// CHECK-NEXT: } do {
// CHECK-NEXT: ^bb0(%[[V7:[A-Za-z0-9_$.-]+]]: index, %[[V8:[A-Za-z0-9_$.-]+]]: tensor<?x4xf32>):
// CHECK-NEXT: %[[V9:[A-Za-z0-9_$.-]+]] = arith.constant 1 : index
// CHECK-NEXT: %[[V10:[A-Za-z0-9_$.-]+]] = arith.addi %[[V7]], %[[V9]] : index
// CHECK-NEXT: %[[V11:[A-Za-z0-9_$.-]+]] = graph.slice %[[XS_1]][%[[V7]]:%[[V10]], :, :] : tensor<?x?x2xf32> -> tensor<?x?x2xf32>
// CHECK-NEXT: %[[V12:[A-Za-z0-9_$.-]+]] = graph.squeeze %[[V11]] [0] : tensor<?x?x2xf32> -> tensor<?x2xf32>
// CHECK-NEXT: %[[V13:[A-Za-z0-9_$.-]+]] = graph.concat %[[V12]], %[[V8]] {axis = 1 : i64} : (tensor<?x2xf32>, tensor<?x4xf32>) -> tensor<?x6xf32>
// CHECK-NEXT: %[[V14:[A-Za-z0-9_$.-]+]] = graph.dense %[[V13]], %[[W_1]], %[[B_1]] : (tensor<?x6xf32>, tensor<4x6xf32>, tensor<4xf32>) -> tensor<?x4xf32>
// CHECK-NEXT: %[[V15:[A-Za-z0-9_$.-]+]] = graph.tanh %[[V14]] : tensor<?x4xf32> -> tensor<?x4xf32>
// CHECK-NEXT: graph.yield %[[V10]], %[[V15]] : index, tensor<?x4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: graph.yield %[[V5]] : tensor<?x4xf32>
// CHECK-NEXT: } attributes {nimble.kernel = @rnn_rnn_0, nimble.recurrence}
// CHECK-NEXT: func.return %[[H]] : tensor<?x4xf32>
// CHECK-NEXT: }
// CHECK-LABEL: loop.kernel @rnn_rnn_0
// CHECK-SAME: (%[[XS:[A-Za-z0-9_$.-]+]]: memref<?x?x2xf32>, %[[W:[A-Za-z0-9_$.-]+]]: memref<4x6xf32>, %[[B:[A-Za-z0-9_$.-]+]]: memref<4xf32>, %[[STEPS:[A-Za-z0-9_$.-]+]]: index, %[[H0:[A-Za-z0-9_$.-]+]]: memref<?x4xf32>, %[[H_OUT:[A-Za-z0-9_$.-]+]]: memref<?x4xf32>) attributes {nimble.cooperative} {
// CHECK-NEXT: %[[V0:[A-Za-z0-9_$.-]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[V1:[A-Za-z0-9_$.-]+]] = arith.constant 1 : index
// CHECK-NEXT: %[[V2:[A-Za-z0-9_$.-]+]] = arith.constant 2 : index
// CHECK-NEXT: %[[V3:[A-Za-z0-9_$.-]+]] = arith.constant 4 : index
// CHECK-NEXT: %[[W_COLS2:[A-Za-z0-9_$.-]+]] = loop.alloc dram : memref<4x4xf32>
// CHECK-NEXT: loop.foreach %[[V4:[A-Za-z0-9_$.-]+]] = %[[V0]] to %[[V3]] step %[[V1]] {
// CHECK-NEXT: loop.foreach %[[V5:[A-Za-z0-9_$.-]+]] = %[[V0]] to %[[V3]] step %[[V1]] {
// CHECK-NEXT: %[[V6:[A-Za-z0-9_$.-]+]] = arith.addi %[[V5]], %[[V2]] : index
// CHECK-NEXT: %[[V7:[A-Za-z0-9_$.-]+]] = memref.load %[[W]][%[[V4]], %[[V6]]] : memref<4x6xf32>
// CHECK-NEXT: memref.store %[[V7]], %[[W_COLS2]][%[[V4]], %[[V5]]] : memref<4x4xf32>
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: %[[W_COLS0:[A-Za-z0-9_$.-]+]] = loop.alloc dram : memref<4x2xf32>
// CHECK-NEXT: loop.foreach %[[V8:[A-Za-z0-9_$.-]+]] = %[[V0]] to %[[V3]] step %[[V1]] {
// CHECK-NEXT: loop.foreach %[[V9:[A-Za-z0-9_$.-]+]] = %[[V0]] to %[[V2]] step %[[V1]] {
// CHECK-NEXT: %[[V10:[A-Za-z0-9_$.-]+]] = memref.load %[[W]][%[[V8]], %[[V9]]] : memref<4x6xf32>
// CHECK-NEXT: memref.store %[[V10]], %[[W_COLS0]][%[[V8]], %[[V9]]] : memref<4x2xf32>
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: %[[V11:[A-Za-z0-9_$.-]+]] = memref.dim %[[H0]], %[[V0]] : memref<?x4xf32>
// CHECK-NEXT: %[[H0_STATE:[A-Za-z0-9_$.-]+]] = loop.alloc sram (%[[V11]]) : memref<?x4xf32>
// CHECK-NEXT: %[[H0_NEXT:[A-Za-z0-9_$.-]+]] = loop.alloc sram (%[[V11]]) : memref<?x4xf32>
// CHECK-NEXT: loop.foreach %[[V12:[A-Za-z0-9_$.-]+]] = %[[V0]] to %[[V11]] step %[[V1]] {
// CHECK-NEXT: loop.foreach %[[V13:[A-Za-z0-9_$.-]+]] = %[[V0]] to %[[V3]] step %[[V1]] {
// CHECK-NEXT: %[[V14:[A-Za-z0-9_$.-]+]] = memref.load %[[H0]][%[[V12]], %[[V13]]] : memref<?x4xf32>
// CHECK-NEXT: memref.store %[[V14]], %[[H0_STATE]][%[[V12]], %[[V13]]] : memref<?x4xf32>
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: %[[V15:[A-Za-z0-9_$.-]+]] = arith.maxsi %[[STEPS]], %[[V0]] : index
// CHECK-NEXT: %[[V16:[A-Za-z0-9_$.-]+]] = memref.dim %[[XS]], %[[V0]] : memref<?x?x2xf32>
// CHECK-NEXT: %[[V17:[A-Za-z0-9_$.-]+]] = memref.dim %[[H0_STATE]], %[[V0]] : memref<?x4xf32>
// CHECK-NEXT: %[[PROJECTED:[A-Za-z0-9_$.-]+]] = loop.alloc dram (%[[V15]], %[[V17]]) : memref<?x?x1x4xf32>
// CHECK-NEXT: %[[V18:[A-Za-z0-9_$.-]+]] = arith.constant 32768 : index
// CHECK-NEXT: loop.foreach %[[V19:[A-Za-z0-9_$.-]+]] = %[[V0]] to %[[V17]] step %[[V1]] {
// CHECK-NEXT: loop.foreach %[[V20:[A-Za-z0-9_$.-]+]] = %[[V0]] to %[[V3]] step %[[V18]] schedule #loop.schedule<> {
// CHECK-NEXT: %[[V21:[A-Za-z0-9_$.-]+]] = arith.subi %[[V3]], %[[V20]] : index
// CHECK-NEXT: %[[V22:[A-Za-z0-9_$.-]+]] = arith.minsi %[[V21]], %[[V18]] : index
// CHECK-NEXT: loop.foreach %[[V23:[A-Za-z0-9_$.-]+]] = %[[V0]] to %[[V15]] step %[[V1]] schedule #loop.schedule<unroll = 4> {
// CHECK-NEXT: %[[V24:[A-Za-z0-9_$.-]+]] = arith.minsi %[[V23]], %[[V16]] : index
// CHECK-NEXT: loop.foreach %[[V25:[A-Za-z0-9_$.-]+]] = %[[V0]] to %[[V22]] step %[[V1]] schedule #loop.schedule<> {
// CHECK-NEXT: %[[V26:[A-Za-z0-9_$.-]+]] = arith.addi %[[V20]], %[[V25]] : index
// CHECK-NEXT: %[[V27:[A-Za-z0-9_$.-]+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V28:[A-Za-z0-9_$.-]+]] = loop.reduce %[[V29:[A-Za-z0-9_$.-]+]] = %[[V0]] to %[[V2]] step %[[V1]] combine(add) init(%[[V27]]) : f32 schedule #loop.schedule<vector = 16> {
// CHECK-NEXT: %[[V30:[A-Za-z0-9_$.-]+]] = memref.load %[[XS]][%[[V24]], %[[V19]], %[[V29]]] : memref<?x?x2xf32>
// CHECK-NEXT: %[[V31:[A-Za-z0-9_$.-]+]] = memref.load %[[W_COLS0]][%[[V26]], %[[V29]]] : memref<4x2xf32>
// CHECK-NEXT: %[[V32:[A-Za-z0-9_$.-]+]] = arith.mulf %[[V30]], %[[V31]] : f32
// CHECK-NEXT: loop.yield %[[V32]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: memref.store %[[V28]], %[[PROJECTED]][%[[V23]], %[[V19]], %[[V0]], %[[V26]]] : memref<?x?x1x4xf32>
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: %[[V33:[A-Za-z0-9_$.-]+]] = arith.constant 6 : index
// CHECK-NEXT: scf.for %[[T:[A-Za-z0-9_$.-]+]] = %[[V0]] to %[[STEPS]] step %[[V1]] {
// CHECK-NEXT: loop.foreach %[[V34:[A-Za-z0-9_$.-]+]] = %[[V0]] to %[[V17]] step %[[V1]] {
// CHECK-NEXT: loop.foreach %[[V35:[A-Za-z0-9_$.-]+]] = %[[V0]] to %[[V3]] step %[[V1]] {
// CHECK-NEXT: %[[V36:[A-Za-z0-9_$.-]+]] = memref.load %[[PROJECTED]][%[[T]], %[[V34]], %[[V0]], %[[V35]]] : memref<?x?x1x4xf32>
// CHECK-NEXT: %[[V37:[A-Za-z0-9_$.-]+]] = loop.reduce %[[V38:[A-Za-z0-9_$.-]+]] = %[[V2]] to %[[V33]] step %[[V1]] combine(add) init(%[[V36]]) : f32 {
// CHECK-NEXT: %[[V39:[A-Za-z0-9_$.-]+]] = arith.subi %[[V38]], %[[V2]] : index
// CHECK-NEXT: %[[V40:[A-Za-z0-9_$.-]+]] = memref.load %[[H0_STATE]][%[[V34]], %[[V39]]] : memref<?x4xf32>
// CHECK-NEXT: %[[V41:[A-Za-z0-9_$.-]+]] = memref.load %[[W_COLS2]][%[[V35]], %[[V39]]] : memref<4x4xf32>
// CHECK-NEXT: %[[V42:[A-Za-z0-9_$.-]+]] = arith.mulf %[[V40]], %[[V41]] : f32
// CHECK-NEXT: loop.yield %[[V42]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: %[[V43:[A-Za-z0-9_$.-]+]] = memref.load %[[B]][%[[V35]]] : memref<4xf32>
// CHECK-NEXT: %[[V44:[A-Za-z0-9_$.-]+]] = arith.addf %[[V37]], %[[V43]] : f32
// CHECK-NEXT: %[[V45:[A-Za-z0-9_$.-]+]] = math.tanh %[[V44]] : f32
// CHECK-NEXT: memref.store %[[V45]], %[[H0_NEXT]][%[[V34]], %[[V35]]] : memref<?x4xf32>
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.foreach %[[V46:[A-Za-z0-9_$.-]+]] = %[[V0]] to %[[V11]] step %[[V1]] {
// CHECK-NEXT: loop.foreach %[[V47:[A-Za-z0-9_$.-]+]] = %[[V0]] to %[[V3]] step %[[V1]] {
// CHECK-NEXT: %[[V48:[A-Za-z0-9_$.-]+]] = memref.load %[[H0_NEXT]][%[[V46]], %[[V47]]] : memref<?x4xf32>
// CHECK-NEXT: memref.store %[[V48]], %[[H0_STATE]][%[[V46]], %[[V47]]] : memref<?x4xf32>
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: loop.foreach %[[V49:[A-Za-z0-9_$.-]+]] = %[[V0]] to %[[V11]] step %[[V1]] {
// CHECK-NEXT: loop.foreach %[[V50:[A-Za-z0-9_$.-]+]] = %[[V0]] to %[[V3]] step %[[V1]] {
// CHECK-NEXT: %[[V51:[A-Za-z0-9_$.-]+]] = memref.load %[[H0_STATE]][%[[V49]], %[[V50]]] : memref<?x4xf32>
// CHECK-NEXT: memref.store %[[V51]], %[[H_OUT]][%[[V49]], %[[V50]]] : memref<?x4xf32>
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.return
// CHECK-NEXT: }
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
