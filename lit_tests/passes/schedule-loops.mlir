// RUN: nimble-opt %s --split-input-file -p lower-graph-to-loops,canonicalize,cse,schedule-loops | filecheck %s

// A matmul: 6 x 64 register tiles over panels of B. The rows are known at run time, so
// the nest is split at `cut`: whole panels packed when there are at least 4 rows, the
// other columns (all of them for fewer rows) reading B in place.
// CHECK-LABEL: func.func @matmul_gets_register_tile
// CHECK-SAME: (%[[A:[A-Za-z0-9_$.-]+]]: tensor<?x64xf32>, %[[B:[A-Za-z0-9_$.-]+]]: tensor<64x?xf32>) -> tensor<?x?xf32> {
// CHECK-NEXT: %[[C:[A-Za-z0-9_$.-]+]] = graph.fused (%[[A_1:[A-Za-z0-9_$.-]+]] = %[[A]], %[[B_1:[A-Za-z0-9_$.-]+]] = %[[B]]) : (tensor<?x64xf32>, tensor<64x?xf32>) -> tensor<?x?xf32> {
// CHECK-NEXT: %[[C_1:[A-Za-z0-9_$.-]+]] = graph.matmul %[[A_1]], %[[B_1]] : (tensor<?x64xf32>, tensor<64x?xf32>) -> tensor<?x?xf32>
// CHECK-NEXT: graph.yield %[[C_1]] : tensor<?x?xf32>
// CHECK-NEXT: } attributes {kernel = @matmul_gets_register_tile_matmul_0}
// CHECK-NEXT: func.return %[[C]] : tensor<?x?xf32>
// CHECK-NEXT: }
// CHECK-LABEL: func.func @matmul_gets_register_tile_matmul_0
// CHECK-SAME: (%[[V0:[A-Za-z0-9_$.-]+]]: memref<?x64xf32>, %[[V1:[A-Za-z0-9_$.-]+]]: memref<64x?xf32>, %[[V2:[A-Za-z0-9_$.-]+]]: memref<?x?xf32>) attributes {nimble.kernel = "matmul_gets_register_tile_matmul_0", nimble.work = 64 : i64} {
// CHECK-NEXT: %[[V3:[A-Za-z0-9_$.-]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[V4:[A-Za-z0-9_$.-]+]] = memref.dim %[[V0]], %[[V3]] : memref<?x64xf32>
// CHECK-NEXT: %[[V5:[A-Za-z0-9_$.-]+]] = arith.constant 1 : index
// CHECK-NEXT: %[[V6:[A-Za-z0-9_$.-]+]] = memref.dim %[[V1]], %[[V5]] : memref<64x?xf32>
// CHECK-NEXT: %[[V7:[A-Za-z0-9_$.-]+]] = arith.constant 64 : index
// CHECK-NEXT: %[[V8:[A-Za-z0-9_$.-]+]] = arith.constant 64 : index
// CHECK-NEXT: %[[V9:[A-Za-z0-9_$.-]+]] = arith.remsi %[[V6]], %[[V8]] : index
// CHECK-NEXT: %[[V10:[A-Za-z0-9_$.-]+]] = arith.subi %[[V6]], %[[V9]] : index
// CHECK-NEXT: %[[V11:[A-Za-z0-9_$.-]+]] = arith.constant 4 : index
// CHECK-NEXT: %[[V12:[A-Za-z0-9_$.-]+]] = arith.cmpi sge, %[[V4]], %[[V11]] : index
// CHECK-NEXT: %[[V13:[A-Za-z0-9_$.-]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[V14:[A-Za-z0-9_$.-]+]] = arith.select %[[V12]], %[[V10]], %[[V13]] : index
// CHECK-NEXT: %[[V15:[A-Za-z0-9_$.-]+]] = arith.subi %[[V6]], %[[V14]] : index
// CHECK-NEXT: loop.foreach %[[V16:[A-Za-z0-9_$.-]+]] = %[[V3]] to %[[V4]] step %[[V5]] schedule #loop.schedule<unroll = 6, parallel> {
// CHECK-NEXT: loop.foreach %[[V17:[A-Za-z0-9_$.-]+]] = %[[V3]] to %[[V14]] step %[[V5]] schedule #loop.schedule<vector = 16, unroll = 4, pack> {
// CHECK-NEXT: %[[V18:[A-Za-z0-9_$.-]+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V19:[A-Za-z0-9_$.-]+]] = loop.reduce %[[V20:[A-Za-z0-9_$.-]+]] = %[[V3]] to %[[V7]] step %[[V5]] combine(add) init(%[[V18]]) : f32 schedule #loop.schedule<unroll = 4> {
// CHECK-NEXT: %[[V21:[A-Za-z0-9_$.-]+]] = memref.load %[[V0]][%[[V16]], %[[V20]]] : memref<?x64xf32>
// CHECK-NEXT: %[[V22:[A-Za-z0-9_$.-]+]] = memref.load %[[V1]][%[[V20]], %[[V17]]] : memref<64x?xf32>
// CHECK-NEXT: %[[V23:[A-Za-z0-9_$.-]+]] = arith.mulf %[[V21]], %[[V22]] : f32
// CHECK-NEXT: loop.yield %[[V23]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: memref.store %[[V19]], %[[V2]][%[[V16]], %[[V17]]] : memref<?x?xf32>
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.foreach %[[V24:[A-Za-z0-9_$.-]+]] = %[[V3]] to %[[V4]] step %[[V5]] schedule #loop.schedule<unroll = 6, parallel> {
// CHECK-NEXT: loop.foreach %[[V25:[A-Za-z0-9_$.-]+]] = %[[V3]] to %[[V15]] step %[[V5]] schedule #loop.schedule<vector = 16, unroll = 4> {
// CHECK-NEXT: %[[V26:[A-Za-z0-9_$.-]+]] = arith.addi %[[V14]], %[[V25]] : index
// CHECK-NEXT: %[[V27:[A-Za-z0-9_$.-]+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V28:[A-Za-z0-9_$.-]+]] = loop.reduce %[[V29:[A-Za-z0-9_$.-]+]] = %[[V3]] to %[[V7]] step %[[V5]] combine(add) init(%[[V27]]) : f32 schedule #loop.schedule<unroll = 4> {
// CHECK-NEXT: %[[V30:[A-Za-z0-9_$.-]+]] = memref.load %[[V0]][%[[V24]], %[[V29]]] : memref<?x64xf32>
// CHECK-NEXT: %[[V31:[A-Za-z0-9_$.-]+]] = memref.load %[[V1]][%[[V29]], %[[V26]]] : memref<64x?xf32>
// CHECK-NEXT: %[[V32:[A-Za-z0-9_$.-]+]] = arith.mulf %[[V30]], %[[V31]] : f32
// CHECK-NEXT: loop.yield %[[V32]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: memref.store %[[V28]], %[[V2]][%[[V24]], %[[V26]]] : memref<?x?xf32>
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: func.return
// CHECK-NEXT: }

func.func @matmul_gets_register_tile(%a: tensor<?x64xf32>, %b: tensor<64x?xf32>) -> tensor<?x?xf32> {
  %c = graph.matmul %a, %b : (tensor<?x64xf32>, tensor<64x?xf32>) -> tensor<?x?xf32>
  func.return %c : tensor<?x?xf32>
}

// -----

// A dense layer narrower than a panel (32 < 64 columns): dot products along k only.
// CHECK-LABEL: func.func @dense_gets_dot_products
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<?x64xf32>, %[[W:[A-Za-z0-9_$.-]+]]: tensor<32x64xf32>) -> tensor<?x32xf32> {
// CHECK-NEXT: %[[Y:[A-Za-z0-9_$.-]+]] = graph.fused (%[[X_1:[A-Za-z0-9_$.-]+]] = %[[X]], %[[W_1:[A-Za-z0-9_$.-]+]] = %[[W]]) : (tensor<?x64xf32>, tensor<32x64xf32>) -> tensor<?x32xf32> {
// CHECK-NEXT: %[[Y_1:[A-Za-z0-9_$.-]+]] = graph.dense %[[X_1]], %[[W_1]] : (tensor<?x64xf32>, tensor<32x64xf32>) -> tensor<?x32xf32>
// CHECK-NEXT: graph.yield %[[Y_1]] : tensor<?x32xf32>
// CHECK-NEXT: } attributes {kernel = @dense_gets_dot_products_dense_0}
// CHECK-NEXT: func.return %[[Y]] : tensor<?x32xf32>
// CHECK-NEXT: }
// CHECK-LABEL: func.func @dense_gets_dot_products_dense_0
// CHECK-SAME: (%[[V0:[A-Za-z0-9_$.-]+]]: memref<?x64xf32>, %[[V1:[A-Za-z0-9_$.-]+]]: memref<32x64xf32>, %[[V2:[A-Za-z0-9_$.-]+]]: memref<?x32xf32>) attributes {nimble.kernel = "dense_gets_dot_products_dense_0", nimble.work = 64 : i64} {
// CHECK-NEXT: %[[V3:[A-Za-z0-9_$.-]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[V4:[A-Za-z0-9_$.-]+]] = memref.dim %[[V0]], %[[V3]] : memref<?x64xf32>
// CHECK-NEXT: %[[V5:[A-Za-z0-9_$.-]+]] = arith.constant 1 : index
// CHECK-NEXT: %[[V6:[A-Za-z0-9_$.-]+]] = arith.constant 32 : index
// CHECK-NEXT: %[[V7:[A-Za-z0-9_$.-]+]] = arith.constant 64 : index
// CHECK-NEXT: loop.foreach %[[V8:[A-Za-z0-9_$.-]+]] = %[[V3]] to %[[V4]] step %[[V5]] schedule #loop.schedule<unroll = 4, parallel> {
// CHECK-NEXT: loop.foreach %[[V9:[A-Za-z0-9_$.-]+]] = %[[V3]] to %[[V6]] step %[[V5]] schedule #loop.schedule<unroll = 4> {
// CHECK-NEXT: %[[V10:[A-Za-z0-9_$.-]+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V11:[A-Za-z0-9_$.-]+]] = loop.reduce %[[V12:[A-Za-z0-9_$.-]+]] = %[[V3]] to %[[V7]] step %[[V5]] combine(add) init(%[[V10]]) : f32 schedule #loop.schedule<vector = 16> {
// CHECK-NEXT: %[[V13:[A-Za-z0-9_$.-]+]] = memref.load %[[V0]][%[[V8]], %[[V12]]] : memref<?x64xf32>
// CHECK-NEXT: %[[V14:[A-Za-z0-9_$.-]+]] = memref.load %[[V1]][%[[V9]], %[[V12]]] : memref<32x64xf32>
// CHECK-NEXT: %[[V15:[A-Za-z0-9_$.-]+]] = arith.mulf %[[V13]], %[[V14]] : f32
// CHECK-NEXT: loop.yield %[[V15]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: memref.store %[[V11]], %[[V2]][%[[V8]], %[[V9]]] : memref<?x32xf32>
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: func.return
// CHECK-NEXT: }

func.func @dense_gets_dot_products(%x: tensor<?x64xf32>, %w: tensor<32x64xf32>) -> tensor<?x32xf32> {
  %y = graph.dense %x, %w : (tensor<?x64xf32>, tensor<32x64xf32>) -> tensor<?x32xf32>
  func.return %y : tensor<?x32xf32>
}

// -----

// A dense layer: register tiles over transposed panels of W from 20 rows, dot products
// along k below that and for the columns left over.
// CHECK-LABEL: func.func @dense_packs_transposed_panels
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<?x64xf32>, %[[W:[A-Za-z0-9_$.-]+]]: tensor<128x64xf32>) -> tensor<?x128xf32> {
// CHECK-NEXT: %[[Y:[A-Za-z0-9_$.-]+]] = graph.fused (%[[X_1:[A-Za-z0-9_$.-]+]] = %[[X]], %[[W_1:[A-Za-z0-9_$.-]+]] = %[[W]]) : (tensor<?x64xf32>, tensor<128x64xf32>) -> tensor<?x128xf32> {
// CHECK-NEXT: %[[Y_1:[A-Za-z0-9_$.-]+]] = graph.dense %[[X_1]], %[[W_1]] : (tensor<?x64xf32>, tensor<128x64xf32>) -> tensor<?x128xf32>
// CHECK-NEXT: graph.yield %[[Y_1]] : tensor<?x128xf32>
// CHECK-NEXT: } attributes {kernel = @dense_packs_transposed_panels_dense_0}
// CHECK-NEXT: func.return %[[Y]] : tensor<?x128xf32>
// CHECK-NEXT: }
// CHECK-LABEL: func.func @dense_packs_transposed_panels_dense_0
// CHECK-SAME: (%[[V0:[A-Za-z0-9_$.-]+]]: memref<?x64xf32>, %[[V1:[A-Za-z0-9_$.-]+]]: memref<128x64xf32>, %[[V2:[A-Za-z0-9_$.-]+]]: memref<?x128xf32>) attributes {nimble.kernel = "dense_packs_transposed_panels_dense_0", nimble.work = 64 : i64} {
// CHECK-NEXT: %[[V3:[A-Za-z0-9_$.-]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[V4:[A-Za-z0-9_$.-]+]] = memref.dim %[[V0]], %[[V3]] : memref<?x64xf32>
// CHECK-NEXT: %[[V5:[A-Za-z0-9_$.-]+]] = arith.constant 1 : index
// CHECK-NEXT: %[[V6:[A-Za-z0-9_$.-]+]] = arith.constant 128 : index
// CHECK-NEXT: %[[V7:[A-Za-z0-9_$.-]+]] = arith.constant 64 : index
// CHECK-NEXT: %[[V8:[A-Za-z0-9_$.-]+]] = arith.constant 64 : index
// CHECK-NEXT: %[[V9:[A-Za-z0-9_$.-]+]] = arith.remsi %[[V6]], %[[V8]] : index
// CHECK-NEXT: %[[V10:[A-Za-z0-9_$.-]+]] = arith.subi %[[V6]], %[[V9]] : index
// CHECK-NEXT: %[[V11:[A-Za-z0-9_$.-]+]] = arith.constant 20 : index
// CHECK-NEXT: %[[V12:[A-Za-z0-9_$.-]+]] = arith.cmpi sge, %[[V4]], %[[V11]] : index
// CHECK-NEXT: %[[V13:[A-Za-z0-9_$.-]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[V14:[A-Za-z0-9_$.-]+]] = arith.select %[[V12]], %[[V10]], %[[V13]] : index
// CHECK-NEXT: %[[V15:[A-Za-z0-9_$.-]+]] = arith.subi %[[V6]], %[[V14]] : index
// CHECK-NEXT: loop.foreach %[[V16:[A-Za-z0-9_$.-]+]] = %[[V3]] to %[[V4]] step %[[V5]] schedule #loop.schedule<unroll = 6, parallel> {
// CHECK-NEXT: loop.foreach %[[V17:[A-Za-z0-9_$.-]+]] = %[[V3]] to %[[V14]] step %[[V5]] schedule #loop.schedule<vector = 16, unroll = 4, pack> {
// CHECK-NEXT: %[[V18:[A-Za-z0-9_$.-]+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V19:[A-Za-z0-9_$.-]+]] = loop.reduce %[[V20:[A-Za-z0-9_$.-]+]] = %[[V3]] to %[[V7]] step %[[V5]] combine(add) init(%[[V18]]) : f32 schedule #loop.schedule<unroll = 4> {
// CHECK-NEXT: %[[V21:[A-Za-z0-9_$.-]+]] = memref.load %[[V0]][%[[V16]], %[[V20]]] : memref<?x64xf32>
// CHECK-NEXT: %[[V22:[A-Za-z0-9_$.-]+]] = memref.load %[[V1]][%[[V17]], %[[V20]]] : memref<128x64xf32>
// CHECK-NEXT: %[[V23:[A-Za-z0-9_$.-]+]] = arith.mulf %[[V21]], %[[V22]] : f32
// CHECK-NEXT: loop.yield %[[V23]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: memref.store %[[V19]], %[[V2]][%[[V16]], %[[V17]]] : memref<?x128xf32>
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.foreach %[[V24:[A-Za-z0-9_$.-]+]] = %[[V3]] to %[[V4]] step %[[V5]] schedule #loop.schedule<unroll = 4, parallel> {
// CHECK-NEXT: loop.foreach %[[V25:[A-Za-z0-9_$.-]+]] = %[[V3]] to %[[V15]] step %[[V5]] schedule #loop.schedule<unroll = 4> {
// CHECK-NEXT: %[[V26:[A-Za-z0-9_$.-]+]] = arith.addi %[[V14]], %[[V25]] : index
// CHECK-NEXT: %[[V27:[A-Za-z0-9_$.-]+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V28:[A-Za-z0-9_$.-]+]] = loop.reduce %[[V29:[A-Za-z0-9_$.-]+]] = %[[V3]] to %[[V7]] step %[[V5]] combine(add) init(%[[V27]]) : f32 schedule #loop.schedule<vector = 16> {
// CHECK-NEXT: %[[V30:[A-Za-z0-9_$.-]+]] = memref.load %[[V0]][%[[V24]], %[[V29]]] : memref<?x64xf32>
// CHECK-NEXT: %[[V31:[A-Za-z0-9_$.-]+]] = memref.load %[[V1]][%[[V26]], %[[V29]]] : memref<128x64xf32>
// CHECK-NEXT: %[[V32:[A-Za-z0-9_$.-]+]] = arith.mulf %[[V30]], %[[V31]] : f32
// CHECK-NEXT: loop.yield %[[V32]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: memref.store %[[V28]], %[[V2]][%[[V24]], %[[V26]]] : memref<?x128xf32>
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: func.return
// CHECK-NEXT: }

func.func @dense_packs_transposed_panels(%x: tensor<?x64xf32>, %w: tensor<128x64xf32>) -> tensor<?x128xf32> {
  %y = graph.dense %x, %w : (tensor<?x64xf32>, tensor<128x64xf32>) -> tensor<?x128xf32>
  func.return %y : tensor<?x128xf32>
}

// -----

// CHECK-LABEL: func.func @elementwise_gets_lanes
// CHECK-SAME: (%[[A:[A-Za-z0-9_$.-]+]]: tensor<?x?xf32>) -> tensor<?x?xf32> {
// CHECK-NEXT: %[[E:[A-Za-z0-9_$.-]+]] = graph.fused (%[[A_1:[A-Za-z0-9_$.-]+]] = %[[A]]) : (tensor<?x?xf32>) -> tensor<?x?xf32> {
// CHECK-NEXT: %[[E_1:[A-Za-z0-9_$.-]+]] = graph.exp %[[A_1]] : tensor<?x?xf32> -> tensor<?x?xf32>
// CHECK-NEXT: graph.yield %[[E_1]] : tensor<?x?xf32>
// CHECK-NEXT: } attributes {kernel = @elementwise_gets_lanes_exp_0}
// CHECK-NEXT: func.return %[[E]] : tensor<?x?xf32>
// CHECK-NEXT: }
// CHECK-LABEL: func.func @elementwise_gets_lanes_exp_0
// CHECK-SAME: (%[[V0:[A-Za-z0-9_$.-]+]]: memref<?x?xf32>, %[[V1:[A-Za-z0-9_$.-]+]]: memref<?x?xf32>) attributes {nimble.kernel = "elementwise_gets_lanes_exp_0", nimble.work = 1 : i64} {
// CHECK-NEXT: %[[V2:[A-Za-z0-9_$.-]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[V3:[A-Za-z0-9_$.-]+]] = memref.dim %[[V0]], %[[V2]] : memref<?x?xf32>
// CHECK-NEXT: %[[V4:[A-Za-z0-9_$.-]+]] = arith.constant 1 : index
// CHECK-NEXT: %[[V5:[A-Za-z0-9_$.-]+]] = memref.dim %[[V0]], %[[V4]] : memref<?x?xf32>
// CHECK-NEXT: loop.foreach %[[V6:[A-Za-z0-9_$.-]+]] = %[[V2]] to %[[V3]] step %[[V4]] schedule #loop.schedule<parallel> {
// CHECK-NEXT: loop.foreach %[[V7:[A-Za-z0-9_$.-]+]] = %[[V2]] to %[[V5]] step %[[V4]] schedule #loop.schedule<vector = 16, mask> {
// CHECK-NEXT: %[[V8:[A-Za-z0-9_$.-]+]] = memref.load %[[V0]][%[[V6]], %[[V7]]] : memref<?x?xf32>
// CHECK-NEXT: %[[V9:[A-Za-z0-9_$.-]+]] = math.exp %[[V8]] : f32
// CHECK-NEXT: memref.store %[[V9]], %[[V1]][%[[V6]], %[[V7]]] : memref<?x?xf32>
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: func.return
// CHECK-NEXT: }

func.func @elementwise_gets_lanes(%a: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %e = graph.exp %a : tensor<?x?xf32> -> tensor<?x?xf32>
  func.return %e : tensor<?x?xf32>
}
