// RUN: nimble-opt %s --cpu skylake-avx512 --split-input-file -p lower-graph-to-loops,canonicalize,cse,schedule-loops | filecheck %s

// A matmul: 6 x 64 register tiles over panels of B. The rows are known at run time, so
// the nest is split at `cut`: whole panels packed when there are at least 4 rows, the
// other columns (all of them for fewer rows) reading B in place.
// CHECK-LABEL: func.func @matmul_gets_register_tile
// CHECK-SAME: (%[[A:[A-Za-z0-9_$.-]+]]: tensor<?x64xf32>, %[[B:[A-Za-z0-9_$.-]+]]: tensor<64x?xf32>) -> tensor<?x?xf32> {
// CHECK-NEXT: %[[C:[A-Za-z0-9_$.-]+]] = graph.fused (%[[A_1:[A-Za-z0-9_$.-]+]] = %[[A]], %[[B_1:[A-Za-z0-9_$.-]+]] = %[[B]]) : (tensor<?x64xf32>, tensor<64x?xf32>) -> tensor<?x?xf32> {
// CHECK-NEXT: %[[C_1:[A-Za-z0-9_$.-]+]] = graph.matmul %[[A_1]], %[[B_1]] : (tensor<?x64xf32>, tensor<64x?xf32>) -> tensor<?x?xf32>
// CHECK-NEXT: graph.yield %[[C_1]] : tensor<?x?xf32>
// CHECK-NEXT: } attributes {nimble.kernel = @matmul_gets_register_tile_matmul_0}
// CHECK-NEXT: func.return %[[C]] : tensor<?x?xf32>
// CHECK-NEXT: }
// CHECK-LABEL: loop.kernel @matmul_gets_register_tile_matmul_0
// CHECK-SAME: (%[[V0:[A-Za-z0-9_$.-]+]]: memref<?x64xf32>, %[[V1:[A-Za-z0-9_$.-]+]]: memref<64x?xf32>, %[[V2:[A-Za-z0-9_$.-]+]]: memref<?x?xf32>) attributes {nimble.work = 64 : i64} {
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
// CHECK-NEXT: loop.foreach %[[V17:[A-Za-z0-9_$.-]+]] = %[[V3]] to %[[V14]] step %[[V5]] schedule #loop.schedule<vector = 16, unroll = 4, pack, dots> {
// CHECK-NEXT: %[[V18:[A-Za-z0-9_$.-]+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V19:[A-Za-z0-9_$.-]+]] = loop.reduce %[[V20:[A-Za-z0-9_$.-]+]] = %[[V3]] to %[[V7]] step %[[V5]] combine(add) init(%[[V18]]) : f32 {
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
// CHECK-NEXT: loop.foreach %[[V25:[A-Za-z0-9_$.-]+]] = %[[V3]] to %[[V15]] step %[[V5]] schedule #loop.schedule<vector = 16, unroll = 4, dots> {
// CHECK-NEXT: %[[V26:[A-Za-z0-9_$.-]+]] = arith.addi %[[V14]], %[[V25]] : index
// CHECK-NEXT: %[[V27:[A-Za-z0-9_$.-]+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V28:[A-Za-z0-9_$.-]+]] = loop.reduce %[[V29:[A-Za-z0-9_$.-]+]] = %[[V3]] to %[[V7]] step %[[V5]] combine(add) init(%[[V27]]) : f32 {
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
// CHECK-NEXT: loop.return
// CHECK-NEXT: }

func.func @matmul_gets_register_tile(%a: tensor<?x64xf32>, %b: tensor<64x?xf32>) -> tensor<?x?xf32> {
  %c = graph.matmul %a, %b : (tensor<?x64xf32>, tensor<64x?xf32>) -> tensor<?x?xf32>
  func.return %c : tensor<?x?xf32>
}

// -----
// A dense layer narrower than a panel (32 < 64 columns): lanes along the rows for whole
// panels of 16 rows when there are 16 to 511 of them (no pack of W), and for the rows
// they leave when 12 or more; dot products along k for the rows left over.
// CHECK-LABEL: func.func @dense_rows_in_lanes
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<?x64xf32>, %[[W:[A-Za-z0-9_$.-]+]]: tensor<32x64xf32>) -> tensor<?x32xf32> {
// CHECK-NEXT: %[[Y:[A-Za-z0-9_$.-]+]] = graph.fused (%[[X_1:[A-Za-z0-9_$.-]+]] = %[[X]], %[[W_1:[A-Za-z0-9_$.-]+]] = %[[W]]) : (tensor<?x64xf32>, tensor<32x64xf32>) -> tensor<?x32xf32> {
// CHECK-NEXT: %[[Y_1:[A-Za-z0-9_$.-]+]] = graph.dense %[[X_1]], %[[W_1]] : (tensor<?x64xf32>, tensor<32x64xf32>) -> tensor<?x32xf32>
// CHECK-NEXT: graph.yield %[[Y_1]] : tensor<?x32xf32>
// CHECK-NEXT: } attributes {nimble.kernel = @dense_rows_in_lanes_dense_0}
// CHECK-NEXT: func.return %[[Y]] : tensor<?x32xf32>
// CHECK-NEXT: }
// CHECK-LABEL: loop.kernel @dense_rows_in_lanes_dense_0
// CHECK-SAME: (%[[V0:[A-Za-z0-9_$.-]+]]: memref<?x64xf32>, %[[V1:[A-Za-z0-9_$.-]+]]: memref<32x64xf32>, %[[V2:[A-Za-z0-9_$.-]+]]: memref<?x32xf32>) attributes {nimble.work = 64 : i64} {
// CHECK-NEXT: %[[V3:[A-Za-z0-9_$.-]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[V4:[A-Za-z0-9_$.-]+]] = memref.dim %[[V0]], %[[V3]] : memref<?x64xf32>
// CHECK-NEXT: %[[V5:[A-Za-z0-9_$.-]+]] = arith.constant 1 : index
// CHECK-NEXT: %[[V6:[A-Za-z0-9_$.-]+]] = arith.constant 32 : index
// CHECK-NEXT: %[[V7:[A-Za-z0-9_$.-]+]] = arith.constant 64 : index
// CHECK-NEXT: %[[V8:[A-Za-z0-9_$.-]+]] = arith.constant 16 : index
// CHECK-NEXT: %[[V9:[A-Za-z0-9_$.-]+]] = arith.remsi %[[V4]], %[[V8]] : index
// CHECK-NEXT: %[[V10:[A-Za-z0-9_$.-]+]] = arith.subi %[[V4]], %[[V9]] : index
// CHECK-NEXT: %[[P12:[A-Za-z0-9_$.-]+]] = arith.constant 12 : index
// CHECK-NEXT: %[[MANY:[A-Za-z0-9_$.-]+]] = arith.cmpi sge, %[[V9]], %[[P12]] : index
// CHECK-NEXT: %[[TAKEN:[A-Za-z0-9_$.-]+]] = arith.select %[[MANY]], %[[V4]], %[[V10]] : index
// CHECK-NEXT: %[[V11:[A-Za-z0-9_$.-]+]] = arith.constant 16 : index
// CHECK-NEXT: %[[V12:[A-Za-z0-9_$.-]+]] = arith.cmpi sge, %[[V4]], %[[V11]] : index
// CHECK-NEXT: %[[V13:[A-Za-z0-9_$.-]+]] = arith.constant 512 : index
// CHECK-NEXT: %[[V14:[A-Za-z0-9_$.-]+]] = arith.cmpi slt, %[[V4]], %[[V13]] : index
// CHECK-NEXT: %[[V15:[A-Za-z0-9_$.-]+]] = arith.andi %[[V12]], %[[V14]] : i1
// CHECK-NEXT: %[[V16:[A-Za-z0-9_$.-]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[V17:[A-Za-z0-9_$.-]+]] = arith.select %[[V15]], %[[TAKEN]], %[[V16]] : index
// CHECK-NEXT: %[[V18:[A-Za-z0-9_$.-]+]] = arith.subi %[[V4]], %[[V17]] : index
// CHECK-NEXT: loop.foreach %[[V19:[A-Za-z0-9_$.-]+]] = %[[V3]] to %[[V17]] step %[[V5]] schedule #loop.schedule<vector = 16, parallel> {
// CHECK-NEXT: loop.foreach %[[V20:[A-Za-z0-9_$.-]+]] = %[[V3]] to %[[V6]] step %[[V5]] schedule #loop.schedule<unroll = 16> {
// CHECK-NEXT: %[[V21:[A-Za-z0-9_$.-]+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V22:[A-Za-z0-9_$.-]+]] = loop.reduce %[[V23:[A-Za-z0-9_$.-]+]] = %[[V3]] to %[[V7]] step %[[V5]] combine(add) init(%[[V21]]) : f32 {
// CHECK-NEXT: %[[V24:[A-Za-z0-9_$.-]+]] = memref.load %[[V0]][%[[V19]], %[[V23]]] : memref<?x64xf32>
// CHECK-NEXT: %[[V25:[A-Za-z0-9_$.-]+]] = memref.load %[[V1]][%[[V20]], %[[V23]]] : memref<32x64xf32>
// CHECK-NEXT: %[[V26:[A-Za-z0-9_$.-]+]] = arith.mulf %[[V24]], %[[V25]] : f32
// CHECK-NEXT: loop.yield %[[V26]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: memref.store %[[V22]], %[[V2]][%[[V19]], %[[V20]]] : memref<?x32xf32>
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.foreach %[[V27:[A-Za-z0-9_$.-]+]] = %[[V3]] to %[[V18]] step %[[V5]] schedule #loop.schedule<unroll = 4, parallel> {
// CHECK-NEXT: %[[V28:[A-Za-z0-9_$.-]+]] = arith.addi %[[V17]], %[[V27]] : index
// CHECK-NEXT: loop.foreach %[[V29:[A-Za-z0-9_$.-]+]] = %[[V3]] to %[[V6]] step %[[V5]] schedule #loop.schedule<unroll = 4> {
// CHECK-NEXT: %[[V30:[A-Za-z0-9_$.-]+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V31:[A-Za-z0-9_$.-]+]] = loop.reduce %[[V32:[A-Za-z0-9_$.-]+]] = %[[V3]] to %[[V7]] step %[[V5]] combine(add) init(%[[V30]]) : f32 schedule #loop.schedule<vector = 16> {
// CHECK-NEXT: %[[V33:[A-Za-z0-9_$.-]+]] = memref.load %[[V0]][%[[V28]], %[[V32]]] : memref<?x64xf32>
// CHECK-NEXT: %[[V34:[A-Za-z0-9_$.-]+]] = memref.load %[[V1]][%[[V29]], %[[V32]]] : memref<32x64xf32>
// CHECK-NEXT: %[[V35:[A-Za-z0-9_$.-]+]] = arith.mulf %[[V33]], %[[V34]] : f32
// CHECK-NEXT: loop.yield %[[V35]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: memref.store %[[V31]], %[[V2]][%[[V28]], %[[V29]]] : memref<?x32xf32>
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.return
// CHECK-NEXT: }
func.func @dense_rows_in_lanes(%x: tensor<?x64xf32>, %w: tensor<32x64xf32>) -> tensor<?x32xf32> {
  %y = graph.dense %x, %w : (tensor<?x64xf32>, tensor<32x64xf32>) -> tensor<?x32xf32>
  func.return %y : tensor<?x32xf32>
}

// -----
// A dense layer: lanes along the rows for 16 to 511 rows; for the rest, register tiles
// over transposed panels of W from 20 rows (all 128 columns: two whole panels), below
// that dot products along k over the 128 columns, in a loop run once.
// CHECK-LABEL: func.func @dense_packs_transposed_panels
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<?x64xf32>, %[[W:[A-Za-z0-9_$.-]+]]: tensor<128x64xf32>) -> tensor<?x128xf32> {
// CHECK-NEXT: %[[Y:[A-Za-z0-9_$.-]+]] = graph.fused (%[[X_1:[A-Za-z0-9_$.-]+]] = %[[X]], %[[W_1:[A-Za-z0-9_$.-]+]] = %[[W]]) : (tensor<?x64xf32>, tensor<128x64xf32>) -> tensor<?x128xf32> {
// CHECK-NEXT: %[[Y_1:[A-Za-z0-9_$.-]+]] = graph.dense %[[X_1]], %[[W_1]] : (tensor<?x64xf32>, tensor<128x64xf32>) -> tensor<?x128xf32>
// CHECK-NEXT: graph.yield %[[Y_1]] : tensor<?x128xf32>
// CHECK-NEXT: } attributes {nimble.kernel = @dense_packs_transposed_panels_dense_0}
// CHECK-NEXT: func.return %[[Y]] : tensor<?x128xf32>
// CHECK-NEXT: }
// CHECK-LABEL: loop.kernel @dense_packs_transposed_panels_dense_0
// CHECK-SAME: (%[[V0:[A-Za-z0-9_$.-]+]]: memref<?x64xf32>, %[[V1:[A-Za-z0-9_$.-]+]]: memref<128x64xf32>, %[[V2:[A-Za-z0-9_$.-]+]]: memref<?x128xf32>) attributes {nimble.work = 64 : i64} {
// CHECK-NEXT: %[[V3:[A-Za-z0-9_$.-]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[V4:[A-Za-z0-9_$.-]+]] = memref.dim %[[V0]], %[[V3]] : memref<?x64xf32>
// CHECK-NEXT: %[[V5:[A-Za-z0-9_$.-]+]] = arith.constant 1 : index
// CHECK-NEXT: %[[V6:[A-Za-z0-9_$.-]+]] = arith.constant 128 : index
// CHECK-NEXT: %[[V7:[A-Za-z0-9_$.-]+]] = arith.constant 64 : index
// CHECK-NEXT: %[[V8:[A-Za-z0-9_$.-]+]] = arith.constant 16 : index
// CHECK-NEXT: %[[V9:[A-Za-z0-9_$.-]+]] = arith.remsi %[[V4]], %[[V8]] : index
// CHECK-NEXT: %[[V10:[A-Za-z0-9_$.-]+]] = arith.subi %[[V4]], %[[V9]] : index
// CHECK-NEXT: %[[V11:[A-Za-z0-9_$.-]+]] = arith.constant 12 : index
// CHECK-NEXT: %[[V12:[A-Za-z0-9_$.-]+]] = arith.cmpi sge, %[[V9]], %[[V11]] : index
// CHECK-NEXT: %[[V13:[A-Za-z0-9_$.-]+]] = arith.select %[[V12]], %[[V4]], %[[V10]] : index
// CHECK-NEXT: %[[V14:[A-Za-z0-9_$.-]+]] = arith.constant 16 : index
// CHECK-NEXT: %[[V15:[A-Za-z0-9_$.-]+]] = arith.cmpi sge, %[[V4]], %[[V14]] : index
// CHECK-NEXT: %[[V16:[A-Za-z0-9_$.-]+]] = arith.constant 512 : index
// CHECK-NEXT: %[[V17:[A-Za-z0-9_$.-]+]] = arith.cmpi slt, %[[V4]], %[[V16]] : index
// CHECK-NEXT: %[[V18:[A-Za-z0-9_$.-]+]] = arith.andi %[[V15]], %[[V17]] : i1
// CHECK-NEXT: %[[V19:[A-Za-z0-9_$.-]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[V20:[A-Za-z0-9_$.-]+]] = arith.select %[[V18]], %[[V13]], %[[V19]] : index
// CHECK-NEXT: %[[V21:[A-Za-z0-9_$.-]+]] = arith.subi %[[V4]], %[[V20]] : index
// CHECK-NEXT: loop.foreach %[[V22:[A-Za-z0-9_$.-]+]] = %[[V3]] to %[[V20]] step %[[V5]] schedule #loop.schedule<vector = 16, parallel> {
// CHECK-NEXT: loop.foreach %[[V23:[A-Za-z0-9_$.-]+]] = %[[V3]] to %[[V6]] step %[[V5]] schedule #loop.schedule<unroll = 16> {
// CHECK-NEXT: %[[V24:[A-Za-z0-9_$.-]+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V25:[A-Za-z0-9_$.-]+]] = loop.reduce %[[V26:[A-Za-z0-9_$.-]+]] = %[[V3]] to %[[V7]] step %[[V5]] combine(add) init(%[[V24]]) : f32 {
// CHECK-NEXT: %[[V27:[A-Za-z0-9_$.-]+]] = memref.load %[[V0]][%[[V22]], %[[V26]]] : memref<?x64xf32>
// CHECK-NEXT: %[[V28:[A-Za-z0-9_$.-]+]] = memref.load %[[V1]][%[[V23]], %[[V26]]] : memref<128x64xf32>
// CHECK-NEXT: %[[V29:[A-Za-z0-9_$.-]+]] = arith.mulf %[[V27]], %[[V28]] : f32
// CHECK-NEXT: loop.yield %[[V29]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: memref.store %[[V25]], %[[V2]][%[[V22]], %[[V23]]] : memref<?x128xf32>
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: %[[V30:[A-Za-z0-9_$.-]+]] = arith.constant 20 : index
// CHECK-NEXT: %[[V31:[A-Za-z0-9_$.-]+]] = arith.cmpi sge, %[[V21]], %[[V30]] : index
// CHECK-NEXT: %[[V32:[A-Za-z0-9_$.-]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[V33:[A-Za-z0-9_$.-]+]] = arith.select %[[V31]], %[[V6]], %[[V32]] : index
// CHECK-NEXT: %[[V34:[A-Za-z0-9_$.-]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[V35:[A-Za-z0-9_$.-]+]] = arith.constant 1 : index
// CHECK-NEXT: %[[V36:[A-Za-z0-9_$.-]+]] = arith.select %[[V31]], %[[V34]], %[[V35]] : index
// CHECK-NEXT: %[[V37:[A-Za-z0-9_$.-]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[V38:[A-Za-z0-9_$.-]+]] = arith.constant 1 : index
// CHECK-NEXT: loop.foreach %[[V39:[A-Za-z0-9_$.-]+]] = %[[V3]] to %[[V21]] step %[[V5]] schedule #loop.schedule<unroll = 6, parallel> {
// CHECK-NEXT: %[[V40:[A-Za-z0-9_$.-]+]] = arith.addi %[[V20]], %[[V39]] : index
// CHECK-NEXT: loop.foreach %[[V41:[A-Za-z0-9_$.-]+]] = %[[V3]] to %[[V33]] step %[[V5]] schedule #loop.schedule<vector = 16, unroll = 4, pack, dots> {
// CHECK-NEXT: %[[V42:[A-Za-z0-9_$.-]+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V43:[A-Za-z0-9_$.-]+]] = loop.reduce %[[V44:[A-Za-z0-9_$.-]+]] = %[[V3]] to %[[V7]] step %[[V5]] combine(add) init(%[[V42]]) : f32 {
// CHECK-NEXT: %[[V45:[A-Za-z0-9_$.-]+]] = memref.load %[[V0]][%[[V40]], %[[V44]]] : memref<?x64xf32>
// CHECK-NEXT: %[[V46:[A-Za-z0-9_$.-]+]] = memref.load %[[V1]][%[[V41]], %[[V44]]] : memref<128x64xf32>
// CHECK-NEXT: %[[V47:[A-Za-z0-9_$.-]+]] = arith.mulf %[[V45]], %[[V46]] : f32
// CHECK-NEXT: loop.yield %[[V47]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: memref.store %[[V43]], %[[V2]][%[[V40]], %[[V41]]] : memref<?x128xf32>
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.foreach %[[V48:[A-Za-z0-9_$.-]+]] = %[[V37]] to %[[V36]] step %[[V38]] {
// CHECK-NEXT: loop.foreach %[[V49:[A-Za-z0-9_$.-]+]] = %[[V3]] to %[[V21]] step %[[V5]] schedule #loop.schedule<unroll = 4, parallel> {
// CHECK-NEXT: %[[V50:[A-Za-z0-9_$.-]+]] = arith.addi %[[V20]], %[[V49]] : index
// CHECK-NEXT: loop.foreach %[[V51:[A-Za-z0-9_$.-]+]] = %[[V3]] to %[[V6]] step %[[V5]] schedule #loop.schedule<unroll = 4> {
// CHECK-NEXT: %[[V52:[A-Za-z0-9_$.-]+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V53:[A-Za-z0-9_$.-]+]] = loop.reduce %[[V54:[A-Za-z0-9_$.-]+]] = %[[V3]] to %[[V7]] step %[[V5]] combine(add) init(%[[V52]]) : f32 schedule #loop.schedule<vector = 16> {
// CHECK-NEXT: %[[V55:[A-Za-z0-9_$.-]+]] = memref.load %[[V0]][%[[V50]], %[[V54]]] : memref<?x64xf32>
// CHECK-NEXT: %[[V56:[A-Za-z0-9_$.-]+]] = memref.load %[[V1]][%[[V51]], %[[V54]]] : memref<128x64xf32>
// CHECK-NEXT: %[[V57:[A-Za-z0-9_$.-]+]] = arith.mulf %[[V55]], %[[V56]] : f32
// CHECK-NEXT: loop.yield %[[V57]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: memref.store %[[V53]], %[[V2]][%[[V50]], %[[V51]]] : memref<?x128xf32>
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.return
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
// CHECK-NEXT: } attributes {nimble.kernel = @elementwise_gets_lanes_exp_0}
// CHECK-NEXT: func.return %[[E]] : tensor<?x?xf32>
// CHECK-NEXT: }
// CHECK-LABEL: loop.kernel @elementwise_gets_lanes_exp_0
// CHECK-SAME: (%[[V0:[A-Za-z0-9_$.-]+]]: memref<?x?xf32>, %[[V1:[A-Za-z0-9_$.-]+]]: memref<?x?xf32>) attributes {nimble.work = 1 : i64} {
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
// CHECK-NEXT: loop.return
// CHECK-NEXT: }

func.func @elementwise_gets_lanes(%a: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %e = graph.exp %a : tensor<?x?xf32> -> tensor<?x?xf32>
  func.return %e : tensor<?x?xf32>
}
